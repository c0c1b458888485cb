/* script_dist.c -- the `dist` library: torch.distributed names over api.h.
 *
 * Each function checks its arguments (so the error names the Lua function and
 * carries the script position), then makes one api.h call with the script line
 * of the call. A CS_EABORT from the api unwinds the rank silently (see
 * cs_script_api_error); other failures are ordinary Lua errors.
 *
 * A work handle (isend/irecv) is a userdata owning one reference to the
 * request; its user value keeps the tensor alive for as long as the handle.
 */
#include <math.h>
#include <string.h>

#include "script_internal.h"

static cs_rank *rank_of(lua_State *L) {
    return cs_script_ctx_of(L)->r;
}

/* ---- arguments */

static int check_peer(lua_State *L, int idx, const char *fn, const char *what) {
    lua_Integer p = cs_script_checkint(L, idx, fn, what);
    int n = cs_rank_world_size(rank_of(L));
    if (p < 0 || p >= n) luaL_error(L, "%s: %s %I is outside the world (ranks 0 to %d)", fn, what, p, n - 1);
    return (int)p;
}

/* The options table {tag = n} at idx (absent: tag 0). */
static int opt_tag(lua_State *L, int idx, const char *fn) {
    static const char *const keys[] = {"tag", NULL};
    if (!cs_script_opts(L, idx, fn, keys)) return 0;
    lua_getfield(L, idx, "tag");
    lua_Integer tag = 0;
    if (!lua_isnil(L, -1)) tag = cs_script_checkint(L, -1, fn, "tag");
    if (tag < 0 || tag > INT32_MAX)
        luaL_error(L, "%s: tag must be between 0 and %d (got %I)", fn, INT32_MAX, tag);
    lua_pop(L, 1);
    return (int)tag;
}

/* recv/irecv: (t [, src [, opts]]); src nil means any source, and the options
 * may also come second: recv(t, {tag = 1}). */
static void recv_args(lua_State *L, const char *fn, int *src, int *tag) {
    if (lua_istable(L, 2) && lua_isnoneornil(L, 3)) {
        *src = CS_ANY_SOURCE;
        *tag = opt_tag(L, 2, fn);
        return;
    }
    *src = lua_isnoneornil(L, 2) ? CS_ANY_SOURCE : check_peer(L, 2, fn, "source");
    *tag = opt_tag(L, 3, fn);
}

static int api_call(lua_State *L, int rc) {
    if (rc != CS_OK) cs_script_api_error(L, rc);
    return rc;
}

/* ---- work handles */

/* Push an empty work userdata holding the tensor at tidx; the api fills it. */
static cs_request **new_work(lua_State *L, int tidx) {
    tidx = lua_absindex(L, tidx);
    cs_request **slot = lua_newuserdatauv(L, sizeof *slot, 1);
    *slot = NULL;
    luaL_setmetatable(L, CS_WORK_MT);
    lua_pushvalue(L, tidx);
    lua_setiuservalue(L, -2, 1);
    return slot;
}

static cs_request *check_work(lua_State *L) {
    cs_request **slot = cs_script_checkself(L, CS_WORK_MT);
    if (!*slot) luaL_argerror(L, 1, "the work handle was never started");
    return *slot;
}

static int w_wait(lua_State *L) {
    cs_request *q = check_work(L);
    cs_script_check(L);
    api_call(L, cs_wait(rank_of(L), q, cs_script_call_line(L)));
    lua_pushboolean(L, 1);
    return 1;
}

static int w_is_completed(lua_State *L) {
    lua_pushboolean(L, cs_test(rank_of(L), check_work(L)));
    return 1;
}

/* source(): who sent what a completed receive got. */
static int w_source(lua_State *L) {
    cs_request *q = check_work(L);
    if (cs_op_is_send(cs_request_op(q)))
        return luaL_error(L, "work:source(): only a receive has a source");
    if (!cs_request_is_completed(q))
        return luaL_error(L, "work:source(): the receive has not completed (call wait() first)");
    lua_pushinteger(L, cs_request_source(q));
    return 1;
}

static int w_tostring(lua_State *L) {
    cs_request *q = check_work(L);
    lua_pushfstring(L, "Work(%s #%I, line %d, %s)", cs_op_name(cs_request_op(q)),
                    (lua_Integer)cs_request_id(q), cs_request_line(q),
                    cs_request_is_completed(q) ? "completed" : "pending");
    return 1;
}

static int w_gc(lua_State *L) {
    cs_request **slot = luaL_checkudata(L, 1, CS_WORK_MT);
    cs_request_release(*slot);
    *slot = NULL;
    return 0;
}

/* ---- point to point */

static int d_send(lua_State *L) {
    cs_tensor *t = cs_lua_argtensor(L, 1, "dist.send", NULL);
    int dst = check_peer(L, 2, "dist.send", "destination");
    int tag = opt_tag(L, 3, "dist.send");
    cs_script_check(L);
    api_call(L, cs_send(rank_of(L), t, dst, tag, cs_script_call_line(L)));
    return 0;
}

static int d_recv(lua_State *L) {
    int src, tag, from = CS_NO_RANK;
    cs_tensor *t = cs_lua_argtensor(L, 1, "dist.recv", NULL);
    recv_args(L, "dist.recv", &src, &tag);
    cs_script_check(L);
    api_call(L, cs_recv(rank_of(L), t, src, tag, cs_script_call_line(L), &from));
    lua_pushinteger(L, from);
    return 1;
}

static int d_isend(lua_State *L) {
    cs_tensor *t = cs_lua_argtensor(L, 1, "dist.isend", NULL);
    int dst = check_peer(L, 2, "dist.isend", "destination");
    int tag = opt_tag(L, 3, "dist.isend");
    cs_script_check(L);
    cs_request **slot = new_work(L, 1);
    api_call(L, cs_isend(rank_of(L), t, dst, tag, cs_script_call_line(L), slot));
    return 1;
}

static int d_irecv(lua_State *L) {
    int src, tag;
    cs_tensor *t = cs_lua_argtensor(L, 1, "dist.irecv", NULL);
    recv_args(L, "dist.irecv", &src, &tag);
    cs_script_check(L);
    cs_request **slot = new_work(L, 1);
    api_call(L, cs_irecv(rank_of(L), t, src, tag, cs_script_call_line(L), slot));
    return 1;
}

static int d_wait_all(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_Integer n = (lua_Integer)lua_rawlen(L, 1);
    if (n > INT32_MAX / (lua_Integer)sizeof(cs_request *))
        return luaL_error(L, "dist.wait_all: too many work handles");
    cs_request **qs = lua_newuserdatauv(L, sizeof *qs * (size_t)(n ? n : 1), 0);
    lua_Integer k = 0; /* collectives' works are complete already: skipped */
    for (lua_Integer i = 1; i <= n; i++) {
        lua_rawgeti(L, 1, i);
        if (cs_script_coll_work_wait(L, -1)) {
            lua_pop(L, 1);
            continue;
        }
        cs_request **slot = luaL_testudata(L, -1, CS_WORK_MT);
        if (!slot || !*slot)
            return luaL_error(L, "dist.wait_all: element %I is not a work handle (got %s)", i,
                              luaL_typename(L, -1));
        qs[k++] = *slot;
        lua_pop(L, 1);
    }
    cs_script_check(L);
    if (k > 0) api_call(L, cs_wait_all(rank_of(L), qs, (int)k, cs_script_call_line(L)));
    return 0;
}

/* ---- batches: P2POp(dist.isend | dist.irecv, t, peer [, opts]) */

typedef struct p2pop {
    cs_op op;
    int peer;
    int tag;
} p2pop;

/* Upvalues 1 and 2 are dist.isend and dist.irecv, compared by identity. */
static int d_p2pop(lua_State *L) {
    const char *fn = "dist.P2POp";
    cs_op op;
    if (lua_rawequal(L, 1, lua_upvalueindex(1))) op = CS_OP_ISEND;
    else if (lua_rawequal(L, 1, lua_upvalueindex(2))) op = CS_OP_IRECV;
    else return luaL_error(L, "%s: the operation must be dist.isend or dist.irecv (got %s)", fn,
                           luaL_typename(L, 1));
    cs_lua_argtensor(L, 2, fn, NULL);
    int peer = check_peer(L, 3, fn, "peer");
    int tag = opt_tag(L, 4, fn);
    p2pop *p = lua_newuserdatauv(L, sizeof *p, 1);
    *p = (p2pop){.op = op, .peer = peer, .tag = tag};
    luaL_setmetatable(L, CS_P2POP_MT);
    lua_pushvalue(L, 2);
    lua_setiuservalue(L, -2, 1);
    return 1;
}

static int p2pop_tostring(lua_State *L) {
    p2pop *p = luaL_checkudata(L, 1, CS_P2POP_MT);
    lua_pushfstring(L, "P2POp(%s, peer %d, tag %d)", cs_op_name(p->op), p->peer, p->tag);
    return 1;
}

/* Check every op, then post them in order; returns the sequence of works. */
static int d_batch(lua_State *L) {
    const char *fn = "dist.batch_isend_irecv";
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_Integer n = (lua_Integer)lua_rawlen(L, 1);
    if (n == 0) return luaL_error(L, "%s: expected a non-empty list of dist.P2POp", fn);
    for (lua_Integer i = 1; i <= n; i++) {
        lua_rawgeti(L, 1, i);
        if (!luaL_testudata(L, -1, CS_P2POP_MT))
            return luaL_error(L, "%s: element %I is not a dist.P2POp (got %s)", fn, i,
                              luaL_typename(L, -1));
        lua_pop(L, 1);
    }
    cs_script_check(L);
    lua_settop(L, 1);
    lua_createtable(L, n < INT32_MAX ? (int)n : 0, 0);
    int line = cs_script_call_line(L);
    for (lua_Integer i = 1; i <= n; i++) {
        lua_rawgeti(L, 1, i);                  /* the op */
        p2pop *p = lua_touserdata(L, -1);
        lua_getiuservalue(L, -1, 1);           /* its tensor */
        cs_tensor *t = cs_lua_totensor(L, -1);
        cs_request **slot = new_work(L, -1);
        cs_rank *r = rank_of(L);
        api_call(L, p->op == CS_OP_ISEND ? cs_isend(r, t, p->peer, p->tag, line, slot)
                                         : cs_irecv(r, t, p->peer, p->tag, line, slot));
        lua_rawseti(L, 2, i);
        lua_pop(L, 2);
    }
    return 1;
}

/* ---- the rest */

static int d_get_rank(lua_State *L) {
    if (!lua_isnoneornil(L, 1)) return cs_script_group_query(L, 1, false);
    lua_pushinteger(L, cs_rank_id(rank_of(L)));
    return 1;
}

static int d_get_world_size(lua_State *L) {
    if (!lua_isnoneornil(L, 1)) return cs_script_group_query(L, 1, true);
    lua_pushinteger(L, cs_rank_world_size(rank_of(L)));
    return 1;
}

static int d_compute(lua_State *L) {
    /* the API's own bound (an hour), said here with the script's words */
    if (lua_type(L, 1) != LUA_TNUMBER || !(lua_tonumber(L, 1) >= 0) || lua_tonumber(L, 1) > 3600e3)
        return luaL_error(L, "dist.compute: expected a duration in milliseconds, 0 to 3600000 "
                             "(an hour) (got %s)",
                          lua_type(L, 1) == LUA_TNUMBER ? lua_tostring(L, 1) : luaL_typename(L, 1));
    double ms = lua_tonumber(L, 1);
    cs_script_check(L);
    api_call(L, cs_compute(rank_of(L), ms, cs_script_call_line(L)));
    return 0;
}

static int d_time(lua_State *L) {
    double t = cs_time(rank_of(L), cs_script_call_line(L));
    if (t < 0) api_call(L, CS_EABORT); /* the run ended while the clock was asked */
    lua_pushnumber(L, t);
    return 1;
}

static const luaL_Reg work_methods[] = {
    {"wait", w_wait}, {"is_completed", w_is_completed}, {"source", w_source}, {NULL, NULL}};

static const luaL_Reg dist_lib[] = {
    {"get_rank", d_get_rank}, {"get_world_size", d_get_world_size},
    {"send", d_send}, {"recv", d_recv}, {"isend", d_isend}, {"irecv", d_irecv},
    {"wait_all", d_wait_all}, {"batch_isend_irecv", d_batch},
    {"compute", d_compute}, {"time", d_time}, {"cuda_device_count", cs_lua_cuda_device_count},
    {NULL, NULL}};

int luaopen_cs_dist(lua_State *L) {
    cs_script_sealed_metatable(L, CS_WORK_MT);
    luaL_newlib(L, work_methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, w_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, w_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pop(L, 1);

    cs_script_sealed_metatable(L, CS_P2POP_MT);
    lua_pushcfunction(L, p2pop_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pop(L, 1);

    luaL_newlib(L, dist_lib);
    lua_getfield(L, -1, "isend");
    lua_getfield(L, -2, "irecv");
    lua_pushcclosure(L, d_p2pop, 2);
    lua_setfield(L, -2, "P2POp");
    cs_script_coll_open(L);
    return 1;
}
