/* trace_line.c -- one trace line, encoded straight into bytes.
 *
 * The trace writer encodes every event a run emits. Building a jansson object
 * per event and finding the shortest digits of its time with up to 15
 * snprintf/strtod round trips cost microseconds an event; this encoder writes
 * the very same bytes (tests/unit/check_trace compares the two over random
 * events) without either. What it cannot do byte for byte -- a string that
 * needs repair or cutting, a time off the bus's microsecond grid, a field kind
 * it does not know -- it leaves to the general path (trace.c), which stays
 * the definition of a line.
 */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_line.h"

#include "event_schema.h"

/* Room for n more bytes; false when out of memory. */
static bool room(cs_trace_buf *b, size_t n) {
    size_t cap;
    char *p;
    if (b->len + n <= b->cap) return true;
    cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n) cap *= 2;
    if (!(p = realloc(b->data, cap))) return false;
    b->data = p;
    b->cap = cap;
    return true;
}

/* Callers reserve first: these never grow the buffer. */
static void put_mem(cs_trace_buf *b, const char *s, size_t n) {
    memcpy(b->data + b->len, s, n);
    b->len += n;
}
#define PUT_LIT(b, s) put_mem((b), (s), sizeof(s) - 1)

/* Two digits per division: a line carries several 6-to-7-digit numbers. */
static const char digit_pairs[] = "00010203040506070809101112131415161718192021222324"
                                  "25262728293031323334353637383940414243444546474849"
                                  "50515253545556575859606162636465666768697071727374"
                                  "75767778798081828384858687888990919293949596979899";

static unsigned decimal_digits(uint64_t v) {
    for (unsigned n = 1;; n += 4, v /= 10000) {
        if (v < 10) return n;
        if (v < 100) return n + 1;
        if (v < 1000) return n + 2;
        if (v < 10000) return n + 3;
    }
}

/* Written from the last digit back, straight into the buffer. */
static void put_u64(cs_trace_buf *b, uint64_t v) {
    unsigned n = decimal_digits(v);
    char *p = b->data + b->len + n;
    b->len += n;
    while (v >= 100) {
        unsigned r = (unsigned)(v % 100);
        v /= 100;
        p -= 2;
        memcpy(p, digit_pairs + 2 * r, 2);
    }
    if (v >= 10) memcpy(p - 2, digit_pairs + 2 * v, 2);
    else p[-1] = (char)('0' + v);
}

static void put_i64(cs_trace_buf *b, int64_t v) {
    if (v < 0) {
        b->data[b->len++] = '-';
        put_u64(b, (uint64_t)0 - (uint64_t)v);
    } else {
        put_u64(b, (uint64_t)v);
    }
}

/* jansson's real: %.*g, then a ".0" when it reads as an integer, and an
 * exponent without '+' or leading zeros ("1e+20" -> "1e20", "1e-05" -> "1e-5"). */
static void put_real(cs_trace_buf *b, double v, int prec) {
    char buf[64];
    int n = snprintf(buf, sizeof buf, "%.*g", prec, v);
    char *e;
    if (n < 0 || n >= (int)sizeof buf - 3) n = 0;
    if (!strchr(buf, '.') && !strchr(buf, 'e')) {
        memcpy(buf + n, ".0", 3);
        n += 2;
    }
    if ((e = strchr(buf, 'e'))) {
        char *start = e + 1, *end = start + 1;
        if (*start == '-') start++;
        while (*end == '0') end++;
        if (end != start) {
            memmove(start, end, (size_t)(buf + n + 1 - end));
            n -= (int)(end - start);
        }
    }
    put_mem(b, buf, (size_t)n);
}

/* v = k / 10^6 exactly as the bus stamps it (round(x * 1e6) / 1e6), and small
 * enough that no shorter decimal rounds to the same double: its shortest
 * digits are k's without trailing zeros. Writes them as jansson's %.*g would
 * (precision = those digits) into out; its length, or 0 when v is off the
 * grid. *prec gets the number of significant digits. */
static size_t micro_digits(double v, char *out, int *prec) {
    char d[24];
    int nd = 0, p, x, o = 0;
    uint64_t k;

    if (!(v >= 0) || v >= 1e8) return 0;
    k = (uint64_t)llround(v * 1e6);
    if ((double)k / 1e6 != v) return 0;
    if (k == 0) {
        *prec = 1;
        memcpy(out, "0.0", 3);
        return 3;
    }
    do d[nd++] = (char)('0' + k % 10); while ((k /= 10) != 0); /* reversed */
    x = nd - 1 - 6;                                           /* decimal exponent */
    p = nd;
    while (d[nd - p] == '0') p--; /* drop trailing zeros: d[0] is the last digit */
    *prec = p;
    /* the digits, most significant first: d[nd-1] .. d[nd-p] */
    if (x < -4 || x >= p) { /* %g's exponent form */
        out[o++] = d[nd - 1];
        if (p > 1) {
            out[o++] = '.';
            for (int i = nd - 2; i >= nd - p; i--) out[o++] = d[i];
        }
        out[o++] = 'e';
        if (x < 0) out[o++] = '-', x = -x;
        if (x >= 10) out[o++] = (char)('0' + x / 10);
        out[o++] = (char)('0' + x % 10);
        return (size_t)o;
    }
    if (x >= 0) {
        for (int i = nd - 1; i >= nd - 1 - x; i--) out[o++] = d[i];
        if (p > x + 1) {
            out[o++] = '.';
            for (int i = nd - 2 - x; i >= nd - p; i--) out[o++] = d[i];
        } else {
            out[o++] = '.', out[o++] = '0';
        }
        return (size_t)o;
    }
    out[o++] = '0', out[o++] = '.';
    for (int i = -1; i > x; i--) out[o++] = '0';
    for (int i = nd - 1; i >= nd - p; i--) out[o++] = d[i];
    return (size_t)o;
}

/* Well-formed UTF-8 of at most max bytes, as jansson would keep it unrepaired. */
static bool plain_utf8(const unsigned char *s, size_t n, size_t max) {
    if (n > max) return false;
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        size_t len;
        uint32_t cp, min;
        if (c < 0x80) { i++; continue; }
        if (c >= 0xC2 && c <= 0xDF) { len = 2; cp = c & 0x1F; min = 0x80; }
        else if ((c & 0xF0) == 0xE0) { len = 3; cp = c & 0x0F; min = 0x800; }
        else if (c >= 0xF0 && c <= 0xF4) { len = 4; cp = c & 0x07; min = 0x10000; }
        else return false;
        if (n - i < len) return false;
        for (size_t j = 1; j < len; j++) {
            if ((s[i + j] & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (s[i + j] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
        i += len;
    }
    return true;
}

/* A JSON string as jansson escapes it: '"', '\\' and control characters. */
static bool put_string(cs_trace_buf *b, const char *s, size_t n) {
    static const char hex[] = "0123456789ABCDEF";
    if (!room(b, 6 * n + 2)) return false;
    b->data[b->len++] = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') {
            b->data[b->len++] = (char)c;
            continue;
        }
        b->data[b->len++] = '\\';
        switch (c) {
        case '"': b->data[b->len++] = '"'; break;
        case '\\': b->data[b->len++] = '\\'; break;
        case '\b': b->data[b->len++] = 'b'; break;
        case '\f': b->data[b->len++] = 'f'; break;
        case '\n': b->data[b->len++] = 'n'; break;
        case '\r': b->data[b->len++] = 'r'; break;
        case '\t': b->data[b->len++] = 't'; break;
        default:
            PUT_LIT(b, "u00");
            b->data[b->len++] = hex[c >> 4];
            b->data[b->len++] = hex[c & 15];
        }
    }
    b->data[b->len++] = '"';
    return true;
}

/* A name from the program's own tables (an op, a dtype, an event type):
 * plain ASCII without quotes or backslashes, so nothing to escape. */
static bool put_name(cs_trace_buf *b, const char *s) {
    size_t n;
    if (!s) s = "?";
    n = strlen(s);
    if (!room(b, n + 2)) return false;
    b->data[b->len++] = '"';
    put_mem(b, s, n);
    b->data[b->len++] = '"';
    return true;
}

/* Each field's key as it starts its member of a line: ,"key": */
typedef struct {
    char text[24];
    size_t len;
} field_key;
static field_key keys[CS_F_NFIELDS];
static pthread_once_t keys_once = PTHREAD_ONCE_INIT;

static void keys_init(void) {
    for (int i = 0; i < CS_F_NFIELDS; i++) {
        int n = snprintf(keys[i].text, sizeof keys[i].text, ",\"%s\":", cs_fields[i].key);
        keys[i].len = n > 0 && n < (int)sizeof keys[i].text ? (size_t)n : 0;
    }
}

static uint64_t clamp_u64(uint64_t v) { return v > (uint64_t)INT64_MAX ? (uint64_t)INT64_MAX : v; }

/* One field's value; 1 written, 0 not this encoder's, -1 out of memory. */
static int put_field(cs_trace_buf *b, const cs_event *ev, const cs_field *f, int prec) {
    if (!room(b, 64)) return -1;
    switch (f->kind) {
    case CS_FK_INT: put_i64(b, CS_CFIELD(ev, f, int)); return 1;
    case CS_FK_U64: put_u64(b, clamp_u64(CS_CFIELD(ev, f, uint64_t))); return 1;
    case CS_FK_SIZE: put_u64(b, clamp_u64(CS_CFIELD(ev, f, size_t))); return 1;
    case CS_FK_BOOL:
        if (CS_CFIELD(ev, f, bool)) PUT_LIT(b, "true");
        else PUT_LIT(b, "false");
        return 1;
    case CS_FK_DOUBLE: {
        double v = CS_CFIELD(ev, f, double);
        put_real(b, isfinite(v) ? v : 0.0, prec);
        return 1;
    }
    case CS_FK_STR: {
        const char *s = CS_CFIELD(ev, f, char *);
        size_t n;
        if (!s) s = "";
        n = strlen(s);
        if (!plain_utf8((const unsigned char *)s, n, f->max)) return 0;
        return put_string(b, s, n) ? 1 : -1;
    }
    case CS_FK_OP: return put_name(b, cs_op_name(ev->op)) ? 1 : -1;
    case CS_FK_DTYPE: return put_name(b, cs_dtype_name(ev->dtype)) ? 1 : -1;
    case CS_FK_SHAPE:
    case CS_FK_REQS:
    case CS_FK_GROUP: {
        size_t n = cs_field_count(ev, f);
        if (!room(b, 2 + 21 * n)) return -1;
        b->data[b->len++] = '[';
        for (size_t i = 0; i < n; i++) {
            if (i) b->data[b->len++] = ',';
            if (f->kind == CS_FK_SHAPE) put_i64(b, ev->shape[i]);
            else if (f->kind == CS_FK_REQS) put_u64(b, clamp_u64(ev->reqs[i]));
            else put_i64(b, ev->group[i]);
        }
        b->data[b->len++] = ']';
        return 1;
    }
    case CS_FK_SEED:
        b->data[b->len++] = '"';
        put_u64(b, ev->seed);
        b->data[b->len++] = '"';
        return 1;
    default: return 0; /* a kind added since: the general path knows it */
    }
}

int cs_trace_line(const cs_event *ev, cs_trace_buf *b) {
    const cs_event_kind *k;
    char t[40];
    size_t start = b->len, tn;
    int prec;

    if ((unsigned)ev->type >= CS_EV_NTYPES || ev->type == CS_EV_RUN) return 0;
    /* The line's real precision is the time's shortest digits (and a compute
     * event's ms's, when longer), as trace.c has it. */
    if (!(tn = micro_digits(isfinite(ev->t) ? ev->t : 0.0, t, &prec))) return 0;
    if (ev->type == CS_EV_COMPUTE) return 0; /* ms: its own digits; rare */
    k = &cs_event_kinds[ev->type];
    if (!room(b, 128)) return -1;
    PUT_LIT(b, "{\"type\":");
    if (!put_name(b, cs_event_type_name(ev->type))) goto nomem;
    if (!room(b, 128)) goto nomem;
    PUT_LIT(b, ",\"rank\":");
    put_i64(b, ev->rank);
    PUT_LIT(b, ",\"seq\":");
    put_u64(b, clamp_u64(ev->seq));
    PUT_LIT(b, ",\"t\":");
    put_mem(b, t, tn);
    pthread_once(&keys_once, keys_init);
    /* only the type's own fields: the set bits of need and opt */
    for (uint64_t m = k->need | k->opt; m; m &= m - 1) {
        int i = __builtin_ctzll(m);
        const cs_field *f = &cs_fields[i];
        int r;
        if (!(k->need & CS_FIELD_BIT(i)) && cs_field_is_zero(ev, f)) continue;
        if (!keys[i].len) { /* a key too long for the table: the general path */
            b->len = start;
            return 0;
        }
        if (!room(b, sizeof keys[i].text)) goto nomem;
        memcpy(b->data + b->len, keys[i].text, sizeof keys[i].text); /* fixed: no call */
        b->len += keys[i].len;
        if ((r = put_field(b, ev, f, prec)) <= 0) {
            b->len = start;
            return r;
        }
    }
    if (!room(b, 2)) goto nomem;
    PUT_LIT(b, "}\n");
    return 1;
nomem:
    b->len = start;
    return -1;
}

void cs_trace_buf_free(cs_trace_buf *b) {
    free(b->data);
    memset(b, 0, sizeof *b);
}
