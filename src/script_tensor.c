/* script_tensor.c -- the tensor userdata, its methods and metamethods, and
 * the `tensor` library (its factories are in script_factory.c, the device
 * methods in script_device.c).
 *
 * A tensor userdata is one pointer to a cs_tensor, which it owns a reference
 * to. Every function here checks and converts its arguments, then makes one
 * call into tensor.h. New tensors are charged to the rank's budget.
 *
 * Leak discipline: a Lua allocation can raise (memory error) at any time, so a
 * function that creates a tensor first pushes the empty userdata that will own
 * it, then creates the tensor and stores it there at once.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pitfall.h"
#include "script_internal.h"

#define CS_CSTRING_MT "cs.cstring" /* a malloc'd string owned by a userdata */

cs_budget *cs_lua_budget(lua_State *L) {
    return cs_script_ctx_of(L)->budget;
}

/* ---- the userdata */

cs_tensor **cs_lua_newslot(lua_State *L) {
    cs_tensor **slot = lua_newuserdatauv(L, sizeof *slot, 0);
    *slot = NULL;
    luaL_setmetatable(L, CS_TENSOR_MT);
    return slot;
}

#define new_slot cs_lua_newslot

/* The tensor metatable is also in the registry under this address: every
 * dist call checks its tensor, and luaL_testudata looks the metatable up by
 * its name (a string made and hashed on each call). */
static const char tensor_mt_key;

cs_tensor *cs_lua_totensor(lua_State *L, int idx) {
    cs_tensor **slot = lua_touserdata(L, idx);
    if (!slot || !lua_getmetatable(L, idx)) return NULL;
    lua_rawgetp(L, LUA_REGISTRYINDEX, &tensor_mt_key);
    if (!lua_rawequal(L, -1, -2)) slot = NULL;
    lua_pop(L, 2);
    return slot ? *slot : NULL;
}

cs_tensor *cs_lua_argtensor(lua_State *L, int idx, const char *fn, const char *what) {
    cs_tensor *t = cs_lua_totensor(L, idx);
    if (t) return t;
    const char *got = luaL_typename(L, idx);
    if (lua_istable(L, idx) && !lua_getmetatable(L, idx)) {
        const char *how = "not a Lua table (tensor.from(list) makes one)";
        if (what) luaL_error(L, "%s: %s must be a tensor, %s", fn, what, how);
        luaL_error(L, "%s: expected a tensor, %s", fn, how);
    }
    if (what) luaL_error(L, "%s: %s must be a tensor (got %s)", fn, what, got);
    luaL_error(L, "%s: expected a tensor (got %s)", fn, got);
    return NULL;
}

static void dot_call_hint(lua_State *L);

cs_tensor *cs_lua_checktensor(lua_State *L, int idx) {
    if (idx == 1 && !luaL_testudata(L, 1, CS_TENSOR_MT)) dot_call_hint(L);
    cs_tensor **slot = luaL_checkudata(L, idx, CS_TENSOR_MT);
    if (!*slot) luaL_argerror(L, idx, "tensor is empty");
    return *slot;
}

/* A failed tensor.h call: a budget refusal ends the rank, the rest is the
 * script's error with the tensor module's (torch-worded) message. */
int cs_lua_tensor_failed(lua_State *L) {
    if (errno == ENOMEM) return cs_script_die(L, CS_DIE_MEM);
    const char *msg = cs_tensor_errmsg();
    return luaL_error(L, "%s", msg && *msg ? msg : "invalid tensor operation");
}

#define tensor_failed cs_lua_tensor_failed

/* Store t in the slot at the top of the stack, or fail. The collector is told
 * about the storage so garbage tensors are collected at a fair pace. */
int cs_lua_own(lua_State *L, cs_tensor **slot, cs_tensor *t) {
    if (!t) return tensor_failed(L);
    *slot = t;
    size_t kb = cs_tensor_nbytes(t) / 1024;
    if (kb > 0) lua_gc(L, LUA_GCSTEP, kb > INT32_MAX ? INT32_MAX : (int)kb);
    return 1;
}

void cs_lua_charge_elems(lua_State *L, int64_t n) {
    cs_script_charge(L, (uint64_t)(n > 0 ? n : 0) / CS_ELEMS_PER_STEP);
}

/* A tensor.h call that answers with a value (an element, a sum, equal())
 * cannot return an error; on device operands it fails by setting errno, to
 * ENODEV for the device or EINVAL for operands on two devices, with the
 * message. Call with errno cleared before the call. */
static void check_device_answer(lua_State *L, const cs_tensor *a, const cs_tensor *b) {
    if ((errno == ENODEV || errno == EINVAL) && (cs_tensor_on_device(a) || (b && cs_tensor_on_device(b))))
        tensor_failed(L);
}

/* ---- elements and indices */

static void push_elem(lua_State *L, const cs_tensor *t, int64_t flat) {
    errno = 0;
    if (cs_dtype_is_float(t->dtype)) lua_pushnumber(L, cs_tensor_get(t, flat));
    else lua_pushinteger(L, cs_tensor_get_i(t, flat));
    check_device_answer(L, t, NULL);
}

double cs_lua_checkscalar(lua_State *L, int idx, const char *what) {
    if (lua_type(L, idx) != LUA_TNUMBER)
        luaL_error(L, "%s must be a number (got %s)", what, luaL_typename(L, idx));
    return lua_tonumber(L, idx);
}

/* As torch's checked conversion of a scalar (a fill, an element): an
 * integer may wrap into uint8 as two's complement (-1 is 255) but no
 * further; a float is truncated if its value is in range; NaN and the
 * infinities fit no integer dtype; a finite float past float32's range is
 * refused too, not made infinite. Arithmetic wraps, as torch's does. */
void cs_lua_checkholds(lua_State *L, int idx, cs_dtype d) {
    bool fits = true;
    if (lua_isinteger(L, idx)) {
        lua_Integer i = lua_tointeger(L, idx);
        if (d == CS_INT32) fits = i >= INT32_MIN && i <= INT32_MAX;
        else if (d == CS_UINT8) fits = i >= -255 && i <= 255;
    } else {
        double v = lua_tonumber(L, idx);
        if (d == CS_INT32) fits = v >= -2147483648.0 && v < 2147483648.0;
        else if (d == CS_UINT8) fits = v >= 0 && v < 256;
        else if (d == CS_INT64) fits = v >= -0x1p63 && v < 0x1p63;
        else if (d == CS_FLOAT32) fits = isinf(v) || !(fabs(v) > FLT_MAX);
    }
    if (!fits)
        luaL_error(L, "value cannot be converted to type %s without overflow",
                   d == CS_INT32 ? "int32_t" : d == CS_UINT8 ? "uint8_t" : d == CS_INT64 ? "int64_t"
                                                                            : "float");
}

void cs_lua_set_elem(lua_State *L, cs_tensor *t, int64_t flat, int idx) {
    int rc;
    cs_lua_checkscalar(L, idx, "a tensor element");
    cs_lua_checkholds(L, idx, t->dtype);
    errno = 0;
    if (!cs_dtype_is_float(t->dtype) && lua_isinteger(L, idx))
        rc = cs_tensor_set_i(t, flat, lua_tointeger(L, idx));
    else
        rc = cs_tensor_set(t, flat, lua_tonumber(L, idx));
    if (rc < 0) tensor_failed(L); /* a device that failed: the index was checked */
}

/* The key at idx as an index into dimension 0, negative counting from the end. */
static int64_t check_index(lua_State *L, const cs_tensor *t, int idx) {
    if (t->ndim == 0) luaL_error(L, "invalid index of a 0-dim tensor (use t:item())");
    int ok = 0;
    lua_Integer i = lua_tointegerx(L, idx, &ok);
    if (!ok) luaL_error(L, "only integers can index a tensor (got %f)", lua_tonumber(L, idx));
    int64_t n = t->shape[0];
    if (i < -n || i >= n)
        luaL_error(L, "index %I is out of bounds for dimension 0 with size %I", i, (lua_Integer)n);
    return i < 0 ? i + n : i;
}

/* ---- sizes and options */

static void push_size(lua_State *L, int ndim, const int64_t *shape) {
    lua_createtable(L, ndim, 0);
    for (int d = 0; d < ndim; d++) {
        lua_pushinteger(L, shape[d]);
        lua_rawseti(L, -2, d + 1);
    }
    luaL_setmetatable(L, CS_SIZE_MT);
}

static int64_t check_dim_value(lua_State *L, int idx, const char *fn) {
    return cs_script_checkint(L, idx, fn, "a size");
}

/* Dims from the arguments first..last: numbers, or one table of numbers. */
int cs_lua_checkdims(lua_State *L, int first, int last, const char *fn, int64_t *shape) {
    int n = 0;
    if (first == last && lua_istable(L, first)) {
        lua_Integer len = (lua_Integer)lua_rawlen(L, first);
        if (len > CS_MAX_DIMS)
            luaL_error(L, "%s: at most %d dimensions are supported (got %I)", fn, CS_MAX_DIMS, len);
        for (n = 0; n < (int)len; n++) {
            lua_rawgeti(L, first, n + 1);
            shape[n] = check_dim_value(L, -1, fn);
            lua_pop(L, 1);
        }
        return n;
    }
    if (last - first + 1 > CS_MAX_DIMS)
        luaL_error(L, "%s: at most %d dimensions are supported (got %d)", fn, CS_MAX_DIMS,
                   last - first + 1);
    for (int i = first; i <= last; i++) shape[n++] = check_dim_value(L, i, fn);
    return n;
}

cs_dtype cs_lua_checkdtype(lua_State *L, int idx, const char *fn) {
    cs_dtype d = CS_FLOAT32; /* luaL_error below does not return */
    const char *name = lua_tostring(L, idx);
    if (lua_type(L, idx) != LUA_TSTRING || !cs_dtype_parse(name, &d))
        luaL_error(L, "%s: unknown dtype '%s' (float32, float64, int32, int64 or uint8)", fn,
                   name ? name : luaL_typename(L, idx));
    return d;
}

/* ---- the tensor library (its factories: script_factory.c) */

/* With a model that sets flops=, arithmetic moves the rank's clock
 * (docs/time-model.md): n floating-point operations. */
static void model_flops(lua_State *L, int64_t n) {
    cs_script_ctx *c = cs_script_ctx_of(L); /* a state without a rank (the grader's): none */
    if (n > 0 && c && c->r) cs_rank_flops(c->r, (uint64_t)n);
}

/* A product is charged whole before it starts, like every tensor call, but
 * its time grows faster than its operands: 1600x1600 is within the default
 * budget and takes seconds. It asks as it goes whether the run is ending (a
 * timeout, another rank's error), and then stops the rank at its line. */
static bool matmul_stop(void *ud) { return cs_script_stopping(ud); }

static int l_matmul(lua_State *L) {
    cs_tensor *a = cs_lua_checktensor(L, 1), *b = cs_lua_checktensor(L, 2), *t;
    cs_tensor **slot = new_slot(L);
    int64_t m = b->ndim == 2 ? b->shape[1] : 1;
    int64_t mkn = m > 0 && cs_tensor_numel(a) > INT64_MAX / m ? INT64_MAX : cs_tensor_numel(a) * m;
    cs_lua_charge_elems(L, mkn);
    cs_tensor_stop stop = {matmul_stop, L};
    CS_LUA_TRY_NEW(L, t, cs_tensor_matmul(cs_lua_budget(L), a, b, &stop));
    if (!t && errno == ECANCELED) cs_script_check(L); /* raises */
    model_flops(L, mkn > INT64_MAX / 2 ? INT64_MAX : 2 * mkn); /* a multiply and an add each */
    return cs_lua_own(L, slot, t);
}

static int l_is_tensor(lua_State *L) {
    lua_pushboolean(L, cs_lua_totensor(L, 1) != NULL);
    return 1;
}

/* ---- methods: shape and views */

static int m_numel(lua_State *L) {
    lua_pushinteger(L, cs_tensor_numel(cs_lua_checktensor(L, 1)));
    return 1;
}

static int m_dim(lua_State *L) {
    lua_pushinteger(L, cs_lua_checktensor(L, 1)->ndim);
    return 1;
}

/* A dim argument, negative counting from the end, as torch wraps it. */
static int check_dim(lua_State *L, const cs_tensor *t, int idx, const char *fn) {
    lua_Integer d = cs_script_checkint(L, idx, fn, "dim");
    int n = t->ndim ? t->ndim : 1;
    if (d < -n || d >= n)
        luaL_error(L, "Dimension out of range (expected to be in range of [%d, %d], but got %I)",
                   -n, n - 1, d);
    return (int)(d < 0 ? d + n : d);
}

static int m_size(lua_State *L) {
    cs_tensor *t = cs_lua_checktensor(L, 1);
    if (lua_isnoneornil(L, 2)) {
        push_size(L, t->ndim, t->shape);
        return 1;
    }
    int d = check_dim(L, t, 2, "size");
    lua_pushinteger(L, t->ndim ? t->shape[d] : 1);
    return 1;
}

static int m_is_contiguous(lua_State *L) {
    lua_pushboolean(L, cs_tensor_is_contiguous(cs_lua_checktensor(L, 1)));
    return 1;
}

static int m_contiguous(lua_State *L) {
    cs_tensor *a = cs_lua_checktensor(L, 1), *t;
    if (cs_tensor_is_contiguous(a)) {
        lua_settop(L, 1);
        return 1;
    }
    cs_tensor **slot = new_slot(L);
    cs_lua_charge_elems(L, cs_tensor_numel(a));
    CS_LUA_TRY_NEW(L, t, cs_tensor_contiguous(cs_lua_budget(L), a));
    return cs_lua_own(L, slot, t);
}

static int m_clone(lua_State *L) {
    cs_tensor *a = cs_lua_checktensor(L, 1), *t;
    cs_tensor **slot = new_slot(L);
    cs_lua_charge_elems(L, cs_tensor_numel(a));
    CS_LUA_TRY_NEW(L, t, cs_tensor_clone(cs_lua_budget(L), a));
    return cs_lua_own(L, slot, t);
}

/* A dim past what an int holds is out of range for any tensor: said here with
 * the value given (the tensor's own check takes an int). */
static void check_int_dim(lua_State *L, const cs_tensor *a, lua_Integer dim) {
    if (dim < INT32_MIN || dim > INT32_MAX)
        luaL_error(L, "Dimension out of range (expected to be in range of [%d, %d], but got %I)",
                   -a->ndim, a->ndim - 1, dim);
}

static int m_narrow(lua_State *L) {
    cs_tensor *a = cs_lua_checktensor(L, 1), *t;
    lua_Integer dim = cs_script_checkint(L, 2, "narrow", "dim");
    lua_Integer start = cs_script_checkint(L, 3, "narrow", "start");
    lua_Integer len = cs_script_checkint(L, 4, "narrow", "length");
    check_int_dim(L, a, dim);
    cs_tensor **slot = new_slot(L);
    CS_LUA_TRY_NEW(L, t, cs_tensor_narrow(a, (int)dim, start, len));
    return cs_lua_own(L, slot, t);
}

static int m_select(lua_State *L) {
    cs_tensor *a = cs_lua_checktensor(L, 1), *t;
    lua_Integer dim = cs_script_checkint(L, 2, "select", "dim");
    lua_Integer i = cs_script_checkint(L, 3, "select", "index");
    check_int_dim(L, a, dim);
    cs_tensor **slot = new_slot(L);
    CS_LUA_TRY_NEW(L, t, cs_tensor_select(a, (int)dim, i));
    return cs_lua_own(L, slot, t);
}

static int m_view(lua_State *L) {
    int64_t shape[CS_MAX_DIMS];
    cs_tensor *a = cs_lua_checktensor(L, 1), *t;
    int ndim = cs_lua_checkdims(L, 2, lua_gettop(L), "view", shape);
    cs_tensor **slot = new_slot(L);
    CS_LUA_TRY_NEW(L, t, cs_tensor_view(a, ndim, shape));
    return cs_lua_own(L, slot, t);
}

/* reshape: a view when the tensor is contiguous, a view of a copy otherwise. */
static int m_reshape(lua_State *L) {
    int64_t shape[CS_MAX_DIMS];
    cs_tensor *a = cs_lua_checktensor(L, 1), *c, *t;
    int ndim = cs_lua_checkdims(L, 2, lua_gettop(L), "reshape", shape);
    cs_tensor **cslot = new_slot(L); /* owns the copy until the view holds it */
    CS_LUA_TRY_NEW(L, c, cs_tensor_contiguous(cs_lua_budget(L), a));
    cs_lua_own(L, cslot, c);
    cs_tensor **slot = new_slot(L);
    CS_LUA_TRY_NEW(L, t, cs_tensor_view(c, ndim, shape));
    return cs_lua_own(L, slot, t);
}

/* chunk(n [, dim]): a sequence of views. The slots are made before the views
 * so that nothing can fail while the views are not owned yet. */
static int m_chunk(lua_State *L) {
    cs_tensor *a = cs_lua_checktensor(L, 1);
    lua_Integer n = cs_script_checkint(L, 2, "chunk", "chunks");
    if (n > INT32_MAX) n = INT32_MAX;
    if (a->ndim == 0 || n <= 0) { /* let the tensor module word the error */
        cs_tensor_chunk(a, (int)(n < 0 ? -1 : n), 0, NULL, 0);
        return tensor_failed(L);
    }
    int dim = lua_isnoneornil(L, 3) ? 0 : check_dim(L, a, 3, "chunk");
    int64_t size = a->shape[dim];
    int max = size == 0 || size > n ? (int)n : (int)size;
    lua_settop(L, 1);
    lua_createtable(L, max, 0);
    cs_tensor ***slots = lua_newuserdatauv(L, sizeof *slots * (size_t)max, 0);
    for (int i = 0; i < max; i++) {
        slots[i] = new_slot(L);
        lua_rawseti(L, 2, i + 1);
    }
    cs_tensor **views = lua_newuserdatauv(L, sizeof *views * (size_t)max, 0);
    int count = cs_tensor_chunk(a, (int)n, dim, views, max);
    if (count < 0) return tensor_failed(L);
    for (int i = 0; i < count; i++) *slots[i] = views[i];
    for (int i = count; i < max; i++) {
        lua_pushnil(L);
        lua_rawseti(L, 2, i + 1);
    }
    lua_settop(L, 2);
    return 1;
}

/* ---- methods: values */

static int m_fill_(lua_State *L) {
    cs_tensor *t = cs_lua_checktensor(L, 1);
    double v = cs_lua_checkscalar(L, 2, "fill_: the value");
    cs_lua_checkholds(L, 2, t->dtype);
    cs_lua_charge_elems(L, cs_tensor_numel(t));
    errno = 0;
    if (cs_tensor_fill_(t, v) < 0) return tensor_failed(L);
    lua_settop(L, 1);
    return 1;
}

static int m_zero_(lua_State *L) {
    lua_settop(L, 1);
    lua_pushinteger(L, 0);
    return m_fill_(L);
}

static int m_copy_(lua_State *L) {
    cs_tensor *dst = cs_lua_checktensor(L, 1), *src = cs_lua_checktensor(L, 2);
    cs_lua_charge_elems(L, cs_tensor_numel(dst));
    errno = 0;
    if (cs_tensor_copy_(dst, src) < 0) return tensor_failed(L);
    lua_settop(L, 1);
    return 1;
}

static void push_number_of(lua_State *L, const cs_tensor *t, double v) {
    if (!cs_dtype_is_float(t->dtype) && v >= -0x1p63 && v < 0x1p63) lua_pushinteger(L, (lua_Integer)v);
    else lua_pushnumber(L, v);
}

/* fni, if given, is the exact integer form for integer dtypes. */
static int reduce(lua_State *L, double (*fn)(const cs_tensor *), int64_t (*fni)(const cs_tensor *),
                  const char *name, bool ints) {
    cs_tensor *t = cs_lua_checktensor(L, 1);
    /* torch: the sum of nothing is 0 and its mean nan; max and min have no
     * value to give */
    if (fn != cs_tensor_sum && fn != cs_tensor_mean && cs_tensor_numel(t) == 0)
        return luaL_error(L, "%s(): cannot reduce an empty tensor", name);
    cs_lua_charge_elems(L, cs_tensor_numel(t));
    if (t) model_flops(L, cs_tensor_numel(t)); /* NULL: cs_lua_own() raises the error */
    errno = 0;
    if (ints && fni && !cs_dtype_is_float(t->dtype)) {
        lua_Integer v = fni(t);
        check_device_answer(L, t, NULL);
        lua_pushinteger(L, v);
        return 1;
    }
    double v = fn(t);
    check_device_answer(L, t, NULL);
    if (errno == EINVAL) return tensor_failed(L); /* mean of an integer tensor */
    if (ints) push_number_of(L, t, v);
    else lua_pushnumber(L, v);
    return 1;
}

static int m_sum(lua_State *L) { return reduce(L, cs_tensor_sum, cs_tensor_sum_i, "sum", true); }
static int m_max(lua_State *L) { return reduce(L, cs_tensor_max, cs_tensor_max_i, "max", true); }
static int m_min(lua_State *L) { return reduce(L, cs_tensor_min, cs_tensor_min_i, "min", true); }
static int m_mean(lua_State *L) { return reduce(L, cs_tensor_mean, NULL, "mean", false); }

static int m_item(lua_State *L) {
    cs_tensor *t = cs_lua_checktensor(L, 1);
    int64_t n = cs_tensor_numel(t);
    if (n != 1)
        return luaL_error(L, "a Tensor with %I elements cannot be converted to Scalar", (lua_Integer)n);
    push_elem(L, t, 0);
    return 1;
}

/* tolist: nested sequences (the value itself for a 0-d tensor). */
static void push_list(lua_State *L, const cs_tensor *t, int level, int64_t *flat) {
    if (level == t->ndim) {
        push_elem(L, t, (*flat)++);
        return;
    }
    luaL_checkstack(L, 2, "tolist");
    int64_t n = t->shape[level];
    lua_createtable(L, n < INT32_MAX ? (int)n : 0, 0);
    for (int64_t i = 1; i <= n; i++) {
        push_list(L, t, level + 1, flat);
        lua_rawseti(L, -2, i);
    }
}

static int m_tolist(lua_State *L) {
    cs_tensor *t = cs_lua_checktensor(L, 1);
    int64_t flat = 0;
    cs_lua_charge_elems(L, cs_tensor_numel(t));
    push_list(L, t, 0, &flat);
    return 1;
}

static int m_equal(lua_State *L) {
    cs_tensor *a = cs_lua_checktensor(L, 1), *b = cs_lua_checktensor(L, 2);
    cs_lua_charge_elems(L, cs_tensor_numel(a));
    errno = 0;
    bool eq = cs_tensor_equal(a, b);
    check_device_answer(L, a, b);
    lua_pushboolean(L, eq);
    return 1;
}

static int m_allclose(lua_State *L) {
    cs_tensor *a = cs_lua_checktensor(L, 1), *b = cs_lua_checktensor(L, 2);
    double rtol = luaL_optnumber(L, 3, 1e-5), atol = luaL_optnumber(L, 4, 1e-8);
    cs_lua_charge_elems(L, cs_tensor_numel(a));
    errno = 0;
    bool close = cs_tensor_allclose(a, b, rtol, atol);
    check_device_answer(L, a, b);
    lua_pushboolean(L, close);
    return 1;
}

/* ---- methods and metamethods: arithmetic */

static double check_operand(lua_State *L, int idx, const char *side) {
    if (lua_type(L, idx) != LUA_TNUMBER)
        luaL_error(L, "tensor arithmetic: the %s operand must be a tensor or a number (got %s)", side,
                   luaL_typename(L, idx));
    return lua_tonumber(L, idx);
}

/* a op b where either side may be a number (2 * t, t - 1) or a tensor. */
static int binop(lua_State *L, cs_binop op) {
    cs_tensor *a = cs_lua_totensor(L, 1), *b = cs_lua_totensor(L, 2), *t;
    bool scalar_first = false;
    double s = 0;
    if (!a) {
        s = check_operand(L, 1, "left");
        a = cs_lua_checktensor(L, 2);
        b = NULL;
        scalar_first = true;
    } else if (!b) {
        s = check_operand(L, 2, "right");
    }
    cs_tensor **slot = new_slot(L);
    int64_t na = cs_tensor_numel(a), nb = b ? cs_tensor_numel(b) : 0; /* b: NULL for a scalar */
    cs_lua_charge_elems(L, na > nb ? na : nb);
    CS_LUA_TRY_NEW(L, t, cs_tensor_binop(cs_lua_budget(L), op, a, b, s, scalar_first));
    if (t) model_flops(L, cs_tensor_numel(t)); /* NULL: cs_lua_own() raises the error */
    return cs_lua_own(L, slot, t);
}

static int binop_(lua_State *L, cs_binop op) {
    cs_tensor *a = cs_lua_checktensor(L, 1), *b = cs_lua_totensor(L, 2);
    double s = b ? 0 : check_operand(L, 2, "right");
    cs_lua_charge_elems(L, cs_tensor_numel(a));
    errno = 0;
    if (cs_tensor_binop_(op, a, b, s) < 0) return tensor_failed(L);
    model_flops(L, cs_tensor_numel(a));
    lua_settop(L, 1);
    return 1;
}

static int m_add(lua_State *L) { return binop(L, CS_ADD); }
static int m_sub(lua_State *L) { return binop(L, CS_SUB); }
static int m_mul(lua_State *L) { return binop(L, CS_MUL); }
static int m_div(lua_State *L) { return binop(L, CS_DIV); }
static int m_pow(lua_State *L) { return binop(L, CS_POW); }
static int m_add_(lua_State *L) { return binop_(L, CS_ADD); }
static int m_sub_(lua_State *L) { return binop_(L, CS_SUB); }
static int m_mul_(lua_State *L) { return binop_(L, CS_MUL); }
static int m_div_(lua_State *L) { return binop_(L, CS_DIV); }

/* fn(t): a new tensor, one operation per element. */
static int unary(lua_State *L, cs_tensor *(*fn)(cs_budget *, const cs_tensor *)) {
    cs_tensor *a = cs_lua_checktensor(L, 1), *t;
    cs_tensor **slot = new_slot(L);
    cs_lua_charge_elems(L, cs_tensor_numel(a));
    CS_LUA_TRY_NEW(L, t, fn(cs_lua_budget(L), a));
    model_flops(L, cs_tensor_numel(a));
    return cs_lua_own(L, slot, t);
}

static int m_neg(lua_State *L) { return unary(L, cs_tensor_neg); }
static int m_relu(lua_State *L) { return unary(L, cs_tensor_relu); }

static int m_relu_(lua_State *L) {
    cs_tensor *a = cs_lua_checktensor(L, 1);
    cs_lua_charge_elems(L, cs_tensor_numel(a));
    errno = 0;
    if (cs_tensor_relu_(a) < 0) return tensor_failed(L);
    model_flops(L, cs_tensor_numel(a));
    lua_settop(L, 1);
    return 1;
}

/* ---- metamethods */

static int mt_index(lua_State *L) {
    cs_tensor *t = cs_lua_checktensor(L, 1), *v;
    if (lua_type(L, 2) == LUA_TSTRING) {
        const char *k = lua_tostring(L, 2);
        lua_pushvalue(L, 2);
        if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL) return 1; /* a method */
        if (strcmp(k, "shape") == 0) push_size(L, t->ndim, t->shape);
        else if (strcmp(k, "dtype") == 0) lua_pushstring(L, cs_dtype_name(t->dtype));
        else if (strcmp(k, "ndim") == 0) lua_pushinteger(L, t->ndim);
        else if (strcmp(k, "device") == 0) cs_lua_push_device(L, t);
        else lua_pushnil(L);
        return 1;
    }
    if (lua_type(L, 2) != LUA_TNUMBER)
        return luaL_error(L, "a tensor is indexed by an integer (got %s)", luaL_typename(L, 2));
    int64_t i = check_index(L, t, 2);
    if (t->ndim == 1) {
        cs_lua_access_index(L, t, i, CS_ACCESS_READ);
        push_elem(L, t, i);
        return 1;
    }
    cs_tensor **slot = new_slot(L);
    CS_LUA_TRY_NEW(L, v, cs_tensor_select(t, 0, i));
    return cs_lua_own(L, slot, v);
}

/* t[i] = v: an element of a 1-D tensor; for more dims the row i, filled with a
 * number or copied from a tensor. */
static int mt_newindex(lua_State *L) {
    cs_tensor *t = cs_lua_checktensor(L, 1), *row;
    if (lua_type(L, 2) != LUA_TNUMBER)
        return luaL_error(L, "cannot assign to '%s' of a tensor (only t[i] = value)",
                          lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : luaL_typename(L, 2));
    int64_t i = check_index(L, t, 2);
    cs_lua_access_index(L, t, i, CS_ACCESS_WRITE);
    if (t->ndim == 1) {
        cs_lua_set_elem(L, t, i, 3);
        return 0;
    }
    cs_lua_access(L, 3, CS_ACCESS_READ); /* a tensor copied in */
    cs_tensor *src = cs_lua_totensor(L, 3);
    double v = src ? 0 : cs_lua_checkscalar(L, 3, "the assigned value");
    if (!src) cs_lua_checkholds(L, 3, t->dtype);
    cs_tensor **slot = new_slot(L);
    CS_LUA_TRY_NEW(L, row, cs_tensor_select(t, 0, i));
    cs_lua_own(L, slot, row);
    cs_lua_charge_elems(L, cs_tensor_numel(row));
    errno = 0;
    if (src && cs_tensor_copy_(row, src) < 0) return tensor_failed(L);
    if (!src && cs_tensor_fill_(row, v) < 0) return tensor_failed(L);
    return 0;
}

static int mt_len(lua_State *L) {
    cs_tensor *t = cs_lua_checktensor(L, 1);
    if (t->ndim == 0) return luaL_error(L, "len() of a 0-d tensor");
    lua_pushinteger(L, t->shape[0]);
    return 1;
}

static int mt_tostring(lua_State *L) {
    cs_tensor *t = cs_lua_checktensor(L, 1);
    char **box = lua_newuserdatauv(L, sizeof *box, 0);
    *box = NULL;
    luaL_setmetatable(L, CS_CSTRING_MT);
    *box = cs_tensor_format(t);
    if (!*box) return cs_script_die(L, CS_DIE_MEM);
    lua_pushstring(L, *box);
    free(*box);
    *box = NULL;
    return 1;
}

static int mt_gc(lua_State *L) {
    cs_tensor **slot = luaL_checkudata(L, 1, CS_TENSOR_MT);
    cs_tensor_release(*slot);
    *slot = NULL;
    return 0;
}

static int cstring_gc(lua_State *L) {
    char **box = lua_touserdata(L, 1);
    free(*box);
    *box = NULL;
    return 0;
}

/* Size: t.shape and t:size(), a sequence of dims printed as torch prints it. */
static int size_tostring(lua_State *L) {
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addstring(&b, "torch.Size([");
    for (lua_Integer i = 1, n = (lua_Integer)lua_rawlen(L, 1); i <= n; i++) {
        if (i > 1) luaL_addstring(&b, ", ");
        lua_rawgeti(L, 1, i);
        luaL_addvalue(&b);
    }
    luaL_addstring(&b, "])");
    luaL_pushresult(&b);
    return 1;
}

static int size_eq(lua_State *L) {
    lua_Integer n = (lua_Integer)lua_rawlen(L, 1);
    bool eq = n == (lua_Integer)lua_rawlen(L, 2);
    for (lua_Integer i = 1; eq && i <= n; i++) {
        lua_rawgeti(L, 1, i);
        lua_rawgeti(L, 2, i);
        eq = lua_rawequal(L, -1, -2);
        lua_pop(L, 2);
    }
    lua_pushboolean(L, eq);
    return 1;
}

static const luaL_Reg tensor_methods[] = {
    {"numel", m_numel}, {"dim", m_dim}, {"size", m_size},
    {"is_contiguous", m_is_contiguous}, {"contiguous", m_contiguous},
    {"clone", m_clone}, {"narrow", m_narrow}, {"select", m_select},
    {"view", m_view}, {"reshape", m_reshape}, {"chunk", m_chunk},
    {"fill", m_fill_}, {"fill_", m_fill_}, {"zero_", m_zero_}, {"copy_", m_copy_},
    {"sum", m_sum}, {"max", m_max}, {"min", m_min}, {"mean", m_mean},
    {"item", m_item}, {"tolist", m_tolist}, {"equal", m_equal}, {"allclose", m_allclose},
    {"add", m_add}, {"sub", m_sub}, {"mul", m_mul}, {"div", m_div}, {"pow", m_pow},
    {"add_", m_add_}, {"sub_", m_sub_}, {"mul_", m_mul_}, {"div_", m_div_},
    {"neg", m_neg}, {"relu", m_relu}, {"relu_", m_relu_}, {"matmul", l_matmul},
    {NULL, NULL}};

/* Python's t.add_(1) in Lua passes 1 as the tensor, and "tensor expected,
 * got number" does not say that a colon was meant: say it when the running
 * function has a method's name (matmul is tensor.matmul too) and was not
 * called as a method or an operator. Returns when none of that holds. */
static void dot_call_hint(lua_State *L) {
    lua_Debug ar;
    if (!lua_getstack(L, 0, &ar) || !lua_getinfo(L, "n", &ar) || !ar.name ||
        strcmp(ar.name, "matmul") == 0 || strcmp(ar.namewhat, "method") == 0 ||
        strcmp(ar.namewhat, "metamethod") == 0)
        return;
    for (const luaL_Reg *r = tensor_methods; r->name; r++)
        if (strcmp(r->name, ar.name) == 0)
            cs_script_colon_error(L, ar.name, "tensor", "t", "(...)");
}

static const luaL_Reg tensor_meta[] = {
    {"__newindex", mt_newindex}, {"__len", mt_len}, {"__tostring", mt_tostring},
    {"__gc", mt_gc}, {"__add", m_add}, {"__sub", m_sub}, {"__mul", m_mul},
    {"__div", m_div}, {"__pow", m_pow}, {"__unm", m_neg},
    {NULL, NULL}};

static const luaL_Reg tensor_lib[] = {
    {"matmul", l_matmul}, {"is_tensor", l_is_tensor},
    {NULL, NULL}};

/* setmetatable(t, mt) on a tensor: the base function's own check runs inside
 * the sandbox's wrapper, where Lua cannot name the function ("bad argument #1
 * to '?'"), so the argument is checked here, in the function scripts call.
 * Upvalue: the setmetatable this one wraps. */
static int protect_setmetatable(lua_State *L) {
    if (cs_lua_totensor(L, 1))
        return luaL_error(L, "setmetatable: a tensor's metatable cannot be changed "
                          "(setmetatable takes a table, got a tensor)");
    if (!lua_istable(L, 1)) return luaL_typeerror(L, 1, "table");
    return lua_tocfunction(L, lua_upvalueindex(1))(L);
}

int luaopen_cs_tensor(lua_State *L) {
    cs_script_sealed_metatable(L, CS_TENSOR_MT);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &tensor_mt_key);
    luaL_setfuncs(L, tensor_meta, 0);
    cs_script_guard(L, -1);
    luaL_newlib(L, tensor_methods);
    luaL_setfuncs(L, cs_tensor_device_methods, 0);
    cs_script_guard(L, -1);
    lua_pushcclosure(L, mt_index, 1);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);

    cs_script_sealed_metatable(L, CS_SIZE_MT);
    lua_pushcfunction(L, size_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushcfunction(L, size_eq);
    lua_setfield(L, -2, "__eq");
    lua_pop(L, 1);

    luaL_newmetatable(L, CS_CSTRING_MT);
    lua_pushcfunction(L, cstring_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);

    lua_getglobal(L, "setmetatable");
    if (lua_tocfunction(L, -1)) {
        lua_pushcclosure(L, protect_setmetatable, 1);
        lua_setglobal(L, "setmetatable");
    } else {
        lua_pop(L, 1);
    }

    luaL_newlib(L, tensor_lib);
    luaL_setfuncs(L, cs_tensor_factories, 0);
    cs_script_guard(L, -1);
    for (int d = 0; d < CS_NDTYPES; d++) { /* tensor.int64 == "int64", like torch.int64 */
        lua_pushstring(L, cs_dtype_name((cs_dtype)d));
        lua_setfield(L, -2, cs_dtype_name((cs_dtype)d));
    }
    return 1;
}
