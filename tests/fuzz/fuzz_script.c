/* fuzz_script.c -- libFuzzer harness for the script loader, the tensor API
 * and the dist API: a grammar fuzzer.
 *
 * Random bytes make poor Lua: nearly every mutation is a syntax error that
 * stops at the parser. So the input is not the script; it is the list of
 * choices a small grammar of API calls makes (gen_*: each byte picks a
 * production), and the program it spells is always valid Lua: a header (world
 * 1 to 4, a send mode), a table of tensors made with edge-case shapes and
 * dtypes, then statements calling tensor constructors, methods, indexing,
 * arithmetic, point-to-point operations, waits and collectives with
 * arguments drawn from edge cases (0, -1, huge and wrapping sizes, NaN,
 * infinities, wrong types, ranks outside the world, views of one storage),
 * most inside pcall so that one error does not end the program, some on one
 * rank only so that the ranks disagree.
 *
 * Each program runs on the thread engine through the same entry point as
 * `commsim run` (cs_launch_run: loader, sandbox, limits, monitor, report),
 * with a memory cap, a step limit and a timeout as a backstop. Whatever the
 * verdict (errors, deadlocks, mismatches are all fine), nothing may crash,
 * leak, overrun or hang. FUZZ_SCRIPT_SHOW=1 prints each program (to
 * reproduce a finding: run the crash input with it set).
 *
 * Build and run: `make fuzz` (each harness FUZZ_SECONDS, default 60; see
 * docs/hacking.md). tests/fuzz/corpus_script holds seeds (any bytes are a
 * program).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create */
#endif
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "launch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NT 4          /* tensors in the table T */
#define NW 4          /* work handles in the table W */
#define MAX_STMTS 40
#define MAX_DEPTH 3

typedef struct gen {
    const uint8_t *p;
    size_t n, i;
    char *buf;
    size_t len, cap;
} gen;

/* The next choice among k (0 once the input is used up: the program ends
 * with the simplest productions). */
static unsigned pick(gen *g, unsigned k) {
    if (g->i >= g->n || k == 0) return 0;
    return g->p[g->i++] % k;
}

static void emit(gen *g, const char *fmt, ...) {
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int n = vsnprintf(g->buf + g->len, g->cap - g->len, fmt, ap);
        va_end(ap);
        if (n < 0) abort();
        if (g->len + (size_t)n < g->cap) {
            g->len += (size_t)n;
            return;
        }
        g->cap = (g->cap + (size_t)n) * 2;
        if (!(g->buf = realloc(g->buf, g->cap))) abort();
    }
}

#define ONE_OF(g, arr) (arr)[pick((g), sizeof(arr) / sizeof *(arr))]

/* ---- terminals: the edge cases */

static const char *const numbers[] = {
    "0", "1", "2", "3", "4", "7", "16", "-1", "-2", "0.5", "-0.0", "1e308", "-1e308", "0/0",
    "math.huge", "-math.huge", "2^31", "2^32", "2^53", "(1 << 62) + 1", "1 << 63",
    "math.mininteger", "math.maxinteger", "65536", "1e9", "255", "256", "-129", "3.7"};
static const char *const small[] = {"0", "1", "2", "3", "4", "-1", "5"};
static const char *const ranks[] = {"0", "1", "rank", "(rank + 1) % world_size",
                                    "(rank + world_size - 1) % world_size", "world_size", "-1",
                                    "nil", "2^40", "0.5", "'0'"};
static const char *const dtypes[] = {"'float32'", "'float64'", "'int32'", "'int64'", "'uint8'",
                                     "'bogus'", "nil", "1"};
static const char *const ops[] = {"ReduceOp.SUM", "ReduceOp.AVG", "ReduceOp.PRODUCT",
                                  "ReduceOp.MIN", "ReduceOp.MAX", "ReduceOp.BAND", "ReduceOp.BOR",
                                  "ReduceOp.BXOR", "'SUM'", "'nope'", "nil", "42"};
static const char *const others[] = {"nil", "true", "'x'", "''", "{}", "function() end",
                                     "string.rep('a', 100)", "{1, 2, 3}", "{{1}, {2}}"};
static const char *const modes[] = {"rendezvous", "eager", "eager:64", "eager:0"};

static void gen_num(gen *g) { emit(g, "%s", ONE_OF(g, numbers)); }

static void gen_tensor(gen *g, int depth);

/* A shape: a number, several, or a table of them. */
static void gen_shape(gen *g) {
    switch (pick(g, 4)) {
    case 0: emit(g, "%s", ONE_OF(g, small)); break;
    case 1: gen_num(g); break;
    case 2: emit(g, "%s, %s", ONE_OF(g, small), ONE_OF(g, small)); break;
    default: {
        unsigned n = pick(g, 6);
        emit(g, "{");
        for (unsigned i = 0; i < n; i++) emit(g, "%s%s", i ? ", " : "", pick(g, 3) ? ONE_OF(g, small) : ONE_OF(g, numbers));
        emit(g, "}");
    }
    }
}

/* A constructor's options: a dtype, mostly. */
static void gen_topts(gen *g) {
    switch (pick(g, 5)) {
    case 0: case 1: emit(g, ", {dtype = %s}", ONE_OF(g, dtypes)); break;
    case 2: emit(g, ", {dtype = %s, tag = 1}", ONE_OF(g, dtypes)); break;
    default: break;
    }
}

static void gen_opts(gen *g) {
    switch (pick(g, 6)) {
    case 0: emit(g, ", {dtype = %s}", ONE_OF(g, dtypes)); break;
    case 1: emit(g, ", {tag = %s}", ONE_OF(g, small)); break;
    case 2: emit(g, ", {async_op = true}"); break;
    case 3: emit(g, ", {tag = %s, async_op = %s}", ONE_OF(g, numbers), pick(g, 2) ? "true" : "false"); break;
    default: break;
    }
}

/* A tensor variable (T[i] may be nil: a failed constructor leaves it so). */
static void gen_tvar(gen *g) { emit(g, "T[%u]", pick(g, NT) + 1); }

/* Any value a careless script could pass. */
static void gen_any(gen *g, int depth) {
    switch (pick(g, 6)) {
    case 0: case 1: gen_tvar(g); break;
    case 2: gen_num(g); break;
    case 3: emit(g, "%s", ONE_OF(g, others)); break;
    case 4: emit(g, "{"); gen_tvar(g); emit(g, ", "); gen_tvar(g); emit(g, "}"); break;
    default:
        if (depth < MAX_DEPTH) gen_tensor(g, depth + 1);
        else gen_tvar(g);
    }
}

static void gen_list(gen *g) { /* a list of tensors, for gather, scatter, all_to_all */
    unsigned n = pick(g, 6);
    emit(g, "{");
    for (unsigned i = 0; i < n; i++) {
        if (i) emit(g, ", ");
        if (pick(g, 5)) gen_tvar(g);
        else emit(g, "tensor.zeros(%s)", ONE_OF(g, small));
    }
    emit(g, "}");
}

static void gen_tensor(gen *g, int depth) {
    switch (pick(g, 12)) {
    case 0: emit(g, "tensor.zeros("); gen_shape(g); gen_topts(g); emit(g, ")"); break;
    case 1: emit(g, "tensor.ones("); gen_shape(g); gen_topts(g); emit(g, ")"); break;
    case 2: emit(g, "tensor.full("); gen_shape(g); emit(g, ", "); gen_num(g); gen_topts(g); emit(g, ")"); break;
    case 3: emit(g, "tensor.arange("); gen_num(g); gen_topts(g); emit(g, ")"); break;
    case 4: emit(g, "tensor.randn("); gen_shape(g); emit(g, ")"); break;
    case 5: {
        unsigned n = pick(g, 5);
        emit(g, "tensor.from({");
        for (unsigned i = 0; i < n; i++) {
            emit(g, "%s", i ? ", " : "");
            if (pick(g, 4)) gen_num(g);
            else emit(g, "{%s, %s}", ONE_OF(g, small), ONE_OF(g, small));
        }
        emit(g, "}");
        gen_topts(g);
        emit(g, ")");
        break;
    }
    case 6: gen_tvar(g); emit(g, ":view("); gen_shape(g); emit(g, ")"); break;
    case 7: gen_tvar(g); emit(g, ":narrow(%s, %s, %s)", ONE_OF(g, small), ONE_OF(g, numbers), ONE_OF(g, small)); break;
    case 8: gen_tvar(g); emit(g, ":chunk(%s)[%s]", ONE_OF(g, small), ONE_OF(g, small)); break;
    case 9: gen_tvar(g); emit(g, ":reshape("); gen_shape(g); emit(g, ")"); break;
    case 10: gen_tvar(g); emit(g, ":select(%s, %s)", ONE_OF(g, small), ONE_OF(g, numbers)); break;
    default:
        if (depth < MAX_DEPTH) {
            static const char *const bin[] = {"+", "-", "*", "/", "^"};
            emit(g, "(");
            gen_any(g, depth + 1);
            emit(g, " %s ", ONE_OF(g, bin));
            gen_any(g, depth + 1);
            emit(g, ")");
        } else {
            gen_tvar(g);
        }
    }
}

/* A method call on a tensor variable, any arguments. */
static void gen_method(gen *g) {
    static const char *const methods[] = {
        "numel", "dim", "size", "is_contiguous", "contiguous", "clone", "to", "narrow", "select",
        "view", "reshape", "chunk", "fill", "fill_", "zero_", "copy_", "sum", "max", "min", "mean",
        "item", "tolist", "equal", "allclose", "add", "sub", "mul", "div", "pow", "add_", "sub_",
        "mul_", "div_", "neg", "relu", "relu_", "matmul"};
    gen_tvar(g);
    emit(g, ":%s(", ONE_OF(g, methods));
    unsigned n = pick(g, 4);
    for (unsigned i = 0; i < n; i++) {
        if (i) emit(g, ", ");
        if (pick(g, 2)) emit(g, "%s", pick(g, 2) ? ONE_OF(g, small) : ONE_OF(g, dtypes));
        else gen_any(g, 1);
    }
    emit(g, ")");
}

static void gen_p2p(gen *g) {
    switch (pick(g, 8)) {
    case 0: emit(g, "dist.send("); gen_tvar(g); emit(g, ", %s", ONE_OF(g, ranks)); gen_opts(g); emit(g, ")"); break;
    case 1: emit(g, "dist.recv("); gen_tvar(g); emit(g, ", %s", ONE_OF(g, ranks)); gen_opts(g); emit(g, ")"); break;
    case 2: emit(g, "W[%u] = dist.isend(", pick(g, NW) + 1); gen_tvar(g); emit(g, ", %s", ONE_OF(g, ranks)); gen_opts(g); emit(g, ")"); break;
    case 3: emit(g, "W[%u] = dist.irecv(", pick(g, NW) + 1); gen_tvar(g); emit(g, ", %s", ONE_OF(g, ranks)); gen_opts(g); emit(g, ")"); break;
    case 4: emit(g, "W[%u]:wait()", pick(g, NW) + 1); break;
    case 5: emit(g, "dist.wait_all({W[1], W[2], W[3], W[4]})"); break;
    case 6: emit(g, "W[%u]:is_completed()", pick(g, NW) + 1); break;
    default:
        emit(g, "dist.batch_isend_irecv({dist.P2POp(dist.isend, ");
        gen_tvar(g);
        emit(g, ", %s), dist.P2POp(dist.irecv, ", ONE_OF(g, ranks));
        gen_tvar(g);
        emit(g, ", %s)})", ONE_OF(g, ranks));
    }
}

static void gen_coll(gen *g) {
    switch (pick(g, 14)) {
    case 0: emit(g, "dist.broadcast("); gen_tvar(g); emit(g, ", %s", ONE_OF(g, ranks)); break;
    case 1: emit(g, "dist.all_reduce("); gen_tvar(g); emit(g, ", %s", ONE_OF(g, ops)); break;
    case 2: emit(g, "dist.reduce("); gen_tvar(g); emit(g, ", %s, %s", ONE_OF(g, ranks), ONE_OF(g, ops)); break;
    case 3: emit(g, "dist.all_gather("); gen_list(g); emit(g, ", "); gen_tvar(g); break;
    case 4: emit(g, "dist.all_gather_into_tensor("); gen_tvar(g); emit(g, ", "); gen_tvar(g); break;
    case 5: emit(g, "dist.gather("); gen_tvar(g); emit(g, ", "); gen_list(g); emit(g, ", %s", ONE_OF(g, ranks)); break;
    case 6: emit(g, "dist.scatter("); gen_tvar(g); emit(g, ", "); gen_list(g); emit(g, ", %s", ONE_OF(g, ranks)); break;
    case 7: emit(g, "dist.reduce_scatter("); gen_tvar(g); emit(g, ", "); gen_list(g); emit(g, ", %s", ONE_OF(g, ops)); break;
    case 8: emit(g, "dist.reduce_scatter_tensor("); gen_tvar(g); emit(g, ", "); gen_tvar(g); emit(g, ", %s", ONE_OF(g, ops)); break;
    case 9: emit(g, "dist.all_to_all("); gen_list(g); emit(g, ", "); gen_list(g); break;
    case 10: emit(g, "dist.all_to_all_single("); gen_tvar(g); emit(g, ", "); gen_tvar(g); break;
    case 11: emit(g, "dist.barrier("); break;
    case 12: emit(g, "G = dist.new_group({%s, %s}", ONE_OF(g, ranks), ONE_OF(g, ranks)); break;
    default: emit(g, "dist.all_reduce("); gen_tvar(g); emit(g, ", %s, {group = G}", ONE_OF(g, ops)); break;
    }
    gen_opts(g);
    emit(g, ")");
}

static void gen_call(gen *g) {
    switch (pick(g, 10)) {
    case 0: case 1: gen_method(g); break;
    case 2: emit(g, "T[%u] = ", pick(g, NT) + 1); gen_tensor(g, 0); break;
    case 3: gen_tvar(g); emit(g, "[%s] = ", ONE_OF(g, numbers)); gen_any(g, 2); break;
    case 4: emit(g, "local _ = "); gen_tvar(g); emit(g, "[%s]", ONE_OF(g, numbers)); break;
    case 5: emit(g, "print("); gen_any(g, 1); emit(g, ")"); break;
    case 6: case 7: gen_p2p(g); break;
    case 8: gen_coll(g); break;
    default: emit(g, "tensor.matmul("); gen_any(g, 1); emit(g, ", "); gen_any(g, 1); emit(g, ")"); break;
    }
}

/* A statement: mostly in pcall (an error does not end the program), some on
 * one rank only (the ranks then disagree), some bare. */
static void gen_stmt(gen *g) {
    switch (pick(g, 8)) {
    case 0: gen_call(g); break;
    case 1: emit(g, "if rank == %s then ", ONE_OF(g, small)); gen_call(g); emit(g, " end"); break;
    case 2:
        emit(g, "if rank %% 2 == 0 then pcall(function() ");
        gen_call(g);
        emit(g, " end) else pcall(function() ");
        gen_call(g);
        emit(g, " end) end");
        break;
    case 3: emit(g, "for _ = 1, %s do pcall(function() ", ONE_OF(g, small)); gen_call(g); emit(g, " end) end"); break;
    default: emit(g, "pcall(function() "); gen_call(g); emit(g, " end)"); break;
    }
    emit(g, "\n");
}

static char *program(const uint8_t *data, size_t size) {
    gen g = {.p = data, .n = size, .cap = 4096};
    if (!(g.buf = malloc(g.cap))) abort();
    g.buf[0] = 0;
    emit(&g, "--- world: %u\n--- send-mode: %s\n", pick(&g, 4) + 1, ONE_OF(&g, modes));
    emit(&g, "T, W, G = {}, {}, nil\n");
    for (unsigned i = 1; i <= NT; i++) {
        emit(&g, "T[%u] = select(2, pcall(function() return ", i);
        gen_tensor(&g, MAX_DEPTH); /* no nesting: the others do not exist yet */
        emit(&g, " end))\n");
    }
    unsigned n = 1 + pick(&g, MAX_STMTS);
    for (unsigned i = 0; i < n && g.i < g.n; i++) gen_stmt(&g);
    return g.buf;
}

/* ---- running it */

static int script_fd = -1;
static char script_path[64];
static FILE *sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (script_fd < 0) {
        script_fd = memfd_create("fuzz.lua", MFD_CLOEXEC);
        sink = fopen("/dev/null", "w");
        if (script_fd < 0 || !sink) abort();
        snprintf(script_path, sizeof script_path, "/proc/self/fd/%d", script_fd);
    }
    char *src = program(data, size);
    if (getenv("FUZZ_SCRIPT_SHOW")) fprintf(stderr, "---- program\n%s", src);
    size_t len = strlen(src);
    if (ftruncate(script_fd, 0) < 0 || pwrite(script_fd, src, len, 0) != (ssize_t)len) abort();
    free(src);
    bool show = getenv("FUZZ_SCRIPT_SHOW") != NULL;
    cs_run_opts o = {
        .script = script_path, .engine = "thread", .mem_limit = 64u << 20, .step_limit = 2000000,
        .timeout = 20, .no_recheck = true, .rank = -1, .out = show ? stderr : sink,
        .err = show ? stderr : sink};
    int status = cs_launch_run(&o);
    if (show) fprintf(stderr, "---- status %d\n", status);
    return 0;
}
