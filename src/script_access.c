/* script_access.c -- which tensor functions read their tensor arguments and
 * which write them, and the guard that tells the rank before they do, for the
 * pitfall checks (pitfall.h): touching a buffer that an unfinished isend or
 * irecv still owns.
 *
 * The guard wraps the C function: one table here says what each function does,
 * instead of a call in each of them. When the rank has nothing in flight the
 * guard costs one test.
 */
#include "pitfall.h"
#include "script_internal.h"

enum { R = CS_ACCESS_READ, W = CS_ACCESS_WRITE };
#define ARGS(a1, a2) ((a1) | ((a2) << 2))

static const struct {
    const char *name;
    int mode; /* ARGS(what it does to argument 1, to argument 2) */
} modes[] = {
    {"clone", ARGS(R, 0)},     {"contiguous", ARGS(R, 0)}, {"to", ARGS(R, 0)},
    {"reshape", ARGS(R, 0)},   {"sum", ARGS(R, 0)},        {"max", ARGS(R, 0)},
    {"min", ARGS(R, 0)},       {"mean", ARGS(R, 0)},       {"item", ARGS(R, 0)},
    {"tolist", ARGS(R, 0)},    {"equal", ARGS(R, R)},      {"allclose", ARGS(R, R)},
    {"add", ARGS(R, R)},       {"sub", ARGS(R, R)},        {"mul", ARGS(R, R)},
    {"div", ARGS(R, R)},       {"pow", ARGS(R, R)},        {"neg", ARGS(R, 0)},
    {"relu", ARGS(R, 0)},      {"matmul", ARGS(R, R)},     {"fill", ARGS(W, 0)},
    {"fill_", ARGS(W, 0)},     {"zero_", ARGS(W, 0)},      {"copy_", ARGS(W, R)},
    {"add_", ARGS(W, R)},      {"sub_", ARGS(W, R)},       {"mul_", ARGS(W, R)},
    {"div_", ARGS(W, R)},      {"relu_", ARGS(W, 0)},      {"__add", ARGS(R, R)},
    {"__sub", ARGS(R, R)},     {"__mul", ARGS(R, R)},      {"__div", ARGS(R, R)},
    {"__pow", ARGS(R, R)},     {"__unm", ARGS(R, 0)},      {"__tostring", ARGS(R, 0)},
    {"cuda", ARGS(R, 0)},      {"cpu", ARGS(R, 0)},        {"float", ARGS(R, 0)},
    {"double", ARGS(R, 0)},    {"int", ARGS(R, 0)},        {"long", ARGS(R, 0)},
    {"byte", ARGS(R, 0)}, /* __index, __newindex: their part only */
};

void cs_lua_access(lua_State *L, int idx, int how) {
    cs_rank *r = cs_script_ctx_of(L)->r;
    cs_tensor *t;
    if (!how || !cs_rank_has_inflight(r) || !(t = cs_lua_totensor(L, idx))) return;
    int rc = cs_rank_access(r, t, (cs_access)how, cs_script_call_line(L));
    if (rc != CS_OK) cs_script_api_error(L, rc);
}

void cs_lua_access_index(lua_State *L, cs_tensor *t, int64_t i, int how) {
    cs_rank *r = cs_script_ctx_of(L)->r;
    if (!cs_rank_has_inflight(r)) return;
    cs_tensor *part = cs_tensor_select(t, 0, i); /* NULL: out of memory, check all of t */
    int rc = cs_rank_access(r, part ? part : t, (cs_access)how, cs_script_call_line(L));
    cs_tensor_release(part);
    if (rc != CS_OK) cs_script_api_error(L, rc);
}

/* Upvalues: the guarded C function, its mode. */
static int guard(lua_State *L) {
    int mode = (int)lua_tointeger(L, lua_upvalueindex(2));
    cs_lua_access(L, 1, mode & 3);
    cs_lua_access(L, 2, mode >> 2);
    return lua_tocfunction(L, lua_upvalueindex(1))(L);
}

void cs_script_guard(lua_State *L, int idx) {
    idx = lua_absindex(L, idx);
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        if (lua_getfield(L, idx, modes[i].name) != LUA_TFUNCTION || !lua_tocfunction(L, -1)) {
            lua_pop(L, 1);
            continue;
        }
        lua_pushinteger(L, modes[i].mode);
        lua_pushcclosure(L, guard, 2);
        lua_setfield(L, idx, modes[i].name);
    }
}
