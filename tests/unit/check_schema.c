/* check_schema.c -- the event schema (src/event_schema.h) against the codecs
 * and the copy it drives. The events here are made from the table itself, so a
 * field added to it is populated, round-tripped through a trace file, an EVENT
 * frame and a deep copy, and pushed out of range, without a new test. */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace.h"
#include "wire.h"
#include "run_suite.h"

static uint64_t reqs[3] = {1, 2, (uint64_t)1 << 40};
static char strs[CS_F_NFIELDS][32];

/* The value every row gets: in range, not zero, different per row. */
static int int_value(const cs_field *f, int i, int world) {
    if (f->world_hi) return world - 1;
    long long v = (long long)f->lo + 1 + i;
    return (int)(v > f->hi ? f->hi : v);
}

#define WORLD int_value(&cs_fields[CS_F_WORLD], CS_F_WORLD, 0)

static int group[2];

static void set_field(cs_event *ev, int i) {
    const cs_field *f = &cs_fields[i];
    switch (f->kind) {
    case CS_FK_INT: CS_FIELD(ev, f, int) = int_value(f, i, WORLD); break;
    case CS_FK_U64: CS_FIELD(ev, f, uint64_t) = ((uint64_t)1 << 40) + (uint64_t)i; break;
    case CS_FK_SIZE: CS_FIELD(ev, f, size_t) = ((size_t)1 << 33) + (size_t)i; break;
    case CS_FK_BOOL: CS_FIELD(ev, f, bool) = true; break;
    case CS_FK_DOUBLE: CS_FIELD(ev, f, double) = 0.5 + i; break;
    case CS_FK_STR:
        snprintf(strs[i], sizeof strs[i], "%s-\xc3\xa9-%d", f->key, i); /* é: UTF-8 kept */
        CS_FIELD(ev, f, const char *) = strs[i];
        break;
    case CS_FK_OP: CS_FIELD(ev, f, cs_op) = (cs_op)(CS_OP_NOPS - 1); break;
    case CS_FK_DTYPE: CS_FIELD(ev, f, cs_dtype) = (cs_dtype)(CS_NDTYPES - 1); break;
    case CS_FK_SHAPE:
        ev->ndim = CS_MAX_DIMS;
        for (int d = 0; d < CS_MAX_DIMS; d++) ev->shape[d] = d + 2;
        break;
    case CS_FK_REQS: ev->reqs = reqs, ev->nreqs = 3; break;
    case CS_FK_GROUP:
        group[0] = WORLD - 1, group[1] = 0;
        ev->group = group, ev->ngroup = 2;
        break;
    case CS_FK_SEED: ev->seed = UINT64_MAX - (uint64_t)i; break;
    }
}

static bool on_wire(const cs_field *f) { return f->at || f->n_at || f->flag; }

/* An event of type t with every field in mask set. */
static cs_event populated(cs_event_type t, uint64_t mask) {
    cs_event ev = {.type = t, .rank = 1, .seq = 0, .t = 1.25};
    if (cs_event_kinds[t].ctl_only && cs_event_kinds[t].rankless) ev.rank = -1;
    for (int i = 0; i < CS_F_NFIELDS; i++)
        if (mask & CS_FIELD_BIT(i)) set_field(&ev, i);
    return ev;
}

static uint64_t carried(cs_event_type t) { return cs_event_kinds[t].need | cs_event_kinds[t].opt; }

static uint64_t wire_fields(void) {
    uint64_t m = 0;
    for (int i = 0; i < CS_F_NFIELDS; i++)
        if (on_wire(&cs_fields[i])) m |= CS_FIELD_BIT(i);
    return m;
}

/* Equal in every row's member (and the envelope). */
static void assert_same(const cs_event *a, const cs_event *b, const char *how) {
    ck_assert_msg(a->type == b->type && a->rank == b->rank && a->seq == b->seq && a->t == b->t,
                  "%s %s: envelope", how, cs_event_type_name(a->type));
    for (int i = 0; i < CS_F_NFIELDS; i++) {
        const cs_field *f = &cs_fields[i];
        bool eq = true;
        switch (f->kind) {
        case CS_FK_INT: eq = CS_CFIELD(a, f, int) == CS_CFIELD(b, f, int); break;
        case CS_FK_U64: eq = CS_CFIELD(a, f, uint64_t) == CS_CFIELD(b, f, uint64_t); break;
        case CS_FK_SIZE: eq = CS_CFIELD(a, f, size_t) == CS_CFIELD(b, f, size_t); break;
        case CS_FK_BOOL: eq = CS_CFIELD(a, f, bool) == CS_CFIELD(b, f, bool); break;
        case CS_FK_DOUBLE: eq = CS_CFIELD(a, f, double) == CS_CFIELD(b, f, double); break;
        case CS_FK_OP: eq = CS_CFIELD(a, f, cs_op) == CS_CFIELD(b, f, cs_op); break;
        case CS_FK_DTYPE: eq = CS_CFIELD(a, f, cs_dtype) == CS_CFIELD(b, f, cs_dtype); break;
        case CS_FK_SEED: eq = a->seed == b->seed; break;
        case CS_FK_STR: {
            const char *x = CS_CFIELD(a, f, char *), *y = CS_CFIELD(b, f, char *);
            eq = (!x && !y) || (x && y && strcmp(x, y) == 0);
            break;
        }
        case CS_FK_SHAPE:
            eq = a->ndim == b->ndim;
            for (int d = 0; eq && d < a->ndim; d++) eq = a->shape[d] == b->shape[d];
            break;
        case CS_FK_REQS:
            eq = a->nreqs == b->nreqs;
            for (int k = 0; eq && k < a->nreqs; k++) eq = a->reqs[k] == b->reqs[k];
            break;
        case CS_FK_GROUP:
            eq = a->ngroup == b->ngroup;
            for (int k = 0; eq && k < a->ngroup; k++) eq = a->group[k] == b->group[k];
            break;
        }
        ck_assert_msg(eq, "%s %s: field \"%s\" changed", how, cs_event_type_name(a->type), f->key);
    }
}

/* ---- the table itself */

START_TEST(test_table_consistent) {
    /* The EVENT frame: the envelope (type, op, dtype, ndim, flags; rank, seq,
     * t) and the reserved byte 117, then every row's slots, each byte once. */
    static char used[256];
    size_t fixed = cs_wire_event_len(&(cs_event){.type = CS_EV_EXIT});
    memset(used, 0, sizeof used);
    memset(used, 'e', 25);
    uint8_t flags = 0;
    int ntail = 0, tails = 0;
    for (int i = 0; i < CS_F_NFIELDS; i++) {
        const cs_field *f = &cs_fields[i];
        size_t w = 0;
        switch (f->kind) {
        case CS_FK_INT: w = 4; break;
        case CS_FK_U64: case CS_FK_SIZE: case CS_FK_DOUBLE: w = 8; break;
        case CS_FK_OP: case CS_FK_DTYPE: w = 0; break; /* in the envelope's bytes */
        case CS_FK_SHAPE: w = 8 * CS_MAX_DIMS; break;
        default: w = 0;
        }
        ck_assert_msg(!f->alias || !on_wire(f), "alias \"%s\" on the wire", f->key);
        if (f->at && w)
            for (size_t b = f->at; b < f->at + w; b++) {
                ck_assert_msg(b < fixed && !used[b], "\"%s\" overlaps byte %zu", f->key, b);
                used[b] = 1;
            }
        if (f->n_at && f->kind != CS_FK_SHAPE)
            for (size_t b = f->n_at; b < f->n_at + f->n_size; b++) {
                ck_assert_msg(b < fixed && !used[b], "\"%s\" length overlaps byte %zu", f->key, b);
                used[b] = 1;
            }
        if (f->flag) {
            ck_assert_msg(!(flags & f->flag), "\"%s\" shares a flag bit", f->key);
            flags |= f->flag;
        }
        if (f->n_at && f->kind != CS_FK_SHAPE) {
            ck_assert_msg(f->tail > 0, "\"%s\" has a length but no place in the tail", f->key);
            tails |= 1 << f->tail;
            if (f->tail > ntail) ntail = f->tail;
        }
    }
    for (size_t b = 0; b < fixed; b++) ck_assert_msg(used[b], "byte %zu of the frame unused", b);
    ck_assert_int_eq(tails, ((1 << (ntail + 1)) - 1) & ~1); /* tails 1..n, no gap */
    for (int t = 0; t < CS_EV_NTYPES; t++) {
        ck_assert_uint_eq(cs_event_kinds[t].need & cs_event_kinds[t].opt, 0);
        ck_assert_uint_eq(carried(t) >> CS_F_NFIELDS, 0);
    }
}
END_TEST

/* Every member of cs_event belongs to a row (or the envelope): a member the
 * table forgets leaves a gap no padding explains. (Catches any member of 8
 * bytes; a small one can hide in padding, so the round trips below check too.) */
static char cover[sizeof(cs_event)];

static void cover_bytes(size_t off, size_t n) {
    memset(cover + off, 1, n);
}

START_TEST(test_every_member_in_the_table) {
    memset(cover, 0, sizeof cover);
#define COVER(off, n) cover_bytes((off), (n))
    COVER(offsetof(cs_event, type), sizeof(cs_event_type));
    COVER(offsetof(cs_event, rank), sizeof(int));
    COVER(offsetof(cs_event, seq), 8);
    COVER(offsetof(cs_event, t), 8);
    for (int i = 0; i < CS_F_NFIELDS; i++) {
        const cs_field *f = &cs_fields[i];
        switch (f->kind) {
        case CS_FK_INT: COVER(f->off, sizeof(int)); break;
        case CS_FK_BOOL: COVER(f->off, sizeof(bool)); break;
        case CS_FK_OP: COVER(f->off, sizeof(cs_op)); break;
        case CS_FK_DTYPE: COVER(f->off, sizeof(cs_dtype)); break;
        case CS_FK_STR: COVER(f->off, sizeof(char *)); break;
        case CS_FK_SHAPE:
            COVER(f->off, sizeof(int64_t) * CS_MAX_DIMS);
            COVER(offsetof(cs_event, ndim), sizeof(int));
            break;
        case CS_FK_REQS:
            COVER(f->off, sizeof(uint64_t *));
            COVER(offsetof(cs_event, nreqs), sizeof(int));
            break;
        case CS_FK_GROUP:
            COVER(f->off, sizeof(int *));
            COVER(offsetof(cs_event, ngroup), sizeof(int));
            break;
        default: COVER(f->off, 8); break;
        }
    }
#undef COVER
    size_t gap = 0;
    for (size_t b = 0; b < sizeof cover; b++) {
        gap = cover[b] ? 0 : gap + 1;
        ck_assert_msg(gap < 8, "bytes %zu..%zu of cs_event are in no row", b + 1 - gap, b);
    }
}
END_TEST

/* ---- round trips */

START_TEST(test_trace_round_trip) {
    char path[] = "/tmp/check_schema_XXXXXX", err[256];
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    cs_trace_writer *w = cs_trace_open(path, err, sizeof err);
    ck_assert_ptr_nonnull(w);
    cs_sink sink = cs_trace_sink(w);
    cs_event sent[CS_EV_NTYPES];
    uint64_t seq = 0;
    for (int t = 0; t < CS_EV_NTYPES; t++) {
        sent[t] = populated((cs_event_type)t, carried(t));
        if (sent[t].rank >= 0) sent[t].seq = seq++;
        else if (t == CS_EV_RUN) sent[t].t = 0;
        if (t == CS_EV_ERROR) sent[t].status = 130; /* an error's status is one a run ends with */
        if (t == CS_EV_VTIME) sent[t].text = "compute"; /* a vtime's what is one of its kinds */
        if (t == CS_EV_RUN) sent[t].send_mode = "eager:4096", sent[t].net = "ethernet-1g"; /* modes that parse */
        sink.emit(sink.ud, &sent[t]);
    }
    ck_assert_msg(!cs_trace_error(w), "%s", cs_trace_error(w));
    ck_assert_int_eq(cs_trace_close(w), 0);

    cs_trace_reader *r = cs_trace_reader_open(path, err, sizeof err);
    ck_assert_ptr_nonnull(r);
    for (int t = 0; t < CS_EV_NTYPES; t++) {
        cs_event got;
        ck_assert_msg(cs_trace_read(r, &got, err, sizeof err) == 1, "%s", err);
        assert_same(&sent[t], &got, "trace");
    }
    cs_event end;
    ck_assert_int_eq(cs_trace_read(r, &end, err, sizeof err), 0);
    cs_trace_reader_close(r);
    unlink(path);
}
END_TEST

START_TEST(test_wire_round_trip) {
    static cs_wire_scratch sc;
    for (int t = 0; t < CS_EV_NTYPES; t++) {
        if (cs_event_kinds[t].ctl_only) continue;
        /* A frame carries every field whatever the type. */
        cs_event ev = populated((cs_event_type)t, wire_fields()), got;
        size_t n = cs_wire_event_len(&ev);
        uint8_t *m = malloc(n);
        cs_cur c = {.p = m, .len = n};
        cs_wire_event_put(&c, &ev);
        ck_assert(!c.bad && c.pos == n);
        cs_cur in = {.p = m, .len = n};
        ck_assert_int_eq(cs_wire_event_get(&in, &got, WORLD, &sc), 0);
        assert_same(&ev, &got, "wire");
        free(m);
    }
}
END_TEST

START_TEST(test_copy) {
    uint64_t all = CS_FIELD_BIT(CS_F_NFIELDS) - 1;
    for (int t = 0; t < CS_EV_NTYPES; t++) {
        cs_event ev = populated((cs_event_type)t, all), copy;
        ck_assert_int_eq(cs_event_copy(&copy, &ev), 0);
        assert_same(&ev, &copy, "copy");
        for (int i = 0; i < CS_F_NFIELDS; i++) { /* deep: nothing shared */
            const cs_field *f = &cs_fields[i];
            if (f->kind == CS_FK_STR)
                ck_assert_ptr_ne(CS_CFIELD(&ev, f, char *), CS_CFIELD(&copy, f, char *));
        }
        ck_assert_ptr_ne(ev.reqs, copy.reqs);
        ck_assert_ptr_ne(ev.group, copy.group);
        cs_event_free(&copy);
        ck_assert_ptr_null(copy.text);
        ck_assert_ptr_null(copy.reqs);
    }
    /* NULL stays NULL, "" stays "" (the wire's presence bits tell them apart) */
    cs_event e = {.type = CS_EV_COLL, .text = "", .algo = NULL}, c;
    ck_assert_int_eq(cs_event_copy(&c, &e), 0);
    ck_assert_str_eq(c.text, "");
    ck_assert_ptr_null(c.algo);
    ck_assert_ptr_null(c.reqs);
    cs_event_free(&c);
    cs_event_free(NULL);
}
END_TEST

/* ---- ranges: what one reader refuses, the other refuses too */

/* Push field i of ev out of its range; false when no such value is
 * expressible (booleans, strings, counters that a trace clamps). */
static bool spoil(cs_event *ev, int i, int world) {
    const cs_field *f = &cs_fields[i];
    static int bad_group[1];
    switch (f->kind) {
    case CS_FK_INT:
        if (f->world_hi) CS_FIELD(ev, f, int) = world;
        else if (f->lo > INT_MIN) CS_FIELD(ev, f, int) = f->lo - 1;
        else return false;
        return true;
    case CS_FK_DOUBLE: CS_FIELD(ev, f, double) = -1.0; return true;
    case CS_FK_SHAPE: ev->shape[ev->ndim - 1] = -1; return true;
    case CS_FK_OP: CS_FIELD(ev, f, cs_op) = CS_OP_NOPS; return true;
    case CS_FK_DTYPE: CS_FIELD(ev, f, cs_dtype) = CS_NDTYPES; return true;
    case CS_FK_GROUP:
        bad_group[0] = world;
        ev->group = bad_group, ev->ngroup = 1;
        return true;
    default: return false;
    }
}

START_TEST(test_out_of_range_refused) {
    static cs_wire_scratch sc;
    char err[256];
    int trace_checked = 0, wire_checked = 0;
    for (int i = 0; i < CS_F_NFIELDS; i++) {
        /* the trace: in the first type that carries the field */
        for (int t = 0; t < CS_EV_NTYPES; t++) {
            if (!(carried(t) & CS_FIELD_BIT(i))) continue;
            cs_event ev = populated((cs_event_type)t, carried(t)), got;
            if (!spoil(&ev, i, WORLD)) break;
            json_t *o = cs_event_to_json(&ev);
            cs_trace_strings store = {0};
            int world = t == CS_EV_RUN ? 0 : WORLD;
            ck_assert_ptr_nonnull(o);
            ck_assert_msg(cs_event_from_json(o, world, &got, &store, err, sizeof err) == -1,
                          "trace: %s out of range accepted", cs_fields[i].key);
            json_decref(o);
            cs_trace_strings_free(&store);
            trace_checked++;
            break;
        }
        /* the wire: every field is in every frame */
        if (!on_wire(&cs_fields[i])) continue;
        cs_event ev = populated(CS_EV_POST, wire_fields()), got;
        if (!spoil(&ev, i, WORLD)) continue;
        size_t n = cs_wire_event_len(&ev);
        uint8_t *m = malloc(n);
        cs_cur c = {.p = m, .len = n};
        cs_wire_event_put(&c, &ev);
        cs_cur in = {.p = m, .len = n};
        ck_assert_msg(cs_wire_event_get(&in, &got, WORLD, &sc) == -1,
                      "wire: %s out of range accepted", cs_fields[i].key);
        free(m);
        wire_checked++;
    }
    ck_assert_int_ge(trace_checked, 10);
    ck_assert_int_ge(wire_checked, 8);
}
END_TEST

static Suite *schema_suite(void) {
    Suite *s = suite_create("event_schema");
    TCase *tc = tcase_create("schema");
    tcase_add_test(tc, test_table_consistent);
    tcase_add_test(tc, test_every_member_in_the_table);
    tcase_add_test(tc, test_trace_round_trip);
    tcase_add_test(tc, test_wire_round_trip);
    tcase_add_test(tc, test_copy);
    tcase_add_test(tc, test_out_of_range_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    return run_suite(schema_suite());
}
