/* check_tensor_props.c -- property tests for shapes, strides and views.
 *
 * Random shapes (many near the limits of int64_t, or whose products wrap
 * around) go through the factories and through chains of view, narrow,
 * select and chunk. The properties:
 *
 *  - a call either gives a tensor or fails with EINVAL/ENOMEM and a message;
 *    it never crashes;
 *  - every tensor given has a storage that holds every element it can
 *    address: each element's address, computed with overflow-checked
 *    arithmetic, lies inside the storage, and reading every element through
 *    the library (get, sum, clone) stays inside it (ASan checks the reads);
 *  - element counts match the storage's size for a fresh tensor.
 *
 * Deterministic (fixed seeds) and quick; run it under ASan for the reads.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tensor.h"
#include "run_suite.h"

/* ---- a fixed-seed generator (splitmix64) */

static uint64_t rng_state;

static uint64_t rnd(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int64_t below(int64_t n) { return n > 0 ? (int64_t)(rnd() % (uint64_t)n) : 0; }

/* A dim as a hostile script would pick one: mostly small, often at or near a
 * limit, sometimes negative or -1. */
static int64_t hostile_dim(void) {
    switch (below(12)) {
    case 0: return INT64_MAX - below(3);
    case 1: return (INT64_C(1) << 62) + below(3) - 1;
    case 2: return INT64_MAX / (below(8) + 1) - below(2);
    case 3: return INT64_C(1) << below(63);
    case 4: return -1;
    case 5: return -below(4) - 2;
    case 6: return (INT64_C(1) << 32) + below(2);
    case 7: return 0;
    default: return below(7);
    }
}

static cs_dtype any_dtype(void) { return (cs_dtype)below(CS_NDTYPES); }

/* ---- the property: every element of t lies inside its storage */

static void ck_in_bounds(const cs_tensor *t) {
    ck_assert_int_ge(t->ndim, 0);
    ck_assert_int_le(t->ndim, CS_MAX_DIMS);
    int64_t numel = 1;
    for (int d = 0; d < t->ndim; d++) {
        ck_assert_int_ge(t->shape[d], 0);
        ck_assert(!__builtin_mul_overflow(numel, t->shape[d], &numel));
    }
    ck_assert_int_eq(numel, cs_tensor_numel(t));
    if (numel == 0) return;
    /* The lowest and highest element offsets (strides are never negative). */
    int64_t lo = t->offset, hi = t->offset, step;
    for (int d = 0; d < t->ndim; d++) {
        ck_assert_int_ge(t->stride[d], 0);
        ck_assert(!__builtin_mul_overflow(t->shape[d] - 1, t->stride[d], &step));
        ck_assert(!__builtin_add_overflow(hi, step, &hi));
    }
    size_t es = cs_dtype_size(t->dtype);
    const char *base = t->st->data, *end = base + t->st->bytes;
    ck_assert_int_ge(lo, 0);
    ck_assert_msg((uint64_t)hi < t->st->bytes / es, "element offset %lld past a storage of %zu bytes",
                  (long long)hi, t->st->bytes);
    ck_assert(base + (size_t)lo * es >= base && base + ((size_t)hi + 1) * es <= end);
    /* Then read them all the ways the library does (ASan watches). */
    if (numel > 4096) return;
    for (int64_t i = 0; i < numel; i++) (void)cs_tensor_get(t, i);
    (void)cs_tensor_sum(t);
    cs_tensor *c = cs_tensor_clone(NULL, t);
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq((int64_t)c->st->bytes, numel * (int64_t)es);
    cs_tensor_release(c);
}

static void ck_refused(const char *what) {
    ck_assert_msg(errno == EINVAL || errno == ENOMEM, "%s: errno %d", what, errno);
    ck_assert_msg(cs_tensor_errmsg()[0] != '\0', "%s: no message", what);
}

/* ---- factories */

START_TEST(test_factories_near_the_limits) {
    rng_state = 1;
    cs_budget b = {.limit = 1 << 20}; /* big shapes are refused by the budget, not malloc */
    int made = 0;
    for (int i = 0; i < 10000; i++) {
        int64_t shape[CS_MAX_DIMS];
        int ndim = (int)below(CS_MAX_DIMS + 1);
        for (int d = 0; d < ndim; d++) shape[d] = hostile_dim();
        errno = 0;
        cs_tensor *t = cs_tensor_new(&b, any_dtype(), ndim, shape);
        if (!t) {
            ck_refused("cs_tensor_new");
            continue;
        }
        made++;
        for (int d = 0; d < ndim; d++) ck_assert_int_eq(t->shape[d], shape[d]);
        ck_assert_uint_eq(t->st->bytes, (size_t)cs_tensor_numel(t) * cs_dtype_size(t->dtype));
        ck_in_bounds(t);
        cs_tensor_release(t);
    }
    ck_assert_int_gt(made, 100);
    ck_assert_uint_eq(atomic_load(&b.used), 0);
}
END_TEST

/* ---- views */

/* One random view op on t: a new tensor, or NULL with errno set. */
static cs_tensor *random_view(cs_tensor *t) {
    int64_t shape[CS_MAX_DIMS];
    int dim = (int)below(t->ndim + 2) - 1;
    switch (below(5)) {
    case 0: {
        int ndim = (int)below(CS_MAX_DIMS + 1);
        for (int d = 0; d < ndim; d++) shape[d] = hostile_dim();
        if (ndim && below(2)) { /* make some shapes multiply out to numel */
            int64_t rest = cs_tensor_numel(t);
            for (int d = 1; d < ndim; d++) shape[d] = 1;
            shape[0] = below(3) ? rest : -1;
        }
        return cs_tensor_view(t, ndim, shape);
    }
    case 1: {
        int64_t size = t->ndim ? t->shape[dim < 0 ? t->ndim - 1 : dim % t->ndim] : 0;
        int64_t start = below(2) ? below(size + 1) : hostile_dim();
        int64_t len = below(2) ? below(size - (start > 0 && start <= size ? start : 0) + 1) : hostile_dim();
        return cs_tensor_narrow(t, dim, start, len);
    }
    case 2: {
        int64_t size = t->ndim ? t->shape[dim < 0 ? t->ndim - 1 : dim % t->ndim] : 0;
        return cs_tensor_select(t, dim, below(2) ? below(size) : hostile_dim());
    }
    case 3: {
        cs_tensor *out[8];
        int n = below(2) ? (int)below(10) : (int)(hostile_dim() & 0x7fffffff);
        int count = cs_tensor_chunk(t, n, dim, out, 8);
        if (count < 0) return NULL;
        for (int i = 0; i < count; i++) ck_in_bounds(out[i]);
        cs_tensor *keep = count ? out[below(count)] : NULL;
        for (int i = 0; i < count; i++)
            if (out[i] != keep) cs_tensor_release(out[i]);
        if (!keep) errno = EINVAL;
        return keep;
    }
    default: /* reshape as the binding does it: contiguous, then view */
        for (int d = 0; d < t->ndim; d++) shape[d] = below(2) ? -1 : hostile_dim();
        {
            cs_tensor *c = cs_tensor_contiguous(NULL, t), *v;
            if (!c) return NULL;
            v = cs_tensor_view(c, t->ndim, shape);
            cs_tensor_release(c);
            return v;
        }
    }
}

/* Real storage (small) or empty tensors with huge dims, then chains of views. */
static cs_tensor *random_base(void) {
    int64_t shape[CS_MAX_DIMS];
    int ndim = (int)below(CS_MAX_DIMS) + 1;
    bool empty = below(3) == 0;
    for (int d = 0; d < ndim; d++) shape[d] = below(6) + 1;
    if (empty) {
        shape[below(ndim)] = 0;
        for (int d = 0; d < ndim; d++)
            if (shape[d] && below(2)) shape[d] = hostile_dim();
    }
    return cs_tensor_new(NULL, any_dtype(), ndim, shape);
}

START_TEST(test_view_chains_stay_in_bounds) {
    rng_state = 2;
    int accepted = 0, refused = 0;
    for (int i = 0; i < 2000; i++) {
        cs_tensor *t = random_base();
        if (!t) {
            ck_refused("base");
            continue;
        }
        ck_in_bounds(t);
        for (int step = 0; step < 8; step++) {
            errno = 0;
            cs_tensor *v = random_view(t);
            if (!v) {
                ck_refused("view op");
                refused++;
                continue;
            }
            accepted++;
            ck_in_bounds(v);
            cs_tensor_release(t);
            t = v;
        }
        cs_tensor_release(t);
    }
    ck_assert_int_gt(accepted, 1000);
    ck_assert_int_gt(refused, 1000);
}
END_TEST

/* ---- the reproducers of products that wrap */

static void ck_view_refused(cs_tensor *t, int ndim, const int64_t *shape, const char *want) {
    errno = 0;
    cs_tensor *v = cs_tensor_view(t, ndim, shape);
    ck_assert_msg(!v, "view accepted");
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_str_eq(cs_tensor_errmsg(), want);
}

START_TEST(test_wrapping_views_refused) {
    cs_tensor *t = cs_tensor_arange(NULL, CS_FLOAT32, 4);
    /* (2^62 + 1) * 4 wraps to 4 */
    ck_view_refused(t, 2, (int64_t[]){(INT64_C(1) << 62) + 1, 4},
                    "shape '[4611686018427387905, 4]' is invalid for input of size 4");
    /* 2^62 * 2^62 wraps to 0: with -1 that is not "0 elements, ambiguous" */
    ck_view_refused(t, 3, (int64_t[]){INT64_C(1) << 62, INT64_C(1) << 62, -1},
                    "shape '[4611686018427387904, 4611686018427387904, -1]' is invalid for input "
                    "of size 4");
    ck_view_refused(t, 2, (int64_t[]){INT64_MAX, INT64_MAX},
                    "shape '[9223372036854775807, 9223372036854775807]' is invalid for input of "
                    "size 4");
    cs_tensor_release(t);
    /* An empty tensor: numel 0 either way, but the strides would overflow. */
    cs_tensor *e = cs_tensor_new(NULL, CS_UINT8, 1, (int64_t[]){0});
    ck_view_refused(e, 3, (int64_t[]){0, INT64_C(1) << 62, INT64_C(1) << 62},
                    "shape '[0, 4611686018427387904, 4611686018427387904]' is invalid for input "
                    "of size 0");
    cs_tensor *ok = cs_tensor_view(e, 2, (int64_t[]){0, INT64_C(1) << 62});
    ck_assert_ptr_nonnull(ok);
    ck_in_bounds(ok);
    cs_tensor_release(ok);
    cs_tensor_release(e);
    errno = 0;
    ck_assert_ptr_null(cs_tensor_new(NULL, CS_UINT8, 3, (int64_t[]){0, INT64_C(1) << 62, 4}));
    ck_assert_int_eq(errno, ENOMEM);
    ck_assert_str_eq(cs_tensor_errmsg(), "tensor of shape [0, 4611686018427387904, 4] is too large");
}
END_TEST

/* chunk of a dim near INT64_MAX: the ceiling division must not wrap. */
START_TEST(test_chunk_of_a_huge_empty_dim) {
    cs_tensor *e = cs_tensor_new(NULL, CS_UINT8, 2, (int64_t[]){0, INT64_MAX});
    ck_assert_ptr_nonnull(e);
    cs_tensor *out[4];
    int n = cs_tensor_chunk(e, 3, 1, out, 4);
    ck_assert_int_eq(n, 3);
    ck_assert_int_eq(out[0]->shape[1], INT64_MAX / 3 + 1);
    ck_assert_int_eq(out[0]->shape[1] + out[1]->shape[1] + out[2]->shape[1], INT64_MAX);
    for (int i = 0; i < n; i++) {
        ck_in_bounds(out[i]);
        cs_tensor_release(out[i]);
    }
    cs_tensor_release(e);
}
END_TEST

static Suite *props_suite(void) {
    Suite *s = suite_create("tensor properties");
    TCase *tc = tcase_create("bounds");
    tcase_add_test(tc, test_wrapping_views_refused);
    tcase_add_test(tc, test_chunk_of_a_huge_empty_dim);
    tcase_add_test(tc, test_factories_near_the_limits);
    tcase_add_test(tc, test_view_chains_stay_in_bounds);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    return run_suite(props_suite());
}
