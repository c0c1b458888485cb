/* check_coll.c -- every collective x every dtype it takes x every algorithm x
 * world sizes 1 to 9 (and groups), against a naive reference each rank computes
 * locally from everybody's inputs; every argument error; the monitor's
 * collective verdicts. */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "coll_internal.h"
#include "monitor.h"
#include "rank_harness.h"
#include "trace.h"
#include "run_suite.h"

/* ---- runs (rank_harness.c: a thread per rank, the monitor aborting on its verdicts) */

static cs_end_reason run_algos(int n, const unsigned char *algos, rank_fn fn, void *arg,
                               char *verdict, size_t vlen) {
    cs_world_config cfg = {.world = n};
    if (algos) memcpy(cfg.coll_algo, algos, sizeof cfg.coll_algo);
    ck_assert(cs_send_mode_parse("rendezvous", &cfg.mode));
    return run_ranks(&cfg, fn, arg, verdict, vlen);
}

static cs_end_reason run_world(int n, rank_fn fn, void *arg) {
    return run_algos(n, NULL, fn, arg, NULL, 0);
}

/* ---- inputs and the naive reference */

static const cs_dtype dtypes[] = {CS_FLOAT32, CS_FLOAT64, CS_INT32, CS_INT64, CS_UINT8};
#define NDTYPES 5

/* Rank `who`'s element i (of stream s): small integers, exact in every dtype. */
static int64_t value(int who, int64_t i, int s, cs_redop op, cs_dtype d) {
    if (op == CS_RED_PRODUCT) return 1 + (who + i + s) % 3;
    if (op >= CS_RED_BAND) return (who * 37 + i * 11 + s * 5) & 0x7f;
    int64_t v = (who * 7 + i * 3 + s) % 11;
    return d == CS_UINT8 ? v * 20 : v - 5;
}

static cs_tensor *input(cs_rank *r, cs_dtype d, int64_t n, int who, int s, cs_redop op) {
    cs_tensor *t = cs_tensor_new(cs_rank_budget(r), d, 1, &n);
    ck_assert_ptr_nonnull(t);
    for (int64_t i = 0; i < n; i++) cs_tensor_set_i(t, i, value(who, i, s, op, d));
    return t;
}

static int64_t fold(cs_redop op, int64_t a, int64_t b) {
    switch (op) {
    case CS_RED_PRODUCT: return a * b;
    case CS_RED_MIN: return b < a ? b : a;
    case CS_RED_MAX: return b > a ? b : a;
    case CS_RED_BAND: return a & b;
    case CS_RED_BOR: return a | b;
    case CS_RED_BXOR: return a ^ b;
    default: return a + b;
    }
}

/* The reduction over world ranks members[0..n) of element i, in dtype d. */
static cs_tensor *reference(cs_rank *r, cs_dtype d, int64_t len, const int *members, int n,
                            int s, cs_redop op, int64_t from) {
    cs_tensor *t = cs_tensor_new(cs_rank_budget(r), d, 1, &len);
    for (int64_t i = 0; i < len; i++) {
        int64_t acc = value(members[0], from + i, s, op, d);
        for (int k = 1; k < n; k++) acc = fold(op, acc, value(members[k], from + i, s, op, d));
        if (op == CS_RED_AVG) cs_tensor_set(t, i, (double)acc / n);
        else cs_tensor_set_i(t, i, acc);
    }
    return t;
}

static void expect_eq(cs_tensor *got, cs_tensor *want, const char *what, int rank) {
    bool ok = want->dtype == CS_FLOAT32 || want->dtype == CS_FLOAT64
                  ? cs_tensor_allclose(got, want, 1e-6, 0)
                  : cs_tensor_equal(got, want);
    if (!ok) {
        char *g = cs_tensor_format(got), *w = cs_tensor_format(want);
        ck_abort_msg("rank %d, %s: got %s, want %s", rank, what, g, w);
    }
}

static bool op_fits(cs_redop op, cs_dtype d) {
    if (op >= CS_RED_BAND) return !cs_dtype_is_float(d);
    if (op == CS_RED_AVG) return cs_dtype_is_float(d);
    return true;
}

/* ---- the matrix, run by every rank of a group */

typedef struct matrix {
    const int *members; /* world ranks of the group, NULL: the world */
    int n;
} matrix;

static const int64_t lens[] = {1, 5, 19};

static void check_reduce_family(cs_rank *r, cs_coll_call *c, const int *mem, int n, int me,
                                cs_dtype d, int64_t len, int s) {
    static const cs_coll_algo ar[] = {CS_ALGO_RING, CS_ALGO_RECURSIVE_DOUBLING,
                                      CS_ALGO_REDUCE_BROADCAST, CS_ALGO_RECURSIVE_HALVING};
    static const cs_coll_algo tl[] = {CS_ALGO_TREE, CS_ALGO_LINEAR};
    static const cs_coll_algo rd[] = {CS_ALGO_RING, CS_ALGO_DIRECT};
    for (cs_redop op = 0; op < CS_RED_NOPS; op++) {
        if (!op_fits(op, d)) continue;
        c->op = op;
        cs_tensor *want = reference(r, d, len, mem, n, s, op, 0);
        for (int a = 0; a < 4; a++) {
            cs_tensor *t = input(r, d, len, mem[me], s, op);
            c->algo = ar[a];
            ck_assert_int_eq(cs_all_reduce(r, t, c), CS_OK);
            expect_eq(t, want, "all_reduce", mem[me]);
            cs_tensor_release(t);
        }
        for (int a = 0; a < 2; a++)
            for (int ri = 0; ri < 2; ri++) {
                cs_tensor *t = input(r, d, len, mem[me], s, op);
                c->algo = tl[a];
                c->root = mem[ri ? n - 1 : 0];
                ck_assert_int_eq(cs_reduce(r, t, c), CS_OK);
                if (mem[me] == c->root) expect_eq(t, want, "reduce", mem[me]);
                else {
                    cs_tensor *mine = input(r, d, len, mem[me], s, op);
                    expect_eq(t, mine, "reduce (non-root unchanged)", mem[me]);
                    cs_tensor_release(mine);
                }
                cs_tensor_release(t);
            }
        cs_tensor_release(want);
        /* reduce_scatter: block j of everybody's input of n * len elements */
        cs_tensor *rwant = reference(r, d, len, mem, n, s, op, me * len);
        for (int a = 0; a < 2; a++) {
            c->algo = rd[a];
            cs_tensor *in = input(r, d, len * n, mem[me], s, op), *out = input(r, d, len, 0, 9, op);
            ck_assert_int_eq(cs_reduce_scatter_tensor(r, out, in, c), CS_OK);
            expect_eq(out, rwant, "reduce_scatter_tensor", mem[me]);
            cs_tensor *blocks[9];
            ck_assert_int_eq(cs_coll_split(in, n, blocks), CS_OK);
            cs_tensor_fill_(out, 0);
            ck_assert_int_eq(cs_reduce_scatter(r, out, blocks, n, c), CS_OK);
            expect_eq(out, rwant, "reduce_scatter", mem[me]);
            for (int j = 0; j < n; j++) cs_tensor_release(blocks[j]);
            cs_tensor_release(in);
            cs_tensor_release(out);
        }
        cs_tensor_release(rwant);
    }
}

/* Element i of the block that rank `who` contributes: distinct across ranks. */
static void check_move_family(cs_rank *r, cs_coll_call *c, const int *mem, int n, int me,
                              cs_dtype d, int64_t len, int s) {
    static const cs_coll_algo rd[] = {CS_ALGO_RING, CS_ALGO_DIRECT};
    static const cs_coll_algo tl[] = {CS_ALGO_TREE, CS_ALGO_LINEAR};
    cs_redop op = CS_RED_SUM;
    cs_tensor *mine = input(r, d, len, mem[me], s, op);
    /* broadcast from the first and the last member */
    for (int a = 0; a < 2; a++)
        for (int ri = 0; ri < 2; ri++) {
            c->algo = tl[a];
            c->root = mem[ri ? n - 1 : 0];
            cs_tensor *t = input(r, d, len, mem[me], s, op);
            cs_tensor *want = input(r, d, len, c->root, s, op);
            ck_assert_int_eq(cs_broadcast(r, t, c), CS_OK);
            expect_eq(t, want, "broadcast", mem[me]);
            cs_tensor_release(t), cs_tensor_release(want);
        }
    /* all_gather, both forms */
    cs_tensor *outs[9], *want[9];
    for (int j = 0; j < n; j++) want[j] = input(r, d, len, mem[j], s, op);
    for (int a = 0; a < 2; a++) {
        c->algo = rd[a];
        for (int j = 0; j < n; j++) outs[j] = input(r, d, len, 99, 0, op);
        ck_assert_int_eq(cs_all_gather(r, outs, n, mine, c), CS_OK);
        for (int j = 0; j < n; j++) expect_eq(outs[j], want[j], "all_gather", mem[me]);
        cs_coll_release_all(outs, n);
        cs_tensor *big = input(r, d, len * n, 99, 0, op);
        ck_assert_int_eq(cs_all_gather_into_tensor(r, big, mine, c), CS_OK);
        ck_assert_int_eq(cs_coll_split(big, n, outs), CS_OK);
        for (int j = 0; j < n; j++) expect_eq(outs[j], want[j], "all_gather_into_tensor", mem[me]);
        cs_coll_release_all(outs, n);
        cs_tensor_release(big);
    }
    /* gather and scatter, to and from the last member */
    c->algo = CS_ALGO_DEFAULT;
    c->root = mem[n - 1];
    bool root = me == n - 1;
    for (int j = 0; j < n; j++) outs[j] = input(r, d, len, 99, 0, op);
    ck_assert_int_eq(cs_gather(r, mine, root ? outs : NULL, root ? n : 0, c), CS_OK);
    for (int j = 0; root && j < n; j++) expect_eq(outs[j], want[j], "gather", mem[me]);
    cs_coll_release_all(outs, n);
    cs_tensor *got = input(r, d, len, 99, 0, op);
    for (int j = 0; j < n; j++) outs[j] = input(r, d, len, 100 + mem[j], s, op);
    cs_tensor *swant = input(r, d, len, 100 + mem[me], s, op);
    ck_assert_int_eq(cs_scatter(r, got, root ? outs : NULL, root ? n : 0, c), CS_OK);
    expect_eq(got, swant, "scatter", mem[me]);
    cs_coll_release_all(outs, n);
    cs_tensor_release(got), cs_tensor_release(swant);
    /* all_to_all: rank i's block j is value(1000 * i + j); it lands on j as block i */
    cs_tensor *ins[9], *exp[9];
    for (int j = 0; j < n; j++) {
        ins[j] = input(r, d, len, 13 * mem[me] + j, s, op);
        exp[j] = input(r, d, len, 13 * mem[j] + me, s, op);
        outs[j] = input(r, d, len, 99, 0, op);
    }
    ck_assert_int_eq(cs_all_to_all(r, outs, n, ins, n, c), CS_OK);
    for (int j = 0; j < n; j++) expect_eq(outs[j], exp[j], "all_to_all", mem[me]);
    cs_tensor *bin = input(r, d, len * n, 0, 0, op), *bout = input(r, d, len * n, 99, 0, op);
    cs_tensor *bb[9];
    ck_assert_int_eq(cs_coll_split(bin, n, bb), CS_OK);
    for (int j = 0; j < n; j++) cs_tensor_copy_(bb[j], ins[j]);
    cs_coll_release_all(bb, n);
    ck_assert_int_eq(cs_all_to_all_single(r, bout, bin, c), CS_OK);
    ck_assert_int_eq(cs_coll_split(bout, n, bb), CS_OK);
    for (int j = 0; j < n; j++) expect_eq(bb[j], exp[j], "all_to_all_single", mem[me]);
    cs_coll_release_all(bb, n);
    cs_tensor_release(bin), cs_tensor_release(bout);
    cs_coll_release_all(ins, n), cs_coll_release_all(exp, n), cs_coll_release_all(outs, n);
    cs_coll_release_all(want, n);
    cs_tensor_release(mine);
    ck_assert_int_eq(cs_barrier(r, c), CS_OK);
}

static void fn_matrix(cs_rank *r, void *arg) {
    const matrix *m = arg;
    int world[9], n = m->n;
    const int *mem = m->members;
    if (!mem) {
        for (int i = 0; i < n; i++) world[i] = i;
        mem = world;
    }
    cs_group *g = NULL;
    if (m->members) ck_assert_int_eq(cs_group_new(r, m->members, n, &g), CS_OK);
    if (g && g->rank < 0) {
        cs_group_free(g);
        return; /* not a member: nothing to do */
    }
    int me = g ? g->rank : cs_rank_id(r);
    cs_coll_call c = {.group = g, .line = 1};
    int s = 0;
    for (int di = 0; di < NDTYPES; di++)
        for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++, s++) {
            check_reduce_family(r, &c, mem, n, me, dtypes[di], lens[li], s);
            check_move_family(r, &c, mem, n, me, dtypes[di], lens[li], s);
        }
    cs_group_free(g);
}

START_TEST(test_matrix_world) {
    matrix m = {NULL, _i};
    ck_assert_int_eq(run_world(_i, fn_matrix, &m), CS_END_NONE);
}
END_TEST

/* A group in scrambled order inside a larger world: group rank 0 is world rank 4. */
START_TEST(test_matrix_group) {
    static const int members[] = {4, 1, 6, 2, 0};
    matrix m = {members, 5};
    ck_assert_int_eq(run_world(7, fn_matrix, &m), CS_END_NONE);
}
END_TEST

/* ---- argument errors: each fails on the calling rank alone, naming the function */

static cs_tensor *vec(cs_rank *r, cs_dtype d, int64_t n) {
    cs_tensor *t = cs_tensor_new(cs_rank_budget(r), d, 1, &n);
    ck_assert_ptr_nonnull(t);
    return t;
}

#define EXPECT_ARG(call, text)                                                              \
    do {                                                                                    \
        ck_assert_int_eq((call), CS_EARG);                                                  \
        ck_assert_msg(strstr(cs_rank_errmsg(r), (text)) != NULL, "message '%s' lacks '%s'", \
                      cs_rank_errmsg(r), (text));                                           \
    } while (0)

static void fn_arg_errors(cs_rank *r, void *arg) {
    (void)arg;
    int me = cs_rank_id(r);
    cs_tensor *f4 = vec(r, CS_FLOAT32, 4), *f3 = vec(r, CS_FLOAT32, 3), *i4 = vec(r, CS_INT32, 4);
    cs_tensor *f12 = vec(r, CS_FLOAT32, 12), *f10 = vec(r, CS_FLOAT32, 10);
    cs_tensor *i12 = vec(r, CS_INT32, 12);
    cs_tensor *two[2] = {f4, f4}, *three[3] = {f4, f4, f4}, *mixed[3] = {f4, f3, f4};
    cs_tensor *typed[3] = {f4, i4, f4};
    cs_coll_call c = {.line = 7};
    EXPECT_ARG(cs_all_gather(r, two, 2, f4, &c),
               "dist.all_gather: the output list has 2 tensors, but the group has 3 ranks");
    EXPECT_ARG(cs_all_gather(r, mixed, 3, f4, &c), "tensor 1 of the output list has 3 elements");
    EXPECT_ARG(cs_all_gather(r, typed, 3, f4, &c), "tensor 1 of the output list is int32");
    EXPECT_ARG(cs_all_gather_into_tensor(r, f10, f4, &c),
               "dist.all_gather_into_tensor: the output has 10 elements, but must have 3 x 4");
    EXPECT_ARG(cs_reduce_scatter_tensor(r, f4, f10, &c), "the input has 10 elements");
    EXPECT_ARG(cs_reduce_scatter(r, f4, two, 2, &c), "the input list has 2 tensors");
    EXPECT_ARG(cs_all_to_all(r, three, 3, two, 2, &c), "the input list has 2 tensors");
    /* a rank's own block is copied in place: that pair must agree in size */
    cs_tensor *own_out[3] = {f4, f4, f4}, *own_in[3] = {f4, f4, f4};
    own_out[me] = f3, own_in[me] = f10;
    char own[160];
    snprintf(own, sizeof own, "dist.all_to_all: tensor %d of the output list has 3 elements, but "
             "tensor %d of the input list has 10 (a rank's own block must fit)", me, me);
    EXPECT_ARG(cs_all_to_all(r, own_out, 3, own_in, 3, &c), own);
    if (me == 0) /* the root's list is checked against the output */
        EXPECT_ARG(cs_scatter(r, f4, mixed, 3, &c),
                   "dist.scatter: tensor 1 of the scatter list has 3 elements, but the output has 4");
    EXPECT_ARG(cs_all_to_all_single(r, f10, f10, &c), "divisible by the group size 3");
    EXPECT_ARG(cs_all_to_all_single(r, f12, i12, &c), "the output is float32");
    c.root = 3;
    EXPECT_ARG(cs_broadcast(r, f4, &c), "dist.broadcast: root 3 is outside the world (ranks 0 to 2)");
    c.root = -1;
    EXPECT_ARG(cs_reduce(r, f4, &c), "dist.reduce: root -1 is outside the world");
    c.root = 0;
    if (me == 0) {
        EXPECT_ARG(cs_gather(r, f4, NULL, 0, &c), "dist.gather: the gather list has 0 tensors");
        EXPECT_ARG(cs_scatter(r, f4, two, 2, &c), "dist.scatter: the scatter list has 2 tensors");
    }
    c.op = CS_RED_BAND;
    EXPECT_ARG(cs_all_reduce(r, f4, &c),
               "dist.all_reduce: ReduceOp.BAND needs an integer dtype (the tensor is float32)");
    c.op = CS_RED_BXOR;
    EXPECT_ARG(cs_reduce_scatter(r, f4, three, 3, &c), "ReduceOp.BXOR needs an integer dtype");
    c.op = CS_RED_AVG;
    EXPECT_ARG(cs_all_reduce(r, i4, &c),
               "ReduceOp.AVG needs a floating-point dtype (the tensor is int32)");
    c.op = CS_RED_SUM;
    c.algo = CS_ALGO_TREE;
    EXPECT_ARG(cs_all_reduce(r, f4, &c), "'tree' is not a all_reduce algorithm (available: ring, "
                                         "recursive_doubling, reduce_broadcast, recursive_halving; "
                                         "default: recursive_doubling up to 32 KiB (128 KiB from "
                                         "16 ranks), else ring)");
    c.algo = CS_ALGO_DEFAULT;
    cs_tensor *grid = cs_tensor_view(f12, 2, (int64_t[]){3, 4});
    cs_tensor *col = cs_tensor_narrow(grid, 1, 0, 2);
    EXPECT_ARG(cs_all_reduce(r, col, &c), "must be contiguous");
    /* groups */
    cs_group *g = NULL;
    EXPECT_ARG(cs_group_new(r, (int[]){0}, 0, &g), "dist.new_group: the list of ranks is empty");
    EXPECT_ARG(cs_group_new(r, (int[]){0, 3}, 2, &g), "dist.new_group: rank 3 is outside the world");
    EXPECT_ARG(cs_group_new(r, (int[]){2, 0, 2}, 3, &g), "rank 2 is listed twice");
    ck_assert_int_eq(cs_group_new(r, (int[]){2, 0}, 2, &g), CS_OK);
    ck_assert_int_eq(g->ctx, 2);
    ck_assert_int_eq(g->rank, me == 2 ? 0 : me == 0 ? 1 : -1);
    c.group = g;
    if (me == 1) {
        EXPECT_ARG(cs_all_reduce(r, f4, &c), "rank 1 is not a member of the group (ranks [2, 0])");
    } else {
        c.root = 1;
        EXPECT_ARG(cs_broadcast(r, f4, &c), "root 1 is not a member of the group (ranks [2, 0])");
        EXPECT_ARG(cs_all_gather(r, three, 3, f4, &c), "the group has 2 ranks");
    }
    cs_group_free(g);
    cs_tensor_release(col), cs_tensor_release(grid);
    cs_tensor_release(f4), cs_tensor_release(f3), cs_tensor_release(i4);
    cs_tensor_release(f12), cs_tensor_release(f10), cs_tensor_release(i12);
}

START_TEST(test_arg_errors) { ck_assert_int_eq(run_world(3, fn_arg_errors, NULL), CS_END_NONE); }
END_TEST

START_TEST(test_algo_names) {
    unsigned char algos[CS_COLL_MAX_FAMILIES] = {0};
    char err[256];
    ck_assert(cs_coll_algos_parse("all_reduce=recursive_doubling,broadcast=linear", algos, err,
                                  sizeof err));
    ck_assert_int_eq(algos[CS_FAM_ALL_REDUCE], CS_ALGO_RECURSIVE_DOUBLING);
    ck_assert_int_eq(algos[CS_FAM_BROADCAST], CS_ALGO_LINEAR);
    ck_assert_int_eq(algos[CS_FAM_REDUCE], 0);
    ck_assert(!cs_coll_algos_parse("all_reduce=tree", algos, err, sizeof err));
    ck_assert_str_eq(err, "unknown all_reduce algorithm 'tree' (available: ring, "
                          "recursive_doubling, reduce_broadcast, recursive_halving; default: "
                          "recursive_doubling up to 32 KiB (128 KiB from 16 ranks), else ring)");
    ck_assert(!cs_coll_algos_parse("broadcast=ring", algos, err, sizeof err));
    ck_assert_str_eq(err, "unknown broadcast algorithm 'ring' (available: tree (default), linear)");
    ck_assert(cs_coll_algos_parse("all_reduce=recursive_halving", algos, err, sizeof err));
    ck_assert_int_eq(algos[CS_FAM_ALL_REDUCE], CS_ALGO_RECURSIVE_HALVING);
    ck_assert_str_eq(cs_coll_algo_name(CS_ALGO_RECURSIVE_HALVING), "recursive_halving");
    ck_assert(!cs_coll_algos_parse("allreduce=ring", algos, err, sizeof err));
    ck_assert(strstr(err, "unknown collective 'allreduce'"));
    ck_assert(!cs_coll_algos_parse("ring", algos, err, sizeof err));
    ck_assert_str_eq(err, "'ring' is not COLLECTIVE=ALGORITHM");
    cs_redop op;
    ck_assert(cs_redop_parse("BXOR", &op) && op == CS_RED_BXOR);
    ck_assert(!cs_redop_parse("sum", &op));
}
END_TEST

/* The run's choice (--algo) is used when the call names none, and the coll
 * events say which algorithm ran. */
static void algo_sink(void *ud, const cs_event *ev) {
    if (ev->type == CS_EV_COLL) snprintf(ud, 32, "%s", ev->algo);
}

START_TEST(test_run_algo) {
    char seen[32] = "", err[128];
    cs_bus bus;
    cs_world_config cfg = {.world = 1, .engine = "thread"};
    cfg.coll_algo[CS_FAM_ALL_REDUCE] = CS_ALGO_REDUCE_BROADCAST;
    ck_assert_int_eq(cs_bus_init(&bus, 1), 0);
    cs_bus_subscribe(&bus, (cs_sink){algo_sink, seen});
    cs_world *w = cs_world_new(&cfg, &bus, err, sizeof err);
    cs_rank *r = cs_world_rank(w, 0);
    cs_tensor *t = vec(r, CS_FLOAT32, 2);
    ck_assert_int_eq(cs_all_reduce(r, t, &(cs_coll_call){.line = 1}), CS_OK);
    ck_assert_str_eq(seen, "reduce_broadcast");
    ck_assert_int_eq(cs_all_reduce(r, t, &(cs_coll_call){.algo = CS_ALGO_RING}), CS_OK);
    ck_assert_str_eq(seen, "ring");
    ck_assert_int_eq(cs_broadcast(r, t, &(cs_coll_call){.root = 0}), CS_OK);
    ck_assert_str_eq(seen, "tree");
    cs_tensor_release(t);
    cs_world_free(w);
    cs_bus_destroy(&bus);
}
END_TEST

/* The default by size and group size (coll_choice.c's picks), and the coll
 * event names what the default picked, on either side of the line. */
START_TEST(test_default_pick) {
    const cs_coll_algo rd = CS_ALGO_RECURSIVE_DOUBLING, ring = CS_ALGO_RING;
    for (int n = 1; n <= 64; n++) {
        size_t line = n >= 16 ? (size_t)128 << 10 : (size_t)32 << 10;
        ck_assert_int_eq(cs_coll_pick(CS_FAM_ALL_REDUCE, 0, n), rd);
        ck_assert_int_eq(cs_coll_pick(CS_FAM_ALL_REDUCE, line, n), rd);
        ck_assert_int_eq(cs_coll_pick(CS_FAM_ALL_REDUCE, line + 1, n), ring);
        ck_assert_int_eq(cs_coll_pick(CS_FAM_ALL_REDUCE, SIZE_MAX, n), ring);
        ck_assert_int_eq(cs_coll_pick(CS_FAM_BROADCAST, 1, n), CS_ALGO_TREE);
        ck_assert_int_eq(cs_coll_pick(CS_FAM_REDUCE, SIZE_MAX, n), CS_ALGO_TREE);
        static const cs_coll_family blocked[] = {CS_FAM_ALL_GATHER, CS_FAM_REDUCE_SCATTER};
        for (int i = 0; i < 2; i++) {
            cs_coll_algo small = n <= 8 ? CS_ALGO_DIRECT : ring;
            ck_assert_int_eq(cs_coll_pick(blocked[i], 1, n), small);
            ck_assert_int_eq(cs_coll_pick(blocked[i], 16 << 10, n), small);
            ck_assert_int_eq(cs_coll_pick(blocked[i], (16 << 10) + 1, n), ring);
        }
        ck_assert_int_eq(cs_coll_pick(CS_FAM_ALL_TO_ALL, 1, n), CS_ALGO_DIRECT);
        ck_assert_int_eq(cs_coll_pick(CS_FAM_GATHER, 1, n), CS_ALGO_LINEAR);
        ck_assert_int_eq(cs_coll_pick(CS_FAM_SCATTER, 1, n), CS_ALGO_LINEAR);
        ck_assert_int_eq(cs_coll_pick(CS_FAM_BARRIER, 0, n), CS_ALGO_DISSEMINATION);
    }
    char seen[32] = "", err[128];
    cs_bus bus;
    cs_world_config cfg = {.world = 1, .engine = "thread"};
    ck_assert_int_eq(cs_bus_init(&bus, 1), 0);
    cs_bus_subscribe(&bus, (cs_sink){algo_sink, seen});
    cs_world *w = cs_world_new(&cfg, &bus, err, sizeof err);
    cs_rank *r = cs_world_rank(w, 0);
    cs_tensor *small = vec(r, CS_FLOAT32, 8 << 10), *big = vec(r, CS_FLOAT32, (8 << 10) + 1);
    cs_tensor *big64 = vec(r, CS_FLOAT64, 4 << 10);
    ck_assert_int_eq(cs_all_reduce(r, small, &(cs_coll_call){.line = 1}), CS_OK);
    ck_assert_str_eq(seen, "recursive_doubling"); /* 32 KiB */
    ck_assert_int_eq(cs_all_reduce(r, big, &(cs_coll_call){.line = 1}), CS_OK);
    ck_assert_str_eq(seen, "ring");               /* 32 KiB + 4 B */
    ck_assert_int_eq(cs_all_reduce(r, big64, &(cs_coll_call){.line = 1}), CS_OK);
    ck_assert_str_eq(seen, "recursive_doubling"); /* bytes, not elements */
    ck_assert_int_eq(cs_all_reduce(r, big, &(cs_coll_call){.algo = rd}), CS_OK);
    ck_assert_str_eq(seen, "recursive_doubling"); /* a named algorithm at any size */
    cs_tensor *one = vec(r, CS_FLOAT32, 4 << 10), *one_big = vec(r, CS_FLOAT32, (4 << 10) + 1);
    ck_assert_int_eq(cs_all_gather(r, &one, 1, one, &(cs_coll_call){.line = 1}), CS_OK);
    ck_assert_str_eq(seen, "direct");             /* 16 KiB */
    ck_assert_int_eq(cs_reduce_scatter(r, one_big, &one_big, 1, &(cs_coll_call){.line = 1}), CS_OK);
    ck_assert_str_eq(seen, "ring");
    cs_tensor_release(one), cs_tensor_release(one_big);
    cs_tensor_release(small), cs_tensor_release(big), cs_tensor_release(big64);
    cs_world_free(w);
    cs_bus_destroy(&bus);
}
END_TEST

/* ---- message counts: each all_reduce algorithm sends exactly the messages its
 * schedule says (docs/collectives.md), for world sizes 1 to 9. p is the
 * largest power of two <= n, rem = n - p, and the folding algorithms add one
 * message per folded pair on the way in and one on the way out. */

typedef struct count_run {
    cs_world *w;
    bool barrier; /* run a barrier, else an all_reduce */
    cs_coll_algo algo;
    int64_t len;
    int sends;        /* collective sends seen on the bus */
    int to[9][8], nto[9]; /* each rank's sends' destinations, in order (the
                             bus calls its sinks under its lock) */
} count_run;

static void count_sink(void *ud, const cs_event *ev) {
    count_run *cr = ud;
    if (ev->type == CS_EV_POST && ev->ctx == CS_WORLD_CTX && cs_op_is_send(ev->op)) {
        cr->sends++;
        if (cr->nto[ev->rank] < 8) cr->to[ev->rank][cr->nto[ev->rank]++] = ev->peer;
    }
}

static void *count_rank(void *p) {
    void **a = p;
    count_run *cr = a[0];
    cs_rank *r = cs_world_rank(cr->w, (int)(intptr_t)a[1]);
    if (cr->barrier) {
        ck_assert_int_eq(cs_barrier(r, &(cs_coll_call){.line = 1}), CS_OK);
    } else {
        cs_tensor *t = input(r, CS_INT64, cr->len, cs_rank_id(r), 0, CS_RED_SUM);
        ck_assert_int_eq(cs_all_reduce(r, t, &(cs_coll_call){.algo = cr->algo, .line = 1}),
                         CS_OK);
        cs_tensor_release(t);
    }
    cs_rank_exit(r, 0);
    return NULL;
}

static void count_world(int n, count_run *cr) {
    char err[128];
    cs_bus bus;
    cs_world_config cfg = {.world = n, .engine = "thread", .script = "count.c"};
    ck_assert(cs_send_mode_parse("rendezvous", &cfg.mode));
    ck_assert_int_eq(cs_bus_init(&bus, n), 0);
    cs_bus_subscribe(&bus, (cs_sink){count_sink, cr});
    cr->w = cs_world_new(&cfg, &bus, err, sizeof err);
    ck_assert_msg(cr->w != NULL, "%s", err);
    pthread_t th[9];
    void *args[9][2];
    for (int i = 0; i < n; i++) {
        args[i][0] = cr, args[i][1] = (void *)(intptr_t)i;
        ck_assert_int_eq(pthread_create(&th[i], NULL, count_rank, args[i]), 0);
    }
    for (int i = 0; i < n; i++) pthread_join(th[i], NULL);
    cs_world_free(cr->w);
    cs_bus_destroy(&bus);
}

static int all_reduce_sends(int n, cs_coll_algo algo, int64_t len) {
    count_run cr = {.algo = algo, .len = len};
    count_world(n, &cr);
    return cr.sends;
}

START_TEST(test_all_reduce_counts) {
    int n = _i, p = 1, lg = 0;
    while (p * 2 <= n) p *= 2, lg++;
    int rem = n - p;
    ck_assert_int_eq(all_reduce_sends(n, CS_ALGO_RING, 24), 2 * (n - 1) * n);
    ck_assert_int_eq(all_reduce_sends(n, CS_ALGO_RECURSIVE_DOUBLING, 24), p * lg + 2 * rem);
    ck_assert_int_eq(all_reduce_sends(n, CS_ALGO_REDUCE_BROADCAST, 24), 2 * (n - 1));
    ck_assert_int_eq(all_reduce_sends(n, CS_ALGO_RECURSIVE_HALVING, 24), 2 * p * lg + 2 * rem);
    /* fewer elements than ranks: empty blocks still travel, the count is the schedule's */
    ck_assert_int_eq(all_reduce_sends(n, CS_ALGO_RECURSIVE_HALVING, 1), 2 * p * lg + 2 * rem);
}
END_TEST

/* The barrier's dissemination schedule, as chapter 3 and docs/collectives.md
 * state it: in round k = 1, 2, ... rank r signals rank r + 2^(k-1) (mod n),
 * ceil(log2 n) rounds. */
START_TEST(test_barrier_schedule) {
    int n = _i, rounds = 0;
    while ((1 << rounds) < n) rounds++;
    count_run cr = {.barrier = true};
    count_world(n, &cr);
    for (int r = 0; r < n; r++) {
        ck_assert_int_eq(cr.nto[r], rounds);
        for (int k = 1; k <= rounds; k++)
            ck_assert_int_eq(cr.to[r][k - 1], (r + (1 << (k - 1))) % n);
    }
}
END_TEST

/* ---- the monitor's verdicts */

static void fn_scenario(cs_rank *r, void *arg) {
    int k = *(int *)arg, me = cs_rank_id(r), n = cs_rank_world_size(r);
    cs_tensor *t = vec(r, CS_FLOAT32, me == 1 && k == 1 ? 8 : 4);
    cs_tensor *ti = vec(r, CS_INT32, 4);
    cs_coll_call c = {.line = 10 + me};
    int rc = CS_OK;
    switch (k) {
    case 0: /* the last rank skips the second all_reduce */
        rc = cs_all_reduce(r, t, &c);
        if (rc == CS_OK && me != n - 1) rc = cs_all_reduce(r, t, &c);
        if (me != n - 1) ck_assert_int_eq(rc, CS_EABORT);
        break;
    case 1: /* rank 1 all-reduces 8 elements, the others 4 */
        rc = cs_all_reduce(r, t, &c);
        break;
    case 2: /* different roots */
        c.root = me == 2 ? 1 : 0;
        rc = cs_broadcast(r, t, &c);
        break;
    case 3: /* different ops */
        c.op = me == 0 ? CS_RED_MAX : CS_RED_SUM;
        rc = cs_all_reduce(r, t, &c);
        break;
    case 4: /* different dtypes */
        rc = cs_all_reduce(r, me == 1 ? ti : t, &c);
        break;
    case 5: /* different order: rank 0 broadcasts first, the others all-reduce first */
        if (me == 0) {
            if ((rc = cs_broadcast(r, t, &c)) == CS_OK) rc = cs_all_reduce(r, t, &c);
        } else if ((rc = cs_all_reduce(r, t, &c)) == CS_OK) {
            rc = cs_broadcast(r, t, &c);
        }
        break;
    case 6: { /* in a group: rank 2 barriers on it, rank 0 all-reduces */
        cs_group *g;
        ck_assert_int_eq(cs_group_new(r, (int[]){0, 2}, 2, &g), CS_OK);
        c.group = g;
        if (me == 0) rc = cs_all_reduce(r, t, &c);
        else if (me == 2) rc = cs_barrier(r, &c);
        cs_group_free(g);
        break;
    }
    case 8: /* rank 0 creates its groups in another order: its first is [0, 1] */
    case 9: { /* ... and all use "the group of [0, 1]", under different contexts */
        static const int a[] = {0, 1}, b[] = {0, 1, 2};
        cs_group *g1, *g2;
        ck_assert_int_eq(cs_group_new(r, me == 0 ? a : b, me == 0 ? 2 : 3, &g1), CS_OK);
        ck_assert_int_eq(cs_group_new(r, me == 0 ? b : a, me == 0 ? 3 : 2, &g2), CS_OK);
        c.group = k == 8 ? g1 : (me == 0 ? g1 : g2);
        if (c.group->rank >= 0) rc = cs_all_reduce(r, t, &c);
        cs_group_free(g1), cs_group_free(g2);
        break;
    }
    case 7: /* rank 1 waits for a user message instead of joining the all_reduce */
        if (me == 1) rc = cs_recv(r, t, 0, 0, 40, NULL);
        else rc = cs_all_reduce(r, t, &c);
        break;
    }
    ck_assert(rc == CS_OK || rc == CS_EABORT);
    cs_tensor_release(t), cs_tensor_release(ti);
}

static void expect_verdict(int kind, int n, cs_end_reason want, const char *const *texts) {
    char v[4096];
    ck_assert_int_eq(run_algos(n, NULL, fn_scenario, &kind, v, sizeof v), want);
    for (; *texts; texts++) ck_assert_msg(strstr(v, *texts), "verdict lacks '%s':\n%s", *texts, v);
}

START_TEST(test_verdict_skip) {
    expect_verdict(0, 4, CS_END_DEADLOCK, (const char *const[]){
        "why: ranks 0, 1, 2 entered all_reduce(SUM, float32, 4 elements) at test.c:1",
        "collective call #2 on the world group",
        "rank 3 did not call it: it has finished", NULL});
}
END_TEST

START_TEST(test_verdict_count) {
    expect_verdict(1, 3, CS_END_ERROR, (const char *const[]){
        "collective mismatch: the ranks of the world group disagree on their collective call #1",
        "rank 1 calls all_reduce(SUM, float32, 8 elements) at test.c:11",
        /* rank 0 or 2, whichever arrived first: the order of arrival is free */
        "calls all_reduce(SUM, float32, 4 elements) at test.c:1", NULL});
}
END_TEST

START_TEST(test_verdict_root_op_dtype) {
    expect_verdict(2, 3, CS_END_ERROR, (const char *const[]){
        "rank 2 calls broadcast(root 1, float32, 4 elements) at test.c:12", NULL});
    expect_verdict(3, 3, CS_END_ERROR, (const char *const[]){
        "rank 0 calls all_reduce(MAX, float32, 4 elements) at test.c:10", NULL});
    expect_verdict(4, 3, CS_END_ERROR, (const char *const[]){
        "rank 1 calls all_reduce(SUM, int32, 4 elements) at test.c:11", NULL});
}
END_TEST

START_TEST(test_verdict_order_group) {
    expect_verdict(5, 3, CS_END_ERROR, (const char *const[]){
        "rank 0 calls broadcast(root 0, float32, 4 elements) at test.c:10", NULL});
    expect_verdict(6, 3, CS_END_ERROR, (const char *const[]){
        "the group of ranks [0, 2] disagree on their collective call #1",
        "rank 2 calls barrier() at test.c:12", NULL});
}
END_TEST

START_TEST(test_verdict_group_order) {
    expect_verdict(8, 3, CS_END_ERROR, (const char *const[]){
        "collective mismatch: ranks 1, 2 call all_reduce at test.c:",
        "on the group of ranks [0, 1, 2], which rank 0 knows as the group of ranks [0, 1]",
        "in the same order", NULL});
    expect_verdict(9, 3, CS_END_DEADLOCK, (const char *const[]){
        "did not call it: it is blocked at test.c:1",
        "under another context: the ranks created their groups with dist.new_group in "
        "different orders", NULL});
}
END_TEST

START_TEST(test_verdict_blocked_elsewhere) {
    expect_verdict(7, 3, CS_END_DEADLOCK, (const char *const[]){
        "rank 1 did not call it: it is blocked at test.c:40", NULL});
}
END_TEST

/* ---- the coll event in a trace: written and read back the same */

START_TEST(test_trace_coll) {
    static const int group[] = {3, 0, 2};
    cs_event ev = {.type = CS_EV_COLL, .rank = 2, .seq = 7, .t = 0.5, .text = "reduce",
                   .begin = true, .peer = 3, .ctx = 4, .bytes = 16, .dtype = CS_INT64,
                   .line = 12, .count = 2, .algo = "tree", .reduce_op = "BXOR",
                   .group = group, .ngroup = 3};
    json_t *j = cs_event_to_json(&ev);
    ck_assert_ptr_nonnull(j);
    cs_event back;
    cs_trace_strings store = {0};
    char err[256];
    ck_assert_msg(cs_event_from_json(j, 4, &back, &store, err, sizeof err) == 0, "%s", err);
    ck_assert_str_eq(back.text, "reduce");
    ck_assert(back.begin);
    ck_assert_int_eq(back.peer, 3);
    ck_assert_int_eq(back.ctx, 4);
    ck_assert_int_eq(back.bytes, 16);
    ck_assert_int_eq(back.dtype, CS_INT64);
    ck_assert_int_eq(back.count, 2);
    ck_assert_str_eq(back.algo, "tree");
    ck_assert_str_eq(back.reduce_op, "BXOR");
    ck_assert_int_eq(back.ngroup, 3);
    for (int i = 0; i < 3; i++) ck_assert_int_eq(back.group[i], group[i]);
    json_decref(j);
    /* the world group and no reduce op: both keys are left out */
    ev.group = NULL, ev.ngroup = 0, ev.reduce_op = NULL;
    j = cs_event_to_json(&ev);
    ck_assert_ptr_null(json_object_get(j, "group"));
    ck_assert_ptr_null(json_object_get(j, "reduce_op"));
    ck_assert_int_eq(cs_event_from_json(j, 4, &back, &store, err, sizeof err), 0);
    ck_assert_int_eq(back.ngroup, 0);
    ck_assert_ptr_null(back.reduce_op);
    json_decref(j);
    /* a group rank outside the world is refused */
    j = json_loads("{\"type\":\"coll\",\"rank\":0,\"seq\":0,\"t\":0,\"name\":\"barrier\","
                   "\"begin\":true,\"root\":-1,\"ctx\":2,\"bytes\":0,\"dtype\":\"uint8\","
                   "\"line\":1,\"count\":0,\"algo\":\"dissemination\",\"group\":[0,9]}", 0, NULL);
    ck_assert_ptr_nonnull(j);
    ck_assert_int_eq(cs_event_from_json(j, 4, &back, &store, err, sizeof err), -1);
    ck_assert(strstr(err, "group rank 9 out of range"));
    json_decref(j);
    cs_trace_strings_free(&store);
}
END_TEST

/* ---- the reduction kernel: its vector blocks against its one-by-one tail */

/* Element i of stream s as dtype d's bytes: every bit pattern's kind, NaN,
 * infinities, negative zero and values that overflow and wrap included. */
static void raw_value(cs_dtype d, int s, int i, void *out) {
    static const double f[] = {1.5, -2.25, 0.0, -0.0, NAN, INFINITY, -INFINITY, 3e38, -7.0, 1e-40};
    double v = f[(i * 7 + s * 3) % 10];
    uint64_t u = (uint64_t)(i + 1) * 0x9e3779b97f4a7c15u >> (s * 7 % 40);
    switch (d) {
    case CS_FLOAT32: *(float *)out = (float)v; break;
    case CS_FLOAT64: *(double *)out = v; break;
    case CS_INT32: *(int32_t *)out = (int32_t)(uint32_t)u; break;
    case CS_INT64: *(int64_t *)out = (int64_t)u; break;
    case CS_UINT8: *(uint8_t *)out = (uint8_t)u; break;
    default: ck_abort();
    }
}

START_TEST(test_combine_blocks) {
    enum { MAX = 70 };
    for (int di = 0; di < NDTYPES; di++) {
        cs_dtype d = dtypes[di];
        size_t es = cs_dtype_size(d);
        for (cs_redop op = 0; op < CS_RED_NOPS; op++) {
            if (!op_fits(op, d) || op == CS_RED_AVG) continue; /* AVG is SUM, then a divide */
            for (size_t n = 0; n <= MAX; n++) {
                unsigned char acc[MAX * 8], in[MAX * 8], want[MAX * 8];
                for (size_t i = 0; i < n; i++) {
                    raw_value(d, 0, (int)i, acc + i * es);
                    raw_value(d, 1, (int)i, in + i * es);
                }
                memcpy(want, acc, n * es);
                for (size_t i = 0; i < n; i++) /* one element: the scalar tail */
                    cs_coll_combine(d, op, want + i * es, in + i * es, 1);
                cs_coll_combine(d, op, acc, in, n);
                if (memcmp(acc, want, n * es) != 0)
                    ck_abort_msg("%s op %d over %zu elements: the blocks differ from one by one",
                                 cs_dtype_name(d), (int)op, n);
            }
        }
    }
}
END_TEST

static Suite *coll_suite(void) {
    Suite *s = suite_create("collectives");
    TCase *tc = tcase_create("matrix");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, test_matrix_world, 1, 10);
    tcase_add_test(tc, test_matrix_group);
    suite_add_tcase(s, tc);
    tc = tcase_create("errors");
    tcase_add_test(tc, test_arg_errors);
    tcase_add_test(tc, test_algo_names);
    tcase_add_test(tc, test_run_algo);
    tcase_add_test(tc, test_default_pick);
    tcase_add_loop_test(tc, test_all_reduce_counts, 1, 10);
    tcase_add_loop_test(tc, test_barrier_schedule, 1, 10);
    tcase_add_test(tc, test_trace_coll);
    tcase_add_test(tc, test_combine_blocks);
    suite_add_tcase(s, tc);
    tc = tcase_create("verdicts");
    tcase_add_test(tc, test_verdict_skip);
    tcase_add_test(tc, test_verdict_count);
    tcase_add_test(tc, test_verdict_root_op_dtype);
    tcase_add_test(tc, test_verdict_order_group);
    tcase_add_test(tc, test_verdict_blocked_elsewhere);
    tcase_add_test(tc, test_verdict_group_order);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    return run_suite(coll_suite());
}
