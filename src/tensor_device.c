/* tensor_device.c -- the device half of the tensor operations: what
 * tensor.c, tensor_ops.c and tensor_format.c call when an operand lives on a
 * CUDA device. Checks stay in the host functions (shapes, dtypes, promotion,
 * the wording of errors); this file puts the operands on one device, turns
 * tensors into the kernels' views (tensor_kernels.h) and moves bytes between
 * host and device through device.h. Without CUDA the kernels are
 * device_none.c's, which fail, but no device tensor can exist there anyway.
 *
 * Each call runs its kernels on the operands' device, switching the calling
 * thread to it and back, so that a rank whose current device is another one
 * still computes where its tensors are.
 */
#include "tensor.h"
#include "tensor_internal.h"
#include "tensor_kernels.h"

#include <errno.h>
#include <string.h>

_Static_assert(CS_KMAX_DIMS == CS_MAX_DIMS, "the kernels' views hold every dimension");

static cs_kview kview(const cs_tensor *t) {
    cs_kview v = {.data = t->st->data, .dtype = (int)t->dtype, .offset = t->offset};
    memcpy(v.stride, t->stride, sizeof v.stride);
    return v;
}

static cs_kshape kshape(const cs_tensor *t) {
    cs_kshape s = {.ndim = t->ndim, .numel = cs_tensor_numel(t)};
    memcpy(s.shape, t->shape, sizeof s.shape);
    return s;
}

/* The device's message as the tensor module's (cs_tensor_errmsg). */
static int dev_fail(void) {
    cs_tensor_fail(ENODEV, "%s", cs_device_errmsg());
    return -1;
}

/* Make dev current for this thread; *prev is given back by leave(). */
static int enter(int dev, int *prev) {
    if ((*prev = cs_device_current()) < 0) return dev_fail();
    if (*prev != dev && cs_device_set(dev) < 0) return dev_fail();
    return 0;
}

static int leave(int dev, int prev, int rc) {
    if (prev != dev) cs_device_set(prev);
    return rc < 0 ? dev_fail() : 0;
}

int cs_dev_same(const cs_tensor *a, const cs_tensor *b) {
    if (!b || cs_tensor_device(a) == cs_tensor_device(b)) return 0;
    char x[16], y[16];
    cs_tensor_fail(EINVAL, "Expected all tensors to be on the same device, but found at least two "
                   "devices, %s and %s!", cs_device_name(cs_tensor_device(a), x, sizeof x),
                   cs_device_name(cs_tensor_device(b), y, sizeof y));
    return -1;
}

/* ---- single elements: one element's bytes each way */

int cs_dev_load(const cs_tensor *t, int64_t off, unsigned char elem[8]) {
    size_t es = cs_dtype_size(t->dtype);
    return cs_device_to_host(elem, (const char *)t->st->data + (size_t)off * es, es) < 0 ? dev_fail() : 0;
}

int cs_dev_store(cs_tensor *t, int64_t off, const unsigned char elem[8]) {
    size_t es = cs_dtype_size(t->dtype);
    return cs_device_from_host((char *)t->st->data + (size_t)off * es, elem, es) < 0 ? dev_fail() : 0;
}

/* ---- kernels */

int cs_dev_fill(cs_tensor *t, double v) {
    int dev = cs_tensor_device(t), prev;
    if (enter(dev, &prev) < 0) return -1;
    return leave(dev, prev, cs_kernel_fill(kshape(t), kview(t), v));
}

/* Both on one device: a kernel; dst and src sharing storage may overlap, so
 * that case goes through a temporary, as on the host. */
static int copy_same_device(cs_tensor *dst, const cs_tensor *src) {
    int dev = cs_tensor_device(dst), prev;
    cs_tensor *tmp = NULL;
    if (dst->st == src->st) {
        if (!(tmp = cs_tensor_new_on(NULL, dev, src->dtype, src->ndim, src->shape))) return -1;
        if (copy_same_device(tmp, src) < 0) {
            cs_tensor_release(tmp);
            return -1;
        }
        src = tmp;
    }
    int rc = enter(dev, &prev);
    if (rc == 0) rc = leave(dev, prev, cs_kernel_copy(kshape(dst), kview(dst), kshape(src), kview(src)));
    cs_tensor_release(tmp);
    return rc;
}

/* dst[i] = src[i] wherever each lives (numel checked by the caller). Across
 * places, src is first made contiguous where it is, its bytes are moved to a
 * tensor of its dtype where dst is, and the conversion happens there. */
int cs_dev_copy(cs_tensor *dst, const cs_tensor *src) {
    if (cs_tensor_device(dst) == cs_tensor_device(src)) return copy_same_device(dst, src);
    cs_tensor *c = cs_tensor_contiguous(NULL, (cs_tensor *)src);
    cs_tensor *m = c ? cs_tensor_new_on(NULL, cs_tensor_device(dst), src->dtype, src->ndim, src->shape)
                     : NULL;
    int rc = m ? cs_tensor_copy_bytes(m, c) : -1;
    if (rc == 0) rc = cs_tensor_copy_(dst, m);
    cs_tensor_release(m);
    cs_tensor_release(c);
    return rc;
}

int cs_dev_binop(cs_binop op, bool fp, cs_tensor *out, const cs_tensor *a, const cs_tensor *b, double s,
                 bool swap) {
    int dev = cs_tensor_device(out), prev;
    if (enter(dev, &prev) < 0) return -1;
    cs_kview vb = b ? kview(b) : kview(a);
    return leave(dev, prev,
                 cs_kernel_binop(op, fp, kshape(out), kview(out), kview(a), b != NULL, vb, s, swap));
}

int cs_dev_reduce(cs_kred kind, const cs_tensor *t, double *result) {
    int dev = cs_tensor_device(t), prev;
    if (enter(dev, &prev) < 0) return -1;
    return leave(dev, prev, cs_kernel_reduce(kind, kshape(t), kview(t), result));
}

int cs_dev_matmul(cs_tensor *out, const cs_tensor *a, int64_t ar, int64_t ac, const cs_tensor *b,
                  int64_t br, int64_t bc, int64_t n, int64_t k, int64_t m) {
    int dev = cs_tensor_device(out), prev;
    if (enter(dev, &prev) < 0) return -1;
    cs_kview va = kview(a), vb = kview(b);
    va.stride[0] = ar, va.stride[1] = ac;
    vb.stride[0] = br, vb.stride[1] = bc;
    return leave(dev, prev,
                 cs_kernel_matmul(kview(out), va, vb, n, k, m, cs_dtype_is_float(out->dtype)));
}

int cs_dev_compare(const cs_tensor *a, const cs_tensor *b, double rtol, double atol, bool exact,
                   bool *all) {
    int dev = cs_tensor_device(a), prev;
    if (enter(dev, &prev) < 0) return -1;
    return leave(dev, prev, cs_kernel_compare(kshape(a), kview(a), kview(b), rtol, atol, exact, all));
}
