/* fuzz_pattern.c -- commsim's counted string patterns (script_pattern.c)
 * against Lua's own: any input on which find, match, gmatch or gsub return
 * or raise something else than Lua's aborts.
 *
 * Input: one byte choosing the start (init - 8), then the pattern, a 0x01
 * byte, and the subject. Ours runs first under a budget of steps; an input
 * that spends it (a pattern that backtracks) is not handed to Lua's, which
 * could run for hours.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lualib.h>

#include "../unit/pattern_state.h"

#define BUDGET 200000

static uint64_t steps;

static void count(lua_State *L, uint64_t n) {
    steps += n;
    if (steps > BUDGET) luaL_error(L, "over the budget");
}

static const cs_pattern_charge counter = count;

/* compare(s, p, init): nil when ours and Lua's agree (or ours ran out of
 * steps), else what differed. */
static const char *const compare_src =
    "local function pack(ok, ...) return {ok = ok, n = select('#', ...), ...} end\n"
    "local function all(gmatch, s, p, init)\n"
    "  local out = {}\n"
    "  for a, b in gmatch(s, p, init) do\n"
    "    out[#out + 1] = tostring(a) .. '|' .. tostring(b)\n"
    "    if #out == 20 then break end\n"
    "  end\n"
    "  return table.concat(out, ';')\n"
    "end\n"
    "local function join(...) return table.concat({...}, '/') end\n"
    "local calls = {\n"
    "  function(l, s, p, i) return l.find(s, p, i) end,\n"
    "  function(l, s, p, i) return l.find(s, p, i, true) end,\n"
    "  function(l, s, p, i) return l.match(s, p, i) end,\n"
    "  function(l, s, p, i) return all(l.gmatch, s, p, i) end,\n"
    "  function(l, s, p, i) return l.gsub(s, p, '<%0%1>', i) end,\n"
    "  function(l, s, p, i) return l.gsub(s, p, join) end,\n"
    "}\n"
    "return function(s, p, init)\n"
    "  for k, call in ipairs(calls) do\n"
    "    local b = pack(pcall(call, pat, s, p, init))\n"
    "    if not b.ok and tostring(b[1]):find('over the budget', 1, true) then return nil end\n"
    "    if not b.ok then b[1] = string.gsub(b[1], \"'pat%.\", \"'string.\") end\n"
    "    local a = pack(pcall(call, string, s, p, init))\n"
    "    local same = a.ok == b.ok and a.n == b.n\n"
    "    for i = 1, a.n do same = same and a[i] == b[i] end\n"
    "    if not same then\n"
    "      return string.format('call %d: Lua %s %q, ours %s %q', k, tostring(a.ok), tostring(a[1]),\n"
    "                           tostring(b.ok), tostring(b[1]))\n"
    "    end\n"
    "  end\n"
    "end\n";

static lua_State *L;

static void setup(void) {
    L = pattern_state(&counter);
    if (!L) abort();
    if (luaL_dostring(L, compare_src) != LUA_OK) {
        fprintf(stderr, "fuzz_pattern: %s\n", lua_tostring(L, -1));
        abort();
    }
    lua_setglobal(L, "compare");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!L) setup();
    if (size < 1) return 0;
    const char *p = (const char *)data + 1;
    const char *sep = memchr(p, 0x01, size - 1);
    size_t lp = sep ? (size_t)(sep - p) : size - 1;
    const char *s = sep ? sep + 1 : "";
    size_t ls = sep ? size - 1 - lp - 1 : 0;
    steps = 0;
    lua_getglobal(L, "compare");
    lua_pushlstring(L, s, ls);
    lua_pushlstring(L, p, lp);
    lua_pushinteger(L, (lua_Integer)data[0] - 8);
    if (lua_pcall(L, 3, 1, 0) != LUA_OK || !lua_isnil(L, -1)) {
        fprintf(stderr, "fuzz_pattern: %s\n", lua_tostring(L, -1));
        abort();
    }
    lua_pop(L, 1);
    lua_gc(L, LUA_GCSTEP, 0);
    return 0;
}
