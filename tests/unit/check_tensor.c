/* check_tensor.c -- unit tests for src/tensor.c and src/tensor_format.c.
 *
 * Expected printing strings were derived from torch/_tensor_str.py's
 * algorithm with the default print options (torch itself is not available
 * here); each one notes the rule it exercises.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensor.h"
#include "run_suite.h"

/* ---- helpers: every tensor made through K() is released by the teardown,
 * so that tests stay leak-free under ASan without bookkeeping noise. */

static cs_tensor *kept[512];
static int nkept;

static cs_tensor *K(cs_tensor *t) {
    if (t && nkept < (int)(sizeof kept / sizeof kept[0])) kept[nkept++] = t;
    return t;
}

static void teardown(void) {
    while (nkept > 0) cs_tensor_release(kept[--nkept]);
}

static cs_tensor *vec(cs_dtype d, int n, const double *v) {
    int64_t s = n;
    return K(cs_tensor_from_doubles(NULL, d, 1, &s, v));
}

static cs_tensor *mat(cs_dtype d, int64_t r, int64_t c, const double *v) {
    int64_t s[2] = {r, c};
    return K(cs_tensor_from_doubles(NULL, d, 2, s, v));
}

#define V(d, ...) vec(d, (int)(sizeof((double[]){__VA_ARGS__}) / sizeof(double)), (double[]){__VA_ARGS__})
#define M(d, r, c, ...) mat(d, r, c, (double[]){__VA_ARGS__})

static void ck_values(const cs_tensor *t, int n, const double *want) {
    ck_assert_int_eq(cs_tensor_numel(t), n);
    for (int i = 0; i < n; i++) {
        double got = cs_tensor_get(t, i);
        if (isnan(want[i]))
            ck_assert_msg(isnan(got), "element %d: got %g, want nan", i, got);
        else
            ck_assert_double_eq(got, want[i]);
    }
}
#define CK_VALUES(t, ...) \
    ck_values(t, (int)(sizeof((double[]){__VA_ARGS__}) / sizeof(double)), (double[]){__VA_ARGS__})

#define CK_FMT(t, want)                  \
    do {                                 \
        char *s_ = cs_tensor_format(t);  \
        ck_assert_ptr_nonnull(s_);       \
        ck_assert_str_eq(s_, want);      \
        free(s_);                        \
    } while (0)

#define CK_ERR(err, substr)                                      \
    do {                                                         \
        ck_assert_int_eq(errno, err);                            \
        ck_assert_msg(strstr(cs_tensor_errmsg(), substr) != NULL, \
                      "message \"%s\" lacks \"%s\"", cs_tensor_errmsg(), substr); \
    } while (0)

/* ---- dtypes */

START_TEST(test_dtype_names) {
    cs_dtype d;
    ck_assert_uint_eq(cs_dtype_size(CS_FLOAT32), 4);
    ck_assert_uint_eq(cs_dtype_size(CS_FLOAT64), 8);
    ck_assert_uint_eq(cs_dtype_size(CS_INT32), 4);
    ck_assert_uint_eq(cs_dtype_size(CS_INT64), 8);
    ck_assert_uint_eq(cs_dtype_size(CS_UINT8), 1);
    ck_assert_str_eq(cs_dtype_name(CS_INT64), "int64");
    ck_assert(cs_dtype_parse("torch.float32", &d) && d == CS_FLOAT32);
    ck_assert(cs_dtype_parse("float", &d) && d == CS_FLOAT32);
    ck_assert(cs_dtype_parse("double", &d) && d == CS_FLOAT64);
    ck_assert(cs_dtype_parse("long", &d) && d == CS_INT64);
    ck_assert(cs_dtype_parse("int", &d) && d == CS_INT32);
    ck_assert(cs_dtype_parse("torch.uint8", &d) && d == CS_UINT8);
    ck_assert(!cs_dtype_parse("float16", &d));
    ck_assert(!cs_dtype_parse(NULL, &d));
    ck_assert(cs_dtype_is_float(CS_FLOAT64) && !cs_dtype_is_float(CS_UINT8));
}
END_TEST

/* ---- lifetime, budget */

START_TEST(test_new_zero_filled) {
    int64_t s[3] = {2, 3, 4};
    cs_tensor *t = K(cs_tensor_new(NULL, CS_FLOAT64, 3, s));
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(cs_tensor_numel(t), 24);
    ck_assert_uint_eq(cs_tensor_nbytes(t), 192);
    ck_assert_int_eq(t->stride[0], 12);
    ck_assert_int_eq(t->stride[2], 1);
    ck_assert(cs_tensor_is_contiguous(t));
    ck_assert_double_eq(cs_tensor_sum(t), 0);
    cs_tensor *z = K(cs_tensor_new(NULL, CS_INT32, 0, NULL));
    ck_assert_int_eq(cs_tensor_numel(z), 1);
}
END_TEST

START_TEST(test_new_bad_shape) {
    int64_t neg[2] = {2, -1}, five[5] = {1, 1, 1, 1, 1};
    errno = 0;
    ck_assert_ptr_null(cs_tensor_new(NULL, CS_FLOAT32, 2, neg));
    CK_ERR(EINVAL, "negative dimension -1: [2, -1]");
    ck_assert_ptr_null(cs_tensor_new(NULL, CS_FLOAT32, 5, five));
    CK_ERR(EINVAL, "at most 4 dimensions");
    ck_assert_ptr_null(cs_tensor_new(NULL, (cs_dtype)99, 1, five));
    ck_assert_int_eq(errno, EINVAL);
}
END_TEST

START_TEST(test_budget) {
    cs_budget b = {.limit = 100};
    int64_t n = 20; /* 80 bytes of float32 */
    cs_tensor *t = cs_tensor_new(&b, CS_FLOAT32, 1, &n);
    ck_assert_ptr_nonnull(t);
    ck_assert_uint_eq(atomic_load(&b.used), 80);
    errno = 0;
    ck_assert_ptr_null(cs_tensor_new(&b, CS_FLOAT32, 1, &n));
    CK_ERR(ENOMEM, "exceeds the memory limit");
    ck_assert_uint_eq(atomic_load(&b.used), 80); /* refusal charges nothing */
    cs_tensor *v = cs_tensor_narrow(t, 0, 2, 5);  /* views cost no storage */
    ck_assert_uint_eq(atomic_load(&b.used), 80);
    errno = 0;
    ck_assert_ptr_null(cs_tensor_binop(&b, CS_ADD, t, NULL, 1, false));
    ck_assert_int_eq(errno, ENOMEM);
    cs_tensor_release(t);
    ck_assert_uint_eq(atomic_load(&b.used), 80); /* v keeps the storage */
    cs_tensor_release(v);
    ck_assert_uint_eq(atomic_load(&b.used), 0);
    ck_assert(cs_budget_charge(&b, 100));
    ck_assert(!cs_budget_charge(&b, 1));
    cs_budget_refund(&b, 100);
    cs_budget unlimited = {.limit = 0};
    ck_assert(cs_budget_charge(&unlimited, SIZE_MAX / 2));
    ck_assert(cs_budget_charge(NULL, 12345));
    cs_budget_refund(NULL, 12345);
}
END_TEST

START_TEST(test_retain_release) {
    cs_tensor *t = cs_tensor_arange(NULL, CS_INT64, 4);
    ck_assert_ptr_eq(cs_tensor_retain(t), t);
    ck_assert_int_eq(atomic_load(&t->refs), 2);
    cs_tensor_release(t);
    cs_tensor *s = cs_tensor_select(t, 0, 3);
    cs_tensor_release(t); /* the view outlives its parent */
    ck_assert_int_eq(cs_tensor_get_i(s, 0), 3);
    cs_tensor_release(s);
    cs_tensor_release(NULL);
}
END_TEST

/* ---- factories and element access */

START_TEST(test_factories) {
    int64_t s[2] = {2, 2};
    CK_VALUES(K(cs_tensor_full(NULL, CS_FLOAT32, 2, s, 1.5)), 1.5, 1.5, 1.5, 1.5);
    CK_VALUES(K(cs_tensor_full(NULL, CS_INT32, 2, s, 2.9)), 2, 2, 2, 2); /* truncates */
    CK_VALUES(K(cs_tensor_arange(NULL, CS_FLOAT64, 4)), 0, 1, 2, 3);
    cs_tensor *e = K(cs_tensor_arange(NULL, CS_INT64, 0));
    ck_assert_int_eq(cs_tensor_numel(e), 0);
    CK_VALUES(V(CS_UINT8, 1, 2, 3), 1, 2, 3);
}
END_TEST

START_TEST(test_randn) {
    int64_t n = 10001;
    uint64_t r1 = 42, r2 = 42, r3 = 43, r0 = 0;
    cs_tensor *a = K(cs_tensor_randn(NULL, CS_FLOAT32, 1, &n, &r1));
    cs_tensor *b = K(cs_tensor_randn(NULL, CS_FLOAT32, 1, &n, &r2));
    cs_tensor *c = K(cs_tensor_randn(NULL, CS_FLOAT32, 1, &n, &r3));
    cs_tensor *z = K(cs_tensor_randn(NULL, CS_FLOAT64, 1, &n, &r0));
    ck_assert(cs_tensor_equal(a, b));
    ck_assert(!cs_tensor_equal(a, c));
    ck_assert_uint_eq(r1, r2);
    ck_assert_uint_ne(r0, 0);
    double mean = cs_tensor_mean(a);
    cs_tensor *sq = K(cs_tensor_binop(NULL, CS_MUL, a, a, 0, false));
    double var = cs_tensor_mean(sq) - mean * mean;
    ck_assert_double_lt(fabs(mean), 0.05);
    ck_assert_double_lt(fabs(var - 1), 0.05);
    ck_assert(isfinite(cs_tensor_sum(z)));
    errno = 0;
    ck_assert_ptr_null(cs_tensor_randn(NULL, CS_INT64, 1, &n, &r1));
    CK_ERR(EINVAL, "floating point");
}
END_TEST

START_TEST(test_get_set) {
    cs_tensor *t = M(CS_FLOAT32, 2, 3, 0, 1, 2, 3, 4, 5);
    ck_assert_double_eq(cs_tensor_get(t, 4), 4);
    cs_tensor_set(t, 5, 2.5);
    ck_assert_double_eq(cs_tensor_get(t, 5), 2.5);
    errno = 0;
    ck_assert(isnan(cs_tensor_get(t, 6)));
    CK_ERR(EINVAL, "out of bounds");
    cs_tensor *i = V(CS_INT64, 0);
    int64_t big = (INT64_C(1) << 53) + 1; /* not representable as a double */
    cs_tensor_set_i(i, 0, big);
    ck_assert_int_eq(cs_tensor_get_i(i, 0), big);
    cs_tensor_set_i(t, 0, 7);
    ck_assert_int_eq(cs_tensor_get_i(t, 0), 7);
}
END_TEST

START_TEST(test_int_conversions) {
    cs_tensor *u = V(CS_UINT8, 0, 0, 0, 0);
    cs_tensor_set(u, 0, -1);
    cs_tensor_set(u, 1, 256);
    cs_tensor_set(u, 2, 3.99);
    cs_tensor_set(u, 3, NAN);
    CK_VALUES(u, 255, 0, 3, 0);
    cs_tensor *i = V(CS_INT32, 0, 0, 0);
    cs_tensor_set(i, 0, 2147483648.0); /* wraps, like storing 2^31 into int32 */
    cs_tensor_set(i, 1, -2.5);
    cs_tensor_set(i, 2, 1e300); /* saturates via int64, then wraps: no UB */
    CK_VALUES(i, -2147483648.0, -2, -1);
    cs_tensor *l = V(CS_INT64, 0, 0);
    cs_tensor_set(l, 0, 1e300);
    cs_tensor_set(l, 1, -INFINITY);
    ck_assert_int_eq(cs_tensor_get_i(l, 0), INT64_MAX);
    ck_assert_int_eq(cs_tensor_get_i(l, 1), INT64_MIN);
}
END_TEST

/* ---- views */

START_TEST(test_narrow_shares_storage) {
    cs_tensor *t = K(cs_tensor_arange(NULL, CS_FLOAT32, 6));
    cs_tensor *n = K(cs_tensor_narrow(t, 0, 2, 3));
    ck_assert_ptr_eq(n->st, t->st);
    CK_VALUES(n, 2, 3, 4);
    cs_tensor_fill_(n, 9);
    CK_VALUES(t, 0, 1, 9, 9, 9, 5);
    CK_VALUES(K(cs_tensor_narrow(t, -1, -2, 2)), 9, 5); /* negative dim and start */
    ck_assert_int_eq(cs_tensor_numel(K(cs_tensor_narrow(t, 0, 6, 0))), 0);
}
END_TEST

START_TEST(test_narrow_2d_columns) {
    cs_tensor *t = M(CS_INT64, 2, 3, 0, 1, 2, 3, 4, 5);
    cs_tensor *c = K(cs_tensor_narrow(t, 1, 1, 2));
    ck_assert(!cs_tensor_is_contiguous(c));
    ck_assert(cs_tensor_is_contiguous(K(cs_tensor_narrow(t, 0, 1, 1))));
    CK_VALUES(c, 1, 2, 4, 5);
    cs_tensor_fill_(c, -1);
    CK_VALUES(t, 0, -1, -1, 3, -1, -1);
}
END_TEST

START_TEST(test_narrow_errors) {
    cs_tensor *t = K(cs_tensor_arange(NULL, CS_FLOAT32, 4));
    errno = 0;
    ck_assert_ptr_null(cs_tensor_narrow(t, 0, 2, 3));
    CK_ERR(EINVAL, "start (2) + length (3) exceeds dimension size (4).");
    ck_assert_ptr_null(cs_tensor_narrow(t, 1, 0, 1));
    CK_ERR(EINVAL, "Dimension out of range (expected to be in range of [-1, 0], but got 1)");
    ck_assert_ptr_null(cs_tensor_narrow(t, 0, 0, -1));
    CK_ERR(EINVAL, "length must be non-negative");
    ck_assert_ptr_null(cs_tensor_narrow(t, 0, 5, 0));
    CK_ERR(EINVAL, "start out of range");
    ck_assert_ptr_null(cs_tensor_narrow(K(cs_tensor_new(NULL, CS_FLOAT32, 0, NULL)), 0, 0, 1));
    CK_ERR(EINVAL, "0-dim");
}
END_TEST

START_TEST(test_select) {
    cs_tensor *t = M(CS_FLOAT32, 2, 3, 0, 1, 2, 3, 4, 5);
    cs_tensor *row = K(cs_tensor_select(t, 0, 1));
    ck_assert_int_eq(row->ndim, 1);
    CK_VALUES(row, 3, 4, 5);
    cs_tensor *col = K(cs_tensor_select(t, 1, -1));
    CK_VALUES(col, 2, 5);
    cs_tensor *x = K(cs_tensor_select(row, 0, 0)); /* 0-d */
    ck_assert_int_eq(x->ndim, 0);
    cs_tensor_set(x, 0, 42);
    ck_assert_double_eq(cs_tensor_get(t, 3), 42);
    errno = 0;
    ck_assert_ptr_null(cs_tensor_select(t, 0, 2));
    CK_ERR(EINVAL, "select(): index 2 out of range for tensor of size [2, 3] at dimension 0");
    ck_assert_ptr_null(cs_tensor_select(x, 0, 0));
    CK_ERR(EINVAL, "0-dim");
}
END_TEST

START_TEST(test_view) {
    cs_tensor *t = K(cs_tensor_arange(NULL, CS_FLOAT32, 6));
    cs_tensor *v = K(cs_tensor_view(t, 2, (int64_t[]){2, -1}));
    ck_assert_int_eq(v->shape[1], 3);
    ck_assert_ptr_eq(v->st, t->st);
    cs_tensor_set(v, 5, 50);
    ck_assert_double_eq(cs_tensor_get(t, 5), 50);
    cs_tensor *s = K(cs_tensor_view(K(cs_tensor_narrow(t, 0, 4, 1)), 0, NULL));
    ck_assert_double_eq(cs_tensor_get(s, 0), 4);
    errno = 0;
    ck_assert_ptr_null(cs_tensor_view(t, 2, (int64_t[]){2, 4}));
    CK_ERR(EINVAL, "shape '[2, 4]' is invalid for input of size 6");
    ck_assert_ptr_null(cs_tensor_view(t, 2, (int64_t[]){-1, -1}));
    CK_ERR(EINVAL, "only one dimension can be inferred");
    ck_assert_ptr_null(cs_tensor_view(t, 2, (int64_t[]){4, -1}));
    CK_ERR(EINVAL, "shape '[4, -1]' is invalid for input of size 6");
    cs_tensor *cols = K(cs_tensor_narrow(v, 1, 0, 2));
    ck_assert_ptr_null(cs_tensor_view(cols, 1, (int64_t[]){4}));
    CK_ERR(EINVAL, "view size is not compatible with input tensor's size and stride");
    cs_tensor *e = K(cs_tensor_arange(NULL, CS_FLOAT32, 0));
    ck_assert_ptr_null(cs_tensor_view(e, 2, (int64_t[]){-1, 0}));
    CK_ERR(EINVAL, "ambiguous");
}
END_TEST

START_TEST(test_chunk) {
    cs_tensor *out[8];
    cs_tensor *t = K(cs_tensor_arange(NULL, CS_INT32, 10));
    ck_assert_int_eq(cs_tensor_chunk(t, 4, 0, out, 8), 4); /* 3, 3, 3, 1 */
    for (int i = 0; i < 4; i++) K(out[i]);
    CK_VALUES(out[0], 0, 1, 2);
    CK_VALUES(out[3], 9);
    ck_assert_ptr_eq(out[3]->st, t->st);
    cs_tensor_fill_(out[1], -1);
    CK_VALUES(t, 0, 1, 2, -1, -1, -1, 6, 7, 8, 9);

    cs_tensor *five = K(cs_tensor_arange(NULL, CS_INT32, 5));
    ck_assert_int_eq(cs_tensor_chunk(five, 4, 0, out, 8), 3); /* 2, 2, 1: fewer than asked */
    for (int i = 0; i < 3; i++) K(out[i]);
    CK_VALUES(out[2], 4);
    cs_tensor *two = K(cs_tensor_arange(NULL, CS_INT32, 2));
    ck_assert_int_eq(cs_tensor_chunk(two, 4, 0, out, 8), 2);
    K(out[0]), K(out[1]);
    cs_tensor *none = K(cs_tensor_arange(NULL, CS_INT32, 0));
    ck_assert_int_eq(cs_tensor_chunk(none, 3, 0, out, 8), 3); /* torch: n empty pieces */
    for (int i = 0; i < 3; i++) ck_assert_int_eq(cs_tensor_numel(K(out[i])), 0);

    cs_tensor *m = M(CS_FLOAT32, 2, 4, 0, 1, 2, 3, 4, 5, 6, 7);
    ck_assert_int_eq(cs_tensor_chunk(m, 2, -1, out, 8), 2);
    K(out[0]), K(out[1]);
    CK_VALUES(out[1], 2, 3, 6, 7);

    errno = 0;
    ck_assert_int_eq(cs_tensor_chunk(t, 0, 0, out, 8), -1);
    CK_ERR(EINVAL, "chunk expects `chunks` to be greater than 0, got: 0");
    ck_assert_int_eq(cs_tensor_chunk(t, 4, 0, out, 3), -1);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_int_eq(cs_tensor_chunk(t, 2, 1, out, 8), -1);
    CK_ERR(EINVAL, "Dimension out of range");
}
END_TEST

START_TEST(test_shape_str) {
    char buf[32];
    ck_assert_str_eq(cs_tensor_shape_str(2, (int64_t[]){2, 3}, buf, sizeof buf), "[2, 3]");
    ck_assert_str_eq(cs_tensor_shape_str(0, NULL, buf, sizeof buf), "[]");
    ck_assert_str_eq(cs_tensor_shape_str(2, (int64_t[]){123, 456}, buf, 5), "[123");
    cs_tensor *a = V(CS_FLOAT32, 1, 2), *b = V(CS_INT32, 1, 2), *c = V(CS_FLOAT32, 1, 2, 3);
    ck_assert(cs_tensor_same_shape(a, b));
    ck_assert(!cs_tensor_same_shape(a, c));
}
END_TEST

/* ---- copies */

START_TEST(test_clone_contiguous_to) {
    cs_tensor *t = M(CS_FLOAT32, 2, 3, 0, 1.5, 2, 3, 4, 5.7);
    cs_tensor *c = K(cs_tensor_clone(NULL, t));
    ck_assert_ptr_ne(c->st, t->st);
    cs_tensor_fill_(c, 0);
    ck_assert_double_eq(cs_tensor_get(t, 1), 1.5);
    cs_tensor *col = K(cs_tensor_select(t, 1, 1));
    cs_tensor *cc = K(cs_tensor_contiguous(NULL, col));
    ck_assert(cs_tensor_is_contiguous(cc));
    ck_assert_ptr_ne(cc->st, t->st);
    CK_VALUES(cc, 1.5, 4);
    cs_tensor *same = K(cs_tensor_contiguous(NULL, t));
    ck_assert_ptr_eq(same, t);
    cs_tensor *i = K(cs_tensor_to(NULL, t, CS_INT32));
    ck_assert_int_eq(i->dtype, CS_INT32);
    CK_VALUES(i, 0, 1, 2, 3, 4, 5);
    cs_tensor *d = K(cs_tensor_to(NULL, col, CS_FLOAT64));
    CK_VALUES(d, 1.5, 4);
    ck_assert_ptr_eq(cs_tensor_data(t), t->st->data);
    ck_assert_ptr_eq(cs_tensor_data(col), (char *)t->st->data + 4);
}
END_TEST

START_TEST(test_copy_) {
    cs_tensor *dst = K(cs_tensor_new(NULL, CS_INT32, 2, (int64_t[]){2, 2}));
    cs_tensor *src = V(CS_FLOAT64, 1.9, -2.9, 3, 4);
    ck_assert_int_eq(cs_tensor_copy_(dst, src), 0); /* same numel, other shape and dtype */
    CK_VALUES(dst, 1, -2, 3, 4);
    cs_tensor *col = K(cs_tensor_select(dst, 1, 0));
    ck_assert_int_eq(cs_tensor_copy_(col, V(CS_INT64, 7, 8)), 0);
    CK_VALUES(dst, 7, -2, 8, 4);
    errno = 0;
    ck_assert_int_eq(cs_tensor_copy_(dst, V(CS_INT64, 1, 2, 3)), -1);
    CK_ERR(EINVAL, "[2, 2]");
    /* overlapping source and destination in one storage: t[1:] = t[:-1] */
    cs_tensor *t = K(cs_tensor_arange(NULL, CS_INT64, 5));
    ck_assert_int_eq(cs_tensor_copy_(K(cs_tensor_narrow(t, 0, 1, 4)), K(cs_tensor_narrow(t, 0, 0, 4))), 0);
    CK_VALUES(t, 0, 0, 1, 2, 3);
    cs_tensor *big = V(CS_INT64, 0);
    cs_tensor_set_i(big, 0, INT64_MAX);
    cs_tensor *big2 = V(CS_INT64, 0);
    cs_tensor_copy_(big2, big); /* int to int stays exact */
    ck_assert_int_eq(cs_tensor_get_i(big2, 0), INT64_MAX);
}
END_TEST

/* ---- elementwise */

START_TEST(test_binop_basic) {
    cs_tensor *a = V(CS_FLOAT32, 1, 2, 3), *b = V(CS_FLOAT32, 4, 5, 6);
    CK_VALUES(K(cs_tensor_binop(NULL, CS_ADD, a, b, 0, false)), 5, 7, 9);
    CK_VALUES(K(cs_tensor_binop(NULL, CS_SUB, a, b, 0, false)), -3, -3, -3);
    CK_VALUES(K(cs_tensor_binop(NULL, CS_MUL, a, b, 0, false)), 4, 10, 18);
    CK_VALUES(K(cs_tensor_binop(NULL, CS_DIV, b, a, 0, false)), 4, 2.5, 2);
    CK_VALUES(K(cs_tensor_binop(NULL, CS_POW, a, b, 0, false)), 1, 32, 729);
    CK_VALUES(K(cs_tensor_binop(NULL, CS_MAXIMUM, a, V(CS_FLOAT32, 0, 5, NAN), 0, false)), 1, 5, NAN);
    CK_VALUES(K(cs_tensor_binop(NULL, CS_MINIMUM, a, V(CS_FLOAT32, 0, 5, 1), 0, false)), 0, 2, 1);
}
END_TEST

START_TEST(test_binop_scalars) {
    cs_tensor *a = V(CS_FLOAT32, 1, 2, 4);
    CK_VALUES(K(cs_tensor_binop(NULL, CS_SUB, a, NULL, 1, false)), 0, 1, 3);  /* a - 1 */
    CK_VALUES(K(cs_tensor_binop(NULL, CS_SUB, a, NULL, 1, true)), 0, -1, -3); /* 1 - a */
    CK_VALUES(K(cs_tensor_binop(NULL, CS_DIV, a, NULL, 2, false)), 0.5, 1, 2);
    CK_VALUES(K(cs_tensor_binop(NULL, CS_DIV, a, NULL, 2, true)), 2, 1, 0.5);
    CK_VALUES(K(cs_tensor_binop(NULL, CS_POW, a, NULL, 2, false)), 1, 4, 16);
    CK_VALUES(K(cs_tensor_binop(NULL, CS_POW, a, NULL, 2, true)), 2, 4, 16);
    CK_VALUES(K(cs_tensor_binop(NULL, CS_MAXIMUM, a, NULL, 2, true)), 2, 2, 4);
    cs_tensor *i = V(CS_INT64, 1, 2, 3);
    cs_tensor *r = K(cs_tensor_binop(NULL, CS_SUB, i, NULL, 10, true));
    ck_assert_int_eq(r->dtype, CS_INT64);
    CK_VALUES(r, 9, 8, 7);
    r = K(cs_tensor_binop(NULL, CS_POW, i, NULL, 3, true)); /* 3 ** i stays int */
    ck_assert_int_eq(r->dtype, CS_INT64);
    CK_VALUES(r, 3, 9, 27);
}
END_TEST

START_TEST(test_binop_dtypes) {
    cs_tensor *i32 = V(CS_INT32, 1, 2), *i64 = V(CS_INT64, 1, 2), *u8 = V(CS_UINT8, 1, 2);
    cs_tensor *f32 = V(CS_FLOAT32, 1, 2), *f64 = V(CS_FLOAT64, 1, 2);
    ck_assert_int_eq(K(cs_tensor_binop(NULL, CS_ADD, i32, i64, 0, false))->dtype, CS_INT64);
    ck_assert_int_eq(K(cs_tensor_binop(NULL, CS_ADD, u8, i32, 0, false))->dtype, CS_INT32);
    ck_assert_int_eq(K(cs_tensor_binop(NULL, CS_ADD, i64, f32, 0, false))->dtype, CS_FLOAT32);
    ck_assert_int_eq(K(cs_tensor_binop(NULL, CS_ADD, f32, f64, 0, false))->dtype, CS_FLOAT64);
    ck_assert_int_eq(K(cs_tensor_binop(NULL, CS_ADD, u8, NULL, 300, false))->dtype, CS_UINT8);
    cs_tensor *r = K(cs_tensor_binop(NULL, CS_MUL, i32, NULL, 1.5, false)); /* float scalar */
    ck_assert_int_eq(r->dtype, CS_FLOAT32);
    CK_VALUES(r, 1.5, 3);
    ck_assert_int_eq(K(cs_tensor_binop(NULL, CS_ADD, f64, NULL, 1.5, false))->dtype, CS_FLOAT64);
    r = K(cs_tensor_binop(NULL, CS_DIV, i64, NULL, 2, false)); /* true division */
    ck_assert_int_eq(r->dtype, CS_FLOAT32);
    CK_VALUES(r, 0.5, 1);
    r = K(cs_tensor_binop(NULL, CS_DIV, i64, V(CS_INT64, 0, 0), 0, false));
    CK_VALUES(r, INFINITY, INFINITY);
    /* 0-d tensors count like scalars unless they bring a float into ints */
    cs_tensor *z64 = K(cs_tensor_full(NULL, CS_INT64, 0, NULL, 2));
    cs_tensor *zf = K(cs_tensor_full(NULL, CS_FLOAT64, 0, NULL, 0.5));
    ck_assert_int_eq(K(cs_tensor_binop(NULL, CS_ADD, i32, z64, 0, false))->dtype, CS_INT32);
    ck_assert_int_eq(K(cs_tensor_binop(NULL, CS_ADD, z64, i32, 0, false))->dtype, CS_INT32);
    ck_assert_int_eq(K(cs_tensor_binop(NULL, CS_ADD, f32, zf, 0, false))->dtype, CS_FLOAT32);
    r = K(cs_tensor_binop(NULL, CS_ADD, i32, zf, 0, false));
    ck_assert_int_eq(r->dtype, CS_FLOAT64);
    CK_VALUES(r, 1.5, 2.5);
}
END_TEST

START_TEST(test_binop_int_wrap) {
    CK_VALUES(K(cs_tensor_binop(NULL, CS_ADD, V(CS_UINT8, 250, 5), NULL, 10, false)), 4, 15);
    CK_VALUES(K(cs_tensor_binop(NULL, CS_SUB, V(CS_UINT8, 0), NULL, 1, false)), 255);
    CK_VALUES(K(cs_tensor_binop(NULL, CS_MUL, V(CS_UINT8, 16), V(CS_UINT8, 16), 0, false)), 0);
    CK_VALUES(K(cs_tensor_binop(NULL, CS_ADD, V(CS_INT32, 2147483647.0), NULL, 1, false)), -2147483648.0);
    /* a scalar no integer can be (1e300) is a float: float32, not a wrapped int */
    cs_tensor *big = K(cs_tensor_binop(NULL, CS_MUL, V(CS_INT32, 3), NULL, 1e300, false));
    ck_assert_int_eq(big->dtype, CS_FLOAT32);
    CK_VALUES(big, INFINITY);
    cs_tensor *l = V(CS_INT64, 0);
    cs_tensor_set_i(l, 0, INT64_MAX);
    cs_tensor *r = K(cs_tensor_binop(NULL, CS_ADD, l, NULL, 1, false));
    ck_assert_int_eq(cs_tensor_get_i(r, 0), INT64_MIN);
    r = K(cs_tensor_binop(NULL, CS_MUL, l, l, 0, false));
    ck_assert_int_eq(cs_tensor_get_i(r, 0), 1);
    r = K(cs_tensor_neg(NULL, K(cs_tensor_binop(NULL, CS_ADD, l, NULL, 1, false))));
    ck_assert_int_eq(cs_tensor_get_i(r, 0), INT64_MIN);
    CK_VALUES(K(cs_tensor_binop(NULL, CS_POW, V(CS_INT32, 2, 3), NULL, 31, false)), -2147483648.0, 1264544299);
    CK_VALUES(K(cs_tensor_binop(NULL, CS_POW, V(CS_INT64, 1, -1, 2), V(CS_INT64, -3, -3, -1), 0, false)),
              1, -1, 0);
    errno = 0;
    ck_assert_ptr_null(cs_tensor_binop(NULL, CS_POW, V(CS_INT64, 2), NULL, -1, false));
    CK_ERR(EINVAL, "Integers to negative integer powers are not allowed.");
}
END_TEST

START_TEST(test_binop_broadcast) {
    cs_tensor *m = M(CS_FLOAT32, 2, 3, 0, 1, 2, 3, 4, 5);
    cs_tensor *r = K(cs_tensor_binop(NULL, CS_ADD, m, V(CS_FLOAT32, 10, 20, 30), 0, false));
    ck_assert_int_eq(r->ndim, 2);
    CK_VALUES(r, 10, 21, 32, 13, 24, 35);
    r = K(cs_tensor_binop(NULL, CS_MUL, M(CS_FLOAT32, 2, 1, 1, 2), V(CS_FLOAT32, 1, 2, 3), 0, false));
    ck_assert_int_eq(r->shape[0], 2);
    ck_assert_int_eq(r->shape[1], 3);
    CK_VALUES(r, 1, 2, 3, 2, 4, 6);
    errno = 0;
    ck_assert_ptr_null(cs_tensor_binop(NULL, CS_ADD, V(CS_FLOAT32, 1, 2, 3), V(CS_FLOAT32, 1, 2, 3, 4), 0, false));
    CK_ERR(EINVAL, "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 0");
    ck_assert_ptr_null(cs_tensor_binop(NULL, CS_ADD, m, V(CS_FLOAT32, 1, 2), 0, false));
    CK_ERR(EINVAL, "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 1");
}
END_TEST

START_TEST(test_binop_on_views) {
    cs_tensor *m = M(CS_FLOAT32, 3, 3, 0, 1, 2, 3, 4, 5, 6, 7, 8);
    cs_tensor *col = K(cs_tensor_select(m, 1, 2));
    cs_tensor *row = K(cs_tensor_select(m, 0, 1));
    CK_VALUES(K(cs_tensor_binop(NULL, CS_ADD, col, row, 0, false)), 5, 9, 13);
    ck_assert_int_eq(cs_tensor_binop_(CS_MUL, col, NULL, 10), 0);
    CK_VALUES(m, 0, 1, 20, 3, 4, 50, 6, 7, 80);
}
END_TEST

START_TEST(test_binop_inplace) {
    cs_tensor *t = K(cs_tensor_arange(NULL, CS_FLOAT32, 6));
    cs_tensor *v = K(cs_tensor_narrow(t, 0, 1, 3));
    ck_assert_int_eq(cs_tensor_binop_(CS_ADD, v, V(CS_INT64, 10, 20, 30), 0), 0);
    CK_VALUES(t, 0, 11, 22, 33, 4, 5);
    ck_assert_int_eq(cs_tensor_binop_(CS_DIV, t, NULL, 2), 0);
    CK_VALUES(t, 0, 5.5, 11, 16.5, 2, 2.5);
    ck_assert_int_eq(t->dtype, CS_FLOAT32);

    cs_tensor *i = V(CS_INT64, 1, 2, 3);
    errno = 0;
    ck_assert_int_eq(cs_tensor_binop_(CS_DIV, i, NULL, 2), -1);
    CK_ERR(EINVAL, "result type Float can't be cast to the desired output type Long");
    ck_assert_int_eq(cs_tensor_binop_(CS_ADD, V(CS_INT32, 1), NULL, 0.5), -1);
    CK_ERR(EINVAL, "result type Float can't be cast to the desired output type Int");
    ck_assert_int_eq(cs_tensor_binop_(CS_ADD, V(CS_UINT8, 1), V(CS_FLOAT64, 1), 0), -1);
    CK_ERR(EINVAL, "result type Double can't be cast to the desired output type Byte");
    CK_VALUES(i, 1, 2, 3); /* untouched */
    ck_assert_int_eq(cs_tensor_binop_(CS_MUL, i, NULL, 3), 0);
    CK_VALUES(i, 3, 6, 9);
    cs_tensor *u = V(CS_UINT8, 200);
    ck_assert_int_eq(cs_tensor_binop_(CS_ADD, u, V(CS_INT64, 100), 0), 0); /* int into uint8 wraps */
    CK_VALUES(u, 44);

    cs_tensor *m = M(CS_FLOAT32, 2, 3, 0, 1, 2, 3, 4, 5);
    ck_assert_int_eq(cs_tensor_binop_(CS_SUB, m, V(CS_FLOAT32, 1, 1, 1), 0), 0); /* broadcast b */
    CK_VALUES(m, -1, 0, 1, 2, 3, 4);
    ck_assert_int_eq(cs_tensor_binop_(CS_ADD, V(CS_FLOAT32, 1, 1, 1), m, 0), -1);
    CK_ERR(EINVAL, "output with shape [3] doesn't match the broadcast shape [2, 3]");
    ck_assert_int_eq(cs_tensor_binop_(CS_ADD, m, m, 0), 0); /* aliasing itself */
    CK_VALUES(m, -2, 0, 2, 4, 6, 8);
}
END_TEST

START_TEST(test_neg_relu) {
    cs_tensor *a = V(CS_FLOAT32, -2, 0, 3, NAN);
    CK_VALUES(K(cs_tensor_neg(NULL, a)), 2, 0, -3, NAN);
    ck_assert(signbit(cs_tensor_get(K(cs_tensor_neg(NULL, a)), 1)));
    CK_VALUES(K(cs_tensor_relu(NULL, a)), 0, 0, 3, NAN);
    CK_VALUES(K(cs_tensor_neg(NULL, V(CS_UINT8, 1))), 255);
    cs_tensor *m = M(CS_INT32, 2, 2, -1, -2, -3, 4);
    cs_tensor_relu_(K(cs_tensor_select(m, 0, 1)));
    CK_VALUES(m, -1, -2, 0, 4);
    ck_assert_int_eq(K(cs_tensor_relu(NULL, m))->dtype, CS_INT32);
}
END_TEST

/* ---- reductions */

START_TEST(test_reductions) {
    cs_tensor *m = M(CS_FLOAT32, 2, 3, 1, -2, 3, 4, 5, 6);
    ck_assert_double_eq(cs_tensor_sum(m), 17);
    ck_assert_double_eq(cs_tensor_max(m), 6);
    ck_assert_double_eq(cs_tensor_min(m), -2);
    ck_assert_double_eq_tol(cs_tensor_mean(m), 17.0 / 6, 1e-12);
    cs_tensor *col = K(cs_tensor_select(m, 1, 1));
    ck_assert_double_eq(cs_tensor_sum(col), 3);
    ck_assert_double_eq(cs_tensor_min(col), -2);
    cs_tensor *e = K(cs_tensor_arange(NULL, CS_FLOAT32, 0));
    ck_assert_double_eq(cs_tensor_sum(e), 0);
    ck_assert(isnan(cs_tensor_max(e)) && isnan(cs_tensor_min(e)) && isnan(cs_tensor_mean(e)));
    ck_assert(isnan(cs_tensor_max(V(CS_FLOAT32, 1, NAN, 3))));
    ck_assert_double_eq(cs_tensor_sum(V(CS_UINT8, 200, 200)), 400); /* no wrap in the result */
    errno = 0; /* torch has no integer mean */
    ck_assert(isnan(cs_tensor_mean(V(CS_INT32, 1, 2))) && errno == EINVAL);
    ck_assert_str_eq(cs_tensor_errmsg(), "mean(): could not infer output dtype. Input dtype must "
                     "be either a floating point or complex dtype. Got: Int");
    ck_assert_double_eq(cs_tensor_sum(K(cs_tensor_full(NULL, CS_INT64, 0, NULL, 7))), 7);
    /* integer reductions are exact past 2^53, where a double is not */
    cs_tensor *big = V(CS_INT64, 0, 1, -3);
    cs_tensor_set_i(big, 0, ((int64_t)1 << 62) + 1);
    ck_assert_int_eq(cs_tensor_sum_i(big), ((int64_t)1 << 62) - 1);
    ck_assert_int_eq(cs_tensor_max_i(big), ((int64_t)1 << 62) + 1);
    ck_assert_int_eq(cs_tensor_min_i(big), -3);
    cs_tensor_set_i(big, 1, INT64_MAX);
    ck_assert_int_eq(cs_tensor_sum_i(big), INT64_MIN + ((int64_t)1 << 62) - 3); /* wraps */
    ck_assert_int_eq(cs_tensor_sum_i(V(CS_UINT8, 200, 200)), 400);
}
END_TEST

/* ---- matmul */

START_TEST(test_matmul) {
    cs_tensor *a = M(CS_FLOAT32, 2, 3, 1, 2, 3, 4, 5, 6), *b = M(CS_FLOAT32, 3, 2, 1, 0, 0, 1, 1, 1);
    cs_tensor *r = K(cs_tensor_matmul(NULL, a, b, NULL));
    ck_assert_int_eq(r->ndim, 2);
    ck_assert_int_eq(r->shape[0], 2);
    CK_VALUES(r, 4, 5, 10, 11);
    cs_tensor *v = V(CS_FLOAT32, 1, 2, 3);
    r = K(cs_tensor_matmul(NULL, v, v, NULL)); /* dot: 0-d */
    ck_assert_int_eq(r->ndim, 0);
    CK_VALUES(r, 14);
    r = K(cs_tensor_matmul(NULL, a, v, NULL)); /* 2-D x 1-D */
    ck_assert_int_eq(r->ndim, 1);
    CK_VALUES(r, 14, 32);
    r = K(cs_tensor_matmul(NULL, V(CS_FLOAT32, 1, 1), a, NULL)); /* 1-D x 2-D */
    ck_assert_int_eq(r->ndim, 1);
    CK_VALUES(r, 5, 7, 9);
    /* strided operands: a column view of a */
    cs_tensor *c = K(cs_tensor_narrow(a, 1, 1, 2));
    CK_VALUES(K(cs_tensor_matmul(NULL, c, M(CS_FLOAT32, 2, 1, 1, 1), NULL)), 5, 11);
    r = K(cs_tensor_matmul(NULL, M(CS_INT64, 1, 2, 2, 3), M(CS_INT64, 2, 1, 4, 5), NULL));
    ck_assert_int_eq(r->dtype, CS_INT64);
    CK_VALUES(r, 23);
}
END_TEST

/* Values with every bit of a float32's mantissa in use, so that a sum taken
 * in another order or precision would differ. */
static cs_tensor *filled(cs_dtype d, int64_t rows, int64_t cols, int seed) {
    cs_tensor *t = K(cs_tensor_new(NULL, d, 2, (int64_t[]){rows, cols}));
    for (int64_t i = 0; i < rows * cols; i++) cs_tensor_set(t, i, sin((double)(i * 7919 + seed)) * 1e3);
    return t;
}

/* Every element is the sum over p in order, in double, rounded once to the
 * result's dtype: the vectorised path (contiguous rows of b, wider than its
 * column chunk) gives the plain loop's answer to the bit. */
START_TEST(test_matmul_rows) {
    const cs_dtype dts[] = {CS_FLOAT32, CS_FLOAT64};
    for (int di = 0; di < 2; di++) {
        cs_tensor *a = filled(dts[di], 5, 37, 1), *wide = filled(dts[di], 37, 2600, 2);
        cs_tensor *b = K(cs_tensor_narrow(wide, 1, 3, 2500)); /* rows strided by 2600 */
        cs_tensor *out = K(cs_tensor_matmul(NULL, a, b, NULL));
        for (int64_t i = 0; i < 5; i++)
            for (int64_t j = 0; j < 2500; j++) {
                double acc = 0;
                for (int64_t p = 0; p < 37; p++)
                    acc += cs_tensor_get(a, i * 37 + p) * cs_tensor_get(wide, p * 2600 + 3 + j);
                double want = dts[di] == CS_FLOAT32 ? (double)(float)acc : acc;
                ck_assert_msg(cs_tensor_get(out, i * 2500 + j) == want, "%s [%lld,%lld]",
                              cs_dtype_name(dts[di]), (long long)i, (long long)j);
            }
    }
}
END_TEST

static bool stop_after(void *ud) {
    int *looks = ud;
    return --*looks <= 0;
}

/* A long product asks whether to go on, about every million multiply-adds,
 * and stops when told: NULL, ECANCELED, its result's bytes given back. On
 * both paths: the float one along rows of b, and the integer one. */
START_TEST(test_matmul_stop) {
    const cs_dtype dts[] = {CS_FLOAT32, CS_INT64};
    for (int di = 0; di < 2; di++) {
        cs_budget bud = {.limit = 1 << 30};
        cs_tensor *a = K(cs_tensor_new(NULL, dts[di], 2, (int64_t[]){400, 400}));
        int looks = 1000;
        cs_tensor_stop never = {stop_after, &looks};
        cs_tensor *r = cs_tensor_matmul(&bud, a, a, &never); /* 64 M: asked 64 times or so */
        ck_assert_ptr_nonnull(r); /* not K's: released here, while bud lives */
        ck_assert_int_ge(1000 - looks, 40);
        ck_assert_int_le(1000 - looks, 80);
        cs_tensor_release(r);
        looks = 3;
        cs_tensor_stop soon = {stop_after, &looks};
        errno = 0;
        ck_assert_ptr_null(cs_tensor_matmul(&bud, a, a, &soon));
        CK_ERR(ECANCELED, "matmul: stopped");
        ck_assert_int_eq(looks, 0);
        ck_assert_uint_eq(bud.used, 0);
    }
}
END_TEST

START_TEST(test_matmul_errors) {
    cs_tensor *a = K(cs_tensor_new(NULL, CS_FLOAT32, 2, (int64_t[]){2, 3}));
    cs_tensor *b = K(cs_tensor_new(NULL, CS_FLOAT32, 2, (int64_t[]){4, 5}));
    errno = 0;
    ck_assert_ptr_null(cs_tensor_matmul(NULL, a, b, NULL));
    CK_ERR(EINVAL, "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)");
    ck_assert_ptr_null(cs_tensor_matmul(NULL, V(CS_FLOAT32, 1, 2, 3), b, NULL));
    CK_ERR(EINVAL, "mat1 and mat2 shapes cannot be multiplied (1x3 and 4x5)");
    ck_assert_ptr_null(cs_tensor_matmul(NULL, a, V(CS_FLOAT32, 1, 2, 3, 4), NULL));
    CK_ERR(EINVAL, "size mismatch, got input (2), mat (2x3), vec (4)");
    ck_assert_ptr_null(cs_tensor_matmul(NULL, V(CS_FLOAT32, 1, 2, 3), V(CS_FLOAT32, 1, 2), NULL));
    CK_ERR(EINVAL, "inconsistent tensor size");
    cs_tensor *c = K(cs_tensor_new(NULL, CS_FLOAT32, 3, (int64_t[]){2, 2, 2}));
    ck_assert_ptr_null(cs_tensor_matmul(NULL, c, c, NULL));
    CK_ERR(EINVAL, "1-D and 2-D");
    /* no promotion in a matrix product, as in torch */
    ck_assert_ptr_null(cs_tensor_matmul(NULL, a, K(cs_tensor_new(NULL, CS_INT64, 2, (int64_t[]){3, 2})), NULL));
    CK_ERR(EINVAL, "expected m1 and m2 to have the same dtype, but got: float32 != int64");
}
END_TEST

/* ---- comparison */

START_TEST(test_equal_allclose) {
    cs_tensor *a = V(CS_FLOAT32, 1, 2, 3);
    ck_assert(cs_tensor_equal(a, V(CS_FLOAT32, 1, 2, 3)));
    ck_assert(cs_tensor_equal(a, V(CS_INT64, 1, 2, 3)));
    ck_assert(!cs_tensor_equal(a, V(CS_FLOAT32, 1, 2, 4)));
    ck_assert(!cs_tensor_equal(a, V(CS_FLOAT32, 1, 2)));
    ck_assert(!cs_tensor_equal(a, M(CS_FLOAT32, 1, 3, 1, 2, 3)));
    ck_assert(!cs_tensor_equal(V(CS_FLOAT32, NAN), V(CS_FLOAT32, NAN)));
    ck_assert(cs_tensor_equal(V(CS_FLOAT32, INFINITY), V(CS_FLOAT64, INFINITY)));
    ck_assert(cs_tensor_allclose(a, V(CS_FLOAT32, 1, 2, 3.000001), 1e-5, 1e-8));
    ck_assert(!cs_tensor_allclose(a, V(CS_FLOAT32, 1, 2, 3.1), 1e-5, 1e-8));
    ck_assert(cs_tensor_allclose(a, V(CS_FLOAT32, 1, 2, 3.1), 0, 0.2));
    ck_assert(!cs_tensor_allclose(V(CS_FLOAT32, INFINITY), V(CS_FLOAT32, 1e30), 1, 1));
    ck_assert(!cs_tensor_allclose(V(CS_FLOAT32, NAN), V(CS_FLOAT32, NAN), 1, 1));
    ck_assert(cs_tensor_allclose(V(CS_INT32, 100), V(CS_INT64, 101), 0.01, 0));
    cs_tensor *m = M(CS_INT32, 2, 2, 1, 2, 3, 4);
    ck_assert(cs_tensor_equal(K(cs_tensor_select(m, 1, 0)), V(CS_INT32, 1, 3)));
}
END_TEST

/* ---- threads: distinct tensors on distinct threads, one shared budget */

static void *thread_work(void *arg) {
    cs_budget *b = arg;
    for (int i = 0; i < 200; i++) {
        int64_t n = 64;
        cs_tensor *t = cs_tensor_arange(b, CS_FLOAT32, n);
        cs_tensor *u = cs_tensor_binop(b, CS_MUL, t, NULL, 2, false);
        cs_tensor *s = cs_tensor_narrow(u, 0, 1, 2);
        if (!t || !u || !s || cs_tensor_sum(s) != 6) return (void *)1;
        char *str = cs_tensor_format(s);
        bool ok = str && strcmp(str, "tensor([2., 4.])") == 0;
        free(str);
        cs_tensor_release(t);
        cs_tensor_release(u);
        cs_tensor_release(s);
        if (!ok) return (void *)1;
    }
    return NULL;
}

START_TEST(test_threads_budget) {
    cs_budget b = {.limit = 0};
    pthread_t th[4];
    for (int i = 0; i < 4; i++) pthread_create(&th[i], NULL, thread_work, &b);
    for (int i = 0; i < 4; i++) {
        void *rv;
        pthread_join(th[i], &rv);
        ck_assert_ptr_null(rv);
    }
    ck_assert_uint_eq(atomic_load(&b.used), 0);
}
END_TEST

static void *thread_refs(void *arg) {
    cs_tensor *t = arg;
    for (int i = 0; i < 10000; i++) {
        cs_tensor *v = cs_tensor_select(t, 0, i % 4); /* retains the shared storage */
        cs_tensor_release(cs_tensor_retain(t));
        cs_tensor_release(v);
    }
    return NULL;
}

static void *thread_errmsg(void *arg) {
    cs_tensor *t = cs_tensor_arange(NULL, CS_FLOAT32, 3);
    for (int i = 0; i < 1000; i++) {
        cs_tensor_narrow(t, 0, 0, 4 + (intptr_t)arg);
        char want[80];
        snprintf(want, sizeof want, "start (0) + length (%d) exceeds", 4 + (int)(intptr_t)arg);
        if (!strstr(cs_tensor_errmsg(), want)) return (void *)1;
    }
    cs_tensor_release(t);
    return NULL;
}

START_TEST(test_threads_refs_errmsg) {
    cs_budget b = {.limit = 1 << 20};
    cs_tensor *t = cs_tensor_arange(&b, CS_INT64, 4);
    pthread_t th[4];
    for (int i = 0; i < 4; i++) pthread_create(&th[i], NULL, thread_refs, t);
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    ck_assert_int_eq(atomic_load(&t->refs), 1);
    ck_assert_int_eq(atomic_load(&t->st->refs), 1);
    cs_tensor_release(t);
    ck_assert_uint_eq(atomic_load(&b.used), 0);
    for (intptr_t i = 0; i < 4; i++) pthread_create(&th[i], NULL, thread_errmsg, (void *)i);
    for (int i = 0; i < 4; i++) {
        void *rv;
        pthread_join(th[i], &rv);
        ck_assert_ptr_null(rv);
    }
}
END_TEST

/* ---- printing. Rules from torch/_tensor_str.py noted per case. */

START_TEST(test_format_float_basic) {
    CK_FMT(V(CS_FLOAT32, 1, 2, 3), "tensor([1., 2., 3.])");            /* int_mode: "1." */
    CK_FMT(V(CS_FLOAT32, 1.5, 2.25), "tensor([1.5000, 2.2500])");      /* precision 4 */
    CK_FMT(V(CS_FLOAT32, 1, 10, 100), "tensor([  1.,  10., 100.])");   /* right-aligned */
    CK_FMT(V(CS_FLOAT32, -1, 2), "tensor([-1.,  2.])");
    CK_FMT(V(CS_FLOAT32, -1.5, 2.25), "tensor([-1.5000,  2.2500])");
    CK_FMT(V(CS_FLOAT32, 0, 0), "tensor([0., 0.])");                   /* no nonzero: width 1 */
    CK_FMT(V(CS_FLOAT32, 0, 0.5), "tensor([0.0000, 0.5000])");
    CK_FMT(V(CS_FLOAT32, 1, 1000), "tensor([   1., 1000.])");          /* ratio 1000 is not > 1000 */
    CK_FMT(V(CS_FLOAT32, 100000000), "tensor([100000000.])");          /* 1e8 is not > 1e8 */
    CK_FMT(V(CS_FLOAT32, 0.00012, 0.0005), "tensor([0.0001, 0.0005])"); /* min >= 1e-4 */
    CK_FMT(V(CS_FLOAT32, 0.1, 0.2, 0.3), "tensor([0.1000, 0.2000, 0.3000])");
    CK_FMT(V(CS_FLOAT32, 1.00005), "tensor([1.0000])"); /* float32 1.00005 rounds down */
}
END_TEST

START_TEST(test_format_sci) {
    CK_FMT(V(CS_FLOAT32, 1e-5, 1), "tensor([1.0000e-05, 1.0000e+00])");  /* min < 1e-4 */
    CK_FMT(V(CS_FLOAT32, 5e-5, 6e-5), "tensor([5.0000e-05, 6.0000e-05])");
    CK_FMT(V(CS_FLOAT32, 1, 1001), "tensor([1.0000e+00, 1.0010e+03])");   /* int_mode ratio > 1000 */
    CK_FMT(V(CS_FLOAT32, 2e8), "tensor([2.0000e+08])");                   /* int_mode max > 1e8 */
    CK_FMT(V(CS_FLOAT32, 0.5, 2e8), "tensor([5.0000e-01, 2.0000e+08])");
    CK_FMT(V(CS_FLOAT32, 0, -1e-5, 1), "tensor([ 0.0000e+00, -1.0000e-05,  1.0000e+00])");
    CK_FMT(V(CS_FLOAT64, 1e-300, 1), "tensor([1.0000e-300,  1.0000e+00], dtype=torch.float64)");
}
END_TEST

START_TEST(test_format_nonfinite) {
    CK_FMT(V(CS_FLOAT32, NAN, INFINITY, 1), "tensor([nan, inf, 1.])"); /* width from "1." only */
    CK_FMT(V(CS_FLOAT32, NAN, -INFINITY), "tensor([nan, -inf])");
    CK_FMT(V(CS_FLOAT32, -NAN), "tensor([nan])");                      /* Python never says -nan */
    CK_FMT(V(CS_FLOAT32, 1.5, NAN), "tensor([1.5000,    nan])");
    CK_FMT(V(CS_FLOAT32, 1e-5, INFINITY), "tensor([1.0000e-05,        inf])");
    CK_FMT(V(CS_FLOAT32, 100, -INFINITY), "tensor([100., -inf])");
}
END_TEST

START_TEST(test_format_dtypes) {
    CK_FMT(V(CS_INT64, 1, 2, 3), "tensor([1, 2, 3])");
    CK_FMT(V(CS_INT64, -10, 5), "tensor([-10,   5])");
    CK_FMT(V(CS_INT32, 1, 2, 3), "tensor([1, 2, 3], dtype=torch.int32)");
    CK_FMT(V(CS_UINT8, 0, 255), "tensor([  0, 255], dtype=torch.uint8)");
    CK_FMT(V(CS_FLOAT64, 1, 2), "tensor([1., 2.], dtype=torch.float64)");
    CK_FMT(V(CS_FLOAT64, 0.25), "tensor([0.2500], dtype=torch.float64)");
    cs_tensor *big = V(CS_INT64, 0);
    cs_tensor_set_i(big, 0, INT64_MIN);
    CK_FMT(big, "tensor([-9223372036854775808])");
}
END_TEST

START_TEST(test_format_scalar_empty) {
    CK_FMT(K(cs_tensor_full(NULL, CS_FLOAT32, 0, NULL, 5)), "tensor(5.)");
    CK_FMT(K(cs_tensor_full(NULL, CS_FLOAT32, 0, NULL, 0.5)), "tensor(0.5000)");
    CK_FMT(K(cs_tensor_full(NULL, CS_FLOAT32, 0, NULL, 1e-5)), "tensor(1.0000e-05)");
    CK_FMT(K(cs_tensor_full(NULL, CS_INT64, 0, NULL, 5)), "tensor(5)");
    CK_FMT(K(cs_tensor_full(NULL, CS_INT32, 0, NULL, -5)), "tensor(-5, dtype=torch.int32)");
    CK_FMT(K(cs_tensor_full(NULL, CS_FLOAT64, 0, NULL, NAN)), "tensor(nan, dtype=torch.float64)");
    CK_FMT(K(cs_tensor_arange(NULL, CS_FLOAT32, 0)), "tensor([])");
    CK_FMT(K(cs_tensor_arange(NULL, CS_INT32, 0)), "tensor([], dtype=torch.int32)");
    CK_FMT(K(cs_tensor_arange(NULL, CS_INT64, 0)), "tensor([], dtype=torch.int64)"); /* shown when empty */
    CK_FMT(K(cs_tensor_new(NULL, CS_FLOAT32, 2, (int64_t[]){0, 3})), "tensor([], size=(0, 3))");
    CK_FMT(K(cs_tensor_new(NULL, CS_FLOAT64, 3, (int64_t[]){2, 0, 1})),
           "tensor([], size=(2, 0, 1), dtype=torch.float64)");
}
END_TEST

START_TEST(test_format_nd) {
    CK_FMT(M(CS_FLOAT32, 2, 2, 1, 2, 3, 4), "tensor([[1., 2.],\n        [3., 4.]])");
    CK_FMT(M(CS_INT64, 2, 2, 1, 10, 100, 2), "tensor([[  1,  10],\n        [100,   2]])");
    cs_tensor *a = K(cs_tensor_arange(NULL, CS_FLOAT32, 8));
    CK_FMT(K(cs_tensor_view(a, 3, (int64_t[]){2, 2, 2})),
           "tensor([[[0., 1.],\n"
           "         [2., 3.]],\n"
           "\n"
           "        [[4., 5.],\n"
           "         [6., 7.]]])");
    cs_tensor *b = K(cs_tensor_arange(NULL, CS_INT32, 4));
    CK_FMT(K(cs_tensor_view(b, 4, (int64_t[]){1, 2, 1, 2})),
           "tensor([[[[0, 1]],\n"
           "\n"
           "         [[2, 3]]]], dtype=torch.int32)");
    /* a strided view prints its own elements, not its storage's */
    CK_FMT(K(cs_tensor_select(M(CS_FLOAT32, 2, 2, 1, 2, 3, 4), 1, 1)), "tensor([2., 4.])");
}
END_TEST

START_TEST(test_format_wrap) {
    /* width 3 + 2 per element: (80 - 7) / 5 = 14 per line, continuation at 8 */
    CK_FMT(K(cs_tensor_arange(NULL, CS_FLOAT32, 30)),
           "tensor([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12., 13.,\n"
           "        14., 15., 16., 17., 18., 19., 20., 21., 22., 23., 24., 25., 26., 27.,\n"
           "        28., 29.])");
    /* 18 per line; the dtype suffix no longer fits after the last line */
    CK_FMT(K(cs_tensor_arange(NULL, CS_INT32, 18)),
           "tensor([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16, 17],\n"
           "       dtype=torch.int32)");
    CK_FMT(K(cs_tensor_arange(NULL, CS_INT32, 20)),
           "tensor([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16, 17,\n"
           "        18, 19], dtype=torch.int32)");
}
END_TEST

START_TEST(test_format_summarised) {
    /* > 1000 elements: 3 edge items, width over the shown elements only */
    CK_FMT(K(cs_tensor_arange(NULL, CS_INT64, 2000)), "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])");
    cs_tensor *f = K(cs_tensor_arange(NULL, CS_FLOAT32, 2000));
    CK_FMT(K(cs_tensor_binop(NULL, CS_ADD, f, NULL, 1000, false)),
           "tensor([1000., 1001., 1002.,  ..., 2997., 2998., 2999.])");
    /* 1 .. 1999 spans more than 1000x: scientific, and " ..." is an element
     * when wrapping: (80 - 7) / 12 = 6 per line */
    CK_FMT(f, "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n"
              "        1.9990e+03])");
    cs_tensor *ones = K(cs_tensor_full(NULL, CS_FLOAT32, 1, (int64_t[]){2000}, 1));
    cs_tensor_set(ones, 1000, 1e6); /* hidden by the summary, so it affects nothing */
    CK_FMT(ones, "tensor([1., 1., 1.,  ..., 1., 1., 1.])");
}
END_TEST

START_TEST(test_format_summarised_nd) {
    cs_tensor *a = K(cs_tensor_arange(NULL, CS_INT64, 1600));
    CK_FMT(K(cs_tensor_view(a, 2, (int64_t[]){40, 40})),
           "tensor([[   0,    1,    2,  ...,   37,   38,   39],\n"
           "        [  40,   41,   42,  ...,   77,   78,   79],\n"
           "        [  80,   81,   82,  ...,  117,  118,  119],\n"
           "        ...,\n"
           "        [1480, 1481, 1482,  ..., 1517, 1518, 1519],\n"
           "        [1520, 1521, 1522,  ..., 1557, 1558, 1559],\n"
           "        [1560, 1561, 1562,  ..., 1597, 1598, 1599]])");
    cs_tensor *b = K(cs_tensor_arange(NULL, CS_INT64, 1050));
    CK_FMT(K(cs_tensor_view(b, 3, (int64_t[]){7, 1, 150})),
           "tensor([[[   0,    1,    2,  ...,  147,  148,  149]],\n"
           "\n"
           "        [[ 150,  151,  152,  ...,  297,  298,  299]],\n"
           "\n"
           "        [[ 300,  301,  302,  ...,  447,  448,  449]],\n"
           "\n"
           "        ...,\n"
           "\n"
           "        [[ 600,  601,  602,  ...,  747,  748,  749]],\n"
           "\n"
           "        [[ 750,  751,  752,  ...,  897,  898,  899]],\n"
           "\n"
           "        [[ 900,  901,  902,  ..., 1047, 1048, 1049]]])");
    /* exactly 1000 elements: printed in full */
    char *s = cs_tensor_format(K(cs_tensor_arange(NULL, CS_INT64, 1000)));
    ck_assert_ptr_null(strstr(s, "..."));
    ck_assert_ptr_nonnull(strstr(s, "999])"));
    free(s);
}
END_TEST

static Suite *tensor_suite(void) {
    Suite *s = suite_create("tensor");
    struct {
        const char *name;
        const TTest *tests[16];
    } groups[] = {
        {"core", {test_dtype_names, test_new_zero_filled, test_new_bad_shape, test_budget,
                  test_retain_release, test_factories, test_randn, test_get_set, test_int_conversions}},
        {"views", {test_narrow_shares_storage, test_narrow_2d_columns, test_narrow_errors, test_select,
                   test_view, test_chunk, test_shape_str, test_clone_contiguous_to, test_copy_}},
        {"ops", {test_binop_basic, test_binop_scalars, test_binop_dtypes, test_binop_int_wrap,
                 test_binop_broadcast, test_binop_on_views, test_binop_inplace, test_neg_relu,
                 test_reductions, test_matmul, test_matmul_rows, test_matmul_stop, test_matmul_errors, test_equal_allclose}},
        {"threads", {test_threads_budget, test_threads_refs_errmsg}},
        {"format", {test_format_float_basic, test_format_sci, test_format_nonfinite, test_format_dtypes,
                    test_format_scalar_empty, test_format_nd, test_format_wrap, test_format_summarised,
                    test_format_summarised_nd}},
    };
    for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++) {
        TCase *tc = tcase_create(groups[g].name);
        tcase_add_checked_fixture(tc, NULL, teardown);
        for (int i = 0; groups[g].tests[i]; i++) tcase_add_test(tc, groups[g].tests[i]);
        suite_add_tcase(s, tc);
    }
    return s;
}

int main(void) {
    return run_suite(tensor_suite());
}
