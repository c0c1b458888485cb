/* script_device.c -- device tensors in the `tensor` library: the device
 * option of the factories, t:cuda(), t:cpu(), t:to(device [, dtype]) (t:to
 * converts a dtype too: one method, with torch's short forms t:float(), ...),
 * t.device, and dist.cuda_device_count().
 *
 * A factory builds its tensor on the host and then moves it (so randn draws
 * the same numbers wherever the tensor goes); moving is tensor.h's
 * cs_tensor_to_device. Where no device can be used, the move fails with
 * device.h's "no CUDA device available: ..." and the script stops there with
 * its file and line, as any tensor error does.
 */
#include <errno.h>
#include <string.h>

#include "script_internal.h"

bool cs_lua_isdevice(lua_State *L, int idx, int *dev) {
    return lua_type(L, idx) == LUA_TSTRING && cs_device_parse(lua_tostring(L, idx), dev);
}

int cs_lua_checkdevice(lua_State *L, int idx, const char *fn) {
    int dev = CS_DEVICE_CPU;
    if (!cs_lua_isdevice(L, idx, &dev))
        luaL_error(L, "%s: unknown device '%s' (cpu, cuda or cuda:N)", fn,
                   lua_type(L, idx) == LUA_TSTRING ? lua_tostring(L, idx) : luaL_typename(L, idx));
    return dev;
}

cs_tensor *cs_lua_newtensor_on(lua_State *L, cs_tensor *t, int dev) {
    cs_script_charge(L, (uint64_t)cs_tensor_numel(t) / CS_ELEMS_PER_STEP);
    errno = 0;
    cs_tensor *c = cs_tensor_to_device(cs_script_ctx_of(L)->budget, t, dev);
    if (!c) cs_lua_tensor_failed(L);
    return c;
}

void cs_lua_place(lua_State *L, int dev) {
    if (dev == CS_DEVICE_CPU) return;
    cs_tensor **slot = luaL_checkudata(L, -1, CS_TENSOR_MT);
    cs_tensor *t = cs_lua_newtensor_on(L, *slot, dev);
    cs_tensor_release(*slot);
    *slot = t;
}

static int move(lua_State *L, int dev) {
    cs_tensor *a = cs_lua_checktensor(L, 1);
    cs_tensor **slot = cs_lua_newslot(L);
    *slot = cs_lua_newtensor_on(L, a, dev);
    return 1;
}

/* t:cuda([device]): torch's, with an index (0) or a name ("cuda:1"). */
static int m_cuda(lua_State *L) {
    int dev = CS_DEVICE_CURRENT;
    if (lua_type(L, 2) == LUA_TNUMBER) {
        lua_Integer i = cs_script_checkint(L, 2, "cuda", "device");
        if (i < 0 || i > 1023) return luaL_error(L, "cuda: invalid device index %I", i);
        dev = (int)i;
    } else if (!lua_isnoneornil(L, 2)) {
        dev = cs_lua_checkdevice(L, 2, "cuda");
        if (dev == CS_DEVICE_CPU) return luaL_error(L, "cuda: 'cpu' is not a CUDA device");
    }
    return move(L, dev);
}

static int m_cpu(lua_State *L) {
    return move(L, CS_DEVICE_CPU);
}

/* a (at index 1) converted to d: a copy, or a itself if it has d already */
static int convert(lua_State *L, cs_tensor *a, cs_dtype d) {
    cs_tensor *t;
    if (d == a->dtype) {
        lua_settop(L, 1);
        return 1;
    }
    cs_tensor **slot = cs_lua_newslot(L);
    cs_lua_charge_elems(L, cs_tensor_numel(a));
    CS_LUA_TRY_NEW(L, t, cs_tensor_to(cs_lua_budget(L), a, d));
    return cs_lua_own(L, slot, t);
}

/* t:to(dtype), t:to(device), t:to(device, dtype) */
static int m_to(lua_State *L) {
    cs_tensor *a = cs_lua_checktensor(L, 1);
    int dev, di = 2;
    if (cs_lua_isdevice(L, 2, &dev)) {
        bool and_dtype = !lua_isnoneornil(L, 3);
        lua_settop(L, 3);
        cs_tensor **moved = cs_lua_newslot(L);
        *moved = cs_lua_newtensor_on(L, a, dev);
        if (!and_dtype) return 1;
        lua_replace(L, 1); /* convert the moved tensor */
        a = *moved, di = 3;
    }
    return convert(L, a, cs_lua_checkdtype(L, di, "to"));
}

/* torch's short forms of t:to(dtype) */
static int m_float(lua_State *L) { return convert(L, cs_lua_checktensor(L, 1), CS_FLOAT32); }
static int m_double(lua_State *L) { return convert(L, cs_lua_checktensor(L, 1), CS_FLOAT64); }
static int m_int(lua_State *L) { return convert(L, cs_lua_checktensor(L, 1), CS_INT32); }
static int m_long(lua_State *L) { return convert(L, cs_lua_checktensor(L, 1), CS_INT64); }
static int m_byte(lua_State *L) { return convert(L, cs_lua_checktensor(L, 1), CS_UINT8); }

/* t.device: "cpu" or "cuda:N", as str(t.device) in torch. */
void cs_lua_push_device(lua_State *L, const cs_tensor *t) {
    char buf[24];
    lua_pushstring(L, cs_device_name(cs_tensor_device(t), buf, sizeof buf));
}

/* dist.cuda_device_count(): 0 where there is no usable device (or no CUDA in
 * this build), so a script can choose its device. */
int cs_lua_cuda_device_count(lua_State *L) {
    lua_pushinteger(L, cs_device_count());
    return 1;
}

const luaL_Reg cs_tensor_device_methods[] = {
    {"cuda", m_cuda}, {"cpu", m_cpu}, {"to", m_to}, {"float", m_float}, {"double", m_double},
    {"int", m_int}, {"long", m_long}, {"byte", m_byte}, {NULL, NULL}};
