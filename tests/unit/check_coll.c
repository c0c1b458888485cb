/* check_coll.c -- every collective x every dtype it takes x every algorithm x
 * world sizes 1 to 9 (and groups), against a naive reference each rank computes
 * locally from everybody's inputs; every argument error; the monitor's
 * collective verdicts. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "coll_internal.h"
#include "monitor.h"

/* ---- harness: a world, a monitor that aborts on its verdicts, a thread per rank */

typedef void (*rank_fn)(cs_rank *r, void *arg);

typedef struct harness {
    cs_bus bus;
    cs_monitor mon;
    cs_world *w;
    rank_fn fn;
    void *arg;
    char verdict[4096];
} harness;

typedef struct rank_arg {
    harness *h;
    int rank;
} rank_arg;

static void on_verdict(void *ud) { cs_world_abort(ud, CS_END_DEADLOCK); }

static void *rank_main(void *p) {
    rank_arg *a = p;
    cs_rank *r = cs_world_rank(a->h->w, a->rank);
    a->h->fn(r, a->h->arg);
    cs_rank_exit(r, cs_world_aborted(a->h->w) ? 1 : 0);
    return NULL;
}

static cs_end_reason run_algos(int n, const unsigned char *algos, rank_fn fn, void *arg,
                               char *verdict, size_t vlen) {
    harness h = {.fn = fn, .arg = arg};
    char err[256];
    cs_world_config cfg = {.world = n, .engine = "thread", .script = "test.c"};
    if (algos) memcpy(cfg.coll_algo, algos, sizeof cfg.coll_algo);
    ck_assert(cs_send_mode_parse("rendezvous", &cfg.mode));
    ck_assert_int_eq(cs_bus_init(&h.bus, n), 0);
    ck_assert_int_eq(cs_monitor_init(&h.mon, n), 0);
    h.w = cs_world_new(&cfg, &h.bus, err, sizeof err);
    ck_assert_msg(h.w != NULL, "%s", err);
    h.mon.bus = &h.bus;
    h.mon.on_deadlock = on_verdict;
    h.mon.ud = h.w;
    cs_bus_subscribe(&h.bus, cs_monitor_sink(&h.mon));
    pthread_t *t = calloc((size_t)n, sizeof *t);
    rank_arg *a = calloc((size_t)n, sizeof *a);
    for (int i = 0; i < n; i++) {
        a[i] = (rank_arg){&h, i};
        ck_assert_int_eq(pthread_create(&t[i], NULL, rank_main, &a[i]), 0);
    }
    for (int i = 0; i < n; i++) pthread_join(t[i], NULL);
    cs_end_reason why = cs_world_end_reason(h.w);
    if (verdict) snprintf(verdict, vlen, "%s", h.mon.verdict ? h.mon.verdict : "");
    cs_world_free(h.w);
    cs_monitor_destroy(&h.mon);
    cs_bus_destroy(&h.bus);
    free(t);
    free(a);
    return why;
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
                                      CS_ALGO_REDUCE_BROADCAST};
    static const cs_coll_algo tl[] = {CS_ALGO_TREE, CS_ALGO_LINEAR};
    static const cs_coll_algo rd[] = {CS_ALGO_RING, CS_ALGO_DIRECT};
    for (cs_redop op = 0; op < CS_RED_NOPS; op++) {
        if (!op_fits(op, d)) continue;
        c->op = op;
        cs_tensor *want = reference(r, d, len, mem, n, s, op, 0);
        for (int a = 0; a < 3; a++) {
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

static Suite *coll_suite(void) {
    Suite *s = suite_create("collectives");
    TCase *tc = tcase_create("matrix");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, test_matrix_world, 1, 10);
    tcase_add_test(tc, test_matrix_group);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    SRunner *sr = srunner_create(coll_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
