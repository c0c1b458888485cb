/* trace.c -- trace files as JSON Lines: one event to and from JSON, and the
 * reader. See trace.h; the format itself is the contract in
 * docs/trace-format.md. The writer (the sink and its thread) is trace_writer.c.
 *
 * The encoder and the decoder both walk the schema (event_schema.h): which
 * fields each event type carries, their keys, kinds and legal values.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

#include "api.h"
#include "event_schema.h"
#include "netmodel.h"
#include "trace_scan.h"
#include "utf8.h"

/* CS_EV_MAX_TIME as the messages spell it */
#define STR_(x) #x
#define STR(x) STR_(x)
#define MAX_TIME STR(CS_EV_MAX_TIME)

/* ======================================================================
 * Encoding
 * ====================================================================== */

/* A JSON string for s. Lua strings are bytes and JSON strings are Unicode, so
 * a script may print something JSON cannot hold: each byte that does not start
 * a well-formed sequence becomes U+FFFD. Longer than max: cut at a character
 * boundary, so no line grows past what the reader accepts. */
static json_t *json_text(const char *s, size_t max) {
    size_t n, i = 0, o = 0;
    char *buf;
    json_t *j;

    if (!s) s = "";
    n = strlen(s);
    while (i < n) { /* the common case: already valid and short */
        size_t k = cs_utf8_seq(s + i, n - i);
        if (!k || i + k > max) break;
        i += k;
    }
    if (i == n) return json_stringn(s, n);

    if (!(buf = malloc(max + 1))) return NULL;
    for (i = 0; i < n;) {
        size_t k = cs_utf8_seq(s + i, n - i), adv = k;
        const char *src = s + i;
        if (!k) { src = CS_UTF8_REPLACEMENT; k = 3; adv = 1; }
        if (o + k > max) break;
        memcpy(buf + o, src, k);
        o += k;
        i += adv;
    }
    j = json_stringn(buf, o);
    free(buf);
    return j;
}

/* JSON integers are signed 64-bit in jansson: clamp rather than wrap negative. */
static json_t *json_u64(uint64_t v) {
    return json_integer(v > (uint64_t)INT64_MAX ? INT64_MAX : (json_int_t)v);
}

static json_t *json_name(const char *name) {
    return json_string(name ? name : "?");
}

static json_t *field_to_json(const cs_event *ev, const cs_field *f) {
    json_t *a;
    char num[32];

    switch (f->kind) {
    case CS_FK_INT: return json_integer(CS_CFIELD(ev, f, int));
    case CS_FK_U64: return json_u64(CS_CFIELD(ev, f, uint64_t));
    case CS_FK_SIZE: return json_u64(CS_CFIELD(ev, f, size_t));
    case CS_FK_BOOL: return json_boolean(CS_CFIELD(ev, f, bool));
    case CS_FK_DOUBLE: {
        double v = CS_CFIELD(ev, f, double);
        return json_real(isfinite(v) ? v : 0.0); /* jansson refuses NaN and inf */
    }
    case CS_FK_STR: return json_text(CS_CFIELD(ev, f, char *), f->max);
    case CS_FK_OP: return json_name(cs_op_name(ev->op));
    case CS_FK_DTYPE: return json_name(cs_dtype_name(ev->dtype));
    case CS_FK_SHAPE:
    case CS_FK_REQS:
    case CS_FK_GROUP: {
        size_t n = cs_field_count(ev, f);
        if (!(a = json_array())) return NULL;
        for (size_t i = 0; i < n; i++) {
            json_t *x = f->kind == CS_FK_SHAPE ? json_integer(ev->shape[i])
                      : f->kind == CS_FK_REQS ? json_u64(ev->reqs[i]) : json_integer(ev->group[i]);
            if (json_array_append_new(a, x) < 0) goto fail;
        }
        return a;
    }
    case CS_FK_SEED:
        snprintf(num, sizeof num, "%" PRIu64, ev->seed);
        return json_string(num);
    }
    return NULL;
fail:
    json_decref(a);
    return NULL;
}

/* Adds v under key; false (v released) when v is NULL or the set fails. */
static bool put(json_t *o, const char *key, json_t *v) {
    return json_object_set_new_nocheck(o, key, v) == 0;
}

json_t *cs_event_to_json(const cs_event *ev) {
    json_t *o;
    bool ok;

    if (!ev || (unsigned)ev->type >= CS_EV_NTYPES) return NULL;
    if (!(o = json_object())) return NULL;
    ok = put(o, "type", json_name(cs_event_type_name(ev->type)));
    if (ok && ev->type == CS_EV_RUN)
        ok = put(o, "format", json_string(CS_TRACE_FORMAT)) &&
             put(o, "version", json_integer(ev->net ? CS_TRACE_VERSION_TIMED : CS_TRACE_VERSION));
    ok = ok && put(o, "rank", json_integer(ev->rank)) && put(o, "seq", json_u64(ev->seq)) &&
         put(o, "t", json_real(isfinite(ev->t) ? ev->t : 0.0));
    for (int i = 0; ok && i < CS_F_NFIELDS; i++) {
        const cs_event_kind *k = &cs_event_kinds[ev->type];
        uint64_t bit = CS_FIELD_BIT(i);
        if ((k->need & bit) || ((k->opt & bit) && !cs_field_is_zero(ev, &cs_fields[i])))
            ok = put(o, cs_fields[i].key, field_to_json(ev, &cs_fields[i]));
    }
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* ======================================================================
 * Decoding
 * ====================================================================== */

static int fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;
    if (err && errlen) {
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* A copy of an untrusted string safe to put in a message: short, printable. */
static const char *show(const char *s, char *buf, size_t len) {
    size_t i;
    for (i = 0; s[i] && i + 4 < len; i++)
        buf[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
    if (s[i]) { memcpy(buf + i, "...", 3); i += 3; }
    buf[i] = '\0';
    return buf;
}

void cs_trace_strings_free(cs_trace_strings *store) {
    if (!store) return;
    json_decref(store->held);
    free(store->reqs);
    free(store->group);
    memset(store, 0, sizeof *store);
}

/* Keep obj alive in store: the event's strings point into it. */
static void hold(cs_trace_strings *store, json_t *obj) {
    json_incref(obj);
    json_decref(store->held);
    store->held = obj;
}

/* The integer under name, lo..hi; else -1 with the reason. */
static int get_int(json_t *o, const char *name, json_int_t lo, json_int_t hi, json_int_t *out,
                   char *err, size_t errlen) {
    json_t *v = json_object_get(o, name);
    if (!v) return fail(err, errlen, "missing field \"%s\"", name);
    if (!json_is_integer(v)) return fail(err, errlen, "field \"%s\" must be an integer", name);
    *out = json_integer_value(v);
    if (*out < lo || *out > hi)
        return fail(err, errlen, "field \"%s\" out of range: %lld", name, (long long)*out);
    return 0;
}

static const char *get_str(json_t *o, const char *name, char *err, size_t errlen) {
    json_t *v = json_object_get(o, name);
    if (!v) {
        fail(err, errlen, "missing field \"%s\"", name);
        return NULL;
    }
    if (!json_is_string(v)) {
        fail(err, errlen, "field \"%s\" must be a string", name);
        return NULL;
    }
    return json_string_value(v);
}

static int get_u64_array(json_t *a, const char *name, size_t max, char *err, size_t errlen) {
    if (!json_is_array(a)) return fail(err, errlen, "field \"%s\" must be an array", name);
    if (json_array_size(a) > max)
        return fail(err, errlen, "field \"%s\" has %zu entries, at most %zu", name,
                    json_array_size(a), max);
    for (size_t i = 0; i < json_array_size(a); i++) {
        json_t *v = json_array_get(a, i);
        if (!json_is_integer(v) || json_integer_value(v) < 0)
            return fail(err, errlen, "field \"%s\" must hold integers >= 0", name);
    }
    return 0;
}

static int parse_seed(json_t *v, uint64_t *out, char *err, size_t errlen) {
    const char *s;
    uint64_t x = 0;

    if (json_is_integer(v) && json_integer_value(v) >= 0) { /* hand-written traces */
        *out = (uint64_t)json_integer_value(v);
        return 0;
    }
    if (!json_is_string(v) || !*(s = json_string_value(v))) goto bad;
    for (; *s; s++) {
        unsigned d = (unsigned)(*s - '0');
        if (d > 9 || x > (UINT64_MAX - d) / 10) goto bad;
        x = x * 10 + d;
    }
    *out = x;
    return 0;
bad:
    return fail(err, errlen, "field \"seed\" must be a decimal string of a 64-bit integer");
}

/* Decode one field into ev; world > 0 bounds world_hi fields. */
static int field_from_json(json_t *o, const cs_field *f, int world, cs_event *ev,
                           cs_trace_strings *store, char *err, size_t errlen) {
    json_t *v = json_object_get(o, f->key);
    json_int_t x;
    char tmp[48];

    if (!v) return fail(err, errlen, "missing field \"%s\"", f->key);
    switch (f->kind) {
    case CS_FK_INT:
        if (get_int(o, f->key, f->lo, INT_MAX, &x, err, errlen) < 0) return -1;
        if (!cs_field_int_ok(f, x, world)) {
            if (f->world_hi)
                return fail(err, errlen, "%s %lld out of range (world %d)", f->key,
                            (long long)x, world);
            return fail(err, errlen, "field \"%s\" out of range: %lld", f->key, (long long)x);
        }
        CS_FIELD(ev, f, int) = (int)x;
        return 0;
    case CS_FK_U64:
    case CS_FK_SIZE:
        if (get_int(o, f->key, 0, INT64_MAX, &x, err, errlen) < 0) return -1;
        if (f->kind == CS_FK_U64) CS_FIELD(ev, f, uint64_t) = (uint64_t)x;
        else if ((uint64_t)x > SIZE_MAX)
            return fail(err, errlen, "field \"%s\" too large", f->key);
        else CS_FIELD(ev, f, size_t) = (size_t)x;
        return 0;
    case CS_FK_BOOL:
        if (!json_is_boolean(v))
            return fail(err, errlen, "field \"%s\" must be true or false", f->key);
        CS_FIELD(ev, f, bool) = json_is_true(v);
        return 0;
    case CS_FK_DOUBLE:
        if (!json_is_number(v) || !isfinite(json_number_value(v)) || json_number_value(v) < 0)
            return fail(err, errlen, "field \"%s\" must be a number >= 0", f->key);
        if (json_number_value(v) > CS_EV_MAX_TIME)
            return fail(err, errlen, "field \"%s\" out of range: %g (at most " MAX_TIME ")",
                        f->key, json_number_value(v));
        CS_FIELD(ev, f, double) = json_number_value(v);
        return 0;
    case CS_FK_STR: {
        const char *s = get_str(o, f->key, err, errlen);
        if (!s) return -1;
        CS_FIELD(ev, f, const char *) = s; /* lives as long as store->held */
        return 0;
    }
    case CS_FK_OP:
    case CS_FK_DTYPE: {
        const char *s = get_str(o, f->key, err, errlen);
        if (!s) return -1;
        if (f->kind == CS_FK_OP ? !cs_op_parse(s, &ev->op) : !cs_dtype_parse(s, &ev->dtype))
            return fail(err, errlen, "unknown %s \"%s\"", f->key, show(s, tmp, sizeof tmp));
        return 0;
    }
    case CS_FK_SHAPE:
        if (get_u64_array(v, f->key, f->max, err, errlen) < 0) return -1;
        ev->ndim = (int)json_array_size(v);
        for (int i = 0; i < ev->ndim; i++) ev->shape[i] = json_integer_value(json_array_get(v, i));
        return 0;
    case CS_FK_REQS: {
        size_t n;
        if (get_u64_array(v, f->key, f->max, err, errlen) < 0) return -1;
        n = json_array_size(v);
        if (n > store->reqs_cap) {
            uint64_t *p = realloc(store->reqs, n * sizeof *p);
            if (!p) return fail(err, errlen, "out of memory");
            store->reqs = p;
            store->reqs_cap = n;
        }
        for (size_t i = 0; i < n; i++)
            store->reqs[i] = (uint64_t)json_integer_value(json_array_get(v, i));
        ev->reqs = store->reqs;
        ev->nreqs = (int)n;
        return 0;
    }
    case CS_FK_GROUP: {
        size_t n;
        if (get_u64_array(v, f->key, f->max, err, errlen) < 0) return -1;
        n = json_array_size(v);
        if (world > 0 && n > (size_t)world)
            return fail(err, errlen, "field \"group\" has %zu ranks, world %d", n, world);
        if (n > store->group_cap) {
            int *p = realloc(store->group, n * sizeof *p);
            if (!p) return fail(err, errlen, "out of memory");
            store->group = p;
            store->group_cap = n;
        }
        for (size_t i = 0; i < n; i++) {
            json_int_t g = json_integer_value(json_array_get(v, i));
            if (g > INT_MAX || (world > 0 && g >= world))
                return fail(err, errlen, "group rank %lld out of range (world %d)", (long long)g,
                            world);
            store->group[i] = (int)g;
        }
        ev->group = store->group;
        ev->ngroup = (int)n;
        return 0;
    }
    case CS_FK_SEED:
        return parse_seed(v, &ev->seed, err, errlen);
    }
    return fail(err, errlen, "internal: field kind %d", (int)f->kind);
}

/* The run header says what it is before anything else is read: a reader facing
 * a newer version must say so, not complain about a field it does not know. */
static int check_header(json_t *o, char *err, size_t errlen) {
    const char *fmt = get_str(o, "format", err, errlen);
    json_t *v;
    char tmp[48];

    if (!fmt) return -1;
    if (strcmp(fmt, CS_TRACE_FORMAT) != 0)
        return fail(err, errlen, "not a commsim trace (format \"%s\")", show(fmt, tmp, sizeof tmp));
    if (!(v = json_object_get(o, "version"))) return fail(err, errlen, "missing field \"version\"");
    if (!json_is_integer(v)) return fail(err, errlen, "field \"version\" must be an integer");
    if (json_integer_value(v) != CS_TRACE_VERSION && json_integer_value(v) != CS_TRACE_VERSION_TIMED)
        return fail(err, errlen, "unsupported version %lld (this reader reads versions %d and %d)",
                    (long long)json_integer_value(v), CS_TRACE_VERSION, CS_TRACE_VERSION_TIMED);
    return 0;
}

int cs_event_from_json(json_t *obj, int world, cs_event *ev, cs_trace_strings *store,
                       char *err, size_t errlen) {
    const char *tname;
    json_int_t x;
    json_t *t;
    char tmp[48];
    const cs_event_kind *kind;

    *ev = (cs_event){0};
    if (!json_is_object(obj)) return fail(err, errlen, "not an object");
    hold(store, obj);
    if (!(tname = get_str(obj, "type", err, errlen))) return -1;
    if (!cs_event_type_parse(tname, &ev->type) || (unsigned)ev->type >= CS_EV_NTYPES)
        return fail(err, errlen, "unknown type \"%s\"", show(tname, tmp, sizeof tmp));
    kind = &cs_event_kinds[ev->type];
    if (ev->type == CS_EV_RUN && check_header(obj, err, errlen) < 0) return -1;

    if (get_int(obj, "rank", CS_NO_RANK, INT_MAX, &x, err, errlen) < 0) return -1;
    ev->rank = (int)x;
    if (get_int(obj, "seq", 0, INT64_MAX, &x, err, errlen) < 0) return -1;
    ev->seq = (uint64_t)x;
    if (!(t = json_object_get(obj, "t"))) return fail(err, errlen, "missing field \"t\"");
    if (!json_is_number(t) || json_number_value(t) < 0)
        return fail(err, errlen, "field \"t\" must be a number >= 0");
    if (json_number_value(t) > CS_EV_MAX_TIME)
        return fail(err, errlen, "field \"t\" out of range: %g (at most " MAX_TIME " seconds)",
                    json_number_value(t));
    ev->t = json_number_value(t);

    /* Table order; a run bounds its own rank with the world it declares. */
    for (int i = 0; i < CS_F_NFIELDS; i++) {
        uint64_t bit = CS_FIELD_BIT(i);
        bool present = (kind->opt & bit) && json_object_get(obj, cs_fields[i].key);
        if (!(kind->need & bit) && !present) continue;
        if (field_from_json(obj, &cs_fields[i], world, ev, store, err, errlen) < 0) return -1;
        if (i == CS_F_WORLD) world = ev->world;
    }

    if (ev->type == CS_EV_ERROR && !cs_ev_error_status_ok(ev->status))
        return fail(err, errlen, "field \"status\" out of range: %d (an error's is "
                    CS_EV_ERROR_STATUSES ")", ev->status);
    if (ev->type == CS_EV_VTIME && !cs_ev_vtime_what_ok(ev->text, ev->text ? strlen(ev->text) : 0))
        return fail(err, errlen, "field \"what\": unknown kind \"%s\" (" CS_EV_VTIME_WHATS ")",
                    ev->text ? ev->text : "");

    /* Events not from one rank (the header, verdicts) say so with -1 or -2. */
    if (ev->rank < 0 && !kind->rankless)
        return fail(err, errlen, "a %s event needs a rank >= 0, not %d", tname, ev->rank);
    if (world > 0 && ev->rank >= world)
        return fail(err, errlen, "rank %d out of range (world %d)", ev->rank, world);
    return 0;
}

/* ======================================================================
 * The reader
 * ====================================================================== */

struct cs_trace_reader {
    FILE *f;
    char *path;
    long lineno;         /* of the line last read */
    char *buf;
    size_t cap;
    int world;           /* 0 until the run header */
    uint64_t *next_seq;  /* per rank, the seq its next event must carry */
    cs_trace_strings store;
    int done;            /* 0 while reading; then the result every read repeats */
    char msg[512];       /* the message that goes with done */
};

enum { LINE_OK, LINE_LAST, LINE_EOF, LINE_LONG, LINE_NOMEM, LINE_IOERR };

cs_trace_reader *cs_trace_reader_open(const char *path, char *err, size_t errlen) {
    cs_trace_reader *r = calloc(1, sizeof *r);

    if (!r || !(r->path = strdup(path))) {
        free(r);
        fail(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    if (!(r->f = fopen(path, "re"))) {
        fail(err, errlen, "%s: %s", path, strerror(errno));
        free(r->path);
        free(r);
        return NULL;
    }
    return r;
}

/* One line into r->buf, NUL-terminated, without its newline (nor a CR before
 * it). Refuses to grow past CS_TRACE_MAX_LINE: a trace is untrusted input. */
static int read_line(cs_trace_reader *r, size_t *len) {
    size_t n = 0;
    int c;

    while ((c = getc_unlocked(r->f)) != EOF && c != '\n') {
        if (n == CS_TRACE_MAX_LINE) return LINE_LONG;
        if (n + 1 >= r->cap) {
            size_t cap = r->cap ? r->cap * 2 : 4096;
            char *p;
            if (cap > CS_TRACE_MAX_LINE + 1) cap = CS_TRACE_MAX_LINE + 1;
            if (!(p = realloc(r->buf, cap))) return LINE_NOMEM;
            r->buf = p;
            r->cap = cap;
        }
        r->buf[n++] = (char)c;
    }
    if (c == EOF && ferror(r->f)) return LINE_IOERR;
    if (c == EOF && n == 0) return LINE_EOF;
    if (n > 0 && r->buf[n - 1] == '\r') n--;
    if (r->buf) r->buf[n] = '\0';
    *len = n;
    return c == EOF ? LINE_LAST : LINE_OK;
}

/* End the reader with result rc; every later read repeats it. The message,
 * when there is one, is about the current line: "FILE:LINE: ..." */
static int finish(cs_trace_reader *r, int rc, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int finish(cs_trace_reader *r, int rc, char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;
    r->done = rc == 0 ? 3 : rc; /* 3: a clean end, stored as non-zero */
    r->msg[0] = '\0';
    if (fmt) {
        int n = snprintf(r->msg, sizeof r->msg, "%s:%ld: ", r->path, r->lineno);
        if (n > 0 && (size_t)n < sizeof r->msg) {
            va_start(ap, fmt);
            vsnprintf(r->msg + n, sizeof r->msg - (size_t)n, fmt, ap);
            va_end(ap);
        }
    }
    if (err && errlen) snprintf(err, errlen, "%s", r->msg);
    return rc;
}

/* The header's send mode and network model, which replay and export act on:
 * each as its option (--send-mode, --net) would take it. */
static int check_modes(const cs_event *ev, char *why, size_t len) {
    cs_send_mode mode;
    cs_netmodel net;
    char tmp[48], msg[300];
    if (!cs_send_mode_parse(ev->send_mode, &mode))
        return fail(why, len, "field \"send_mode\": unknown mode \"%s\" (rendezvous, eager or "
                    "eager:BYTES)", show(ev->send_mode, tmp, sizeof tmp));
    if (ev->net && cs_netmodel_parse(ev->net, &net, msg, sizeof msg) < 0) {
        const char *m = strncmp(msg, "--net: ", 7) == 0 ? msg + 7 : msg; /* not an option here */
        return fail(why, len, "field \"net\": %s", m);
    }
    return 0;
}

/* Checks that need the whole trace so far, or both decoders: the header
 * comes first and once, with modes that parse, and each rank's seq counts up
 * from 0 without a gap. */
static int check_order(cs_trace_reader *r, const cs_event *ev, char *why, size_t len) {
    if (!r->world && ev->type != CS_EV_RUN)
        return fail(why, len, "first event is \"%s\", expected \"run\"",
                    cs_event_type_name(ev->type));
    if (r->world && ev->type == CS_EV_RUN) return fail(why, len, "second run event");
    if (ev->type == CS_EV_RUN) {
        if (check_modes(ev, why, len) < 0) return -1;
        if (!(r->next_seq = calloc((size_t)ev->world, sizeof *r->next_seq)))
            return fail(why, len, "out of memory");
        r->world = ev->world;
    }
    if (ev->rank >= 0) {
        uint64_t want = r->next_seq[ev->rank];
        if (ev->seq != want)
            return fail(why, len, "rank %d: seq %" PRIu64 ", expected %" PRIu64, ev->rank,
                        ev->seq, want);
        r->next_seq[ev->rank]++;
    }
    return 0;
}

int cs_trace_read(cs_trace_reader *r, cs_event *ev, char *err, size_t errlen) {
    json_error_t je;
    json_t *obj;
    char why[256], tmp[160];
    size_t len = 0;
    int got, rc;

    if (r->done) {
        if (err && errlen) snprintf(err, errlen, "%s", r->msg);
        return r->done == 3 ? 0 : r->done;
    }
    r->lineno++;
    got = read_line(r, &len);
    switch (got) {
    case LINE_EOF:
        if (!r->world) return finish(r, -1, err, errlen, "empty trace: no run event");
        return finish(r, 0, err, errlen, NULL);
    case LINE_LONG:
        return finish(r, -1, err, errlen, "line longer than %d bytes", CS_TRACE_MAX_LINE);
    case LINE_NOMEM: return finish(r, -1, err, errlen, "out of memory");
    case LINE_IOERR: return finish(r, -1, err, errlen, "read error: %s", strerror(errno));
    }
    /* the writer's plain lines without a JSON tree; the rest (and every
     * refusal, with its message) the full way */
    if (len && cs_trace_scan(r->buf, len, r->world, ev, &r->store) == 1) {
        if (check_order(r, ev, why, sizeof why) < 0) return finish(r, -1, err, errlen, "%s", why);
        return 1;
    }
    obj = len ? json_loadb(r->buf, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &je) : NULL;
    if (!obj) {
        /* A line the writer did not finish is never valid JSON: it lacks the
         * closing brace. Without its newline, that is a crash, not corruption. */
        if (got == LINE_LAST)
            return finish(r, CS_TRACE_CUT, err, errlen, "trace cut off mid-event");
        if (!len) return finish(r, -1, err, errlen, "empty line");
        return finish(r, -1, err, errlen, "not JSON: %s (column %d)",
                      show(je.text, tmp, sizeof tmp), je.column);
    }
    rc = cs_event_from_json(obj, r->world, ev, &r->store, why, sizeof why);
    json_decref(obj); /* the store keeps what ev points into */
    if (rc == 0) rc = check_order(r, ev, why, sizeof why);
    if (rc < 0) return finish(r, -1, err, errlen, "%s", why);
    return 1;
}

int cs_trace_reader_world(const cs_trace_reader *r) {
    return r ? r->world : 0;
}

void cs_trace_reader_close(cs_trace_reader *r) {
    if (!r) return;
    if (r->f) fclose(r->f);
    cs_trace_strings_free(&r->store);
    free(r->next_seq);
    free(r->buf);
    free(r->path);
    free(r);
}
