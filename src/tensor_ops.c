/* tensor_ops.c -- arithmetic on tensors: elementwise binary and unary ops with
 * broadcasting and type promotion, whole-tensor reductions, matmul, and the
 * equal/allclose comparisons.
 *
 * Semantics follow torch where a student could notice the difference: type
 * promotion, integer wrap-around, true division, broadcasting, and the wording
 * of error messages. Operands are strided views, walked with cs_iter and read
 * and written through the helpers of tensor_internal.h.
 */
#include "tensor.h"
#include "tensor_internal.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* ---- type promotion */

/* Promotion in one line: the enum order is not the lattice, this is.
 * uint8 < int32 < int64 < float32 < float64 (an int meeting a float takes
 * the float, exactly as torch's promote_types does for these five). */
static int cs_dtype_rank(cs_dtype d) {
    static const int rank[CS_NDTYPES] = {[CS_UINT8] = 0, [CS_INT32] = 1, [CS_INT64] = 2,
                                         [CS_FLOAT32] = 3, [CS_FLOAT64] = 4};
    return rank[d];
}

static cs_dtype cs_dtype_promote(cs_dtype a, cs_dtype b) {
    return cs_dtype_rank(a) >= cs_dtype_rank(b) ? a : b;
}

/* ---- elementwise */

/* A scalar counts as a float when it is not integral: we only get a double,
 * so 2.0 behaves like torch's 2 and 2.5 like 2.5. One past int64's range
 * (1e300) was a float too: no Lua integer has that value, and as an integer
 * it would saturate and then wrap (int32 3 * 1e300 was -3). */
static bool cs_scalar_is_float(double s) {
    return !isfinite(s) || s != trunc(s) || !(s >= -0x1p63 && s < 0x1p63);
}

/* torch's result_type: tensors with dims outrank 0-d tensors, which outrank
 * scalars, except that a higher category (float over int) always wins; a
 * float scalar with an int tensor gives the default float, float32. */
static cs_dtype cs_result_dtype(const cs_tensor *a, const cs_tensor *b, double s) {
    if (!b) {
        bool promote = cs_scalar_is_float(s) && !cs_dtype_is_float(a->dtype);
        return promote ? CS_FLOAT32 : a->dtype;
    }
    if ((a->ndim == 0) == (b->ndim == 0)) return cs_dtype_promote(a->dtype, b->dtype);
    const cs_tensor *dimmed = a->ndim ? a : b, *zero = a->ndim ? b : a;
    if (cs_dtype_is_float(zero->dtype) && !cs_dtype_is_float(dimmed->dtype)) return zero->dtype;
    return dimmed->dtype;
}

/* Broadcast shapes right-aligned, as torch's infer_size does, naming the
 * offending output dimension on mismatch. */
static bool cs_broadcast(const cs_tensor *a, const cs_tensor *b, int *ndim, int64_t *shape) {
    int n = a->ndim > b->ndim ? a->ndim : b->ndim;
    for (int i = n - 1; i >= 0; i--) {
        int da = i - (n - a->ndim), db = i - (n - b->ndim);
        int64_t sa = da >= 0 ? a->shape[da] : 1, sb = db >= 0 ? b->shape[db] : 1;
        if (sa != sb && sa != 1 && sb != 1) {
            cs_tensor_fail(EINVAL, "The size of tensor a (%lld) must match the size of tensor b "
                           "(%lld) at non-singleton dimension %d", (long long)sa, (long long)sb, i);
            return false;
        }
        shape[i] = sa == 1 ? sb : sa;
    }
    *ndim = n;
    return true;
}

/* t seen with shape (broadcast of t's): stride 0 on the stretched dims. */
static cs_tensor cs_expand(const cs_tensor *t, int ndim, const int64_t *shape) {
    cs_tensor e = {0};
    cs_tensor_copy_view(&e, t);
    e.ndim = ndim;
    for (int i = ndim - 1; i >= 0; i--) {
        int d = i - (ndim - t->ndim);
        e.shape[i] = shape[i];
        e.stride[i] = d >= 0 && t->shape[d] == shape[i] ? t->stride[d] : 0;
    }
    return e;
}

/* cs_apply_d, cs_apply_i and cs_powi: tensor_elem.h (the kernels share them). */

/* out = a op b (or a op s, or s op a when swap), all of out's shape; a and b
 * already expanded. fp selects double arithmetic, else exact int64. */
static int cs_binop_run(cs_binop op, bool fp, cs_tensor *out, const cs_tensor *a,
                        const cs_tensor *b, double s, bool swap) {
    if (cs_tensor_on_device(out)) return cs_dev_binop(op, fp, out, a, b, s, swap);
    const cs_tensor *ops[3] = {out, a, b ? b : a};
    cs_iter it;
    cs_iter_init(&it, 3, ops);
    int64_t si = cs_d2i(s);
    for (int64_t i = 0, n = cs_tensor_numel(out); i < n; i++, cs_iter_next(&it)) {
        if (fp) {
            double x = cs_ld(a, it.off[1]), y = b ? cs_ld(b, it.off[2]) : s;
            cs_st(out, it.off[0], swap ? cs_apply_d(op, y, x) : cs_apply_d(op, x, y));
        } else {
            int64_t x = cs_ldi(a, it.off[1]), y = b ? cs_ldi(b, it.off[2]) : si;
            cs_sti(out, it.off[0], swap ? cs_apply_i(op, y, x) : cs_apply_i(op, x, y));
        }
    }
    return 0;
}

/* torch refuses int ** negative int scalar rather than returning 0. */
static bool cs_check_int_pow(cs_binop op, cs_dtype rt, const cs_tensor *b, double s, bool swap) {
    if (op != CS_POW || b || swap || cs_dtype_is_float(rt) || s >= 0) return true;
    cs_tensor_fail(EINVAL, "Integers to negative integer powers are not allowed.");
    return false;
}

cs_tensor *cs_tensor_binop(cs_budget *bud, cs_binop op, const cs_tensor *a, const cs_tensor *b,
                           double s, bool scalar_first) {
    int ndim = a->ndim;
    int64_t shape[CS_MAX_DIMS];
    memcpy(shape, a->shape, sizeof shape);
    if (cs_dev_same(a, b) < 0) return NULL;
    if (b && !cs_broadcast(a, b, &ndim, shape)) return NULL;
    cs_dtype rt = cs_result_dtype(a, b, s);
    if (op == CS_DIV && !cs_dtype_is_float(rt)) rt = CS_FLOAT32; /* true division */
    if (!cs_check_int_pow(op, rt, b, s, scalar_first)) return NULL;
    cs_tensor *out = cs_tensor_new_on(bud, cs_tensor_device(a), rt, ndim, shape);
    if (!out) return NULL;
    cs_tensor ea = cs_expand(a, ndim, shape), eb;
    if (b) eb = cs_expand(b, ndim, shape);
    if (cs_binop_run(op, cs_dtype_is_float(rt), out, &ea, b ? &eb : NULL, s,
                     b ? false : scalar_first) < 0) {
        cs_tensor_release(out);
        return NULL;
    }
    return out;
}

int cs_tensor_binop_(cs_binop op, cs_tensor *a, const cs_tensor *b, double s) {
    char x[96], y[96];
    int ndim = a->ndim;
    int64_t shape[CS_MAX_DIMS];
    memcpy(shape, a->shape, sizeof shape);
    if (cs_dev_same(a, b) < 0) return -1;
    if (b && !cs_broadcast(a, b, &ndim, shape)) return -1;
    if (ndim != a->ndim || memcmp(shape, a->shape, sizeof(int64_t) * (size_t)ndim) != 0) {
        cs_tensor_fail(EINVAL, "output with shape %s doesn't match the broadcast shape %s",
                       cs_tensor_shape_str(a->ndim, a->shape, x, sizeof x),
                       cs_tensor_shape_str(ndim, shape, y, sizeof y));
        return -1;
    }
    /* The result must be castable to a's dtype: never float into int. */
    cs_dtype rt = cs_result_dtype(a, b, s);
    if (op == CS_DIV && !cs_dtype_is_float(rt)) rt = CS_FLOAT32;
    if (cs_dtype_is_float(rt) && !cs_dtype_is_float(a->dtype)) {
        cs_tensor_fail(EINVAL, "result type %s can't be cast to the desired output type %s",
                       cs_dtype_cname(rt), cs_dtype_cname(a->dtype));
        return -1;
    }
    if (!cs_check_int_pow(op, rt, b, s, false)) return -1;
    cs_tensor eb;
    if (b) eb = cs_expand(b, ndim, shape);
    return cs_binop_run(op, cs_dtype_is_float(a->dtype), a, a, b ? &eb : NULL, s, false);
}

/* -x is x * -1 in every dtype, wrap-around and -0.0 included. */
cs_tensor *cs_tensor_neg(cs_budget *bud, const cs_tensor *a) {
    return cs_tensor_binop(bud, CS_MUL, a, NULL, -1, false);
}

/* maximum(x, 0): keeps NaN, as torch's relu does. */
cs_tensor *cs_tensor_relu(cs_budget *bud, const cs_tensor *a) {
    return cs_tensor_binop(bud, CS_MAXIMUM, a, NULL, 0, false);
}

int cs_tensor_relu_(cs_tensor *a) {
    return cs_tensor_binop_(CS_MAXIMUM, a, NULL, 0);
}

/* ---- reductions */

/* A device tensor's reduction: NaN, with the message set, if the device fails. */
static double cs_dev_reduce_or_nan(cs_kred kind, const cs_tensor *t) {
    double r;
    if (cs_tensor_numel(t) == 0) return kind == CS_KRED_SUM ? 0 : NAN;
    return cs_dev_reduce(kind, t, &r) < 0 ? NAN : r;
}

double cs_tensor_sum(const cs_tensor *t) {
    if (cs_tensor_on_device(t)) return cs_dev_reduce_or_nan(CS_KRED_SUM, t);
    cs_iter it;
    cs_iter_init(&it, 1, (const cs_tensor *const[]){t});
    int64_t n = cs_tensor_numel(t);
    if (cs_dtype_is_float(t->dtype)) {
        double acc = 0;
        for (int64_t i = 0; i < n; i++, cs_iter_next(&it)) acc += cs_ld(t, it.off[0]);
        return acc;
    }
    return (double)cs_tensor_sum_i(t);
}

/* Fold with maximum/minimum, so that a NaN anywhere propagates. */
static double cs_tensor_fold(const cs_tensor *t, cs_binop op) {
    cs_iter it;
    cs_iter_init(&it, 1, (const cs_tensor *const[]){t});
    int64_t n = cs_tensor_numel(t);
    double acc = n ? cs_ld(t, it.off[0]) : NAN;
    for (int64_t i = 1; i < n; i++) {
        cs_iter_next(&it);
        acc = cs_apply_d(op, acc, cs_ld(t, it.off[0]));
    }
    return acc;
}

double cs_tensor_max(const cs_tensor *t) {
    if (cs_tensor_on_device(t)) return cs_dev_reduce_or_nan(CS_KRED_MAX, t);
    return cs_tensor_fold(t, CS_MAXIMUM);
}

double cs_tensor_min(const cs_tensor *t) {
    if (cs_tensor_on_device(t)) return cs_dev_reduce_or_nan(CS_KRED_MIN, t);
    return cs_tensor_fold(t, CS_MINIMUM);
}

/* Integer folds in int64. A device tensor still reduces through its
 * kernel's double. */
static int64_t cs_tensor_fold_i(const cs_tensor *t, int how) {
    if (cs_tensor_on_device(t)) { /* NaN where the device failed (errno says so) */
        double d = how == 0 ? cs_tensor_sum(t) : how > 0 ? cs_tensor_max(t) : cs_tensor_min(t);
        return d >= -0x1p63 && d < 0x1p63 ? (int64_t)d : 0;
    }
    cs_iter it;
    cs_iter_init(&it, 1, (const cs_tensor *const[]){t});
    int64_t n = cs_tensor_numel(t);
    if (n == 0) return 0;
    uint64_t sum = 0; /* wraps like torch's int64 accumulator */
    int64_t best = cs_ldi(t, it.off[0]);
    for (int64_t i = 0; i < n; i++, cs_iter_next(&it)) {
        int64_t v = cs_ldi(t, it.off[0]);
        if (how == 0) sum += (uint64_t)v;
        else if (how > 0 ? v > best : v < best) best = v;
    }
    return how == 0 ? cs_u2i64(sum) : best;
}

int64_t cs_tensor_sum_i(const cs_tensor *t) { return cs_tensor_fold_i(t, 0); }
int64_t cs_tensor_max_i(const cs_tensor *t) { return cs_tensor_fold_i(t, 1); }
int64_t cs_tensor_min_i(const cs_tensor *t) { return cs_tensor_fold_i(t, -1); }

double cs_tensor_mean(const cs_tensor *t) {
    if (!cs_dtype_is_float(t->dtype)) { /* torch has no integer mean either */
        cs_tensor_fail(EINVAL, "mean(): could not infer output dtype. Input dtype must be either "
                       "a floating point or complex dtype. Got: %s", cs_dtype_cname(t->dtype));
        return NAN;
    }
    int64_t n = cs_tensor_numel(t);
    return n ? cs_tensor_sum(t) / (double)n : NAN;
}

/* ---- matmul */

/* Shape errors worded as the torch kernel each case dispatches to. */
static bool cs_matmul_check(const cs_tensor *a, const cs_tensor *b) {
    /* torch promotes in elementwise ops, never in a matrix product */
    if (a->dtype != b->dtype) {
        cs_tensor_fail(EINVAL, "expected m1 and m2 to have the same dtype, but got: %s != %s "
                       "(convert one with :to(dtype))", cs_dtype_name(a->dtype), cs_dtype_name(b->dtype));
        return false;
    }
    long long k1 = a->shape[a->ndim - 1], k2 = b->shape[0];
    if (k1 == k2) return true;
    if (a->ndim == 1 && b->ndim == 1)
        cs_tensor_fail(EINVAL, "inconsistent tensor size, expected tensor [%lld] and src [%lld] to have "
                       "the same number of elements, but got %lld and %lld elements respectively",
                       k1, k2, k1, k2);
    else if (b->ndim == 1)
        cs_tensor_fail(EINVAL, "size mismatch, got input (%lld), mat (%lldx%lld), vec (%lld)",
                       (long long)a->shape[0], (long long)a->shape[0], k1, k2);
    else
        cs_tensor_fail(EINVAL, "mat1 and mat2 shapes cannot be multiplied (%lldx%lld and %lldx%lld)",
                       a->ndim == 2 ? (long long)a->shape[0] : 1LL, k1, k2, (long long)b->shape[1]);
    return false;
}

/* Asks the caller's stop() once per CS_MM_LOOK multiply-adds done. */
#define CS_MM_LOOK ((uint64_t)1 << 20)
typedef struct {
    const cs_tensor_stop *stop;
    uint64_t work; /* since the last look */
} cs_mm_clock;

static bool cs_mm_stopped(cs_mm_clock *c, uint64_t work) {
    if (!c->stop || (c->work += work) < CS_MM_LOOK) return false;
    c->work = 0;
    return c->stop->fn(c->stop->ud);
}

/* Row i of a float product, columns [j0, j0 + len), as the sum over p of
 * a[i,p] times row p of b, in double and in the order of p: the plain loop's
 * sums to the bit, but reading b and adding into acc along a line, which the
 * compiler vectorises. For a float32 or float64 b whose rows are contiguous. */
#define CS_MM_COLS 1024
static void cs_mm_row_float(cs_tensor *out, const cs_tensor *a, int64_t pa, int64_t ac,
                            const cs_tensor *b, int64_t pb, int64_t br, int64_t k, int64_t o,
                            int64_t len) {
    double acc[CS_MM_COLS] = {0};
    for (int64_t p = 0; p < k; p++, pa += ac, pb += br) {
        double x = cs_ld(a, pa);
        if (b->dtype == CS_FLOAT32) {
            const float *restrict row = (const float *)b->st->data + pb;
            for (int64_t j = 0; j < len; j++) acc[j] += x * row[j];
        } else {
            const double *restrict row = (const double *)b->st->data + pb;
            for (int64_t j = 0; j < len; j++) acc[j] += x * row[j];
        }
    }
    for (int64_t j = 0; j < len; j++) cs_st(out, o + j, acc[j]);
}

cs_tensor *cs_tensor_matmul(cs_budget *bud, const cs_tensor *a, const cs_tensor *b,
                            const cs_tensor_stop *stop) {
    if (a->ndim < 1 || b->ndim < 1 || a->ndim > 2 || b->ndim > 2) {
        cs_tensor_fail(EINVAL, "matmul supports 1-D and 2-D operands, got %dD and %dD", a->ndim, b->ndim);
        return NULL;
    }
    if (cs_dev_same(a, b) < 0 || !cs_matmul_check(a, b)) return NULL;
    /* A vector is a 1xk row on the left, a kx1 column on the right; its
     * missing dim has stride 0 and disappears from the result. */
    int64_t n = a->ndim == 2 ? a->shape[0] : 1, k = b->shape[0];
    int64_t m = b->ndim == 2 ? b->shape[1] : 1;
    int64_t ar = a->ndim == 2 ? a->stride[0] : 0, ac = a->stride[a->ndim - 1];
    int64_t br = b->stride[0], bc = b->ndim == 2 ? b->stride[1] : 0;
    int64_t shape[2], *sp = shape;
    if (a->ndim == 2) *sp++ = n;
    if (b->ndim == 2) *sp++ = m;
    cs_dtype rt = a->dtype;
    cs_tensor *out = cs_tensor_new_on(bud, cs_tensor_device(a), rt, (int)(sp - shape), shape);
    if (!out) return NULL;
    if (cs_tensor_on_device(out)) {
        if (cs_dev_matmul(out, a, ar, ac, b, br, bc, n, k, m) == 0) return out;
        cs_tensor_release(out);
        return NULL;
    }
    /* floats along b's rows where they are contiguous; the rest (integers,
     * b's columns strided) an element at a time */
    bool fp = cs_dtype_is_float(rt), along = fp && (bc == 1 || m == 1);
    cs_mm_clock clock = {stop, 0};
    for (int64_t i = 0; i < n; i++) {
        int64_t pa = a->offset + i * ar;
        for (int64_t j = 0; j < m; j += along ? CS_MM_COLS : 1) {
            int64_t len = along ? (m - j < CS_MM_COLS ? m - j : CS_MM_COLS) : 1;
            if (along) {
                cs_mm_row_float(out, a, pa, ac, b, b->offset + j * bc, br, k, i * m + j, len);
            } else {
                int64_t qa = pa, pb = b->offset + j * bc;
                double acc = 0;
                uint64_t iacc = 0;
                for (int64_t p = 0; p < k; p++, qa += ac, pb += br) {
                    if (fp)
                        acc += cs_ld(a, qa) * cs_ld(b, pb);
                    else
                        iacc += (uint64_t)cs_ldi(a, qa) * (uint64_t)cs_ldi(b, pb);
                }
                if (fp)
                    cs_st(out, i * m + j, acc);
                else
                    cs_sti(out, i * m + j, cs_u2i64(iacc));
            }
            if (cs_mm_stopped(&clock, (uint64_t)(k * len) + 1)) {
                cs_tensor_release(out);
                cs_tensor_fail(ECANCELED, "matmul: stopped");
                return NULL;
            }
        }
    }
    return out;
}

/* ---- comparison */

/* Same shape and every pair close (tensor_elem.h's cs_elem_pair_ok). */
static bool cs_tensor_all_pairs(const cs_tensor *a, const cs_tensor *b, double rtol, double atol,
                                bool exact) {
    if (!cs_tensor_same_shape(a, b)) return false;
    if (cs_tensor_on_device(a) || cs_tensor_on_device(b)) {
        bool all = false;
        return cs_dev_same(a, b) == 0 &&
               cs_dev_compare(a, b, rtol, atol, exact, &all) == 0 && all;
    }
    const cs_tensor *ops[2] = {a, b};
    cs_iter it;
    cs_iter_init(&it, 2, ops);
    for (int64_t i = 0, n = cs_tensor_numel(a); i < n; i++, cs_iter_next(&it))
        if (!cs_elem_pair_ok(a->st->data, a->dtype, it.off[0], b->st->data, b->dtype, it.off[1], rtol,
                             atol, exact))
            return false;
    return true;
}

bool cs_tensor_equal(const cs_tensor *a, const cs_tensor *b) {
    return cs_tensor_all_pairs(a, b, 0, 0, true);
}

bool cs_tensor_allclose(const cs_tensor *a, const cs_tensor *b, double rtol, double atol) {
    return cs_tensor_all_pairs(a, b, rtol, atol, false);
}
