/* tensor_internal.h -- what tensor.c and tensor_ops.c share: the error
 * setter, UB-free integer conversions, the dtype-dispatching element load/store
 * helpers, the strided iterator and the view-field copy. Not part of any public
 * interface.
 *
 * The small hot helpers are static inline so that every kernel still sees them
 * as local functions; the rest are defined in tensor.c.
 */
#ifndef CS_TENSOR_INTERNAL_H
#define CS_TENSOR_INTERNAL_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "tensor.h"

/* ---- errors (defined in tensor.c) */

/* Record a message for cs_tensor_errmsg() and set errno to err. */
void cs_tensor_fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* torch's C++ ScalarType name ("Float", "Long", ...), used in cast errors. */
const char *cs_dtype_cname(cs_dtype d);

/* ---- conversions without undefined behaviour */

/* double -> int64: NaN gives 0, out of range saturates, the rest truncates
 * toward zero as a C cast would. (Casting an out-of-range double is UB.) */
static inline int64_t cs_d2i(double v) {
    if (isnan(v)) return 0;
    if (v >= 9223372036854775808.0) return INT64_MAX;
    if (v <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)v;
}

/* Two's-complement wrap of an unsigned value, spelled out so it does not
 * rely on implementation-defined conversions. */
static inline int64_t cs_u2i64(uint64_t u) {
    return u <= INT64_MAX ? (int64_t)u : -(int64_t)(UINT64_MAX - u) - 1;
}

static inline int32_t cs_u2i32(uint32_t u) {
    return u <= INT32_MAX ? (int32_t)u : -(int32_t)(UINT32_MAX - u) - 1;
}

/* ---- element load/store at a storage offset: the only dtype switches */

static inline double cs_ld(const cs_tensor *t, int64_t off) {
    const void *p = t->st->data;
    switch (t->dtype) {
    case CS_FLOAT32: return ((const float *)p)[off];
    case CS_FLOAT64: return ((const double *)p)[off];
    case CS_INT32: return ((const int32_t *)p)[off];
    case CS_INT64: return (double)((const int64_t *)p)[off];
    case CS_UINT8: return ((const uint8_t *)p)[off];
    default: return NAN;
    }
}

static inline int64_t cs_ldi(const cs_tensor *t, int64_t off) {
    const void *p = t->st->data;
    switch (t->dtype) {
    case CS_INT32: return ((const int32_t *)p)[off];
    case CS_INT64: return ((const int64_t *)p)[off];
    case CS_UINT8: return ((const uint8_t *)p)[off];
    default: return cs_d2i(cs_ld(t, off));
    }
}

/* Integers wrap modulo 2^bits, as C's unsigned arithmetic and torch do. */
static inline void cs_sti(cs_tensor *t, int64_t off, int64_t v) {
    void *p = t->st->data;
    switch (t->dtype) {
    case CS_FLOAT32: ((float *)p)[off] = (float)v; break;
    case CS_FLOAT64: ((double *)p)[off] = (double)v; break;
    case CS_INT32: ((int32_t *)p)[off] = cs_u2i32((uint32_t)(uint64_t)v); break;
    case CS_INT64: ((int64_t *)p)[off] = v; break;
    case CS_UINT8: ((uint8_t *)p)[off] = (uint8_t)(uint64_t)v; break;
    default: break;
    }
}

static inline void cs_st(cs_tensor *t, int64_t off, double v) {
    void *p = t->st->data;
    switch (t->dtype) {
    case CS_FLOAT32: ((float *)p)[off] = (float)v; break;
    case CS_FLOAT64: ((double *)p)[off] = v; break;
    default: cs_sti(t, off, cs_d2i(v)); break;
    }
}

/* ---- iteration over strided views: up to three operands of one shape */

typedef struct {
    int ndim, n;
    int64_t shape[CS_MAX_DIMS], idx[CS_MAX_DIMS];
    int64_t stride[3][CS_MAX_DIMS];
    int64_t off[3];
} cs_iter;

static inline void cs_iter_init(cs_iter *it, int n, const cs_tensor *const *ts) {
    memset(it, 0, sizeof *it);
    it->ndim = ts[0]->ndim;
    it->n = n;
    memcpy(it->shape, ts[0]->shape, sizeof it->shape);
    for (int k = 0; k < n; k++) {
        memcpy(it->stride[k], ts[k]->stride, sizeof it->stride[k]);
        it->off[k] = ts[k]->offset;
    }
}

/* Odometer step: bump the last index, carry leftwards. */
static inline void cs_iter_next(cs_iter *it) {
    for (int d = it->ndim - 1; d >= 0; d--) {
        if (++it->idx[d] < it->shape[d]) {
            for (int k = 0; k < it->n; k++) it->off[k] += it->stride[k][d];
            return;
        }
        it->idx[d] = 0;
        for (int k = 0; k < it->n; k++) it->off[k] -= it->stride[k][d] * (it->shape[d] - 1);
    }
}

/* ---- views */

/* Copy the view fields only: a struct assignment would also read the atomic
 * refcount non-atomically while another thread may be changing it. */
static inline void cs_tensor_copy_view(cs_tensor *dst, const cs_tensor *src) {
    dst->st = src->st;
    dst->dtype = src->dtype;
    dst->ndim = src->ndim;
    memcpy(dst->shape, src->shape, sizeof dst->shape);
    memcpy(dst->stride, src->stride, sizeof dst->stride);
    dst->offset = src->offset;
}

#endif
