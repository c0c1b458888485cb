/* grade_spec.c -- finding an exercise and loading its spec.lua in a sandbox
 * of its own (base without file access, string, table, math): the spec is the
 * instructor's file, but it is still only data and check functions. */
#include <dirent.h>
#include <errno.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api.h"
#include "collectives.h"
#include "engine.h"
#include "events.h"
#include "grade.h"
#include "grade_internal.h"
#include "lessons.h"
#include "netmodel.h"
#include "xalloc.h"

#define CS_DUP(s) cs_xstrdup((s), "grade")

static bool is_dir(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool has_spec(const char *dir) {
    char p[4096];
    if (snprintf(p, sizeof p, "%s/spec.lua", dir) >= (int)sizeof p) return false;
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* A bare NAME: lessons/NN-slug/exercises/NAME, in the first chapter that has it. */
static char *find_named(const char *name) {
    char rbuf[4096];
    const char *root = cs_lessons_dir(rbuf, sizeof rbuf);
    if (!root) return NULL;
    DIR *d = opendir(root);
    if (!d) return NULL;
    char *best = NULL, *best_ch = NULL;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char p[4096];
        snprintf(p, sizeof p, "%s/%s/exercises/%s", root, e->d_name, name);
        if (!has_spec(p)) continue;
        if (!best_ch || strcmp(e->d_name, best_ch) < 0) { /* readdir order is not stable */
            free(best), free(best_ch);
            best = CS_DUP(p), best_ch = CS_DUP(e->d_name);
        }
    }
    closedir(d);
    free(best_ch);
    return best;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The bundled exercises' names, sorted, after ": " in out ("" when none):
 * what a mistyped NAME could have been. */
static void list_named(char *out, size_t len) {
    out[0] = 0;
    char rbuf[4096];
    const char *root = cs_lessons_dir(rbuf, sizeof rbuf);
    DIR *d = root ? opendir(root) : NULL;
    if (!d) return;
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e, *x;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char p[4096];
        snprintf(p, sizeof p, "%s/%s/exercises", root, e->d_name);
        DIR *xd = opendir(p);
        while (xd && (x = readdir(xd))) {
            char q[4096 + 256];
            snprintf(q, sizeof q, "%s/%s", p, x->d_name);
            if (x->d_name[0] == '.' || !has_spec(q)) continue;
            if (n == cap) names = cs_xrealloc(names, (cap = cap ? 2 * cap : 16) * sizeof *names, "grade");
            names[n++] = CS_DUP(x->d_name);
        }
        if (xd) closedir(xd);
    }
    closedir(d);
    if (n) qsort(names, n, sizeof *names, by_name);
    size_t at = 0;
    bool full = false;
    for (size_t i = 0; i < n; i++) {
        if (!full && !(i && strcmp(names[i], names[i - 1]) == 0)) { /* whole names only, once each */
            int k = snprintf(out + at, len - at, "%s%s", at ? ", " : ": ", names[i]);
            if (k < 0 || (size_t)k >= len - at) out[at] = 0, full = true;
            else at += (size_t)k;
        }
    }
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
}

/* ---- spec code: every call into the spec's state is protected and bounded */

/* A spec's code (loading it, a result or check function) gets this many
 * instructions per call and this much memory in all: a loop or a runaway
 * table in the spec is the spec's error, said at once, not every student's. */
#define SPEC_STEPS 100000000
#define SPEC_MEMORY ((size_t)256 << 20)

static void spec_hook(lua_State *L, lua_Debug *ar) {
    (void)ar;
    luaL_where(L, 0); /* the spec's line that was running */
    lua_pushfstring(L, "the spec's code ran past %d instructions (an endless loop?)", SPEC_STEPS);
    lua_concat(L, 2);
    lua_error(L);
}

int cs_grade_spec_pcall(lua_State *L, int nargs, int nresults) {
    lua_sethook(L, spec_hook, LUA_MASKCOUNT, SPEC_STEPS); /* and the count starts again */
    int r = lua_pcall(L, nargs, nresults, 0);
    lua_sethook(L, NULL, 0, 0);
    if (r == LUA_ERRMEM) { /* Lua's "not enough memory" says neither whose nor which cap */
        lua_pop(L, 1); /* what ran out is garbage now: the message has room */
        lua_pushfstring(L, "the spec's code ran past its %d MiB of memory (a runaway table?)",
                        (int)(SPEC_MEMORY >> 20));
    }
    return r;
}

typedef struct spec_mem {
    size_t used, cap;
} spec_mem;

static void *spec_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    spec_mem *m = ud;
    if (!ptr) osize = 0; /* osize is then the object's type, not a size */
    if (nsize == 0) {
        free(ptr);
        m->used -= osize;
        return NULL;
    }
    if (nsize > osize && nsize - osize > m->cap - m->used) return NULL;
    void *p = realloc(ptr, nsize);
    if (p) m->used = m->used - osize + nsize;
    return p;
}

/* ---- reading the table: any shape the spec gives is an error with its place */

typedef struct reader {
    lua_State *L;
    cs_grade_spec *s;
    const char *file;  /* DIR/spec.lua, the start of every message */
    const char *where; /* "" or "case 'NAME': " */
    const char *key;   /* the field being read, or NULL */
    const char *name;  /* the case's name, or NULL */
    bool in_case;      /* a case is being read (its name may be no string) */
} reader;

/* ---- where a field is written: Lua records no line for a table's fields,
 * so a field error looks for it in the text. A case is where its name is
 * written as a string; its field, the first `KEY =` from there before the
 * next case's `name =`. Not found (a computed name, say): no line. */

static int line_of(const char *text, const char *at) {
    int n = 1;
    for (const char *p = text; p < at; p++) n += *p == '\n';
    return n;
}

static bool name_char(char c) {
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* The first `key =` (not `==`) in [from, to), as a whole name. */
static const char *find_assign(const char *from, const char *to, const char *key) {
    size_t kl = strlen(key);
    for (const char *p = from; p && p + kl <= to && (p = strstr(p, key)) && p + kl <= to; p++) {
        if (p > from && name_char(p[-1])) continue;
        const char *q = p + kl;
        while (*q == ' ' || *q == '\t') q++;
        if (q[0] == '=' && q[1] != '=') return p;
    }
    return NULL;
}

/* The case's name as a string literal, "NAME" or 'NAME'. */
static const char *find_quoted(const char *text, const char *name) {
    size_t nl = strlen(name);
    for (const char *p = text; (p = strstr(p, name)); p++)
        if (p > text && (p[-1] == '"' || p[-1] == '\'') && p[nl] == p[-1]) return p;
    return NULL;
}

static int find_line(const reader *r, const char *text) {
    const char *from = text, *to = text + strlen(text);
    if (r->in_case && !r->name) return 0; /* a case with no name to find */
    if (r->name) {
        if (!(from = find_quoted(text, r->name))) return 0;
        const char *eol = strchr(from, '\n'), *next = eol ? find_assign(eol, to, "name") : NULL;
        if (next) to = next;
        while (from > text && from[-1] != '\n') from--; /* the case's own line, from its start */
    }
    const char *at = r->key ? find_assign(from, to, r->key) : NULL;
    if (!at && !r->name) return 0;
    return line_of(text, at ? at : from);
}

/* Read again only now: a spec without mistakes never needs its text. */
static int field_line(const reader *r) {
    size_t len;
    char *text = cs_grade_read_all(r->file, &len);
    int line = text ? find_line(r, text) : 0;
    free(text);
    return line;
}

static int bad(reader *r, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int line = field_line(r);
    if (line) lua_pushfstring(r->L, "%s:%d: %s", r->file, line, r->where);
    else lua_pushfstring(r->L, "%s: %s", r->file, r->where);
    lua_pushvfstring(r->L, fmt, ap);
    va_end(ap);
    lua_concat(r->L, 2);
    return lua_error(r->L);
}

/* Every key of the table at t is one of known (a spelling mistake must not
 * silently drop a field). */
static void known_keys(reader *r, int t, const char *what, const char *const *known) {
    lua_State *L = r->L;
    lua_pushnil(L);
    while (lua_next(L, t)) {
        lua_pop(L, 1);
        bool ok = false;
        if (lua_type(L, -1) == LUA_TSTRING)
            for (int i = 0; known[i] && !ok; i++) ok = strcmp(lua_tostring(L, -1), known[i]) == 0;
        if (!ok) {
            lua_pushvalue(L, -1); /* tostring on a copy: the key stays a key for lua_next */
            r->key = luaL_tolstring(L, -1, NULL);
            bad(r, "unknown field '%s' in %s", r->key, what);
        }
    }
}

static const char *typename_at(lua_State *L, int i) { return lua_typename(L, lua_type(L, i)); }

/* t[k] as a string, or NULL when absent. */
static char *str_field(reader *r, int t, const char *k) {
    r->key = k;
    int ty = lua_getfield(r->L, t, k);
    if (ty != LUA_TNIL && ty != LUA_TSTRING) bad(r, "%s must be a string, not a %s", k, typename_at(r->L, -1));
    char *v = ty == LUA_TSTRING ? CS_DUP(lua_tostring(r->L, -1)) : NULL;
    lua_pop(r->L, 1);
    return v;
}

/* t[k] as a finite number, dflt when absent. */
static double num_field(reader *r, int t, const char *k, double dflt) {
    double v = dflt;
    r->key = k;
    int ty = lua_getfield(r->L, t, k);
    if (ty != LUA_TNIL && ty != LUA_TNUMBER) bad(r, "%s must be a number, not a %s", k, typename_at(r->L, -1));
    if (ty == LUA_TNUMBER && !isfinite(v = lua_tonumber(r->L, -1))) bad(r, "%s must be a finite number", k);
    lua_pop(r->L, 1);
    return v;
}

/* A string or a list of strings at t[k], each one that ok accepts (named in
 * what when it does not); the default when absent. */
static int str_list(reader *r, int t, const char *k, char **out, const char *const *dflt,
                    bool (*ok)(const char *), const char *what) {
    lua_State *L = r->L;
    r->key = k;
    int n = 0, ty = lua_getfield(L, t, k), len = 1;
    if (ty == LUA_TTABLE) {
        len = (int)luaL_len(L, -1);
        if (len < 1) bad(r, "%s is an empty list", k);
        if (len > CS_GRADE_MAX_LIST) bad(r, "%s lists more than %d", k, CS_GRADE_MAX_LIST);
    } else if (ty != LUA_TNIL && ty != LUA_TSTRING)
        bad(r, "%s must be a string or a list of strings, not a %s", k, typename_at(L, -1));
    for (int i = 1; ty != LUA_TNIL && i <= len; i++) {
        if (ty == LUA_TTABLE && lua_geti(L, -1, i) != LUA_TSTRING)
            bad(r, "%s[%d] must be a string, not a %s", k, i, typename_at(L, -1));
        const char *v = lua_tostring(L, -1);
        if (strncmp(v, "dist.", 5) == 0) v += 5;
        if (ok && !ok(v)) bad(r, "%s: '%s' is not %s", k, v, what);
        out[n++] = CS_DUP(v);
        if (ty == LUA_TTABLE) lua_pop(L, 1);
    }
    lua_pop(L, 1);
    if (n == 0)
        for (int i = 0; dflt && dflt[i]; i++) out[n++] = CS_DUP(dflt[i]);
    return n;
}

static bool is_op(const char *v) {
    cs_op op;
    if (cs_op_parse(v, &op)) return true;
    for (int k = 0; k < CS_COLL_NKINDS; k++)
        if (strcmp(v, cs_coll_name((cs_coll_kind)k)) == 0) return true;
    return false;
}

static bool is_engine(const char *v) { return cs_engine_find(v) || cs_engine_missing(v); }

static bool is_mode(const char *v) {
    cs_send_mode m;
    return cs_send_mode_parse(v, &m);
}

static int fn_ref(reader *r, int t, const char *k) {
    r->key = k;
    int ty = lua_getfield(r->L, t, k);
    if (ty == LUA_TFUNCTION) return luaL_ref(r->L, LUA_REGISTRYINDEX);
    if (ty != LUA_TNIL) bad(r, "%s must be a function, not a %s", k, typename_at(r->L, -1));
    lua_pop(r->L, 1);
    return LUA_NOREF;
}

/* A parameter becomes a global assignment before the solution's first line:
 * it must be a Lua name, and not one the run gives the solution. */
static bool param_name(const char *k) {
    static const char *const taken[] = {
        "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if",
        "in", "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while",
        "rank", "world_size", "dist", "tensor", "result", "print", NULL};
    if (!*k || (*k >= '0' && *k <= '9')) return false;
    for (const char *p = k; *p; p++)
        if (!(*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
            return false;
    for (int i = 0; taken[i]; i++)
        if (strcmp(k, taken[i]) == 0) return false;
    return true;
}

static int param_cmp(const void *a, const void *b) {
    return strcmp(((const cs_grade_param *)a)->name, ((const cs_grade_param *)b)->name);
}

static void load_params(reader *r, int t, cs_grade_case *c) {
    lua_State *L = r->L;
    r->key = "params";
    int ty = lua_getfield(L, t, "params");
    if (ty == LUA_TNIL) return lua_pop(L, 1);
    if (ty != LUA_TTABLE) bad(r, "params must be a table {NAME = number, ...}, not a %s", typename_at(L, -1));
    int p = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, p)) {
        if (lua_type(L, -2) != LUA_TSTRING) bad(r, "params: keys must be names, not a %s", typename_at(L, -2));
        const char *k = lua_tostring(L, -2);
        if (!param_name(k)) bad(r, "params: '%s' is not a name the solution can be given", k);
        if (lua_type(L, -1) != LUA_TNUMBER) bad(r, "params: %s must be a number, not a %s", k, typename_at(L, -1));
        if (!isfinite(lua_tonumber(L, -1))) bad(r, "params: %s must be a finite number", k);
        if (c->nparams == CS_GRADE_MAX_LIST) bad(r, "params: more than %d", CS_GRADE_MAX_LIST);
        c->params[c->nparams].name = CS_DUP(k);
        c->params[c->nparams++].value = lua_tonumber(L, -1);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    /* lua_next's order is the hash's: sort for byte-identical output */
    if (c->nparams) qsort(c->params, (size_t)c->nparams, sizeof c->params[0], param_cmp);
}

static void load_worlds(reader *r, int t, cs_grade_case *c) {
    lua_State *L = r->L;
    r->key = "world";
    int ty = lua_getfield(L, t, "world"), n = 1;
    if (ty == LUA_TTABLE) {
        n = (int)luaL_len(L, -1);
        if (n < 1 || n > CS_GRADE_MAX_LIST) bad(r, "world must list 1 to %d world sizes", CS_GRADE_MAX_LIST);
    } else if (ty != LUA_TNIL && ty != LUA_TNUMBER)
        bad(r, "world must be a world size or a list of them, not a %s", typename_at(L, -1));
    for (int i = 1; ty != LUA_TNIL && i <= n; i++) {
        if (ty == LUA_TTABLE) lua_geti(L, -1, i);
        if (lua_type(L, -1) != LUA_TNUMBER)
            bad(r, "world must be a world size or a list of them, not a %s", typename_at(L, -1));
        int isint;
        lua_Integer w = lua_tointegerx(L, -1, &isint);
        if (!isint || w < 1 || w > 64) bad(r, "world size %s is not a whole number from 1 to 64", luaL_tolstring(L, -1, NULL));
        c->worlds[c->nworlds++] = (int)w;
        if (ty == LUA_TTABLE) lua_pop(L, 1);
    }
    lua_pop(L, 1);
    if (c->nworlds == 0) c->worlds[c->nworlds++] = 2;
}

static void load_case(reader *r, int t, cs_grade_case *c, int idx) {
    static const char *const keys[] = {"name", "world", "engines", "send_modes", "params", "points",
                                       "hidden", "expect", "net", "result", "check", NULL};
    static const char *const modes[] = {"rendezvous", "eager", NULL};
    static const char *const engines[] = {"thread", NULL};
    lua_State *L = r->L;
    char where[200];
    snprintf(where, sizeof where, "case %d: ", idx); /* a name that is no string: which case */
    r->where = where, r->in_case = true;
    c->name = str_field(r, t, "name");
    if (!c->name) {
        char b[32];
        snprintf(b, sizeof b, "case %d", idx);
        c->name = CS_DUP(b);
    } else {
        snprintf(where, sizeof where, "case '%.160s': ", c->name);
        r->name = c->name;
    }
    known_keys(r, t, "a case", keys);
    c->points = num_field(r, t, "points", 1);
    if (c->points < 0) bad(r, "points must not be negative");
    r->key = "hidden";
    int ty = lua_getfield(L, t, "hidden");
    if (ty != LUA_TNIL && ty != LUA_TBOOLEAN) bad(r, "hidden must be true or false, not a %s", typename_at(L, -1));
    c->hidden = lua_toboolean(L, -1);
    lua_pop(L, 1);
    r->key = "expect";
    if ((ty = lua_getfield(L, t, "expect")) != LUA_TNIL &&
        (ty != LUA_TSTRING || (strcmp(lua_tostring(L, -1), "ok") && strcmp(lua_tostring(L, -1), "deadlock"))))
        bad(r, "expect must be \"ok\" or \"deadlock\"");
    c->expect_deadlock = ty == LUA_TSTRING && strcmp(lua_tostring(L, -1), "deadlock") == 0;
    lua_pop(L, 1);
    load_worlds(r, t, c);
    /* Modelled time: a case may fix the network model, so that times are
     * exact and can be graded (grade --net overrides it). */
    c->net = str_field(r, t, "net");
    if (c->net) {
        cs_netmodel m;
        char why[256];
        if (cs_netmodel_parse(c->net, &m, why, sizeof why) < 0) bad(r, "net: %s", why);
    }
    c->nengines = str_list(r, t, "engines", c->engines, engines, is_engine, "an engine (commsim run --engine help)");
    c->nmodes = str_list(r, t, "send_modes", c->modes, modes, is_mode, "rendezvous, eager or eager:N");
    load_params(r, t, c);
    c->check_ref = fn_ref(r, t, "check");
    c->expect_ref = fn_ref(r, t, "result");
    r->name = NULL, r->in_case = false;
}

static void load_limits(reader *r, int t) {
    static const char *const keys[] = {"timeout", "steps", "memory", "output", NULL};
    lua_State *L = r->L;
    cs_grade_spec *s = r->s;
    s->timeout = 20, s->steps = 50000000ull, s->memory = (size_t)256 << 20;
    /* prints go to the trace: bounded, or a loop fills the disk; the result's
     * own lines count too (chunked's 2^20 elements are 8 MiB) */
    s->output = (size_t)16 << 20;
    r->key = "limits";
    int ty = lua_getfield(L, t, "limits");
    if (ty == LUA_TNIL) return lua_pop(L, 1);
    if (ty != LUA_TTABLE) bad(r, "limits must be a table, not a %s", typename_at(L, -1));
    int l = lua_gettop(L);
    known_keys(r, l, "limits", keys);
    r->where = "limits: ";
    /* at most a day, a trillion instructions, a terabyte: sure to fit the integers below */
    double timeout = num_field(r, l, "timeout", s->timeout);
    if (timeout <= 0 || timeout > 86400) bad(r, "timeout must be more than 0 and at most 86400 seconds");
    double steps = num_field(r, l, "steps", (double)s->steps);
    if (steps < 1 || steps > 1e12) bad(r, "steps must be from 1 to 1e12 instructions");
    double memory = num_field(r, l, "memory", (double)s->memory);
    if (memory < 1 << 20 || memory > 1e12) bad(r, "memory must be from 1 MiB (1048576) to 1e12 bytes");
    double output = num_field(r, l, "output", (double)s->output);
    if (output < 1024 || output > 1 << 30) bad(r, "output must be from 1 KiB (1024) to 1 GiB (1073741824) bytes");
    s->timeout = timeout, s->steps = (unsigned long long)steps, s->memory = (size_t)memory;
    s->output = (size_t)output;
    r->where = "";
    lua_pop(L, 1);
}

/* Protected: the spec's table (argument 2) into the spec (argument 1). */
static int parse_spec(lua_State *L) {
    static const char *const keys[] = {"title", "required", "forbidden", "allowed", "limits", "cases", NULL};
    reader *r = lua_touserdata(L, 1);
    cs_grade_spec *s = r->s;
    const int t = 2;
    r->where = "", r->key = NULL;
    if (!lua_istable(L, t)) bad(r, "must return a table, not a %s", typename_at(L, t));
    known_keys(r, t, "the spec", keys);
    s->title = str_field(r, t, "title");
    const char *what = "an operation (send, recv, isend, irecv, or a collective's name)";
    s->nrequired = str_list(r, t, "required", s->required, NULL, is_op, what);
    s->nforbidden = str_list(r, t, "forbidden", s->forbidden, NULL, is_op, what);
    s->nallowed = str_list(r, t, "allowed", s->allowed, NULL, is_op, what);
    load_limits(r, t);
    r->key = "cases";
    if (lua_getfield(L, t, "cases") != LUA_TTABLE) bad(r, "no cases table");
    int ct = lua_gettop(L);
    int n = (int)luaL_len(L, ct);
    if (n < 1) bad(r, "no cases");
    s->cases = cs_xcalloc((size_t)n, sizeof *s->cases, "grade spec");
    for (int i = 1; i <= n; i++) {
        if (lua_geti(L, ct, i) != LUA_TTABLE) bad(r, "case %d is not a table", i);
        cs_grade_case *c = &s->cases[s->ncases++];
        c->check_ref = c->expect_ref = LUA_NOREF;
        load_case(r, lua_gettop(L), c, i);
        lua_settop(L, ct);
    }
    const char **names = cs_xcalloc((size_t)n, sizeof *names, "grade spec");
    for (int i = 0; i < n; i++) names[i] = s->cases[i].name;
    char **tags = cs_grade_tags(names, n);
    for (int i = 0; i < n; i++) s->cases[i].tag = tags[i];
    free(tags), free(names);
    return 0;
}

/* Protected: the spec's sandbox (base without file access, string, table, math). */
static int open_libs(lua_State *L) {
    static const char *const gone[] = {"dofile", "loadfile", "load", "require", "collectgarbage"};
    luaL_requiref(L, LUA_GNAME, luaopen_base, 1);
    luaL_requiref(L, LUA_STRLIBNAME, luaopen_string, 1);
    luaL_requiref(L, LUA_TABLIBNAME, luaopen_table, 1);
    luaL_requiref(L, LUA_MATHLIBNAME, luaopen_math, 1);
    for (size_t i = 0; i < sizeof gone / sizeof gone[0]; i++) {
        lua_pushnil(L);
        lua_setglobal(L, gone[i]);
    }
    return 0;
}

static lua_State *spec_state(void) {
    spec_mem *m = malloc(sizeof *m);
    if (!m) return NULL;
    *m = (spec_mem){0, SPEC_MEMORY};
    lua_State *L = lua_newstate(spec_alloc, m);
    if (!L) {
        free(m);
        return NULL;
    }
    lua_pushcfunction(L, open_libs);
    if (lua_pcall(L, 0, 0, 0) != LUA_OK) {
        lua_close(L);
        free(m);
        return NULL;
    }
    return L;
}

int cs_grade_spec_load(cs_grade_spec *s, const char *exercise, char *err, size_t errlen) {
    memset(s, 0, sizeof *s);
    char *dir = NULL;
    bool bare = !strchr(exercise, '/');
    /* A folder holding spec.lua is the exercise; else a bare NAME is a
     * bundled one: a folder named like it without spec.lua (a class's, say)
     * does not hide it. */
    if (is_dir(exercise) && has_spec(exercise)) dir = CS_DUP(exercise);
    else if (bare) dir = find_named(exercise);
    if (!dir) {
        if (is_dir(exercise))
            snprintf(err, errlen, "%s: no spec.lua in this folder%s", exercise,
                     bare ? ", and no exercise of that name under lessons/*/exercises/" : "");
        else if (bare) {
            char names[512];
            list_named(names, sizeof names);
            snprintf(err, errlen, "%s: no such exercise (a folder with spec.lua, or a name under "
                     "lessons/*/exercises/%s)", exercise, names);
        }
        else if (access(exercise, F_OK) < 0)
            snprintf(err, errlen, "%s: no such folder", exercise);
        else /* spec.lua itself, say */
            snprintf(err, errlen, "%s: not a folder (EXERCISE is the folder that holds spec.lua)", exercise);
        return -1;
    }
    size_t l = strlen(dir);
    while (l > 1 && dir[l - 1] == '/') dir[--l] = 0;
    s->dir = dir;
    const char *base = strrchr(dir, '/');
    s->name = CS_DUP(base ? base + 1 : dir);
    lua_State *L = spec_state();
    if (!L) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    s->L = L;
    char path[4200];
    snprintf(path, sizeof path, "%s/spec.lua", dir);
    reader r = {.L = L, .s = s, .file = path, .where = ""};
    lua_pushcfunction(L, parse_spec);
    lua_pushlightuserdata(L, &r);
    if (luaL_loadfilex(L, path, "t") != LUA_OK || cs_grade_spec_pcall(L, 0, 1) != LUA_OK ||
        cs_grade_spec_pcall(L, 2, 0) != LUA_OK) {
        const char *m = lua_isstring(L, -1) ? lua_tostring(L, -1) : "the spec raised an error";
        /* every message names the file; Lua's own (out of memory) do not */
        snprintf(err, errlen, strncmp(m, path, strlen(path)) ? "%s: %s" : "%.0s%s", path, m);
        return -1;
    }
    lua_settop(L, 0);
    if (!s->title) s->title = CS_DUP(s->name);
    return 0;
}

/* k->check(n) asked in a child: the nccl engine's counts the GPUs, which
 * starts CUDA, and a run forked from a grader that had started it could not
 * use the device. True when the world fits, else the reason in why. */
static bool engine_fits(const cs_engine_kind *k, int n, char *why, size_t len) {
    int p[2];
    if (pipe(p) < 0) return k->check(n, why, len) >= 0;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        char w[512] = "";
        bool fits = k->check(n, w, sizeof w) >= 0;
        if (!fits && write(p[1], w, strlen(w)) < 0) _exit(2);
        _exit(!fits);
    }
    close(p[1]);
    size_t got = 0;
    ssize_t r;
    while (pid > 0 && got + 1 < len && (r = read(p[0], why + got, len - 1 - got)) != 0) {
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) break;
        got += (size_t)r;
    }
    why[got] = 0;
    close(p[0]);
    int st = 0;
    while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    if (pid < 0) return k->check(n, why, len) >= 0;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return true;
    if (!got) snprintf(why, len, "the engine's check of this machine failed");
    return false;
}

int cs_grade_spec_runnable(const cs_grade_spec *s, const char *engine, char *err, size_t errlen) {
    for (int i = 0; i < s->ncases; i++) {
        const cs_grade_case *c = &s->cases[i];
        int n = 1;
        for (int w = 0; w < c->nworlds; w++)
            if (c->worlds[w] > n) n = c->worlds[w];
        for (int e = 0; e < (engine ? 1 : c->nengines); e++) {
            const char *name = engine ? engine : c->engines[e];
            const cs_engine_kind *k = cs_engine_find(name);
            char why[512] = "";
            if (cs_engine_missing(name)) snprintf(why, sizeof why, "%s", cs_engine_missing(name));
            else if (k && k->check && engine_fits(k, n, why, sizeof why)) why[0] = 0;
            if (!why[0]) continue;
            if (engine) snprintf(err, errlen, "--engine %s: %s (case '%s')", name, why, c->name);
            else snprintf(err, errlen, "%s/spec.lua: case '%s': engine %s: %s", s->dir, c->name, name, why);
            return -1;
        }
    }
    return 0;
}

void cs_grade_spec_free(cs_grade_spec *s) {
    for (int i = 0; i < s->ncases; i++) {
        cs_grade_case *c = &s->cases[i];
        free(c->name), free(c->tag);
        free(c->net);
        for (int k = 0; k < c->nengines; k++) free(c->engines[k]);
        for (int k = 0; k < c->nmodes; k++) free(c->modes[k]);
        for (int k = 0; k < c->nparams; k++) free(c->params[k].name);
    }
    for (int k = 0; k < s->nrequired; k++) free(s->required[k]);
    for (int k = 0; k < s->nforbidden; k++) free(s->forbidden[k]);
    for (int k = 0; k < s->nallowed; k++) free(s->allowed[k]);
    free(s->cases);
    free(s->dir), free(s->name), free(s->title);
    if (s->L) {
        void *m;
        lua_getallocf(s->L, &m);
        lua_sethook(s->L, spec_hook, LUA_MASKCOUNT, SPEC_STEPS); /* its __gc functions too */
        lua_close(s->L);
        free(m);
    }
    memset(s, 0, sizeof *s);
}
