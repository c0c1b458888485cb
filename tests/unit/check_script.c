/* check_script.c -- the Lua binding through scripts: the sandbox, the memory
 * and instruction budgets, error messages and positions, aborts, the tensor
 * and dist libraries, and the script header parser.
 *
 * Each case runs a script held in a string on a small thread-engine world with
 * a monitor (so deadlocks end the run) and a capture sink that records what the
 * ranks printed, their errors and exits, for the assertions.
 */
#include <check.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "header.h"
#include "monitor.h"
#include "script.h"
#include "run_suite.h"

#define MAX_RANKS 8
#define MAX_EVENTS 1024

/* ---- capture: the events the assertions look at */

typedef struct rec {
    cs_event_type type;
    int rank, line, status;
    cs_op op;
    char text[512];
} rec;

typedef struct capture {
    rec ev[MAX_EVENTS];
    int n;
} capture;

static void capture_emit(void *ud, const cs_event *ev) {
    capture *c = ud;
    if (ev->type != CS_EV_PRINT && ev->type != CS_EV_ERROR && ev->type != CS_EV_EXIT &&
        ev->type != CS_EV_POST)
        return;
    if (c->n == MAX_EVENTS) return;
    rec *r = &c->ev[c->n++];
    *r = (rec){.type = ev->type, .rank = ev->rank, .line = ev->line, .status = ev->status,
               .op = ev->op};
    snprintf(r->text, sizeof r->text, "%s", ev->text ? ev->text : "");
}

/* ---- running a script */

typedef struct result {
    int status[MAX_RANKS];     /* cs_script_run's return, per rank */
    size_t used[MAX_RANKS];    /* budget bytes still charged after the run */
    cs_end_reason end;
    capture cap;
} result;

typedef struct job {
    cs_world *w;
    int rank;
    const cs_script *s;
    const cs_script_limits *lim;
    int status;
} job;

static void on_deadlock(void *ud) { cs_world_abort(ud, CS_END_DEADLOCK); }

static void *job_main(void *p) {
    job *j = p;
    j->status = cs_script_run(cs_world_rank(j->w, j->rank), j->s, j->lim);
    return NULL;
}

/* Run src as script name on n ranks. mem/steps 0: the defaults. */
static result *run_opts(const char *name, const char *src, int n, const char *mode, size_t mem,
                        uint64_t steps) {
    result *res = calloc(1, sizeof *res);
    ck_assert_ptr_nonnull(res);
    cs_script s;
    ck_assert_int_eq(cs_script_from_string(&s, name, src), 0);
    cs_bus bus;
    cs_monitor mon;
    char err[256];
    cs_world_config cfg = {.world = n, .engine = "thread", .script = name, .seed = 42};
    ck_assert(cs_send_mode_parse(mode, &cfg.mode));
    ck_assert_int_eq(cs_bus_init(&bus, n), 0);
    ck_assert_int_eq(cs_monitor_init(&mon, n), 0);
    cs_world *w = cs_world_new(&cfg, &bus, err, sizeof err);
    ck_assert_msg(w != NULL, "%s", err);
    mon.bus = &bus;
    mon.on_deadlock = on_deadlock;
    mon.ud = w;
    cs_bus_subscribe(&bus, cs_monitor_sink(&mon));
    cs_bus_subscribe(&bus, (cs_sink){capture_emit, &res->cap});
    cs_script_limits lim = {.mem_limit = mem ? mem : CS_DEFAULT_MEM_LIMIT,
                            .step_limit = steps ? steps : CS_DEFAULT_STEP_LIMIT};
    job jobs[MAX_RANKS];
    pthread_t tid[MAX_RANKS];
    for (int i = 0; i < n; i++) {
        jobs[i] = (job){.w = w, .rank = i, .s = &s, .lim = &lim};
        if (n == 1) job_main(&jobs[i]);
        else ck_assert_int_eq(pthread_create(&tid[i], NULL, job_main, &jobs[i]), 0);
    }
    for (int i = 0; n > 1 && i < n; i++) pthread_join(tid[i], NULL);
    for (int i = 0; i < n; i++) {
        res->status[i] = jobs[i].status;
        res->used[i] = cs_rank_budget(cs_world_rank(w, i))->used;
    }
    res->end = cs_world_end_reason(w);
    cs_world_free(w);
    cs_monitor_destroy(&mon);
    cs_bus_destroy(&bus);
    cs_script_free(&s);
    return res;
}

static result *run(const char *name, const char *src, int n) {
    return run_opts(name, src, n, "rendezvous", 0, 0);
}

/* The error text of a rank, "" if it reported none. */
static const char *error_of(const result *r, int rank) {
    for (int i = 0; i < r->cap.n; i++)
        if (r->cap.ev[i].type == CS_EV_ERROR && r->cap.ev[i].rank == rank) return r->cap.ev[i].text;
    return "";
}

static int count(const result *r, cs_event_type t, int rank) {
    int k = 0;
    for (int i = 0; i < r->cap.n; i++) k += r->cap.ev[i].type == t && r->cap.ev[i].rank == rank;
    return k;
}

/* The i-th print of a rank. */
static const rec *print_of(const result *r, int rank, int nth) {
    for (int i = 0; i < r->cap.n; i++)
        if (r->cap.ev[i].type == CS_EV_PRINT && r->cap.ev[i].rank == rank && nth-- == 0)
            return &r->cap.ev[i];
    ck_abort_msg("rank %d printed fewer lines than expected", rank);
    return NULL;
}

/* A script that must run to completion on every rank without an error. */
static void expect_ok(const char *name, const char *src, int n) {
    result *r = run(name, src, n);
    for (int i = 0; i < n; i++) {
        ck_assert_msg(r->status[i] == 0, "rank %d: status %d: %s", i, r->status[i], error_of(r, i));
        ck_assert_int_eq(count(r, CS_EV_EXIT, i), 1);
        ck_assert_msg(r->used[i] == 0, "rank %d leaves %zu bytes charged", i, r->used[i]);
    }
    ck_assert_int_eq(r->end, CS_END_NONE);
    free(r);
}

/* A one-rank script that must fail with exactly msg and status. */
static void expect_fail(const char *name, const char *src, int status, const char *msg) {
    result *r = run_opts(name, src, 1, "rendezvous", 0, 1000000);
    ck_assert_int_eq(r->status[0], status);
    ck_assert_str_eq(error_of(r, 0), msg);
    ck_assert_int_eq(count(r, CS_EV_EXIT, 0), 1);
    ck_assert_int_eq((int)r->end, status);
    ck_assert_msg(r->used[0] == 0, "%zu bytes still charged", r->used[0]);
    free(r);
}

/* ---- the sandbox */

START_TEST(sandbox_surface) {
    expect_ok("sb.lua",
              "assert(io == nil and os == nil and package == nil and debug == nil)\n"
              "assert(require == nil and dofile == nil and loadfile == nil)\n"
              "assert(string.dump == nil and warn == nil)\n"
              "assert(type(print) == 'function' and type(coroutine.wrap) == 'function')\n"
              "assert(type(utf8.char) == 'function' and math.pi > 3 and table.concat)\n"
              "assert(rank == 0 and world_size == 1)\n"
              "assert(getmetatable(tensor.zeros(1)) == 'tensor')\n"
              /* every object the libraries make: sealed, named */
              "assert(getmetatable(tensor.zeros(1):size()) == 'Size')\n"
              "local w = dist.isend(tensor.zeros(1), 0)\n"
              "assert(getmetatable(w) == 'Work')\n"
              "dist.recv(tensor.zeros(1), 0); w:wait()\n"
              "assert(getmetatable(dist.new_group({0})) == 'ProcessGroup')\n"
              "local cw = dist.all_reduce(tensor.zeros(1), {async_op = true})\n"
              "assert(getmetatable(cw) == 'CollectiveWork'); cw:wait()\n"
              "assert(not pcall(setmetatable, w, {}))\n"
              "assert(collectgarbage('count') > 0)\n"
              "assert(not pcall(collectgarbage, 'stop'))\n"
              "assert(string.rep('', 1 << 60) == '')\n",
              1);
}
END_TEST

START_TEST(sandbox_load_text_only) {
    expect_ok("load.lua",
              "local f, e = load('\\27Lua\\x54\\0\\x19\\x93')\n"
              "assert(f == nil and e:find('binary'), e)\n"
              "f, e = load('\\27Lua', 'x', 'b')\n"
              "assert(f == nil and e:find('binary'), e)\n"
              "f = load('return tensor ~= nil and rank', 'chunk', 'b')\n"
              "assert(f() == 0)\n"
              "f = load('return x', 'c', 't', {x = 7})\n"
              "assert(f() == 7)\n",
              1);
}
END_TEST

START_TEST(sandbox_io_refused) {
    expect_fail("esc.lua", "local f = io.open('/etc/passwd')\n", CS_END_ERROR,
                "esc.lua:1: attempt to index a nil value (global 'io')");
}
END_TEST

START_TEST(sandbox_os_refused) {
    expect_fail("esc.lua", "\nos.execute('true')\n", CS_END_ERROR,
                "esc.lua:2: attempt to index a nil value (global 'os')");
}
END_TEST

START_TEST(sandbox_require_refused) {
    expect_fail("esc.lua", "require('io')\n", CS_END_ERROR,
                "esc.lua:1: attempt to call a nil value (global 'require')");
}
END_TEST

START_TEST(sandbox_gc_metamethod_refused) {
    expect_fail("gc.lua", "setmetatable({}, {__gc = function() while true do end end})\n",
                CS_END_ERROR,
                "gc.lua:1: setmetatable: __gc metamethods are not available in lesson scripts");
}
END_TEST

/* ---- budgets */

START_TEST(memory_bomb) {
    result *r = run_opts("bomb.lua", "local x = 1\nlocal s = string.rep('x', 1 << 30)\n", 1,
                         "rendezvous", (size_t)64 << 20, 0);
    ck_assert_int_eq(r->status[0], CS_END_TIMEOUT);
    ck_assert_str_eq(error_of(r, 0), "bomb.lua:2: memory limit exceeded (64 MiB per rank; --mem-limit)");
    ck_assert_int_eq(r->end, CS_END_TIMEOUT);
    ck_assert_uint_eq(r->used[0], 0);
    free(r);
}
END_TEST

START_TEST(memory_doubling) {
    result *r = run_opts("dbl.lua", "local s = 'x'\nwhile true do\n  s = s .. s\nend\n", 1,
                         "rendezvous", (size_t)16 << 20, 0);
    ck_assert_int_eq(r->status[0], CS_END_TIMEOUT);
    ck_assert_str_eq(error_of(r, 0), "dbl.lua:3: memory limit exceeded (16 MiB per rank; --mem-limit)");
    free(r);
}
END_TEST

/* A memory error caught by pcall is still the end of the rank. */
START_TEST(memory_pcall_caught) {
    result *r = run_opts("mc.lua",
                         "local ok = pcall(string.rep, 'x', 1 << 30)\n"
                         "while true do local t = {} end\n",
                         1, "rendezvous", (size_t)16 << 20, 0);
    ck_assert_int_eq(r->status[0], CS_END_TIMEOUT);
    ck_assert_ptr_nonnull(strstr(error_of(r, 0), "memory limit exceeded (16 MiB per rank"));
    free(r);
}
END_TEST

START_TEST(memory_tensors_kept) {
    result *r = run_opts("tk.lua", "local ts = {}\nfor i = 1, 100 do\n  ts[i] = tensor.zeros(1 << 20)\nend\n",
                         1, "rendezvous", (size_t)32 << 20, 0);
    ck_assert_int_eq(r->status[0], CS_END_TIMEOUT);
    ck_assert_str_eq(error_of(r, 0), "tk.lua:3: memory limit exceeded (32 MiB per rank; --mem-limit)");
    ck_assert_uint_eq(r->used[0], 0);
    free(r);
}
END_TEST

/* Garbage tensors are collected when the budget runs short: no false alarm. */
START_TEST(memory_tensors_garbage) {
    result *r = run_opts("tg.lua", "for i = 1, 200 do local t = tensor.ones(1 << 20) end\n", 1,
                         "rendezvous", (size_t)32 << 20, 0);
    ck_assert_msg(r->status[0] == 0, "%s", error_of(r, 0));
    ck_assert_uint_eq(r->used[0], 0);
    free(r);
}
END_TEST

START_TEST(steps_infinite_loop) {
    expect_fail("loop.lua", "local i = 0\nwhile true do i = i + 1 end\n", CS_END_TIMEOUT,
                "loop.lua:2: instruction budget exceeded (1000000 steps; --step-limit)");
}
END_TEST

START_TEST(steps_pcall_cannot_swallow) {
    result *r = run_opts("pc.lua",
                         "while true do\n"
                         "  pcall(function() while true do end end)\n"
                         "  xpcall(function() while true do end end, function() while true do end end)\n"
                         "end\n",
                         1, "rendezvous", 0, 1000000);
    ck_assert_int_eq(r->status[0], CS_END_TIMEOUT);
    ck_assert_ptr_nonnull(strstr(error_of(r, 0), "instruction budget exceeded (1000000 steps"));
    free(r);
}
END_TEST

START_TEST(steps_in_coroutines) {
    result *r = run_opts("co.lua",
                         "local co = coroutine.wrap(function() while true do end end)\n"
                         "pcall(co)\n"
                         "while true do coroutine.wrap(function() for i = 1, 500 do end end)() end\n",
                         1, "rendezvous", 0, 1000000);
    ck_assert_int_eq(r->status[0], CS_END_TIMEOUT);
    ck_assert_ptr_nonnull(strstr(error_of(r, 0), "instruction budget exceeded"));
    free(r);
}
END_TEST

START_TEST(steps_table_move) {
    expect_fail("mv.lua", "table.move({}, 1, 1 << 40, 1, {})\n", CS_END_TIMEOUT,
                "mv.lua:1: instruction budget exceeded (1000000 steps; --step-limit)");
}
END_TEST

/* A pattern that backtracks works in C, where no hook fires: its steps are
 * counted as it matches (Lua's own find would run for hours here). */
START_TEST(steps_backtracking_pattern) {
    expect_fail("bt.lua", "local s = ('a'):rep(30)\nlocal p = ('a*'):rep(30) .. 'b'\nprint(s:find(p))\n",
                CS_END_TIMEOUT, "bt.lua:3: instruction budget exceeded (1000000 steps; --step-limit)");
}
END_TEST

/* xpcall's handler runs with the hook off after a budget error: not called. */
START_TEST(steps_xpcall_handler) {
    result *r = run_opts("xh.lua",
                         "xpcall(function() while true do end end, function() while true do end end)\n",
                         1, "rendezvous", 0, 1000000);
    ck_assert_int_eq(r->status[0], CS_END_TIMEOUT);
    ck_assert_str_eq(error_of(r, 0), "xh.lua:1: instruction budget exceeded (1000000 steps; --step-limit)");
    free(r);
}
END_TEST

/* A wrapped coroutine stopped by the budget is not closed: its __close would
 * run with the hook off. */
START_TEST(steps_wrap_close) {
    result *r = run_opts("wc.lua",
                         "local w = coroutine.wrap(function()\n"
                         "  local g <close> = setmetatable({}, {__close = function() while true do end end})\n"
                         "  while true do end\n"
                         "end)\n"
                         "w()\n",
                         1, "rendezvous", 0, 1000000);
    ck_assert_int_eq(r->status[0], CS_END_TIMEOUT);
    ck_assert_ptr_nonnull(strstr(error_of(r, 0), "instruction budget exceeded"));
    free(r);
}
END_TEST

/* One call of gsub over 1 MiB is one instruction, but its work is charged. */
START_TEST(steps_string_work) {
    expect_fail("gs.lua", "local s = string.rep('x', 1 << 20)\nwhile true do s:gsub('y', 'z') end\n",
                CS_END_TIMEOUT, "gs.lua:2: instruction budget exceeded (1000000 steps; --step-limit)");
}
END_TEST

/* The wrappers keep Lua's behaviour: yields across pcall, handlers, errors. */
START_TEST(sandbox_wrappers_transparent) {
    result *r = run("tr.lua",
                    "local co = coroutine.wrap(function(a)\n"
                    "  local ok, v = pcall(function() return coroutine.yield(a + 1) end)\n"
                    "  return ok, v\n"
                    "end)\n"
                    "print(co(1))\n"
                    "print(co(10))\n"
                    "print(xpcall(error, function(m) return 'handled: ' .. m end, 'boom'))\n"
                    "print(select('#', pcall(function() return 1, 2, 3 end)))\n"
                    "print(pcall(coroutine.wrap(function() error('e') end)))\n"
                    "print(pcall(pcall))\n"
                    "print(pcall(string.find))\n",
                    1);
    ck_assert_msg(r->status[0] == 0, "%s", error_of(r, 0));
    ck_assert_str_eq(print_of(r, 0, 0)->text, "2");
    ck_assert_str_eq(print_of(r, 0, 1)->text, "true\t10");
    ck_assert_str_eq(print_of(r, 0, 2)->text, "false\thandled: boom");
    ck_assert_str_eq(print_of(r, 0, 3)->text, "4");
    ck_assert_str_eq(print_of(r, 0, 4)->text, "false\ttr.lua:9: e");
    ck_assert_str_eq(print_of(r, 0, 5)->text, "false\tbad argument #1 to 'pcall' (value expected)");
    ck_assert_str_eq(print_of(r, 0, 6)->text,
                     "false\tbad argument #1 to 'string.find' (string expected, got no value)");
    free(r);
}
END_TEST

/* A memory error caught on the last line still ends the rank, unseen. */
START_TEST(memory_pcall_last_line) {
    result *r = run_opts("ml.lua", "print(pcall(string.rep, 'x', 1 << 30))\n", 1, "rendezvous",
                         (size_t)16 << 20, 0);
    ck_assert_int_eq(r->status[0], CS_END_TIMEOUT);
    ck_assert_str_eq(error_of(r, 0), "ml.lua:1: memory limit exceeded (16 MiB per rank; --mem-limit)");
    ck_assert_int_eq(count(r, CS_EV_PRINT, 0), 0);
    free(r);
}
END_TEST

/* An element count past 64 bits is the script's error, not a budget. */
START_TEST(tensor_count_overflow) {
    expect_fail("ov.lua", "local t = tensor.zeros(2^40, 2^40)\n", CS_END_ERROR,
                "ov.lua:1: tensor too large: its element count overflows 64 bits");
}
END_TEST

/* Eager copies count against the sender's cap until received. */
START_TEST(memory_eager_buffers) {
    result *r = run_opts("eb.lua",
                         "local t = tensor.zeros(256 * 1024)\n"
                         "if rank == 0 then\n"
                         "  for i = 1, 100 do dist.isend(t, 1) end\n"
                         "end\n",
                         2, "eager", (size_t)16 << 20, 0);
    ck_assert_int_eq(r->status[0], CS_END_TIMEOUT);
    ck_assert_str_eq(error_of(r, 0),
                     "eb.lua:3: memory limit exceeded (16 MiB per rank; --mem-limit): no room to "
                     "buffer an eager send of 1048576 bytes (eager messages not yet received count "
                     "against their sender's cap)");
    free(r);
    r = run_opts("er.lua",
                 "local t = tensor.zeros(256 * 1024)\n"
                 "for i = 1, 100 do\n"
                 "  if rank == 0 then\n"
                 "    for k = 1, 8 do dist.send(t, 1) end\n"
                 "    dist.recv(t, 1)\n"
                 "  else\n"
                 "    for k = 1, 8 do dist.recv(t, 0) end\n"
                 "    dist.send(t, 0)\n"
                 "  end\n"
                 "end\n",
                 2, "eager", (size_t)16 << 20, 0);
    ck_assert_msg(r->status[0] == 0 && r->status[1] == 0, "%s", error_of(r, 0));
    ck_assert_uint_eq(r->used[0], 0);
    free(r);
}
END_TEST

/* ---- errors and their positions */

START_TEST(error_syntax) {
    expect_fail("syn.lua", "local x = 1\nlocal = 2\n", CS_END_ERROR,
                "syn.lua:2: <name> expected near '='");
}
END_TEST

/* A Python habit gets Lua's message and what the script likely meant; other
 * errors get Lua's message alone. */
START_TEST(error_python_hints) {
    expect_fail("kw.lua", "local t = tensor.zeros(1)\ndist.all_reduce(t, op=dist.ReduceOp.SUM)\n",
                CS_END_ERROR,
                "kw.lua:2: ')' expected near '='; Lua has no keyword arguments: "
                "dist.all_reduce(t, dist.ReduceOp.SUM); options go in a table, as in dist.send(t, 1, {tag = 7})");
    expect_fail("dc.lua", "local t = {\"a\": 1}\n", CS_END_ERROR,
                "dc.lua:1: '}' expected near ':'; a Lua table is {a = 1} or {[\"a\"] = 1}: = where Python's "
                "dict has :");
    expect_fail("inc.lua", "local x = 1\nx += 1\n", CS_END_ERROR,
                "inc.lua:2: syntax error near '+'; Lua has no +=: x = x + 1");
    expect_fail("rg.lua", "\nfor i in range(4) do end\n", CS_END_ERROR,
                "rg.lua:2: attempt to call a nil value (global 'range'); Lua counts with for i = 0, n - 1 do ... end");
    expect_fail("th.lua", "local t = torch.zeros(4)\n", CS_END_ERROR,
                "th.lua:1: attempt to index a nil value (global 'torch'); there is no torch: tensors come from "
                "tensor (tensor.zeros(4), tensor.from({1, 2})), the communication from dist");
    expect_fail("sh.lua", "local t = tensor.zeros(4)\nlocal n = t.shape[0] + 1\n", CS_END_ERROR,
                "sh.lua:2: attempt to perform arithmetic on a nil value (field 'integer index'); "
                "Lua counts from 1: t.shape[1] is torch's t.shape[0], list[1] the first");
    expect_fail("ip.lua", "dist.init_process_group('gloo')\n", CS_END_ERROR,
                "ip.lua:1: attempt to call a nil value (field 'init_process_group'); the process group is set "
                "up before the script runs (rank, world_size and dist are ready): leave the call out");
    /* (an __index that indexes its own table: Lua's C stack, long before
     * the test's memory cap that a Lua recursion reaches first) */
    expect_fail("rec.lua", "local t = setmetatable({}, {__index = function(t, k) return t[k] end})\n"
                           "print(t.x)\n", CS_END_ERROR,
                "rec.lua:1: C stack overflow; a function (or a metamethod) calls itself without end: give "
                "the recursion a case that returns without calling it again");
    /* Python's True, False and None read as nil in Lua: a loop on True would
     * silently not run */
    expect_fail("tr.lua", "local n = 0\nwhile True do n = n + 1 end\n", CS_END_ERROR,
                "tr.lua:2: True is Python's, not Lua's: Lua writes it true");
    expect_fail("no.lua", "local x\nif x == None then end\n", CS_END_ERROR,
                "no.lua:2: None is Python's, not Lua's: Lua writes it nil");
    /* other absent globals are nil; a script's own metatable on _G replaces ours */
    expect_ok("g.lua", "assert(undefined_name == nil and rawget(_G, 'True') == nil)\n"
                       "setmetatable(_G, nil)\nassert(False == nil)\n", 1);
    /* the same message on a line without the habit: no hint */
    expect_fail("nh.lua", "local t = {}\nlocal n = t[1] + 1\n", CS_END_ERROR,
                "nh.lua:2: attempt to perform arithmetic on a nil value (field 'integer index')");
    expect_fail("sy.lua", "local x = 1 +\n", CS_END_ERROR, "sy.lua:2: unexpected symbol near <eof>");
}
END_TEST

START_TEST(error_runtime) {
    expect_fail("rt.lua", "local t\n\nprint(t.x)\n", CS_END_ERROR,
                "rt.lua:3: attempt to index a nil value (local 't')");
}
END_TEST

START_TEST(error_call) {
    expect_fail("e.lua", "local function f()\n  error('boom')\nend\nf()\n", CS_END_ERROR,
                "e.lua:2: boom");
}
END_TEST

START_TEST(error_without_position) {
    expect_fail("e0.lua", "\nerror('plain', 0)\n", CS_END_ERROR, "e0.lua:2: plain");
}
END_TEST

START_TEST(error_object) {
    expect_fail("eo.lua", "error({code = 1})\n", CS_END_ERROR,
                "eo.lua:1: (error object is a table value)");
}
END_TEST

START_TEST(error_yield_outside) {
    expect_fail("y.lua", "coroutine.yield(1)\n", CS_END_ERROR,
                "y.lua:1: attempt to yield from outside a coroutine");
}
END_TEST

START_TEST(error_bad_destination) {
    result *r = run("ring.lua", "local t = tensor.zeros(4)\n"
                                "if rank == 0 then\n"
                                "  dist.send(t, world_size)\n"
                                "end\n", 2);
    ck_assert_int_eq(r->status[0], CS_END_ERROR);
    ck_assert_str_eq(error_of(r, 0), "ring.lua:3: dist.send: destination 2 is outside the world (ranks 0 to 1)");
    ck_assert_int_eq(r->end, CS_END_ERROR);
    free(r);
}
END_TEST

/* dist.new_group() with no argument is every rank (it read its own buffer
 * as the list of ranks and crashed the process) */
START_TEST(new_group_every_rank) {
    expect_ok("ng.lua", "local g = dist.new_group()\n"
                        "assert(dist.get_world_size(g) == 3 and dist.get_rank(g) == rank)\n"
                        "local t = tensor.ones(1)\n"
                        "dist.all_reduce(t, {group = g})\n"
                        "assert(t[0] == 3)\n",
              3);
}
END_TEST

/* torch passes group and async_op by position; here they are options */
START_TEST(error_option_by_position) {
    expect_fail("pos.lua", "local g = dist.new_group()\ndist.all_reduce(tensor.ones(1), ReduceOp.SUM, g)\n",
                CS_END_ERROR, "pos.lua:2: dist.all_reduce: options must be a table (got ProcessGroup): "
                              "a group goes in the options: {group = g}");
}
END_TEST

START_TEST(error_option_typo) {
    expect_fail("typo.lua", "local t = tensor.zeros(4)\ndist.send(t, 0, {tga = 1})\n", CS_END_ERROR,
                "typo.lua:2: dist.send: unknown option 'tga' (expected tag)");
}
END_TEST

START_TEST(error_index_out_of_range) {
    expect_fail("ix.lua", "local t = tensor.zeros(4)\nlocal x = t[4]\n", CS_END_ERROR,
                "ix.lua:2: index 4 is out of bounds for dimension 0 with size 4");
}
END_TEST

START_TEST(error_dim_past_int) {
    /* a dim no int holds is said as given, sign and all */
    expect_fail("sd.lua", "local t = tensor.arange(4)\nt:select(-2^62, 0)\n", CS_END_ERROR,
                "sd.lua:2: Dimension out of range (expected to be in range of [-1, 0], but got "
                "-4611686018427387904)");
    expect_fail("nd.lua", "tensor.arange(4):narrow(2^40, 0, 1)\n", CS_END_ERROR,
                "nd.lua:1: Dimension out of range (expected to be in range of [-1, 0], but got "
                "1099511627776)");
}
END_TEST

START_TEST(error_load_named_as_script) {
    /* a loaded chunk cannot pass for the script and place an error at a line it has not */
    expect_fail("sp.lua", "load('\\n\\n\\nerror(\\'x\\')', '@sp.lua')()\n", CS_END_ERROR,
                "(load):4: x");
}
END_TEST

START_TEST(error_value_overflows_dtype) {
    /* torch's checked conversion of a scalar: a fill, an element, a factory */
    expect_fail("o1.lua", "tensor.full(1, 2^40, {dtype = 'int32'})\n", CS_END_ERROR,
                "o1.lua:1: value cannot be converted to type int32_t without overflow");
    expect_fail("o2.lua", "local t = tensor.zeros(2, {dtype = 'uint8'})\nt[0] = -1\nt[1] = 256\n",
                CS_END_ERROR, "o2.lua:3: value cannot be converted to type uint8_t without overflow");
    expect_fail("o3.lua", "tensor.zeros(2, {dtype = 'int64'}):fill_(0/0)\n", CS_END_ERROR,
                "o3.lua:1: value cannot be converted to type int64_t without overflow");
    expect_fail("o4.lua", "tensor.from({1, 1e300})\n", CS_END_ERROR,
                "o4.lua:1: value cannot be converted to type float without overflow");
}
END_TEST

START_TEST(error_dtype_option) {
    expect_fail("dt.lua", "tensor.zeros(2, {dtype = 'float16'})\n", CS_END_ERROR,
                "dt.lua:1: tensor.zeros: unknown dtype 'float16' (float32, float64, int32, int64 or uint8)");
    expect_fail("dt.lua", "tensor.ones(2, {dtyp = 'int64'})\n", CS_END_ERROR,
                "dt.lua:1: tensor.ones: unknown option 'dtyp' (expected dtype or device)");
}
END_TEST

/* ---- print */

START_TEST(print_like_lua) {
    result *r = run("p.lua", "\nprint(1, 'a', nil, true, 2.5, tensor.ones(2))\nprint()\n", 1);
    ck_assert_int_eq(r->status[0], 0);
    const rec *p = print_of(r, 0, 0);
    ck_assert_str_eq(p->text, "1\ta\tnil\ttrue\t2.5\ttensor([1., 1.])");
    ck_assert_int_eq(p->line, 2);
    ck_assert_str_eq(print_of(r, 0, 1)->text, "");
    free(r);
}
END_TEST

/* ---- tensors */

START_TEST(tensor_factories) {
    expect_ok("tf.lua",
              "local t = tensor.zeros(10)\n"
              "assert(t:numel() == 10 and t.dtype == 'float32' and #t == 10)\n"
              "local o = tensor.ones(2, 5)\n"
              "assert(o.shape[1] == 2 and o.shape[2] == 5 and o:size(1) == 5 and o:size(-2) == 2)\n"
              "assert(tostring(o.shape) == 'torch.Size([2, 5])' and o.shape == tensor.zeros({2, 5}).shape)\n"
              "local f = tensor.full({2, 3}, 1.5)\n"
              "assert(f:sum() == 9.0 and f:dim() == 2 and f.ndim == 2)\n"
              "assert(tostring(tensor.full(3, 7, {dtype = 'int64'})) == 'tensor([7, 7, 7])')\n"
              "local a = tensor.arange(5)\n"
              "assert(tostring(a) == 'tensor([0., 1., 2., 3., 4.])')\n"
              "assert(tostring(tensor.arange(1, 7, 2, {dtype = tensor.int32})) == "
              "'tensor([1, 3, 5], dtype=torch.int32)')\n"
              "local u = tensor.from({1, 2, 3}, {dtype = 'int64'})\n"
              "assert(math.type(u[0]) == 'integer' and u[2] == 3 and u.dtype == 'int64')\n"
              "assert(math.type(tensor.from({1, 2})[0]) == 'float')\n"
              "local m = tensor.from({{1, 2}, {3, 4}})\n"
              "assert(m.shape[1] == 2 and m[1][0] == 3 and m:tolist()[2][2] == 4)\n"
              "assert(tensor.from(5):item() == 5 and tensor.from(5):dim() == 0)\n"
              "assert(not pcall(tensor.from, {{1, 2}, {3}}))\n"
              "local r1 = tensor.randn(3, 4)\n"
              "assert(r1.shape[2] == 4 and r1:numel() == 12)\n"
              "assert(not tensor.randn(100):equal(tensor.randn(100)))\n"
              "assert(tensor.is_tensor(t) and not tensor.is_tensor({}))\n"
              "assert(tensor.zeros():dim() == 0 and tensor.zeros({}):numel() == 1)\n",
              1);
}
END_TEST

START_TEST(tensor_indexing) {
    expect_ok("ti.lua",
              "local t = tensor.zeros(4)\n"
              "t[0] = 5; t[-1] = 2\n"
              "assert(t[0] == 5.0 and t[3] == 2.0 and math.type(t[0]) == 'float')\n"
              "local ok, e = pcall(function() return t[5] end)\n"
              "assert(not ok and e:find('index 5 is out of bounds for dimension 0 with size 4', 1, true), e)\n"
              "ok, e = pcall(function() t[1.5] = 1 end)\n"
              "assert(not ok and e:find('only integers'), e)\n"
              "local m = tensor.zeros(2, 3)\n"
              "m[1] = 7\n"
              "m[0][2] = 1\n"
              "assert(m:sum() == 22 and m[1][1] == 7)\n"
              "m[0] = tensor.ones(3)\n"
              "assert(m[0]:sum() == 3)\n"
              "local i = tensor.zeros(2, {dtype = 'int64'})\n"
              "i[0] = 9007199254740993\n"
              "assert(i[0] == 9007199254740993 and math.type(i[0]) == 'integer')\n"
              "assert(t.nonexistent == nil)\n"
              "assert(not pcall(function() t.x = 1 end))\n",
              1);
}
END_TEST

START_TEST(tensor_views_and_methods) {
    expect_ok("tv.lua",
              "local t = tensor.arange(10)\n"
              "local v = t:view(2, 5)\n"
              "v[0][0] = 100\n"
              "assert(t[0] == 100, 'views share storage')\n"
              "local n = t:narrow(0, 2, 3)\n"
              "assert(n:numel() == 3 and n[0] == 2)\n"
              "n:fill_(-1)\n"
              "assert(t[2] == -1 and t[4] == -1 and t[5] == 5)\n"
              "local c = t:chunk(4)\n"
              "assert(#c == 4 and c[1]:numel() == 3 and c[4]:numel() == 1)\n"
              "c[2][0] = 42\n"
              "assert(t[3] == 42)\n"
              "assert(#tensor.arange(2):chunk(5) == 2)\n"
              "local k = t:clone(); k[0] = 0\n"
              "assert(t[0] == 100)\n"
              "local u = tensor.zeros(10); u:copy_(t)\n"
              "assert(u:equal(t) and u:allclose(t + 1e-9))\n"
              "assert(t:view(-1, 2).shape[1] == 5)\n"
              "local s = tensor.arange(6):view(2, 3):narrow(1, 0, 2)\n"
              "assert(not s:is_contiguous() and s:contiguous():is_contiguous())\n"
              "assert(s:reshape(4):numel() == 4)\n"
              "assert(tensor.ones(3):to('int64').dtype == 'int64')\n"
              "local f = tensor.from({1.5, 2})\n"
              "assert(f:float() == f and f:double().dtype == 'float64' and f:long().dtype == 'int64')\n"
              "assert(f:int():equal(tensor.from({1, 2}, {dtype = 'int32'})) and f:byte().dtype == 'uint8')\n"
              "assert(tensor.from({-1, 2}):relu():sum() == 2)\n"
              "local r = tensor.from({-1, 2}); r:relu_()\n"
              "assert(r[0] == 0)\n"
              "assert(tensor.from({1, 5, 3}):max() == 5 and tensor.from({1, 5, 3}):min() == 1)\n"
              "assert(tensor.from({1, 2, 3, 6}):mean() == 3)\n"
              "assert(math.type(tensor.from({1, 2}, {dtype = 'int64'}):sum()) == 'integer')\n"
              "assert(not pcall(function() return tensor.zeros(2):item() end))\n"
              "local z = tensor.zeros(3); z:zero_(); z:fill(2)\n"
              "assert(z:sum() == 6)\n",
              1);
}
END_TEST

START_TEST(tensor_arithmetic) {
    expect_ok("ta.lua",
              "local t = tensor.from({1, 2, 3})\n"
              "local u = tensor.from({10, 20, 30})\n"
              "assert((t + u):equal(tensor.from({11, 22, 33})))\n"
              "assert((2 * t):equal(tensor.from({2, 4, 6})) and (t * 2):equal(2 * t))\n"
              "assert((10 - t):equal(tensor.from({9, 8, 7})))\n"
              "assert((u / t):equal(tensor.full(3, 10)))\n"
              "assert((-t):equal(tensor.from({-1, -2, -3})))\n"
              "assert((t ^ 2):equal(tensor.from({1, 4, 9})))\n"
              "assert(t:add(u):sub(u):equal(t) and t:mul(3):div(3):equal(t))\n"
              "local w = t:clone(); w:add_(u); w:sub_(1); w:mul_(2); w:div_(2)\n"
              "assert(w:equal(tensor.from({10, 21, 32})))\n"
              "assert(t:add_(1) == t, 'in-place ops return the tensor itself')\n"
              "local a = tensor.from({{1, 2}, {3, 4}})\n"
              "local b = tensor.from({{5, 6}, {7, 8}})\n"
              "assert(tensor.matmul(a, b):equal(tensor.from({{19, 22}, {43, 50}})))\n"
              "assert(a:matmul(b):equal(tensor.matmul(a, b)))\n"
              "local ok, e = pcall(function() return t + tensor.zeros(2) end)\n"
              "assert(not ok and e:find('must match'), e)\n"
              "ok, e = pcall(function() return t + 'x' end)\n"
              "assert(not ok, e)\n"
              "local i = tensor.from({1, 2}, {dtype = 'int64'})\n"
              "assert((i / 2).dtype == 'float32' and (i * 2).dtype == 'int64')\n",
              1);
}
END_TEST

/* ---- dist */

/* Python's t.add_(1) written in Lua with a dot: the error says to use a
 * colon; tensor.matmul, a function too, and operators keep the plain error */
START_TEST(tensor_dot_call) {
    expect_fail("dot.lua", "local t = tensor.ones(2)\nt.add_(1)\n", CS_END_ERROR,
                "dot.lua:2: bad argument #1 to 'add_' (tensor expected, got number): "
                "call a method with a colon, t:add_(...), not t.add_(...)");
    expect_fail("dot.lua", "local t = tensor.ones(2)\nprint(t.sum())\n", CS_END_ERROR,
                "dot.lua:2: bad argument #1 to 'sum' (tensor expected, got no value): "
                "call a method with a colon, t:sum(...), not t.sum(...)");
    expect_fail("dot.lua", "tensor.matmul(1, tensor.ones(2))\n", CS_END_ERROR,
                "dot.lua:1: bad argument #1 to 'matmul' (tensor expected, got number)");
}
END_TEST

/* Python's work.wait() written in Lua with a dot: the error says to use a colon */
START_TEST(dist_work_dot_call) {
    result *r = run("dot.lua", "local w = dist.irecv(tensor.zeros(1), 0)\nw.is_completed()\n", 1);
    ck_assert_int_eq(r->status[0], CS_END_ERROR);
    ck_assert_str_eq(error_of(r, 0), "dot.lua:2: bad argument #1 to 'is_completed' (Work expected, got no value): "
                                     "call a method with a colon, w:is_completed(), not w.is_completed()");
    free(r);
    expect_fail("dot.lua", "local w = dist.barrier({async_op = true})\n\nw.wait()\n", CS_END_ERROR,
                "dot.lua:3: bad argument #1 to 'wait' (CollectiveWork expected, got no value): "
                "call a method with a colon, w:wait(), not w.wait()");
}
END_TEST

START_TEST(dist_ring) {
    result *r = run("ring.lua",
                    "local t = tensor.full(2, rank)\n"
                    "local got = tensor.zeros(2)\n"
                    "local right, left = (rank + 1) % world_size, (rank - 1) % world_size\n"
                    "local w = dist.isend(t, right)\n"
                    "local src = dist.recv(got, left)\n"
                    "w:wait()\n"
                    "assert(w:is_completed() and src == left)\n"
                    "assert(dist.get_rank() == rank and dist.get_world_size() == world_size)\n"
                    "print(got[0])\n",
                    4);
    for (int i = 0; i < 4; i++) {
        ck_assert_msg(r->status[i] == 0, "rank %d: %s", i, error_of(r, i));
        char want[16];
        snprintf(want, sizeof want, "%d.0", (i + 3) % 4);
        ck_assert_str_eq(print_of(r, i, 0)->text, want);
    }
    /* the post events carry the script lines of the calls */
    for (int i = 0; i < r->cap.n; i++) {
        const rec *e = &r->cap.ev[i];
        if (e->type != CS_EV_POST) continue;
        ck_assert_int_eq(e->line, e->op == CS_OP_ISEND ? 4 : 5);
    }
    free(r);
}
END_TEST

START_TEST(dist_nonblocking) {
    expect_ok("nb.lua",
              "local peer = 1 - rank\n"
              "local out, inn = tensor.full(3, rank + 1), tensor.zeros(3)\n"
              "local ws = {dist.irecv(inn, peer, {tag = 7}), dist.isend(out, peer, {tag = 7})}\n"
              "dist.wait_all(ws)\n"
              "assert(ws[1]:source() == peer and inn[0] == peer + 1)\n"
              "assert(tostring(ws[2]):find('isend'))\n"
              "local any = tensor.zeros(1)\n"
              "if rank == 0 then dist.send(tensor.ones(1), 1) else\n"
              "  assert(dist.recv(any) == 0) end\n"
              "if rank == 0 then dist.send(tensor.ones(1), 1, {tag = 3}) else\n"
              "  assert(dist.recv(any, {tag = 3}) == 0) end\n"
              "local ops = {dist.P2POp(dist.isend, out, peer), dist.P2POp(dist.irecv, inn, peer)}\n"
              "for _, w in ipairs(dist.batch_isend_irecv(ops)) do w:wait() end\n"
              "assert(inn[2] == peer + 1)\n"
              "local t0 = dist.time(); dist.compute(1); assert(dist.time() >= t0)\n",
              2);
}
END_TEST

START_TEST(dist_argument_errors) {
    expect_fail("a.lua", "dist.send(nil, 0)\n", CS_END_ERROR,
                "a.lua:1: dist.send: expected a tensor (got nil)");
    /* a Lua list, as a Python list would be passed */
    expect_fail("a.lua", "dist.send({1, 2}, 0)\n", CS_END_ERROR,
                "a.lua:1: dist.send: expected a tensor, not a Lua table (tensor.from(list) makes one)");
    expect_fail("a.lua", "dist.all_gather({tensor.zeros(1)}, {1})\n", CS_END_ERROR,
                "a.lua:1: dist.all_gather: the input must be a tensor, not a Lua table (tensor.from(list) makes one)");
    expect_fail("a.lua", "local x = tensor.zeros(2) + nil\n", CS_END_ERROR,
                "a.lua:1: tensor arithmetic: the right operand must be a tensor or a number (got nil)");
    expect_fail("a.lua", "dist.recv(tensor.zeros(1), -1)\n", CS_END_ERROR,
                "a.lua:1: dist.recv: source -1 is outside the world (ranks 0 to 0)");
    expect_fail("a.lua", "dist.send(tensor.zeros(1), 0, {tag = -2})\n", CS_END_ERROR,
                "a.lua:1: dist.send: tag must be between 0 and 2147483647 (got -2)");
    expect_fail("a.lua", "dist.send(tensor.zeros(1), 0.5)\n", CS_END_ERROR,
                "a.lua:1: dist.send: destination must be an integer (got 0.5)");
    expect_fail("a.lua", "dist.P2POp(print, tensor.zeros(1), 0)\n", CS_END_ERROR,
                "a.lua:1: dist.P2POp: the operation must be dist.isend or dist.irecv (got function)");
    expect_fail("a.lua", "dist.wait_all({1})\n", CS_END_ERROR,
                "a.lua:1: dist.wait_all: element 1 is not a work handle (got number)");
    expect_fail("a.lua", "dist.compute(-1)\n", CS_END_ERROR,
                "a.lua:1: dist.compute: expected a duration in milliseconds, 0 to 3600000 (an hour) (got -1)");
}
END_TEST

/* ---- aborts: when one rank fails the others unwind silently (status 1) */

START_TEST(abort_blocked_rank) {
    result *r = run("ab.lua", "if rank == 0 then error('boom') end\n"
                              "dist.recv(tensor.zeros(1), 0)\n", 2);
    ck_assert_int_eq(r->status[0], CS_END_ERROR);
    ck_assert_str_eq(error_of(r, 0), "ab.lua:1: boom");
    ck_assert_int_eq(r->status[1], CS_RANK_ABORTED);
    ck_assert_int_eq(count(r, CS_EV_ERROR, 1), 0);
    ck_assert_int_eq(count(r, CS_EV_EXIT, 1), 1);
    ck_assert_int_eq(r->end, CS_END_ERROR);
    free(r);
}
END_TEST

START_TEST(abort_spinning_rank) {
    result *r = run("sp.lua", "if rank == 0 then dist.compute(20) error('boom') end\n"
                              "while true do end\n", 2);
    ck_assert_int_eq(r->status[0], CS_END_ERROR);
    ck_assert_int_eq(r->status[1], CS_RANK_ABORTED);
    ck_assert_int_eq(count(r, CS_EV_ERROR, 1), 0);
    free(r);
}
END_TEST

/* The end of the run reaches a rank inside a pattern that backtracks, with
 * a budget that never runs out. */
START_TEST(abort_rank_in_pattern) {
    result *r = run_opts("bp.lua", "if rank == 0 then dist.compute(20) error('boom') end\n"
                                   "local s, p = ('a'):rep(40), ('a*'):rep(40) .. 'b'\n"
                                   "while true do pcall(string.find, s, p) end\n",
                         2, "rendezvous", 0, UINT64_MAX);
    ck_assert_int_eq(r->status[0], CS_END_ERROR);
    ck_assert_int_eq(r->status[1], CS_RANK_ABORTED);
    ck_assert_int_eq(count(r, CS_EV_ERROR, 1), 0);
    free(r);
}
END_TEST

/* ... and inside a matrix product of minutes (past this suite's timeout): one
 * call of C, which looks as it goes whether the run is ending. */
START_TEST(abort_rank_in_matmul) {
    result *r = run_opts("bm.lua", "if rank == 0 then dist.compute(200) error('boom') end\n"
                                   "local a = tensor.ones(4000, 4000)\n"
                                   "local b = a:matmul(a)\n",
                         2, "rendezvous", 0, UINT64_MAX);
    ck_assert_int_eq(r->status[0], CS_END_ERROR);
    ck_assert_int_eq(r->status[1], CS_RANK_ABORTED);
    free(r);
}
END_TEST

/* A hostile rank catching the abort with pcall still leaves. */
START_TEST(abort_pcall_cannot_swallow) {
    result *r = run("hp.lua", "if rank == 0 then error('boom') end\n"
                              "local t = tensor.zeros(1)\n"
                              "while true do pcall(dist.recv, t, 0) pcall(print, 'x') end\n", 2);
    ck_assert_int_eq(r->status[1], CS_RANK_ABORTED);
    ck_assert_int_eq(count(r, CS_EV_ERROR, 1), 0);
    free(r);
}
END_TEST

START_TEST(abort_deadlock) {
    result *r = run("dl.lua", "local t = tensor.zeros(4)\n"
                              "dist.send(t, 1 - rank)\n"
                              "dist.recv(t, 1 - rank)\n", 2);
    ck_assert_int_eq(r->end, CS_END_DEADLOCK);
    ck_assert_int_eq(r->status[0], CS_RANK_ABORTED);
    ck_assert_int_eq(r->status[1], CS_RANK_ABORTED);
    free(r);
}
END_TEST

/* ---- reproducibility */

START_TEST(randn_reproducible) {
    const char *src = "print(tensor.randn(4), math.random(1000000))\n";
    result *a = run("rr.lua", src, 2), *b = run("rr.lua", src, 2);
    ck_assert_str_eq(print_of(a, 0, 0)->text, print_of(b, 0, 0)->text);
    ck_assert_str_eq(print_of(a, 1, 0)->text, print_of(b, 1, 0)->text);
    ck_assert_str_ne(print_of(a, 0, 0)->text, print_of(a, 1, 0)->text);
    free(a);
    free(b);
}
END_TEST

/* ---- loading from a file */

START_TEST(script_load_file) {
    char path[] = "/tmp/check_script_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    const char *src = "#!/usr/bin/env commsim\nprint('hi')\n";
    ck_assert_int_eq(write(fd, src, strlen(src)), (ssize_t)strlen(src));
    close(fd);
    cs_script s;
    char err[256];
    ck_assert_int_eq(cs_script_load(&s, path, err, sizeof err), 0);
    ck_assert_str_eq(s.name, strrchr(path, '/') + 1);
    ck_assert_uint_eq(s.len, strlen(src));
    cs_script_free(&s);
    unlink(path);
    ck_assert_int_eq(cs_script_load(&s, "/nonexistent/x.lua", err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "cannot open /nonexistent/x.lua"));
    /* the "#!" line is skipped and lines keep their numbers */
    result *r = run("sh.lua", "#!/usr/bin/env commsim\nprint('hi')\n", 1);
    ck_assert_int_eq(r->status[0], 0);
    ck_assert_int_eq(print_of(r, 0, 0)->line, 2);
    free(r);
}
END_TEST

/* ---- the header */

static int header(const char *src, cs_header *h, char *err) {
    return cs_header_parse("h.lua", src, strlen(src), h, err, 256);
}

START_TEST(header_good) {
    cs_header h;
    char err[256];
    ck_assert_int_eq(header("#!/usr/bin/env commsim\n"
                            "--- title: Ring: every rank passes its tensor\n"
                            "--- world: 4\n"
                            "\n"
                            "-- an ordinary comment\n"
                            "--- send-mode: eager:1024\n"
                            "--- expect: ok            (or: deadlock)\n"
                            "--- hint: unknown keys are ignored\n"
                            "local t = 1\n"
                            "--- world: 9\n",
                            &h, err),
                     0);
    ck_assert_str_eq(h.title, "Ring: every rank passes its tensor");
    ck_assert_int_eq(h.world, 4);
    ck_assert_str_eq(h.send_mode, "eager:1024");
    ck_assert_str_eq(h.expect, "ok");
    ck_assert_int_eq(header("print(1)\n", &h, err), 0);
    ck_assert_int_eq(h.world, 0);
    ck_assert_str_eq(h.expect, "");
    ck_assert_int_eq(header("--- world: 2\r\n--- expect: deadlock\r\n", &h, err), 0);
    ck_assert_int_eq(h.world, 2);
    ck_assert_str_eq(h.expect, "deadlock");
    ck_assert_str_eq(h.warning, "");
}
END_TEST

/* An unknown key a slip or two from a known one is most likely it misspelt:
 * still ignored (the run goes on), but named in a warning; notes stay silent. */
START_TEST(header_near_miss) {
    cs_header h;
    char err[256];
    ck_assert_int_eq(header("--- title: x\n--- wrld: 4\n--- tilte: y\n", &h, err), 0);
    ck_assert_int_eq(h.world, 0);
    ck_assert_str_eq(h.warning, "h.lua:2: unknown header key 'wrld', ignored (did you mean 'world'?)");
    ck_assert_int_eq(header("--- send_mode: eager\n", &h, err), 0);
    ck_assert_str_eq(h.warning, "h.lua:1: unknown header key 'send_mode', ignored (did you mean 'send-mode'?)");
    ck_assert_int_eq(header("--- expcet: ok\n--- nett: fast\n", &h, err), 0);
    ck_assert_str_eq(h.warning, "h.lua:1: unknown header key 'expcet', ignored (did you mean 'expect'?)");
    static const char *const notes[] = {"hint", "author", "notes", "mode", "ranks", "level"};
    for (size_t i = 0; i < sizeof notes / sizeof notes[0]; i++) {
        char src[64];
        snprintf(src, sizeof src, "--- %s: 4\n", notes[i]);
        ck_assert_int_eq(header(src, &h, err), 0);
        ck_assert_msg(!h.warning[0], "%s: %s", notes[i], h.warning);
    }
}
END_TEST

START_TEST(header_bad) {
    cs_header h;
    char err[256];
    ck_assert_int_eq(header("--- title: x\n--- world: 0\n", &h, err), -1);
    ck_assert_str_eq(err, "h.lua:2: world: expected a number of ranks from 1 to 4096, got '0'");
    ck_assert_int_eq(header("--- world: 4097\n", &h, err), -1);
    ck_assert_int_eq(header("--- world: four\n", &h, err), -1);
    ck_assert_int_eq(header("--- world: -3\n", &h, err), -1);
    ck_assert_int_eq(header("--- world: 4 ranks\n", &h, err), -1);
    ck_assert_str_eq(err, "h.lua:1: world: expected one value, got '4 ranks'");
    ck_assert_int_eq(header("--- world:\n", &h, err), -1);
    ck_assert_str_eq(err, "h.lua:1: world: missing value");
    ck_assert_int_eq(header("\n--- expect: maybe\n", &h, err), -1);
    ck_assert_str_eq(err, "h.lua:2: expect: unknown value 'maybe' (ok, deadlock, error or timeout)");
    ck_assert_int_eq(header("--- send-mode: eagre\n", &h, err), -1);
    ck_assert_str_eq(err, "h.lua:1: send-mode: expected rendezvous, eager or eager:BYTES, got 'eagre'");
}
END_TEST

int main(void) {
    Suite *s = suite_create("script");
    TCase *sb = tcase_create("sandbox"), *bud = tcase_create("budgets"),
          *err = tcase_create("errors"), *ten = tcase_create("tensor"),
          *dist = tcase_create("dist"), *hdr = tcase_create("header");
    TCase *all[] = {sb, bud, err, ten, dist, hdr};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        tcase_set_timeout(all[i], 120);
        suite_add_tcase(s, all[i]);
    }
    tcase_add_test(sb, sandbox_surface);
    tcase_add_test(sb, sandbox_load_text_only);
    tcase_add_test(sb, sandbox_io_refused);
    tcase_add_test(sb, sandbox_os_refused);
    tcase_add_test(sb, sandbox_require_refused);
    tcase_add_test(sb, sandbox_gc_metamethod_refused);
    tcase_add_test(bud, memory_bomb);
    tcase_add_test(bud, memory_doubling);
    tcase_add_test(bud, memory_pcall_caught);
    tcase_add_test(bud, memory_tensors_kept);
    tcase_add_test(bud, memory_tensors_garbage);
    tcase_add_test(bud, steps_infinite_loop);
    tcase_add_test(bud, steps_pcall_cannot_swallow);
    tcase_add_test(bud, steps_in_coroutines);
    tcase_add_test(bud, steps_table_move);
    tcase_add_test(bud, steps_backtracking_pattern);
    tcase_add_test(bud, steps_xpcall_handler);
    tcase_add_test(bud, steps_wrap_close);
    tcase_add_test(bud, steps_string_work);
    tcase_add_test(bud, memory_pcall_last_line);
    tcase_add_test(bud, memory_eager_buffers);
    tcase_add_test(bud, tensor_count_overflow);
    tcase_add_test(sb, sandbox_wrappers_transparent);
    tcase_add_test(err, error_syntax);
    tcase_add_test(err, error_python_hints);
    tcase_add_test(err, error_runtime);
    tcase_add_test(err, error_call);
    tcase_add_test(err, error_without_position);
    tcase_add_test(err, error_object);
    tcase_add_test(err, error_yield_outside);
    tcase_add_test(err, error_bad_destination);
    tcase_add_test(err, error_option_typo);
    tcase_add_test(err, error_option_by_position);
    tcase_add_test(err, new_group_every_rank);
    tcase_add_test(err, error_dim_past_int);
    tcase_add_test(err, error_value_overflows_dtype);
    tcase_add_test(err, error_load_named_as_script);
    tcase_add_test(err, error_index_out_of_range);
    tcase_add_test(err, error_dtype_option);
    tcase_add_test(err, print_like_lua);
    tcase_add_test(ten, tensor_factories);
    tcase_add_test(ten, tensor_indexing);
    tcase_add_test(ten, tensor_views_and_methods);
    tcase_add_test(ten, tensor_arithmetic);
    tcase_add_test(ten, randn_reproducible);
    tcase_add_test(dist, dist_ring);
    tcase_add_test(dist, dist_work_dot_call);
    tcase_add_test(dist, tensor_dot_call);
    tcase_add_test(dist, dist_nonblocking);
    tcase_add_test(dist, dist_argument_errors);
    tcase_add_test(dist, abort_blocked_rank);
    tcase_add_test(dist, abort_spinning_rank);
    tcase_add_test(dist, abort_rank_in_pattern);
    tcase_add_test(dist, abort_rank_in_matmul);
    tcase_add_test(dist, abort_pcall_cannot_swallow);
    tcase_add_test(dist, abort_deadlock);
    tcase_add_test(hdr, script_load_file);
    tcase_add_test(hdr, header_good);
    tcase_add_test(hdr, header_bad);
    tcase_add_test(hdr, header_near_miss);
    return run_suite(s);
}
