/* trace_scan.c -- the trace reader's fast path (see trace_scan.h).
 *
 * Reading a trace through jansson builds a tree per line: an object, a hash
 * table, a string or number per value, all freed at the next line. For a
 * trace of a million events that is most of the time `commsim replay` and
 * `commsim export` spend. The writer's lines are flat and plain, so this
 * scanner reads them in place: one pass over the bytes into a short list of
 * keys and value spans, then the schema table (event_schema.h) decides each
 * field as cs_event_from_json does. Where the two could disagree the scan
 * declines; tests/unit/check_trace.c holds it to the full decoder. */
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "event_schema.h"
#include "trace_scan.h"

#define MAX_KEYS 48 /* a written line has at most 14 */

typedef enum { V_STR, V_INT, V_REAL, V_TRUE, V_FALSE, V_NULL, V_ARRAY } vkind;

typedef struct tok {
    const char *key;
    size_t klen;
    vkind kind;
    const char *s; /* V_STR: the bytes between the quotes; V_ARRAY: after '[' */
    size_t slen;
    long long i;   /* V_INT */
    double d;      /* V_INT, V_REAL */
    size_t n;      /* V_ARRAY: its integers */
} tok;

typedef struct scan {
    const char *p, *end;
    tok t[MAX_KEYS];
    int n;
} scan;

static void ws(scan *s) {
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
        s->p++;
}

/* A string of printable ASCII without escapes: what jansson reads as the same bytes. */
static bool str(scan *s, const char **out, size_t *len) {
    if (s->p >= s->end || *s->p != '"') return false;
    const char *b = ++s->p;
    while (s->p < s->end && *s->p != '"') {
        unsigned char c = (unsigned char)*s->p;
        if (c < 0x20 || c >= 0x7f || c == '\\') return false;
        s->p++;
    }
    if (s->p >= s->end) return false;
    *out = b;
    *len = (size_t)(s->p++ - b);
    return true;
}

/* A JSON number. Integers of up to 18 digits are exact here and in jansson;
 * longer ones (which jansson may refuse as too big) decline. */
static bool number(scan *s, tok *t) {
    const char *b = s->p, *q = s->p;
    bool neg = q < s->end && *q == '-';
    if (neg) q++;
    if (q >= s->end || *q < '0' || *q > '9') return false;
    const char *digits = q;
    if (*q == '0') q++;
    else
        while (q < s->end && *q >= '0' && *q <= '9') q++;
    size_t nd = (size_t)(q - digits);
    bool real = false;
    if (q < s->end && *q == '.') {
        real = true;
        if (++q >= s->end || *q < '0' || *q > '9') return false;
        while (q < s->end && *q >= '0' && *q <= '9') q++;
    }
    if (q < s->end && (*q == 'e' || *q == 'E')) {
        real = true;
        if (++q < s->end && (*q == '+' || *q == '-')) q++;
        if (q >= s->end || *q < '0' || *q > '9') return false;
        while (q < s->end && *q >= '0' && *q <= '9') q++;
    }
    if (!real) {
        if (nd > 18) return false;
        long long v = 0;
        for (const char *d = digits; d < q; d++) v = v * 10 + (*d - '0');
        t->kind = V_INT;
        t->i = neg ? -v : v;
        t->d = (double)t->i;
    } else {
        char buf[64];
        size_t n = (size_t)(q - b);
        if (n >= sizeof buf) return false;
        memcpy(buf, b, n);
        buf[n] = 0;
        char *e;
        t->d = strtod(buf, &e); /* jansson's own conversion; the C locale's point */
        if (*e || !isfinite(t->d)) return false;
        t->kind = V_REAL;
    }
    s->p = q;
    return true;
}

/* [int, int, ...]: only integers >= 0 of up to 18 digits. */
static bool array(scan *s, tok *t) {
    s->p++;
    t->kind = V_ARRAY;
    t->s = s->p;
    t->n = 0;
    ws(s);
    if (s->p < s->end && *s->p == ']') {
        s->p++;
        return true;
    }
    for (;;) {
        tok x;
        ws(s);
        if (!number(s, &x) || x.kind != V_INT || x.i < 0) return false;
        t->n++;
        ws(s);
        if (s->p >= s->end) return false;
        if (*s->p == ']') {
            s->p++;
            return true;
        }
        if (*s->p++ != ',') return false;
    }
}

static bool word(scan *s, const char *w, vkind k, tok *t) {
    size_t n = strlen(w);
    if ((size_t)(s->end - s->p) < n || memcmp(s->p, w, n)) return false;
    s->p += n;
    t->kind = k;
    return true;
}

static bool value(scan *s, tok *t) {
    if (s->p >= s->end) return false;
    switch (*s->p) {
    case '"': t->kind = V_STR; return str(s, &t->s, &t->slen);
    case '[': return array(s, t);
    case 't': return word(s, "true", V_TRUE, t);
    case 'f': return word(s, "false", V_FALSE, t);
    case 'n': return word(s, "null", V_NULL, t);
    default: return number(s, t);
    }
}

/* The line as one flat object with distinct keys. */
static bool object(scan *s) {
    ws(s);
    if (s->p >= s->end || *s->p++ != '{') return false;
    ws(s);
    if (s->p < s->end && *s->p == '}') {
        s->p++;
    } else {
        for (;;) {
            if (s->n == MAX_KEYS) return false;
            tok *t = &s->t[s->n];
            ws(s);
            if (!str(s, &t->key, &t->klen)) return false;
            for (int j = 0; j < s->n; j++) /* jansson refuses duplicates */
                if (s->t[j].klen == t->klen && !memcmp(s->t[j].key, t->key, t->klen)) return false;
            ws(s);
            if (s->p >= s->end || *s->p++ != ':') return false;
            ws(s);
            if (!value(s, t)) return false;
            s->n++;
            ws(s);
            if (s->p >= s->end) return false;
            if (*s->p == '}') {
                s->p++;
                break;
            }
            if (*s->p++ != ',') return false;
        }
    }
    ws(s);
    return s->p == s->end;
}

static const tok *get(const scan *s, const char *key) {
    size_t n = strlen(key);
    for (int j = 0; j < s->n; j++)
        if (s->t[j].klen == n && !memcmp(s->t[j].key, key, n)) return &s->t[j];
    return NULL;
}

/* A short string value as a C string in buf, for the name parsers. */
static const char *name(const tok *t, char *buf, size_t len) {
    if (!t || t->kind != V_STR || t->slen >= len) return NULL;
    memcpy(buf, t->s, t->slen);
    buf[t->slen] = 0;
    return buf;
}

/* The i-th integer of an array token (validated by array()). */
static long long nth(const tok *t, size_t *pos) {
    const char *p = t->s + *pos;
    while (*p < '0' || *p > '9') p++;
    long long v = 0;
    while (*p >= '0' && *p <= '9') v = v * 10 + (*p++ - '0');
    *pos = (size_t)(p - t->s);
    return v;
}

/* One field, as field_from_json decides it; false: decline. */
static bool field(const tok *v, const cs_field *f, int world, cs_event *ev, cs_trace_strings *store) {
    char buf[32];
    size_t pos = 0;
    switch (f->kind) {
    case CS_FK_INT:
        if (v->kind != V_INT || v->i < f->lo || v->i > INT_MAX || !cs_field_int_ok(f, v->i, world))
            return false;
        CS_FIELD(ev, f, int) = (int)v->i;
        return true;
    case CS_FK_U64:
    case CS_FK_SIZE:
        if (v->kind != V_INT || v->i < 0) return false;
        if (f->kind == CS_FK_U64) CS_FIELD(ev, f, uint64_t) = (uint64_t)v->i;
        else CS_FIELD(ev, f, size_t) = (size_t)v->i;
        return true;
    case CS_FK_BOOL:
        if (v->kind != V_TRUE && v->kind != V_FALSE) return false;
        CS_FIELD(ev, f, bool) = v->kind == V_TRUE;
        return true;
    case CS_FK_DOUBLE:
        if ((v->kind != V_INT && v->kind != V_REAL) || !(v->d >= 0 && v->d <= CS_EV_MAX_TIME))
            return false;
        CS_FIELD(ev, f, double) = v->d;
        return true;
    case CS_FK_STR:
        if (v->kind != V_STR) return false;
        CS_FIELD(ev, f, const char *) = v->s; /* cut at its quote once the line is accepted */
        return true;
    case CS_FK_OP: {
        const char *s = name(v, buf, sizeof buf);
        return s && cs_op_parse(s, &ev->op);
    }
    case CS_FK_DTYPE: {
        const char *s = name(v, buf, sizeof buf);
        return s && cs_dtype_parse(s, &ev->dtype);
    }
    case CS_FK_SHAPE:
        if (v->kind != V_ARRAY || v->n > f->max) return false;
        ev->ndim = (int)v->n;
        for (size_t i = 0; i < v->n; i++) ev->shape[i] = nth(v, &pos);
        return true;
    case CS_FK_REQS:
        if (v->kind != V_ARRAY || v->n > f->max) return false;
        if (v->n > store->reqs_cap) {
            uint64_t *p = realloc(store->reqs, v->n * sizeof *p);
            if (!p) return false; /* the full path says "out of memory" */
            store->reqs = p;
            store->reqs_cap = v->n;
        }
        for (size_t i = 0; i < v->n; i++) store->reqs[i] = (uint64_t)nth(v, &pos);
        ev->reqs = store->reqs;
        ev->nreqs = (int)v->n;
        return true;
    case CS_FK_GROUP:
        if (v->kind != V_ARRAY || v->n > f->max || (world > 0 && v->n > (size_t)world)) return false;
        if (v->n > store->group_cap) {
            int *p = realloc(store->group, v->n * sizeof *p);
            if (!p) return false;
            store->group = p;
            store->group_cap = v->n;
        }
        for (size_t i = 0; i < v->n; i++) {
            long long g = nth(v, &pos);
            if (g > INT_MAX || (world > 0 && g >= world)) return false;
            store->group[i] = (int)g;
        }
        ev->group = store->group;
        ev->ngroup = (int)v->n;
        return true;
    case CS_FK_SEED:
        if (v->kind == V_INT && v->i >= 0) {
            ev->seed = (uint64_t)v->i;
            return true;
        }
        if (v->kind != V_STR || !v->slen || v->slen > 19) return false; /* 20 digits may overflow */
        ev->seed = 0;
        for (size_t i = 0; i < v->slen; i++) {
            unsigned d = (unsigned)(v->s[i] - '0');
            if (d > 9) return false;
            ev->seed = ev->seed * 10 + d;
        }
        return true;
    }
    return false;
}

int cs_trace_scan(char *line, size_t len, int world, cs_event *ev, cs_trace_strings *store) {
    scan s = {.p = line, .end = line + len};
    char buf[32];
    if (!object(&s)) return 0;
    cs_event e = {0};
    const char *tname = name(get(&s, "type"), buf, sizeof buf);
    if (!tname || !cs_event_type_parse(tname, &e.type) || (unsigned)e.type >= CS_EV_NTYPES) return 0;
    const cs_event_kind *kind = &cs_event_kinds[e.type];
    if (e.type == CS_EV_RUN) {
        const tok *fmt = get(&s, "format"), *ver = get(&s, "version");
        if (!fmt || fmt->kind != V_STR || fmt->slen != strlen(CS_TRACE_FORMAT) ||
            memcmp(fmt->s, CS_TRACE_FORMAT, fmt->slen) || !ver || ver->kind != V_INT ||
            (ver->i != CS_TRACE_VERSION && ver->i != CS_TRACE_VERSION_TIMED))
            return 0;
    }
    const tok *rank = get(&s, "rank"), *seq = get(&s, "seq"), *t = get(&s, "t");
    if (!rank || rank->kind != V_INT || rank->i < CS_NO_RANK || rank->i > INT_MAX) return 0;
    if (!seq || seq->kind != V_INT || seq->i < 0) return 0;
    if (!t || (t->kind != V_INT && t->kind != V_REAL) || !(t->d >= 0 && t->d <= CS_EV_MAX_TIME))
        return 0;
    e.rank = (int)rank->i;
    e.seq = (uint64_t)seq->i;
    e.t = t->d;
    for (int i = 0; i < CS_F_NFIELDS; i++) {
        uint64_t bit = CS_FIELD_BIT(i); /* the masks may be wider than an int */
        const tok *v = (kind->need | kind->opt) & bit ? get(&s, cs_fields[i].key) : NULL;
        if (!v && (kind->need & bit)) return 0;
        if (!v) continue;
        if (!field(v, &cs_fields[i], world, &e, store)) return 0;
        if (i == CS_F_WORLD) world = e.world;
    }
    if (e.type == CS_EV_ERROR && !cs_ev_error_status_ok(e.status)) return 0;
    if (e.type == CS_EV_VTIME) { /* its strings are not cut yet: by length */
        const tok *w = get(&s, "what");
        if (!w || w->kind != V_STR || !cs_ev_vtime_what_ok(w->s, w->slen)) return 0;
    }
    if (e.rank < 0 && !kind->rankless) return 0;
    if (world > 0 && e.rank >= world) return 0;
    /* accepted: cut every string at its closing quote (nothing else follows a
     * string's last byte but its quote) */
    for (int j = 0; j < s.n; j++)
        if (s.t[j].kind == V_STR) ((char *)s.t[j].s)[s.t[j].slen] = 0;
    *ev = e;
    return 1;
}
