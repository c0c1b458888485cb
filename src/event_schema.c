/* event_schema.c -- the table of event fields, and the deep copy it drives.
 * See event_schema.h. */
#include "event_schema.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define M(member) offsetof(cs_event, member)
#define INT(member, l, h) CS_FK_INT, M(member), .lo = (l), .hi = (h)
#define RANK(member, l) CS_FK_INT, M(member), .lo = (l), .world_hi = true

/* Row order is key order in a trace line. .at, .n_at, .flag and .tail place a
 * field in the EVENT frame (docs/wire-protocol.md): bytes 0-4 are the type,
 * op, dtype, ndim and flags, 5 the rank, 9 seq, 17 t; 117 is reserved. */
const cs_field cs_fields[CS_F_NFIELDS] = {
    [CS_F_REQ] = {"req", CS_FK_U64, M(req), .at = 25},
    [CS_F_OP] = {"op", CS_FK_OP, M(op), .at = 1},
    [CS_F_NAME] = {"name", CS_FK_STR, M(text), .alias = true, .max = CS_EV_MAX_NAME},
    [CS_F_BEGIN] = {"begin", CS_FK_BOOL, M(begin), .flag = 4},
    [CS_F_PEER] = {"peer", RANK(peer, CS_ANY_SOURCE), .at = 33},
    [CS_F_ROOT] = {"root", RANK(peer, -1), .alias = true},
    [CS_F_TAG] = {"tag", INT(tag, 0, INT_MAX), .at = 37},
    [CS_F_CTX] = {"ctx", INT(ctx, 0, INT_MAX), .at = 41},
    [CS_F_BYTES] = {"bytes", CS_FK_SIZE, M(bytes), .at = 45},
    [CS_F_DTYPE] = {"dtype", CS_FK_DTYPE, M(dtype), .at = 2},
    [CS_F_SHAPE] = {"shape", CS_FK_SHAPE, M(shape), .max = CS_MAX_DIMS, .at = 53, .n_at = 3,
                    .n_size = 1},
    [CS_F_PEER_REQ] = {"peer_req", CS_FK_U64, M(peer_req), .at = 89},
    [CS_F_REQS] = {"reqs", CS_FK_REQS, M(reqs), .max = CS_EV_MAX_REQS, .n_at = 109, .n_size = 4,
                   .tail = 1},
    [CS_F_ANY] = {"any", CS_FK_BOOL, M(any), .flag = 2},
    [CS_F_MS] = {"ms", CS_FK_DOUBLE, M(ms), .at = 97},
    [CS_F_EAGER] = {"eager", CS_FK_BOOL, M(eager), .flag = 1},
    [CS_F_LINE] = {"line", INT(line, 0, INT_MAX), .at = 85},
    [CS_F_STATUS] = {"status", INT(status, INT_MIN, INT_MAX), .at = 105},
    [CS_F_TEXT] = {"text", CS_FK_STR, M(text), .max = CS_EV_MAX_TEXT, .flag = 8, .n_at = 113,
                   .n_size = 4, .tail = 3},
    [CS_F_WORLD] = {"world", INT(world, 1, CS_EV_MAX_WORLD)},
    [CS_F_ENGINE] = {"engine", CS_FK_STR, M(engine), .max = CS_EV_MAX_NAME},
    [CS_F_SEND_MODE] = {"send_mode", CS_FK_STR, M(send_mode), .max = CS_EV_MAX_NAME},
    [CS_F_SEED] = {"seed", CS_FK_SEED, M(seed), .at = 0}, /* the header's: never sent */
    [CS_F_SCRIPT] = {"script", CS_FK_STR, M(text), .alias = true, .max = CS_EV_MAX_TEXT},
    [CS_F_COUNT] = {"count", CS_FK_SIZE, M(count), .at = 118},
    [CS_F_ALGO] = {"algo", CS_FK_STR, M(algo), .max = CS_EV_MAX_ALGO, .flag = 16, .n_at = 126,
                   .n_size = 2, .tail = 4},
    [CS_F_REDUCE_OP] = {"reduce_op", CS_FK_STR, M(reduce_op), .max = CS_EV_MAX_ALGO, .flag = 32,
                        .n_at = 128, .n_size = 2, .tail = 5},
    [CS_F_GROUP] = {"group", CS_FK_GROUP, M(group), .max = CS_EV_MAX_WORLD, .n_at = 130,
                    .n_size = 4, .tail = 2},
};
#undef RANK
#undef INT
#undef M

#define B(f) CS_FIELD_BIT(CS_F_##f)
const cs_event_kind cs_event_kinds[CS_EV_NTYPES] = {
    [CS_EV_RUN] = {B(WORLD) | B(ENGINE) | B(SEND_MODE) | B(SEED) | B(SCRIPT), 0, true, true},
    [CS_EV_POST] = {B(REQ) | B(OP) | B(PEER) | B(TAG) | B(CTX) | B(BYTES) | B(DTYPE) | B(SHAPE) |
                        B(EAGER) | B(LINE), 0, false, false},
    [CS_EV_MATCH] = {B(REQ) | B(OP) | B(PEER) | B(TAG) | B(CTX) | B(BYTES) | B(PEER_REQ), 0,
                     false, false},
    [CS_EV_COMPLETE] = {B(REQ) | B(OP), B(STATUS), false, false},
    [CS_EV_BLOCK] = {B(REQS) | B(ANY) | B(LINE), 0, false, false},
    [CS_EV_UNBLOCK] = {0, B(LINE), false, false},
    [CS_EV_COLL] = {B(NAME) | B(BEGIN) | B(ROOT) | B(CTX) | B(BYTES) | B(DTYPE) | B(LINE) |
                        B(COUNT) | B(ALGO), B(REDUCE_OP) | B(GROUP), false, false},
    [CS_EV_COMPUTE] = {B(BEGIN) | B(MS), B(LINE), false, false},
    [CS_EV_PRINT] = {B(TEXT), B(LINE), false, false},
    [CS_EV_WARN] = {B(TEXT), B(LINE), true, false},
    [CS_EV_ERROR] = {B(STATUS) | B(TEXT), B(LINE), true, false},
    [CS_EV_EXIT] = {B(STATUS), 0, false, false},
    [CS_EV_DEADLOCK] = {B(TEXT), B(LINE), true, true},
};
#undef B

bool cs_field_is_zero(const cs_event *ev, const cs_field *f) {
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

/* ---- the deep copy */

static void *dup_of(const void *p, size_t n, bool *ok) {
    void *d;
    if (!p || !n) return NULL;
    if (!(d = malloc(n))) *ok = false;
    else memcpy(d, p, n);
    return d;
}

int cs_event_copy(cs_event *dst, const cs_event *src) {
    bool ok = true;

    /* Every row runs even after a failure, so no pointer into src is left
     * behind for cs_event_free to release. */
    *dst = *src;
    for (int i = 0; i < CS_F_NFIELDS; i++) {
        const cs_field *f = &cs_fields[i];
        if (f->alias) continue;
        switch (f->kind) {
        case CS_FK_STR: {
            const char *s = CS_CFIELD(src, f, char *);
            CS_FIELD(dst, f, const char *) = s ? dup_of(s, strlen(s) + 1, &ok) : NULL;
            break;
        }
        case CS_FK_REQS:
            dst->nreqs = src->reqs && src->nreqs > 0 ? src->nreqs : 0;
            dst->reqs = dup_of(src->reqs, (size_t)dst->nreqs * sizeof *src->reqs, &ok);
            break;
        case CS_FK_GROUP:
            dst->ngroup = src->group && src->ngroup > 0 ? src->ngroup : 0;
            dst->group = dup_of(src->group, (size_t)dst->ngroup * sizeof *src->group, &ok);
            break;
        default: break; /* values: copied with the struct */
        }
    }
    if (!ok) {
        cs_event_free(dst);
        return -1;
    }
    return 0;
}

void cs_event_free(cs_event *ev) {
    if (!ev) return;
    for (int i = 0; i < CS_F_NFIELDS; i++) {
        const cs_field *f = &cs_fields[i];
        if (f->kind != CS_FK_STR || f->alias) continue;
        free((char *)CS_CFIELD(ev, f, char *));
        CS_FIELD(ev, f, const char *) = NULL;
    }
    free((uint64_t *)ev->reqs); /* the one CS_FK_REQS and CS_FK_GROUP members */
    free((int *)ev->group);
    ev->reqs = NULL, ev->group = NULL;
    ev->nreqs = ev->ngroup = 0;
}
