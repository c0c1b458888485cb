/* script.c -- running a lesson script on a rank.
 *
 * Each rank gets its own lua_State with:
 *   - an allocator charging the rank's cs_budget (shared with its tensors), so
 *     the memory cap covers the Lua heap and tensor storage together, and the
 *     instruction budget for the bytes (C code builds strings in one call);
 *   - a count hook that charges the instruction budget and notices the end of
 *     the run;
 *   - a sandbox: base (minus dofile/loadfile, with a text-only load), string
 *     (minus dump), table, math, utf8, coroutine, and the tensor and dist
 *     libraries. No io, os, package, debug.
 *
 * Stopping a rank from inside (the run was aborted, a budget ran out) raises a
 * sentinel error object. Nothing may keep it: pcall, xpcall, coroutine.resume,
 * coroutine.close, wrapped coroutines and load raise it again when they catch
 * it; xpcall's handler is not called for it (the hook is off in there); the
 * allocator refuses a dying rank; and its hook fires on every instruction
 * and raises it again, for whatever else catches it (__close handlers).
 *
 * The main chunk runs in a coroutine rather than under lua_pcall: when it dies
 * with an error its stack is not unwound, so the position of the failure is
 * still there to read, even for memory errors, whose message carries none.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lualib.h>

#include "script_internal.h"
#include "event_schema.h"
#include "pitfall.h"

#define CS_HOOK_EVERY 1000           /* instructions between two count hooks */
#define CS_COROUTINE_COST 1000       /* steps charged per coroutine: see sb_cocreate */

/* Its address is the error object that unwinds a rank being stopped. */
static char cs_sentinel;
#define CS_SENTINEL ((void *)&cs_sentinel)

/* ---- loading */

static int script_set(cs_script *s, const char *path, const char *name, char *src, size_t len) {
    s->path = strdup(path);
    s->name = strdup(name);
    s->source = src;
    s->len = len;
    if (!s->path || !s->name) {
        cs_script_free(s);
        return -1;
    }
    return 0;
}

int cs_script_check_syntax(const cs_script *s, char *err, size_t errlen) {
    lua_State *L = luaL_newstate();
    if (!L) return 0; /* no memory now: the ranks will say so */
    const char *src = s->source;
    size_t len = s->len;
    if (len > 0 && src[0] == '#') { /* as cs_script_run skips a "#!" line */
        const char *nl = memchr(src, '\n', len);
        len -= nl ? (size_t)(nl - src) : len;
        src = nl ? nl : src + s->len;
    }
    lua_pushfstring(L, "@%s", s->name);
    int rc = luaL_loadbufferx(L, src, len, lua_tostring(L, -1), "t");
    if (rc == LUA_ERRSYNTAX) {
        const char *m = lua_tostring(L, -1);
        size_t n = strlen(s->name);
        int line = 0;
        /* a binary chunk's refusal names no place: name the file */
        if (strncmp(m, s->name, n) == 0 && m[n] == ':') {
            line = atoi(m + n + 1);
            snprintf(err, errlen, "%s", m);
        } else {
            snprintf(err, errlen, "%s: %s", s->name, m);
        }
        const char *hint = cs_script_hint(s, line, m);
        size_t used = strlen(err);
        if (hint && used < errlen) snprintf(err + used, errlen - used, "; %s", hint);
    }
    lua_close(L);
    return rc == LUA_ERRSYNTAX ? -1 : 0;
}

int cs_script_load(cs_script *s, const char *path, char *err, size_t errlen) {
    memset(s, 0, sizeof *s);
    /* Non-blocking: a FIFO is refused below instead of waiting for a writer. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    struct stat st;
    const char *why = NULL;
    if (fstat(fileno(f), &st) < 0) why = strerror(errno);
    else if (!S_ISREG(st.st_mode)) why = "not a regular file";
    else if (st.st_size > CS_SCRIPT_MAX_BYTES) why = "larger than 16 MiB";
    if (why) {
        snprintf(err, errlen, "cannot read %s: %s", path, why);
        fclose(f);
        return -1;
    }
    long n = (long)st.st_size;
    char *src = malloc((size_t)n + 1);
    if (!src || fread(src, 1, (size_t)n, f) != (size_t)n) {
        snprintf(err, errlen, "cannot read %s: %s", path, src ? strerror(errno) : "out of memory");
        free(src);
        fclose(f);
        return -1;
    }
    fclose(f);
    src[n] = '\0';
    if (n >= 3 && memcmp(src, "\xEF\xBB\xBF", 3) == 0) { /* a UTF-8 BOM: skipped, as lua does */
        memmove(src, src + 3, (size_t)n - 2);
        n -= 3;
    }
    const char *slash = strrchr(path, '/');
    if (script_set(s, path, slash ? slash + 1 : path, src, (size_t)n) < 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

int cs_script_from_string(cs_script *s, const char *name, const char *src) {
    memset(s, 0, sizeof *s);
    size_t len = strlen(src);
    char *copy = malloc(len + 1);
    if (!copy) return -1;
    memcpy(copy, src, len + 1);
    return script_set(s, name, name, copy, len);
}

void cs_script_free(cs_script *s) {
    free(s->path);
    free(s->name);
    free(s->source);
    memset(s, 0, sizeof *s);
}

/* ---- the context and the ways a rank stops */

cs_script_ctx *cs_script_ctx_of(lua_State *L) {
    return *(cs_script_ctx **)lua_getextraspace(L);
}

/* Chunks made by load() have their own lines; prefer a frame of the script. */
static bool frame_of_script(lua_Debug *ar, const cs_script_ctx *c) {
    return ar->source[0] == '@' && strcmp(ar->source + 1, c->script->name) == 0;
}

static int line_from(lua_State *L, int first) {
    cs_script_ctx *c = cs_script_ctx_of(L);
    lua_Debug ar;
    int any = 0;
    /* Every operation asks. Until the script calls load(), every Lua function
     * is the script's, and the line alone will do ("S" formats the source's
     * name each time). */
    if (!c->other_chunks) {
        for (int level = first; lua_getstack(L, level, &ar); level++)
            if (lua_getinfo(L, "l", &ar) && ar.currentline > 0) return ar.currentline;
        return 0;
    }
    for (int level = first; lua_getstack(L, level, &ar); level++) {
        if (!lua_getinfo(L, "Sl", &ar) || ar.currentline <= 0) continue;
        if (frame_of_script(&ar, c)) return ar.currentline;
        if (!any) any = ar.currentline;
    }
    return any;
}

int cs_script_line(lua_State *L) { return line_from(L, 0); }

/* Level 0 is the C function running, which has no line: every operation asks,
 * and looking at that frame costs a lua_getinfo. */
int cs_script_call_line(lua_State *L) { return line_from(L, 1); }

static void count_hook(lua_State *L, lua_Debug *ar);

/* A memory failure reported by the tensor module (errno ENOMEM, its message
 * set): the cap refused the storage, the machine did, or no such tensor can
 * exist. Only the last is not a memory error: it is the script's mistake. */
static cs_die_reason tensor_nomem(lua_State *L, cs_script_ctx *c) {
    if (errno != ENOMEM) return CS_DIE_MEM;
    errno = 0; /* read once: a later failure must not be taken for this one */
    const char *msg = cs_tensor_errmsg();
    size_t bytes;
    if (msg && sscanf(msg, "out of memory allocating %zu bytes", &bytes) == 1) {
        c->host_bytes = bytes;
        return CS_DIE_HOST;
    }
    if (msg && strstr(msg, "too large")) luaL_error(L, "%s", msg);
    return CS_DIE_MEM;
}

int cs_script_die(lua_State *L, cs_die_reason why) {
    cs_script_ctx *c = cs_script_ctx_of(L);
    if (c->dying == CS_DIE_NONE) {
        if (why == CS_DIE_MEM) why = tensor_nomem(L, c);
        c->dying = why;
    }
    /* The allocator may have set dying, where no line can be read. */
    if (c->die_line == 0) c->die_line = cs_script_line(L);
    /* From now on this thread is hooked on every instruction; other threads of
     * the state still have their 1000-instruction hook and get there soon
     * (resuming one raises at once: see sb_catching and sb_wrapped). */
    lua_sethook(L, count_hook, LUA_MASKCOUNT, 1);
    lua_pushlightuserdata(L, CS_SENTINEL);
    return lua_error(L);
}

void cs_script_check(lua_State *L) {
    cs_script_ctx *c = cs_script_ctx_of(L);
    if (c->dying != CS_DIE_NONE) cs_script_die(L, c->dying);
    if (cs_world_aborted(cs_rank_world(c->r))) cs_script_die(L, CS_DIE_ABORT);
}

bool cs_script_stopping(lua_State *L) {
    cs_script_ctx *c = cs_script_ctx_of(L);
    return c->r && (c->dying != CS_DIE_NONE || cs_world_aborted(cs_rank_world(c->r)));
}

/* A memory error the script caught with pcall is still a memory error. */
static void check_refused(lua_State *L, cs_script_ctx *c) {
    if (c->mem_refused) cs_script_die(L, c->refused_host ? CS_DIE_HOST : CS_DIE_MEM);
}

void cs_script_charge(lua_State *L, uint64_t n) {
    cs_script_ctx *c = cs_script_ctx_of(L);
    if (n >= CS_STEPS_OVERFLOW) luaL_error(L, "tensor too large: its element count overflows 64 bits");
    if (c->step_limit == 0) return;
    c->steps += n;
    if (c->steps > c->step_limit) cs_script_die(L, CS_DIE_STEPS);
}

void cs_script_charge_work(lua_State *L, uint64_t n) {
    cs_script_ctx *c = cs_script_ctx_of(L);
    if (c->step_limit == 0) return;
    c->steps = n > UINT64_MAX - c->steps ? UINT64_MAX : c->steps + n;
    if (c->steps > c->step_limit) cs_script_die(L, CS_DIE_STEPS);
}

int cs_script_api_error(lua_State *L, int rc) {
    cs_script_ctx *c = cs_script_ctx_of(L);
    if (rc == CS_EABORT) return cs_script_die(L, CS_DIE_ABORT);
    const char *msg = cs_rank_errmsg(c->r);
    /* Both sides of a send/receive mismatch fail at once, each at its own
     * line. The first to raise ends the run; the other still raises its own
     * failure (its allocations are not refused for the abort), so the report
     * names both, whichever came first. */
    if (rc == CS_EMISMATCH) c->own_error = true;
    if (rc == CS_ENOMEM) {
        errno = 0; /* not the tensor module's failure */
        if (msg && c->dying == CS_DIE_NONE) snprintf(c->mem_detail, sizeof c->mem_detail, "%s", msg);
        return cs_script_die(L, CS_DIE_MEM);
    }
    return luaL_error(L, "%s", msg && *msg ? msg : "the operation failed");
}

static void count_hook(lua_State *L, lua_Debug *ar) {
    (void)ar;
    cs_script_ctx *c = cs_script_ctx_of(L);
    c->own_error = false; /* the script runs on: it caught its failure */
    if (c->dying != CS_DIE_NONE) cs_script_die(L, c->dying);
    check_refused(L, c);
    /* and the pitfall checks' scans of the requests in flight (pitfall.h) */
    c->steps += CS_HOOK_EVERY + cs_inflight_take_tests(c->r);
    if (c->step_limit && c->steps > c->step_limit) cs_script_die(L, CS_DIE_STEPS);
    if (cs_world_aborted(cs_rank_world(c->r))) cs_script_die(L, CS_DIE_ABORT);
}

/* ---- helpers for the libraries */

/* Where the options go, a value torch passes by position (all_reduce(t, op,
 * group, async_op)): the error names the option it would be. */
static void opts_by_position(lua_State *L, int idx, const char *fn, const char *const *allowed) {
    static const struct { int type; const char *mt, *opt, *as; } by_position[] = {
        {LUA_TUSERDATA, "ProcessGroup", "group", "a group goes in the options: {group = g}"},
        {LUA_TBOOLEAN, NULL, "async_op", "async_op goes in the options: {async_op = true}"},
        {LUA_TNUMBER, NULL, "tag", "a tag goes in the options: {tag = 7}"},
    };
    for (size_t i = 0; i < sizeof by_position / sizeof by_position[0]; i++) {
        bool mt = !by_position[i].mt || luaL_testudata(L, idx, by_position[i].mt);
        if (lua_type(L, idx) != by_position[i].type || !mt) continue;
        for (const char *const *a = allowed; *a; a++)
            if (strcmp(*a, by_position[i].opt) == 0)
                luaL_error(L, "%s: options must be a table (got %s): %s", fn,
                           by_position[i].mt ? by_position[i].mt : luaL_typename(L, idx),
                           by_position[i].as);
    }
    luaL_error(L, "%s: options must be a table (got %s)", fn, luaL_typename(L, idx));
}

bool cs_script_opts(lua_State *L, int idx, const char *fn, const char *const *allowed) {
    idx = lua_absindex(L, idx);
    if (lua_isnoneornil(L, idx)) return false;
    if (!lua_istable(L, idx)) opts_by_position(L, idx, fn, allowed);
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TSTRING)
            luaL_error(L, "%s: option names must be strings (got %s)", fn, luaL_typename(L, -1));
        const char *key = lua_tostring(L, -1);
        bool ok = false;
        for (const char *const *a = allowed; *a && !ok; a++) ok = strcmp(*a, key) == 0;
        if (!ok) {
            luaL_Buffer b;
            luaL_buffinit(L, &b);
            for (const char *const *a = allowed; *a; a++) {
                if (a != allowed) luaL_addstring(&b, a[1] ? ", " : " or ");
                luaL_addstring(&b, *a);
            }
            luaL_pushresult(&b);
            luaL_error(L, "%s: unknown option '%s' (expected %s)", fn, key, lua_tostring(L, -1));
        }
    }
    return true;
}

lua_Integer cs_script_checkint(lua_State *L, int idx, const char *fn, const char *what) {
    int ok = 0;
    lua_Integer v = 0;
    if (lua_type(L, idx) == LUA_TNUMBER) v = lua_tointegerx(L, idx, &ok);
    if (ok) return v;
    if (lua_type(L, idx) == LUA_TNUMBER)
        luaL_error(L, "%s: %s must be an integer (got %f)", fn, what, lua_tonumber(L, idx));
    luaL_error(L, "%s: %s must be an integer (got %s)", fn, what, luaL_typename(L, idx));
    return 0;
}

void *cs_script_checkself(lua_State *L, const char *tname) {
    void *p = luaL_testudata(L, 1, tname);
    if (p) return p;
    /* Python's w.wait() is Lua's w:wait(): the dot passes no object, and
     * "Work expected, got no value" does not say a colon was meant. */
    lua_Debug ar;
    const char *fn = lua_getstack(L, 0, &ar) && lua_getinfo(L, "n", &ar) && ar.name ? ar.name : "method";
    return cs_script_colon_error(L, fn, tname, "w", "()"), NULL;
}

int cs_script_colon_error(lua_State *L, const char *fn, const char *tname, const char *v,
                          const char *args) {
    return luaL_error(L, "bad argument #1 to '%s' (%s expected, got %s): call a method with a colon, "
                         "%s:%s%s, not %s.%s%s",
                      fn, tname, luaL_typename(L, 1), v, fn, args, v, fn, args);
}

void cs_script_sealed_metatable(lua_State *L, const char *name) {
    luaL_newmetatable(L, name);
    lua_pushstring(L, name);
    lua_setfield(L, -2, "__metatable");
}

/* ---- the allocator: every byte of the Lua heap is charged to the rank's budget */

/* Is the rank being stopped? Then it gets no more memory: a C function that
 * loops allocating (string.rep, gsub, table.concat) stops at its next block,
 * where no hook can reach it. No line can be read here; cs_script_die reads
 * it when the hook raises. */
#define DYING_SMALL 1024 /* bytes: a call frame, a little stack */

static bool alloc_stopping(cs_script_ctx *c) {
    if (c->dying != CS_DIE_NONE) return true;
    if (c->step_limit && c->steps > c->step_limit) c->dying = CS_DIE_STEPS;
    else if (c->r && !c->own_error && cs_world_aborted(cs_rank_world(c->r))) c->dying = CS_DIE_ABORT;
    return c->dying != CS_DIE_NONE;
}

static void remember_refusal(cs_script_ctx *c, bool host, const void *ptr, size_t osize,
                             size_t nsize) {
    c->mem_refused = true;
    c->refused_host = host;
    c->refused_ptr = ptr;
    c->refused_osize = osize;
    c->refused_nsize = nsize;
    if (host) c->host_bytes = nsize;
}

static void *cs_script_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    cs_script_ctx *c = ud;
    size_t old = ptr ? osize : 0; /* without a block, osize is a type tag */
    if (nsize == 0) {
        free(ptr);
        cs_budget_refund(c->budget, old);
        return NULL;
    }
    if (nsize > old && c->closing) {
        /* The state is being closed: the finalizers (__gc of tensors and work
         * handles, which release what C holds) need a little memory to be
         * called, and a refusal would skip them, leaking what they hold.
         * Nothing runs any more that a refusal should stop. */
        atomic_fetch_add(&c->budget->used, nsize - old);
    } else if (nsize > old) {
        /* Bytes built in C (string.rep, .., gsub, table.concat, format) are
         * work too: charged to the instruction budget as they are allocated. */
        if (c->running) c->steps += (nsize - old) / CS_BYTES_PER_STEP;
        /* A small block is still given (under the cap): the garbage collector
         * calls finalizers while the rank unwinds, and a finalizer that cannot
         * get its call frame is skipped for good, leaking what it releases. */
        if (alloc_stopping(c) && nsize - old > DYING_SMALL) return NULL;
        if (!cs_budget_charge(c->budget, nsize - old)) {
            remember_refusal(c, false, ptr, osize, nsize);
            return NULL;
        }
    }
    void *p = realloc(ptr, nsize);
    if (!p) {
        if (nsize > old) cs_budget_refund(c->budget, nsize - old);
        remember_refusal(c, true, ptr, osize, nsize);
        return NULL;
    }
    if (nsize < old) cs_budget_refund(c->budget, old - nsize);
    if (c->mem_refused && ptr == c->refused_ptr && osize == c->refused_osize &&
        nsize == c->refused_nsize)
        c->mem_refused = false; /* the retry after an emergency collection worked */
    return p;
}

/* ---- the sandbox: wrappers around a few standard functions */

/* Call the original function (upvalue 1, a C function of the standard
 * libraries) in this very call: Lua still names the function the script called
 * in argument errors ("bad argument #1 to 'pcall'", not "to '?'"). When a
 * wrapper of ours is itself called that way by another wrapper, the upvalue
 * read here is the other one's -- our own closure, not the original: that
 * one is called as a function of its own, or it would call itself forever. */
int cs_script_call_original(lua_State *L) {
    int up = lua_upvalueindex(1);
    if (!lua_getupvalue(L, up, 1)) return lua_tocfunction(L, up)(L);
    lua_pop(L, 1);
    lua_pushvalue(L, up);
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}


/* ---- functions that catch errors: what they catch from a dying rank they
 * raise again, so a rank over its budget unwinds whatever the script wraps
 * around its work */

/* After the original: the rank may have been stopped or have hit its memory
 * cap inside it. */
static int after_catch(lua_State *L, int n) {
    cs_script_ctx *c = cs_script_ctx_of(L);
    if (c->dying != CS_DIE_NONE) return cs_script_die(L, c->dying);
    check_refused(L, c);
    return n;
}

/* coroutine.resume, coroutine.close, load: they catch with a C-level
 * protected call, which returns here. */
static int sb_catching(lua_State *L) {
    cs_script_check(L);
    return after_catch(L, cs_script_call_original(L));
}

/* pcall and xpcall in a coroutine (the script always runs in one) catch by
 * unwinding to the frame that called them and finishing it in a continuation:
 * called directly, this frame would be finished without its check. So they
 * run as a call of their own, finished in protected_done. */
static int protected_done(lua_State *L, int status, lua_KContext ctx) {
    (void)status;
    (void)ctx;
    return after_catch(L, lua_gettop(L));
}

static int call_protected(lua_State *L) {
    cs_script_check(L);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_callk(L, lua_gettop(L) - 1, LUA_MULTRET, 0, protected_done);
    return protected_done(L, LUA_OK, 0);
}

static int sb_pcall(lua_State *L) {
    luaL_checkany(L, 1); /* here, where Lua can name the function */
    return call_protected(L);
}

/* xpcall's message handler runs before the stack unwinds, and with the hook
 * off when the error came from the hook: for a dying rank it is not called at
 * all, the error goes on as it is. */
static int sb_msgh(lua_State *L) {
    cs_script_ctx *c = cs_script_ctx_of(L);
    if (c->dying != CS_DIE_NONE || c->mem_refused) return 1;
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, 1);
    return 1;
}

static int sb_xpcall(lua_State *L) {
    luaL_checktype(L, 2, LUA_TFUNCTION);
    lua_pushvalue(L, 2);
    lua_pushcclosure(L, sb_msgh, 1);
    lua_replace(L, 2);
    return call_protected(L);
}

/* load: text chunks only (mode forced to "t"); without an env argument the
 * chunk sees the sandbox's globals, as every chunk of this state does. A
 * reader function that errors makes load return the error: caught too. */
static int sb_load(lua_State *L) {
    cs_script_ctx *c = cs_script_ctx_of(L);
    c->other_chunks = true; /* cs_script_line must look at sources now */
    if (lua_gettop(L) < 3) lua_settop(L, 3);
    /* A chunk named as the script ("@ring.lua") would pass for it: its lines
     * would place operations and errors at lines the script does not have. */
    const char *name = lua_tostring(L, 2);
    if (name && name[0] == '@' && strcmp(name + 1, c->script->name) == 0) {
        lua_pushliteral(L, "=(load)");
        lua_replace(L, 2);
    }
    lua_pushliteral(L, "t");
    lua_replace(L, 3);
    return sb_catching(L);
}

/* A new thread's count hook starts from zero, so a coroutine that runs fewer
 * than CS_HOOK_EVERY instructions would never be charged: charge its creation.
 * (New threads inherit the hook of the thread that creates them.) */
static int sb_cocreate(lua_State *L) {
    cs_script_charge_work(L, CS_COROUTINE_COST);
    return cs_script_call_original(L);
}

/* The function coroutine.wrap returns: Lua's, except that a coroutine stopped
 * by its rank's budget is not closed. Closing runs its __close handlers, and a
 * thread that died in its hook has the hook off for good. */
static int sb_wrapped(lua_State *L) {
    lua_State *co = lua_tothread(L, lua_upvalueindex(1));
    cs_script_ctx *c = cs_script_ctx_of(L);
    int narg = lua_gettop(L), nres;
    cs_script_check(L);
    if (!lua_checkstack(co, narg)) return luaL_error(L, "too many arguments to resume");
    lua_xmove(L, co, narg);
    int status = lua_resume(co, L, narg, &nres);
    if (status == LUA_OK || status == LUA_YIELD) {
        if (!lua_checkstack(L, nres + 1)) {
            lua_pop(co, nres);
            return luaL_error(L, "too many results to resume");
        }
        lua_xmove(co, L, nres);
        return nres;
    }
    lua_xmove(co, L, 1); /* the error */
    status = lua_status(co);
    if (status != LUA_OK && status != LUA_YIELD) { /* the coroutine itself failed */
        if (c->dying != CS_DIE_NONE) return cs_script_die(L, c->dying);
        check_refused(L, c);
        status = lua_resetthread(co); /* close its to-be-closed variables */
        lua_xmove(co, L, 1);
    }
    if (status != LUA_ERRMEM && lua_type(L, -1) == LUA_TSTRING) {
        luaL_where(L, 1);
        lua_insert(L, -2);
        lua_concat(L, 2);
    }
    return lua_error(L);
}

static int sb_cowrap(lua_State *L) {
    luaL_checktype(L, 1, LUA_TFUNCTION);
    cs_script_charge_work(L, CS_COROUTINE_COST);
    lua_State *co = lua_newthread(L);
    lua_pushvalue(L, 1);
    lua_xmove(L, co, 1);
    lua_pushcclosure(L, sb_wrapped, 1);
    return 1;
}

/* A collection walks the whole Lua heap in one call, where no hook counts:
 * "collect", "step" (which may finish a cycle) and a change of mode (which
 * collects in full) are charged the heap's bytes, as if built anew. Free,
 * a loop of collectgarbage() over a large heap ran for days on its budget. */
static int sb_collectgarbage(lua_State *L) {
    static const char *const allowed[] = {"collect", "count", "step", "isrunning",
                                          "incremental", "generational", NULL};
    const char *opt = luaL_optstring(L, 1, "collect");
    for (const char *const *a = allowed; *a; a++) {
        if (strcmp(*a, opt) != 0) continue;
        if (strcmp(opt, "count") != 0 && strcmp(opt, "isrunning") != 0) {
            uint64_t heap = (uint64_t)lua_gc(L, LUA_GCCOUNT) * 1024 + (uint64_t)lua_gc(L, LUA_GCCOUNTB);
            cs_script_charge_work(L, heap / CS_BYTES_PER_STEP);
        }
        return cs_script_call_original(L);
    }
    return luaL_error(L, "collectgarbage: option '%s' is not available in lesson scripts", opt);
}

/* Finalizers run with hooks off, where no budget can stop them: none for scripts. */
static int sb_setmetatable(lua_State *L) {
    if (lua_istable(L, 2)) {
        lua_pushliteral(L, "__gc");
        if (lua_rawget(L, 2) != LUA_TNIL)
            return luaL_error(L, "setmetatable: __gc metamethods are not available in lesson scripts");
        lua_pop(L, 1);
    }
    return cs_script_call_original(L);
}

/* string.rep of an empty string loops n times producing nothing: a long C loop
 * that no hook interrupts. Non-empty results are bounded by the memory cap. */
static int sb_rep(lua_State *L) {
    size_t l, lsep;
    luaL_checklstring(L, 1, &l);
    lua_Integer n = luaL_checkinteger(L, 2);
    luaL_optlstring(L, 3, "", &lsep);
    if (n <= 0 || l + lsep == 0) {
        lua_pushliteral(L, "");
        return 1;
    }
    return cs_script_call_original(L);
}

/* table.move loops in C over as many indices as asked, even absent ones. */
static int sb_tmove(lua_State *L) {
    lua_Integer f = luaL_checkinteger(L, 2), e = luaL_checkinteger(L, 3);
    if (e >= f) cs_script_charge_work(L, (uint64_t)e - (uint64_t)f + 1);
    return cs_script_call_original(L);
}

/* print: like Lua's (tostring, tab-separated), as a print event of the rank. */
static int sb_print(lua_State *L) {
    cs_script_check(L);
    int n = lua_gettop(L);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int i = 1; i <= n; i++) {
        if (i > 1) luaL_addchar(&b, '\t');
        luaL_tolstring(L, i, NULL);
        luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
    cs_script_ctx *c = cs_script_ctx_of(L);
    size_t len;
    const char *text = lua_tolstring(L, -1, &len);
    /* Printing is cheap in steps and goes to the trace: without a bound, a
     * loop of prints fills the disk and the memory of whoever reads it. The
     * print that would cross the limit (its newline counted) is not made. */
    if (c->out_limit && (uint64_t)len + 1 > c->out_limit - c->out_used) cs_script_die(L, CS_DIE_OUTPUT);
    c->out_used += (uint64_t)len + 1;
    cs_print(c->r, text, len, cs_script_call_line(L));
    return 0;
}

/* Replace t[name] (t at the top of the stack) by a C closure over the original. */
static void wrap_field(lua_State *L, const char *name, lua_CFunction fn) {
    lua_getfield(L, -1, name);
    lua_pushcclosure(L, fn, 1);
    lua_setfield(L, -2, name);
}

static void remove_field(lua_State *L, const char *name) {
    lua_pushnil(L);
    lua_setfield(L, -2, name);
}

static void open_lib(lua_State *L, const char *name, lua_CFunction open) {
    luaL_requiref(L, name, open, 1);
    lua_pop(L, 1);
}

/* The globals' __index: True, False and None are Python's; read in Lua they
 * are nil, and while True do ... end does nothing, silently. Reading one is
 * an error that gives Lua's word; any other absent global is nil as ever. A
 * script may set its own metatable on _G instead. */
static int sb_python_global(lua_State *L) {
    static const char *const words[][2] = {{"True", "true"}, {"False", "false"}, {"None", "nil"}};
    const char *k = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : NULL;
    for (size_t i = 0; k && i < sizeof words / sizeof words[0]; i++)
        if (strcmp(k, words[i][0]) == 0)
            return luaL_error(L, "%s is Python's, not Lua's: Lua writes it %s", k, words[i][1]);
    return 0;
}

static void sandbox_globals(lua_State *L) {
    lua_pushglobaltable(L);
    lua_newtable(L);
    lua_pushcfunction(L, sb_python_global);
    lua_setfield(L, -2, "__index");
    lua_setmetatable(L, -2);
    remove_field(L, "dofile");
    remove_field(L, "loadfile");
    remove_field(L, "warn"); /* warnings have nowhere to go */
    wrap_field(L, "load", sb_load);
    wrap_field(L, "pcall", sb_pcall);
    wrap_field(L, "xpcall", sb_xpcall);
    wrap_field(L, "collectgarbage", sb_collectgarbage);
    wrap_field(L, "setmetatable", sb_setmetatable);
    lua_pushcfunction(L, sb_print);
    lua_setfield(L, -2, "print");
    lua_pop(L, 1);

    lua_getglobal(L, LUA_STRLIBNAME);
    remove_field(L, "dump");
    wrap_field(L, "rep", sb_rep);
    lua_pop(L, 1);
    lua_getglobal(L, LUA_TABLIBNAME);
    wrap_field(L, "move", sb_tmove);
    lua_pop(L, 1);
    lua_getglobal(L, LUA_COLIBNAME);
    wrap_field(L, "create", sb_cocreate);
    lua_pushcfunction(L, sb_cowrap);
    lua_setfield(L, -2, "wrap");
    wrap_field(L, "resume", sb_catching);
    wrap_field(L, "close", sb_catching);
    lua_pop(L, 1);
    cs_script_charge_libs(L);
}

/* math.random is seeded randomly by Lua; seed it from the rank's stream so runs
 * repeat exactly, like randn. */
static void seed_math_random(lua_State *L, cs_rank *r) {
    lua_getglobal(L, LUA_MATHLIBNAME);
    lua_getfield(L, -1, "randomseed");
    lua_pushinteger(L, (lua_Integer)*cs_rank_rng(r));
    lua_call(L, 1, 0);
    lua_pop(L, 1);
}

/* Runs protected: builds the sandbox, loads the script, returns its thread. */
static int sb_setup(lua_State *L) {
    cs_script_ctx *c = cs_script_ctx_of(L);
    open_lib(L, LUA_GNAME, luaopen_base);
    open_lib(L, LUA_STRLIBNAME, luaopen_string);
    open_lib(L, LUA_TABLIBNAME, luaopen_table);
    open_lib(L, LUA_MATHLIBNAME, luaopen_math);
    open_lib(L, LUA_UTF8LIBNAME, luaopen_utf8);
    open_lib(L, LUA_COLIBNAME, luaopen_coroutine);
    sandbox_globals(L);
    seed_math_random(L, c->r);
    open_lib(L, "tensor", luaopen_cs_tensor);
    open_lib(L, "dist", luaopen_cs_dist);
    lua_pushinteger(L, cs_rank_id(c->r));
    lua_setglobal(L, "rank");
    lua_pushinteger(L, cs_rank_world_size(c->r));
    lua_setglobal(L, "world_size");

    const char *src = c->script->source;
    size_t len = c->script->len;
    if (len > 0 && src[0] == '#') { /* a "#!" line, skipped as lua does; keep its newline */
        const char *nl = memchr(src, '\n', len);
        len -= nl ? (size_t)(nl - src) : len;
        src = nl ? nl : src + c->script->len;
    }
    lua_pushfstring(L, "@%s", c->script->name);
    if (luaL_loadbufferx(L, src, len, lua_tostring(L, -1), "t") != LUA_OK) return lua_error(L);
    lua_State *co = lua_newthread(L);
    lua_insert(L, -2);
    lua_xmove(L, co, 1);
    return 1;
}

/* ---- the end of a run: what happened, in words */

static void format_bytes(char *buf, size_t len, size_t n) {
    if (n >= ((size_t)1 << 30) && n % ((size_t)1 << 30) == 0)
        snprintf(buf, len, "%zu GiB", n >> 30);
    else if (n >= ((size_t)1 << 20) && n % ((size_t)1 << 20) == 0)
        snprintf(buf, len, "%zu MiB", n >> 20);
    else if (n >= 1024 && n % 1024 == 0)
        snprintf(buf, len, "%zu KiB", n >> 10);
    else
        snprintf(buf, len, "%zu bytes", n);
}

static void at_line(char *buf, size_t len, const cs_script_ctx *c, int line, const char *what) {
    if (line > 0) snprintf(buf, len, "%s:%d: %s", c->script->name, line, what);
    else snprintf(buf, len, "%s: %s", c->script->name, what);
}

static void budget_message(char *buf, size_t len, const cs_script_ctx *c, cs_die_reason why,
                           int line) {
    char what[400];
    if (why == CS_DIE_STEPS) {
        snprintf(what, sizeof what, "instruction budget exceeded (%llu steps; --step-limit)",
                 (unsigned long long)c->step_limit);
    } else if (why == CS_DIE_OUTPUT) {
        char size[32];
        format_bytes(size, sizeof size, (size_t)c->out_limit);
        snprintf(what, sizeof what, "output limit exceeded (%s printed per rank)", size);
    } else if (why == CS_DIE_HOST) {
        /* The machine ran out before the cap: not the script's budget. */
        char size[32];
        format_bytes(size, sizeof size, c->host_bytes);
        snprintf(what, sizeof what, "host allocation failed: %s%s (the machine is out of memory)",
                 c->host_bytes ? size : "", c->host_bytes ? "" : "a block");
    } else if (c->budget->limit == 0) {
        snprintf(what, sizeof what, "not enough memory");
    } else {
        char size[32];
        format_bytes(size, sizeof size, c->budget->limit);
        snprintf(what, sizeof what, "memory limit exceeded (%s per rank; --mem-limit)%s%s", size,
                 c->mem_detail[0] ? ": " : "", c->mem_detail);
    }
    at_line(buf, len, c, line, what);
}

/* "name:12: ..." or "[string \"...\"]:3: ...": Lua already said where. */
static bool has_position(const char *msg) {
    const char *colon = strchr(msg, ':');
    if (!colon || colon == msg || memchr(msg, '\n', (size_t)(colon - msg))) return false;
    const char *p = colon + 1;
    if (*p < '0' || *p > '9') return false;
    while (*p >= '0' && *p <= '9') p++;
    return *p == ':';
}

/* The line of the script a "name:12: ..." message points at; 0 when it
 * points elsewhere (a library's chunk) or nowhere. */
static int script_line_of(const cs_script_ctx *c, const char *msg) {
    size_t n = strlen(c->script->name);
    if (strncmp(msg, c->script->name, n) != 0 || msg[n] != ':') return 0;
    const char *p = msg + n + 1;
    int line = 0;
    while (*p >= '0' && *p <= '9' && line < 10000000) line = line * 10 + (*p++ - '0');
    return *p == ':' ? line : 0;
}

/* "file:line: msg; hint" into dst (line 0: msg names its place itself;
 * hint NULL: none), as snprintf. */
static int put_error(char *dst, size_t cap, const char *name, int line, const char *msg,
                     const char *hint) {
    const char *sep = hint ? "; " : "";
    if (!hint) hint = "";
    return line ? snprintf(dst, cap, "%s:%d: %s%s%s", name, line, msg, sep, hint)
                : snprintf(dst, cap, "%s%s%s", msg, sep, hint);
}

/* The error a script died with, "file:line: message", from the top of co,
 * into buf (len bytes); NULL when it does not fit: then a malloc'd copy, at
 * most an event's text, its cut said as print says one (NULL: no memory, buf
 * holds the head). */
static char *error_message(char *buf, size_t len, lua_State *co, const cs_script_ctx *c) {
    const char *msg;
    char what[64], *esc = NULL;
    int t = lua_type(co, -1);
    if (t == LUA_TSTRING || t == LUA_TNUMBER) {
        size_t n;
        msg = lua_tolstring(co, -1, &n);
        if (memchr(msg, '\0', n) && (esc = cs_text_nul_escape(msg, n))) msg = esc;
    } else {
        snprintf(what, sizeof what, "(error object is a %s value)", lua_typename(co, t));
        msg = what;
    }
    char *big = NULL;
    int line = has_position(msg) ? 0 : cs_script_line(co);
    const char *hint = cs_script_hint(c->script, line ? line : script_line_of(c, msg), msg);
    int n = put_error(buf, len, c->script->name, line, msg, hint);
    if (n >= 0 && (size_t)n >= len && (big = malloc(CS_EV_MAX_TEXT))) {
        const size_t max = CS_EV_MAX_TEXT - 1;
        char note[96];
        put_error(big, max + 1, c->script->name, line, msg, hint);
        if ((size_t)n > max) {
            int nn = snprintf(note, sizeof note, " [commsim: message cut, %zu more bytes]",
                              (size_t)n - (max - sizeof note));
            memcpy(big + max - sizeof note, note, (size_t)nn + 1);
        }
    }
    free(esc);
    return big;
}

/* Classify how the main thread ended; report failures. Returns the status. */
static int finish(cs_script_ctx *c, lua_State *co, int status) {
    char msg[1024];
    cs_die_reason why = c->dying;
    int line = c->die_line;
    /* A memory error is the end of the rank even if the script caught it, even
     * on its last line. */
    if (why == CS_DIE_NONE && c->mem_refused) why = c->refused_host ? CS_DIE_HOST : CS_DIE_MEM;
    else if (why == CS_DIE_NONE && status == LUA_ERRMEM) why = CS_DIE_MEM;
    if (why != CS_DIE_NONE && line == 0 && co) line = cs_script_line(co);
    if (why == CS_DIE_ABORT) {
        c->die_line = line; /* where it was stopped: its exit says so */
        return CS_RANK_ABORTED;
    }
    if (why == CS_DIE_MEM || why == CS_DIE_STEPS || why == CS_DIE_HOST || why == CS_DIE_OUTPUT) {
        budget_message(msg, sizeof msg, c, why, line);
        cs_rank_fail_at(c->r, CS_END_TIMEOUT, line, msg);
        return CS_END_TIMEOUT;
    }
    if (status == LUA_OK) return 0;
    if (status == LUA_YIELD)
        at_line(msg, sizeof msg, c, cs_script_line(co), "attempt to yield from outside a coroutine");
    char *big = status == LUA_YIELD ? NULL : error_message(msg, sizeof msg, co, c);
    cs_rank_fail_at(c->r, CS_END_ERROR, script_line_of(c, msg), big ? big : msg);
    free(big);
    return CS_END_ERROR;
}

int cs_script_run(cs_rank *r, const cs_script *s, const cs_script_limits *lim) {
    cs_script_ctx c = {
        .r = r,
        .budget = cs_rank_budget(r),
        .script = s,
        .step_limit = lim ? lim->step_limit : CS_DEFAULT_STEP_LIMIT,
        .out_limit = lim ? lim->out_limit : 0,
    };
    if (lim && lim->mem_limit) c.budget->limit = lim->mem_limit;
    int status;
    lua_State *L = lua_newstate(cs_script_alloc, &c);
    if (!L) {
        status = finish(&c, NULL, LUA_ERRMEM);
        cs_rank_exit(r, status);
        return status;
    }
    *(cs_script_ctx **)lua_getextraspace(L) = &c;
    lua_pushcfunction(L, sb_setup);
    int rc = lua_pcall(L, 0, 1, 0);
    if (rc != LUA_OK) {
        /* Loading failed (syntax error, or no memory for the sandbox): the
         * message is on L, which plays the part of the script's thread. */
        status = finish(&c, L, rc);
    } else {
        lua_State *co = lua_tothread(L, -1);
        lua_sethook(co, count_hook, LUA_MASKCOUNT, CS_HOOK_EVERY);
        c.running = true;
        int nres = 0;
        rc = lua_resume(co, L, 0, &nres);
        status = finish(&c, co, rc);
    }
    c.closing = true;
    lua_close(L);
    cs_rank_exit_at(r, status, status == CS_RANK_ABORTED ? c.die_line : 0);
    return status;
}
