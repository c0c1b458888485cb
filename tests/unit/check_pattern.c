/* check_pattern.c -- the counted string patterns (script_pattern.c): the same
 * results and errors as Lua's own string.find, match, gmatch and gsub, over
 * chosen cases and twenty thousand generated ones, and work charged as it is
 * done, so that a pattern that backtracks or a plain find that compares at
 * every byte stops at its budget.
 *
 * The state here is a bare Lua with its standard libraries; the functions
 * under test are in the global table 'pat' (a module, as 'string' is: an
 * argument error names 'pat.gsub' where Lua's names 'string.gsub'), charged
 * to a counter that raises once it passes 'limit'.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lualib.h>

#include "pattern_state.h"
#include "run_suite.h"

static uint64_t charged, limit;

static void count(lua_State *L, uint64_t steps) {
    charged += steps;
    if (limit && charged > limit) luaL_error(L, "over the budget");
}

static const cs_pattern_charge counter = count;

static lua_State *state(void) {
    lua_State *L = pattern_state(&counter);
    ck_assert_ptr_nonnull(L);
    charged = 0;
    limit = 0;
    return L;
}

/* Run chunk; NULL when it ran, else its error (static storage). */
static const char *run(lua_State *L, const char *chunk) {
    static char err[4096];
    if (luaL_dostring(L, chunk) == LUA_OK) return NULL;
    snprintf(err, sizeof err, "%s", lua_tostring(L, -1));
    return err;
}

/* check(name, lua_fn, our_fn, ...): both called under pcall with the same
 * arguments must return the same values, or raise the same message. */
static const char *const compare_lib =
    "local function pack(ok, ...) return {ok = ok, n = select('#', ...), ...} end\n"
    "local function same(a, b)\n"
    "  if a.ok ~= b.ok or a.n ~= b.n then return false end\n"
    "  for i = 1, a.n do if a[i] ~= b[i] then return false end end\n"
    "  return true\n"
    "end\n"
    "local function show(r)\n"
    "  local t = {}\n"
    "  for i = 1, r.n do t[i] = string.format('%q', tostring(r[i])) end\n"
    "  return (r.ok and 'returns ' or 'raises ') .. table.concat(t, ', ')\n"
    "end\n"
    "cases = 0\n"
    "function check(what, f, g, ...)\n"
    "  cases = cases + 1\n"
    "  local a, b = pack(pcall(f, ...)), pack(pcall(g, ...))\n"
    "  if not b.ok then b[1] = string.gsub(b[1], \"'pat%.\", \"'string.\") end\n"
    "  if not same(a, b) then\n"
    "    local args = {}\n"
    "    for i = 1, select('#', ...) do args[i] = string.format('%q', tostring((select(i, ...)))) end\n"
    "    error(string.format('%s(%s): Lua %s, ours %s', what, table.concat(args, ', '), show(a), show(b)), 0)\n"
    "  end\n"
    "end\n"
    /* gmatch's whole sequence as one string (at most 40 matches) */
    "function all(gmatch)\n"
    "  return function(s, p, init)\n"
    "    local out = {}\n"
    "    for a, b, c in gmatch(s, p, init) do\n"
    "      out[#out + 1] = tostring(a) .. '|' .. tostring(b) .. '|' .. tostring(c)\n"
    "      if #out == 40 then break end\n"
    "    end\n"
    "    return table.concat(out, ';')\n"
    "  end\n"
    "end\n"
    "function joined(gsub)\n"
    "  return function(s, p, n)\n"
    "    return gsub(s, p, function(...) return table.concat({...}, '/') end, n)\n"
    "  end\n"
    "end\n"
    "function every(s, p, init)\n"
    "  check('find', string.find, pat.find, s, p, init)\n"
    "  check('find plain', string.find, pat.find, s, p, init, true)\n"
    "  check('match', string.match, pat.match, s, p, init)\n"
    "  check('gmatch', all(string.gmatch), all(pat.gmatch), s, p, init)\n"
    "  check('gsub', string.gsub, pat.gsub, s, p, '<%0>')\n"
    "  check('gsub %1', string.gsub, pat.gsub, s, p, '[%1%%]', 2)\n"
    "  check('gsub function', joined(string.gsub), joined(pat.gsub), s, p)\n"
    "  check('gsub table', string.gsub, pat.gsub, s, p, {a = 'A', ['1'] = 7, b = false})\n"
    "end\n";

static void load_compare(lua_State *L) {
    const char *err = run(L, compare_lib);
    ck_assert_msg(err == NULL, "%s", err);
}

START_TEST(same_as_lua_chosen) {
    lua_State *L = state();
    load_compare(L);
    const char *err = run(L,
        "local subjects = {'', 'hello world', 'key = value, k2=v2', '  trim me  ',\n"
        "  'THE (quick) (brown (fox))', 'a,b,,c', 'aaa', '2026-11-29', 'x\\0y\\0z', 'f(a(b)c)d',\n"
        "  'THE (quick) fox', 'abcabc', 'one two  three'}\n"
        "local patterns = {'', 'o', 'o w', '(o)%s(w)', '(%w+)%s*=%s*(%w+)', '^%s*(.-)%s*$',\n"
        "  '%((%a+)%)', '%b()', '[^,]*', ',', '%f[%w]%w+', '%f[%a]', 'a*', 'a-', 'a?', 'a+b?',\n"
        "  '(%d+)-(%d+)-(%d+)', '()', '()a()', '(a)%1', '(a*(.)%w(%s*))', '^a', 'a$', '$', '^',\n"
        "  '[%a-]', '[a-c]+', '[]]', '[^]]', '[%]]', '.-%z', '%z', '\\0', 'y%z', '[\\0y]+',\n"
        "  '(abc)%1', '%u+', '%l+', '%x+', '%p', '%c', '%g+', '%S+', '%W', '%D+',\n"
        "  '%', '[a', '(', ')', '%1', '(%1)', '%b', '%ba', '%f', '%fa', '(()', 'a)',\n"
        "  '%2', '((((((((((((((((((((((((((((((((((a))))))))))))))))))))))))))))))))))'}\n"
        "for _, s in ipairs(subjects) do\n"
        "  for _, p in ipairs(patterns) do\n"
        "    for _, init in ipairs({1, 2, 0, -1, -3, 100, -100}) do every(s, p, init) end\n"
        "  end\n"
        "end\n"
        "check('gsub max', string.gsub, pat.gsub, 'abc', '%w', '%0%0', 2)\n"
        "check('gsub bad repl', string.gsub, pat.gsub, 'abc', 'b', true)\n"
        "check('gsub bad %', string.gsub, pat.gsub, 'abc', 'b', '%x')\n"
        "check('gsub bad value', string.gsub, pat.gsub, 'abc', 'b', function() return {} end)\n"
        "check('gsub number repl', string.gsub, pat.gsub, 'abc', 'b', 42)\n"
        "check('gsub position', string.gsub, pat.gsub, 'abc', '()b', '%1')\n"
        "check('find number', string.find, pat.find, 12345, 34)\n"
        "check('deep', string.find, pat.find, ('a'):rep(300), ('a?'):rep(250))\n"
        "check('find no subject', string.find, pat.find)\n"
        "assert(cases > 30000, cases)\n");
    ck_assert_msg(err == NULL, "%s", err);
    lua_close(L);
}
END_TEST

/* Generated patterns over a small alphabet of items, subjects and starts. */
START_TEST(same_as_lua_generated) {
    lua_State *L = state();
    load_compare(L);
    const char *err = run(L,
        "math.randomseed(20261129)\n"
        "local items = {'a', 'b', 'c', '.', '%a', '%d', '%s', '%w', '%A', '%p', '%%', '%.', '[ab]',\n"
        "  '[^a]', '[a-c]', '[%d%s]', '[]]', '[^]]', '[a-]', '%b()', '%f[%w]', '%f[%W]', '(', ')',\n"
        "  '()', '%1', '%2', '^', '$', '-', '*', '+', '?', '%', '[', 'x', '1', ' ', '%z', '\\0'}\n"
        "local reps = {'', '', '', '*', '+', '-', '?'}\n"
        "local chars = {'a', 'b', 'c', '(', ')', '1', ' ', ',', 'x', 'A', ']', '\\0'}\n"
        "local function pick(t) return t[math.random(#t)] end\n"
        "for i = 1, 20000 do\n"
        "  local p, s = {}, {}\n"
        "  for k = 1, math.random(0, 6) do p[k] = pick(items) .. pick(reps) end\n"
        "  for k = 1, math.random(0, 12) do s[k] = pick(chars) end\n"
        "  every(table.concat(s), table.concat(p), math.random(-14, 14))\n"
        "end\n"
        "assert(cases == 20000 * 8, cases)\n");
    ck_assert_msg(err == NULL, "%s", err);
    lua_close(L);
}
END_TEST

/* The pattern that ran for hours inside one call of Lua's stops at its
 * budget, charged within a few thousand steps of it. */
START_TEST(backtracking_stops) {
    lua_State *L = state();
    limit = 1000000;
    const char *err = run(L, "return pat.find(('a'):rep(30), ('a*'):rep(30) .. 'b')");
    ck_assert_ptr_nonnull(err);
    ck_assert_ptr_nonnull(strstr(err, "over the budget"));
    ck_assert_uint_le(charged, limit + 4096);
    charged = 0;
    err = run(L, "for w in pat.gmatch(('a'):rep(30), ('a-'):rep(30) .. 'b') do end");
    ck_assert_ptr_nonnull(err);
    ck_assert_ptr_nonnull(strstr(err, "over the budget"));
    lua_close(L);
}
END_TEST

/* A plain find compares at every byte where the needle's first byte is:
 * n times m bytes when it never matches. */
START_TEST(plain_find_charged) {
    lua_State *L = state();
    limit = 10000000;
    const char *err = run(L, "return pat.find(('a'):rep(100000), ('a'):rep(1000) .. 'b', 1, true)");
    ck_assert_ptr_nonnull(err);
    ck_assert_ptr_nonnull(strstr(err, "over the budget"));
    lua_close(L);
}
END_TEST

/* An ordinary scan costs about a step or two per byte, and is charged by the
 * time the call returns. */
START_TEST(linear_work_charged) {
    lua_State *L = state();
    const char *err = run(L, "local s = ('x'):rep(9999) .. 'y'\n"
                             "assert(pat.find(s, 'y', 1, true) == 10000)\n"
                             "assert(pat.find(s, '%a-y') == 1)\n");
    ck_assert_msg(err == NULL, "%s", err);
    ck_assert_uint_ge(charged, 10000 + 2 * 10000);
    ck_assert_uint_le(charged, 10000 + 4 * 10000);
    charged = 0;
    err = run(L, "local s = ('x'):rep(10000)\n"
                 "assert(select(2, pat.gsub(s, 'x', 'y')) == 10000)\n"
                 "assert(pat.match(s, '^(x*)$') == s)\n");
    ck_assert_msg(err == NULL, "%s", err);
    ck_assert_uint_ge(charged, 2 * 10000);
    ck_assert_uint_le(charged, 8 * 10000);
    lua_close(L);
}
END_TEST

static Suite *pattern_suite(void) {
    Suite *s = suite_create("pattern");
    TCase *tc = tcase_create("pattern");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, same_as_lua_chosen);
    tcase_add_test(tc, same_as_lua_generated);
    tcase_add_test(tc, backtracking_stops);
    tcase_add_test(tc, plain_find_charged);
    tcase_add_test(tc, linear_work_charged);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(pattern_suite()); }
