/* grade_spec.c -- finding an exercise and loading its spec.lua in a sandbox
 * of its own (base without file access, string, table, math): the spec is the
 * instructor's file, but it is still only data and check functions. */
#include <dirent.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "grade.h"
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

static char *str_field(lua_State *L, int t, const char *k) {
    char *v = NULL;
    if (lua_getfield(L, t, k) == LUA_TSTRING) v = CS_DUP(lua_tostring(L, -1));
    lua_pop(L, 1);
    return v;
}

/* A string or a list of strings at t[k]; the default when absent. */
static int str_list(lua_State *L, int t, const char *k, char **out, const char *const *dflt) {
    int n = 0;
    int ty = lua_getfield(L, t, k);
    if (ty == LUA_TSTRING) out[n++] = CS_DUP(lua_tostring(L, -1));
    else if (ty == LUA_TTABLE)
        for (int i = 1; n < CS_GRADE_MAX_LIST; i++) {
            if (lua_geti(L, -1, i) != LUA_TSTRING) { lua_pop(L, 1); break; }
            const char *v = lua_tostring(L, -1);
            out[n++] = CS_DUP(strncmp(v, "dist.", 5) == 0 ? v + 5 : v);
            lua_pop(L, 1);
        }
    lua_pop(L, 1);
    if (n == 0)
        for (int i = 0; dflt && dflt[i]; i++) out[n++] = CS_DUP(dflt[i]);
    return n;
}

static double num_field(lua_State *L, int t, const char *k, double dflt) {
    double v = dflt;
    if (lua_getfield(L, t, k) == LUA_TNUMBER) v = lua_tonumber(L, -1);
    lua_pop(L, 1);
    return v;
}

static int fn_ref(lua_State *L, int t, const char *k) {
    if (lua_getfield(L, t, k) == LUA_TFUNCTION) return luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pop(L, 1);
    return LUA_NOREF;
}

static int param_cmp(const void *a, const void *b) {
    return strcmp(((const cs_grade_param *)a)->name, ((const cs_grade_param *)b)->name);
}

static int load_case(lua_State *L, int t, cs_grade_case *c, int idx, char *err, size_t errlen) {
    static const char *const modes[] = {"rendezvous", "eager", NULL};
    static const char *const engines[] = {"thread", NULL};
    c->name = str_field(L, t, "name");
    if (!c->name) {
        char b[32];
        snprintf(b, sizeof b, "case %d", idx);
        c->name = CS_DUP(b);
    }
    c->points = num_field(L, t, "points", 1);
    lua_getfield(L, t, "hidden");
    c->hidden = lua_toboolean(L, -1);
    lua_pop(L, 1);
    char *expect = str_field(L, t, "expect");
    if (expect && strcmp(expect, "ok") && strcmp(expect, "deadlock")) {
        snprintf(err, errlen, "case '%s': expect must be \"ok\" or \"deadlock\"", c->name);
        free(expect);
        return -1;
    }
    c->expect_deadlock = expect && strcmp(expect, "deadlock") == 0;
    free(expect);
    int ty = lua_getfield(L, t, "world");
    if (ty == LUA_TNUMBER) c->worlds[c->nworlds++] = (int)lua_tointeger(L, -1);
    else if (ty == LUA_TTABLE)
        for (int i = 1; c->nworlds < CS_GRADE_MAX_LIST && lua_geti(L, -1, i) == LUA_TNUMBER; i++) {
            c->worlds[c->nworlds++] = (int)lua_tointeger(L, -1);
            lua_pop(L, 1);
        }
    lua_settop(L, t);
    if (c->nworlds == 0) c->worlds[c->nworlds++] = 2;
    for (int i = 0; i < c->nworlds; i++)
        if (c->worlds[i] < 1 || c->worlds[i] > 64) {
            snprintf(err, errlen, "case '%s': world size %d out of range", c->name, c->worlds[i]);
            return -1;
        }
    /* Modelled time: a case may fix the network model, so that times are
     * exact and can be graded (grade --net overrides it). */
    c->net = str_field(L, t, "net");
    if (c->net) {
        cs_netmodel m;
        char why[256];
        if (cs_netmodel_parse(c->net, &m, why, sizeof why) < 0) {
            snprintf(err, errlen, "case '%s': net: %s", c->name, why);
            return -1;
        }
    }
    c->nengines = str_list(L, t, "engines", c->engines, engines);
    c->nmodes = str_list(L, t, "send_modes", c->modes, modes);
    if (lua_getfield(L, t, "params") == LUA_TTABLE) {
        lua_pushnil(L);
        while (lua_next(L, -2) && c->nparams < CS_GRADE_MAX_LIST) {
            if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TNUMBER) {
                const char *k = lua_tostring(L, -2);
                for (const char *p = k; *p; p++)
                    if (!(*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                          (p > k && *p >= '0' && *p <= '9'))) {
                        snprintf(err, errlen, "case '%s': param '%s' is not a name", c->name, k);
                        return -1;
                    }
                c->params[c->nparams].name = CS_DUP(k);
                c->params[c->nparams++].value = lua_tonumber(L, -1);
            }
            lua_pop(L, 1);
        }
    }
    lua_settop(L, t);
    /* lua_next's order is the hash's: sort for byte-identical output */
    if (c->nparams) qsort(c->params, c->nparams, sizeof c->params[0], param_cmp);
    c->check_ref = fn_ref(L, t, "check");
    c->expect_ref = fn_ref(L, t, "result");
    return 0;
}

static int parse_spec(cs_grade_spec *s, lua_State *L, char *err, size_t errlen) {
    int t = lua_gettop(L);
    if (!lua_istable(L, t)) {
        snprintf(err, errlen, "%s/spec.lua: must return a table", s->dir);
        return -1;
    }
    s->title = str_field(L, t, "title");
    s->nrequired = str_list(L, t, "required", s->required, NULL);
    s->nforbidden = str_list(L, t, "forbidden", s->forbidden, NULL);
    s->nallowed = str_list(L, t, "allowed", s->allowed, NULL);
    s->timeout = 20, s->steps = 50000000ull, s->memory = (size_t)256 << 20;
    if (lua_getfield(L, t, "limits") == LUA_TTABLE) {
        int l = lua_gettop(L);
        s->timeout = num_field(L, l, "timeout", s->timeout);
        s->steps = (unsigned long long)num_field(L, l, "steps", (double)s->steps);
        s->memory = (size_t)num_field(L, l, "memory", (double)s->memory);
    }
    lua_settop(L, t);
    if (lua_getfield(L, t, "cases") != LUA_TTABLE) {
        snprintf(err, errlen, "%s/spec.lua: no cases table", s->dir);
        return -1;
    }
    int ct = lua_gettop(L);
    int n = (int)luaL_len(L, ct);
    s->cases = cs_xcalloc(n > 0 ? (size_t)n : 1, sizeof *s->cases, "grade spec");
    for (int i = 1; i <= n; i++) {
        lua_geti(L, ct, i);
        if (!lua_istable(L, -1)) {
            snprintf(err, errlen, "%s/spec.lua: case %d is not a table", s->dir, i);
            return -1;
        }
        cs_grade_case *c = &s->cases[s->ncases++];
        c->check_ref = c->expect_ref = LUA_NOREF;
        if (load_case(L, lua_gettop(L), c, i, err, errlen) < 0) return -1;
        lua_settop(L, ct);
    }
    lua_settop(L, 0);
    if (s->ncases == 0) {
        snprintf(err, errlen, "%s/spec.lua: no cases", s->dir);
        return -1;
    }
    return 0;
}

static lua_State *spec_state(void) {
    lua_State *L = luaL_newstate();
    if (!L) return NULL;
    luaL_requiref(L, LUA_GNAME, luaopen_base, 1);
    luaL_requiref(L, LUA_STRLIBNAME, luaopen_string, 1);
    luaL_requiref(L, LUA_TABLIBNAME, luaopen_table, 1);
    luaL_requiref(L, LUA_MATHLIBNAME, luaopen_math, 1);
    lua_settop(L, 0);
    static const char *const gone[] = {"dofile", "loadfile", "load", "require", "collectgarbage"};
    for (size_t i = 0; i < sizeof gone / sizeof gone[0]; i++) {
        lua_pushnil(L);
        lua_setglobal(L, gone[i]);
    }
    return L;
}

int cs_grade_spec_load(cs_grade_spec *s, const char *exercise, char *err, size_t errlen) {
    memset(s, 0, sizeof *s);
    char *dir = NULL;
    if (is_dir(exercise)) {
        if (!has_spec(exercise)) {
            snprintf(err, errlen, "%s: no spec.lua in this folder", exercise);
            return -1;
        }
        dir = CS_DUP(exercise);
    } else if (!strchr(exercise, '/') && (dir = find_named(exercise)) == NULL) {
        snprintf(err, errlen, "%s: no such exercise (a folder with spec.lua, or a name under "
                 "lessons/*/exercises/)", exercise);
        return -1;
    } else if (!dir) {
        snprintf(err, errlen, "%s: not a folder", exercise);
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
    char path[4096];
    snprintf(path, sizeof path, "%s/spec.lua", dir);
    if (luaL_loadfilex(L, path, "t") != LUA_OK || lua_pcall(L, 0, 1, 0) != LUA_OK) {
        snprintf(err, errlen, "%s", lua_tostring(L, -1));
        return -1;
    }
    if (parse_spec(s, L, err, errlen) < 0) return -1;
    if (!s->title) s->title = CS_DUP(s->name);
    return 0;
}

void cs_grade_spec_free(cs_grade_spec *s) {
    for (int i = 0; i < s->ncases; i++) {
        cs_grade_case *c = &s->cases[i];
        free(c->name);
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
    if (s->L) lua_close(s->L);
    memset(s, 0, sizeof *s);
}
