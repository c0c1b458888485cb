/* check_api.c -- the rank runtime over the thread engine, driven from C:
 * matching order, any-source, tags, send modes, mismatches, deadlock aborts. */
#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "monitor.h"
#include "rank_harness.h"
#include "run_suite.h"

/* ---- runs (rank_harness.c: a thread per rank, the monitor aborting on its verdicts) */

/* Run fn on n ranks with send mode mode; returns how the run ended. */
static cs_end_reason run_world(int n, const char *mode, rank_fn fn, void *arg) {
    cs_world_config cfg = {.world = n};
    ck_assert(cs_send_mode_parse(mode, &cfg.mode));
    return run_ranks(&cfg, fn, arg, NULL, 0);
}

static cs_tensor *vec(cs_rank *r, int64_t n, double v) {
    int64_t shape[1] = {n};
    cs_tensor *t = cs_tensor_full(cs_rank_budget(r), CS_FLOAT32, 1, shape, v);
    ck_assert_ptr_nonnull(t);
    return t;
}

/* ---- cases */

static void fn_pair(cs_rank *r, void *arg) {
    cs_tensor *t = vec(r, 4, cs_rank_id(r) == 0 ? 7 : 0);
    if (cs_rank_id(r) == 0) {
        ck_assert_int_eq(cs_send(r, t, 1, 0, 10), CS_OK);
    } else {
        int from = -9;
        ck_assert_int_eq(cs_recv(r, t, 0, 0, 20, &from), CS_OK);
        ck_assert_int_eq(from, 0);
        for (int i = 0; i < 4; i++) ck_assert_double_eq(cs_tensor_get(t, i), 7);
    }
    cs_tensor_release(t);
}

START_TEST(test_send_recv) { ck_assert_int_eq(run_world(2, "rendezvous", fn_pair, NULL), CS_END_NONE); }
END_TEST

/* Three messages with one tag arrive in the order they were sent. */
static void fn_order(cs_rank *r, void *arg) {
    if (cs_rank_id(r) == 0) {
        cs_request *q[3];
        cs_tensor *t[3];
        for (int i = 0; i < 3; i++) {
            t[i] = vec(r, 2, i + 1);
            ck_assert_int_eq(cs_isend(r, t[i], 1, 5, 1, &q[i]), CS_OK);
        }
        ck_assert_int_eq(cs_wait_all(r, q, 3, 2), CS_OK);
        for (int i = 0; i < 3; i++) cs_request_release(q[i]), cs_tensor_release(t[i]);
    } else {
        cs_tensor *t = vec(r, 2, 0);
        for (int i = 0; i < 3; i++) {
            ck_assert_int_eq(cs_recv(r, t, 0, 5, 3, NULL), CS_OK);
            ck_assert_double_eq(cs_tensor_get(t, 0), i + 1);
        }
        cs_tensor_release(t);
    }
}

START_TEST(test_non_overtaking) {
    ck_assert_int_eq(run_world(2, "rendezvous", fn_order, NULL), CS_END_NONE);
    ck_assert_int_eq(run_world(2, "eager", fn_order, NULL), CS_END_NONE);
}
END_TEST

/* Eager sends of 256 KiB in windows, receives posted while they are copied:
 * a send that found no receive copies its bytes aside without the matcher's
 * lock and then looks again, so either way each message arrives whole and in
 * order. */
enum { STREAM_N = 240, STREAM_W = 8, STREAM_ELEMS = 64 << 10 };

static void fn_eager_stream(cs_rank *r, void *arg) {
    cs_request *q[STREAM_W];
    cs_tensor *t[STREAM_W];
    bool sender = cs_rank_id(r) == 0;
    for (int i = 0; i < STREAM_W; i++) t[i] = vec(r, STREAM_ELEMS, 0);
    for (int at = 0; at < STREAM_N; at += STREAM_W) {
        for (int i = 0; i < STREAM_W; i++) {
            if (sender) {
                cs_tensor_set(t[i], 0, at + i);
                cs_tensor_set(t[i], STREAM_ELEMS - 1, -(at + i));
                ck_assert_int_eq(cs_isend(r, t[i], 1, 3, 1, &q[i]), CS_OK);
            } else {
                ck_assert_int_eq(cs_irecv(r, t[i], 0, 3, 2, &q[i]), CS_OK);
            }
        }
        ck_assert_int_eq(cs_wait_all(r, q, STREAM_W, 3), CS_OK);
        for (int i = 0; i < STREAM_W; i++) {
            if (!sender) {
                ck_assert_double_eq(cs_tensor_get(t[i], 0), at + i);
                ck_assert_double_eq(cs_tensor_get(t[i], STREAM_ELEMS - 1), -(at + i));
            }
            cs_request_release(q[i]);
        }
    }
    for (int i = 0; i < STREAM_W; i++) cs_tensor_release(t[i]);
}

START_TEST(test_eager_stream_whole_and_in_order) {
    ck_assert_int_eq(run_world(2, "eager", fn_eager_stream, NULL), CS_END_NONE);
}
END_TEST

/* A receive for tag 2 skips the earlier tag-1 message. */
static void fn_tags(cs_rank *r, void *arg) {
    if (cs_rank_id(r) == 0) {
        cs_tensor *a = vec(r, 1, 1), *b = vec(r, 1, 2);
        cs_request *qa, *qb;
        ck_assert_int_eq(cs_isend(r, a, 1, 1, 1, &qa), CS_OK);
        ck_assert_int_eq(cs_isend(r, b, 1, 2, 2, &qb), CS_OK);
        cs_request *qs[2] = {qa, qb};
        ck_assert_int_eq(cs_wait_all(r, qs, 2, 3), CS_OK);
        cs_request_release(qa), cs_request_release(qb);
        cs_tensor_release(a), cs_tensor_release(b);
    } else {
        cs_tensor *t = vec(r, 1, 0);
        ck_assert_int_eq(cs_recv(r, t, 0, 2, 4, NULL), CS_OK);
        ck_assert_double_eq(cs_tensor_get(t, 0), 2);
        ck_assert_int_eq(cs_recv(r, t, 0, 1, 5, NULL), CS_OK);
        ck_assert_double_eq(cs_tensor_get(t, 0), 1);
        cs_tensor_release(t);
    }
}

START_TEST(test_tags) { ck_assert_int_eq(run_world(2, "rendezvous", fn_tags, NULL), CS_END_NONE); }
END_TEST

/* Rank 0 receives from any source; each sender's value identifies it. */
static void fn_any(cs_rank *r, void *arg) {
    int n = cs_rank_world_size(r);
    if (cs_rank_id(r) == 0) {
        cs_tensor *t = vec(r, 1, 0);
        int seen = 0;
        for (int i = 1; i < n; i++) {
            int from = -1;
            ck_assert_int_eq(cs_recv(r, t, CS_ANY_SOURCE, 0, 1, &from), CS_OK);
            ck_assert_int_ge(from, 1);
            ck_assert_double_eq(cs_tensor_get(t, 0), from * 10);
            seen |= 1 << from;
        }
        ck_assert_int_eq(seen, ((1 << n) - 1) & ~1);
        cs_tensor_release(t);
    } else {
        cs_tensor *t = vec(r, 1, cs_rank_id(r) * 10);
        ck_assert_int_eq(cs_send(r, t, 0, 0, 2), CS_OK);
        cs_tensor_release(t);
    }
}

START_TEST(test_any_source) { ck_assert_int_eq(run_world(5, "rendezvous", fn_any, NULL), CS_END_NONE); }
END_TEST

/* Both ranks send first: fine when eager, a deadlock under rendezvous. */
static void fn_both_send(cs_rank *r, void *arg) {
    int64_t n = *(int64_t *)arg;
    int peer = 1 - cs_rank_id(r);
    cs_tensor *s = vec(r, n, 1), *t = vec(r, n, 0);
    int rc = cs_send(r, s, peer, 0, 1);
    if (rc == CS_OK) rc = cs_recv(r, t, peer, 0, 2, NULL);
    ck_assert(rc == CS_OK || rc == CS_EABORT);
    if (rc == CS_OK) ck_assert_double_eq(cs_tensor_get(t, n - 1), 1);
    cs_tensor_release(s);
    cs_tensor_release(t);
}

START_TEST(test_send_modes) {
    int64_t small = 16, large = 1024; /* 64 and 4096 bytes */
    ck_assert_int_eq(run_world(2, "rendezvous", fn_both_send, &small), CS_END_DEADLOCK);
    ck_assert_int_eq(run_world(2, "eager", fn_both_send, &large), CS_END_NONE);
    ck_assert_int_eq(run_world(2, "eager:1024", fn_both_send, &small), CS_END_NONE);
    ck_assert_int_eq(run_world(2, "eager:1024", fn_both_send, &large), CS_END_DEADLOCK);
}
END_TEST

/* The receive expects 3 floats, the send carries 4: both sides are told. */
static void fn_mismatch(cs_rank *r, void *arg) {
    if (cs_rank_id(r) == 0) {
        cs_tensor *t = vec(r, 4, 1);
        int rc = cs_send(r, t, 1, 0, 11);
        ck_assert_int_eq(rc, CS_EMISMATCH);
        cs_tensor_release(t);
    } else {
        cs_tensor *t = vec(r, 3, 0);
        int rc = cs_recv(r, t, 0, 0, 22, NULL);
        ck_assert_int_eq(rc, CS_EMISMATCH);
        const char *m = cs_rank_errmsg(r);
        ck_assert_msg(strstr(m, "rank 1 receives float32 [3] (12 bytes) at test.c:22") != NULL, "%s", m);
        ck_assert_msg(strstr(m, "rank 0 sent float32 [4] (16 bytes) at test.c:11") != NULL, "%s", m);
        cs_tensor_release(t);
    }
}

START_TEST(test_mismatch) { ck_assert_int_eq(run_world(2, "rendezvous", fn_mismatch, NULL), CS_END_NONE); }
END_TEST

/* A rendezvous isend is not complete before its receive is posted. */
static void fn_isend_pending(cs_rank *r, void *arg) {
    cs_tensor *t = vec(r, 2, 3);
    if (cs_rank_id(r) == 0) {
        cs_request *q;
        ck_assert_int_eq(cs_isend(r, t, 1, 0, 1, &q), CS_OK);
        ck_assert(!cs_request_is_completed(q));
        cs_tensor *go = vec(r, 1, 1);
        ck_assert_int_eq(cs_send(r, go, 1, 9, 2), CS_OK); /* now rank 1 may receive */
        ck_assert_int_eq(cs_wait(r, q, 3), CS_OK);
        ck_assert(cs_request_is_completed(q));
        cs_request_release(q);
        cs_tensor_release(go);
    } else {
        cs_tensor *go = vec(r, 1, 0);
        ck_assert_int_eq(cs_recv(r, go, 0, 9, 4, NULL), CS_OK);
        ck_assert_int_eq(cs_recv(r, t, 0, 0, 5, NULL), CS_OK);
        cs_tensor_release(go);
    }
    cs_tensor_release(t);
}

START_TEST(test_isend_pending) {
    ck_assert_int_eq(run_world(2, "rendezvous", fn_isend_pending, NULL), CS_END_NONE);
}
END_TEST

/* Each rank passes a counter around a ring many times. */
static void fn_ring(cs_rank *r, void *arg) {
    int iters = *(int *)arg, n = cs_rank_world_size(r), me = cs_rank_id(r);
    cs_tensor *s = vec(r, 1, me), *t = vec(r, 1, 0);
    for (int i = 0; i < iters; i++) {
        int right = (me + 1) % n, left = (me + n - 1) % n;
        if (me % 2 == 0) {
            ck_assert_int_eq(cs_send(r, s, right, 0, 1), CS_OK);
            ck_assert_int_eq(cs_recv(r, t, left, 0, 2, NULL), CS_OK);
        } else {
            ck_assert_int_eq(cs_recv(r, t, left, 0, 2, NULL), CS_OK);
            ck_assert_int_eq(cs_send(r, s, right, 0, 1), CS_OK);
        }
        cs_tensor_copy_(s, t);
    }
    /* after iters steps the value that started at rank me-iters is here */
    int64_t want = ((me - iters) % n + n) % n;
    ck_assert_double_eq(cs_tensor_get(s, 0), (double)want);
    cs_tensor_release(s);
    cs_tensor_release(t);
}

START_TEST(test_ring_64x1000) {
    int iters = 1000;
    ck_assert_int_eq(run_world(64, "rendezvous", fn_ring, &iters), CS_END_NONE);
}
END_TEST

START_TEST(test_ring_odd) {
    int iters = 7; /* an odd ring: the last even rank and rank 0 both send first, yet it drains */
    ck_assert_int_eq(run_world(5, "rendezvous", fn_ring, &iters), CS_END_NONE);
}
END_TEST

static void fn_bad_args(cs_rank *r, void *arg) {
    cs_tensor *t = vec(r, 2, 0);
    ck_assert_int_eq(cs_send(r, t, 2, 0, 1), CS_EARG);
    ck_assert_msg(strstr(cs_rank_errmsg(r), "destination 2 is outside the world") != NULL, "%s",
                  cs_rank_errmsg(r));
    ck_assert_int_eq(cs_recv(r, t, -5, 0, 1, NULL), CS_EARG);
    ck_assert_int_eq(cs_send(r, t, 0, -1, 1), CS_EARG);
    int64_t shape[2] = {2, 2};
    cs_tensor *m = cs_tensor_full(NULL, CS_FLOAT32, 2, shape, 1);
    cs_tensor *col = cs_tensor_narrow(m, 1, 0, 1); /* not contiguous */
    ck_assert_int_eq(cs_send(r, col, 0, 0, 1), CS_EARG);
    ck_assert_msg(strstr(cs_rank_errmsg(r), "contiguous") != NULL, "%s", cs_rank_errmsg(r));
    cs_tensor_release(col);
    cs_tensor_release(m);
    cs_tensor_release(t);
}

START_TEST(test_bad_args) { ck_assert_int_eq(run_world(2, "rendezvous", fn_bad_args, NULL), CS_END_NONE); }
END_TEST

/* A rank waiting on a rank that finished is a deadlock, not a hang. */
static void fn_wait_finished(cs_rank *r, void *arg) {
    if (cs_rank_id(r) == 1) {
        cs_tensor *t = vec(r, 1, 0);
        ck_assert_int_eq(cs_recv(r, t, 0, 0, 3, NULL), CS_EABORT);
        cs_tensor_release(t);
    }
}

START_TEST(test_wait_on_finished) {
    ck_assert_int_eq(run_world(2, "rendezvous", fn_wait_finished, NULL), CS_END_DEADLOCK);
}
END_TEST

/* A long compute ends promptly when the run is aborted. */
static void fn_compute(cs_rank *r, void *arg) {
    if (cs_rank_id(r) == 0) {
        ck_assert_int_eq(cs_compute(r, 3600e3, 1), CS_EABORT);
    } else {
        ck_assert_int_eq(cs_compute(r, 5, 1), CS_OK);
        cs_world_abort(cs_rank_world(r), CS_END_QUIT);
    }
}

START_TEST(test_compute_abort) { ck_assert_int_eq(run_world(2, "rendezvous", fn_compute, NULL), CS_END_QUIT); }
END_TEST

START_TEST(test_send_mode_parse) {
    cs_send_mode m;
    char buf[64];
    ck_assert(cs_send_mode_parse("rendezvous", &m));
    ck_assert(!cs_send_mode_is_eager(&m, 0));
    ck_assert(cs_send_mode_parse("eager", &m));
    ck_assert(cs_send_mode_is_eager(&m, (size_t)1 << 40));
    ck_assert(cs_send_mode_parse("eager:4K", &m));
    ck_assert(cs_send_mode_is_eager(&m, 4096));
    ck_assert(!cs_send_mode_is_eager(&m, 4097));
    ck_assert_str_eq(cs_send_mode_format(&m, buf, sizeof buf), "eager:4096");
    ck_assert(!cs_send_mode_parse("eager:", &m));
    ck_assert(!cs_send_mode_parse("eager:-1", &m));
    ck_assert(!cs_send_mode_parse("eager:12x", &m));
    ck_assert(!cs_send_mode_parse("buffered", &m));
    /* a limit whose K or M would wrap past SIZE_MAX is refused, not taken mod 2^64 */
    ck_assert(!cs_send_mode_parse("eager:18014398509481984K", &m)); /* 2^54 K = 2^64 */
    ck_assert(!cs_send_mode_parse("eager:17592186044416M", &m));    /* 2^44 M = 2^64 */
    ck_assert(cs_send_mode_parse("eager:17592186044415M", &m));
    ck_assert(cs_send_mode_is_eager(&m, (size_t)1 << 63));
}
END_TEST

int main(void) {
    Suite *s = suite_create("api");
    TCase *tc = tcase_create("p2p");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_send_recv);
    tcase_add_test(tc, test_non_overtaking);
    tcase_add_test(tc, test_eager_stream_whole_and_in_order);
    tcase_add_test(tc, test_tags);
    tcase_add_test(tc, test_any_source);
    tcase_add_test(tc, test_send_modes);
    tcase_add_test(tc, test_mismatch);
    tcase_add_test(tc, test_isend_pending);
    tcase_add_test(tc, test_ring_64x1000);
    tcase_add_test(tc, test_ring_odd);
    tcase_add_test(tc, test_bad_args);
    tcase_add_test(tc, test_wait_on_finished);
    tcase_add_test(tc, test_compute_abort);
    tcase_add_test(tc, test_send_mode_parse);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
