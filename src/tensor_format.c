/* tensor_format.c -- print tensors exactly as torch does by default.
 *
 * Students compare our output with what PyTorch printed in a notebook, so this
 * follows torch/_tensor_str.py with the default print options (precision 4,
 * threshold 1000, edgeitems 3, linewidth 80, sci_mode chosen automatically):
 *
 *  - one formatter for the whole tensor decides between integer-looking
 *    floats ("1."), fixed ("1.5000") and scientific ("1.0000e-05") notation
 *    and a common width, looking only at the elements that will be shown;
 *  - rows are wrapped to the line width, "..." stands for elided elements;
 *  - suffixes such as ", dtype=torch.int32" wrap to a new line when long.
 */
#include "tensor.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    CS_FMT_PRECISION = 4,
    CS_FMT_THRESHOLD = 1000,
    CS_FMT_EDGEITEMS = 3,
    CS_FMT_LINEWIDTH = 80,
};

/* ---- a growable string; on malloc failure it goes sticky-NULL */

typedef struct {
    char *s;
    size_t len, cap;
    bool oom;
} cs_sbuf;

static void cs_sbuf_add(cs_sbuf *b, const char *s, size_t n) {
    if (b->oom) return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->len + n + 1) cap *= 2;
        char *p = realloc(b->s, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->s = p;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static void cs_sbuf_puts(cs_sbuf *b, const char *s) {
    cs_sbuf_add(b, s, strlen(s));
}

static void cs_sbuf_repeat(cs_sbuf *b, char c, int n) {
    for (int i = 0; i < n; i++) cs_sbuf_add(b, &c, 1);
}

/* ---- the formatter: torch's _Formatter */

typedef struct {
    const cs_tensor *t;
    bool floating, int_mode, sci_mode, summarize;
    int width;
    /* scratch for the scan over nonzero finite values */
    int64_t nonzero;
    double min_abs, max_abs;
} cs_fmt;

typedef void (*cs_fmt_visit_fn)(cs_fmt *f, int64_t flat);

/* Indices of dim shown when printing: the edge items only when summarising. */
static bool cs_fmt_shown(const cs_fmt *f, int64_t size, int64_t i) {
    return !f->summarize || size <= 2 * CS_FMT_EDGEITEMS || i < CS_FMT_EDGEITEMS ||
           i >= size - CS_FMT_EDGEITEMS;
}

/* Visit every element that will be printed (torch's get_summarized_data),
 * by flat row-major index. */
static void cs_fmt_visit(cs_fmt *f, int dim, int64_t flat, cs_fmt_visit_fn fn) {
    const cs_tensor *t = f->t;
    if (dim == t->ndim) {
        fn(f, flat);
        return;
    }
    for (int64_t i = 0; i < t->shape[dim]; i++)
        if (cs_fmt_shown(f, t->shape[dim], i)) cs_fmt_visit(f, dim + 1, flat * t->shape[dim] + i, fn);
}

/* One value as torch formats it, without padding. Python never prints
 * "-nan", so NaN is spelled out rather than left to printf. */
static int cs_fmt_raw(const cs_fmt *f, int64_t flat, char *buf, size_t len) {
    if (!f->floating) return snprintf(buf, len, "%lld", (long long)cs_tensor_get_i(f->t, flat));
    double v = cs_tensor_get(f->t, flat);
    if (isnan(v)) return snprintf(buf, len, "nan");
    if (f->sci_mode) return snprintf(buf, len, "%.*e", CS_FMT_PRECISION, v);
    if (!f->int_mode) return snprintf(buf, len, "%.*f", CS_FMT_PRECISION, v);
    if (isinf(v)) return snprintf(buf, len, "%s", v < 0 ? "-inf" : "inf");
    return snprintf(buf, len, "%.0f.", v); /* the dot says "float" */
}

static void cs_fmt_int_width(cs_fmt *f, int64_t flat) {
    char buf[32];
    int n = cs_fmt_raw(f, flat, buf, sizeof buf);
    if (n > f->width) f->width = n;
}

static bool cs_fmt_nonzero_finite(double v) {
    return isfinite(v) && v != 0;
}

/* First pass over floats: range and integrality of the nonzero finite values. */
static void cs_fmt_scan(cs_fmt *f, int64_t flat) {
    double v = cs_tensor_get(f->t, flat);
    if (!cs_fmt_nonzero_finite(v)) return;
    double a = fabs(v);
    if (f->nonzero++ == 0 || a < f->min_abs) f->min_abs = a;
    if (a > f->max_abs) f->max_abs = a;
    if (v != ceil(v)) f->int_mode = false;
}

/* Second pass: widest nonzero finite value in the chosen notation. */
static void cs_fmt_float_width(cs_fmt *f, int64_t flat) {
    if (cs_fmt_nonzero_finite(cs_tensor_get(f->t, flat))) cs_fmt_int_width(f, flat);
}

static void cs_fmt_init(cs_fmt *f, const cs_tensor *t) {
    memset(f, 0, sizeof *f);
    f->t = t;
    f->floating = cs_dtype_is_float(t->dtype);
    f->int_mode = true;
    f->width = 1;
    f->summarize = cs_tensor_numel(t) > CS_FMT_THRESHOLD;
    if (!f->floating) {
        cs_fmt_visit(f, 0, 0, cs_fmt_int_width);
        return;
    }
    cs_fmt_visit(f, 0, 0, cs_fmt_scan);
    if (f->nonzero == 0) return; /* only zeros, NaN and inf: "0.", width 1 */
    double ratio = f->max_abs / f->min_abs;
    f->sci_mode = ratio > 1000.0 || f->max_abs > 1.0e8 || (!f->int_mode && f->min_abs < 1.0e-4);
    cs_fmt_visit(f, 0, 0, cs_fmt_float_width);
}

/* One element right-aligned to the common width. */
static void cs_fmt_elem(const cs_fmt *f, cs_sbuf *b, int64_t flat) {
    char buf[64];
    int n = cs_fmt_raw(f, flat, buf, sizeof buf);
    cs_sbuf_repeat(b, ' ', f->width - n);
    cs_sbuf_puts(b, buf);
}

/* ---- layout: torch's _vector_str and _tensor_str_with_formatter */

/* The last dim: as many elements per line as fit in the line width after
 * the indent; " ..." counts as an element. */
static void cs_fmt_vector(const cs_fmt *f, cs_sbuf *b, int64_t flat, int indent) {
    int64_t size = f->t->shape[f->t->ndim - 1];
    int per_line = (CS_FMT_LINEWIDTH - indent) / (f->width + 2);
    if (per_line < 1) per_line = 1;
    int item = 0;
    cs_sbuf_puts(b, "[");
    for (int64_t i = 0; i < size; i++) {
        if (!cs_fmt_shown(f, size, i)) continue;
        bool ellipsis = f->summarize && size > 2 * CS_FMT_EDGEITEMS && i == size - CS_FMT_EDGEITEMS;
        for (int k = 0; k <= ellipsis; k++) {
            if (item > 0 && item % per_line == 0) {
                cs_sbuf_puts(b, ",\n");
                cs_sbuf_repeat(b, ' ', indent + 1);
            } else if (item > 0) {
                cs_sbuf_puts(b, ", ");
            }
            if (ellipsis && k == 0)
                cs_sbuf_puts(b, " ...");
            else
                cs_fmt_elem(f, b, flat * size + i);
            item++;
        }
    }
    cs_sbuf_puts(b, "]");
}

/* Outer dims: slices separated by ",", one newline per remaining inner dim
 * (so blank lines between matrices), and indented one more than the bracket. */
static void cs_fmt_nd(const cs_fmt *f, cs_sbuf *b, int dim, int64_t flat, int indent) {
    const cs_tensor *t = f->t;
    if (dim == t->ndim - 1) {
        cs_fmt_vector(f, b, flat, indent);
        return;
    }
    int64_t size = t->shape[dim];
    bool first = true;
    cs_sbuf_puts(b, "[");
    for (int64_t i = 0; i < size; i++) {
        if (!cs_fmt_shown(f, size, i)) continue;
        bool ellipsis = f->summarize && size > 2 * CS_FMT_EDGEITEMS && i == size - CS_FMT_EDGEITEMS;
        for (int k = 0; k <= ellipsis; k++) {
            if (!first) {
                cs_sbuf_puts(b, ",");
                cs_sbuf_repeat(b, '\n', t->ndim - dim - 1);
                cs_sbuf_repeat(b, ' ', indent + 1);
            }
            first = false;
            if (ellipsis && k == 0)
                cs_sbuf_puts(b, "...");
            else
                cs_fmt_nd(f, b, dim + 1, flat * size + i, indent + 1);
        }
    }
    cs_sbuf_puts(b, "]");
}

/* ---- suffixes: torch's _add_suffixes, including its length bookkeeping
 * (which starts at the last line's length plus two) so wrapping matches. */
static size_t cs_fmt_last_line(const cs_sbuf *b) {
    const char *nl = b->oom ? NULL : strrchr(b->s, '\n');
    return nl ? (size_t)(b->s + b->len - nl) + 1 : b->len + 2;
}

static void cs_fmt_suffix(cs_sbuf *b, size_t *last, const char *suffix, int indent) {
    size_t n = strlen(suffix);
    if (*last + n + 2 > CS_FMT_LINEWIDTH) {
        cs_sbuf_puts(b, ",\n");
        cs_sbuf_repeat(b, ' ', indent);
        *last = (size_t)indent + n;
    } else {
        cs_sbuf_puts(b, ", ");
        *last += n + 2;
    }
    cs_sbuf_puts(b, suffix);
}

/* "size=(0, 3)" with Python's tuple spelling: "(0,)" for one dim. */
static void cs_fmt_size_suffix(cs_sbuf *b, size_t *last, const cs_tensor *t, int indent) {
    char buf[128];
    size_t n = (size_t)snprintf(buf, sizeof buf, "size=(");
    for (int d = 0; d < t->ndim && n < sizeof buf; d++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%lld", d ? ", " : "", (long long)t->shape[d]);
    if (n < sizeof buf) snprintf(buf + n, sizeof buf - n, t->ndim == 1 ? ",)" : ")");
    cs_fmt_suffix(b, last, buf, indent);
}

/* torch's suffix order: device, size, dtype. */
static char *cs_format_on(const cs_tensor *t, int device) {
    static const char prefix[] = "tensor(";
    const int indent = (int)sizeof prefix - 1;
    cs_sbuf b = {0};
    cs_sbuf_puts(&b, prefix);
    bool empty = cs_tensor_numel(t) == 0;
    /* torch omits its default dtypes, but an empty tensor shows anything
     * that is not float32, having no elements to tell ints apart. */
    bool show_dtype = empty ? t->dtype != CS_FLOAT32 : t->dtype != CS_FLOAT32 && t->dtype != CS_INT64;
    if (empty) {
        cs_sbuf_puts(&b, "[]");
    } else {
        cs_fmt f;
        cs_fmt_init(&f, t);
        if (t->ndim == 0)
            cs_fmt_elem(&f, &b, 0);
        else
            cs_fmt_nd(&f, &b, 0, 0, indent);
    }
    size_t last = cs_fmt_last_line(&b);
    if (device != CS_DEVICE_CPU) {
        char dev[24], buf[40];
        snprintf(buf, sizeof buf, "device='%s'", cs_device_name(device, dev, sizeof dev));
        cs_fmt_suffix(&b, &last, buf, indent);
    }
    if (empty && t->ndim != 1) cs_fmt_size_suffix(&b, &last, t, indent);
    if (show_dtype) {
        char buf[32];
        snprintf(buf, sizeof buf, "dtype=torch.%s", cs_dtype_name(t->dtype));
        cs_fmt_suffix(&b, &last, buf, indent);
    }
    cs_sbuf_puts(&b, ")");
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

/* A device tensor is printed from a host copy of it. */
char *cs_tensor_format(const cs_tensor *t) {
    if (!cs_tensor_on_device(t)) return cs_format_on(t, CS_DEVICE_CPU);
    cs_tensor *h = cs_tensor_to_device(NULL, (cs_tensor *)t, CS_DEVICE_CPU);
    char *s = h ? cs_format_on(h, cs_tensor_device(t)) : NULL;
    cs_tensor_release(h);
    return s;
}
