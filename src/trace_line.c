/* trace_line.c -- one trace line, encoded straight into bytes.
 *
 * The trace writer encodes every event a run emits. Building a jansson object
 * per event and finding the shortest digits of its time with up to 15
 * snprintf/strtod round trips cost microseconds an event; this encoder writes
 * the very same bytes (tests/unit/check_trace compares the two over random
 * events) without either. What it cannot do byte for byte -- a string that
 * needs repair or cutting, a time off the bus's microsecond grid, a field kind
 * it does not know -- it leaves to the general path (trace.c), which stays
 * the definition of a line. The buffer it appends to (cs_bytebuf, at the
 * end) is the writer's too.
 */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_line.h"

#include "event_schema.h"

/* The writers below take a cursor into room reserved beforehand and return
 * it moved past what they wrote: a cursor in a register, where storing bytes
 * through b->data would make the compiler reload b->len after every byte. */
#define PUT_LIT(p, s) (memcpy((p), (s), sizeof(s) - 1), (p) + sizeof(s) - 1)

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

/* Written from the last digit back. At most 20 bytes. */
static inline char *put_u64(char *p, uint64_t v) {
    if (v < 10) { /* a rank, a tag, a context: most numbers on a line */
        *p = (char)('0' + v);
        return p + 1;
    }
    char *end = p + decimal_digits(v);
    p = end;
    while (v >= 100) {
        unsigned r = (unsigned)(v % 100);
        v /= 100;
        p -= 2;
        memcpy(p, digit_pairs + 2 * r, 2);
    }
    if (v >= 10) memcpy(p - 2, digit_pairs + 2 * v, 2);
    else p[-1] = (char)('0' + v);
    return end;
}

/* At most 20 bytes. */
static inline char *put_i64(char *p, int64_t v) {
    if (v >= 0) return put_u64(p, (uint64_t)v);
    *p = '-';
    return put_u64(p + 1, (uint64_t)0 - (uint64_t)v);
}

/* jansson's real: %.*g, then a ".0" when it reads as an integer, and an
 * exponent without '+' or leading zeros ("1e+20" -> "1e20", "1e-05" -> "1e-5").
 * At most REAL_MAX bytes. */
#define REAL_MAX 64
static char *put_real(char *p, double v, int prec) {
    char buf[REAL_MAX];
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
    memcpy(p, buf, (size_t)n);
    return p + n;
}

/* The form nearly every time takes, k microseconds from 100 us on (%g's
 * fixed notation): the seconds, a point and the six digits of the fraction
 * less their trailing zeros ("12.0345", "0.00125"), or "S.0" for whole
 * seconds not ending in 0 (those with trailing zeros, "1e2", take the
 * exponent form below). Its length; *prec gets the significant digits. */
static size_t micro_fixed(uint64_t k, char *out, int *prec) {
    uint64_t s = k / 1000000;
    unsigned f = (unsigned)(k % 1000000);
    char *p = out;
    int sig = 0;
    if (s > 0) {
        p = put_u64(p, s);
        sig = (int)(p - out);
    } else {
        *p++ = '0';
    }
    *p++ = '.';
    if (f == 0) {
        *p++ = '0';
    } else {
        char *frac = p;
        memcpy(p, digit_pairs + 2 * (f / 10000), 2);
        memcpy(p + 2, digit_pairs + 2 * (f / 100 % 100), 2);
        memcpy(p + 4, digit_pairs + 2 * (f % 100), 2);
        p += 6;
        while (p[-1] == '0') p--;
        /* the fraction's digits count from its first nonzero one when the
         * seconds are 0 */
        const char *first = frac;
        if (s == 0)
            while (*first == '0') first++;
        sig += (int)(p - first);
    }
    *prec = sig;
    return (size_t)(p - out);
}

/* v = k / 10^6 exactly as the bus stamps it (round(x * 1e6) / 1e6), and small
 * enough that no shorter decimal rounds to the same double: its shortest
 * digits are k's without trailing zeros. Writes them as jansson's %.*g would
 * (precision = those digits) into out; its length, or 0 when v is off the
 * grid. *prec gets the number of significant digits. */
static size_t micro_digits(double v, char *out, int *prec) {
    char d[24];
    int nd, p, x, o = 0;
    uint64_t k;

    if (!(v >= 0) || v >= 1e8) return 0;
    /* v * 1e6 + 0.5 can round up where llround would not; the check below
     * then fails and the general path writes the line */
    k = (uint64_t)(v * 1e6 + 0.5);
    if ((double)k / 1e6 != v) return 0;
    if (k == 0) {
        *prec = 1;
        memcpy(out, "0.0", 3);
        return 3;
    }
    if (k >= 100 && (k % 1000000 != 0 || k / 1000000 % 10 != 0))
        return micro_fixed(k, out, prec);
    /* d[0] is the last digit: the digits reversed, two at a time */
    for (nd = 0; k >= 100; k /= 100, nd += 2) {
        unsigned r = (unsigned)(k % 100);
        d[nd] = digit_pairs[2 * r + 1];
        d[nd + 1] = digit_pairs[2 * r];
    }
    if (k >= 10) {
        d[nd++] = digit_pairs[2 * k + 1];
        d[nd++] = digit_pairs[2 * k];
    } else {
        d[nd++] = (char)('0' + k);
    }
    x = nd - 1 - 6; /* decimal exponent */
    p = nd;
    while (d[nd - p] == '0') p--; /* drop trailing zeros */
    *prec = p;
    /* the digits, most significant first: d[nd-1] .. d[nd-p] */
    if (x < 0 && x >= -4) { /* 0.000ddd: a run's first minutes */
        out[o++] = '0', out[o++] = '.';
        for (int i = -1; i > x; i--) out[o++] = '0';
        for (int i = nd - 1; i >= nd - p; i--) out[o++] = d[i];
        return (size_t)o;
    }
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
    for (int i = nd - 1; i >= nd - 1 - x; i--) out[o++] = d[i];
    if (p > x + 1) {
        out[o++] = '.';
        for (int i = nd - 2 - x; i >= nd - p; i--) out[o++] = d[i];
    } else {
        out[o++] = '.', out[o++] = '0';
    }
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

/* A JSON string as jansson escapes it: '"', '\\' and control characters.
 * At most 6 n + 2 bytes. */
static char *put_string(char *p, const char *s, size_t n) {
    static const char hex[] = "0123456789ABCDEF";
    *p++ = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') {
            *p++ = (char)c;
            continue;
        }
        *p++ = '\\';
        switch (c) {
        case '"': *p++ = '"'; break;
        case '\\': *p++ = '\\'; break;
        case '\b': *p++ = 'b'; break;
        case '\f': *p++ = 'f'; break;
        case '\n': *p++ = 'n'; break;
        case '\r': *p++ = 'r'; break;
        case '\t': *p++ = 't'; break;
        default:
            p = PUT_LIT(p, "u00");
            *p++ = hex[c >> 4];
            *p++ = hex[c & 15];
        }
    }
    *p++ = '"';
    return p;
}

/* Texts a line is made of, ready to copy: each field's key as it starts its
 * member (,"key":), and the names from the program's own tables (an event
 * type, an op, a dtype: plain ASCII, nothing to escape) with their quotes.
 * A text too long for a piece has length 0: its line is the general path's. */
#define TEXT_MAX 24
typedef struct {
    char text[TEXT_MAX];
    size_t len;
} piece;
static piece keys[CS_F_NFIELDS], type_names[CS_EV_NTYPES], op_names[CS_OP_NOPS],
    dtype_names[CS_NDTYPES];
static pthread_once_t pieces_once = PTHREAD_ONCE_INIT;

static void piece_set(piece *pc, const char *fmt, const char *s) {
    int n = snprintf(pc->text, sizeof pc->text, fmt, s ? s : "?");
    pc->len = n > 0 && n < (int)sizeof pc->text ? (size_t)n : 0;
}

static void pieces_init(void) {
    for (int i = 0; i < CS_F_NFIELDS; i++) piece_set(&keys[i], ",\"%s\":", cs_fields[i].key);
    for (int i = 0; i < CS_EV_NTYPES; i++)
        piece_set(&type_names[i], "\"%s\"", cs_event_type_name((cs_event_type)i));
    for (int i = 0; i < CS_OP_NOPS; i++) piece_set(&op_names[i], "\"%s\"", cs_op_name((cs_op)i));
    for (int i = 0; i < CS_NDTYPES; i++)
        piece_set(&dtype_names[i], "\"%s\"", cs_dtype_name((cs_dtype)i));
}

/* Copy a piece: a fixed TEXT_MAX bytes (no call), TEXT_MAX reserved. */
static inline char *put_piece(char *p, const piece *pc) {
    memcpy(p, pc->text, TEXT_MAX);
    return p + pc->len;
}

/* A name from table (n entries); NULL for one outside it ("?", "unknown")
 * or too long for a piece: the general path's. */
static inline char *put_name(char *p, const piece *table, unsigned n, unsigned i) {
    return i < n && table[i].len ? put_piece(p, &table[i]) : NULL;
}

static uint64_t clamp_u64(uint64_t v) { return v > (uint64_t)INT64_MAX ? (uint64_t)INT64_MAX : v; }

/* The most bytes f's value can take on ev's line. */
static inline __attribute__((always_inline)) size_t value_max(const cs_event *ev,
                                                             const cs_field *f) {
    switch (f->kind) {
    case CS_FK_DOUBLE: return REAL_MAX;
    case CS_FK_STR: return 6 * cs_field_count(ev, f) + 2;
    case CS_FK_SHAPE:
    case CS_FK_REQS:
    case CS_FK_GROUP: return 2 + 21 * cs_field_count(ev, f);
    default: return TEXT_MAX; /* a number (20), a bool, a seed (22), a piece */
    }
}

/* One field's value at p, room for value_max reserved: the cursor after it,
 * or NULL when it is not this encoder's. */
static inline __attribute__((always_inline)) char *put_value(char *p, const cs_event *ev,
                                                            const cs_field *f, int prec) {
    switch (f->kind) {
    case CS_FK_INT: return put_i64(p, CS_CFIELD(ev, f, int));
    case CS_FK_U64: return put_u64(p, clamp_u64(CS_CFIELD(ev, f, uint64_t)));
    case CS_FK_SIZE: return put_u64(p, clamp_u64(CS_CFIELD(ev, f, size_t)));
    case CS_FK_BOOL: return CS_CFIELD(ev, f, bool) ? PUT_LIT(p, "true") : PUT_LIT(p, "false");
    case CS_FK_DOUBLE: {
        double v = CS_CFIELD(ev, f, double);
        return put_real(p, isfinite(v) ? v : 0.0, prec);
    }
    case CS_FK_STR: {
        const char *s = CS_CFIELD(ev, f, char *);
        size_t n;
        if (!s) s = "";
        n = strlen(s);
        if (!plain_utf8((const unsigned char *)s, n, f->max)) return NULL;
        return put_string(p, s, n);
    }
    case CS_FK_OP: return put_name(p, op_names, CS_OP_NOPS, (unsigned)ev->op);
    case CS_FK_DTYPE: return put_name(p, dtype_names, CS_NDTYPES, (unsigned)ev->dtype);
    case CS_FK_SHAPE:
    case CS_FK_REQS:
    case CS_FK_GROUP: {
        size_t n = cs_field_count(ev, f);
        *p++ = '[';
        for (size_t i = 0; i < n; i++) {
            if (i) *p++ = ',';
            if (f->kind == CS_FK_SHAPE) p = put_i64(p, ev->shape[i]);
            else if (f->kind == CS_FK_REQS) p = put_u64(p, clamp_u64(ev->reqs[i]));
            else p = put_i64(p, ev->group[i]);
        }
        *p++ = ']';
        return p;
    }
    case CS_FK_SEED:
        *p++ = '"';
        p = put_u64(p, ev->seed);
        *p++ = '"';
        return p;
    default: return NULL; /* a kind added since: the general path knows it */
    }
}

/* The members after "t" and the line's end, for a type that carries need
 * (always) and opt (when not zero), appended to b: 1, 0 (the general path's;
 * b unchanged) or -1. With a constant type (the types a run is made of) the
 * loops unroll into straight-line code over constant rows, as the wire
 * codec's do. */
static inline __attribute__((always_inline)) int put_fields(cs_bytebuf *b, const cs_event *ev,
                                                           uint64_t need, uint64_t opt,
                                                           int prec, size_t head) {
    size_t max = head + 2;
    char *p;
#pragma GCC unroll 64
    for (int i = 0; i < CS_F_NFIELDS; i++)
        if ((need | opt) & CS_FIELD_BIT(i)) max += TEXT_MAX + value_max(ev, &cs_fields[i]);
    if (!cs_bytebuf_room(b, max)) return -1;
    p = b->data + b->len + head;
#pragma GCC unroll 64
    for (int i = 0; i < CS_F_NFIELDS; i++) {
        const cs_field *f = &cs_fields[i];
        if (!((need | opt) & CS_FIELD_BIT(i))) continue;
        if (!(need & CS_FIELD_BIT(i)) && cs_field_is_zero(ev, f)) continue;
        if (!keys[i].len) return 0; /* a key too long for the table */
        p = put_piece(p, &keys[i]);
        if (!(p = put_value(p, ev, f, prec))) return 0;
    }
    p = PUT_LIT(p, "}\n");
    b->len = (size_t)(p - b->data);
    return 1;
}

/* The line's head: the members every line starts with. */
#define HEAD_MAX 128

/* A constant type unrolls; any other reads its row at run time. */
#define PUT_FIELDS_OF(type) \
    put_fields(b, ev, cs_event_kinds[type].need, cs_event_kinds[type].opt, prec, head)

int cs_trace_line(const cs_event *ev, cs_bytebuf *b) {
    char t[40], *p;
    size_t tn, head;
    int prec;

    if ((unsigned)ev->type >= CS_EV_NTYPES || ev->type == CS_EV_RUN) return 0;
    /* The line's real precision is the time's shortest digits (and a compute
     * event's ms's, when longer), as trace.c has it. */
    if (!(tn = micro_digits(isfinite(ev->t) ? ev->t : 0.0, t, &prec))) return 0;
    if (ev->type == CS_EV_COMPUTE) return 0; /* ms: its own digits; rare */
    pthread_once(&pieces_once, pieces_init);
    if (!type_names[ev->type].len) return 0;
    if (!cs_bytebuf_room(b, HEAD_MAX)) return -1;
    /* Written past b->len, which moves only once the whole line is there; a
     * realloc in put_fields keeps these bytes (they are within the old size). */
    p = b->data + b->len;
    p = PUT_LIT(p, "{\"type\":");
    p = put_piece(p, &type_names[ev->type]);
    p = PUT_LIT(p, ",\"rank\":");
    p = put_i64(p, ev->rank);
    p = PUT_LIT(p, ",\"seq\":");
    p = put_u64(p, clamp_u64(ev->seq));
    p = PUT_LIT(p, ",\"t\":");
    memcpy(p, t, tn);
    head = (size_t)(p + tn - (b->data + b->len));
    /* only the type's own fields */
    switch (ev->type) {
    case CS_EV_POST: return PUT_FIELDS_OF(CS_EV_POST);
    case CS_EV_MATCH: return PUT_FIELDS_OF(CS_EV_MATCH);
    case CS_EV_COMPLETE: return PUT_FIELDS_OF(CS_EV_COMPLETE);
    case CS_EV_BLOCK: return PUT_FIELDS_OF(CS_EV_BLOCK);
    case CS_EV_UNBLOCK: return PUT_FIELDS_OF(CS_EV_UNBLOCK);
    default: return PUT_FIELDS_OF(ev->type);
    }
}
