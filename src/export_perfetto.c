/* export_perfetto.c -- a trace as Chrome Trace Event Format JSON, which
 * ui.perfetto.dev and chrome://tracing open: one process for the run, a
 * thread per rank, a slice per operation from its post to its completion (a
 * blocked stretch nested in it), a slice per collective call, a flow arrow
 * from each send to the receive it matched, instant events for the verdict
 * and the pitfalls; a wait still blocked where the events end (a deadlock's)
 * is a slice without an end. Times are the trace's t in microseconds; for a trace
 * recorded with a network model (run --net), the modelled virtual times
 * instead, to scale (collect_virtual). Records are collected, then sorted by
 * time, so every track's timestamps are monotone. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "model.h"

/* R_OPEN: a slice that never ends (a rank blocked for good), a begin
 * without an end, which the viewers draw to the end as "did not end". */
typedef enum { R_SLICE, R_OPEN, R_FLOW_OUT, R_FLOW_IN, R_INSTANT } rkind;

typedef struct rec {
    double ts, dur;       /* microseconds */
    size_t ev;            /* the event that names it (the post, coll begin, warn, ...) */
    size_t order;         /* ties keep the trace's order */
    unsigned long long id; /* flows */
    int tid;
    rkind kind;
    const char *cat;
} rec;

typedef struct recs {
    rec *v;
    size_t n, cap;
} recs;

static int add(recs *r, rec x) {
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 4096;
        rec *nv = realloc(r->v, cap * sizeof *nv);
        if (!nv) return -1;
        r->v = nv;
        r->cap = cap;
    }
    x.order = r->n;
    r->v[r->n++] = x;
    return 0;
}

static int by_time(const void *a, const void *b) {
    const rec *x = a, *y = b;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static double us(double t) { return t * 1e6; }

/* A time in microseconds with three decimals, as %.3f writes it but without
 * printf's exact decimal expansion: a big trace writes two million of them. */
static void put_us(FILE *f, double v) {
    char buf[32], *p = buf + sizeof buf;
    if (!(v >= 0) || v > 9e15) { /* outside what the integer holds: printf's way */
        fprintf(f, "%.3f", v > 0 ? v : 0);
        return;
    }
    unsigned long long n = (unsigned long long)llround(v * 1000);
    *--p = 0;
    for (int i = 0; i < 3; i++, n /= 10) *--p = (char)('0' + n % 10);
    *--p = '.';
    do *--p = (char)('0' + n % 10); while (n /= 10);
    fputs(p, f);
}

static void put_name(FILE *f, const cs_event *e, const rec *r) {
    char buf[96];
    switch (e->type) {
    case CS_EV_POST:
        cs_viz_op_text(e->op, e->peer, e->tag, e->bytes, true, buf, sizeof buf);
        cs_export_json_str(f, buf);
        break;
    case CS_EV_BLOCK: case CS_EV_WAIT: fputs("blocked", f); break; /* a wait is one not yet asleep */
    case CS_EV_VTIME: cs_export_json_str(f, e->text); break; /* a wait, a compute */
    case CS_EV_COMPUTE: fputs("compute", f); break;
    case CS_EV_COLL:
        cs_export_json_str(f, e->text);
        if (e->algo && *e->algo) fprintf(f, " (%s)", e->algo);
        break;
    case CS_EV_DEADLOCK: case CS_EV_WARN: case CS_EV_ERROR:
        cs_export_first_line(e->text, buf, sizeof buf);
        cs_export_json_str(f, buf);
        break;
    default: fputs(r->kind == R_INSTANT ? "event" : "message", f); break;
    }
}

static void put_args(FILE *f, const cs_event *e) {
    fputs(",\"args\":{", f);
    switch (e->type) {
    case CS_EV_POST:
        fprintf(f, "\"op\":\"%s\",\"peer\":%d,\"tag\":%d,\"bytes\":%zu,\"line\":%d,\"ctx\":%d",
                cs_op_name(e->op), e->peer, e->tag, e->bytes, e->line, e->ctx);
        break;
    case CS_EV_COLL:
        fprintf(f, "\"bytes\":%zu,\"count\":%zu,\"line\":%d,\"algo\":\"", e->bytes, e->count, e->line);
        cs_export_json_str(f, e->algo);
        fputs("\"", f);
        break;
    case CS_EV_DEADLOCK: case CS_EV_WARN: case CS_EV_ERROR:
        fprintf(f, "\"line\":%d,\"text\":\"", e->line);
        cs_export_json_str(f, e->text);
        fputs("\"", f);
        break;
    case CS_EV_VTIME:
        fprintf(f, "\"line\":%d,\"vt_ns\":%llu,\"vt_done_ns\":%llu", e->line,
                (unsigned long long)e->vt, (unsigned long long)e->vt_done);
        break;
    default: fprintf(f, "\"line\":%d", e->line); break;
    }
    fputc('}', f);
}

static int collect(const cs_export_ctx *x, recs *r) {
    const cs_replay *rp = x->rp;
    int world = rp->world;
    cs_export_reqmap posts = {0};
    size_t *blocked = malloc((size_t)world * sizeof *blocked);  /* open block per rank */
    size_t *coll = malloc((size_t)world * sizeof *coll);       /* open collective per rank */
    size_t *comp = malloc((size_t)world * sizeof *comp);       /* open compute per rank */
    unsigned long long flow = 0;
    int rc = -1;
    if (!blocked || !coll || !comp) goto out;
    for (int k = 0; k < world; k++) blocked[k] = coll[k] = comp[k] = (size_t)-1;
    for (size_t i = 0; i < x->to; i++) {
        const cs_event *e = &rp->ev[i];
        bool in = i >= x->from, ranked = e->rank >= 0 && e->rank < world;
        size_t at;
        switch (e->type) {
        case CS_EV_POST:
            if (cs_export_reqmap_put(&posts, e->rank, e->req, i) < 0) goto out;
            break;
        case CS_EV_COMPLETE:
            if (!in || !cs_export_reqmap_get(&posts, e->rank, e->req, &at) || at < x->from) break;
            if (add(r, (rec){.ts = us(rp->ev[at].t), .dur = us(e->t) - us(rp->ev[at].t), .ev = at,
                             .tid = e->rank, .kind = R_SLICE,
                             .cat = rp->ev[at].ctx ? "collective" : "p2p"}) < 0)
                goto out;
            break;
        case CS_EV_MATCH:
            /* the arrow leaves the send's post and lands where the receive matched */
            if (!in || !cs_export_reqmap_get(&posts, e->peer, e->peer_req, &at) || at < x->from) break;
            flow++;
            if (add(r, (rec){.ts = us(rp->ev[at].t), .ev = at, .tid = e->peer, .kind = R_FLOW_OUT,
                             .id = flow, .cat = "message"}) < 0 ||
                add(r, (rec){.ts = us(e->t), .ev = i, .tid = e->rank, .kind = R_FLOW_IN, .id = flow,
                             .cat = "message"}) < 0)
                goto out;
            break;
        case CS_EV_BLOCK:
            if (ranked) blocked[e->rank] = i;
            break;
        case CS_EV_UNBLOCK:
            if (!ranked || (at = blocked[e->rank]) == (size_t)-1) break;
            blocked[e->rank] = (size_t)-1;
            if (in && at >= x->from &&
                add(r, (rec){.ts = us(rp->ev[at].t), .dur = us(e->t) - us(rp->ev[at].t), .ev = at,
                             .tid = e->rank, .kind = R_SLICE, .cat = "blocked"}) < 0)
                goto out;
            break;
        case CS_EV_COLL: case CS_EV_COMPUTE: {
            size_t *open = e->type == CS_EV_COLL ? coll : comp;
            if (!ranked) break;
            if (e->begin) {
                open[e->rank] = i;
                break;
            }
            if ((at = open[e->rank]) == (size_t)-1) break;
            open[e->rank] = (size_t)-1;
            if (in && at >= x->from &&
                add(r, (rec){.ts = us(rp->ev[at].t), .dur = us(e->t) - us(rp->ev[at].t), .ev = at,
                             .tid = e->rank, .kind = R_SLICE,
                             .cat = e->type == CS_EV_COLL ? "collective" : "compute"}) < 0)
                goto out;
            break;
        }
        case CS_EV_WARN: case CS_EV_ERROR: case CS_EV_DEADLOCK:
            if (in && add(r, (rec){.ts = us(e->t), .ev = i, .tid = ranked ? e->rank : -1,
                                   .kind = R_INSTANT,
                                   .cat = e->type == CS_EV_WARN    ? "pitfall"
                                          : e->type == CS_EV_ERROR ? "error"
                                                                   : "verdict"}) < 0)
                goto out;
            break;
        default: break;
        }
    }
    for (int k = 0; k < world; k++)
        if (blocked[k] != (size_t)-1 && blocked[k] >= x->from &&
            add(r, (rec){.ts = us(rp->ev[blocked[k]].t), .ev = blocked[k], .tid = k,
                         .kind = R_OPEN, .cat = "blocked"}) < 0)
            goto out;
    rc = 0;
out:
    cs_export_reqmap_free(&posts);
    free(blocked);
    free(coll);
    free(comp);
    return rc;
}

/* ---- modelled time
 *
 * With a network model the timekeeper's vtime events say when each thing
 * happened in virtual time: a request from its post to its completion, a
 * wait, a compute, a message's transmission and arrival. Those become the
 * slices and flows, in virtual microseconds. A collective call is a slice
 * from the first to the last virtual time of the requests it posted. The
 * verdict and the pitfalls carry no virtual time: they stand at the latest
 * one their rank (any rank, for the verdict) had reached when reported. A
 * rank in a wait that never ends (a deadlock's, one the run stopped in its
 * wait, one still blocked where the window ends) is blocked from where its
 * clock stood (the end of its last wait or compute) for good. */

static double vus(uint64_t ns) { return (double)ns / 1e3; }

typedef struct vcoll {
    size_t ev;         /* the coll begin */
    uint64_t lo, hi;   /* virtual ns of its requests; lo > hi: none */
} vcoll;

static int collect_virtual(const cs_export_ctx *x, recs *r) {
    const cs_replay *rp = x->rp;
    int world = rp->world;
    cs_export_reqmap posts = {0}, in_coll = {0};
    size_t *open = malloc((size_t)world * sizeof *open);
    size_t *blocked = malloc((size_t)world * sizeof *blocked); /* a wait not timed yet */
    double *reached = calloc((size_t)world, sizeof *reached);
    uint64_t *clock = cs_export_vclocks(x); /* where an open wait starts */
    vcoll *colls = NULL;
    size_t ncoll = 0, capcoll = 0;
    unsigned long long flow = 0;
    int rc = -1;
    if (!open || !blocked || !reached || !clock) goto out;
    for (int k = 0; k < world; k++) open[k] = blocked[k] = (size_t)-1;
    /* the posts, and the collective call each was posted in */
    for (size_t i = 0; i < x->to; i++) {
        const cs_event *e = &rp->ev[i];
        if (e->rank < 0 || e->rank >= world) continue;
        if (e->type == CS_EV_COLL && e->begin) {
            if (ncoll == capcoll) {
                size_t cap = capcoll ? capcoll * 2 : 64;
                vcoll *c = realloc(colls, cap * sizeof *c);
                if (!c) goto out;
                colls = c, capcoll = cap;
            }
            colls[ncoll] = (vcoll){.ev = i, .lo = UINT64_MAX, .hi = 0};
            open[e->rank] = ncoll++;
        } else if (e->type == CS_EV_COLL) {
            open[e->rank] = (size_t)-1;
        } else if (e->type == CS_EV_POST) {
            if (cs_export_reqmap_put(&posts, e->rank, e->req, i) < 0) goto out;
            if (open[e->rank] != (size_t)-1 &&
                cs_export_reqmap_put(&in_coll, e->rank, e->req, open[e->rank]) < 0)
                goto out;
        }
    }
    for (size_t i = 0; i < x->to; i++) {
        const cs_event *e = &rp->ev[i];
        bool in = i >= x->from;
        if ((e->type == CS_EV_WAIT || e->type == CS_EV_BLOCK) && e->rank >= 0 && e->rank < world)
            blocked[e->rank] = i; /* a rank may be stopped in a wait before it blocks */
        if (e->type == CS_EV_WARN || e->type == CS_EV_ERROR || e->type == CS_EV_DEADLOCK) {
            bool ranked = e->rank >= 0 && e->rank < world;
            double at = 0;
            for (int k = 0; k < world; k++)
                if ((ranked ? k == e->rank : true) && reached[k] > at) at = reached[k];
            if (in && add(r, (rec){.ts = at, .ev = i, .tid = ranked ? e->rank : -1, .kind = R_INSTANT,
                                   .cat = e->type == CS_EV_WARN    ? "pitfall"
                                          : e->type == CS_EV_ERROR ? "error"
                                                                   : "verdict"}) < 0)
                goto out;
            continue;
        }
        if (e->type != CS_EV_VTIME || e->vrank < 0 || e->vrank >= world || !e->text) continue;
        int k = e->vrank;
        uint64_t done = e->vt_done > e->vt ? e->vt_done : e->vt;
        if (vus(done) > reached[k]) reached[k] = vus(done);
        if (!strcmp(e->text, "wait")) blocked[k] = (size_t)-1; /* the block ended in time */
        bool req = !strcmp(e->text, "send") || !strcmp(e->text, "recv");
        size_t at = i, c;
        if (req && cs_export_reqmap_get(&posts, k, e->req, &at) &&
            cs_export_reqmap_get(&in_coll, k, e->req, &c)) {
            if (e->vt < colls[c].lo) colls[c].lo = e->vt;
            if (done > colls[c].hi) colls[c].hi = done;
        }
        if (!in) continue;
        if (req || !strcmp(e->text, "wait") || !strcmp(e->text, "compute")) {
            const char *cat = !req                      ? (e->text[0] == 'w' ? "wait" : "compute")
                              : at != i && rp->ev[at].ctx ? "collective"
                                                          : "p2p";
            if (add(r, (rec){.ts = vus(e->vt), .dur = vus(done) - vus(e->vt), .ev = at, .tid = k,
                             .kind = R_SLICE, .cat = cat}) < 0)
                goto out;
        }
        /* the message: from the start of its transmission to its arrival */
        if (!strcmp(e->text, "send") && e->peer >= 0 && e->peer < world) {
            flow++;
            if (add(r, (rec){.ts = vus(e->vt_start), .ev = at, .tid = k, .kind = R_FLOW_OUT,
                             .id = flow, .cat = "message"}) < 0 ||
                add(r, (rec){.ts = vus(e->vt_arrive), .ev = at, .tid = e->peer, .kind = R_FLOW_IN,
                             .id = flow, .cat = "message"}) < 0)
                goto out;
        }
    }
    for (size_t j = 0; j < ncoll; j++) {
        const cs_event *b = &rp->ev[colls[j].ev];
        if (colls[j].ev < x->from || colls[j].lo > colls[j].hi) continue;
        if (add(r, (rec){.ts = vus(colls[j].lo), .dur = vus(colls[j].hi) - vus(colls[j].lo),
                         .ev = colls[j].ev, .tid = b->rank, .kind = R_SLICE, .cat = "collective"}) < 0)
            goto out;
    }
    for (int k = 0; k < world; k++)
        if (cs_export_waits_at_end(x, k) && blocked[k] != (size_t)-1 &&
            add(r, (rec){.ts = vus(clock[k]), .ev = blocked[k], .tid = k, .kind = R_OPEN,
                         .cat = "blocked"}) < 0)
            goto out;
    rc = 0;
out:
    cs_export_reqmap_free(&posts);
    cs_export_reqmap_free(&in_coll);
    free(open);
    free(blocked);
    free(clock);
    free(reached);
    free(colls);
    return rc;
}

int cs_export_perfetto(FILE *f, const cs_export_ctx *x, char *err, size_t errlen) {
    const cs_replay *rp = x->rp;
    recs r = {0};
    const char *net = cs_export_model(x);
    if ((net ? collect_virtual(x, &r) : collect(x, &r)) < 0) {
        free(r.v);
        snprintf(err, errlen, "out of memory collecting the trace's slices");
        return -1;
    }
    if (r.n) qsort(r.v, r.n, sizeof *r.v, by_time); /* r.v is NULL when empty */
    fputs("{\"displayTimeUnit\":\"ms\",\"otherData\":{\"script\":\"", f);
    cs_export_json_str(f, rp->script);
    fprintf(f, "\",\"ranks\":%d,\"verdict\":\"%s\",\"kind\":\"%s\",\"time\":\"%s\"", rp->world,
            x->out.word, cs_outcome_kind_name(x->out.kind), net ? "virtual, modelled" : "real, recorded");
    if (x->ending[0]) {
        fputs(",\"ending\":\"", f);
        cs_export_json_str(f, x->ending);
        fputc('"', f);
    }
    if (net) {
        fputs(",\"net\":\"", f);
        cs_export_json_str(f, net);
        fputc('"', f);
    }
    fputs("},\n\"traceEvents\":[\n", f);
    fputs("{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":\"commsim ", f);
    cs_export_json_str(f, rp->script);
    fputs("\"}}", f);
    for (int k = 0; k < rp->world; k++) {
        fprintf(f, ",\n{\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"name\":\"thread_name\","
                   "\"args\":{\"name\":\"Rank %d\"}}", k, k);
        fprintf(f, ",\n{\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"name\":\"thread_sort_index\","
                   "\"args\":{\"sort_index\":%d}}", k, k);
    }
    for (size_t i = 0; i < r.n; i++) {
        const rec *c = &r.v[i];
        const cs_event *e = &rp->ev[c->ev];
        fputs(",\n{\"ph\":\"", f);
        switch (c->kind) {
        case R_SLICE: fputs("X", f); break;
        case R_OPEN: fputs("B", f); break;
        case R_FLOW_OUT: fputs("s", f); break;
        case R_FLOW_IN: fputs("f\",\"bp\":\"e", f); break;
        case R_INSTANT: fputs(c->tid < 0 ? "i\",\"s\":\"g" : "i\",\"s\":\"t", f); break;
        }
        fprintf(f, "\",\"pid\":1,\"tid\":%d,\"ts\":", c->tid < 0 ? 0 : c->tid);
        put_us(f, c->ts);
        fprintf(f, ",\"cat\":\"%s\",\"name\":\"", c->cat);
        if (c->kind == R_FLOW_OUT || c->kind == R_FLOW_IN) fputs("message", f);
        else put_name(f, e, c);
        fputc('"', f);
        if (c->kind == R_SLICE) {
            fputs(",\"dur\":", f);
            put_us(f, c->dur < 0 ? 0 : c->dur);
        }
        if (c->kind == R_FLOW_OUT || c->kind == R_FLOW_IN) fprintf(f, ",\"id\":%llu", c->id);
        else put_args(f, e);
        fputc('}', f);
    }
    fputs("\n]}\n", f);
    free(r.v);
    return 0;
}
