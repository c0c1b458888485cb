/* script_charge.c -- C work of the standard libraries, charged to the
 * instruction budget.
 *
 * The count hook sees Lua instructions only: one call of string.gsub or
 * table.concat is one instruction however long it loops in C. Bytes a library
 * function allocates are charged by the allocator (script.c). What loops
 * without allocating is charged here, before the call, in proportion to what
 * it will touch:
 *   - find, match, gmatch, gsub: counted as they go (script_pattern.c),
 *     since a pattern that backtracks does far more than a pass over its
 *     subject;
 *   - string.byte, utf8.len, utf8.codepoint, utf8.offset, tonumber with a
 *     base: one step per byte they read;
 *   - table.concat, table.unpack: one step per element; table.insert and
 *     table.remove: one per element they shift; table.sort: n log2 n.
 * docs/lesson-api.md states the rule for script authors.
 */
#include <limits.h>

#include <lualib.h>

#include "script_internal.h"

/* The length of the string argument at idx; 0 for anything else (the original
 * function says what is wrong with it). */
static size_t str_len(lua_State *L, int idx) {
    size_t len = 0;
    if (lua_type(L, idx) == LUA_TSTRING) lua_tolstring(L, idx, &len);
    return len;
}

static size_t table_len(lua_State *L, int idx) {
    return lua_type(L, idx) == LUA_TTABLE ? lua_rawlen(L, idx) : 0;
}

/* The number of integers from i to j, 0 when empty. */
static uint64_t span(lua_Integer i, lua_Integer j) {
    return j >= i ? (uint64_t)j - (uint64_t)i + 1 : 0;
}

/* string.byte, the utf8 scanners. */
static int ch_subject(lua_State *L) {
    cs_script_charge_work(L, str_len(L, 1));
    return cs_script_call_original(L);
}

/* tonumber(s, base) reads every digit; without a base Lua reads at most a
 * numeral's length. */
static int ch_tonumber(lua_State *L) {
    if (!lua_isnoneornil(L, 2)) cs_script_charge_work(L, str_len(L, 1));
    return cs_script_call_original(L);
}

/* table.concat(t, sep, i, j) and table.unpack(t, i, j): elements i to j. */
static int ch_range(lua_State *L, int first) {
    lua_Integer i = luaL_optinteger(L, first, 1);
    lua_Integer j = lua_isnoneornil(L, first + 1) ? (lua_Integer)table_len(L, 1)
                                                  : luaL_checkinteger(L, first + 1);
    uint64_t n = span(i, j);
    /* A range the original refuses at once ("too many results") costs nothing. */
    if (n < (uint64_t)INT_MAX) cs_script_charge_work(L, n);
    return cs_script_call_original(L);
}

static int ch_concat(lua_State *L) { return ch_range(L, 3); }
static int ch_unpack(lua_State *L) { return ch_range(L, 2); }

/* table.insert(t, pos, v) and table.remove(t, pos) shift what is after pos. */
static int ch_shift(lua_State *L) {
    cs_script_charge_work(L, table_len(L, 1));
    return cs_script_call_original(L);
}

static int ch_sort(lua_State *L) {
    uint64_t n = table_len(L, 1), log = 1;
    while (log < 64 && ((uint64_t)1 << log) < n) log++;
    cs_script_charge_work(L, n * log);
    return cs_script_call_original(L);
}

static void wrap(lua_State *L, const char *lib, const char *name, lua_CFunction fn) {
    lua_getglobal(L, lib);
    lua_getfield(L, -1, name);
    lua_pushcclosure(L, fn, 1);
    lua_setfield(L, -2, name);
    lua_pop(L, 1);
}

/* The patterns' steps: the budget's, and a run that ends stops them too. */
static void ch_pattern(lua_State *L, uint64_t steps) {
    cs_script_charge_work(L, steps);
    cs_script_check(L);
}

static const cs_pattern_charge pattern_charge = ch_pattern;

void cs_script_charge_libs(lua_State *L) {
    lua_getglobal(L, LUA_STRLIBNAME);
    cs_pattern_open(L, &pattern_charge);
    lua_pop(L, 1);
    wrap(L, LUA_STRLIBNAME, "byte", ch_subject);
    wrap(L, LUA_UTF8LIBNAME, "len", ch_subject);
    wrap(L, LUA_UTF8LIBNAME, "codepoint", ch_subject);
    wrap(L, LUA_UTF8LIBNAME, "offset", ch_subject);
    lua_pushglobaltable(L);
    lua_getfield(L, -1, "tonumber");
    lua_pushcclosure(L, ch_tonumber, 1);
    lua_setfield(L, -2, "tonumber");
    lua_pop(L, 1);
    wrap(L, LUA_TABLIBNAME, "concat", ch_concat);
    wrap(L, LUA_TABLIBNAME, "unpack", ch_unpack);
    wrap(L, LUA_TABLIBNAME, "insert", ch_shift);
    wrap(L, LUA_TABLIBNAME, "remove", ch_shift);
    wrap(L, LUA_TABLIBNAME, "sort", ch_sort);
}
