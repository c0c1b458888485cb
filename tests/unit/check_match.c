/* check_match.c -- the matcher's queues on their own: MPI order, any-source,
 * tags, contexts, and the mismatch message. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "world.h"
#include "run_suite.h"

static cs_msg *msg(int src, int tag, int ctx) {
    cs_msg *m = calloc(1, sizeof *m);
    m->src = src;
    m->tag = tag;
    m->ctx = ctx;
    return m;
}

static cs_request *rq(int rank, int peer, int tag, int ctx) {
    cs_request *q = calloc(1, sizeof *q);
    atomic_init(&q->refs, 1);
    q->rank = rank;
    q->peer = peer;
    q->tag = tag;
    q->ctx = ctx;
    return q;
}

START_TEST(test_receive_takes_earliest_fitting) {
    cs_matcher m;
    cs_matcher_init(&m, 0);
    cs_msg *a = msg(1, 0, 0), *b = msg(2, 0, 0), *c = msg(1, 0, 0);
    cs_match_push_unexpected(&m, a);
    cs_match_push_unexpected(&m, b);
    cs_match_push_unexpected(&m, c);
    cs_request *from1 = rq(0, 1, 0, 0), *any = rq(0, CS_ANY_SOURCE, 0, 0);
    ck_assert_ptr_eq(cs_match_take_unexpected(&m, from1), a); /* earliest from 1 */
    ck_assert_ptr_eq(cs_match_take_unexpected(&m, any), b);   /* earliest from anyone */
    ck_assert_ptr_eq(cs_match_take_unexpected(&m, from1), c);
    ck_assert_ptr_null(cs_match_take_unexpected(&m, any));
    ck_assert_ptr_null(m.unexpected_tail);
    free(a), free(b), free(c), free(from1), free(any);
    cs_matcher_destroy(&m);
}
END_TEST

START_TEST(test_tags_and_contexts_separate) {
    cs_matcher m;
    cs_matcher_init(&m, 0);
    cs_msg *t1 = msg(1, 1, 0), *t2 = msg(1, 2, 0), *coll = msg(1, 2, 7);
    cs_match_push_unexpected(&m, t1);
    cs_match_push_unexpected(&m, coll);
    cs_match_push_unexpected(&m, t2);
    cs_request *want2 = rq(0, 1, 2, 0), *want3 = rq(0, 1, 3, 0), *c7 = rq(0, 1, 2, 7);
    ck_assert_ptr_null(cs_match_take_unexpected(&m, want3));
    ck_assert_ptr_eq(cs_match_take_unexpected(&m, want2), t2); /* skips tag 1 and ctx 7 */
    ck_assert_ptr_eq(cs_match_take_unexpected(&m, c7), coll);
    free(t2), free(coll), free(want2), free(want3), free(c7);
    cs_matcher_destroy(&m); /* frees t1 */
}
END_TEST

START_TEST(test_message_takes_earliest_posted) {
    cs_matcher m;
    cs_matcher_init(&m, 3);
    cs_request *a = rq(3, 2, 0, 0), *b = rq(3, CS_ANY_SOURCE, 0, 0), *c = rq(3, 1, 0, 0);
    cs_match_push_posted(&m, a);
    cs_match_push_posted(&m, b);
    cs_match_push_posted(&m, c);
    cs_msg *from1 = msg(1, 0, 0), *from2 = msg(2, 0, 0);
    ck_assert_ptr_eq(cs_match_take_posted(&m, from1), b); /* any-source posted before c */
    ck_assert_ptr_eq(cs_match_take_posted(&m, from1), c);
    ck_assert_ptr_eq(cs_match_take_posted(&m, from2), a);
    ck_assert_ptr_null(cs_match_take_posted(&m, from2));
    ck_assert_ptr_null(m.posted_tail);
    free(a), free(b), free(c), free(from1), free(from2);
    cs_matcher_destroy(&m);
}
END_TEST

START_TEST(test_remove_middle_keeps_tail) {
    cs_matcher m;
    cs_matcher_init(&m, 0);
    cs_request *a = rq(0, 1, 0, 0), *b = rq(0, 2, 0, 0);
    cs_match_push_posted(&m, a);
    cs_match_push_posted(&m, b);
    cs_msg *from2 = msg(2, 0, 0);
    ck_assert_ptr_eq(cs_match_take_posted(&m, from2), b); /* the tail */
    ck_assert_ptr_eq(m.posted_tail, a);
    cs_request *c = rq(0, 3, 0, 0);
    cs_match_push_posted(&m, c);
    ck_assert_ptr_eq(a->next, c);
    free(b), free(from2);
    cs_matcher_destroy(&m); /* releases a and c */
}
END_TEST

START_TEST(test_mismatch_names_both_sides) {
    int64_t four[1] = {4}, two_by_three[2] = {2, 3};
    cs_tensor *want = cs_tensor_new(NULL, CS_FLOAT32, 1, four);
    cs_request *r = rq(1, 0, 0, 0);
    r->buf = want;
    r->bytes = cs_tensor_nbytes(want);
    r->line = 9;
    cs_msg *m = msg(0, 0, 0);
    m->dtype = CS_INT64;
    m->ndim = 2;
    memcpy(m->shape, two_by_three, sizeof two_by_three);
    m->bytes = 48;
    m->line = 4;
    char err[512];
    ck_assert(!cs_match_check(m, r, "x.lua", err, sizeof err));
    ck_assert_str_eq(err, "size mismatch: rank 1 receives float32 [4] (16 bytes) at x.lua:9, but "
                          "rank 0 sent int64 [2, 3] (48 bytes) at x.lua:4; both sides must use "
                          "the same number of elements and dtype");
    m->dtype = CS_FLOAT32;
    m->bytes = 16;
    ck_assert(cs_match_check(m, r, "x.lua", err, sizeof err)); /* same bytes and dtype: fine */
    cs_tensor_release(want);
    free(r), free(m);
}
END_TEST

/* A receive of n_want elements of want against a message of n_sent of sent,
 * both one-dimensional: the check fails with exactly expect. */
static void check_mismatch(cs_dtype want, int64_t n_want, cs_dtype sent, int64_t n_sent,
                           const char *expect) {
    cs_tensor *buf = cs_tensor_new(NULL, want, 1, &n_want);
    cs_request *r = rq(1, 0, 0, 0);
    r->buf = buf;
    r->bytes = cs_tensor_nbytes(buf);
    r->line = 9;
    cs_msg *m = msg(0, 0, 0);
    m->dtype = sent;
    m->ndim = 1;
    m->shape[0] = n_sent;
    m->bytes = (size_t)n_sent * cs_dtype_size(sent);
    m->line = 4;
    char err[512];
    ck_assert(!cs_match_check(m, r, "x.lua", err, sizeof err));
    ck_assert_str_eq(err, expect);
    cs_tensor_release(buf);
    free(r), free(m);
}

/* Same byte count, other dtype: named a dtype mismatch, not a size mismatch. */
START_TEST(test_dtype_mismatch_named) {
    check_mismatch(CS_INT32, 4, CS_FLOAT32, 4,
                   "dtype mismatch: rank 1 receives int32 [4] (16 bytes) at x.lua:9, but rank 0 "
                   "sent float32 [4] (16 bytes) at x.lua:4; both sides must use the same dtype");
}
END_TEST

/* Same byte count, but other element count too: a size mismatch, though the
 * bytes agree (float64 [2] against float32 [4]). */
START_TEST(test_count_and_dtype_mismatch_is_size) {
    check_mismatch(CS_FLOAT64, 2, CS_FLOAT32, 4,
                   "size mismatch: rank 1 receives float64 [2] (16 bytes) at x.lua:9, but rank 0 "
                   "sent float32 [4] (16 bytes) at x.lua:4; both sides must use the same number "
                   "of elements and dtype");
}
END_TEST

/* Same element count, other byte count: only the dtype differs. */
START_TEST(test_dtype_mismatch_other_bytes) {
    check_mismatch(CS_INT64, 4, CS_FLOAT32, 4,
                   "dtype mismatch: rank 1 receives int64 [4] (32 bytes) at x.lua:9, but rank 0 "
                   "sent float32 [4] (16 bytes) at x.lua:4; both sides must use the same dtype");
}
END_TEST

int main(void) {
    Suite *s = suite_create("match");
    TCase *tc = tcase_create("queues");
    tcase_add_test(tc, test_receive_takes_earliest_fitting);
    tcase_add_test(tc, test_tags_and_contexts_separate);
    tcase_add_test(tc, test_message_takes_earliest_posted);
    tcase_add_test(tc, test_remove_middle_keeps_tail);
    tcase_add_test(tc, test_mismatch_names_both_sides);
    tcase_add_test(tc, test_dtype_mismatch_named);
    tcase_add_test(tc, test_count_and_dtype_mismatch_is_size);
    tcase_add_test(tc, test_dtype_mismatch_other_bytes);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
