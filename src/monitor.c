/* monitor.c -- folding events into the world model; detecting that nothing can move. */
#include "monitor.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const state_names[] = {
    [CS_RS_IDLE] = "idle",           [CS_RS_RUNNING] = "running", [CS_RS_BLOCKED] = "blocked",
    [CS_RS_COMPUTING] = "computing", [CS_RS_DONE] = "done",       [CS_RS_FAILED] = "failed",
    [CS_RS_ABORTED] = "aborted",
};

const char *cs_rank_state_name(cs_rank_state s) {
    return (unsigned)s <= CS_RS_ABORTED ? state_names[s] : "?";
}

/* ---- the request table: open addressing, linear probing, backward-shift delete */

static size_t slot_of(const cs_mon_reqtab *t, uint64_t id) {
    return (size_t)(id * 0x9e3779b97f4a7c15ULL >> 17) & (t->cap - 1);
}

static cs_mon_req *tab_find(const cs_mon_reqtab *t, uint64_t id) {
    if (!t->cap) return NULL;
    for (size_t i = slot_of(t, id);; i = (i + 1) & (t->cap - 1)) {
        if (!t->slot[i]) return NULL;
        if (t->slot[i]->id == id) return t->slot[i];
    }
}

static int tab_put(cs_mon_reqtab *t, cs_mon_req *q);

static int tab_grow(cs_mon_reqtab *t) {
    cs_mon_reqtab bigger = {calloc(t->cap ? t->cap * 2 : 16, sizeof(cs_mon_req *)),
                            t->cap ? t->cap * 2 : 16, 0};
    if (!bigger.slot) return -1;
    for (size_t i = 0; i < t->cap; i++)
        if (t->slot[i]) tab_put(&bigger, t->slot[i]);
    free(t->slot);
    *t = bigger;
    return 0;
}

static int tab_put(cs_mon_reqtab *t, cs_mon_req *q) {
    if ((t->n + 1) * 2 > t->cap && tab_grow(t) < 0) return -1;
    size_t i = slot_of(t, q->id);
    while (t->slot[i]) i = (i + 1) & (t->cap - 1);
    t->slot[i] = q;
    t->n++;
    return 0;
}

static void tab_del(cs_mon_reqtab *t, uint64_t id) {
    if (!t->cap) return;
    size_t i = slot_of(t, id);
    while (t->slot[i] && t->slot[i]->id != id) i = (i + 1) & (t->cap - 1);
    if (!t->slot[i]) return;
    free(t->slot[i]);
    t->slot[i] = NULL;
    t->n--;
    /* shift back the entries that probed past the hole */
    for (size_t j = (i + 1) & (t->cap - 1); t->slot[j]; j = (j + 1) & (t->cap - 1)) {
        size_t home = slot_of(t, t->slot[j]->id);
        bool between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (between) continue;
        t->slot[i] = t->slot[j];
        t->slot[j] = NULL;
        i = j;
    }
}

static void tab_free(cs_mon_reqtab *t) {
    for (size_t i = 0; i < t->cap; i++) free(t->slot[i]);
    free(t->slot);
    memset(t, 0, sizeof *t);
}

/* ---- life */

int cs_monitor_init(cs_monitor *m, int world) {
    memset(m, 0, sizeof *m);
    m->world = world;
    m->ranks = calloc((size_t)(world > 0 ? world : 1), sizeof *m->ranks);
    if (!m->ranks) return -1;
    m->nlive = world;
    return 0;
}

void cs_monitor_destroy(cs_monitor *m) {
    for (int i = 0; i < m->world; i++) {
        tab_free(&m->ranks[i].reqs);
        free(m->ranks[i].wait);
        free(m->ranks[i].error);
    }
    free(m->ranks);
    free(m->script);
    free(m->engine);
    free(m->send_mode);
    free(m->verdict);
    cs_monitor_coll_destroy(m);
    memset(m, 0, sizeof *m);
}

const cs_mon_req *cs_monitor_find(const cs_monitor *m, int rank, uint64_t id) {
    if (rank < 0 || rank >= m->world) return NULL;
    return tab_find(&m->ranks[rank].reqs, id);
}

static void set_state(cs_monitor *m, int rank, cs_rank_state s, double t) {
    cs_mon_rank *r = &m->ranks[rank];
    bool was_live = r->state < CS_RS_DONE, live = s < CS_RS_DONE;
    if (r->state == CS_RS_BLOCKED) m->nblocked--;
    if (s == CS_RS_BLOCKED) m->nblocked++;
    if (was_live && !live) m->nlive--;
    r->state = s;
    r->since = t;
}

/* A request leaves the model once nothing more can happen to it. */
static void settle(cs_mon_rank *r, cs_mon_req *q) {
    if (q->done && (q->matched || !cs_op_is_send(q->op))) tab_del(&r->reqs, q->id);
}

/* ---- can anything still move? */

static bool fits(const cs_mon_req *send, const cs_mon_req *recv) {
    return send->peer == recv->rank && send->ctx == recv->ctx && send->tag == recv->tag &&
           (recv->peer == CS_ANY_SOURCE || recv->peer == send->rank);
}

/* Is there an unmatched request on the other side that q could pair with? */
static bool has_partner(const cs_monitor *m, const cs_mon_req *q) {
    bool send = cs_op_is_send(q->op);
    for (int k = 0; k < m->world; k++) {
        if (send && k != q->peer) continue;
        if (!send && q->peer != CS_ANY_SOURCE && k != q->peer) continue;
        const cs_mon_reqtab *t = &m->ranks[k].reqs;
        for (size_t i = 0; i < t->cap; i++) {
            const cs_mon_req *p = t->slot[i];
            if (!p || p->matched || cs_op_is_send(p->op) == send) continue;
            if (send ? fits(q, p) : fits(p, q)) return true;
        }
    }
    return false;
}

/* A blocked rank is stuck when each request it waits on is unfinished, not
 * already paired (bytes in flight), and has no partner that could pair it. */
static bool stuck(const cs_monitor *m, int rank) {
    const cs_mon_rank *r = &m->ranks[rank];
    bool pending = false;
    for (int i = 0; i < r->nwait; i++) {
        const cs_mon_req *q = tab_find(&r->reqs, r->wait[i]);
        if (!q || q->done) continue;
        if (q->matched || has_partner(m, q)) return false;
        pending = true;
    }
    return pending;
}

/* ---- explaining a deadlock */

typedef struct sbuf {
    char *s;
    size_t len, cap;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if (b->len + (size_t)n + 1 > b->cap) {
        size_t cap = (b->len + (size_t)n + 1) * 2;
        char *s = realloc(b->s, cap);
        if (!s) return;
        b->s = s;
        b->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

static void describe_req(sbuf *b, const cs_monitor *m, const cs_mon_req *q, int wait_line) {
    const char *script = m->script ? m->script : "line";
    char shape[96];
    cs_tensor_shape_str(q->ndim, q->shape, shape, sizeof shape);
    bool send = cs_op_is_send(q->op);
    if (q->op == CS_OP_SEND || q->op == CS_OP_RECV) sb_printf(b, "in %s ", cs_op_name(q->op));
    else sb_printf(b, "waiting (%s:%d) for the %s posted at line %d ", script, wait_line,
                   cs_op_name(q->op), q->line);
    if (send) sb_printf(b, "to rank %d", q->peer);
    else if (q->peer == CS_ANY_SOURCE) sb_printf(b, "from any rank");
    else sb_printf(b, "from rank %d", q->peer);
    sb_printf(b, " (tag %d, %s %s, %zu bytes)", q->tag, cs_dtype_name(q->dtype), shape, q->bytes);
    if (q->op == CS_OP_SEND || q->op == CS_OP_RECV) sb_printf(b, " at %s:%d", script, q->line);
}

/* An unmatched request on the other side that would pair with q but for its tag. */
static const cs_mon_req *tag_twin(const cs_monitor *m, const cs_mon_req *q) {
    bool send = cs_op_is_send(q->op);
    int other = q->peer;
    if (other < 0 || other >= m->world) return NULL;
    const cs_mon_reqtab *t = &m->ranks[other].reqs;
    for (size_t i = 0; i < t->cap; i++) {
        const cs_mon_req *p = t->slot[i];
        if (!p || p->matched || cs_op_is_send(p->op) == send || p->ctx != q->ctx) continue;
        bool pair = send ? (p->peer == q->rank || p->peer == CS_ANY_SOURCE) : p->peer == q->rank;
        if (pair && p->tag != q->tag) return p;
    }
    return NULL;
}

static bool rank_finished(const cs_monitor *m, int k) {
    return k >= 0 && k < m->world && m->ranks[k].state >= CS_RS_DONE;
}

static void explain(sbuf *b, const cs_monitor *m) {
    int nsend = 0, nrecv = 0, on_finished = -1, big_eager = 0;
    size_t big_bytes = 0;
    bool eager_limited = m->send_mode && strncmp(m->send_mode, "eager:", 6) == 0;
    const cs_mon_req *dead = NULL, *tagged = NULL, *twin = NULL;
    for (int k = 0; k < m->world; k++) {
        const cs_mon_rank *r = &m->ranks[k];
        if (r->state != CS_RS_BLOCKED) continue;
        for (int i = 0; i < r->nwait; i++) {
            const cs_mon_req *q = tab_find(&r->reqs, r->wait[i]);
            if (!q || q->done) continue;
            if (cs_op_is_send(q->op)) nsend++, big_eager += eager_limited, big_bytes = q->bytes;
            else nrecv++;
            if (q->peer != CS_ANY_SOURCE && rank_finished(m, q->peer) && !dead)
                dead = q, on_finished = q->peer;
            if (!tagged && (twin = tag_twin(m, q))) tagged = q;
        }
    }
    if (tagged) {
        const cs_mon_req *s = cs_op_is_send(tagged->op) ? tagged : twin;
        const cs_mon_req *r = s == tagged ? twin : tagged;
        const char *script = m->script ? m->script : "line";
        sb_printf(b, "why: tag mismatch: rank %d sends to rank %d with tag %d (%s:%d), but rank %d "
                     "receives from rank %d with tag %d (%s:%d). A receive only matches a send "
                     "with the same tag.\n",
                  s->rank, s->peer, s->tag, script, s->line, r->rank, s->rank, r->tag, script,
                  r->line);
        sb_printf(b, "fix: use the same tag on both sides (the default tag is 0).\n");
        return;
    }
    if (dead) {
        const cs_mon_rank *f = &m->ranks[on_finished];
        bool send = cs_op_is_send(dead->op);
        sb_printf(b, "why: rank %d %s rank %d, but rank %d has already %s",
                  dead->rank, send ? "sends to" : "waits to receive from", on_finished, on_finished,
                  f->state == CS_RS_DONE ? "finished" : "failed");
        sb_printf(b, send ? " without receiving it.\n" : " without sending it.\n");
        sb_printf(b, "fix: mismatched send/recv: every send needs a receive on the rank it names, "
                     "with the same tag, and every receive a send; check the ranks on both lines.\n");
        return;
    }
    if (nsend && !nrecv) {
        sb_printf(b, "why: every blocked rank is sending and none is receiving. A %s send "
                     "completes only once the receiver has posted its receive, so each rank "
                     "waits for another forever.\n",
                  eager_limited ? "large" : "rendezvous");
        if (eager_limited && big_eager)
            sb_printf(b, "note: with --send-mode %s, sends of up to %s bytes are buffered (eager) "
                         "and would not wait; this message of %zu bytes is larger, so it waits "
                         "for its receive: the program works for small tensors only.\n",
                      m->send_mode, m->send_mode + 6, big_bytes);
        sb_printf(b, "fix: reorder so that one side receives first (even ranks send first, odd "
                     "ranks receive first), or post the sends with dist.isend and wait for them "
                     "after the receives.\n");
    } else if (nrecv && !nsend) {
        sb_printf(b, "why: every blocked rank is waiting to receive and none is sending, so no "
                     "message will ever arrive.\n");
        sb_printf(b, "fix: make one rank send first (for a ring, rank 0 sends before it "
                     "receives), or check that each receive names the rank that sends to it.\n");
    } else {
        sb_printf(b, "why: the blocked ranks wait on each other in a cycle: each send waits for a "
                     "receive that is posted only after another blocked operation.\n");
        sb_printf(b, "fix: follow the waits above around the cycle and break it: reorder one "
                     "send and receive, or use isend/irecv and wait for both.\n");
    }
}

static void declare_deadlock(cs_monitor *m) {
    sbuf b = {0};
    sb_printf(&b, "deadlock: no rank can make progress\n");
    for (int k = 0; k < m->world; k++) {
        const cs_mon_rank *r = &m->ranks[k];
        if (r->state != CS_RS_BLOCKED) continue;
        for (int i = 0; i < r->nwait; i++) {
            const cs_mon_req *q = tab_find(&r->reqs, r->wait[i]);
            if (!q || q->done) continue;
            sb_printf(&b, "  rank %d is blocked ", k);
            describe_req(&b, m, q, r->wait_line);
            sb_printf(&b, "\n");
        }
    }
    for (int k = 0; k < m->world; k++)
        if (m->ranks[k].state == CS_RS_DONE)
            sb_printf(&b, "  rank %d has finished\n", k);
    char *coll = cs_monitor_coll_explain(m);
    if (coll) sb_printf(&b, "%s", coll);
    else explain(&b, m);
    free(coll);
    m->deadlocked = true;
    m->verdict = b.s;
    if (m->bus) {
        cs_event ev = {.type = CS_EV_DEADLOCK, .rank = -1, .text = m->verdict};
        cs_bus_emit_locked(m->bus, &ev);
    }
    if (m->on_deadlock) m->on_deadlock(m->ud);
}

static void check_progress(cs_monitor *m) {
    /* After a failure the run is ending with that error: waits on the failed
     * rank are its consequence, not a second verdict. */
    if (m->deadlocked || m->nfailed || m->nlive == 0 || m->nblocked < m->nlive) return;
    for (int k = 0; k < m->world; k++)
        if (m->ranks[k].state == CS_RS_BLOCKED && !stuck(m, k)) return;
    declare_deadlock(m);
}

/* ---- the fold */

static void fold_post(cs_monitor *m, cs_mon_rank *r, const cs_event *ev) {
    cs_mon_req *q = calloc(1, sizeof *q);
    if (!q) return;
    *q = (cs_mon_req){.rank = ev->rank, .id = ev->req, .op = ev->op, .peer = ev->peer,
                      .tag = ev->tag, .ctx = ev->ctx, .bytes = ev->bytes, .dtype = ev->dtype,
                      .ndim = ev->ndim, .line = ev->line, .eager = ev->eager};
    memcpy(q->shape, ev->shape, sizeof q->shape);
    if (tab_put(&r->reqs, q) < 0) free(q);
    r->line = ev->line;
}

static void fold_match(cs_monitor *m, const cs_event *ev) {
    cs_mon_req *rq = tab_find(&m->ranks[ev->rank].reqs, ev->req);
    if (rq) rq->matched = true;
    if (ev->peer >= 0 && ev->peer < m->world) {
        cs_mon_rank *s = &m->ranks[ev->peer];
        cs_mon_req *sq = tab_find(&s->reqs, ev->peer_req);
        if (sq) {
            sq->matched = true;
            settle(s, sq);
        }
    }
    if (ev->ctx == 0) {
        m->messages++;
        m->bytes += ev->bytes;
    }
}

static void fold_block(cs_mon_rank *r, const cs_event *ev) {
    if (ev->nreqs > r->wait_cap) {
        uint64_t *w = realloc(r->wait, (size_t)ev->nreqs * sizeof *w);
        if (!w) return;
        r->wait = w;
        r->wait_cap = ev->nreqs;
    }
    if (ev->nreqs) memcpy(r->wait, ev->reqs, (size_t)ev->nreqs * sizeof *r->wait);
    r->nwait = ev->nreqs;
    r->wait_line = ev->line;
}

static void copy_text(char **dst, const char *src) {
    free(*dst);
    *dst = src ? strdup(src) : NULL;
}

int cs_monitor_fold(cs_monitor *m, const cs_event *ev) {
    if (ev->type == CS_EV_RUN) {
        copy_text(&m->script, ev->text);
        copy_text(&m->engine, ev->engine);
        copy_text(&m->send_mode, ev->send_mode);
        m->have_run = true;
        return 0;
    }
    if (ev->type == CS_EV_DEADLOCK) {
        if (!m->deadlocked) {
            m->deadlocked = true;
            copy_text(&m->verdict, ev->text);
        }
        return 0;
    }
    /* A collective mismatch: the coll events it came from give it again. */
    if (ev->type == CS_EV_ERROR && ev->rank < 0) return 0;
    if (ev->rank < 0 || ev->rank >= m->world) return -1;
    cs_mon_rank *r = &m->ranks[ev->rank];
    r->nevents++;
    if (r->state == CS_RS_IDLE) set_state(m, ev->rank, CS_RS_RUNNING, ev->t);
    switch (ev->type) {
    case CS_EV_POST: fold_post(m, r, ev); break;
    case CS_EV_MATCH: fold_match(m, ev); break;
    case CS_EV_COMPLETE: {
        cs_mon_req *q = tab_find(&r->reqs, ev->req);
        if (q) {
            q->done = true;
            settle(r, q);
        }
        break;
    }
    case CS_EV_BLOCK:
        fold_block(r, ev);
        set_state(m, ev->rank, CS_RS_BLOCKED, ev->t);
        break;
    case CS_EV_UNBLOCK:
        r->nwait = 0;
        set_state(m, ev->rank, CS_RS_RUNNING, ev->t);
        break;
    case CS_EV_COLL: cs_monitor_coll_fold(m, ev); break;
    case CS_EV_COMPUTE:
        set_state(m, ev->rank, ev->begin ? CS_RS_COMPUTING : CS_RS_RUNNING, ev->t);
        break;
    case CS_EV_ERROR:
        copy_text(&r->error, ev->text);
        r->status = ev->status;
        if (r->state != CS_RS_FAILED) m->nfailed++;
        set_state(m, ev->rank, CS_RS_FAILED, ev->t);
        break;
    case CS_EV_EXIT:
        if (r->state != CS_RS_FAILED)
            set_state(m, ev->rank, ev->status == 0 ? CS_RS_DONE : CS_RS_ABORTED, ev->t);
        if (ev->status) r->status = ev->status;
        break;
    default: break;
    }
    check_progress(m);
    return 0;
}

static void monitor_emit(void *ud, const cs_event *ev) { cs_monitor_fold(ud, ev); }

cs_sink cs_monitor_sink(cs_monitor *m) { return (cs_sink){monitor_emit, m}; }
