/* tensor_cuda.cu -- the CUDA kernels of device tensors: fill, copy
 * with dtype conversion, element-wise binary ops with broadcasting,
 * reductions, matmul and comparison, for every dtype (tensor_kernels.h).
 *
 * Every element goes through tensor_elem.h, the same loads, stores and scalar
 * arithmetic the host tensors use, so a device result equals the host's bit
 * for bit except where floating-point sums are added in another order (and
 * in the last bit of a float64 pow). The build turns off fused multiply-add
 * (-fmad=false) so that matmul's products and sums round as the host's.
 * Kernels walk a logical index i in a grid-stride loop and turn it into each
 * operand's storage offset, so views (narrow, select, broadcast) need no
 * copy. Launches go to the legacy default stream of the calling thread's
 * current device, and each entry waits for its kernels before returning, so
 * a failure is reported by the call that caused it.
 */
#include <cuda_runtime.h>

#include "tensor_kernels.h"

extern "C" {
#include "device.h"
}

namespace {

const int THREADS = 256;
const int MAX_BLOCKS = 4096;

int blocks_for(int64_t n) {
    int64_t b = (n + THREADS - 1) / THREADS;
    return b < 1 ? 1 : b > MAX_BLOCKS ? MAX_BLOCKS : (int)b;
}

/* Storage offset of the i-th element (row-major) of v seen with shape sh. */
__device__ int64_t offset_of(const cs_kshape &sh, const cs_kview &v, int64_t i) {
    int64_t off = v.offset;
    for (int d = sh.ndim - 1; d >= 0; d--) {
        int64_t s = sh.shape[d];
        off += (i % s) * v.stride[d];
        i /= s;
    }
    return off;
}

#define GRID_LOOP(i, n) \
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < (n); \
         i += (int64_t)blockDim.x * gridDim.x)

__global__ void k_fill(cs_kshape sh, cs_kview out, double v) {
    GRID_LOOP(i, sh.numel) cs_elem_st(out.data, out.dtype, offset_of(sh, out, i), v);
}

__global__ void k_copy(cs_kshape dsh, cs_kview dst, cs_kshape ssh, cs_kview src, bool exact) {
    GRID_LOOP(i, dsh.numel) {
        int64_t od = offset_of(dsh, dst, i), os = offset_of(ssh, src, i);
        if (exact)
            cs_elem_sti(dst.data, dst.dtype, od, cs_elem_ldi(src.data, src.dtype, os));
        else
            cs_elem_st(dst.data, dst.dtype, od, cs_elem_ld(src.data, src.dtype, os));
    }
}

__global__ void k_binop(cs_binop op, bool fp, cs_kshape sh, cs_kview out, cs_kview a, bool has_b,
                        cs_kview b, double s, bool swap) {
    int64_t si = cs_d2i(s);
    GRID_LOOP(i, sh.numel) {
        int64_t oo = offset_of(sh, out, i), oa = offset_of(sh, a, i);
        int64_t ob = has_b ? offset_of(sh, b, i) : 0;
        if (fp) {
            double x = cs_elem_ld(a.data, a.dtype, oa);
            double y = has_b ? cs_elem_ld(b.data, b.dtype, ob) : s;
            cs_elem_st(out.data, out.dtype, oo, swap ? cs_apply_d(op, y, x) : cs_apply_d(op, x, y));
        } else {
            int64_t x = cs_elem_ldi(a.data, a.dtype, oa);
            int64_t y = has_b ? cs_elem_ldi(b.data, b.dtype, ob) : si;
            cs_elem_sti(out.data, out.dtype, oo, swap ? cs_apply_i(op, y, x) : cs_apply_i(op, x, y));
        }
    }
}

/* A partial reduction: a double (float sums, max, min) or a wrapping
 * integer sum; has is false while no element has been seen. */
struct acc {
    double d;
    unsigned long long u;
    int has;
};

__device__ acc combine(cs_kred kind, acc x, acc y) {
    if (!x.has) return y;
    if (!y.has) return x;
    acc r = x;
    if (kind == CS_KRED_SUM) {
        r.d = x.d + y.d;
        r.u = x.u + y.u;
    } else {
        r.d = cs_apply_d(kind == CS_KRED_MAX ? CS_MAXIMUM : CS_MINIMUM, x.d, y.d);
    }
    return r;
}

/* Block-wide tree reduction of each thread's acc into part[blockIdx.x]. */
__device__ void block_reduce(cs_kred kind, acc mine, acc *part) {
    __shared__ acc sh[THREADS];
    sh[threadIdx.x] = mine;
    __syncthreads();
    for (int w = THREADS / 2; w > 0; w /= 2) {
        if (threadIdx.x < w) sh[threadIdx.x] = combine(kind, sh[threadIdx.x], sh[threadIdx.x + w]);
        __syncthreads();
    }
    if (threadIdx.x == 0) part[blockIdx.x] = sh[0];
}

__global__ void k_reduce(cs_kred kind, cs_kshape sh, cs_kview a, acc *part) {
    bool fp = cs_elem_is_float(a.dtype);
    acc mine = {0, 0, 0};
    GRID_LOOP(i, sh.numel) {
        int64_t o = offset_of(sh, a, i);
        acc x = {0, 0, 1};
        if (kind == CS_KRED_SUM && !fp)
            x.u = (unsigned long long)cs_elem_ldi(a.data, a.dtype, o);
        else
            x.d = cs_elem_ld(a.data, a.dtype, o);
        mine = combine(kind, mine, x);
    }
    block_reduce(kind, mine, part);
}

/* The second pass: one block folds the n partials into part[0]. */
__global__ void k_reduce_parts(cs_kred kind, acc *part, int n) {
    acc mine = {0, 0, 0};
    for (int i = threadIdx.x; i < n; i += blockDim.x) mine = combine(kind, mine, part[i]);
    __syncthreads(); /* every read of part precedes the write of part[0] */
    block_reduce(kind, mine, part);
}

/* The host's loop order for each output element, so results match exactly. */
__global__ void k_matmul(cs_kview out, cs_kview a, cs_kview b, int64_t n, int64_t k, int64_t m,
                         bool fp) {
    GRID_LOOP(idx, n * m) {
        int64_t i = idx / m, j = idx % m;
        int64_t pa = a.offset + i * a.stride[0], pb = b.offset + j * b.stride[1];
        double accd = 0;
        unsigned long long acci = 0;
        for (int64_t p = 0; p < k; p++, pa += a.stride[1], pb += b.stride[0]) {
            if (fp)
                accd += cs_elem_ld(a.data, a.dtype, pa) * cs_elem_ld(b.data, b.dtype, pb);
            else
                acci += (unsigned long long)cs_elem_ldi(a.data, a.dtype, pa) *
                        (unsigned long long)cs_elem_ldi(b.data, b.dtype, pb);
        }
        if (fp)
            cs_elem_st(out.data, out.dtype, out.offset + idx, accd);
        else
            cs_elem_sti(out.data, out.dtype, out.offset + idx, cs_u2i64(acci));
    }
}

__global__ void k_compare(cs_kshape sh, cs_kview a, cs_kview b, double rtol, double atol, bool exact,
                          unsigned *bad) {
    GRID_LOOP(i, sh.numel) {
        if (!cs_elem_pair_ok(a.data, a.dtype, offset_of(sh, a, i), b.data, b.dtype,
                             offset_of(sh, b, i), rtol, atol, exact))
            atomicOr(bad, 1u);
    }
}

/* After a launch: its own error, then the kernel's (waiting for it). */
int finish(const char *what) {
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) e = cudaStreamSynchronize(0);
    if (e == cudaSuccess) return 0;
    cs_device_fail("CUDA error: %s kernel: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
    cudaGetLastError();
    return -1;
}

int cuda_fail(cudaError_t e, const char *what) {
    cs_device_fail("CUDA error: %s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
    cudaGetLastError();
    return -1;
}

} // namespace

extern "C" int cs_kernel_fill(cs_kshape sh, cs_kview out, double v) {
    if (sh.numel == 0) return 0;
    k_fill<<<blocks_for(sh.numel), THREADS>>>(sh, out, v);
    return finish("fill");
}

extern "C" int cs_kernel_copy(cs_kshape dsh, cs_kview dst, cs_kshape ssh, cs_kview src) {
    if (dsh.numel == 0) return 0;
    bool exact = !cs_elem_is_float(dst.dtype) && !cs_elem_is_float(src.dtype);
    k_copy<<<blocks_for(dsh.numel), THREADS>>>(dsh, dst, ssh, src, exact);
    return finish("copy");
}

extern "C" int cs_kernel_binop(cs_binop op, bool fp, cs_kshape sh, cs_kview out, cs_kview a,
                               bool has_b, cs_kview b, double s, bool swap) {
    if (sh.numel == 0) return 0;
    k_binop<<<blocks_for(sh.numel), THREADS>>>(op, fp, sh, out, a, has_b, b, s, swap);
    return finish("element-wise");
}

extern "C" int cs_kernel_reduce(cs_kred kind, cs_kshape sh, cs_kview a, double *result) {
    int nb = blocks_for(sh.numel);
    acc *part = NULL;
    cudaError_t e = cudaMalloc(&part, sizeof(acc) * (size_t)nb);
    if (e != cudaSuccess) return cuda_fail(e, "allocating a reduction's partial results");
    k_reduce<<<nb, THREADS>>>(kind, sh, a, part);
    int rc = finish("reduction");
    if (rc == 0 && nb > 1) {
        k_reduce_parts<<<1, THREADS>>>(kind, part, nb);
        rc = finish("reduction");
    }
    acc r;
    if (rc == 0 && (e = cudaMemcpy(&r, part, sizeof r, cudaMemcpyDeviceToHost)) != cudaSuccess)
        rc = cuda_fail(e, "copying a reduction's result");
    cudaFree(part);
    if (rc == 0)
        *result = kind == CS_KRED_SUM && !cs_elem_is_float(a.dtype) ? (double)cs_u2i64(r.u) : r.d;
    return rc;
}

extern "C" int cs_kernel_matmul(cs_kview out, cs_kview a, cs_kview b, int64_t n, int64_t k, int64_t m,
                                bool fp) {
    if (n * m == 0) return 0;
    k_matmul<<<blocks_for(n * m), THREADS>>>(out, a, b, n, k, m, fp);
    return finish("matmul");
}

extern "C" int cs_kernel_compare(cs_kshape sh, cs_kview a, cs_kview b, double rtol, double atol,
                                 bool exact, bool *all) {
    *all = true;
    if (sh.numel == 0) return 0;
    unsigned *bad = NULL, h = 0;
    cudaError_t e = cudaMalloc(&bad, sizeof *bad);
    if (e != cudaSuccess) return cuda_fail(e, "allocating a comparison's flag");
    int rc = 0;
    if ((e = cudaMemset(bad, 0, sizeof *bad)) != cudaSuccess) rc = cuda_fail(e, "cudaMemset");
    if (rc == 0) {
        k_compare<<<blocks_for(sh.numel), THREADS>>>(sh, a, b, rtol, atol, exact, bad);
        rc = finish("comparison");
    }
    if (rc == 0 && (e = cudaMemcpy(&h, bad, sizeof h, cudaMemcpyDeviceToHost)) != cudaSuccess)
        rc = cuda_fail(e, "copying a comparison's result");
    cudaFree(bad);
    if (rc == 0) *all = h == 0;
    return rc;
}
