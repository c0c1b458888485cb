/* event_schema.h -- the one description of an event's fields.
 *
 * cs_event (events.h) is the record; the table here says, for each of its
 * fields, its key in a trace, its kind, its legal values, its limit and its
 * place in an EVENT frame. The trace codec (trace.c), the wire codec (wire.c)
 * and the deep copy (event_schema.c) all walk this table, so a field added to cs_event
 * and given one row here is written, read, range-checked, sent, received and
 * copied. docs/trace-format.md says when a new field bumps which version.
 */
#ifndef CS_EVENT_SCHEMA_H
#define CS_EVENT_SCHEMA_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "events.h"

/* Limits shared by both codecs (the trace's and the wire's names for them are
 * in trace.h and wire.h). */
#define CS_EV_MAX_TEXT (64 * 1024) /* text or script bytes */
#define CS_EV_MAX_NAME 256         /* engine, send_mode, coll name bytes */
#define CS_EV_MAX_ALGO 255         /* algo, reduce_op bytes: a u16 length on the wire */
/* The script's text in the run header: at most this many bytes, so that the
 * header line stays under the trace's line limit even if every byte needs a
 * six-byte JSON escape. */
#define CS_EV_MAX_SOURCE (128 * 1024)
#define CS_EV_MAX_REQS 16384       /* requests one block event lists */
#define CS_EV_MAX_WORLD 65536      /* ranks in a run, members in a group */
#define CS_EV_MAX_PITFALL 64       /* a pitfall kind's name: a u8 length on the wire */
/* t (seconds) and ms: at most this, about 317 years of seconds, so that any
 * time converted to integer nanoseconds or printed as microseconds stays a
 * finite number in range */
#define CS_EV_MAX_TIME 1e10

/* An error event's status: how it ends the run, one of api.h's
 * cs_end_reason (2 error, 3 deadlock under --strict, 4 timeout or budget,
 * 5 a rank died, 130 interrupted). A replay exits with it. */
static inline bool cs_ev_error_status_ok(int status) {
    return status == 2 || status == 3 || status == 4 || status == 5 || status == 130;
}
#define CS_EV_ERROR_STATUSES "2, 3, 4, 5 or 130"

/* A vtime event's what: the timekeeper's kinds of span (vclock.c), each
 * drawn its own way; another would be dropped from every picture. */
static inline bool cs_ev_vtime_what_ok(const char *w, size_t n) {
    static const char *const what[] = {"send", "recv", "wait", "compute", "time", "exit"};
    for (size_t i = 0; w && i < sizeof what / sizeof what[0]; i++)
        if (strlen(what[i]) == n && memcmp(w, what[i], n) == 0) return true;
    return false;
}
#define CS_EV_VTIME_WHATS "send, recv, wait, compute, time or exit"

typedef enum {
    CS_FK_INT,    /* int member, lo..hi, or lo..world-1 when world_hi */
    CS_FK_U64,    /* uint64_t member, 0 .. 2^63-1 (a JSON integer) */
    CS_FK_SIZE,   /* size_t member, likewise */
    CS_FK_BOOL,   /* bool member */
    CS_FK_DOUBLE, /* double member, 0 .. CS_EV_MAX_TIME */
    CS_FK_STR,    /* const char * member, at most max bytes (NULL and "" differ) */
    CS_FK_OP,     /* cs_op member, by name */
    CS_FK_DTYPE,  /* cs_dtype member, by name */
    CS_FK_SHAPE,  /* ndim + shape[]: at most max sizes, each >= 0 */
    CS_FK_REQS,   /* reqs + nreqs: at most max ids */
    CS_FK_GROUP,  /* group + ngroup: at most max ranks, each 0..world-1 */
    CS_FK_SEED    /* seed: a decimal string in a trace (64 bits do not fit JSON) */
} cs_field_kind;

typedef struct cs_field {
    const char *key;  /* in a trace line */
    cs_field_kind kind;
    size_t off;       /* of the member in cs_event */
    int lo, hi;       /* CS_FK_INT range */
    bool world_hi;    /* CS_FK_INT: the upper bound is world - 1 instead of hi */
    bool alias;       /* a second key for a member another row owns (coll "name"
                         is the text): not on the wire, not copied twice */
    size_t max;       /* CS_FK_STR bytes; shape, reqs, group entries */
    /* Its place in an EVENT frame: a fixed part of CS_WIRE_EVENT_FIXED bytes,
     * then the variable parts in .tail order. Byte 0 is the type, so 0 in
     * .at and .n_at means "not there". */
    uint8_t at;       /* the value: scalars, shape's sizes */
    uint8_t flag;     /* its bit in the flags byte: a bool's value, a string's presence */
    uint8_t n_at;     /* its count or length (shape, strings, reqs, group)... */
    uint8_t n_size;   /* ...as a u8, u16 or u32 */
    uint8_t tail;     /* 1, 2, ...: the order of the variable parts */
} cs_field;

/* The fields in the order of the keys of a written trace line. */
enum {
    CS_F_REQ, CS_F_OP, CS_F_NAME, CS_F_BEGIN, CS_F_PEER, CS_F_ROOT, CS_F_TAG, CS_F_CTX,
    CS_F_BYTES, CS_F_DTYPE, CS_F_SHAPE, CS_F_PEER_REQ, CS_F_REQS, CS_F_ANY, CS_F_MS,
    CS_F_EAGER, CS_F_LINE, CS_F_STATUS, CS_F_TEXT, CS_F_WORLD, CS_F_ENGINE, CS_F_SEND_MODE,
    CS_F_SEED, CS_F_SCRIPT, CS_F_COUNT, CS_F_ALGO, CS_F_REDUCE_OP, CS_F_GROUP,
    CS_F_VT, CS_F_VT_DONE, CS_F_VT_START, CS_F_VT_END, CS_F_VT_ARRIVE, CS_F_NET, CS_F_WHAT, CS_F_VRANK,
    CS_F_PITFALL,
    CS_F_SOURCE,
    CS_F_NFIELDS
};


/* Which fields a type carries. need: always written, must be present; opt:
 * written when not zero, zero when absent. A trace carries only these; an
 * EVENT frame carries every field that has a place in it. */
typedef struct cs_event_kind {
    uint64_t need, opt;
    bool rankless; /* may carry rank -1 or CS_NO_RANK: not from one rank */
    bool ctl_only; /* only the controller emits it: no rank may send one */
} cs_event_kind;


#define CS_FIELD_BIT(i) (UINT64_C(1) << (i))

/* The tables are in the header so that each codec sees them as constants: the
 * wire codec's loops over them unroll into straight-line code, as fast as a
 * hand-written one. (unused: not every includer reads both.) */
#define CS_SCHEMA_TABLE __attribute__((unused))

#define M_(member) offsetof(cs_event, member)
#define INT_(member, l, h) CS_FK_INT, M_(member), .lo = (l), .hi = (h)
#define RANK_(member, l) CS_FK_INT, M_(member), .lo = (l), .world_hi = true

/* Row order is key order in a trace line. .at, .n_at, .flag and .tail place a
 * field in the EVENT frame (docs/wire-protocol.md): bytes 0-4 are the type,
 * op, dtype, ndim and flags, 5 the rank, 9 seq, 17 t. */
static const cs_field cs_fields[CS_F_NFIELDS] CS_SCHEMA_TABLE = {
    [CS_F_REQ] = {"req", CS_FK_U64, M_(req), .at = 25},
    [CS_F_OP] = {"op", CS_FK_OP, M_(op), .at = 1},
    [CS_F_NAME] = {"name", CS_FK_STR, M_(text), .alias = true, .max = CS_EV_MAX_NAME},
    [CS_F_BEGIN] = {"begin", CS_FK_BOOL, M_(begin), .flag = 4},
    [CS_F_PEER] = {"peer", RANK_(peer, CS_ANY_SOURCE), .at = 33},
    [CS_F_ROOT] = {"root", RANK_(peer, -1), .alias = true},
    [CS_F_TAG] = {"tag", INT_(tag, 0, INT_MAX), .at = 37},
    [CS_F_CTX] = {"ctx", INT_(ctx, 0, INT_MAX), .at = 41},
    [CS_F_BYTES] = {"bytes", CS_FK_SIZE, M_(bytes), .at = 45},
    [CS_F_DTYPE] = {"dtype", CS_FK_DTYPE, M_(dtype), .at = 2},
    [CS_F_SHAPE] = {"shape", CS_FK_SHAPE, M_(shape), .max = CS_MAX_DIMS, .at = 53, .n_at = 3,
                    .n_size = 1},
    [CS_F_PEER_REQ] = {"peer_req", CS_FK_U64, M_(peer_req), .at = 89},
    [CS_F_REQS] = {"reqs", CS_FK_REQS, M_(reqs), .max = CS_EV_MAX_REQS, .n_at = 109, .n_size = 4,
                   .tail = 1},
    [CS_F_ANY] = {"any", CS_FK_BOOL, M_(any), .flag = 2},
    [CS_F_MS] = {"ms", CS_FK_DOUBLE, M_(ms), .at = 97},
    [CS_F_EAGER] = {"eager", CS_FK_BOOL, M_(eager), .flag = 1},
    [CS_F_LINE] = {"line", INT_(line, 0, INT_MAX), .at = 85},
    [CS_F_STATUS] = {"status", INT_(status, INT_MIN, INT_MAX), .at = 105},
    [CS_F_TEXT] = {"text", CS_FK_STR, M_(text), .max = CS_EV_MAX_TEXT, .flag = 8, .n_at = 113,
                   .n_size = 4, .tail = 3},
    [CS_F_WORLD] = {"world", INT_(world, 1, CS_EV_MAX_WORLD)},
    [CS_F_ENGINE] = {"engine", CS_FK_STR, M_(engine), .max = CS_EV_MAX_NAME},
    [CS_F_SEND_MODE] = {"send_mode", CS_FK_STR, M_(send_mode), .max = CS_EV_MAX_NAME},
    [CS_F_SEED] = {"seed", CS_FK_SEED, M_(seed), .at = 0}, /* the header's: never sent */
    [CS_F_SCRIPT] = {"script", CS_FK_STR, M_(text), .alias = true, .max = CS_EV_MAX_TEXT},
    [CS_F_COUNT] = {"count", CS_FK_SIZE, M_(count), .at = 118},
    [CS_F_ALGO] = {"algo", CS_FK_STR, M_(algo), .max = CS_EV_MAX_ALGO, .flag = 16, .n_at = 126,
                   .n_size = 2, .tail = 4},
    [CS_F_REDUCE_OP] = {"reduce_op", CS_FK_STR, M_(reduce_op), .max = CS_EV_MAX_ALGO, .flag = 32,
                        .n_at = 128, .n_size = 2, .tail = 5},
    [CS_F_GROUP] = {"group", CS_FK_GROUP, M_(group), .max = CS_EV_MAX_WORLD, .n_at = 130,
                    .n_size = 4, .tail = 2},
    /* modelled time: only the timekeeper writes them, never a rank (not on the
     * wire: .at 0, said so that clang's -Wextra sees every row initialised) */
    [CS_F_VT] = {"vt", CS_FK_U64, M_(vt), .at = 0},
    [CS_F_VT_DONE] = {"vt_done", CS_FK_U64, M_(vt_done), .at = 0},
    [CS_F_VT_START] = {"vt_start", CS_FK_U64, M_(vt_start), .at = 0},
    [CS_F_VT_END] = {"vt_end", CS_FK_U64, M_(vt_end), .at = 0},
    [CS_F_VT_ARRIVE] = {"vt_arrive", CS_FK_U64, M_(vt_arrive), .at = 0},
    [CS_F_NET] = {"net", CS_FK_STR, M_(net), .max = CS_EV_MAX_NAME},
    [CS_F_WHAT] = {"what", CS_FK_STR, M_(text), .alias = true, .max = CS_EV_MAX_NAME},
    [CS_F_VRANK] = {"vrank", RANK_(vrank, 0)},
    [CS_F_PITFALL] = {"pitfall", CS_FK_STR, M_(pitfall), .max = CS_EV_MAX_PITFALL, .flag = 64,
                      .n_at = 117, .n_size = 1, .tail = 6},
    /* the header's: never sent */
    [CS_F_SOURCE] = {"source", CS_FK_STR, M_(source), .max = CS_EV_MAX_SOURCE},
};
#undef RANK_
#undef INT_
#undef M_

/* Which fields a type carries (need: always; opt: when not zero). */
#define B_(f) CS_FIELD_BIT(CS_F_##f)
static const cs_event_kind cs_event_kinds[CS_EV_NTYPES] CS_SCHEMA_TABLE = {
    [CS_EV_RUN] = {B_(WORLD) | B_(ENGINE) | B_(SEND_MODE) | B_(SEED) | B_(SCRIPT), B_(NET) | B_(SOURCE), true,
                   true},
    [CS_EV_POST] = {B_(REQ) | B_(OP) | B_(PEER) | B_(TAG) | B_(CTX) | B_(BYTES) | B_(DTYPE) |
                        B_(SHAPE) | B_(EAGER) | B_(LINE), 0, false, false},
    [CS_EV_MATCH] = {B_(REQ) | B_(OP) | B_(PEER) | B_(TAG) | B_(CTX) | B_(BYTES) | B_(PEER_REQ), 0,
                     false, false},
    [CS_EV_COMPLETE] = {B_(REQ) | B_(OP), B_(STATUS), false, false},
    [CS_EV_BLOCK] = {B_(REQS) | B_(ANY) | B_(LINE), 0, false, false},
    [CS_EV_UNBLOCK] = {0, B_(LINE), false, false},
    [CS_EV_COLL] = {B_(NAME) | B_(BEGIN) | B_(ROOT) | B_(CTX) | B_(BYTES) | B_(DTYPE) | B_(LINE) |
                        B_(COUNT) | B_(ALGO), B_(REDUCE_OP) | B_(GROUP), false, false},
    [CS_EV_COMPUTE] = {B_(BEGIN) | B_(MS), B_(LINE), false, false},
    [CS_EV_PRINT] = {B_(TEXT), B_(LINE), false, false},
    [CS_EV_WARN] = {B_(TEXT), B_(LINE) | B_(PITFALL), true, false},
    [CS_EV_ERROR] = {B_(STATUS) | B_(TEXT), B_(LINE), true, false},
    [CS_EV_EXIT] = {B_(STATUS), B_(LINE), false, false},
    [CS_EV_DEADLOCK] = {B_(TEXT), B_(LINE), true, true},
    [CS_EV_WAIT] = {B_(REQS) | B_(LINE), 0, false, false},
    [CS_EV_CLOCK] = {B_(LINE), 0, false, false},
    [CS_EV_VTIME] = {B_(WHAT) | B_(VRANK) | B_(VT), B_(VT_DONE) | B_(VT_START) | B_(VT_END) |
                         B_(VT_ARRIVE) | B_(REQ) | B_(PEER) | B_(BYTES) | B_(LINE), true, true},
};
#undef B_

/* v within f's range (CS_FK_INT); world > 0 bounds world_hi fields. */
static inline bool cs_field_int_ok(const cs_field *f, long long v, int world) {
    long long hi = f->world_hi ? (world > 0 ? world - 1 : INT32_MAX) : f->hi;
    return v >= f->lo && v <= hi;
}

/* Member access through a row; CS_CFIELD(ev, f, char *) reads a string. */
#define CS_FIELD(ev, f, T) (*(T *)((char *)(ev) + (f)->off))
#define CS_CFIELD(ev, f, T) (*(const T *)((const char *)(ev) + (f)->off))

/* Entries of a shape, reqs or group row, bytes of a string row: at most max.
 * (Inline: the wire codec asks it for every event a tcp rank emits.) */
static inline size_t cs_field_count(const cs_event *ev, const cs_field *f) {
    const char *s;
    long n;
    switch (f->kind) {
    case CS_FK_STR: return (s = CS_CFIELD(ev, f, char *)) ? strnlen(s, f->max) : 0;
    case CS_FK_SHAPE: n = ev->ndim; break;
    case CS_FK_REQS: n = ev->reqs ? ev->nreqs : 0; break;
    case CS_FK_GROUP: n = ev->group ? ev->ngroup : 0; break;
    default: return 0;
    }
    return n <= 0 ? 0 : (size_t)n > f->max ? f->max : (size_t)n;
}

/* The field holds its zero value (an optional field is then not written).
 * (Inline: with a constant row, as the trace line encoder has, it is one
 * comparison.) */
static inline bool cs_field_is_zero(const cs_event *ev, const cs_field *f) {
    switch (f->kind) {
    case CS_FK_INT: return CS_CFIELD(ev, f, int) == 0;
    case CS_FK_U64: return CS_CFIELD(ev, f, uint64_t) == 0;
    case CS_FK_SIZE: return CS_CFIELD(ev, f, size_t) == 0;
    case CS_FK_BOOL: return !CS_CFIELD(ev, f, bool);
    case CS_FK_DOUBLE: return CS_CFIELD(ev, f, double) == 0.0;
    case CS_FK_STR: case CS_FK_REQS: case CS_FK_GROUP: return cs_field_count(ev, f) == 0;
    default: return false; /* the other kinds are never optional */
    }
}

/* A deep copy of src into dst: every string and array it points to gets an
 * allocation of its own (NULL stays NULL). 0, or -1 when out of memory with
 * dst holding nothing to free. Release with cs_event_free. */
int cs_event_copy(cs_event *dst, const cs_event *src);
/* Free what a copy owns (NULL-safe); the event's pointers become NULL. */
void cs_event_free(cs_event *ev);

#endif
