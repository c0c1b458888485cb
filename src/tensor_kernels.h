/* tensor_kernels.h -- the CUDA kernels' entry points (tensor_cuda.cu), as
 * tensor_device.c calls them. Plain C on both sides: an operand is a device
 * pointer with its dtype, offset and strides (cs_kview), walked over a
 * logical shape (cs_kshape) in row-major order; a stride of 0 repeats an
 * element (broadcasting). Each entry launches its kernels on the calling
 * thread's current device, waits for them, and returns 0, or -1 with the
 * message of cs_device_errmsg(). Without CUDA, device_none.c defines them
 * to fail with its message.
 */
#ifndef CS_TENSOR_KERNELS_H
#define CS_TENSOR_KERNELS_H

#include <stdbool.h>
#include <stdint.h>

#include "tensor_elem.h"

#define CS_KMAX_DIMS 4 /* tensor.h's CS_MAX_DIMS */

typedef struct cs_kshape {
    int ndim;
    int64_t shape[CS_KMAX_DIMS];
    int64_t numel;
} cs_kshape;

typedef struct cs_kview {
    void *data; /* the storage's start; elements at offset + sum(index * stride) */
    int dtype;  /* cs_dtype */
    int64_t offset;
    int64_t stride[CS_KMAX_DIMS];
} cs_kview;

/* Reductions: cs_kernel_reduce's kinds. */
typedef enum { CS_KRED_SUM, CS_KRED_MAX, CS_KRED_MIN } cs_kred;

#ifdef __cplusplus
extern "C" {
#endif

/* every element of out = v (converted as a host store would) */
int cs_kernel_fill(cs_kshape sh, cs_kview out, double v);
/* dst[i] = src[i], i-th elements in row-major order of each's own shape (the
 * numels agree); exact between integer dtypes, through double otherwise. */
int cs_kernel_copy(cs_kshape dsh, cs_kview dst, cs_kshape ssh, cs_kview src);
/* out = a op b over sh (a and b already expanded to it), or a op s (s op a
 * when swap) when has_b is false; fp: double arithmetic, else exact int64. */
int cs_kernel_binop(cs_binop op, bool fp, cs_kshape sh, cs_kview out, cs_kview a, bool has_b,
                    cs_kview b, double s, bool swap);
/* sum (float dtypes in double, integers in wrapping int64), max or min (NaN
 * propagates) of a nonempty operand into *result. */
int cs_kernel_reduce(cs_kred kind, cs_kshape sh, cs_kview a, double *result);
/* out (contiguous n x m, dtype out.dtype) = a (n x k) @ b (k x m), each given
 * by its two strides (a vector's missing one 0); fp: double accumulation. */
int cs_kernel_matmul(cs_kview out, cs_kview a, cs_kview b, int64_t n, int64_t k, int64_t m, bool fp);
/* *all = every pair of a and b (shape sh) passes cs_elem_pair_ok. */
int cs_kernel_compare(cs_kshape sh, cs_kview a, cs_kview b, double rtol, double atol, bool exact,
                      bool *all);

#ifdef __cplusplus
}
#endif

#endif
