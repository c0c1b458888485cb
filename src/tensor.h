/* tensor.h -- dtypes, shapes, storage, views, elementwise ops, torch-style printing.
 *
 * A tensor is a strided view (shape, strides, offset) on a reference-counted
 * storage. Views made by narrow/chunk/view/select share their storage, as in torch.
 * Storage is charged to an optional cs_budget so that a rank's tensors count
 * against the same memory cap as its Lua heap.
 *
 * Storage lives on the host or on a CUDA device (cs_storage.device, read with
 * cs_tensor_device()); a view lives where its storage does. Every function
 * below accepts device tensors: those that compute run as CUDA kernels
 * (tensor_cuda.cu, reached through tensor_device.c), element access copies the
 * one element, printing copies the tensor to the host. Operands of one call
 * must be on one device ("Expected all tensors to be on the same device").
 * cs_tensor_data() of a device tensor is a device pointer. Without a usable
 * device, creating a device tensor fails with device.h's message. Functions
 * that answer with a value (get, the reductions, equal, allclose) cannot
 * return an error: on device operands they fail by setting errno (ENODEV: the
 * device failed; EINVAL: operands on two devices) and the message, and answer
 * NaN, 0 or false.
 */
#ifndef CS_TENSOR_H
#define CS_TENSOR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "device.h"
#include "tensor_elem.h"

#define CS_MAX_DIMS 4

/* cs_dtype (float32, float64, int32, int64, uint8) and cs_binop are in
 * tensor_elem.h, which the CUDA kernels share. */

/* A memory account: bytes in use against a limit (0 = unlimited). Shared by a
 * rank's Lua allocator and its tensor storage. */
typedef struct cs_budget {
    _Atomic size_t used;
    _Atomic size_t limit; /* set at a rank's start while a tcp progress thread may charge */
} cs_budget;

/* Try to charge n bytes; false (nothing charged) when it would exceed the limit. */
bool cs_budget_charge(cs_budget *b, size_t n);
void cs_budget_refund(cs_budget *b, size_t n);

typedef struct cs_storage {
    _Atomic int refs;
    size_t bytes;
    cs_budget *budget; /* charged for bytes; may be NULL */
    void *data;        /* a device pointer when device >= 0 */
    int device;        /* CS_DEVICE_CPU (-1), or the CUDA device holding data */
    int io;            /* unfinished isend/irecv using it (pitfall.c; the owning rank's thread) */
    int io_w;          /* of those, the ones that write it (irecv, a collective's output) */
} cs_storage;

typedef struct cs_tensor {
    _Atomic int refs;
    cs_storage *st;
    cs_dtype dtype;
    int ndim;                   /* 0 (scalar) .. CS_MAX_DIMS */
    int64_t shape[CS_MAX_DIMS];
    int64_t stride[CS_MAX_DIMS]; /* in elements */
    int64_t offset;             /* in elements */
} cs_tensor;

/* ---- dtypes */
size_t cs_dtype_size(cs_dtype d);
const char *cs_dtype_name(cs_dtype d);       /* "float32", ... */
bool cs_dtype_parse(const char *name, cs_dtype *out); /* accepts "float32", "float", "torch.float32", "int64", "long", ... */
bool cs_dtype_is_float(cs_dtype d);

/* ---- lifetime. Constructors return NULL with errno=ENOMEM when the budget or
 * malloc refuses, or EINVAL for a bad shape (ndim > 4, negative size). */
cs_tensor *cs_tensor_new(cs_budget *b, cs_dtype d, int ndim, const int64_t *shape); /* zero-filled */
/* The same on a device: CS_DEVICE_CPU is the host, CS_DEVICE_CURRENT the
 * calling thread's current CUDA device. NULL with the message of
 * cs_tensor_errmsg() (device.h's, for a missing device) and errno ENODEV. */
cs_tensor *cs_tensor_new_on(cs_budget *b, int device, cs_dtype d, int ndim, const int64_t *shape);
cs_tensor *cs_tensor_retain(cs_tensor *t);
void cs_tensor_release(cs_tensor *t); /* NULL-safe */

/* ---- factories (zero-filled, ones, full, arange 0..n-1, randn from a seeded generator) */
cs_tensor *cs_tensor_full(cs_budget *b, cs_dtype d, int ndim, const int64_t *shape, double v);
cs_tensor *cs_tensor_arange(cs_budget *b, cs_dtype d, int64_t n);
/* randn draws from a caller-owned xorshift state so every rank is reproducible. */
cs_tensor *cs_tensor_randn(cs_budget *b, cs_dtype d, int ndim, const int64_t *shape, uint64_t *rng);
cs_tensor *cs_tensor_from_doubles(cs_budget *b, cs_dtype d, int ndim, const int64_t *shape,
                                  const double *vals);

/* ---- devices */
static inline int cs_tensor_device(const cs_tensor *t) { return t->st->device; }
static inline bool cs_tensor_on_device(const cs_tensor *t) { return t->st->device != CS_DEVICE_CPU; }
/* A contiguous copy of t on device (CS_DEVICE_CPU: the host; CS_DEVICE_CURRENT
 * resolved as above), or t itself retained when it is already there, as
 * torch's t.to(device). */
cs_tensor *cs_tensor_to_device(cs_budget *b, cs_tensor *t, int device);
/* Copy the bytes of contiguous src into contiguous dst of the same size,
 * wherever each lives (host or device). 0, or -1 with the message. */
int cs_tensor_copy_bytes(cs_tensor *dst, const cs_tensor *src);

/* ---- shape queries */
int64_t cs_tensor_numel(const cs_tensor *t);
size_t cs_tensor_nbytes(const cs_tensor *t);
bool cs_tensor_is_contiguous(const cs_tensor *t);
bool cs_tensor_same_shape(const cs_tensor *a, const cs_tensor *b);
/* Pointer to the first element; for a contiguous tensor, nbytes follow. */
void *cs_tensor_data(const cs_tensor *t);
/* "[2, 3]" into buf; returns buf. */
char *cs_tensor_shape_str(int ndim, const int64_t *shape, char *buf, size_t len);

/* ---- element access by flat (row-major logical) index */
double cs_tensor_get(const cs_tensor *t, int64_t flat);
int cs_tensor_set(cs_tensor *t, int64_t flat, double v); /* 0, or -1 (bad index, device error) */
/* Exact 64-bit integer access for int dtypes (doubles lose precision past 2^53). */
int64_t cs_tensor_get_i(const cs_tensor *t, int64_t flat);
int cs_tensor_set_i(cs_tensor *t, int64_t flat, int64_t v);

/* ---- views: share storage; NULL + errno=EINVAL on bad arguments */
cs_tensor *cs_tensor_narrow(cs_tensor *t, int dim, int64_t start, int64_t len);
cs_tensor *cs_tensor_select(cs_tensor *t, int dim, int64_t index); /* drops dim: t[i] */
/* view: numel must match and t must be contiguous; one size may be -1. */
cs_tensor *cs_tensor_view(cs_tensor *t, int ndim, const int64_t *shape);
/* chunk: splits dim into n chunks as torch does (ceil(size/n) each, last smaller,
 * fewer chunks when size is small). Fills out[] with new views; returns the count. */
int cs_tensor_chunk(cs_tensor *t, int n, int dim, cs_tensor **out, int max_out);

/* ---- copies */
cs_tensor *cs_tensor_clone(cs_budget *b, const cs_tensor *t);      /* contiguous copy */
cs_tensor *cs_tensor_contiguous(cs_budget *b, cs_tensor *t);       /* retain if already */
cs_tensor *cs_tensor_to(cs_budget *b, const cs_tensor *t, cs_dtype d); /* dtype conversion */
int cs_tensor_copy_(cs_tensor *dst, const cs_tensor *src);        /* same numel; converts dtype */
int cs_tensor_fill_(cs_tensor *t, double v); /* 0, or -1 on a device error */

/* ---- elementwise. Binary ops take a tensor of the same shape, or a scalar
 * (b == NULL, use s). Result dtype: float if either side is float (the
 * tensor's float dtype wins; int tensor with float scalar gives float32),
 * else the tensor's dtype. Integer division ("div") gives float32 as torch does. */
/* Out of place: NULL + errno=EINVAL on shape mismatch (message via cs_tensor_errmsg). */
cs_tensor *cs_tensor_binop(cs_budget *bud, cs_binop op, const cs_tensor *a, const cs_tensor *b, double s,
                           bool scalar_first);
/* In place: a op= b; keeps a's dtype. Returns 0 or -1 (EINVAL). */
int cs_tensor_binop_(cs_binop op, cs_tensor *a, const cs_tensor *b, double s);
cs_tensor *cs_tensor_neg(cs_budget *bud, const cs_tensor *a);
cs_tensor *cs_tensor_relu(cs_budget *bud, const cs_tensor *a);
int cs_tensor_relu_(cs_tensor *a);

/* ---- reductions over all elements */
double cs_tensor_sum(const cs_tensor *t);
double cs_tensor_max(const cs_tensor *t);   /* NaN for numel 0 */
double cs_tensor_min(const cs_tensor *t);
double cs_tensor_mean(const cs_tensor *t);  /* NaN + EINVAL for an integer dtype, as torch */
/* The sum, max and min of an integer tensor as an int64, exact where a double
 * is not (past 2^53), as torch's int64 results are; the sum wraps. max and
 * min of an empty tensor are 0 (callers refuse it first). */
int64_t cs_tensor_sum_i(const cs_tensor *t);
int64_t cs_tensor_max_i(const cs_tensor *t);
int64_t cs_tensor_min_i(const cs_tensor *t);

/* ---- linear algebra: 1-D or 2-D operands as torch.matmul for those cases */
/* A product's time grows faster than its operands (1600x1600 is billions of
 * multiply-adds), so the caller may be asked, about every million of them,
 * whether to go on: stop->fn(stop->ud) true ends the call, NULL with
 * ECANCELED. stop NULL: never asked. A device computes in one go. */
typedef struct cs_tensor_stop {
    bool (*fn)(void *ud);
    void *ud;
} cs_tensor_stop;
cs_tensor *cs_tensor_matmul(cs_budget *bud, const cs_tensor *a, const cs_tensor *b,
                            const cs_tensor_stop *stop);

/* ---- comparison */
bool cs_tensor_equal(const cs_tensor *a, const cs_tensor *b); /* same shape and values */
bool cs_tensor_allclose(const cs_tensor *a, const cs_tensor *b, double rtol, double atol);

/* ---- printing exactly as torch prints: "tensor([1., 2., 3.])", ints without
 * the dot, non-default dtypes suffixed (", dtype=torch.int32"), more than 1000
 * elements summarised with "..." and 3 edge items, rows wrapped at 80 columns.
 * Returns a malloc'd string. */
char *cs_tensor_format(const cs_tensor *t);

/* The last error message of a failing call on this thread ("shapes [2] and [3] differ"). */
const char *cs_tensor_errmsg(void);

#endif
