/* explain.c -- turning the world model into words: why a deadlock happened and
 * how to fix it, who was waiting on a rank that failed, and the messages a run
 * left unreceived. Pure functions of the model. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "monitor_internal.h"
#include "xalloc.h"

void cs_sb_printf(cs_sbuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if (b->len + (size_t)n + 1 > b->cap) {
        size_t cap = (b->len + (size_t)n + 1) * 2;
        b->s = cs_xrealloc(b->s, cap, "the text of a verdict");
        b->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void cs_mon_describe_req(cs_sbuf *b, const cs_monitor *m, const cs_mon_req *q, int wait_line) {
    const char *script = cs_mon_script(m);
    char shape[96];
    cs_tensor_shape_str(q->ndim, q->shape, shape, sizeof shape);
    /* a collective's own traffic: named as the call the student made, whose
     * line it already gave */
    const char *coll = q->ctx ? cs_monitor_coll_inside(m, q->ctx, q->rank) : NULL;
    bool blocking = !coll && (q->op == CS_OP_SEND || q->op == CS_OP_RECV);
    if (coll)
        cs_sb_printf(b, "in %s at %s:%d, on its internal %s ", coll, script, q->line, cs_op_name(q->op));
    else if (blocking) cs_sb_printf(b, "in %s ", cs_op_name(q->op));
    else cs_sb_printf(b, "waiting (%s:%d) for the %s posted at line %d ", script, wait_line,
                      cs_op_name(q->op), q->line);
    if (cs_op_is_send(q->op)) cs_sb_printf(b, "to rank %d", q->peer);
    else if (q->peer == CS_ANY_SOURCE) cs_sb_printf(b, "from any rank");
    else cs_sb_printf(b, "from rank %d", q->peer);
    cs_sb_printf(b, " (tag %d, %s %s, %zu bytes)", q->tag, cs_dtype_name(q->dtype), shape, q->bytes);
    if (blocking) cs_sb_printf(b, " at %s:%d", script, q->line);
}

/* ---- what the blocked ranks wait on, summed up */

typedef struct waits {
    int nsend, nrecv;
    size_t big_bytes;                 /* a rendezvous send's size (for eager:N) */
    const cs_mon_req *self;           /* a wait on the rank itself */
    const cs_mon_req *dead;           /* a wait on a finished or failed rank */
    const cs_mon_req *orphan;         /* an any-source receive with every other rank done */
    const cs_mon_req *tagged, *twin;  /* a pair that differs only in its tag */
} waits;

static bool rank_finished(const cs_monitor *m, int k) {
    return k >= 0 && k < m->world && m->ranks[k].state >= CS_RS_DONE;
}

static bool others_finished(const cs_monitor *m, int self) {
    for (int k = 0; k < m->world; k++)
        if (k != self && !rank_finished(m, k)) return false;
    return true;
}

/* An unmatched request on the other side that would pair with q but for its
 * tag. The other side of a receive from any source is every rank: under
 * eager sends the senders may all have finished, their messages unread. */
static const cs_mon_req *tag_twin(const cs_monitor *m, const cs_mon_req *q) {
    bool send = cs_op_is_send(q->op);
    bool any = !send && q->peer == CS_ANY_SOURCE;
    int lo = any ? 0 : q->peer, hi = any ? m->world - 1 : q->peer;
    if (lo < 0 || hi >= m->world) return NULL;
    for (int other = lo; other <= hi; other++) {
        const cs_mon_reqtab *t = &m->ranks[other].reqs;
        for (size_t i = 0; i < t->cap; i++) {
            const cs_mon_req *p = t->slot[i];
            if (!p || p->matched || cs_op_is_send(p->op) == send || p->ctx != q->ctx) continue;
            bool pair = send ? (p->peer == q->rank || p->peer == CS_ANY_SOURCE)
                             : p->peer == q->rank;
            if (pair && p->tag != q->tag) return p;
        }
    }
    return NULL;
}

static void note_wait(const cs_monitor *m, waits *w, const cs_mon_req *q) {
    if (cs_op_is_send(q->op)) w->nsend++, w->big_bytes = q->bytes;
    else w->nrecv++;
    if (q->peer == q->rank && !w->self) w->self = q;
    else if (q->peer != CS_ANY_SOURCE && rank_finished(m, q->peer) && !w->dead) w->dead = q;
    if (q->peer == CS_ANY_SOURCE && !w->orphan && others_finished(m, q->rank)) w->orphan = q;
    const cs_mon_req *twin;
    if (!w->tagged && (twin = tag_twin(m, q))) w->tagged = q, w->twin = twin;
}

static waits survey(const cs_monitor *m) {
    waits w = {0};
    for (int k = 0; k < m->world; k++) {
        const cs_mon_rank *r = &m->ranks[k];
        if (!r->in_deadlock) continue;
        for (int i = 0; i < r->nwait; i++) {
            const cs_mon_req *q = cs_mon_lookup(m, k, r->wait[i]);
            if (q && !q->done) note_wait(m, &w, q);
        }
    }
    return w;
}

/* ---- one explanation per class, most specific first: its kind and words */

typedef struct words {
    cs_outcome_kind kind;
    cs_sbuf why, note, fix; /* without "why: " and the newline */
} words;

static void explain_tag(words *x, const cs_monitor *m, const waits *w) {
    const cs_mon_req *s = cs_op_is_send(w->tagged->op) ? w->tagged : w->twin;
    const cs_mon_req *r = s == w->tagged ? w->twin : w->tagged;
    const char *script = cs_mon_script(m);
    x->kind = CS_OUT_DEADLOCK_TAG;
    char from[32] = "any rank"; /* an any-source receive names no rank */
    if (r->peer != CS_ANY_SOURCE) snprintf(from, sizeof from, "rank %d", s->rank);
    cs_sb_printf(&x->why, "tag mismatch: rank %d sends to rank %d with tag %d (%s:%d), but rank %d "
                    "receives from %s with tag %d (%s:%d). A receive only matches a send "
                    "with the same tag.",
                 s->rank, s->peer, s->tag, script, s->line, r->rank, from, r->tag, script,
                 r->line);
    cs_sb_printf(&x->fix, "use the same tag on both sides (the default tag is 0).");
    /* Both still running: each may use the other tag later, and the tags
     * are right but their order is not (a send of tag 1 then 2 against a
     * receive of tag 2 then 1). A finished rank has no later operation. */
    if (!rank_finished(m, s->rank) && !rank_finished(m, r->rank))
        cs_sb_printf(&x->fix, " If both tags are meant (rank %d sends tag %d later, or rank %d "
                        "receives tag %d later), the ranks use them in different orders: use one "
                        "order on both ranks, or post the first with dist.isend or dist.irecv.",
                     s->rank, r->tag, r->rank, s->tag);
}

static void explain_self(words *x, const cs_monitor *m, const cs_mon_req *q) {
    bool send = cs_op_is_send(q->op);
    x->kind = CS_OUT_DEADLOCK_SELF;
    cs_sb_printf(&x->why, "rank %d %s itself (%s:%d) and waits for it; only rank %d could %s, and "
                    "it is the one waiting.",
                 q->rank, send ? "sends to" : "receives from", cs_mon_script(m), q->line, q->rank,
                 send ? "receive it" : "send it");
    cs_sb_printf(&x->fix, "a rank does not need messages to itself: copy the tensor "
                    "(dst:copy_(src)). If you do mean it, post the other side first with "
                    "dist.isend or dist.irecv.");
}

/* "send to rank 0 at x.lua:26": where a finished rank left off. */
static bool last_op(cs_sbuf *b, const cs_monitor *m, int k, const char *before) {
    const cs_mon_rank *r = &m->ranks[k];
    if (r->op < 0) return false;
    cs_sb_printf(b, "%s%s %s ", before, cs_op_name((cs_op)r->op),
                 cs_op_is_send((cs_op)r->op) ? "to" : "from");
    if (r->peer == CS_ANY_SOURCE) cs_sb_printf(b, "any rank");
    else cs_sb_printf(b, "rank %d", r->peer);
    cs_sb_printf(b, " at %s:%d", cs_mon_script(m), r->line);
    return true;
}

/* For a wait on a finished rank: the unmatched request on a third rank that
 * q was probably meant to pair with (a send to q's rank when q receives, a
 * receive from q's rank when q sends), or NULL. An eager send is done once
 * buffered, yet its message still waits for a receive. */
static const cs_mon_req *stray(const cs_monitor *m, const cs_mon_req *q) {
    bool send = cs_op_is_send(q->op);
    for (int k = 0; k < m->world; k++) {
        if (k == q->peer || k == q->rank) continue;
        const cs_mon_reqtab *t = &m->ranks[k].reqs;
        for (size_t i = 0; i < t->cap; i++) {
            const cs_mon_req *p = t->slot[i];
            if (p && !p->matched && (!p->done || cs_mon_req_in_flight(p)) && p->ctx == q->ctx &&
                cs_op_is_send(p->op) != send && p->peer == q->rank)
                return p;
        }
    }
    return NULL;
}

/* For a receive q from a finished rank: a message that rank sent to another
 * rank, which nobody took (an eager send is done once buffered, so the
 * sender finished), or NULL. */
static const cs_mon_req *sent_elsewhere(const cs_monitor *m, const cs_mon_req *q) {
    const cs_mon_reqtab *t = &m->ranks[q->peer].reqs;
    for (size_t i = 0; i < t->cap; i++) {
        const cs_mon_req *p = t->slot[i];
        if (p && !p->matched && (!p->done || cs_mon_req_in_flight(p)) && p->ctx == q->ctx &&
            cs_op_is_send(p->op) && p->peer != q->rank)
            return p;
    }
    return NULL;
}

static void explain_dead(words *x, const cs_monitor *m, const cs_mon_req *q) {
    int k = q->peer;
    bool send = cs_op_is_send(q->op);
    cs_sbuf *b = &x->why;
    if (m->ranks[k].state == CS_RS_FAILED) {
        x->kind = CS_OUT_DEADLOCK_FAILED;
        cs_sb_printf(b, "rank %d %s rank %d, but rank %d has failed.", q->rank,
                     send ? "sends to" : "waits to receive from", k, k);
    } else {
        x->kind = CS_OUT_DEADLOCK_FINISHED;
        cs_sb_printf(b, "rank %d %s rank %d, but rank %d has already finished", q->rank,
                     send ? "sends to" : "waits to receive from", k, k);
        if (last_op(b, m, k, " (its last operation: the ")) cs_sb_printf(b, ")");
        cs_sb_printf(b, send ? " and posted no receive for this message."
                             : " and sent nothing more that this receive could take.");
    }
    const cs_mon_req *o = stray(m, q);
    const cs_mon_req *away = !o && !send ? sent_elsewhere(m, q) : NULL;
    const char *script = cs_mon_script(m);
    int raced;
    if (away) /* the words of the rendezvous run, where the send itself waits */
        cs_sb_printf(&x->fix, "wrong destination: rank %d sends to rank %d (%s:%d), but rank %d is "
                        "the one waiting for a message from rank %d (%s:%d): send to rank %d "
                        "there, or receive on rank %d.",
                     k, away->peer, script, away->line, q->rank, k, script, q->line, q->rank,
                     away->peer);
    else if (o && !send && (raced = cs_monitor_race_took(m, q->rank, k, q->ctx, q->id)))
        cs_sb_printf(&x->fix, "a message race: rank %d's receive from any source (%s:%d) took "
                        "rank %d's message, which the receive from rank %d (%s:%d) needed, and "
                        "left rank %d's send (%s:%d) with no receive. Name the source on line %d "
                        "(receive from rank %d there), so that the order in which the messages "
                        "arrive does not matter.",
                     q->rank, script, raced, k, k, script, q->line, o->rank, script, o->line,
                     raced, o->rank);
    else if (o && !send)
        cs_sb_printf(&x->fix, "wrong source: rank %d receives from rank %d (%s:%d), but the message "
                        "for rank %d comes from rank %d (%s:%d): receive from rank %d there, or "
                        "send from rank %d.",
                     q->rank, k, script, q->line, q->rank, o->rank, script, o->line, o->rank, k);
    else if (o)
        cs_sb_printf(&x->fix, "wrong destination: rank %d sends to rank %d (%s:%d), but rank %d is "
                        "the one waiting for a message from rank %d (%s:%d): send to rank %d "
                        "there, or receive on rank %d.",
                     q->rank, k, script, q->line, o->rank, q->rank, script, o->line, o->rank, k);
    else
        cs_sb_printf(&x->fix, "mismatched send/recv: every send needs a receive on the rank it "
                        "names, with the same tag, and every receive a send; check the ranks on "
                        "both lines.");
}

static void explain_orphan(words *x, const cs_mon_req *q) {
    x->kind = CS_OUT_DEADLOCK_ANY_SOURCE;
    cs_sb_printf(&x->why, "rank %d waits to receive from any rank, but every other rank has "
                    "already finished: nobody is left to send.", q->rank);
    cs_sb_printf(&x->fix, "count the messages: each rank must receive exactly as many messages as "
                    "are sent to it.");
}

static const cs_mon_req *first_wait(const cs_monitor *m, int k);

static void explain_sends(words *x, const cs_monitor *m, const waits *w) {
    bool eager_limited = m->send_mode && strncmp(m->send_mode, "eager:", 6) == 0;
    x->kind = eager_limited ? CS_OUT_DEADLOCK_EAGER_LIMIT : CS_OUT_DEADLOCK_SENDS;
    cs_sb_printf(&x->why, "every blocked rank is sending and none is receiving. A %s send "
                    "completes only once the receiver has posted its receive, so each rank "
                    "waits for another forever.",
                 eager_limited ? "large" : "rendezvous");
    if (eager_limited)
        cs_sb_printf(&x->note, "with --send-mode %s, sends of up to %s bytes are buffered (eager) "
                        "and would not wait; this message of %zu bytes is larger, so it waits "
                        "for its receive: the program works for small tensors only.",
                     m->send_mode, m->send_mode + 6, w->big_bytes);
    /* A send that a receive from any source could have taken, had a race
     * gone the other way: that race is the cause, not the order. */
    const char *script = cs_mon_script(m);
    for (int k = 0; k < m->world; k++) {
        const cs_mon_req *q = m->ranks[k].in_deadlock ? first_wait(m, k) : NULL;
        int line, took;
        if (!q || !cs_op_is_send(q->op) || !(line = cs_monitor_race_left(m, q, &took))) continue;
        cs_sb_printf(&x->fix, "a message race: rank %d's receive from any source (%s:%d) took "
                        "rank %d's message and left rank %d's send (%s:%d) waiting for a receive "
                        "that rank %d has not posted. Name the source on line %d (receive from "
                        "rank %d there), so that the order in which the messages arrive does not "
                        "matter.",
                     q->peer, script, line, took, q->rank, script, q->line, q->peer, line, q->rank);
        return;
    }
    cs_sb_printf(&x->fix, "reorder so that one side receives first (even ranks send first, odd "
                    "ranks receive first), or post the sends with dist.isend and wait for them "
                    "after the receives.");
}

/* The first wait of deadlocked rank k that names a rank, or NULL. */
static const cs_mon_req *first_wait(const cs_monitor *m, int k) {
    const cs_mon_rank *r = &m->ranks[k];
    for (int i = 0; i < r->nwait; i++) {
        const cs_mon_req *q = cs_mon_lookup(m, k, r->wait[i]);
        if (q && !q->done && q->peer >= 0 && q->peer < m->world) return q;
    }
    return NULL;
}

/* Count the deadlocked ranks off the cycle cyc[0..n-1]: those that wait,
 * directly or through others, on a rank of it (*into), and those stuck
 * apart from it, in a deadlock of their own (*apart). */
static void others_of_cycle(const cs_monitor *m, const cs_mon_req *const *cyc, int n, int *into,
                            int *apart) {
    char *mark = cs_xcalloc((size_t)m->world, 1, "the ranks of a cycle"); /* 1 on, 2 into */
    for (int i = 0; i < n; i++) mark[cyc[i]->rank] = 1;
    for (bool grew = true; grew;) {
        grew = false;
        for (int k = 0; k < m->world; k++) {
            const cs_mon_rank *r = &m->ranks[k];
            if (!r->in_deadlock || mark[k]) continue;
            for (int i = 0; i < r->nwait && !mark[k]; i++) {
                const cs_mon_req *q = cs_mon_lookup(m, k, r->wait[i]);
                if (q && !q->done && q->peer >= 0 && q->peer < m->world && mark[q->peer])
                    mark[k] = 2, grew = true;
            }
        }
    }
    for (int k = 0; k < m->world; k++)
        if (m->ranks[k].in_deadlock && mark[k] != 1) ++*(mark[k] == 2 ? into : apart);
    free(mark);
}

/* Sends and receives mixed: name the operations of the cycle itself (found
 * by following first waits), since those are what hold it shut. */
static void explain_cycle(words *x, const cs_monitor *m) {
    x->kind = CS_OUT_DEADLOCK_CYCLE;
    const cs_mon_req *cyc[16];
    int n = 0, start = -1;
    for (int k = 0; k < m->world && start < 0; k++) {
        if (!m->ranks[k].in_deadlock) continue;
        int j = k; /* walk world steps: then j is on a cycle, if there is one */
        for (int i = 0; i < m->world && j >= 0; i++) {
            const cs_mon_req *q = m->ranks[j].in_deadlock ? first_wait(m, j) : NULL;
            j = q ? q->peer : -1;
        }
        start = j;
    }
    for (int j = start; j >= 0 && n < 16;) {
        const cs_mon_req *q = first_wait(m, j);
        if (!q) break;
        cyc[n++] = q;
        j = q->peer;
        if (j == start) break;
    }
    int sends = 0;
    for (int i = 0; i < n; i++) sends += cs_op_is_send(cyc[i]->op);
    cs_sbuf *b = &x->why;
    cs_sb_printf(b, "the blocked ranks wait on each other in a cycle: ");
    for (int i = 0; i < n; i++) {
        const cs_mon_req *q = cyc[i];
        bool send = cs_op_is_send(q->op);
        cs_sb_printf(b, "%srank %d's %s waits for rank %d to %s (%s:%d)", i ? ", " : "", q->rank,
                     send ? "send" : "receive", q->peer, send ? "receive" : "send",
                     cs_mon_script(m), q->line);
    }
    if (n && sends == 0)
        cs_sb_printf(b, ". Every rank in the cycle is receiving, so none of them ever sends.");
    else if (n && sends == n)
        cs_sb_printf(b, ". Every rank in the cycle is sending, so none of them ever receives.");
    else
        cs_sb_printf(b, ". Each waits for an operation that its peer posts only after its own "
                        "blocked one.");
    int into = 0, apart = 0;
    others_of_cycle(m, cyc, n, &into, &apart);
    if (into && !apart)
        cs_sb_printf(b, " The other blocked ranks wait on ranks of this cycle.");
    else if (apart && !into)
        cs_sb_printf(b, " The other blocked ranks are stuck apart from this cycle, on each other "
                        "(their waits are listed above).");
    else if (apart)
        cs_sb_printf(b, " Some other blocked ranks wait on ranks of this cycle; the rest are "
                        "stuck apart from it, on each other (their waits are listed above).");
    if (n && sends == 0)
        cs_sb_printf(&x->fix, "make one rank of the cycle send before it receives (or post its "
                        "receive with dist.irecv and send before waiting), or check that each "
                        "receive names the rank that sends to it.");
    else
        cs_sb_printf(&x->fix, "follow the waits above around the cycle and break it: reorder one "
                        "send and receive, or use isend/irecv and wait for both.");
}

static void explain_p2p(words *x, const cs_monitor *m) {
    waits w = survey(m);
    if (w.tagged) explain_tag(x, m, &w);
    else if (w.self) explain_self(x, m, w.self);
    else if (w.dead) explain_dead(x, m, w.dead);
    else if (w.orphan) explain_orphan(x, w.orphan);
    else if (w.nsend && !w.nrecv) explain_sends(x, m, &w);
    else if (w.nrecv && !w.nsend) {
        x->kind = CS_OUT_DEADLOCK_RECVS;
        cs_sb_printf(&x->why, "every blocked rank is waiting to receive and none is sending, so "
                        "no message will ever arrive.");
        cs_sb_printf(&x->fix, "make one rank send first (for a ring, rank 0 sends before it "
                        "receives), or check that each receive names the rank that sends to it.");
    } else {
        explain_cycle(x, m);
    }
}

void cs_verdict_add_op(cs_verdict *v, const cs_outcome_op *op) {
    v->ops = cs_xrealloc(v->ops, (size_t)(v->nops + 1) * sizeof *v->ops,
                         "the operations of a verdict");
    v->ops[v->nops++] = *op;
}

void cs_verdict_compose(cs_verdict *v, const char *body) {
    cs_sbuf b = {0};
    cs_sb_printf(&b, "%s\n%s", v->headline, body ? body : "");
    if (v->why) cs_sb_printf(&b, "why: %s\n", v->why);
    if (v->note) cs_sb_printf(&b, "note: %s\n", v->note);
    if (v->fix) cs_sb_printf(&b, "fix: %s\n", v->fix);
    free(v->text);
    v->text = b.s;
}

/* A wait of a deadlocked rank as an operation of the verdict. */
static cs_outcome_op op_of_req(const cs_mon_req *q, int wait_line) {
    cs_outcome_op op = {.rank = q->rank, .peer = q->peer, .tag = q->tag, .bytes = q->bytes,
                        .dtype = q->dtype, .ndim = q->ndim, .line = q->line};
    snprintf(op.op, sizeof op.op, "%s", cs_op_name(q->op));
    memcpy(op.shape, q->shape, sizeof op.shape);
    if (q->op != CS_OP_SEND && q->op != CS_OP_RECV) op.wait_line = wait_line;
    return op;
}

void cs_mon_deadlock_verdict(const cs_monitor *m, cs_verdict *v) {
    cs_sbuf body = {0};
    bool partial = false;
    memset(v, 0, sizeof *v);
    for (int k = 0; k < m->world; k++)
        partial |= m->ranks[k].state < CS_RS_DONE && !m->ranks[k].in_deadlock;
    v->headline = cs_xstrdup(partial ? "deadlock: these ranks wait on each other and can never "
                                       "make progress"
                                     : "deadlock: no rank can make progress",
                             "the text of a verdict");
    char *fix = NULL;
    char *coll = cs_monitor_coll_explain(m, &fix); /* waits inside collectives, at their level */
    if (coll) cs_monitor_coll_ops(m, v);
    for (int k = 0; k < m->world; k++) {
        const cs_mon_rank *r = &m->ranks[k];
        if (!r->in_deadlock) continue;
        for (int i = 0; i < r->nwait; i++) {
            const cs_mon_req *q = cs_mon_lookup(m, k, r->wait[i]);
            if (!q || q->done) continue;
            cs_sb_printf(&body, "  rank %d is blocked ", k);
            cs_mon_describe_req(&body, m, q, r->wait_line);
            cs_sb_printf(&body, "\n");
            /* Inside a collective, its own traffic is the collective's call (above). */
            if (!coll || q->ctx == 0) {
                cs_outcome_op op = op_of_req(q, r->wait_line);
                cs_verdict_add_op(v, &op);
            }
        }
    }
    for (int k = 0; k < m->world; k++)
        if (m->ranks[k].state == CS_RS_DONE) {
            cs_sb_printf(&body, "  rank %d has finished", k);
            if (last_op(&body, m, k, " (last operation: ")) cs_sb_printf(&body, ")");
            cs_sb_printf(&body, "\n");
        } else if (m->ranks[k].state < CS_RS_DONE && !m->ranks[k].in_deadlock) {
            cs_sb_printf(&body, "  rank %d is still running, but can release none of them\n", k);
        }
    if (coll) {
        v->kind = CS_OUT_DEADLOCK_COLLECTIVE;
        v->why = coll;
        v->fix = fix;
    } else {
        words x = {0};
        explain_p2p(&x, m);
        v->kind = x.kind;
        v->why = x.why.s;
        v->note = x.note.s;
        v->fix = x.fix.s;
    }
    cs_verdict_compose(v, body.s);
    free(body.s);
}

/* ---- a failed rank: who was waiting on it */

char *cs_mon_failed_waiters(const cs_monitor *m, int failed) {
    cs_sbuf b = {0};
    for (int k = 0; k < m->world; k++) {
        const cs_mon_reqtab *t = &m->ranks[k].reqs;
        /* ABORTED counts: the abort that the failure starts may wake and
         * unwind a waiting rank before the failure's own event is folded. */
        cs_rank_state st = m->ranks[k].state;
        if (k == failed || st == CS_RS_DONE || st == CS_RS_FAILED) continue;
        for (size_t i = 0; i < t->cap; i++) {
            const cs_mon_req *q = t->slot[i];
            if (!q || q->done || q->matched || q->peer != failed || q->ctx != 0) continue;
            cs_sb_printf(&b, "  rank %d was waiting on it: %s %s rank %d (tag %d, %zu bytes) "
                             "posted at %s:%d\n",
                         k, cs_op_name(q->op), cs_op_is_send(q->op) ? "to" : "from", failed,
                         q->tag, q->bytes, cs_mon_script(m), q->line);
        }
    }
    return b.s;
}

/* ---- the run's end: where it stopped each rank */

/* The request the run's end stopped aborted rank k in, or NULL: it was running. */
static const cs_mon_req *stopped_in(const cs_monitor *m, int k) {
    const cs_mon_rank *r = &m->ranks[k];
    if (r->state != CS_RS_ABORTED || r->in_deadlock || !r->cut) return NULL;
    const cs_mon_req *q = cs_mon_lookup(m, k, r->cut_req);
    return q && !q->done ? q : NULL;
}

bool cs_monitor_stopped_waiting(const cs_monitor *m, int k) { return stopped_in(m, k) != NULL; }

char *cs_monitor_stop_text(const cs_monitor *m, int k, int *line) {
    const cs_mon_rank *r = &m->ranks[k];
    cs_sbuf b = {0};
    *line = 0;
    if (r->state != CS_RS_ABORTED || r->in_deadlock) return NULL;
    const cs_mon_req *q = stopped_in(m, k);
    if (q) {
        cs_mon_describe_req(&b, m, q, r->cut_line);
        /* a blocking operation or a collective is where it was called; a
         * non-blocking one's wait is where the rank waited */
        bool nonblocking = q->ctx == 0 && q->op != CS_OP_SEND && q->op != CS_OP_RECV;
        *line = nonblocking ? r->cut_line : q->line;
    } else if (r->end_line > 0) {
        cs_sb_printf(&b, "running at %s:%d", cs_mon_script(m), r->end_line);
        *line = r->end_line;
    }
    return b.s;
}

/* ---- the run ended: messages nobody received */

typedef struct leftover {
    int rank, line, peer, tag;
    uint64_t count;
    size_t bytes;
} leftover;

static int leftover_cmp(const void *a, const void *b) {
    const leftover *x = a, *y = b;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    if (x->line != y->line) return x->line < y->line ? -1 : 1;
    if (x->peer != y->peer) return x->peer < y->peer ? -1 : 1;
    return x->tag < y->tag ? -1 : x->tag > y->tag;
}

/* Pair send s with a receive posted for it that no other send took (in
 * *used). Both ranks ended before they met (on tcp the message may not have
 * arrived): no receive is missing, and the never-waited warnings say what is
 * wrong. */
static bool had_receive(const cs_monitor *m, const cs_mon_req *s, const cs_mon_req ***used,
                        size_t *nused) {
    if (s->peer < 0 || s->peer >= m->world) return false;
    const cs_mon_reqtab *t = &m->ranks[s->peer].reqs;
    for (size_t i = 0; i < t->cap; i++) {
        const cs_mon_req *p = t->slot[i];
        if (!p || p->matched || cs_op_is_send(p->op) || !cs_mon_fits(s, p)) continue;
        size_t j = 0;
        while (j < *nused && (*used)[j] != p) j++;
        if (j < *nused) continue;
        *used = cs_xrealloc(*used, (*nused + 1) * sizeof **used, "the list of receives");
        (*used)[(*nused)++] = p;
        return true;
    }
    return false;
}

/* Group the unreceived user messages by site: rank, line, destination, tag. */
static size_t collect_leftovers(const cs_monitor *m, leftover **out) {
    size_t n = 0, cap = 0, nused = 0;
    leftover *v = NULL;
    const cs_mon_req **used = NULL;
    for (int k = 0; k < m->world; k++) {
        const cs_mon_reqtab *t = &m->ranks[k].reqs;
        for (size_t i = 0; i < t->cap; i++) {
            const cs_mon_req *q = t->slot[i];
            if (!q || !cs_mon_req_in_flight(q) || q->ctx != 0) continue;
            if (had_receive(m, q, &used, &nused)) continue;
            size_t j = 0;
            while (j < n && !(v[j].rank == k && v[j].line == q->line && v[j].peer == q->peer &&
                              v[j].tag == q->tag))
                j++;
            if (j == n) {
                if (n == cap) {
                    /* cap grows only with the array: a failure leaves nothing half-set */
                    size_t ncap = cap ? cap * 2 : 8;
                    v = cs_xrealloc(v, ncap * sizeof *v, "the list of unreceived messages");
                    cap = ncap;
                }
                v[n++] = (leftover){k, q->line, q->peer, q->tag, 0, 0};
            }
            v[j].count++;
            v[j].bytes += q->bytes;
        }
    }
    free(used);
    if (n) qsort(v, n, sizeof *v, leftover_cmp);
    *out = v;
    return n;
}

void cs_mon_leftovers(const cs_monitor *m, void (*warn)(void *ud, int rank, int line,
                                                        const char *text), void *ud) {
    leftover *v;
    size_t n = collect_leftovers(m, &v);
    for (size_t i = 0; i < n; i++) {
        char text[512];
        snprintf(text, sizeof text,
                 "%s:%d: %llu message%s sent here to rank %d (tag %d, %zu bytes in all) %s never "
                 "received: the run ended first. Every send needs a matching receive.",
                 cs_mon_script(m), v[i].line, (unsigned long long)v[i].count,
                 v[i].count == 1 ? "" : "s", v[i].peer, v[i].tag, v[i].bytes,
                 v[i].count == 1 ? "was" : "were");
        warn(ud, v[i].rank, v[i].line, text);
    }
    free(v);
}
