/* vclock.c -- the timekeeper: virtual clocks under the alpha-beta model.
 *
 * It owns the modelled state of a run: per rank its clock, the operations it
 * has emitted that are not yet timed, its links' free times; per request its
 * virtual post, transmission and completion times. The bus lock serialises
 * every call (it is a sink), so nothing here locks.
 *
 * The model (docs/time-model.md): a message of B bytes is transmitted over
 * [start, start + B/bw] and arrives alpha later. The transmission holds the
 * sender's outgoing and the receiver's incoming link, one at a time each.
 * Eager: start = max(post, links free), the send completes at the end of the
 * transmission. Rendezvous: start = max(send post, receive post, links free),
 * the send completes at the arrival. A receive completes at max(its post,
 * the arrival).
 *
 * Why it is deterministic: each rank's operations are timed in that rank's
 * order; links serve transmissions in key order (ready time, sender, request
 * id); and a transmission is placed only once every transmission that could
 * come before it on either link is known. For the ones not yet known the
 * timekeeper keeps a lower bound per rank on the ready time of anything it
 * may still send (its clock, raised, for a rank waiting in virtual time, to
 * the earliest its wait can end: at least alpha after a message it waits
 * for could start). Because alpha > 0 those bounds grow around any cycle of
 * waiting ranks, so the simulation never waits on itself; it waits only for
 * ranks that have not yet said what they do next, which they do without
 * needing it (except dist.time(), answered once the rank's own past is
 * timed).
 */
#include "vclock.h"

#include <stdlib.h>
#include <string.h>

#define INF INT64_MAX

typedef struct vreq {
    bool known;           /* its post event was seen */
    bool posted;          /* its post was timed (post is valid) */
    bool send, eager;
    bool paired;
    bool placed;          /* a send: its transmission is timed */
    bool done_known;
    bool pending;         /* a send in the pending list */
    bool told;            /* its vtime event was emitted */
    cs_op op;
    int peer, tag, ctx, line;
    size_t bytes;
    int prank;            /* the partner: a receive's send, a send's receive */
    uint64_t pid;
    int64_t post, ready, start, end, arrive, done;
} vreq;

typedef struct vop {
    cs_event_type type;   /* POST, WAIT, COMPUTE, CLOCK, EXIT */
    uint64_t req;
    uint64_t *reqs;
    int nreqs;
    int64_t ns;
    int line;
} vop;

typedef struct pend {
    int rank;
    uint64_t id;
} pend;

/* A growable list of requests, by rank and id. */
struct plist { pend *v; size_t n, cap; };

typedef struct vrank {
    vreq *reqs;           /* by id - 1 */
    size_t nreqs;
    vop *q;               /* ops emitted and not yet timed, from qhead */
    size_t qhead, qlen, qcap;
    int64_t clock;
    int64_t out_free, in_free;
    bool exited;
    /* Timed and not yet paired: sends to this rank (a receive may still
     * take one), and this rank's receives (a send's match may be on its way). */
    struct plist inbox, open;
    cs_vclock_rank info;
} vrank;

struct cs_vclock {
    cs_netmodel net;
    int world;
    vrank *r;
    struct plist pend;    /* transmissions waiting to be placed on their links */
    int64_t *lb;          /* scratch: per rank, a lower bound on its future sends' ready times */
    int64_t lb_min;       /* the smallest of them, and the lowest rank with it */
    int lb_min_rank;
    bool stopped, failed;
    bool overflow;        /* a rank ended at INF: its clock saturated */
    cs_vclock_answer_fn answer;
    void *answer_ud;
    cs_vclock_emit_fn emit;
    void *emit_ud;
};

cs_vclock *cs_vclock_new(const cs_netmodel *net, int world) {
    cs_vclock *v = calloc(1, sizeof *v);
    if (!v) return NULL;
    v->net = *net;
    v->world = world;
    v->r = calloc((size_t)world, sizeof *v->r);
    v->lb = calloc((size_t)world, sizeof *v->lb);
    if (!v->r || !v->lb) {
        cs_vclock_free(v);
        return NULL;
    }
    return v;
}

void cs_vclock_free(cs_vclock *v) {
    if (!v) return;
    for (int i = 0; v->r && i < v->world; i++) {
        vrank *r = &v->r[i];
        for (size_t k = r->qhead; k < r->qlen; k++) free(r->q[k].reqs);
        free(r->q);
        free(r->reqs);
        free(r->inbox.v);
        free(r->open.v);
    }
    free(v->r);
    free(v->lb);
    free(v->pend.v);
    free(v);
}

void cs_vclock_set_answer(cs_vclock *v, cs_vclock_answer_fn fn, void *ud) {
    v->answer = fn;
    v->answer_ud = ud;
}

void cs_vclock_set_emit(cs_vclock *v, cs_vclock_emit_fn fn, void *ud) {
    v->emit = fn;
    v->emit_ud = ud;
}

const cs_netmodel *cs_vclock_model(const cs_vclock *v) { return &v->net; }
bool cs_vclock_failed(const cs_vclock *v) { return v->failed; }
bool cs_vclock_overflowed(const cs_vclock *v) { return v->overflow; }

/* ---- requests */

static vreq *req_at(cs_vclock *v, int rank, uint64_t id, bool grow) {
    if (rank < 0 || rank >= v->world || id == 0) return NULL;
    vrank *r = &v->r[rank];
    if (id > r->nreqs) {
        if (!grow) return NULL;
        size_t n = r->nreqs ? r->nreqs : 64;
        while (n < id) n *= 2;
        vreq *p = realloc(r->reqs, n * sizeof *p);
        if (!p) {
            v->failed = true;
            return NULL;
        }
        memset(p + r->nreqs, 0, (n - r->nreqs) * sizeof *p);
        r->reqs = p;
        r->nreqs = n;
    }
    return &r->reqs[id - 1];
}

static vreq *partner(cs_vclock *v, const vreq *q) {
    return q->paired ? req_at(v, q->prank, q->pid, false) : NULL;
}

static int64_t xfer(const cs_vclock *v, size_t bytes) {
    return (int64_t)cs_netmodel_xfer_ns(&v->net, bytes);
}

static void tell(cs_vclock *v, cs_event *ev) {
    if (v->emit) {
        ev->type = CS_EV_VTIME;
        ev->vrank = ev->rank;
        ev->rank = -1;
        v->emit(v->emit_ud, ev);
    }
}

/* A request whose times are all known: say so once. */
static void tell_req(cs_vclock *v, int rank, uint64_t id, vreq *q) {
    if (q->told || !q->done_known || !q->posted) return;
    q->told = true;
    const vreq *msg = q->send ? q : partner(v, q);
    cs_event ev = {.rank = rank, .req = id, .text = q->send ? "send" : "recv",
                   .peer = q->send ? q->peer : q->prank, .bytes = q->bytes, .line = q->line,
                   .vt = (uint64_t)q->post, .vt_done = (uint64_t)q->done};
    if (msg && msg->placed) {
        ev.vt_start = (uint64_t)msg->start;
        ev.vt_end = (uint64_t)msg->end;
        ev.vt_arrive = (uint64_t)msg->arrive;
    }
    tell(v, &ev);
}

/* A receive completes at max(its post, the arrival of its message). */
static void refresh_recv(cs_vclock *v, int rank, uint64_t id, vreq *q) {
    vreq *s = partner(v, q);
    if (q->done_known || !q->posted || !s || !s->placed) return;
    q->done = q->post > s->arrive ? q->post : s->arrive;
    q->done_known = true;
    tell_req(v, rank, id, q);
}

/* A send's ready time: its post (eager), or the later of both posts. */
static void refresh_ready(cs_vclock *v, vreq *s) {
    if (!s->posted || s->placed || s->ready >= 0) return;
    if (s->eager) {
        s->ready = s->post;
        return;
    }
    vreq *q = partner(v, s);
    if (q && q->posted) s->ready = s->post > q->post ? s->post : q->post;
}

static void plist_add(cs_vclock *v, struct plist *l, int rank, uint64_t id);

static void pend_add(cs_vclock *v, int rank, uint64_t id, vreq *s) {
    plist_add(v, &v->pend, rank, id);
    s->pending = true;
}

/* ---- lower bounds for what is not yet timed */

static void plist_add(cs_vclock *v, struct plist *l, int rank, uint64_t id) {
    if (l->n == l->cap) {
        size_t n = l->cap ? l->cap * 2 : 8;
        pend *p = realloc(l->v, n * sizeof *p);
        if (!p) {
            v->failed = true;
            return;
        }
        l->v = p;
        l->cap = n;
    }
    l->v[l->n++] = (pend){rank, id};
}

static void plist_del(struct plist *l, int rank, uint64_t id) {
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].rank == rank && l->v[i].id == id) {
            l->v[i] = l->v[--l->n];
            return;
        }
}

static bool fits(const vreq *q, int src, const vreq *s) {
    return q->tag == s->tag && q->ctx == s->ctx && (q->peer == CS_ANY_SOURCE || q->peer == src);
}

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t add64(int64_t a, int64_t b) { return a >= INF - b ? INF : a + b; }

/* The earliest s (rank srank) can be ready, given the bounds in v->lb. */
static int64_t lb_ready(cs_vclock *v, int srank, const vreq *s) {
    if (s->posted && s->ready >= 0) return s->ready;
    int64_t base = s->posted ? s->post : v->lb[srank];
    if (s->eager) return base;
    const vreq *q = partner(v, s);
    int64_t tr;
    if (q) {
        tr = q->posted ? q->post : v->lb[s->prank];
    } else { /* a timed receive it fits may be its match, on its way; else a future one */
        tr = v->lb[s->peer];
        const struct plist *o = &v->r[s->peer].open;
        for (size_t i = 0; i < o->n; i++) {
            const vreq *c = req_at(v, s->peer, o->v[i].id, false);
            if (c && fits(c, srank, s)) tr = min64(tr, c->post);
        }
    }
    return max64(base, tr);
}

/* The earliest request q (of rank rank) can complete. */
static int64_t lb_done(cs_vclock *v, int rank, const vreq *q) {
    if (q->done_known) return q->done;
    int64_t a = v->net.alpha_ns;
    if (q->send) {
        int64_t end = add64(lb_ready(v, rank, q), xfer(v, q->bytes));
        return q->eager ? end : add64(end, a);
    }
    const vreq *s = partner(v, q);
    if (s) return max64(q->post, add64(add64(lb_ready(v, q->prank, s), xfer(v, s->bytes)), a));
    /* Unpaired: a send already timed that fits may be the one; else a
     * future one from a rank it accepts. */
    int64_t best = INF;
    for (int j = 0; j < v->world; j++)
        if (q->peer == CS_ANY_SOURCE || q->peer == j)
            best = min64(best, add64(add64(v->lb[j], xfer(v, q->bytes)), a));
    const struct plist *in = &v->r[rank].inbox;
    for (size_t i = 0; i < in->n; i++) {
        const vreq *c = req_at(v, in->v[i].rank, in->v[i].id, false);
        if (!c || !fits(q, in->v[i].rank, c)) continue;
        int64_t arr = c->placed ? c->arrive
                                : add64(add64(lb_ready(v, in->v[i].rank, c), xfer(v, c->bytes)), a);
        best = min64(best, arr);
    }
    return max64(q->post, best);
}

/* Per rank, a lower bound on the ready time of any send it has not yet
 * posted in virtual time: its clock, or for a rank waiting in virtual time
 * the earliest its wait can end. Iterated: each pass keeps every bound valid
 * and raises the ones that depend on others. Around a cycle of waiting
 * ranks they would rise by alpha a pass for ever; above cap (the latest
 * ready time a transmission to place has) a bound decides nothing more, so
 * it stops there and the passes end. */
static void bounds(cs_vclock *v, int64_t cap) {
    for (int j = 0; j < v->world; j++) v->lb[j] = v->r[j].exited ? INF : v->r[j].clock;
    for (int pass = 0; pass < v->world + 8; pass++) {
        bool changed = false;
        for (int j = 0; j < v->world; j++) {
            vrank *r = &v->r[j];
            if (r->exited || r->qhead == r->qlen || r->q[r->qhead].type != CS_EV_WAIT) continue;
            const vop *op = &r->q[r->qhead];
            int64_t b = r->clock;
            for (int k = 0; k < op->nreqs; k++) {
                vreq *q = req_at(v, j, op->reqs[k], false);
                if (q) b = max64(b, lb_done(v, j, q));
            }
            if (b > cap) b = cap;
            if (b > v->lb[j]) {
                v->lb[j] = b;
                changed = true;
            }
        }
        if (!changed) break;
    }
    v->lb_min = INF;
    v->lb_min_rank = v->world;
    for (int j = 0; j < v->world; j++)
        if (v->lb[j] < v->lb_min) v->lb_min = v->lb[j], v->lb_min_rank = j;
}

/* ---- placing transmissions in key order */

static bool key_less(int64_t ta, int ra, uint64_t ia, int64_t tb, int rb, uint64_t ib) {
    if (ta != tb) return ta < tb;
    if (ra != rb) return ra < rb;
    return ia < ib;
}

/* Can s (rank srank, id sid, ready known) be placed now? */
static bool safe(cs_vclock *v, int srank, uint64_t sid, const vreq *s) {
    /* Sends not yet posted in virtual time: ready no earlier than lb[j]; from
     * rank srank itself they come after s (a larger id). The smallest bound
     * (and the lowest rank that has it) decides for all: checked first, it
     * is the cheap test that usually answers. */
    if (v->lb_min < s->ready || (v->lb_min == s->ready && v->lb_min_rank < srank)) return false;
    for (size_t i = 0; i < v->pend.n; i++) {
        const pend *p = &v->pend.v[i];
        if (p->rank == srank && p->id == sid) continue;
        const vreq *z = req_at(v, p->rank, p->id, false);
        if (!z || (p->rank != srank && z->peer != s->peer)) continue;
        if (key_less(lb_ready(v, p->rank, z), p->rank, p->id, s->ready, srank, sid)) return false;
    }
    return true;
}

static void place(cs_vclock *v, int srank, uint64_t sid, vreq *s) {
    vrank *out = &v->r[srank], *in = &v->r[s->peer];
    int64_t start = max64(s->ready, max64(out->out_free, in->in_free));
    s->start = start;
    s->end = add64(start, xfer(v, s->bytes));
    s->arrive = add64(s->end, (int64_t)v->net.alpha_ns);
    out->out_free = in->in_free = s->end;
    s->placed = true;
    s->done = s->eager ? s->end : s->arrive;
    s->done_known = true;
    tell_req(v, srank, sid, s);
    vreq *q = partner(v, s);
    if (q) refresh_recv(v, s->prank, s->pid, q);
}

static bool advance(cs_vclock *v, int rank);

/* The index in pend of the transmission with the smallest key whose ready
 * time is known, among the safe ones only if only_safe; SIZE_MAX if none. */
static size_t smallest_pending(cs_vclock *v, bool only_safe) {
    size_t best = SIZE_MAX;
    const pend *b = NULL;
    const vreq *bs = NULL;
    for (size_t i = 0; i < v->pend.n; i++) {
        const pend *p = &v->pend.v[i];
        vreq *s = req_at(v, p->rank, p->id, false);
        if (!s || s->ready < 0) continue;
        if (bs && !key_less(s->ready, p->rank, p->id, bs->ready, b->rank, b->id)) continue;
        if (only_safe && !safe(v, p->rank, p->id, s)) continue;
        best = i, b = p, bs = s;
    }
    return best;
}

/* Place every transmission that is safe, the smallest key first, until none
 * is. A safe one with a larger key than an unsafe one shares no link with it
 * (safe() checks that), so their order does not matter. */
static void schedule(cs_vclock *v) {
    for (;;) {
        bool progress = false;
        for (int j = 0; j < v->world; j++) progress |= advance(v, j);
        int64_t cap = -1;
        for (size_t i = 0; i < v->pend.n; i++) {
            const vreq *s = req_at(v, v->pend.v[i].rank, v->pend.v[i].id, false);
            if (s && s->ready > cap) cap = s->ready;
        }
        if (cap < 0) { /* nothing to place */
            if (!progress) return;
            continue;
        }
        bounds(v, add64(cap, 1));
        /* the smallest key first: nearly always safe */
        size_t best = smallest_pending(v, false);
        if (best != SIZE_MAX) {
            const pend *b = &v->pend.v[best];
            if (!safe(v, b->rank, b->id, req_at(v, b->rank, b->id, false)))
                best = smallest_pending(v, true);
        }
        if (best != SIZE_MAX) {
            pend p = v->pend.v[best];
            vreq *s = req_at(v, p.rank, p.id, false);
            v->pend.v[best] = v->pend.v[--v->pend.n];
            s->pending = false;
            place(v, p.rank, p.id, s);
            progress = true;
        }
        if (!progress) return;
    }
}

/* ---- timing each rank's operations in its order */

/* The share of [from, to] that one of the waited messages was on the wire. */
static int64_t wire_time(cs_vclock *v, int rank, const vop *op, int64_t from, int64_t to) {
    int64_t total = 0, upto = from;
    /* The intervals, swept from the earliest start: few requests per wait. */
    for (;;) {
        int64_t bs = INF, be = 0;
        for (int k = 0; k < op->nreqs; k++) {
            vreq *q = req_at(v, rank, op->reqs[k], false);
            const vreq *m = q ? (q->send ? q : partner(v, q)) : NULL;
            if (!m || !m->placed) continue;
            int64_t s = max64(m->start, upto), e = min64(q->done, to);
            if (e <= s) continue;
            if (s < bs || (s == bs && e > be)) bs = s, be = e;
        }
        if (bs == INF) break;
        /* extend over intervals overlapping [bs, be] */
        bool grew = true;
        while (grew) {
            grew = false;
            for (int k = 0; k < op->nreqs; k++) {
                vreq *q = req_at(v, rank, op->reqs[k], false);
                const vreq *m = q ? (q->send ? q : partner(v, q)) : NULL;
                if (!m || !m->placed) continue;
                int64_t s = max64(m->start, upto), e = min64(q->done, to);
                if (s <= be && e > be) be = e, grew = true;
            }
        }
        total += be - bs;
        upto = be;
    }
    return total;
}

static void tell_span(cs_vclock *v, int rank, const char *what, int64_t from, int64_t to,
                      int line) {
    cs_event ev = {.rank = rank, .text = what, .vt = (uint64_t)from, .vt_done = (uint64_t)to,
                   .line = line};
    tell(v, &ev);
}

/* Time rank's operations in order until one must wait. True if any was. */
static bool advance(cs_vclock *v, int rank) {
    vrank *r = &v->r[rank];
    bool any = false;
    while (r->qhead < r->qlen && !v->stopped) {
        vop *op = &r->q[r->qhead];
        switch (op->type) {
        case CS_EV_POST: {
            vreq *q = req_at(v, rank, op->req, false);
            if (!q) break;
            q->post = r->clock;
            q->posted = true;
            if (q->send) {
                if (!q->paired) plist_add(v, &v->r[q->peer].inbox, rank, op->req);
                refresh_ready(v, q);
                pend_add(v, rank, op->req, q);
            } else {
                if (!q->paired) plist_add(v, &r->open, rank, op->req);
                vreq *s = partner(v, q);
                if (s) refresh_ready(v, s);
                refresh_recv(v, rank, op->req, q);
            }
            break;
        }
        case CS_EV_WAIT: {
            int64_t to = r->clock;
            for (int k = 0; k < op->nreqs; k++) {
                vreq *q = req_at(v, rank, op->reqs[k], false);
                if (!q) continue; /* not a request of this run's model */
                if (!q->done_known) return any;
                to = max64(to, q->done);
            }
            int64_t wire = wire_time(v, rank, op, r->clock, to);
            r->info.comm_ns += (uint64_t)wire;
            r->info.wait_ns += (uint64_t)(to - r->clock - wire);
            tell_span(v, rank, "wait", r->clock, to, op->line);
            r->clock = to;
            break;
        }
        case CS_EV_COMPUTE:
            tell_span(v, rank, "compute", r->clock, add64(r->clock, op->ns), op->line);
            r->clock = add64(r->clock, op->ns);
            r->info.compute_ns += (uint64_t)op->ns;
            break;
        case CS_EV_CLOCK:
            tell_span(v, rank, "time", r->clock, r->clock, op->line);
            if (v->answer) v->answer(v->answer_ud, rank, (uint64_t)r->clock);
            break;
        case CS_EV_EXIT:
            /* Sums saturate at INF (add64) rather than wrap; a clock that got
             * there is not a time, and the report must not give it as one.
             * Clocks never go back, so the end is the place to look. */
            if (r->clock == INF) v->overflow = true;
            r->exited = true;
            r->info.exited = true;
            r->info.end_ns = (uint64_t)r->clock;
            tell_span(v, rank, "exit", r->clock, r->clock, 0);
            break;
        default: break;
        }
        free(op->reqs);
        op->reqs = NULL;
        r->qhead++;
        any = true;
    }
    if (r->qhead == r->qlen) r->qhead = r->qlen = 0;
    return any;
}

static vop *push_op(cs_vclock *v, int rank) {
    vrank *r = &v->r[rank];
    if (r->qhead > 0 && r->qlen == r->qcap) { /* slide the untimed ops to the front */
        memmove(r->q, r->q + r->qhead, (r->qlen - r->qhead) * sizeof *r->q);
        r->qlen -= r->qhead;
        r->qhead = 0;
    }
    if (r->qlen == r->qcap) {
        size_t n = r->qcap ? r->qcap * 2 : 16;
        vop *p = realloc(r->q, n * sizeof *p);
        if (!p) {
            v->failed = true;
            return NULL;
        }
        r->q = p;
        r->qcap = n;
    }
    vop *op = &r->q[r->qlen++];
    memset(op, 0, sizeof *op);
    return op;
}

static void on_post(cs_vclock *v, const cs_event *ev) {
    vreq *q = req_at(v, ev->rank, ev->req, true);
    vop *op = q ? push_op(v, ev->rank) : NULL;
    if (!op) return;
    q->known = true;
    q->op = ev->op;
    q->send = cs_op_is_send(ev->op);
    q->eager = ev->eager;
    q->peer = ev->peer;
    q->tag = ev->tag;
    q->ctx = ev->ctx;
    q->line = ev->line;
    q->bytes = ev->bytes;
    q->ready = -1;
    op->type = CS_EV_POST;
    op->req = ev->req;
}

static void on_match(cs_vclock *v, const cs_event *ev) {
    vreq *q = req_at(v, ev->rank, ev->req, true);
    vreq *s = req_at(v, ev->peer, ev->peer_req, true);
    if (!q || !s) return;
    q->paired = s->paired = true;
    q->prank = ev->peer;
    q->pid = ev->peer_req;
    s->prank = ev->rank;
    s->pid = ev->req;
    if (s->posted) plist_del(&v->r[ev->rank].inbox, ev->peer, ev->peer_req);
    if (q->posted) plist_del(&v->r[ev->rank].open, ev->rank, ev->req);
    refresh_ready(v, s);
    refresh_recv(v, ev->rank, ev->req, q);
}

void cs_vclock_feed(cs_vclock *v, const cs_event *ev) {
    if (v->stopped) return;
    if (ev->type == CS_EV_ERROR || ev->type == CS_EV_DEADLOCK) {
        v->stopped = true; /* the run did not end normally: no times to give */
        return;
    }
    if (ev->rank < 0 || ev->rank >= v->world) return;
    vop *op;
    switch (ev->type) {
    case CS_EV_POST: on_post(v, ev); break;
    case CS_EV_MATCH: on_match(v, ev); break;
    case CS_EV_WAIT:
        if (!(op = push_op(v, ev->rank))) return;
        op->type = CS_EV_WAIT;
        op->line = ev->line;
        if (ev->nreqs > 0 && ev->reqs) {
            if (!(op->reqs = malloc((size_t)ev->nreqs * sizeof *op->reqs))) {
                v->failed = true;
                v->r[ev->rank].qlen--;
                return;
            }
            memcpy(op->reqs, ev->reqs, (size_t)ev->nreqs * sizeof *op->reqs);
            op->nreqs = ev->nreqs;
        }
        break;
    case CS_EV_COMPUTE:
        if (!ev->begin || !(op = push_op(v, ev->rank))) return;
        op->type = CS_EV_COMPUTE;
        /* modelled arithmetic may ask for more than an int64 holds: INF,
         * as add64 saturates, not a conversion out of range */
        op->ns = ev->ms * 1e6 + 0.5 >= (double)INF ? INF : (int64_t)(ev->ms * 1e6 + 0.5);
        op->line = ev->line;
        break;
    case CS_EV_CLOCK:
    case CS_EV_EXIT:
        if (!(op = push_op(v, ev->rank))) return;
        op->type = ev->type;
        op->line = ev->line;
        break;
    default: return;
    }
    schedule(v);
}

static void vclock_emit(void *ud, const cs_event *ev) { cs_vclock_feed(ud, ev); }
cs_sink cs_vclock_sink(cs_vclock *v) { return (cs_sink){vclock_emit, v}; }

bool cs_vclock_complete(const cs_vclock *v) {
    if (v->stopped || v->failed || v->overflow) return false;
    for (int i = 0; i < v->world; i++)
        if (!v->r[i].exited) return false;
    return true;
}

uint64_t cs_vclock_makespan(const cs_vclock *v) {
    uint64_t m = 0;
    for (int i = 0; i < v->world; i++)
        if (v->r[i].info.end_ns > m) m = v->r[i].info.end_ns;
    return m;
}

const cs_vclock_rank *cs_vclock_rank_info(const cs_vclock *v, int rank) {
    return rank >= 0 && rank < v->world ? &v->r[rank].info : NULL;
}
