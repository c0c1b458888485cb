/* tensor_internal.h -- what tensor.c and tensor_ops.c share: the error
 * setter, the element load/store helpers on a tensor (over tensor_elem.h), the
 * strided iterator, the view-field copy, and the device half of the
 * operations (tensor_device.c). Not part of any public
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

/* ---- element load/store at a storage offset (tensor_elem.h does the work) */

static inline double cs_ld(const cs_tensor *t, int64_t off) {
    return cs_elem_ld(t->st->data, t->dtype, off);
}

static inline int64_t cs_ldi(const cs_tensor *t, int64_t off) {
    return cs_elem_ldi(t->st->data, t->dtype, off);
}

static inline void cs_sti(cs_tensor *t, int64_t off, int64_t v) {
    cs_elem_sti(t->st->data, t->dtype, off, v);
}

static inline void cs_st(cs_tensor *t, int64_t off, double v) {
    cs_elem_st(t->st->data, t->dtype, off, v);
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

/* ---- the device half (tensor_device.c): what the host functions call when
 * an operand lives on a device. Each returns 0, or -1 with cs_tensor_errmsg()
 * set; the host function has checked shapes and dtypes already. */

#include "tensor_kernels.h"

/* -1 with torch's message when a and b (b may be NULL) are on two devices. */
int cs_dev_same(const cs_tensor *a, const cs_tensor *b);
/* One element at storage offset off, its bytes to or from elem. */
int cs_dev_load(const cs_tensor *t, int64_t off, unsigned char elem[8]);
int cs_dev_store(cs_tensor *t, int64_t off, const unsigned char elem[8]);
int cs_dev_fill(cs_tensor *t, double v);
/* dst[i] = src[i] where either lives on a device (the two may differ). */
int cs_dev_copy(cs_tensor *dst, const cs_tensor *src);
int cs_dev_binop(cs_binop op, bool fp, cs_tensor *out, const cs_tensor *a, const cs_tensor *b, double s,
                 bool swap);
int cs_dev_reduce(cs_kred kind, const cs_tensor *t, double *result);
int cs_dev_matmul(cs_tensor *out, const cs_tensor *a, int64_t ar, int64_t ac, const cs_tensor *b,
                  int64_t br, int64_t bc, int64_t n, int64_t k, int64_t m);
int cs_dev_compare(const cs_tensor *a, const cs_tensor *b, double rtol, double atol, bool exact,
                   bool *all);

#endif
