/* pattern_state.h -- a Lua state with Lua's libraries and commsim's string
 * patterns beside them as the module 'pat', so that a test or a fuzzer can
 * run both on the same arguments and compare. Shared by
 * tests/unit/check_pattern.c and tests/fuzz/fuzz_pattern.c. */
#ifndef COMMSIM_TESTS_PATTERN_STATE_H
#define COMMSIM_TESTS_PATTERN_STATE_H

#include <lauxlib.h>
#include <lualib.h>

#include "script_internal.h"

static inline lua_State *pattern_state(const cs_pattern_charge *charge) {
    lua_State *L = luaL_newstate();
    if (!L) return NULL;
    luaL_openlibs(L);
    lua_newtable(L);
    cs_pattern_open(L, charge);
    /* loaded as a module, as 'string' is, so that argument errors name
     * 'pat.find' where Lua's name 'string.find' */
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    lua_pushvalue(L, -2);
    lua_setfield(L, -2, "pat");
    lua_pop(L, 1);
    lua_setglobal(L, "pat");
    return L;
}

#endif
