/* script_factory.c -- the `tensor` library's factories: tensor.zeros, ones,
 * full, arange, randn and from, with their options {dtype =, device =}.
 *
 * Each checks its arguments, charges the elements it will make to the rank's
 * budget, pushes the userdata that will own the new tensor, then makes one
 * tensor.h call; a device option moves the result (script_device.c), so a
 * tensor is built on the host wherever it goes.
 */
#include <errno.h>
#include <math.h>

#include "script_internal.h"

/* A factory's options table {dtype = ..., device = ...} at idx, if there is
 * one; the device (CS_DEVICE_CPU when not given) into *dev. */
static cs_dtype opt_dtype(lua_State *L, int idx, const char *fn, cs_dtype def, int *dev) {
    static const char *const keys[] = {"dtype", "device", NULL};
    *dev = CS_DEVICE_CPU;
    if (!cs_script_opts(L, idx, fn, keys)) return def;
    lua_getfield(L, idx, "dtype");
    cs_dtype d = lua_isnil(L, -1) ? def : cs_lua_checkdtype(L, -1, fn);
    lua_getfield(L, idx, "device");
    if (!lua_isnil(L, -1)) *dev = cs_lua_checkdevice(L, -1, fn);
    lua_pop(L, 2);
    return d;
}

/* The arguments of a factory from index first on: dims..., then optional
 * options. A trailing table after the first argument is the options. */
static int factory_args(lua_State *L, int first, const char *fn, int64_t *shape, cs_dtype *d,
                        int *dev) {
    int last = lua_gettop(L);
    *d = CS_FLOAT32;
    *dev = CS_DEVICE_CPU;
    if (last > first && lua_istable(L, last)) *d = opt_dtype(L, last--, fn, CS_FLOAT32, dev);
    return last >= first ? cs_lua_checkdims(L, first, last, fn, shape) : 0;
}

/* The element count to charge before a factory runs: saturated, since the
 * shape is not checked yet (tensor.h refuses it if it is bad). */
static int64_t shape_numel(int ndim, const int64_t *shape) {
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] <= 0) return 0;
        if (__builtin_mul_overflow(n, shape[d], &n)) n = INT64_MAX;
    }
    return n;
}

/* The elements a factory charges before it runs: at most what the memory cap
 * holds, so that a tensor larger than the cap is refused as memory (the
 * factory then does no work) rather than as steps it never ran. A count that
 * overflowed stays saturated, for the charge to refuse. */
static int64_t charged(lua_State *L, int64_t n) {
    size_t cap = atomic_load(&cs_lua_budget(L)->limit);
    return cap && n != INT64_MAX && (uint64_t)n > cap ? (int64_t)cap : n;
}

/* A new tensor of the shape, filled with v, on dev: the top of the stack. */
static int new_full(lua_State *L, cs_dtype d, int dev, int ndim, const int64_t *shape, double v) {
    cs_tensor **slot = cs_lua_newslot(L), *t;
    cs_lua_charge_elems(L, charged(L, shape_numel(ndim, shape)));
    CS_LUA_TRY_NEW(L, t, cs_tensor_full(cs_lua_budget(L), d, ndim, shape, v));
    cs_lua_own(L, slot, t);
    cs_lua_place(L, dev);
    return 1;
}

static int filled(lua_State *L, const char *fn, double v) {
    int64_t shape[CS_MAX_DIMS];
    cs_dtype d;
    int dev;
    int ndim = factory_args(L, 1, fn, shape, &d, &dev);
    return new_full(L, d, dev, ndim, shape, v);
}

static int l_zeros(lua_State *L) { return filled(L, "tensor.zeros", 0); }
static int l_ones(lua_State *L) { return filled(L, "tensor.ones", 1); }

static int l_full(lua_State *L) {
    int64_t shape[CS_MAX_DIMS];
    int dev;
    double v = cs_lua_checkscalar(L, 2, "tensor.full: the value");
    cs_dtype d = opt_dtype(L, 3, "tensor.full", CS_FLOAT32, &dev);
    cs_lua_checkholds(L, 2, d);
    luaL_checkany(L, 1);
    int ndim = cs_lua_checkdims(L, 1, 1, "tensor.full", shape);
    return new_full(L, d, dev, ndim, shape, v);
}

/* arange(n) or arange(start, end [, step]), each with optional options. */
static int l_arange(lua_State *L) {
    const char *fn = "tensor.arange";
    int n = lua_gettop(L), dev = CS_DEVICE_CPU;
    cs_dtype d = CS_FLOAT32;
    if (n > 1 && lua_istable(L, n)) d = opt_dtype(L, n--, fn, CS_FLOAT32, &dev);
    if (n < 1 || n > 3) return luaL_error(L, "%s: expected (n) or (start, end [, step])", fn);
    double start = 0, end, step = 1;
    if (n == 1) {
        end = cs_lua_checkscalar(L, 1, "tensor.arange: the end");
    } else {
        start = cs_lua_checkscalar(L, 1, "tensor.arange: the start");
        end = cs_lua_checkscalar(L, 2, "tensor.arange: the end");
        if (n == 3) step = cs_lua_checkscalar(L, 3, "tensor.arange: the step");
    }
    if (step == 0) return luaL_error(L, "%s: step must be nonzero", fn);
    double count = ceil((end - start) / step);
    if (!(count >= 0))
        return luaL_error(L, "%s: upper bound and larger bound inconsistent with step sign", fn);
    if (count > 1e15) return cs_script_die(L, CS_DIE_MEM);
    cs_tensor **slot = cs_lua_newslot(L), *t;
    cs_lua_charge_elems(L, charged(L, (int64_t)count));
    CS_LUA_TRY_NEW(L, t, cs_tensor_arange(cs_lua_budget(L), d, (int64_t)count));
    cs_lua_own(L, slot, t);
    if ((step != 1 && cs_tensor_binop_(CS_MUL, t, NULL, step) < 0) ||
        (start != 0 && cs_tensor_binop_(CS_ADD, t, NULL, start) < 0))
        return cs_lua_tensor_failed(L);
    cs_lua_place(L, dev);
    return 1;
}

static int l_randn(lua_State *L) {
    int64_t shape[CS_MAX_DIMS];
    cs_dtype d;
    int dev;
    int ndim = factory_args(L, 1, "tensor.randn", shape, &d, &dev);
    cs_tensor **slot = cs_lua_newslot(L), *t;
    cs_lua_charge_elems(L, charged(L, shape_numel(ndim, shape)));
    uint64_t *rng = cs_rank_rng(cs_script_ctx_of(L)->r);
    CS_LUA_TRY_NEW(L, t, cs_tensor_randn(cs_lua_budget(L), d, ndim, shape, rng));
    cs_lua_own(L, slot, t);
    cs_lua_place(L, dev);
    return 1;
}

/* tensor.from: the shape of nested sequences, read along their first elements. */
static int from_shape(lua_State *L, int idx, int64_t *shape) {
    int ndim = 0;
    lua_pushvalue(L, idx);
    while (lua_istable(L, -1)) {
        if (ndim == CS_MAX_DIMS)
            luaL_error(L, "tensor.from: at most %d levels of nesting are supported", CS_MAX_DIMS);
        shape[ndim++] = (int64_t)lua_rawlen(L, -1);
        if (shape[ndim - 1] == 0) break;
        lua_rawgeti(L, -1, 1);
        lua_remove(L, -2);
    }
    lua_pop(L, 1);
    return ndim;
}

/* Fill t from the nested sequence at the top of the stack, checking that it is
 * rectangular. *flat is the next element's index. */
static void from_fill(lua_State *L, cs_tensor *t, int level, int64_t *flat) {
    if (level == t->ndim) {
        if (lua_type(L, -1) != LUA_TNUMBER)
            luaL_error(L, "tensor.from: elements must be numbers (got %s)", luaL_typename(L, -1));
        cs_lua_set_elem(L, t, (*flat)++, -1);
        return;
    }
    if (!lua_istable(L, -1) || (int64_t)lua_rawlen(L, -1) != t->shape[level])
        luaL_error(L, "tensor.from: the nested sequences are not rectangular (expected a "
                   "sequence of %I at depth %d, got %s)", (lua_Integer)t->shape[level], level + 1,
                   lua_istable(L, -1) ? "one of another length" : luaL_typename(L, -1));
    luaL_checkstack(L, 2, "tensor.from");
    for (int64_t i = 1; i <= t->shape[level]; i++) {
        lua_rawgeti(L, -1, i);
        from_fill(L, t, level + 1, flat);
        lua_pop(L, 1);
    }
}

static int l_from(lua_State *L) {
    int64_t shape[CS_MAX_DIMS];
    int dev;
    cs_dtype d = opt_dtype(L, 2, "tensor.from", CS_FLOAT32, &dev);
    if (!lua_istable(L, 1) && lua_type(L, 1) != LUA_TNUMBER)
        return luaL_error(L, "tensor.from: expected a number or a (nested) sequence of numbers "
                          "(got %s)", luaL_typename(L, 1));
    int ndim = from_shape(L, 1, shape);
    cs_tensor **slot = cs_lua_newslot(L), *t;
    cs_lua_charge_elems(L, charged(L, shape_numel(ndim, shape)));
    CS_LUA_TRY_NEW(L, t, cs_tensor_new(cs_lua_budget(L), d, ndim, shape));
    cs_lua_own(L, slot, t);
    int64_t flat = 0;
    lua_pushvalue(L, 1);
    from_fill(L, t, 0, &flat);
    lua_pop(L, 1);
    cs_lua_place(L, dev);
    return 1;
}

const luaL_Reg cs_tensor_factories[] = {
    {"zeros", l_zeros}, {"ones", l_ones}, {"full", l_full}, {"arange", l_arange},
    {"randn", l_randn}, {"from", l_from}, {NULL, NULL}};
