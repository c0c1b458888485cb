/* script_coll.c -- the collectives of the `dist` library, ReduceOp and process
 * groups, over collectives.h. Registered into the dist table by
 * luaopen_cs_dist (cs_script_coll_open).
 *
 * Signatures follow torch.distributed with positional arguments and an options
 * table last: {group = g, async_op = true, algo = "ring"}. A reduce op is
 * ReduceOp.SUM etc. (the strings "SUM", ...), and may be left out.
 * Argument errors are checked in collectives.c so the C tests reach them; the
 * binding only turns Lua values into C ones.
 */
#include <string.h>

#include "collectives.h"
#include "pitfall.h"
#include "script_internal.h"
#include "world.h"

#define CS_GROUP_MT "ProcessGroup"
#define CS_COLLWORK_MT "CollectiveWork"

static cs_rank *rank_of(lua_State *L) { return cs_script_ctx_of(L)->r; }

/* ---- groups */

static cs_group *check_group(lua_State *L, int idx, const char *fn) {
    cs_group **g = luaL_testudata(L, idx, CS_GROUP_MT);
    if (!g) luaL_error(L, "%s: group must be a group from dist.new_group (got %s)", fn,
                       luaL_typename(L, idx));
    return *g;
}

/* dist.new_group([ranks]): nil means every rank. */
static int d_new_group(lua_State *L) {
    const char *fn = "dist.new_group";
    cs_rank *r = rank_of(L);
    int world = cs_rank_world_size(r);
    bool every = lua_isnoneornil(L, 1);
    lua_settop(L, 1); /* the list stays at 1 as the buffers are pushed */
    lua_Integer n = every ? world : (luaL_checktype(L, 1, LUA_TTABLE), (lua_Integer)lua_rawlen(L, 1));
    if (n > world) return luaL_error(L, "%s: %I ranks listed, but the world has %d", fn, n, world);
    int *ranks = lua_newuserdatauv(L, sizeof *ranks * (size_t)(n ? n : 1), 0);
    for (lua_Integer i = 0; i < n; i++) {
        if (every) {
            ranks[i] = (int)i;
            continue;
        }
        lua_rawgeti(L, 1, i + 1);
        lua_Integer v = cs_script_checkint(L, -1, fn, "each rank");
        if (v < 0 || v >= world)
            return luaL_error(L, "%s: rank %I is outside the world (ranks 0 to %d)", fn, v,
                              world - 1);
        ranks[i] = (int)v;
        lua_pop(L, 1);
    }
    cs_group **slot = lua_newuserdatauv(L, sizeof *slot, 0);
    *slot = NULL;
    luaL_setmetatable(L, CS_GROUP_MT);
    int rc = cs_group_new(r, ranks, (int)n, slot);
    if (rc != CS_OK) cs_script_api_error(L, rc);
    return 1;
}

static int g_gc(lua_State *L) {
    cs_group **g = luaL_checkudata(L, 1, CS_GROUP_MT);
    cs_group_free(*g);
    *g = NULL;
    return 0;
}

static int g_tostring(lua_State *L) {
    cs_group *g = check_group(L, 1, "tostring");
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addstring(&b, "ProcessGroup(ranks {");
    for (int i = 0; i < g->size; i++) {
        lua_pushfstring(L, i ? ", %d" : "%d", g->ranks[i]);
        luaL_addvalue(&b);
    }
    lua_pushfstring(L, "}, rank %d of %d)", g->rank, g->size);
    luaL_addvalue(&b);
    luaL_pushresult(&b);
    return 1;
}

/* dist.get_rank(group) and dist.get_world_size(group): -1 off the group, as torch. */
int cs_script_group_query(lua_State *L, int idx, bool size) {
    cs_group *g = check_group(L, idx, size ? "dist.get_world_size" : "dist.get_rank");
    lua_pushinteger(L, g->rank < 0 ? -1 : size ? g->size : g->rank);
    return 1;
}

/* ---- arguments */

static cs_redop check_op(lua_State *L, int idx, const char *fn) {
    cs_redop op = CS_RED_SUM;
    if (lua_isnoneornil(L, idx)) return op;
    const char *s = lua_type(L, idx) == LUA_TSTRING ? lua_tostring(L, idx) : NULL;
    if (!s || !cs_redop_parse(s, &op))
        luaL_error(L, "%s: op must be a ReduceOp (ReduceOp.SUM, AVG, PRODUCT, MIN, MAX, BAND, "
                      "BOR or BXOR), got %s", fn, s ? s : luaL_typename(L, idx));
    return op;
}

/* A Lua list of tensors as a C array (a userdata left on the stack). nil gives NULL. */
static cs_tensor **check_list(lua_State *L, int idx, const char *fn, const char *what, int *n) {
    *n = 0;
    if (lua_isnil(L, idx)) return NULL;
    if (!lua_istable(L, idx))
        luaL_error(L, "%s: %s must be a list of tensors (got %s)", fn, what, luaL_typename(L, idx));
    lua_Integer len = (lua_Integer)lua_rawlen(L, idx);
    if (len > 65536) luaL_error(L, "%s: %s is too long", fn, what);
    cs_tensor **ts = lua_newuserdatauv(L, sizeof *ts * (size_t)(len ? len : 1), 0);
    for (lua_Integer i = 0; i < len; i++) {
        lua_rawgeti(L, idx, i + 1);
        if (!(ts[i] = cs_lua_totensor(L, -1)))
            luaL_error(L, "%s: element %I of %s is not a tensor (got %s)", fn, i + 1, what,
                       luaL_typename(L, -1));
        lua_pop(L, 1);
    }
    *n = (int)len;
    return ts;
}

/* The options table at idx: {group, async_op, algo}. Returns async_op. */
static bool check_opts(lua_State *L, int idx, const char *fn, cs_coll_kind kind,
                       cs_coll_call *c) {
    static const char *const keys[] = {"group", "async_op", "algo", NULL};
    c->line = cs_script_call_line(L);
    if (!cs_script_opts(L, idx, fn, keys)) return false;
    idx = lua_absindex(L, idx);
    lua_getfield(L, idx, "group");
    if (!lua_isnil(L, -1)) c->group = check_group(L, -1, fn);
    lua_getfield(L, idx, "algo");
    if (!lua_isnil(L, -1)) {
        char err[256];
        const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        if (!s) luaL_error(L, "%s: algo must be a string (got %s)", fn, luaL_typename(L, -1));
        if (!cs_coll_algo_parse(cs_coll_family_of(kind), s, &c->algo, err, sizeof err))
            luaL_error(L, "%s: %s", fn, err);
    }
    lua_getfield(L, idx, "async_op");
    bool async = lua_toboolean(L, -1);
    lua_pop(L, 3);
    return async;
}

/* (op, opts) at idx, the op optional: all_reduce(t, {group = g}) works. */
static bool op_and_opts(lua_State *L, int idx, const char *fn, cs_coll_kind kind,
                        cs_coll_call *c) {
    if (lua_istable(L, idx) && lua_isnoneornil(L, idx + 1)) {
        c->op = CS_RED_SUM;
        return check_opts(L, idx, fn, kind, c);
    }
    c->op = check_op(L, idx, fn);
    return check_opts(L, idx + 1, fn, kind, c);
}

/* A root: required for broadcast and reduce, as in torch; gather's and
 * scatter's default to rank 0, as torch's do. */
static int check_root(lua_State *L, int idx, const char *fn, const char *what, bool required) {
    if (!required && lua_isnoneornil(L, idx)) return 0;
    lua_Integer v = cs_script_checkint(L, idx, fn, what);
    if (v < INT32_MIN || v > INT32_MAX)
        luaL_error(L, "%s: %s %I is outside the world (ranks 0 to %d)", fn, what, v,
                   cs_rank_world_size(rank_of(L)) - 1);
    return (int)v; /* collectives.c checks it against the world and the group */
}

/* ---- results: nothing, or with async_op a work handle. The call has run
 * the collective already, but its tensors stay the collective's until the
 * handle is waited on, as for isend/irecv (pitfall.c). */

typedef struct coll_work {
    int kind, line;
    uint64_t id;          /* in the rank's registry (pitfall.c); 0 once waited on */
} coll_work;

/* The tensors a call reads (ins) and writes (outs), for its work handle. */
typedef struct bufs {
    cs_tensor *const *in, *const *out;
    int nin, nout;
} bufs;

static int coll_work_new(lua_State *L, cs_coll_kind kind, int line, const bufs *b) {
    coll_work *w = lua_newuserdatauv(L, sizeof *w, 0);
    *w = (coll_work){(int)kind, line, 0};
    luaL_setmetatable(L, CS_COLLWORK_MT);
    w->id = cs_inflight_coll_add(rank_of(L), cs_coll_name(kind), line, b->in, b->nin, b->out,
                                 b->nout);
    return 1;
}

static int finish(lua_State *L, int rc, bool async, cs_coll_kind kind, int line, bufs b) {
    if (rc != CS_OK) cs_script_api_error(L, rc);
    return async ? coll_work_new(L, kind, line, &b) : 0;
}

/* Before the call runs: a collective reads its inputs and writes its outputs,
 * so it touches a buffer that an unfinished isend/irecv or async collective of
 * the rank still owns as a send or a receive of the script's would. Returns b. */
static bufs touching(lua_State *L, int line, bufs b) {
    cs_rank *r = rank_of(L);
    if (!cs_rank_has_inflight(r)) return b;
    int rc = CS_OK;
    for (int i = 0; i < b.nout && rc == CS_OK; i++)
        if (b.out[i]) rc = cs_rank_access(r, b.out[i], CS_ACCESS_WRITE, line);
    for (int i = 0; i < b.nin && rc == CS_OK; i++)
        if (b.in[i]) rc = cs_rank_access(r, b.in[i], CS_ACCESS_READ, line);
    if (rc != CS_OK) cs_script_api_error(L, rc);
    return b;
}

/* One tensor, read or written. */
static bufs reads(cs_tensor *const *t) { return (bufs){t, NULL, 1, 0}; }
static bufs writes(cs_tensor *const *t) { return (bufs){NULL, t, 0, 1}; }

static void waited(lua_State *L, coll_work *w) {
    if (w->id) cs_inflight_coll_done(rank_of(L), w->id);
    w->id = 0;
}

static int cw_wait(lua_State *L) {
    coll_work *w = cs_script_checkself(L, CS_COLLWORK_MT);
    cs_script_check(L);
    waited(L, w);
    lua_pushboolean(L, 1);
    return 1;
}

static int cw_is_completed(lua_State *L) {
    waited(L, cs_script_checkself(L, CS_COLLWORK_MT)); /* true: as good as a wait */
    lua_pushboolean(L, 1);
    return 1;
}

static int cw_gc(lua_State *L) {
    coll_work *w = luaL_checkudata(L, 1, CS_COLLWORK_MT);
    if (w->id) cs_inflight_coll_dropped(rank_of(L), w->id);
    return 0;
}

static int cw_tostring(lua_State *L) {
    coll_work *w = luaL_checkudata(L, 1, CS_COLLWORK_MT);
    lua_pushfstring(L, "Work(%s, line %d, completed)", cs_coll_name((cs_coll_kind)w->kind), w->line);
    return 1;
}

bool cs_script_coll_work_wait(lua_State *L, int idx) {
    coll_work *w = luaL_testudata(L, idx, CS_COLLWORK_MT);
    if (w) waited(L, w);
    return w != NULL;
}

/* Charge the tensor work of a collective to the instruction budget. */
static void charge(lua_State *L, const cs_tensor *t, int times) {
    cs_script_charge(L, (uint64_t)cs_tensor_numel(t) * (uint64_t)times / CS_ELEMS_PER_STEP);
    cs_script_check(L);
}

/* ---- the operations */

static int d_broadcast(lua_State *L) {
    lua_settop(L, 3);
    const char *fn = "dist.broadcast";
    cs_coll_call c = {0};
    cs_tensor *t = cs_lua_argtensor(L, 1, fn, NULL);
    c.root = check_root(L, 2, fn, "src", true);
    bool async = check_opts(L, 3, fn, CS_COLL_BROADCAST, &c);
    charge(L, t, 1);
    bool root = cs_rank_id(rank_of(L)) == c.root;
    bufs b = touching(L, c.line, root ? reads(&t) : writes(&t));
    return finish(L, cs_broadcast(rank_of(L), t, &c), async, CS_COLL_BROADCAST, c.line, b);
}

static int d_reduce(lua_State *L) {
    lua_settop(L, 4);
    const char *fn = "dist.reduce";
    cs_coll_call c = {0};
    cs_tensor *t = cs_lua_argtensor(L, 1, fn, NULL);
    c.root = check_root(L, 2, fn, "dst", true);
    bool async = op_and_opts(L, 3, fn, CS_COLL_REDUCE, &c);
    charge(L, t, 2);
    bool root = cs_rank_id(rank_of(L)) == c.root;
    bufs b = touching(L, c.line, root ? writes(&t) : reads(&t));
    return finish(L, cs_reduce(rank_of(L), t, &c), async, CS_COLL_REDUCE, c.line, b);
}

static int d_all_reduce(lua_State *L) {
    lua_settop(L, 3);
    const char *fn = "dist.all_reduce";
    cs_coll_call c = {0};
    cs_tensor *t = cs_lua_argtensor(L, 1, fn, NULL);
    bool async = op_and_opts(L, 2, fn, CS_COLL_ALL_REDUCE, &c);
    charge(L, t, 2);
    bufs b = touching(L, c.line, writes(&t));
    return finish(L, cs_all_reduce(rank_of(L), t, &c), async, CS_COLL_ALL_REDUCE, c.line, b);
}

static int d_all_gather(lua_State *L) {
    lua_settop(L, 3); /* the list conversions push above the arguments */
    const char *fn = "dist.all_gather";
    cs_coll_call c = {0};
    int n;
    cs_tensor **out = check_list(L, 1, fn, "the output list", &n);
    cs_tensor *in = cs_lua_argtensor(L, 2, fn, "the input");
    bool async = check_opts(L, 3, fn, CS_COLL_ALL_GATHER, &c);
    charge(L, in, n);
    bufs b = touching(L, c.line, (bufs){&in, out, 1, n});
    return finish(L, cs_all_gather(rank_of(L), out, n, in, &c), async,
                  CS_COLL_ALL_GATHER, c.line, b);
}

static int d_all_gather_into_tensor(lua_State *L) {
    lua_settop(L, 3);
    const char *fn = "dist.all_gather_into_tensor";
    cs_coll_call c = {0};
    cs_tensor *out = cs_lua_argtensor(L, 1, fn, "the output");
    cs_tensor *in = cs_lua_argtensor(L, 2, fn, "the input");
    bool async = check_opts(L, 3, fn, CS_COLL_ALL_GATHER_INTO_TENSOR, &c);
    charge(L, out, 1);
    bufs b = touching(L, c.line, (bufs){&in, &out, 1, 1});
    return finish(L, cs_all_gather_into_tensor(rank_of(L), out, in, &c), async,
                  CS_COLL_ALL_GATHER_INTO_TENSOR, c.line, b);
}

static int d_gather(lua_State *L) {
    lua_settop(L, 4); /* the list conversions push above the arguments */
    const char *fn = "dist.gather";
    cs_coll_call c = {0};
    int n;
    cs_tensor *in = cs_lua_argtensor(L, 1, fn, NULL);
    cs_tensor **list = check_list(L, 2, fn, "the gather list", &n);
    c.root = check_root(L, 3, fn, "dst", false);
    bool async = check_opts(L, 4, fn, CS_COLL_GATHER, &c);
    charge(L, in, n ? n : 1);
    bufs b = touching(L, c.line, (bufs){&in, list, 1, n});
    return finish(L, cs_gather(rank_of(L), in, list, n, &c), async, CS_COLL_GATHER, c.line, b);
}

static int d_scatter(lua_State *L) {
    lua_settop(L, 4); /* the list conversions push above the arguments */
    const char *fn = "dist.scatter";
    cs_coll_call c = {0};
    int n;
    cs_tensor *out = cs_lua_argtensor(L, 1, fn, NULL);
    cs_tensor **list = check_list(L, 2, fn, "the scatter list", &n);
    c.root = check_root(L, 3, fn, "src", false);
    bool async = check_opts(L, 4, fn, CS_COLL_SCATTER, &c);
    charge(L, out, n ? n : 1);
    bufs b = touching(L, c.line, (bufs){list, &out, n, 1});
    return finish(L, cs_scatter(rank_of(L), out, list, n, &c), async, CS_COLL_SCATTER, c.line, b);
}

static int d_reduce_scatter(lua_State *L) {
    lua_settop(L, 4); /* the list conversions push above the arguments */
    const char *fn = "dist.reduce_scatter";
    cs_coll_call c = {0};
    int n;
    cs_tensor *out = cs_lua_argtensor(L, 1, fn, "the output");
    cs_tensor **in = check_list(L, 2, fn, "the input list", &n);
    if (!in) return luaL_error(L, "%s: the input list must be a list of tensors (got nil)", fn);
    bool async = op_and_opts(L, 3, fn, CS_COLL_REDUCE_SCATTER, &c);
    charge(L, out, 2 * n);
    bufs b = touching(L, c.line, (bufs){in, &out, n, 1});
    return finish(L, cs_reduce_scatter(rank_of(L), out, in, n, &c), async,
                  CS_COLL_REDUCE_SCATTER, c.line, b);
}

static int d_reduce_scatter_tensor(lua_State *L) {
    lua_settop(L, 4);
    const char *fn = "dist.reduce_scatter_tensor";
    cs_coll_call c = {0};
    cs_tensor *out = cs_lua_argtensor(L, 1, fn, "the output");
    cs_tensor *in = cs_lua_argtensor(L, 2, fn, "the input");
    bool async = op_and_opts(L, 3, fn, CS_COLL_REDUCE_SCATTER_TENSOR, &c);
    charge(L, in, 2);
    bufs b = touching(L, c.line, (bufs){&in, &out, 1, 1});
    return finish(L, cs_reduce_scatter_tensor(rank_of(L), out, in, &c), async,
                  CS_COLL_REDUCE_SCATTER_TENSOR, c.line, b);
}

static int d_all_to_all(lua_State *L) {
    lua_settop(L, 3); /* the list conversions push above the arguments */
    const char *fn = "dist.all_to_all";
    cs_coll_call c = {0};
    int nout, nin;
    cs_tensor **out = check_list(L, 1, fn, "the output list", &nout);
    cs_tensor **in = check_list(L, 2, fn, "the input list", &nin);
    if (!out || !in) return luaL_error(L, "%s: expected an output list and an input list", fn);
    bool async = check_opts(L, 3, fn, CS_COLL_ALL_TO_ALL, &c);
    for (int i = 0; i < nin; i++) charge(L, in[i], 1);
    bufs b = touching(L, c.line, (bufs){in, out, nin, nout});
    return finish(L, cs_all_to_all(rank_of(L), out, nout, in, nin, &c), async,
                  CS_COLL_ALL_TO_ALL, c.line, b);
}

static int d_all_to_all_single(lua_State *L) {
    lua_settop(L, 3);
    const char *fn = "dist.all_to_all_single";
    cs_coll_call c = {0};
    cs_tensor *out = cs_lua_argtensor(L, 1, fn, "the output");
    cs_tensor *in = cs_lua_argtensor(L, 2, fn, "the input");
    bool async = check_opts(L, 3, fn, CS_COLL_ALL_TO_ALL_SINGLE, &c);
    charge(L, in, 1);
    bufs b = touching(L, c.line, (bufs){&in, &out, 1, 1});
    return finish(L, cs_all_to_all_single(rank_of(L), out, in, &c), async,
                  CS_COLL_ALL_TO_ALL_SINGLE, c.line, b);
}

static int d_barrier(lua_State *L) {
    lua_settop(L, 1);
    cs_coll_call c = {0};
    bool async = check_opts(L, 1, "dist.barrier", CS_COLL_BARRIER, &c);
    cs_script_check(L);
    return finish(L, cs_barrier(rank_of(L), &c), async, CS_COLL_BARRIER, c.line,
                  (bufs){NULL, NULL, 0, 0});
}

static const luaL_Reg coll_lib[] = {
    {"broadcast", d_broadcast}, {"reduce", d_reduce}, {"all_reduce", d_all_reduce},
    {"all_gather", d_all_gather}, {"all_gather_into_tensor", d_all_gather_into_tensor},
    {"gather", d_gather}, {"scatter", d_scatter}, {"reduce_scatter", d_reduce_scatter},
    {"reduce_scatter_tensor", d_reduce_scatter_tensor}, {"all_to_all", d_all_to_all},
    {"all_to_all_single", d_all_to_all_single}, {"barrier", d_barrier},
    {"new_group", d_new_group}, {NULL, NULL}};

static const luaL_Reg cw_methods[] = {
    {"wait", cw_wait}, {"is_completed", cw_is_completed}, {NULL, NULL}};

/* Add the collectives to the dist table at the top of the stack; ReduceOp is
 * both dist.ReduceOp and a global, as lessons write it bare. */
void cs_script_coll_open(lua_State *L) {
    cs_script_sealed_metatable(L, CS_GROUP_MT);
    lua_pushcfunction(L, g_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, g_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pop(L, 1);

    cs_script_sealed_metatable(L, CS_COLLWORK_MT);
    luaL_newlib(L, cw_methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, cw_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushcfunction(L, cw_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);

    luaL_setfuncs(L, coll_lib, 0);
    lua_createtable(L, 0, CS_RED_NOPS);
    for (int i = 0; i < CS_RED_NOPS; i++) {
        lua_pushstring(L, cs_redop_name((cs_redop)i));
        lua_setfield(L, -2, cs_redop_name((cs_redop)i));
    }
    lua_pushvalue(L, -1);
    lua_setglobal(L, "ReduceOp");
    lua_setfield(L, -2, "ReduceOp");
}
