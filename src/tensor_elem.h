/* tensor_elem.h -- one element at a time: dtypes, loads and stores by dtype,
 * UB-free integer conversions, and the scalar arithmetic of every binary op.
 *
 * Shared by the host tensors (tensor.c, tensor_ops.c through
 * tensor_internal.h) and the CUDA kernels (tensor_cuda.cu): the same source
 * decides what 7 / 2, int32 wrap-around or max(NaN, 1) give on either side,
 * so a device result can only differ from the host's where the order of a
 * floating-point sum does, or in the last bit of a float64 pow (CUDA's pow
 * and the C library's may round differently). Plain C that nvcc also compiles as C++ (CS_HD
 * marks each function for both host and device there); nothing here may
 * depend on the rest of the tensor module.
 */
#ifndef CS_TENSOR_ELEM_H
#define CS_TENSOR_ELEM_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#ifdef __CUDACC__
#define CS_HD __host__ __device__
#else
#define CS_HD
#endif

typedef enum {
    CS_FLOAT32 = 0,
    CS_FLOAT64,
    CS_INT32,
    CS_INT64,
    CS_UINT8,
    CS_NDTYPES
} cs_dtype;

typedef enum { CS_ADD, CS_SUB, CS_MUL, CS_DIV, CS_POW, CS_MAXIMUM, CS_MINIMUM } cs_binop;

static inline CS_HD bool cs_elem_is_float(int d) {
    return d == CS_FLOAT32 || d == CS_FLOAT64;
}

/* ---- conversions without undefined behaviour */

/* double -> int64: NaN gives 0, out of range saturates, the rest truncates
 * toward zero as a C cast would. (Casting an out-of-range double is UB.) */
static inline CS_HD int64_t cs_d2i(double v) {
    if (isnan(v)) return 0;
    if (v >= 9223372036854775808.0) return INT64_MAX;
    if (v <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)v;
}

/* Two's-complement wrap of an unsigned value, spelled out so it does not
 * rely on implementation-defined conversions. */
static inline CS_HD int64_t cs_u2i64(uint64_t u) {
    return u <= (uint64_t)INT64_MAX ? (int64_t)u : -(int64_t)(UINT64_MAX - u) - 1;
}

static inline CS_HD int32_t cs_u2i32(uint32_t u) {
    return u <= (uint32_t)INT32_MAX ? (int32_t)u : -(int32_t)(UINT32_MAX - u) - 1;
}

/* ---- element load/store at an element offset from p: the only dtype switches */

static inline CS_HD double cs_elem_ld(const void *p, int dtype, int64_t off) {
    switch (dtype) {
    case CS_FLOAT32: return ((const float *)p)[off];
    case CS_FLOAT64: return ((const double *)p)[off];
    case CS_INT32: return ((const int32_t *)p)[off];
    case CS_INT64: return (double)((const int64_t *)p)[off];
    case CS_UINT8: return ((const uint8_t *)p)[off];
    default: return NAN;
    }
}

static inline CS_HD int64_t cs_elem_ldi(const void *p, int dtype, int64_t off) {
    switch (dtype) {
    case CS_INT32: return ((const int32_t *)p)[off];
    case CS_INT64: return ((const int64_t *)p)[off];
    case CS_UINT8: return ((const uint8_t *)p)[off];
    default: return cs_d2i(cs_elem_ld(p, dtype, off));
    }
}

/* Integers wrap modulo 2^bits, as C's unsigned arithmetic and torch do. */
static inline CS_HD void cs_elem_sti(void *p, int dtype, int64_t off, int64_t v) {
    switch (dtype) {
    case CS_FLOAT32: ((float *)p)[off] = (float)v; break;
    case CS_FLOAT64: ((double *)p)[off] = (double)v; break;
    case CS_INT32: ((int32_t *)p)[off] = cs_u2i32((uint32_t)(uint64_t)v); break;
    case CS_INT64: ((int64_t *)p)[off] = v; break;
    case CS_UINT8: ((uint8_t *)p)[off] = (uint8_t)(uint64_t)v; break;
    default: break;
    }
}

static inline CS_HD void cs_elem_st(void *p, int dtype, int64_t off, double v) {
    switch (dtype) {
    case CS_FLOAT32: ((float *)p)[off] = (float)v; break;
    case CS_FLOAT64: ((double *)p)[off] = v; break;
    default: cs_elem_sti(p, dtype, off, cs_d2i(v)); break;
    }
}

/* ---- scalar arithmetic */

static inline CS_HD double cs_apply_d(cs_binop op, double x, double y) {
    switch (op) {
    case CS_ADD: return x + y;
    case CS_SUB: return x - y;
    case CS_MUL: return x * y;
    case CS_DIV: return x / y;
    case CS_POW: return pow(x, y);
    case CS_MAXIMUM: return isnan(x) || isnan(y) ? NAN : x > y ? x : y;
    case CS_MINIMUM: return isnan(x) || isnan(y) ? NAN : x < y ? x : y;
    }
    return NAN;
}

/* Integer pow by squaring, wrapping; negative exponents as torch's powi. */
static inline CS_HD int64_t cs_powi(int64_t base, int64_t e) {
    if (e < 0) return base == 1 ? 1 : base == -1 ? (e % 2 ? -1 : 1) : 0;
    uint64_t r = 1, b = (uint64_t)base;
    for (; e; e >>= 1, b *= b)
        if (e & 1) r *= b;
    return cs_u2i64(r);
}

/* Unsigned arithmetic so that overflow wraps instead of being UB. */
static inline CS_HD int64_t cs_apply_i(cs_binop op, int64_t x, int64_t y) {
    switch (op) {
    case CS_ADD: return cs_u2i64((uint64_t)x + (uint64_t)y);
    case CS_SUB: return cs_u2i64((uint64_t)x - (uint64_t)y);
    case CS_MUL: return cs_u2i64((uint64_t)x * (uint64_t)y);
    case CS_POW: return cs_powi(x, y);
    case CS_MAXIMUM: return x > y ? x : y;
    case CS_MINIMUM: return x < y ? x : y;
    case CS_DIV: break; /* always computed in floating point */
    }
    return 0;
}

/* |x - y| <= atol + rtol * |y| as torch.isclose, with equal_nan=False; equal
 * values (infinities included) are always close. */
static inline CS_HD bool cs_close(double x, double y, double rtol, double atol) {
    return x == y || (isfinite(x) && isfinite(y) && fabs(x - y) <= atol + rtol * fabs(y));
}

/* One pair of equal()/allclose(): integer pairs compare exactly first, so
 * int64 values past 2^53 are not confused. exact: equal() rather than close. */
static inline CS_HD bool cs_elem_pair_ok(const void *pa, int da, int64_t oa, const void *pb, int db,
                                         int64_t ob, double rtol, double atol, bool exact) {
    bool ints = !cs_elem_is_float(da) && !cs_elem_is_float(db);
    if (ints && cs_elem_ldi(pa, da, oa) == cs_elem_ldi(pb, db, ob)) return true;
    double x = cs_elem_ld(pa, da, oa), y = cs_elem_ld(pb, db, ob);
    if (exact && (ints || x != y)) return false; /* ints reach here unequal */
    return cs_close(x, y, rtol, atol);
}

#endif
