/* tensor.c -- the tensor object: memory budget, dtypes, reference-counted
 * storage and lifetime, factories, shape queries, element access, views, and
 * copies/fill/dtype conversion.
 *
 * Every tensor is a strided view on a reference-counted storage, so nothing
 * here assumes contiguity: logical indices are walked with cs_iter and elements
 * go through the dtype-dispatching helpers of tensor_internal.h. Arithmetic
 * (elementwise ops, reductions, matmul, comparison) lives in tensor_ops.c and
 * printing in tensor_format.c.
 */
#include "tensor.h"
#include "tensor_internal.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors */

static _Thread_local char cs_errbuf[256];

/* Record a message for cs_tensor_errmsg() and set errno (last, so that the
 * formatting cannot clobber it). */
void cs_tensor_fail(int err, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cs_errbuf, sizeof cs_errbuf, fmt, ap);
    va_end(ap);
    errno = err;
}

const char *cs_tensor_errmsg(void) {
    return cs_errbuf;
}

/* ---- budget */

bool cs_budget_charge(cs_budget *b, size_t n) {
    if (!b) return true;
    if (b->limit == 0) {
        atomic_fetch_add(&b->used, n);
        return true;
    }
    /* Compare-and-swap so that two threads sharing a budget can't both
     * squeeze under the limit. */
    size_t used = atomic_load(&b->used);
    do {
        if (n > b->limit || used > b->limit - n) return false;
    } while (!atomic_compare_exchange_weak(&b->used, &used, used + n));
    return true;
}

void cs_budget_refund(cs_budget *b, size_t n) {
    if (b) atomic_fetch_sub(&b->used, n);
}

/* ---- dtypes */

static const struct {
    const char *name;  /* ours, and torch's after "torch." */
    const char *alias; /* torch's other spelling */
    const char *cname; /* torch's C++ ScalarType name, used in cast errors */
    size_t size;
} cs_dtypes[CS_NDTYPES] = {
    [CS_FLOAT32] = {"float32", "float", "Float", 4},
    [CS_FLOAT64] = {"float64", "double", "Double", 8},
    [CS_INT32] = {"int32", "int", "Int", 4},
    [CS_INT64] = {"int64", "long", "Long", 8},
    [CS_UINT8] = {"uint8", "byte", "Byte", 1},
};

static bool cs_dtype_valid(cs_dtype d) {
    return (unsigned)d < CS_NDTYPES;
}

size_t cs_dtype_size(cs_dtype d) {
    return cs_dtype_valid(d) ? cs_dtypes[d].size : 0;
}

const char *cs_dtype_name(cs_dtype d) {
    return cs_dtype_valid(d) ? cs_dtypes[d].name : "unknown";
}

const char *cs_dtype_cname(cs_dtype d) {
    return cs_dtype_valid(d) ? cs_dtypes[d].cname : "unknown";
}

bool cs_dtype_parse(const char *name, cs_dtype *out) {
    if (!name) return false;
    if (strncmp(name, "torch.", 6) == 0) name += 6;
    for (int d = 0; d < CS_NDTYPES; d++) {
        if (strcmp(name, cs_dtypes[d].name) == 0 || strcmp(name, cs_dtypes[d].alias) == 0) {
            *out = (cs_dtype)d;
            return true;
        }
    }
    return false;
}

bool cs_dtype_is_float(cs_dtype d) {
    return d == CS_FLOAT32 || d == CS_FLOAT64;
}

/* ---- shapes */

/* The largest span of a shape in bytes: element counts, strides and offsets
 * of every view then fit in int64_t, and byte counts in size_t. */
#define CS_SPAN_MAX ((uint64_t)(SIZE_MAX / 2 < INT64_MAX ? SIZE_MAX / 2 : INT64_MAX))

/* The product of the nonzero dims times elsize in *span; false when a dim is
 * negative or the product passes CS_SPAN_MAX. Zeros are skipped because the
 * strides of an empty tensor are still products of its other dims. */
static bool cs_shape_span(int ndim, const int64_t *shape, uint64_t elsize, uint64_t *span) {
    uint64_t n = elsize;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0) return false;
        if (shape[d] && (__builtin_mul_overflow(n, (uint64_t)shape[d], &n) || n > CS_SPAN_MAX))
            return false;
    }
    *span = n;
    return true;
}

static int64_t cs_shape_numel(int ndim, const int64_t *shape) {
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d];
    return n;
}

int64_t cs_tensor_numel(const cs_tensor *t) {
    return cs_shape_numel(t->ndim, t->shape);
}

size_t cs_tensor_nbytes(const cs_tensor *t) {
    return (size_t)cs_tensor_numel(t) * cs_dtype_size(t->dtype);
}

/* As torch: size-1 dims may have any stride, and empty tensors count. */
bool cs_tensor_is_contiguous(const cs_tensor *t) {
    if (cs_tensor_numel(t) == 0) return true;
    int64_t expect = 1;
    for (int d = t->ndim - 1; d >= 0; d--) {
        if (t->shape[d] != 1 && t->stride[d] != expect) return false;
        expect *= t->shape[d];
    }
    return true;
}

bool cs_tensor_same_shape(const cs_tensor *a, const cs_tensor *b) {
    if (a->ndim != b->ndim) return false;
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d]) return false;
    return true;
}

void *cs_tensor_data(const cs_tensor *t) {
    return (char *)t->st->data + (size_t)t->offset * cs_dtype_size(t->dtype);
}

char *cs_tensor_shape_str(int ndim, const int64_t *shape, char *buf, size_t len) {
    size_t used = 0;
    if (len == 0) return buf;
    buf[0] = '\0';
    used += (size_t)snprintf(buf, len, "[");
    for (int d = 0; d < ndim && used < len; d++)
        used += (size_t)snprintf(buf + used, len - used, "%s%lld", d ? ", " : "", (long long)shape[d]);
    if (used < len) snprintf(buf + used, len - used, "]");
    return buf;
}

static void cs_set_contiguous_strides(cs_tensor *t) {
    int64_t s = 1;
    for (int d = t->ndim - 1; d >= 0; d--) {
        t->stride[d] = s;
        s *= t->shape[d];
    }
}

/* ---- lifetime */

static void cs_storage_release(cs_storage *st) {
    if (!st || atomic_fetch_sub(&st->refs, 1) != 1) return;
    cs_budget_refund(st->budget, st->bytes);
    if (st->device == CS_DEVICE_CPU) free(st->data);
    else cs_device_free(st->device, st->data);
    free(st);
}

/* Validate a shape, returning its byte size in *bytes; EINVAL otherwise. */
static bool cs_shape_check(cs_dtype d, int ndim, const int64_t *shape, size_t *bytes) {
    char buf[96];
    if (!cs_dtype_valid(d)) {
        cs_tensor_fail(EINVAL, "invalid dtype %d", (int)d);
        return false;
    }
    if (ndim < 0 || ndim > CS_MAX_DIMS) {
        cs_tensor_fail(EINVAL, "tensors have at most %d dimensions, got %d", CS_MAX_DIMS, ndim);
        return false;
    }
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0) {
            cs_tensor_fail(EINVAL, "Trying to create tensor with negative dimension %lld: %s",
                           (long long)shape[i], cs_tensor_shape_str(ndim, shape, buf, sizeof buf));
            return false;
        }
    }
    uint64_t span;
    if (!cs_shape_span(ndim, shape, cs_dtype_size(d), &span)) {
        cs_tensor_fail(ENOMEM, "tensor of shape %s is too large",
                       cs_tensor_shape_str(ndim, shape, buf, sizeof buf));
        return false;
    }
    *bytes = (size_t)cs_shape_numel(ndim, shape) * cs_dtype_size(d);
    return true;
}

/* Zero-filled bytes on device (CS_DEVICE_CPU: the host), charged to b: a
 * rank's device memory counts against its cap too, so a script cannot take
 * a shared GPU's memory either. */
static cs_storage *cs_storage_new(cs_budget *b, int device, size_t bytes) {
    if (!cs_budget_charge(b, bytes)) {
        cs_tensor_fail(ENOMEM, "out of memory: a tensor of %zu bytes exceeds the memory limit "
                       "(%zu of %zu bytes in use)", bytes, atomic_load(&b->used), b->limit);
        return NULL;
    }
    cs_storage *st = malloc(sizeof *st);
    void *data = NULL;
    if (st && device == CS_DEVICE_CPU) {
        data = calloc(bytes ? bytes : 1, 1); /* calloc(0) may legally return NULL */
    } else if (st) {
        data = cs_device_alloc(device, bytes); /* zero-filled */
        if (!data) {
            free(st);
            cs_budget_refund(b, bytes);
            cs_tensor_fail(ENODEV, "%s", cs_device_errmsg());
            return NULL;
        }
    }
    if (!st || !data) {
        free(st);
        free(data);
        cs_budget_refund(b, bytes);
        cs_tensor_fail(ENOMEM, "out of memory allocating %zu bytes", bytes);
        return NULL;
    }
    atomic_init(&st->refs, 1);
    st->bytes = bytes;
    st->budget = b;
    st->data = data;
    st->device = device;
    st->io = st->io_w = 0;
    return st;
}


/* A new tensor header on st (taking a reference), copying the view fields
 * of like. */
static cs_tensor *cs_tensor_wrap(cs_storage *st, const cs_tensor *like) {
    cs_tensor *t = malloc(sizeof *t);
    if (!t) {
        cs_tensor_fail(ENOMEM, "out of memory allocating a tensor");
        return NULL;
    }
    cs_tensor_copy_view(t, like);
    atomic_init(&t->refs, 1);
    atomic_fetch_add(&st->refs, 1);
    t->st = st;
    return t;
}

cs_tensor *cs_tensor_new(cs_budget *b, cs_dtype d, int ndim, const int64_t *shape) {
    return cs_tensor_new_on(b, CS_DEVICE_CPU, d, ndim, shape);
}

cs_tensor *cs_tensor_new_on(cs_budget *b, int device, cs_dtype d, int ndim, const int64_t *shape) {
    size_t bytes;
    if (!cs_shape_check(d, ndim, shape, &bytes)) return NULL;
    if (device == CS_DEVICE_CURRENT && (device = cs_device_current()) < 0) {
        cs_tensor_fail(ENODEV, "%s", cs_device_errmsg());
        return NULL;
    }
    cs_storage *st = cs_storage_new(b, device, bytes);
    if (!st) return NULL;
    cs_tensor tmpl = {.dtype = d, .ndim = ndim};
    for (int i = 0; i < ndim; i++) tmpl.shape[i] = shape[i];
    cs_set_contiguous_strides(&tmpl);
    cs_tensor *t = cs_tensor_wrap(st, &tmpl);
    cs_storage_release(st); /* t holds the only reference now, or none */
    return t;
}

cs_tensor *cs_tensor_retain(cs_tensor *t) {
    if (t) atomic_fetch_add(&t->refs, 1);
    return t;
}

void cs_tensor_release(cs_tensor *t) {
    if (!t || atomic_fetch_sub(&t->refs, 1) != 1) return;
    cs_storage_release(t->st);
    free(t);
}

/* ---- element access */

/* Storage offset of a flat row-major logical index. */
static int64_t cs_tensor_flat_offset(const cs_tensor *t, int64_t flat) {
    int64_t off = t->offset;
    for (int d = t->ndim - 1; d >= 0; d--) {
        if (t->shape[d] == 0) return off;
        off += (flat % t->shape[d]) * t->stride[d];
        flat /= t->shape[d];
    }
    return off;
}

static bool cs_tensor_check_flat(const cs_tensor *t, int64_t flat) {
    int64_t n = cs_tensor_numel(t);
    if (flat >= 0 && flat < n) return true;
    cs_tensor_fail(EINVAL, "index %lld is out of bounds for a tensor of %lld elements",
                   (long long)flat, (long long)n);
    return false;
}

/* A device tensor's element comes over in its own bytes and is read (or
 * written) on the host with the same helpers. */
static double cs_dev_get(const cs_tensor *t, int64_t off, bool exact, int64_t *iv) {
    unsigned char e[8];
    if (cs_dev_load(t, off, e) < 0) return *iv = 0, NAN;
    *iv = exact ? cs_elem_ldi(e, t->dtype, 0) : 0;
    return exact ? 0 : cs_elem_ld(e, t->dtype, 0);
}

static int cs_dev_set(cs_tensor *t, int64_t off, bool exact, double v, int64_t iv) {
    unsigned char e[8];
    if (exact) cs_elem_sti(e, t->dtype, 0, iv);
    else cs_elem_st(e, t->dtype, 0, v);
    return cs_dev_store(t, off, e);
}

double cs_tensor_get(const cs_tensor *t, int64_t flat) {
    int64_t iv;
    if (!cs_tensor_check_flat(t, flat)) return NAN;
    int64_t off = cs_tensor_flat_offset(t, flat);
    return cs_tensor_on_device(t) ? cs_dev_get(t, off, false, &iv) : cs_ld(t, off);
}

int cs_tensor_set(cs_tensor *t, int64_t flat, double v) {
    if (!cs_tensor_check_flat(t, flat)) return -1;
    int64_t off = cs_tensor_flat_offset(t, flat);
    if (cs_tensor_on_device(t)) return cs_dev_set(t, off, false, v, 0);
    cs_st(t, off, v);
    return 0;
}

int64_t cs_tensor_get_i(const cs_tensor *t, int64_t flat) {
    int64_t iv;
    if (!cs_tensor_check_flat(t, flat)) return 0;
    int64_t off = cs_tensor_flat_offset(t, flat);
    if (!cs_tensor_on_device(t)) return cs_ldi(t, off);
    cs_dev_get(t, off, true, &iv);
    return iv;
}

int cs_tensor_set_i(cs_tensor *t, int64_t flat, int64_t v) {
    if (!cs_tensor_check_flat(t, flat)) return -1;
    int64_t off = cs_tensor_flat_offset(t, flat);
    if (cs_tensor_on_device(t)) return cs_dev_set(t, off, true, 0, v);
    cs_sti(t, off, v);
    return 0;
}

int cs_tensor_fill_(cs_tensor *t, double v) {
    if (cs_tensor_on_device(t)) return cs_dev_fill(t, v);
    cs_iter it;
    cs_iter_init(&it, 1, (const cs_tensor *const[]){t});
    for (int64_t i = 0, n = cs_tensor_numel(t); i < n; i++, cs_iter_next(&it))
        cs_st(t, it.off[0], v);
    return 0;
}

/* ---- factories */

cs_tensor *cs_tensor_full(cs_budget *b, cs_dtype d, int ndim, const int64_t *shape, double v) {
    cs_tensor *t = cs_tensor_new(b, d, ndim, shape);
    if (t && v != 0) cs_tensor_fill_(t, v);
    return t;
}

cs_tensor *cs_tensor_arange(cs_budget *b, cs_dtype d, int64_t n) {
    cs_tensor *t = cs_tensor_new(b, d, 1, &n);
    for (int64_t i = 0; t && i < n; i++) cs_sti(t, i, i);
    return t;
}

/* xorshift64*: tiny, good enough for teaching, and reproducible per seed. */
static uint64_t cs_rng_next(uint64_t *s) {
    if (*s == 0) *s = 0x9E3779B97F4A7C15ull; /* zero is a fixed point */
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}

/* Uniform in (0, 1]: never 0, so log() below stays finite. */
static double cs_rng_uniform(uint64_t *s) {
    return (double)((cs_rng_next(s) >> 11) + 1) * 0x1.0p-53;
}

cs_tensor *cs_tensor_randn(cs_budget *b, cs_dtype d, int ndim, const int64_t *shape, uint64_t *rng) {
    if (cs_dtype_valid(d) && !cs_dtype_is_float(d)) {
        cs_tensor_fail(EINVAL, "randn is only defined for floating point dtypes, got %s",
                       cs_dtype_name(d));
        return NULL;
    }
    cs_tensor *t = cs_tensor_new(b, d, ndim, shape);
    if (!t) return NULL;
    int64_t n = cs_tensor_numel(t);
    for (int64_t i = 0; i < n; i += 2) { /* Box-Muller: two normals per pair */
        double r = sqrt(-2.0 * log(cs_rng_uniform(rng)));
        double th = 6.283185307179586 * cs_rng_uniform(rng); /* 2 pi; M_PI is not C11 */
        cs_st(t, i, r * cos(th));
        if (i + 1 < n) cs_st(t, i + 1, r * sin(th));
    }
    return t;
}

cs_tensor *cs_tensor_from_doubles(cs_budget *b, cs_dtype d, int ndim, const int64_t *shape,
                                  const double *vals) {
    cs_tensor *t = cs_tensor_new(b, d, ndim, shape);
    for (int64_t i = 0, n = t ? cs_tensor_numel(t) : 0; i < n; i++) cs_st(t, i, vals[i]);
    return t;
}

/* ---- views */

/* torch's dim wrapping: -1 is the last dim. */
static bool cs_wrap_dim(const cs_tensor *t, int *dim) {
    int n = t->ndim;
    if (*dim < -n || *dim >= n) {
        cs_tensor_fail(EINVAL, "Dimension out of range (expected to be in range of [%d, %d], but got %d)",
                       -n, n - 1, *dim);
        return false;
    }
    if (*dim < 0) *dim += n;
    return true;
}

static cs_tensor *cs_tensor_alias(cs_tensor *t) {
    return cs_tensor_wrap(t->st, t);
}

cs_tensor *cs_tensor_narrow(cs_tensor *t, int dim, int64_t start, int64_t len) {
    if (t->ndim == 0) {
        cs_tensor_fail(EINVAL, "narrow() cannot be applied to a 0-dim tensor.");
        return NULL;
    }
    if (!cs_wrap_dim(t, &dim)) return NULL;
    int64_t size = t->shape[dim];
    if (start < -size || start > size) {
        cs_tensor_fail(EINVAL, "start out of range (expected to be in range of [%lld, %lld], but got %lld)",
                       -(long long)size, (long long)size, (long long)start);
        return NULL;
    }
    if (start < 0) start += size;
    if (len < 0) {
        cs_tensor_fail(EINVAL, "narrow(): length must be non-negative.");
        return NULL;
    }
    if (start > size - len) {
        cs_tensor_fail(EINVAL, "start (%lld) + length (%lld) exceeds dimension size (%lld).",
                       (long long)start, (long long)len, (long long)size);
        return NULL;
    }
    cs_tensor *v = cs_tensor_alias(t);
    if (v) {
        v->offset += start * t->stride[dim];
        v->shape[dim] = len;
    }
    return v;
}

cs_tensor *cs_tensor_select(cs_tensor *t, int dim, int64_t index) {
    char buf[96];
    if (t->ndim == 0) {
        cs_tensor_fail(EINVAL, "select() cannot be applied to a 0-dim tensor.");
        return NULL;
    }
    if (!cs_wrap_dim(t, &dim)) return NULL;
    int64_t size = t->shape[dim];
    if (index < -size || index >= size) {
        cs_tensor_fail(EINVAL, "select(): index %lld out of range for tensor of size %s at dimension %d",
                       (long long)index, cs_tensor_shape_str(t->ndim, t->shape, buf, sizeof buf), dim);
        return NULL;
    }
    if (index < 0) index += size;
    cs_tensor *v = cs_tensor_alias(t);
    if (!v) return NULL;
    v->offset += index * t->stride[dim];
    for (int d = dim; d < t->ndim - 1; d++) {
        v->shape[d] = t->shape[d + 1];
        v->stride[d] = t->stride[d + 1];
    }
    v->ndim--;
    v->shape[v->ndim] = 0;
    v->stride[v->ndim] = 0;
    return v;
}

/* Resolve a view shape with at most one -1 against numel; EINVAL otherwise.
 * Products are checked: a shape whose count wraps around must not pass for
 * numel (a view of 4 elements as 2^62+1 x 4 would read far outside them). */
static bool cs_infer_shape(int64_t numel, int ndim, const int64_t *shape, cs_dtype dt, int64_t *out) {
    char buf[96];
    int infer = -1;
    int64_t known = 1;
    bool wrapped = false;
    for (int d = 0; d < ndim; d++) {
        out[d] = shape[d];
        if (shape[d] == -1) {
            if (infer >= 0) {
                cs_tensor_fail(EINVAL, "only one dimension can be inferred");
                return false;
            }
            infer = d;
        } else if (shape[d] < 0) {
            cs_tensor_fail(EINVAL, "invalid shape dimension %lld", (long long)shape[d]);
            return false;
        } else {
            wrapped |= __builtin_mul_overflow(known, shape[d], &known);
        }
    }
    cs_tensor_shape_str(ndim, shape, buf, sizeof buf);
    if (infer >= 0 && known == 0 && !wrapped) {
        cs_tensor_fail(EINVAL, "cannot reshape tensor of 0 elements into shape %s because the "
                       "unspecified dimension size -1 can be any value and is ambiguous", buf);
        return false;
    }
    if (!wrapped && infer >= 0 && numel % known == 0) out[infer] = numel / known;
    uint64_t span;
    if (wrapped || (infer >= 0 && numel % known) || !cs_shape_span(ndim, out, cs_dtype_size(dt), &span) ||
        cs_shape_numel(ndim, out) != numel) {
        cs_tensor_fail(EINVAL, "shape '%s' is invalid for input of size %lld", buf, (long long)numel);
        return false;
    }
    return true;
}

cs_tensor *cs_tensor_view(cs_tensor *t, int ndim, const int64_t *shape) {
    int64_t out[CS_MAX_DIMS];
    if (ndim < 0 || ndim > CS_MAX_DIMS) {
        cs_tensor_fail(EINVAL, "tensors have at most %d dimensions, got %d", CS_MAX_DIMS, ndim);
        return NULL;
    }
    if (!cs_infer_shape(cs_tensor_numel(t), ndim, shape, t->dtype, out)) return NULL;
    if (!cs_tensor_is_contiguous(t)) {
        cs_tensor_fail(EINVAL, "view size is not compatible with input tensor's size and stride (at "
                       "least one dimension spans across two contiguous subspaces). Use "
                       ".reshape(...) instead.");
        return NULL;
    }
    cs_tensor *v = cs_tensor_alias(t);
    if (!v) return NULL;
    v->ndim = ndim;
    memset(v->shape, 0, sizeof v->shape);
    memcpy(v->shape, out, sizeof out[0] * (size_t)ndim);
    cs_set_contiguous_strides(v);
    return v;
}

int cs_tensor_chunk(cs_tensor *t, int n, int dim, cs_tensor **out, int max_out) {
    if (t->ndim == 0) {
        cs_tensor_fail(EINVAL, "chunk expects at least a 1-dimensional tensor");
        return -1;
    }
    if (n <= 0) {
        cs_tensor_fail(EINVAL, "chunk expects `chunks` to be greater than 0, got: %d", n);
        return -1;
    }
    if (!cs_wrap_dim(t, &dim)) return -1;
    /* torch.chunk: pieces of ceil(size/n), so fewer than n when size is small;
     * an empty dim still gives n empty pieces. */
    int64_t size = t->shape[dim];
    int64_t piece = size / n + (size % n != 0); /* ceil, without size + n overflowing */
    int count = size == 0 ? n : (int)(size / piece + (size % piece != 0));
    if (count > max_out) {
        cs_tensor_fail(EINVAL, "chunk needs room for %d pieces, got %d", count, max_out);
        return -1;
    }
    for (int i = 0; i < count; i++) {
        int64_t start = size == 0 ? 0 : i * piece;
        int64_t len = size - start < piece ? size - start : piece;
        out[i] = cs_tensor_narrow(t, dim, start, len);
        if (!out[i]) {
            while (i-- > 0) cs_tensor_release(out[i]);
            return -1;
        }
    }
    return count;
}

/* ---- copies */

/* dst[i] = src[i] in row-major order (shapes may differ, numel may not);
 * exact for integer pairs. */
static void cs_copy_elems(cs_tensor *dst, const cs_tensor *src) {
    bool exact = !cs_dtype_is_float(dst->dtype) && !cs_dtype_is_float(src->dtype);
    cs_iter id, is;
    cs_iter_init(&id, 1, (const cs_tensor *const[]){dst});
    cs_iter_init(&is, 1, (const cs_tensor *const[]){src});
    for (int64_t i = 0, n = cs_tensor_numel(dst); i < n; i++, cs_iter_next(&id), cs_iter_next(&is)) {
        if (exact)
            cs_sti(dst, id.off[0], cs_ldi(src, is.off[0]));
        else
            cs_st(dst, id.off[0], cs_ld(src, is.off[0]));
    }
}

int cs_tensor_copy_(cs_tensor *dst, const cs_tensor *src) {
    char a[96], b[96];
    if (cs_tensor_numel(dst) != cs_tensor_numel(src)) {
        cs_tensor_fail(EINVAL, "copy_(): destination of shape %s and source of shape %s have "
                       "different numbers of elements",
                       cs_tensor_shape_str(dst->ndim, dst->shape, a, sizeof a),
                       cs_tensor_shape_str(src->ndim, src->shape, b, sizeof b));
        return -1;
    }
    if (cs_tensor_on_device(dst) || cs_tensor_on_device(src)) return cs_dev_copy(dst, src);
    if (dst->st == src->st) { /* may overlap: go through a temporary */
        cs_tensor *tmp = cs_tensor_clone(NULL, src);
        if (!tmp) return -1;
        cs_copy_elems(dst, tmp);
        cs_tensor_release(tmp);
        return 0;
    }
    cs_copy_elems(dst, src);
    return 0;
}

/* A new tensor of t's shape where t lives, d's dtype, holding t's values;
 * the device's copy kernel converts on a device. */
static cs_tensor *cs_tensor_copy_new(cs_budget *b, const cs_tensor *t, cs_dtype d) {
    cs_tensor *c = cs_tensor_new_on(b, cs_tensor_device(t), d, t->ndim, t->shape);
    if (c && cs_dev_copy(c, t) < 0) {
        cs_tensor_release(c);
        return NULL;
    }
    return c;
}

cs_tensor *cs_tensor_to(cs_budget *b, const cs_tensor *t, cs_dtype d) {
    if (cs_tensor_on_device(t)) return cs_tensor_copy_new(b, t, d);
    cs_tensor *c = cs_tensor_new(b, d, t->ndim, t->shape);
    if (c) cs_copy_elems(c, t);
    return c;
}

cs_tensor *cs_tensor_clone(cs_budget *b, const cs_tensor *t) {
    if (cs_tensor_on_device(t)) return cs_tensor_copy_new(b, t, t->dtype);
    cs_tensor *c = cs_tensor_new(b, t->dtype, t->ndim, t->shape);
    if (c && cs_tensor_is_contiguous(t))
        memcpy(c->st->data, cs_tensor_data(t), cs_tensor_nbytes(t));
    else if (c)
        cs_copy_elems(c, t);
    return c;
}

cs_tensor *cs_tensor_contiguous(cs_budget *b, cs_tensor *t) {
    return cs_tensor_is_contiguous(t) ? cs_tensor_retain(t) : cs_tensor_clone(b, t);
}

/* ---- devices */

cs_tensor *cs_tensor_to_device(cs_budget *b, cs_tensor *t, int device) {
    if (device == CS_DEVICE_CURRENT && (device = cs_device_current()) < 0) {
        cs_tensor_fail(ENODEV, "%s", cs_device_errmsg());
        return NULL;
    }
    if (device == cs_tensor_device(t) && cs_tensor_is_contiguous(t)) return cs_tensor_retain(t);
    cs_tensor *c = cs_tensor_new_on(b, device, t->dtype, t->ndim, t->shape);
    if (c && cs_tensor_copy_(c, t) < 0) {
        cs_tensor_release(c);
        return NULL;
    }
    return c;
}

int cs_tensor_copy_bytes(cs_tensor *dst, const cs_tensor *src) {
    size_t n = cs_tensor_nbytes(src);
    if (!cs_tensor_is_contiguous(dst) || !cs_tensor_is_contiguous(src) || cs_tensor_nbytes(dst) != n) {
        cs_tensor_fail(EINVAL, "copying bytes needs two contiguous tensors of one size");
        return -1;
    }
    void *to = cs_tensor_data(dst);
    const void *from = cs_tensor_data(src);
    bool dd = cs_tensor_on_device(dst), sd = cs_tensor_on_device(src);
    int rc = !dd && !sd ? (memmove(to, from, n), 0)
             : dd && sd ? cs_device_copy(to, from, n)
             : dd       ? cs_device_from_host(to, from, n)
                        : cs_device_to_host(to, from, n);
    if (rc < 0) cs_tensor_fail(ENODEV, "%s", cs_device_errmsg());
    return rc;
}
