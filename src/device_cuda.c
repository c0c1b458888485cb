/* device_cuda.c -- device.h over the CUDA runtime (built when configure finds
 * the toolkit). The only file besides the kernels (tensor_cuda.cu) that calls
 * the runtime for tensors.
 *
 * The runtime is asked for its devices once per process. When it has none --
 * no driver, no GPU, a driver too old -- every call fails with "no CUDA device
 * available: " and the runtime's reason, and nothing else is attempted, so a
 * machine without a GPU gives the same clear error on every path. Calls that
 * need a particular device switch to it and back, leaving the calling thread's
 * current device as they found it.
 */
#include "device.h"

#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static int ndevices;
static char no_device_why[200];

static void probe(void) {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        snprintf(no_device_why, sizeof no_device_why, "%s", cudaGetErrorString(e));
        cudaGetLastError(); /* not sticky: let later calls start clean */
        n = 0;
    } else if (n == 0) {
        snprintf(no_device_why, sizeof no_device_why, "the CUDA runtime reports no device");
    }
    ndevices = n;
}

bool cs_device_built(void) {
    return true;
}

int cs_device_count(void) {
    pthread_once(&probe_once, probe);
    if (ndevices == 0) cs_device_fail("no CUDA device available: %s", no_device_why);
    return ndevices;
}

/* The device exists, or a message saying why not. */
static int check_dev(int dev) {
    int n = cs_device_count();
    if (n == 0) return -1;
    if (dev < 0 || dev >= n) {
        cs_device_fail("no CUDA device available: cuda:%d requested, this machine has %d "
                       "device%s (cuda:0%s)", dev, n, n == 1 ? "" : "s", n == 1 ? "" : " and up");
        return -1;
    }
    return 0;
}

static int cuda_fail(cudaError_t e, const char *what) {
    cs_device_fail("CUDA error: %s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
    cudaGetLastError();
    return -1;
}

int cs_device_set(int dev) {
    if (check_dev(dev) < 0) return -1;
    cudaError_t e = cudaSetDevice(dev);
    return e == cudaSuccess ? 0 : cuda_fail(e, "cudaSetDevice");
}

int cs_device_current(void) {
    if (cs_device_count() == 0) return -1;
    int dev;
    cudaError_t e = cudaGetDevice(&dev);
    return e == cudaSuccess ? dev : cuda_fail(e, "cudaGetDevice");
}

/* Switch the thread to dev for one call; *prev is what to switch back to. */
static int enter(int dev, int *prev) {
    if (check_dev(dev) < 0) return -1;
    cudaError_t e = cudaGetDevice(prev);
    if (e == cudaSuccess && *prev != dev) e = cudaSetDevice(dev);
    return e == cudaSuccess ? 0 : cuda_fail(e, "cudaSetDevice");
}

static void leave(int dev, int prev) {
    if (prev != dev) cudaSetDevice(prev);
}

void *cs_device_alloc(int dev, size_t n) {
    int prev;
    if (enter(dev, &prev) < 0) return NULL;
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, n ? n : 1); /* size 0 would give NULL, which means failure */
    if (e == cudaSuccess && n && (e = cudaMemset(p, 0, n)) != cudaSuccess) {
        cudaFree(p);
        p = NULL;
    }
    leave(dev, prev);
    if (e != cudaSuccess) {
        char what[80];
        snprintf(what, sizeof what, "allocating %zu bytes on cuda:%d", n, dev);
        cuda_fail(e, what);
        return NULL;
    }
    return p;
}

void cs_device_free(int dev, void *p) {
    int prev;
    if (!p || enter(dev, &prev) < 0) return;
    cudaFree(p);
    leave(dev, prev);
}

int cs_device_memset(void *p, int byte, size_t n) {
    if (cs_device_count() == 0) return -1;
    cudaError_t e = n ? cudaMemset(p, byte, n) : cudaSuccess;
    return e == cudaSuccess ? 0 : cuda_fail(e, "cudaMemset");
}

static int copy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, const char *what) {
    if (cs_device_count() == 0) return -1;
    cudaError_t e = n ? cudaMemcpy(dst, src, n, kind) : cudaSuccess;
    return e == cudaSuccess ? 0 : cuda_fail(e, what);
}

int cs_device_from_host(void *dst, const void *src, size_t n) {
    return copy(dst, src, n, cudaMemcpyHostToDevice, "copying to the device");
}

int cs_device_to_host(void *dst, const void *src, size_t n) {
    return copy(dst, src, n, cudaMemcpyDeviceToHost, "copying from the device");
}

/* cudaMemcpyDefault: unified addressing tells which devices the pointers are on. */
int cs_device_copy(void *dst, const void *src, size_t n) {
    return copy(dst, src, n, cudaMemcpyDefault, "copying between device buffers");
}

int cs_device_sync(int dev) {
    int prev;
    if (enter(dev, &prev) < 0) return -1;
    cudaError_t e = cudaDeviceSynchronize();
    leave(dev, prev);
    return e == cudaSuccess ? 0 : cuda_fail(e, "cudaDeviceSynchronize");
}

int cs_device_mem_used(int dev, size_t *used) {
    int prev;
    if (enter(dev, &prev) < 0) return -1;
    size_t free_b = 0, total = 0;
    cudaError_t e = cudaMemGetInfo(&free_b, &total);
    leave(dev, prev);
    if (e != cudaSuccess) return cuda_fail(e, "cudaMemGetInfo");
    *used = total - free_b;
    return 0;
}
