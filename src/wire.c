/* wire.c -- the tcp engine's frames: headers and their limits, and the codecs
 * of their metadata and of events. What moves them is wire_socket.c (blocking
 * helpers, tokens, addresses) and wire_rx.c (the non-blocking frame reader).
 * See wire.h and docs/wire-protocol.md. */
#include "wire.h"

#include "event_schema.h"

#include <arpa/inet.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const frame_names[CS_FR_NTYPES] = {
    [CS_FR_HELLO] = "HELLO", [CS_FR_WELCOME] = "WELCOME", [CS_FR_PEER] = "PEER",
    [CS_FR_MSG] = "MSG",     [CS_FR_RTS] = "RTS",         [CS_FR_CTS] = "CTS",
    [CS_FR_DATA] = "DATA",   [CS_FR_REJECT] = "REJECT",   [CS_FR_EVENT] = "EVENT",
    [CS_FR_ABORT] = "ABORT", [CS_FR_FLUSH] = "FLUSH",     [CS_FR_FLUSHED] = "FLUSHED",
    [CS_FR_BYE] = "BYE",     [CS_FR_REFUSE] = "REFUSE",   [CS_FR_SYNC] = "SYNC",
    [CS_FR_ACK] = "ACK",     [CS_FR_GATE] = "GATE",       [CS_FR_GO] = "GO",
    [CS_FR_CLOCK] = "CLOCK", [CS_FR_ALIVE] = "ALIVE",
    [CS_FR_HUB] = "HUB", /* the hub's (hub.c) */
};

const char *cs_frame_name(int type) {
    return type > 0 && type < CS_FR_NTYPES ? frame_names[type] : "?";
}

/* ---- the cursor */

static bool room(cs_cur *c, size_t n) {
    if (c->bad || c->len - c->pos < n) {
        c->bad = true;
        return false;
    }
    return true;
}

/* Little-endian by shifts: the same bytes on any host. One bounds check per
 * value (a short buffer writes nothing and sets bad); the compiler merges the
 * byte moves of a value into one load or store. */
static uint8_t *put_at(cs_cur *c, size_t n) {
    if (!room(c, n)) return NULL;
    uint8_t *p = c->p + c->pos;
    c->pos += n;
    return p;
}

static void le16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void le32(uint8_t *p, uint32_t v) {
    le16(p, (uint16_t)v);
    le16(p + 2, (uint16_t)(v >> 16));
}

void cs_put_u8(cs_cur *c, uint8_t v) {
    uint8_t *p = put_at(c, 1);
    if (p) *p = v;
}

void cs_put_u16(cs_cur *c, uint16_t v) {
    uint8_t *p = put_at(c, 2);
    if (p) le16(p, v);
}

void cs_put_u32(cs_cur *c, uint32_t v) {
    uint8_t *p = put_at(c, 4);
    if (p) le32(p, v);
}

void cs_put_u64(cs_cur *c, uint64_t v) {
    uint8_t *p = put_at(c, 8);
    if (p) {
        le32(p, (uint32_t)v);
        le32(p + 4, (uint32_t)(v >> 32));
    }
}

void cs_put_bytes(cs_cur *c, const void *v, size_t n) {
    if (n && room(c, n)) {
        memcpy(c->p + c->pos, v, n);
        c->pos += n;
    }
}

static uint16_t from_le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

static uint32_t from_le32(const uint8_t *p) {
    return (uint32_t)from_le16(p) | (uint32_t)from_le16(p + 2) << 16;
}

uint8_t cs_get_u8(cs_cur *c) {
    const uint8_t *p = cs_get_bytes(c, 1);
    return p ? *p : 0;
}

uint16_t cs_get_u16(cs_cur *c) {
    const uint8_t *p = cs_get_bytes(c, 2);
    return p ? from_le16(p) : 0;
}

uint32_t cs_get_u32(cs_cur *c) {
    const uint8_t *p = cs_get_bytes(c, 4);
    return p ? from_le32(p) : 0;
}

uint64_t cs_get_u64(cs_cur *c) {
    const uint8_t *p = cs_get_bytes(c, 8);
    return p ? (uint64_t)from_le32(p) | (uint64_t)from_le32(p + 4) << 32 : 0;
}

const uint8_t *cs_get_bytes(cs_cur *c, size_t n) {
    if (!room(c, n)) return NULL;
    const uint8_t *p = c->p + c->pos;
    c->pos += n;
    return p;
}

static uint64_t f64_bits(double d) {
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

static double bits_f64(uint64_t u) {
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* ---- the header */

/* An EVENT frame's fixed part: the last byte any row of the schema places is
 * 133 (check_schema tells when a new slot needs this raised, with the version). */
#define EVENT_FIXED 134
#define MAX_EVENT_META \
    (EVENT_FIXED + 8 * CS_WIRE_MAX_EVENT_REQS + 4 * CS_WIRE_MAX_WORLD + CS_WIRE_MAX_EVENT_TEXT + \
     2 * CS_WIRE_MAX_NAME + CS_EV_MAX_PITFALL)

void cs_wire_hdr_put(uint8_t *out, int type, uint32_t meta_len, uint64_t data_len) {
    cs_cur c = {.p = out, .len = CS_WIRE_HDR};
    cs_put_u32(&c, CS_WIRE_MAGIC);
    cs_put_u8(&c, CS_WIRE_VERSION);
    cs_put_u8(&c, (uint8_t)type);
    cs_put_u16(&c, 0);
    cs_put_u32(&c, meta_len);
    cs_put_u64(&c, data_len);
}

/* The metadata length a type allows: [lo, hi]; and whether it has a payload. */
static void type_limits(int type, uint32_t *lo, uint32_t *hi, bool *payload) {
    *payload = type == CS_FR_MSG || type == CS_FR_DATA || type == CS_FR_SYNC;
    switch (type) {
    case CS_FR_HELLO: *lo = *hi = CS_HELLO_LEN; break;
    case CS_FR_WELCOME:
        *lo = (uint32_t)cs_welcome_len(1);
        *hi = (uint32_t)cs_welcome_len(CS_WIRE_MAX_WORLD);
        break;
    case CS_FR_PEER: *lo = *hi = CS_PEER_LEN; break;
    case CS_FR_MSG: case CS_FR_RTS: case CS_FR_SYNC: *lo = *hi = CS_WIRE_ENVELOPE; break;
    case CS_FR_ACK: *lo = *hi = 8; break;
    case CS_FR_CTS: *lo = *hi = 16; break;
    case CS_FR_DATA: *lo = *hi = 8; break;
    case CS_FR_REJECT: *lo = 8; *hi = 8 + CS_WIRE_MAX_TEXT; break;
    case CS_FR_EVENT: *lo = EVENT_FIXED; *hi = MAX_EVENT_META; break;
    case CS_FR_ABORT: *lo = *hi = 4; break;
    case CS_FR_REFUSE: *lo = 0; *hi = CS_WIRE_MAX_TEXT; break;
    case CS_FR_GATE: *lo = CS_GATE_FIXED; *hi = CS_GATE_FIXED + CS_WIRE_MAX_GATE_TEXT; break;
    case CS_FR_GO: *lo = *hi = 8; break;
    case CS_FR_CLOCK: *lo = *hi = 8; break;
    case CS_FR_ALIVE: *lo = *hi = 4; break;
    case CS_FR_HUB: *lo = CS_HUB_FIXED; *hi = CS_HUB_FIXED + CS_HUB_MAX_DATA; break; /* hub.c */
    default: *lo = *hi = 0; break; /* FLUSH, FLUSHED, BYE */
    }
}

int cs_wire_hdr_get(const uint8_t *in, uint64_t max_payload, cs_frame_hdr *h, char *err,
                    size_t errlen) {
    cs_cur c = {.p = (uint8_t *)in, .len = CS_WIRE_HDR};
    uint32_t magic = cs_get_u32(&c);
    uint8_t version = cs_get_u8(&c);
    uint8_t type = cs_get_u8(&c);
    uint16_t reserved = cs_get_u16(&c);
    h->type = type;
    h->meta_len = cs_get_u32(&c);
    h->data_len = cs_get_u64(&c);
    if (magic != CS_WIRE_MAGIC) {
        snprintf(err, errlen, "not a commsim frame (bad magic)");
        return -1;
    }
    if (version != CS_WIRE_VERSION) {
        snprintf(err, errlen, "wire protocol version %u (this commsim speaks %d)", version,
                 CS_WIRE_VERSION);
        return -1;
    }
    if (reserved != 0) {
        snprintf(err, errlen, "reserved header bits set (0x%04x) in a frame of type %u", reserved, type);
        return -1;
    }
    if (type == 0 || type >= CS_FR_NTYPES) {
        snprintf(err, errlen, "unknown frame type %u", type);
        return -1;
    }
    uint32_t lo, hi;
    bool payload;
    type_limits(type, &lo, &hi, &payload);
    if (h->meta_len < lo || h->meta_len > hi) {
        snprintf(err, errlen, "%s frame with %u bytes of metadata (allowed %u to %u)",
                 cs_frame_name(type), h->meta_len, lo, hi);
        return -1;
    }
    uint64_t max = !payload ? 0 : type == CS_FR_SYNC && max_payload > CS_WIRE_SYNC_MAX
                                      ? CS_WIRE_SYNC_MAX : max_payload;
    if (h->data_len > max) {
        snprintf(err, errlen, "%s frame with a payload of %llu bytes (allowed %llu)",
                 cs_frame_name(type), (unsigned long long)h->data_len, (unsigned long long)max);
        return -1;
    }
    return 0;
}

/* ---- HELLO / PEER */

void cs_hello_put(cs_cur *c, const cs_hello *h, bool with_addr) {
    cs_put_bytes(c, h->token, CS_WIRE_TOKEN);
    cs_put_u32(c, h->rank);
    cs_put_u32(c, h->world);
    if (with_addr) {
        cs_put_u32(c, ntohl(h->ip));
        cs_put_u16(c, h->port);
        cs_put_u16(c, 0);
    }
}

int cs_hello_get(cs_cur *c, cs_hello *h, bool with_addr) {
    const uint8_t *tok = cs_get_bytes(c, CS_WIRE_TOKEN);
    if (tok) memcpy(h->token, tok, CS_WIRE_TOKEN);
    h->token[CS_WIRE_TOKEN] = 0;
    h->rank = cs_get_u32(c);
    h->world = cs_get_u32(c);
    h->ip = 0;
    h->port = 0;
    if (with_addr) {
        h->ip = htonl(cs_get_u32(c));
        h->port = cs_get_u16(c);
        cs_get_u16(c);
    }
    if (c->bad || c->pos != c->len) return -1;
    if (h->world < 1 || h->world > CS_WIRE_MAX_WORLD || h->rank >= h->world) return -1;
    return 0;
}

/* ---- WELCOME */

size_t cs_welcome_len(uint32_t world) { return CS_WELCOME_FIXED + (size_t)world * 6; }

void cs_welcome_put(cs_cur *c, const cs_welcome *w) {
    cs_put_u32(c, w->world);
    cs_put_u64(c, w->eager_limit);
    cs_put_u8(c, w->rendezvous_only);
    cs_put_u8(c, w->flags);
    cs_put_u64(c, w->seed);
    cs_put_u64(c, w->mem_limit);
    cs_put_u64(c, w->step_limit);
    cs_put_u64(c, w->elapsed_us);
    cs_put_bytes(c, w->coll_algo, sizeof w->coll_algo);
    cs_put_u64(c, w->t0_ns);
    cs_put_bytes(c, w->boot_id, CS_WIRE_BOOT_ID);
    cs_put_u64(c, w->alpha_ns);
    cs_put_u64(c, w->bandwidth);
    cs_put_u64(c, w->flops);
    cs_put_u64(c, w->out_limit);
    for (uint32_t i = 0; i < w->world; i++) {
        cs_put_u32(c, ntohl(w->ip[i]));
        cs_put_u16(c, w->port[i]);
    }
}

int cs_welcome_get(cs_cur *c, cs_welcome *w) {
    memset(w, 0, sizeof *w);
    w->world = cs_get_u32(c);
    w->eager_limit = cs_get_u64(c);
    w->rendezvous_only = cs_get_u8(c);
    w->flags = cs_get_u8(c);
    w->seed = cs_get_u64(c);
    w->mem_limit = cs_get_u64(c);
    w->step_limit = cs_get_u64(c);
    w->elapsed_us = cs_get_u64(c);
    const uint8_t *algo = cs_get_bytes(c, sizeof w->coll_algo);
    bool algo_ok = algo != NULL;
    for (size_t i = 0; algo && i < sizeof w->coll_algo; i++) {
        w->coll_algo[i] = algo[i];
        algo_ok &= algo[i] < CS_WIRE_MAX_ALGO;
    }
    w->t0_ns = cs_get_u64(c);
    const uint8_t *boot = cs_get_bytes(c, CS_WIRE_BOOT_ID);
    if (boot) memcpy(w->boot_id, boot, CS_WIRE_BOOT_ID);
    w->boot_id[CS_WIRE_BOOT_ID] = 0;
    w->alpha_ns = cs_get_u64(c);
    w->bandwidth = cs_get_u64(c);
    w->flops = cs_get_u64(c);
    w->out_limit = cs_get_u64(c);
    /* a model needs a latency and a bandwidth (netmodel.c refuses zeros) */
    bool net_ok = (w->flags & CS_WELCOME_NET) ? w->alpha_ns > 0 && w->bandwidth > 0
                                              : !w->alpha_ns && !w->bandwidth && !w->flops;
    if (!algo_ok || !net_ok || c->bad || w->world < 1 || w->world > CS_WIRE_MAX_WORLD ||
        w->rendezvous_only > 1 ||
        (w->flags & ~(CS_WELCOME_STRICT | CS_WELCOME_GATED | CS_WELCOME_NET)) ||
        c->len - c->pos != (size_t)w->world * 6)
        return -1;
    w->ip = calloc(w->world, sizeof *w->ip);
    w->port = calloc(w->world, sizeof *w->port);
    if (!w->ip || !w->port) {
        free(w->ip);
        free(w->port);
        return -1;
    }
    for (uint32_t i = 0; i < w->world; i++) {
        w->ip[i] = htonl(cs_get_u32(c));
        w->port[i] = cs_get_u16(c);
    }
    return c->bad ? -1 : 0;
}

/* ---- MSG / RTS envelope */

void cs_envelope_put(cs_cur *c, const cs_envelope *e) {
    cs_put_u32(c, (uint32_t)e->src);
    cs_put_u32(c, (uint32_t)e->tag);
    cs_put_u32(c, (uint32_t)e->ctx);
    cs_put_u64(c, e->bytes);
    cs_put_u8(c, e->dtype);
    cs_put_u8(c, e->ndim);
    cs_put_u16(c, e->coll_sig);
    for (int i = 0; i < CS_MAX_DIMS; i++) cs_put_u64(c, (uint64_t)e->shape[i]);
    cs_put_u32(c, (uint32_t)e->line);
    cs_put_u64(c, e->sreq_id);
}

int cs_envelope_get(cs_cur *c, cs_envelope *e, int world) {
    e->src = (int32_t)cs_get_u32(c);
    e->tag = (int32_t)cs_get_u32(c);
    e->ctx = (int32_t)cs_get_u32(c);
    e->bytes = cs_get_u64(c);
    e->dtype = cs_get_u8(c);
    e->ndim = cs_get_u8(c);
    e->coll_sig = cs_get_u16(c);
    uint64_t elems = 1;
    bool overflow = false;
    for (int i = 0; i < CS_MAX_DIMS; i++) {
        e->shape[i] = (int64_t)cs_get_u64(c);
        if (i < e->ndim) {
            if (e->shape[i] < 0 || (e->shape[i] && elems > UINT64_MAX / (uint64_t)e->shape[i]))
                overflow = true;
            else elems *= (uint64_t)e->shape[i];
        }
    }
    e->line = (int32_t)cs_get_u32(c);
    e->sreq_id = cs_get_u64(c);
    if (c->bad || c->pos != c->len) return -1;
    if (e->src < 0 || e->src >= world || e->tag < 0 || e->ctx < 0 || e->dtype >= CS_NDTYPES ||
        e->ndim > CS_MAX_DIMS || overflow || e->line < 0)
        return -1;
    /* the shape must describe exactly the bytes announced */
    if (elems > UINT64_MAX / 8 || elems * cs_dtype_size((cs_dtype)e->dtype) != e->bytes) return -1;
    return 0;
}

/* ---- GATE */

size_t cs_gate_len(const cs_gate_msg *g) {
    return CS_GATE_FIXED + (g->text_len < CS_WIRE_MAX_GATE_TEXT ? g->text_len : CS_WIRE_MAX_GATE_TEXT);
}

void cs_gate_put(cs_cur *c, const cs_gate_msg *g) {
    cs_put_u64(c, g->seq);
    cs_put_u8(c, g->op);
    cs_put_u32(c, (uint32_t)g->line);
    cs_put_u32(c, (uint32_t)g->peer);
    cs_put_u32(c, (uint32_t)g->tag);
    cs_put_bytes(c, g->text, cs_gate_len(g) - CS_GATE_FIXED);
}

int cs_gate_get(cs_cur *c, cs_gate_msg *g, int world) {
    g->seq = cs_get_u64(c);
    g->op = cs_get_u8(c);
    g->line = (int32_t)cs_get_u32(c);
    g->peer = (int32_t)cs_get_u32(c);
    g->tag = (int32_t)cs_get_u32(c);
    g->text_len = c->len - c->pos;
    g->text = (const char *)cs_get_bytes(c, g->text_len);
    if (c->bad || g->seq == 0 || g->op >= CS_OP_NOPS || g->line < 0 ||
        g->text_len > CS_WIRE_MAX_GATE_TEXT ||
        (g->peer != CS_ANY_SOURCE && g->peer != CS_NO_RANK && (g->peer < 0 || g->peer >= world)))
        return -1;
    return 0;
}

/* ---- events: every field placed by its row of the schema (event_schema.h) */

/* n (1, 2, 4 or 8) bytes little-endian at p: one store or load each. */
static void le_put(uint8_t *p, int n, uint64_t v) {
    switch (n) {
    case 1: *p = (uint8_t)v; break;
    case 2: le16(p, (uint16_t)v); break;
    case 4: le32(p, (uint32_t)v); break;
    default: le32(p, (uint32_t)v), le32(p + 4, (uint32_t)(v >> 32)); break;
    }
}

static uint64_t le_get(const uint8_t *p, int n) {
    switch (n) {
    case 1: return *p;
    case 2: return from_le16(p);
    case 4: return from_le32(p);
    default: return (uint64_t)from_le32(p) | (uint64_t)from_le32(p + 4) << 32;
    }
}

/* Bytes of a scalar kind's value in the frame (0: not a scalar). */
static const uint8_t widths[] = {
    [CS_FK_INT] = 4, [CS_FK_U64] = 8, [CS_FK_SIZE] = 8, [CS_FK_DOUBLE] = 8,
    [CS_FK_OP] = 1,  [CS_FK_DTYPE] = 1, [CS_FK_SEED] = 0,
};

static uint64_t bits_of(const cs_event *ev, const cs_field *f) {
    switch (f->kind) {
    case CS_FK_INT: return (uint32_t)CS_CFIELD(ev, f, int);
    case CS_FK_U64: return CS_CFIELD(ev, f, uint64_t);
    case CS_FK_SIZE: return CS_CFIELD(ev, f, size_t);
    case CS_FK_DOUBLE: return f64_bits(CS_CFIELD(ev, f, double));
    case CS_FK_OP: return (uint64_t)CS_CFIELD(ev, f, cs_op);
    default: return (uint64_t)CS_CFIELD(ev, f, cs_dtype);
    }
}

/* Store the frame's bits v; false when the row's range refuses them. */
static bool set_bits(cs_event *ev, const cs_field *f, uint64_t v, int world) {
    switch (f->kind) {
    case CS_FK_INT: CS_FIELD(ev, f, int) = (int32_t)v; return cs_field_int_ok(f, (int32_t)v, world);
    case CS_FK_U64: CS_FIELD(ev, f, uint64_t) = v; return v <= INT64_MAX; /* as a trace */
    case CS_FK_SIZE: CS_FIELD(ev, f, size_t) = (size_t)v; return v <= INT64_MAX;
    case CS_FK_DOUBLE: {
        double d = CS_FIELD(ev, f, double) = bits_f64(v);
        return isfinite(d) && d >= 0;
    }
    case CS_FK_OP: CS_FIELD(ev, f, cs_op) = (cs_op)v; return v < CS_OP_NOPS;
    default: CS_FIELD(ev, f, cs_dtype) = (cs_dtype)v; return v < CS_NDTYPES;
    }
}

static size_t tail_bytes(const cs_field *f, size_t n) {
    return f->kind == CS_FK_REQS ? 8 * n : f->kind == CS_FK_GROUP ? 4 * n : n;
}

/* The schema is constant here: each loop over its rows unrolls into the code a
 * hand-written codec would be (one move per field, no dispatch). */
#define EACH_ROW _Pragma("GCC unroll 64")
#ifdef __clang__ /* a sanitized -O1 build may not unroll: slower, still right */
#pragma clang diagnostic ignored "-Wpass-failed"
#endif

size_t cs_wire_event_len(const cs_event *ev) {
    size_t n = EVENT_FIXED;
    EACH_ROW
    for (int i = 0; i < CS_F_NFIELDS; i++)
        if (cs_fields[i].tail) n += tail_bytes(&cs_fields[i], cs_field_count(ev, &cs_fields[i]));
    return n;
}

void cs_wire_event_put(cs_cur *c, const cs_event *ev) {
    /* Every row with a tail sets its entry, whatever the event: ntail (a
     * constant once unrolled) bounds them, and nothing needs clearing first. */
    const cs_field *tail[CS_F_NFIELDS];
    uint32_t count[CS_F_NFIELDS];
    int ntail = 0;
    uint8_t *b = put_at(c, EVENT_FIXED);

    if (!b) return;
    memset(b, 0, EVENT_FIXED);
    b[0] = (uint8_t)ev->type;
    le_put(b + 5, 4, (uint32_t)ev->rank);
    le_put(b + 9, 8, ev->seq);
    le_put(b + 17, 8, f64_bits(ev->t));
    EACH_ROW
    for (int i = 0; i < CS_F_NFIELDS; i++) {
        const cs_field *f = &cs_fields[i];
        int w = widths[f->kind];
        if (w && f->at) le_put(b + f->at, w, bits_of(ev, f));
        else if (f->kind == CS_FK_BOOL && CS_CFIELD(ev, f, bool)) b[4] |= f->flag;
        else if (f->kind == CS_FK_SHAPE) {
            b[f->n_at] = (uint8_t)ev->ndim;
            for (int d = 0; d < CS_MAX_DIMS; d++)
                le_put(b + f->at + 8 * d, 8, (uint64_t)ev->shape[d]);
        } else if (f->tail) {
            if (f->kind == CS_FK_STR && CS_CFIELD(ev, f, char *)) b[4] |= f->flag;
            count[f->tail - 1] = (uint32_t)cs_field_count(ev, f);
            le_put(b + f->n_at, f->n_size, count[f->tail - 1]);
            tail[f->tail - 1] = f;
            if (f->tail > ntail) ntail = f->tail;
        }
    }
    for (int k = 0; k < ntail; k++) {
        const cs_field *f = tail[k];
        for (uint32_t i = 0; f->kind != CS_FK_STR && i < count[k]; i++)
            if (f->kind == CS_FK_REQS) cs_put_u64(c, ev->reqs[i]);
            else cs_put_u32(c, (uint32_t)ev->group[i]);
        if (f->kind == CS_FK_STR) cs_put_bytes(c, CS_CFIELD(ev, f, char *), count[k]);
    }
}

int cs_wire_event_get(cs_cur *c, cs_event *ev, int world, cs_wire_scratch *s) {
    const cs_field *tail[CS_F_NFIELDS]; /* as in cs_wire_event_put */
    uint32_t count[CS_F_NFIELDS];
    int ntail = 0;
    const uint8_t *b = cs_get_bytes(c, EVENT_FIXED);
    char *str = s->str;
    size_t len = 0;
    uint8_t known = 0;

    memset(ev, 0, sizeof *ev);
    if (!b || b[0] >= CS_EV_NTYPES || cs_event_kinds[b[0]].ctl_only) return -1;
    ev->type = (cs_event_type)b[0];
    ev->rank = (int32_t)le_get(b + 5, 4);
    ev->seq = le_get(b + 9, 8);
    ev->t = bits_f64(le_get(b + 17, 8));
    if (ev->rank < 0 || ev->rank >= world || !isfinite(ev->t) || ev->t < 0) return -1;
    EACH_ROW
    for (int i = 0; i < CS_F_NFIELDS; i++) {
        const cs_field *f = &cs_fields[i];
        int w = widths[f->kind];
        known |= f->flag;
        if (w && f->at) {
            if (!set_bits(ev, f, le_get(b + f->at, w), world)) return -1;
        } else if (f->kind == CS_FK_BOOL) {
            CS_FIELD(ev, f, bool) = b[4] & f->flag;
        } else if (f->kind == CS_FK_SHAPE) {
            if ((ev->ndim = b[f->n_at]) > CS_MAX_DIMS) return -1;
            for (int d = 0; d < CS_MAX_DIMS; d++)
                if ((ev->shape[d] = (int64_t)le_get(b + f->at + 8 * d, 8)) < 0 && d < ev->ndim)
                    return -1;
        } else if (f->tail) {
            uint32_t n = (uint32_t)le_get(b + f->n_at, f->n_size);
            if (n > f->max || (f->kind == CS_FK_STR && n && !(b[4] & f->flag))) return -1;
            count[f->tail - 1] = n;
            tail[f->tail - 1] = f;
            if (f->tail > ntail) ntail = f->tail;
            len += tail_bytes(f, n);
        }
    }
    if ((b[4] & ~known) || c->len - c->pos != len) return -1;
    for (int k = 0; k < ntail; k++) {
        const cs_field *f = tail[k];
        uint32_t n = count[k];
        if (f->kind == CS_FK_REQS) {
            if (n > CS_WIRE_MAX_EVENT_REQS) return -1;
            for (uint32_t i = 0; i < n; i++) s->reqs[i] = cs_get_u64(c);
            ev->reqs = n ? s->reqs : NULL;
            ev->nreqs = (int)n;
        } else if (f->kind == CS_FK_GROUP) {
            if (n > (uint32_t)world || n > CS_WIRE_MAX_WORLD) return -1;
            for (uint32_t i = 0; i < n; i++)
                if ((s->group[i] = (int)cs_get_u32(c)) < 0 || s->group[i] >= world) return -1;
            ev->group = n ? s->group : NULL;
            ev->ngroup = (int)n;
        } else {
            const uint8_t *p = cs_get_bytes(c, n);
            if (!(b[4] & f->flag)) continue; /* absent: NULL, not "" */
            if (!p || (size_t)(s->str + sizeof s->str - str) < n + 1) return -1;
            memcpy(str, p, n);
            str[n] = 0;
            CS_FIELD(ev, f, const char *) = str;
            str += n + 1;
        }
    }
    return c->bad ? -1 : 0;
}
