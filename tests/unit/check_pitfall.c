/* check_pitfall.c -- the rank-side pitfall checks, driven from C on a world
 * whose ranks are played by the test thread: buffers owned by unfinished
 * isend/irecv (and views of them), once per site, eager sends, waits and
 * is_completed, requests never waited on, blocking operations on the rank
 * itself, --strict. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pitfall.h"
#include "world.h"
#include "run_suite.h"

static cs_bus bus;
static cs_world *w;
static int nwarn, nerror;
static char last[1024];

static void capture(void *ud, const cs_event *ev) {
    (void)ud;
    if (ev->type != CS_EV_WARN && ev->type != CS_EV_ERROR) return;
    if (ev->type == CS_EV_WARN) nwarn++;
    else nerror++;
    snprintf(last, sizeof last, "%s", ev->text ? ev->text : "");
}

static cs_rank *open_world(const char *mode, bool strict) {
    char err[256];
    cs_world_config cfg = {.world = 2, .engine = "thread", .script = "test.lua", .strict = strict};
    ck_assert(cs_send_mode_parse(mode, &cfg.mode));
    ck_assert_int_eq(cs_bus_init(&bus, 2), 0);
    cs_bus_subscribe(&bus, (cs_sink){capture, NULL});
    w = cs_world_new(&cfg, &bus, err, sizeof err);
    ck_assert_msg(w != NULL, "%s", err);
    nwarn = nerror = 0;
    last[0] = '\0';
    return cs_world_rank(w, 0);
}

static void close_world(void) {
    for (int k = 0; k < 2; k++) cs_rank_exit(cs_world_rank(w, k), 1);
    cs_world_free(w);
    cs_bus_destroy(&bus);
}

static cs_tensor *vec(cs_rank *r, int64_t n) {
    int64_t shape[1] = {n};
    cs_tensor *t = cs_tensor_full(cs_rank_budget(r), CS_FLOAT32, 1, shape, 1);
    ck_assert_ptr_nonnull(t);
    return t;
}

START_TEST(test_write_to_isend_buffer_once_per_site) {
    cs_rank *r = open_world("rendezvous", false);
    cs_tensor *t = vec(r, 8);
    cs_request *q;
    ck_assert(!cs_rank_has_inflight(r));
    ck_assert_int_eq(cs_isend(r, t, 1, 0, 3, &q), CS_OK);
    ck_assert(cs_rank_has_inflight(r));
    ck_assert_int_eq(cs_rank_access(r, t, CS_ACCESS_READ, 4), CS_OK);
    ck_assert_int_eq(nwarn, 0); /* reading what an isend sends is fine */
    ck_assert_int_eq(cs_rank_access(r, t, CS_ACCESS_WRITE, 5), CS_OK);
    ck_assert_int_eq(cs_rank_access(r, t, CS_ACCESS_WRITE, 5), CS_OK);
    ck_assert_int_eq(nwarn, 1);
    ck_assert_str_eq(last, "test.lua:5: writes to a tensor (or a view of it) that the isend posted at test.lua:3 is still sending: rank 1 may receive the old values or the new ones. Call wait() on the isend's work handle before changing the tensor");
    ck_assert_int_eq(cs_rank_access(r, t, CS_ACCESS_WRITE, 6), CS_OK);
    ck_assert_int_eq(nwarn, 2);
    cs_tensor *other = vec(r, 8);
    ck_assert_int_eq(cs_rank_access(r, other, CS_ACCESS_WRITE, 7), CS_OK);
    ck_assert_int_eq(nwarn, 2); /* another storage */
    cs_request_release(q);
    cs_tensor_release(t);
    cs_tensor_release(other);
    close_world();
}
END_TEST

START_TEST(test_views_exact_overlap) {
    cs_rank *r = open_world("rendezvous", false);
    int64_t sq[2] = {4, 4};
    cs_tensor *m = cs_tensor_full(cs_rank_budget(r), CS_FLOAT32, 2, sq, 0);
    cs_tensor *row1 = cs_tensor_select(m, 0, 1);
    cs_tensor *tail = cs_tensor_narrow(row1, 0, 2, 2); /* elements 6 and 7 */
    cs_request *q;
    ck_assert_int_eq(cs_irecv(r, tail, 1, 0, 3, &q), CS_OK);
    cs_tensor *cols = cs_tensor_narrow(m, 1, 0, 2); /* 0,1,4,5,8,9,12,13: spans 6..7, misses them */
    cs_tensor *col3 = cs_tensor_select(m, 1, 3);    /* 3,7,11,15: touches 7 */
    cs_tensor *head = cs_tensor_narrow(row1, 0, 0, 2);
    ck_assert_int_eq(cs_rank_access(r, cols, CS_ACCESS_WRITE, 4), CS_OK);
    ck_assert_int_eq(cs_rank_access(r, head, CS_ACCESS_READ, 5), CS_OK);
    ck_assert_int_eq(nwarn, 0);
    ck_assert_int_eq(cs_rank_access(r, col3, CS_ACCESS_READ, 6), CS_OK);
    ck_assert_int_eq(nwarn, 1);
    ck_assert_ptr_nonnull(strstr(last, "test.lua:6: reads a tensor (or a view of it) that the irecv posted at test.lua:3"));
    ck_assert_int_eq(cs_rank_access(r, m, CS_ACCESS_WRITE, 7), CS_OK);
    ck_assert_int_eq(nwarn, 2);
    ck_assert_ptr_nonnull(strstr(last, "test.lua:7: writes to a tensor (or a view of it) that the irecv posted at test.lua:3 is still receiving into"));
    cs_tensor *t[] = {m, row1, tail, cols, col3, head};
    for (size_t i = 0; i < 6; i++) cs_tensor_release(t[i]);
    cs_request_release(q);
    close_world();
}
END_TEST

START_TEST(test_eager_isend_frees_its_buffer) {
    cs_rank *r = open_world("eager", false);
    cs_tensor *t = vec(r, 8);
    cs_request *q;
    ck_assert_int_eq(cs_isend(r, t, 1, 0, 3, &q), CS_OK);
    ck_assert_int_eq(cs_rank_access(r, t, CS_ACCESS_WRITE, 4), CS_OK);
    ck_assert_int_eq(nwarn, 0);
    ck_assert_int_eq(cs_wait(r, q, 5), CS_OK);
    ck_assert(!cs_rank_has_inflight(r));
    cs_request_release(q);
    cs_tensor_release(t);
    close_world();
}
END_TEST

START_TEST(test_wait_and_test_release_the_buffer) {
    cs_rank *r = open_world("rendezvous", false), *r1 = cs_world_rank(w, 1);
    cs_tensor *t = vec(r, 4), *u = vec(r1, 4);
    cs_request *q;
    ck_assert_int_eq(cs_irecv(r, t, 1, 0, 3, &q), CS_OK);
    ck_assert(!cs_test(r, q));
    ck_assert(cs_rank_has_inflight(r));
    ck_assert_int_eq(cs_send(r1, u, 0, 0, 9), CS_OK); /* the irecv is posted: matches at once */
    ck_assert(cs_test(r, q));
    ck_assert(!cs_rank_has_inflight(r));
    ck_assert_int_eq(cs_rank_access(r, t, CS_ACCESS_READ, 4), CS_OK);
    ck_assert_int_eq(nwarn, 0);
    cs_request_release(q);
    ck_assert_int_eq(cs_irecv(r, t, 1, 0, 5, &q), CS_OK);
    ck_assert_int_eq(cs_send(r1, u, 0, 0, 9), CS_OK);
    ck_assert_int_eq(cs_wait_all(r, &q, 1, 6), CS_OK);
    ck_assert(!cs_rank_has_inflight(r));
    cs_request_release(q);
    cs_tensor_release(t);
    cs_tensor_release(u);
    close_world();
}
END_TEST

START_TEST(test_strict_fails_the_access) {
    cs_rank *r = open_world("rendezvous", true);
    cs_tensor *t = vec(r, 4);
    cs_request *q;
    ck_assert_int_eq(cs_irecv(r, t, 1, 0, 3, &q), CS_OK);
    ck_assert_int_eq(cs_rank_access(r, t, CS_ACCESS_READ, 4), CS_EPITFALL);
    ck_assert_ptr_nonnull(strstr(cs_rank_errmsg(r), "reads a tensor (or a view of it) that the irecv posted at test.lua:3"));
    ck_assert_ptr_nonnull(strstr(cs_rank_errmsg(r), "(--strict)"));
    ck_assert_int_eq(nwarn, 0);
    /* a send from the buffer reads it too */
    ck_assert_int_eq(cs_isend(r, t, 1, 0, 5, &q), CS_EPITFALL);
    cs_request_release(q);
    cs_tensor_release(t);
    close_world();
}
END_TEST

START_TEST(test_never_waited_at_exit) {
    cs_rank *r = open_world("eager", false);
    cs_tensor *t = vec(r, 4);
    cs_request *q;
    ck_assert_int_eq(cs_isend(r, t, 1, 0, 3, &q), CS_OK);
    cs_request_release(q);
    cs_rank_exit(r, 0);
    ck_assert_int_eq(nwarn, 1);
    ck_assert_str_eq(last, "test.lua:3: the isend posted here was never waited on: the rank dropped its work handle, or finished, without wait() or dist.wait_all on it, so nothing made sure it completed");
    cs_tensor_release(t);
    cs_rank_exit(cs_world_rank(w, 1), 1);
    cs_world_free(w);
    cs_bus_destroy(&bus);
}
END_TEST

START_TEST(test_never_waited_strict_is_an_error) {
    cs_rank *r = open_world("eager", true);
    cs_tensor *t = vec(r, 4);
    cs_request *q;
    ck_assert_int_eq(cs_isend(r, t, 1, 0, 3, &q), CS_OK);
    cs_request_release(q);
    cs_rank_exit(r, 0);
    ck_assert_int_eq(nwarn, 0);
    ck_assert_int_eq(nerror, 1);
    ck_assert_ptr_nonnull(strstr(last, "test.lua:3: the isend posted here was never waited on"));
    ck_assert_int_eq(cs_world_end_reason(w), CS_END_ERROR);
    cs_tensor_release(t);
    cs_rank_exit(cs_world_rank(w, 1), 1);
    cs_world_free(w);
    cs_bus_destroy(&bus);
}
END_TEST

/* Dropped handles of completed requests do not pile up: they are reported and let go. */
START_TEST(test_dropped_handles_are_swept) {
    cs_rank *r = open_world("eager", false);
    cs_tensor *t = vec(r, 1);
    for (int i = 0; i < 1000; i++) {
        cs_request *q;
        ck_assert_int_eq(cs_isend(r, t, 1, 0, 3, &q), CS_OK);
        cs_request_release(q);
    }
    ck_assert_int_lt(r->inflight.n, 200);
    ck_assert_int_eq(nwarn, 1);
    cs_tensor_release(t);
    close_world();
}
END_TEST

START_TEST(test_blocking_self) {
    cs_rank *r = open_world("rendezvous", false);
    cs_tensor *t = vec(r, 2);
    ck_assert_int_eq(cs_pitfall_self(r, CS_OP_RECV, 0, 0, false, 4), CS_OK);
    ck_assert_int_eq(nwarn, 1);
    ck_assert_str_eq(last, "test.lua:4: dist.recv from rank 0, the rank itself, waits forever: no isend to itself was posted before it, and only this rank could send one. Copy the tensor instead (dst:copy_(src)), or post dist.isend to yourself first");
    ck_assert_int_eq(cs_pitfall_self(r, CS_OP_SEND, 0, 0, false, 5), CS_OK);
    ck_assert_int_eq(nwarn, 2);
    ck_assert_int_eq(cs_pitfall_self(r, CS_OP_SEND, 0, 0, true, 6), CS_OK);
    ck_assert_int_eq(cs_pitfall_self(r, CS_OP_RECV, 1, 0, false, 7), CS_OK);
    ck_assert_int_eq(cs_pitfall_self(r, CS_OP_IRECV, 0, 0, false, 8), CS_OK);
    ck_assert_int_eq(nwarn, 2); /* eager, another peer, nonblocking: fine */
    cs_request *q, *q2;
    ck_assert_int_eq(cs_isend(r, t, 0, 3, 9, &q), CS_OK);
    ck_assert_int_eq(cs_pitfall_self(r, CS_OP_RECV, 0, 3, false, 10), CS_OK);
    ck_assert_int_eq(cs_pitfall_self(r, CS_OP_RECV, 0, 4, false, 11), CS_OK);
    ck_assert_int_eq(nwarn, 3); /* an isend to itself with tag 3 satisfies tag 3 only */
    cs_tensor *u = vec(r, 2);
    ck_assert_int_eq(cs_irecv(r, u, CS_ANY_SOURCE, 5, 12, &q2), CS_OK);
    ck_assert_int_eq(cs_pitfall_self(r, CS_OP_SEND, 0, 5, false, 13), CS_OK);
    ck_assert_int_eq(nwarn, 3);
    cs_request_release(q);
    cs_request_release(q2);
    cs_tensor_release(t);
    cs_tensor_release(u);
    close_world();
}
END_TEST

START_TEST(test_blocking_self_strict) {
    cs_rank *r = open_world("rendezvous", true);
    cs_tensor *t = vec(r, 2);
    ck_assert_int_eq(cs_recv(r, t, 0, 0, 4, NULL), CS_EPITFALL); /* instead of waiting forever */
    ck_assert_ptr_nonnull(strstr(cs_rank_errmsg(r), "dist.recv from rank 0, the rank itself, waits forever"));
    cs_tensor_release(t);
    close_world();
}
END_TEST

/* An async collective's work handle owns its tensors until it is waited on:
 * writing any of them, or reading one it writes, is a pitfall; reading what it
 * only reads is not; after the wait nothing is; a handle never waited on is
 * reported when the rank finishes. */
START_TEST(test_async_collective_owns_its_tensors) {
    cs_rank *r = open_world("rendezvous", false);
    cs_tensor *in = vec(r, 4), *out = vec(r, 8);
    uint64_t id = cs_inflight_coll_add(r, "all_gather_into_tensor", 5, &in, 1, &out, 1);
    ck_assert(cs_rank_has_inflight(r));
    ck_assert_int_eq(cs_rank_access(r, in, CS_ACCESS_READ, 6), CS_OK);
    ck_assert_int_eq(nwarn, 0);
    ck_assert_int_eq(cs_rank_access(r, out, CS_ACCESS_READ, 7), CS_OK);
    ck_assert_int_eq(nwarn, 1);
    ck_assert_str_eq(last, "test.lua:7: reads a tensor (or a view of it) that the async "
                           "all_gather_into_tensor called at test.lua:5 still writes into: it may "
                           "hold the old values or part of the result. Call wait() on the work "
                           "handle before reading it");
    cs_tensor *half = cs_tensor_narrow(in, 0, 2, 2);
    ck_assert_int_eq(cs_rank_access(r, half, CS_ACCESS_WRITE, 8), CS_OK);
    ck_assert_int_eq(nwarn, 2);
    ck_assert_ptr_nonnull(strstr(last, "test.lua:8: writes to a tensor (or a view of it) that the "
                                       "async all_gather_into_tensor called at test.lua:5 still uses"));
    cs_inflight_coll_done(r, id);
    ck_assert(!cs_rank_has_inflight(r));
    ck_assert_int_eq(cs_rank_access(r, out, CS_ACCESS_WRITE, 9), CS_OK);
    ck_assert_int_eq(nwarn, 2);
    cs_inflight_coll_add(r, "barrier", 10, NULL, 0, NULL, 0);
    ck_assert_int_eq(cs_inflight_exit(r, 0), 0);
    ck_assert_int_eq(nwarn, 3);
    ck_assert_ptr_nonnull(strstr(last, "test.lua:10: the barrier (async_op) called here was never "
                                       "waited on"));
    cs_tensor_release(half);
    cs_tensor_release(in);
    cs_tensor_release(out);
    close_world();
}
END_TEST

/* With --strict the first touch fails the operation, and a handle never
 * waited on fails the rank when it finishes. */
START_TEST(test_async_collective_strict) {
    cs_rank *r = open_world("rendezvous", true);
    cs_tensor *t = vec(r, 4);
    cs_inflight_coll_add(r, "all_reduce", 3, NULL, 0, &t, 1);
    ck_assert_int_eq(cs_rank_access(r, t, CS_ACCESS_WRITE, 4), CS_EPITFALL);
    ck_assert_int_eq(cs_inflight_exit(r, 0), CS_END_ERROR);
    ck_assert_ptr_nonnull(strstr(last, "test.lua:3: the all_reduce (async_op) called here was never "
                                       "waited on"));
    cs_tensor_release(t);
    close_world();
}
END_TEST

int main(void) {
    Suite *s = suite_create("pitfall");
    TCase *tc = tcase_create("pitfall");
    tcase_add_test(tc, test_write_to_isend_buffer_once_per_site);
    tcase_add_test(tc, test_async_collective_owns_its_tensors);
    tcase_add_test(tc, test_async_collective_strict);
    tcase_add_test(tc, test_views_exact_overlap);
    tcase_add_test(tc, test_eager_isend_frees_its_buffer);
    tcase_add_test(tc, test_wait_and_test_release_the_buffer);
    tcase_add_test(tc, test_strict_fails_the_access);
    tcase_add_test(tc, test_never_waited_at_exit);
    tcase_add_test(tc, test_never_waited_strict_is_an_error);
    tcase_add_test(tc, test_dropped_handles_are_swept);
    tcase_add_test(tc, test_blocking_self);
    tcase_add_test(tc, test_blocking_self_strict);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
