/* device.h -- device memory: how many CUDA devices there are, allocation,
 * copies between host and device, synchronisation, and the error text.
 *
 * This is the only interface through which tensors reach a GPU's memory.
 * Two files implement it, and configure picks one: src/device_cuda.c over the
 * CUDA runtime when the toolkit was found, src/device_none.c otherwise, where
 * every call fails with "no CUDA device available: this build has no CUDA
 * support". A build with CUDA on a machine without a usable GPU (no driver, no
 * device) fails the same way with the runtime's own reason, so a script that
 * asks for a device tensor gets one clear error wherever it runs.
 *
 * Devices are numbered from 0 as CUDA numbers them; CS_DEVICE_CPU (-1) stands
 * for host memory wherever a device number is expected (tensor.h). Calls that
 * fail return -1 (or NULL, or 0 devices) and leave a message for
 * cs_device_errmsg() on the calling thread. Copies are synchronous: when they
 * return, the bytes are where they were sent. Thread-safe: the current device
 * is per host thread, as in CUDA.
 */
#ifndef CS_DEVICE_H
#define CS_DEVICE_H

#include <stdbool.h>
#include <stddef.h>

#define CS_DEVICE_CPU (-1)
/* "cuda" without an index: the calling thread's current device (parsing only) */
#define CS_DEVICE_CURRENT (-2)

/* Whether this build has CUDA support at all (device_cuda.c). */
bool cs_device_built(void);

/* The number of usable CUDA devices; 0 when there are none, with the reason
 * ("no CUDA device available: ...") in cs_device_errmsg(). Asks the runtime
 * once per process. */
int cs_device_count(void);

/* Make dev the calling thread's current device (cudaSetDevice); 0 or -1. */
int cs_device_set(int dev);
/* The calling thread's current device, or -1 (message set) when there is none. */
int cs_device_current(void);

/* n bytes on device dev, zero-filled; NULL with a message on failure (no
 * device, out of device memory). n 0 gives a valid, unique pointer. */
void *cs_device_alloc(int dev, size_t n);
/* NULL-safe. */
void cs_device_free(int dev, void *p);

/* Set n bytes at device pointer p to byte (p on the current device). */
int cs_device_memset(void *p, int byte, size_t n);
/* Host to device, device to host, device to device (the two may be different
 * devices). n 0 is a no-op that succeeds. */
int cs_device_from_host(void *dst, const void *src, size_t n);
int cs_device_to_host(void *dst, const void *src, size_t n);
int cs_device_copy(void *dst, const void *src, size_t n);

/* Wait until everything queued on dev has finished; a kernel's own failure
 * surfaces here. */
int cs_device_sync(int dev);

/* Bytes of dev's memory in use (total minus free, as the driver reports it):
 * the GPU suite's leak check compares it before and after a run. */
int cs_device_mem_used(int dev, size_t *used);

/* The last failure of a device call on this thread, always starting "no CUDA
 * device available: " when the cause is the absence of a device or of CUDA
 * support, else "CUDA error: " and the runtime's text. */
const char *cs_device_errmsg(void);

/* For the implementations (device_*.c, tensor_cuda.cu): record the message
 * cs_device_errmsg() returns. */
void cs_device_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* "cpu", "cuda:0", ... into buf; returns buf. */
const char *cs_device_name(int dev, char *buf, size_t len);
/* "cpu", "cuda", "cuda:N" (also torch's "torch.device" spellings without the
 * prefix); "cuda" gives CS_DEVICE_CURRENT. false for anything else. */
bool cs_device_parse(const char *s, int *out);

#endif
