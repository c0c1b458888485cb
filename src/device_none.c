/* device_none.c -- device.h in a build without CUDA (configure found no
 * toolkit, or --without-cuda): there are no devices, and every call that
 * would need one fails with the same message, so a script asking for a
 * device tensor gets a clear error instead of a missing feature.
 */
#include "device.h"
#include "tensor_kernels.h"

#define NO_CUDA "no CUDA device available: this build has no CUDA support " \
                "(see ./configure --with-cuda)"

static int none(void) {
    cs_device_fail(NO_CUDA);
    return -1;
}

bool cs_device_built(void) {
    return false;
}

int cs_device_count(void) {
    none();
    return 0;
}

int cs_device_set(int dev) {
    (void)dev;
    return none();
}

int cs_device_current(void) {
    return none();
}

void *cs_device_alloc(int dev, size_t n) {
    (void)dev, (void)n;
    none();
    return NULL;
}

void cs_device_free(int dev, void *p) {
    (void)dev, (void)p; /* nothing can have been allocated */
}

int cs_device_memset(void *p, int byte, size_t n) {
    (void)p, (void)byte, (void)n;
    return none();
}

int cs_device_from_host(void *dst, const void *src, size_t n) {
    (void)dst, (void)src, (void)n;
    return none();
}

int cs_device_to_host(void *dst, const void *src, size_t n) {
    (void)dst, (void)src, (void)n;
    return none();
}

int cs_device_copy(void *dst, const void *src, size_t n) {
    (void)dst, (void)src, (void)n;
    return none();
}

int cs_device_sync(int dev) {
    (void)dev;
    return none();
}

int cs_device_mem_used(int dev, size_t *used) {
    (void)dev, (void)used;
    return none();
}

/* ---- tensor_kernels.h: unreachable without a device tensor, and failing
 * the same way if reached. */

int cs_kernel_fill(cs_kshape sh, cs_kview out, double v) {
    (void)sh, (void)out, (void)v;
    return none();
}

int cs_kernel_copy(cs_kshape dsh, cs_kview dst, cs_kshape ssh, cs_kview src) {
    (void)dsh, (void)dst, (void)ssh, (void)src;
    return none();
}

int cs_kernel_binop(cs_binop op, bool fp, cs_kshape sh, cs_kview out, cs_kview a, bool has_b,
                    cs_kview b, double s, bool swap) {
    (void)op, (void)fp, (void)sh, (void)out, (void)a, (void)has_b, (void)b, (void)s, (void)swap;
    return none();
}

int cs_kernel_reduce(cs_kred kind, cs_kshape sh, cs_kview a, double *result) {
    (void)kind, (void)sh, (void)a, (void)result;
    return none();
}

int cs_kernel_matmul(cs_kview out, cs_kview a, cs_kview b, int64_t n, int64_t k, int64_t m, bool fp) {
    (void)out, (void)a, (void)b, (void)n, (void)k, (void)m, (void)fp;
    return none();
}

int cs_kernel_compare(cs_kshape sh, cs_kview a, cs_kview b, double rtol, double atol, bool exact,
                      bool *all) {
    (void)sh, (void)a, (void)b, (void)rtol, (void)atol, (void)exact, (void)all;
    return none();
}
