/* device_none.c -- device.h in a build without CUDA (configure found no
 * toolkit, or --without-cuda): there are no devices, and every call that
 * would need one fails with the same message, so a script asking for a
 * device tensor gets a clear error instead of a missing feature.
 */
#include "device.h"

#define NO_CUDA "no CUDA device available: this build has no CUDA support " \
                "(configure did not find the CUDA toolkit)"

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
