/* pitfall.c -- the rank side of the pitfall checks: a registry of the rank's
 * unfinished non-blocking requests, keyed by storage and byte range, consulted
 * on every tensor access the script makes; requests never waited on; blocking
 * operations on the rank itself that can never complete.
 *
 * Only the rank's own thread touches its registry, so there is no lock. A
 * request leaves the registry when the rank waits on it (or sees it complete),
 * which is what torch requires before a buffer may be touched again, so the
 * verdict never depends on how fast the engine happened to be.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outcome.h"
#include "pitfall.h"
#include "world.h"
#include "xalloc.h"

/* An entry; each storage counts its entries (cs_storage.io), so an access to a
 * tensor that no request uses costs one test however many are in flight. */
struct cs_fl_entry {
    cs_request *q;          /* one reference, the registry's */
    const cs_storage *st;
    size_t lo, hi;          /* bytes of st that the request uses: [lo, hi) */
};

typedef enum {
    SITE_WRITE_SEND, SITE_WRITE_RECV, SITE_READ_RECV, SITE_NEVER_WAITED, SITE_SELF,
    SITE_COLL_WRITE, SITE_COLL_READ, SITE_COLL_NEVER_WAITED
} site_kind;

/* A tensor of an async collective whose handle is not waited on yet, or (t
 * NULL) the handle itself. The entry holds a reference to the tensor. */
struct cs_fl_coll {
    uint64_t id;
    char name[32];
    int line;
    cs_tensor *t;
    const cs_storage *st;
    size_t lo, hi;          /* bytes of st the tensor spans */
    bool output, dropped;
};

struct cs_fl_site {
    site_kind kind;
    int line, other;
};

/* ---- reporting, once per site */

static bool first_time(cs_inflight *fl, site_kind kind, int line, int other) {
    for (int i = 0; i < fl->nsites; i++)
        if (fl->sites[i].kind == kind && fl->sites[i].line == line && fl->sites[i].other == other)
            return false;
    if (fl->nsites == fl->site_cap) {
        int cap = fl->site_cap ? fl->site_cap * 2 : 8;
        fl->sites = cs_xrealloc(fl->sites, (size_t)cap * sizeof *fl->sites, "a pitfall site");
        fl->site_cap = cap;
    }
    fl->sites[fl->nsites++] = (struct cs_fl_site){kind, line, other};
    return true;
}

/* Report the pitfall whose text (without its position) is fmt. A warning goes
 * out once per site; with --strict the text becomes the rank's error and the
 * caller fails the operation. */
static int report(cs_rank *r, site_kind kind, cs_pitfall_kind pk, int line, int other,
                  const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static int report(cs_rank *r, site_kind kind, cs_pitfall_kind pk, int line, int other,
                  const char *fmt, ...) {
    bool strict = r->world->cfg.strict;
    /* a site said before costs no formatting: an access may meet thousands */
    if (!strict && !first_time(&r->inflight, kind, line, other)) return CS_OK;
    char body[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    if (strict) {
        snprintf(r->errmsg, sizeof r->errmsg, "%s (--strict)", body);
        return CS_EPITFALL;
    }
    char text[sizeof body + 300];
    snprintf(text, sizeof text, "%s:%d: %s", r->world->script_name, line, body);
    cs_warn(r, cs_pitfall_kind_name(pk), text, line);
    return CS_OK;
}

/* ---- the registry */

bool cs_rank_has_inflight(const cs_rank *r) { return r->inflight.n > 0 || r->inflight.ncoll > 0; }

static void drop(cs_inflight *fl, int i) {
    fl->v[i].q->buf->st->io--;
    if (!cs_op_is_send(fl->v[i].q->op)) fl->v[i].q->buf->st->io_w--;
    fl->v[i].q->fl_slot = 0;
    cs_request_release(fl->v[i].q);
    fl->v[i] = fl->v[--fl->n];
    if (i < fl->n) fl->v[i].q->fl_slot = i + 1;
}

static int never_waited(cs_rank *r, const cs_request *q) {
    return report(r, SITE_NEVER_WAITED, CS_PIT_NEVER_WAITED, q->line, 0,
                  "the %s posted here was never waited on: the rank dropped its work handle, or "
                  "finished, without wait() or dist.wait_all on it, so nothing made sure it "
                  "completed", cs_op_name(q->op));
}

/* Requests that only the registry still holds are complete and their work
 * handles collected: nobody can wait on them any more. (With --strict they
 * stay, and the rank's exit turns them into its error.) */
static void sweep(cs_rank *r) {
    cs_inflight *fl = &r->inflight;
    if (r->world->cfg.strict) return;
    for (int i = fl->n - 1; i >= 0; i--)
        if (atomic_load(&fl->v[i].q->refs) == 1) {
            never_waited(r, fl->v[i].q);
            drop(fl, i);
        }
}

static void coll_drop(cs_inflight *fl, int i) {
    struct cs_fl_coll *c = &fl->cv[i];
    if (c->t) {
        c->t->st->io--;
        if (c->output) c->t->st->io_w--;
        cs_tensor_release(c->t);
    }
    fl->cv[i] = fl->cv[--fl->ncoll];
}

void cs_inflight_add(cs_rank *r, cs_request *q) {
    cs_inflight *fl = &r->inflight;
    if (fl->n == fl->cap && fl->cap >= 64) sweep(r);
    if (fl->n == fl->cap) {
        int cap = fl->cap ? fl->cap * 2 : 8;
        /* a request left unchecked would be a pitfall silently missed */
        fl->v = cs_xrealloc(fl->v, (size_t)cap * sizeof *fl->v, "the rank's list of requests in flight");
        fl->cap = cap;
    }
    size_t es = cs_dtype_size(q->buf->dtype), lo = (size_t)q->buf->offset * es;
    fl->v[fl->n++] = (struct cs_fl_entry){cs_request_retain(q), q->buf->st, lo, lo + q->bytes};
    q->fl_slot = fl->n;
    q->buf->st->io++;
    if (!cs_op_is_send(q->op)) q->buf->st->io_w++;
}

void cs_inflight_done(cs_rank *r, cs_request *q) {
    if (q->fl_slot) drop(&r->inflight, q->fl_slot - 1);
}

static void coll_put(cs_inflight *fl, struct cs_fl_coll c) {
    if (fl->ncoll == fl->coll_cap) {
        int cap = fl->coll_cap ? fl->coll_cap * 2 : 8;
        fl->cv = cs_xrealloc(fl->cv, (size_t)cap * sizeof *fl->cv, "the rank's async collectives");
        fl->coll_cap = cap;
    }
    fl->cv[fl->ncoll++] = c;
}

static void coll_tensors(cs_inflight *fl, struct cs_fl_coll c, cs_tensor *const *ts, int n,
                         bool output) {
    for (int i = 0; i < n; i++) {
        if (!ts[i] || cs_tensor_numel(ts[i]) == 0) continue;
        size_t es = cs_dtype_size(ts[i]->dtype), lo = (size_t)ts[i]->offset * es, hi = lo + es;
        for (int d = 0; d < ts[i]->ndim; d++) /* the last byte it can reach */
            if (ts[i]->stride[d] > 0) hi += (size_t)(ts[i]->shape[d] - 1) * (size_t)ts[i]->stride[d] * es;
        c.t = cs_tensor_retain(ts[i]);
        c.st = ts[i]->st, c.lo = lo, c.hi = hi, c.output = output;
        ts[i]->st->io++;
        if (output) ts[i]->st->io_w++;
        coll_put(fl, c);
    }
}

uint64_t cs_inflight_coll_add(cs_rank *r, const char *name, int line, cs_tensor *const *ins,
                              int nin, cs_tensor *const *outs, int nout) {
    cs_inflight *fl = &r->inflight;
    struct cs_fl_coll c = {.id = ++fl->next_coll, .line = line};
    snprintf(c.name, sizeof c.name, "%s", name);
    coll_put(fl, c); /* the handle */
    coll_tensors(fl, c, outs, nout, true);
    coll_tensors(fl, c, ins, nin, false);
    return c.id;
}

void cs_inflight_coll_done(cs_rank *r, uint64_t id) {
    cs_inflight *fl = &r->inflight;
    for (int i = fl->ncoll - 1; i >= 0; i--)
        if (fl->cv[i].id == id) coll_drop(fl, i);
}

void cs_inflight_coll_dropped(cs_rank *r, uint64_t id) {
    cs_inflight *fl = &r->inflight;
    for (int i = 0; i < fl->ncoll; i++)
        if (fl->cv[i].id == id) fl->cv[i].dropped = true;
}

static int coll_never_waited(cs_rank *r, const struct cs_fl_coll *c) {
    return report(r, SITE_COLL_NEVER_WAITED, CS_PIT_COLL_NEVER_WAITED, c->line, 0,
                  "the %s (async_op) called here was never waited on: the rank dropped its work "
                  "handle, or finished, without wait() or dist.wait_all on it, so nothing made "
                  "sure it completed", c->name);
}


int cs_inflight_exit(cs_rank *r, int status) {
    cs_inflight *fl = &r->inflight;
    for (int i = 0; i < fl->ncoll && status == 0; i++) {
        if (fl->cv[i].t || coll_never_waited(r, &fl->cv[i]) == CS_OK) continue;
        char msg[sizeof r->errmsg + 300];
        snprintf(msg, sizeof msg, "%s:%d: %s", r->world->script_name, fl->cv[i].line, r->errmsg);
        cs_rank_fail_at(r, CS_END_ERROR, fl->cv[i].line, msg);
        status = CS_END_ERROR;
    }
    while (fl->ncoll) coll_drop(fl, fl->ncoll - 1);
    free(fl->cv);
    for (int i = 0; i < fl->n && status == 0; i++) {
        if (never_waited(r, fl->v[i].q) == CS_OK) continue;
        char msg[sizeof r->errmsg + 300];
        snprintf(msg, sizeof msg, "%s:%d: %s", r->world->script_name, fl->v[i].q->line, r->errmsg);
        cs_rank_fail_at(r, CS_END_ERROR, fl->v[i].q->line, msg);
        status = CS_END_ERROR;
    }
    while (fl->n) drop(fl, fl->n - 1);
    free(fl->v);
    free(fl->sites);
    memset(fl, 0, sizeof *fl);
    return status;
}

/* ---- accesses */

/* Does the view t touch a byte in [lo, hi) of its storage? Exact for strided
 * views: a column of a matrix does not touch the row next to it. */
static bool touches_dim(const cs_tensor *t, int d, int64_t base, size_t es, size_t lo, size_t hi) {
    if (d == t->ndim) return (size_t)base * es < hi && (size_t)base * es + es > lo;
    for (int64_t i = 0; i < t->shape[d]; i++)
        if (touches_dim(t, d + 1, base + i * t->stride[d], es, lo, hi)) return true;
    return false;
}

static bool touches(const cs_tensor *t, size_t lo, size_t hi) {
    if (cs_tensor_numel(t) == 0) return false;
    size_t es = cs_dtype_size(t->dtype);
    if (cs_tensor_is_contiguous(t)) {
        size_t a = (size_t)t->offset * es, b = a + cs_tensor_nbytes(t);
        return a < hi && b > lo;
    }
    return touches_dim(t, 0, t->offset, es, lo, hi);
}

static int check_entry(cs_rank *r, const struct cs_fl_entry *e, cs_access how, int line) {
    const cs_request *q = e->q;
    const char *script = r->world->script_name;
    bool send = cs_op_is_send(q->op);
    if (how == CS_ACCESS_WRITE && send)
        return report(r, SITE_WRITE_SEND, CS_PIT_WRITE_SENDING, line, q->line,
                      "writes to a tensor (or a view of it) that the isend posted at %s:%d is "
                      "still sending: rank %d may receive the old values or the new ones. Call "
                      "wait() on the isend's work handle before changing the tensor",
                      script, q->line, q->peer);
    if (how == CS_ACCESS_WRITE)
        return report(r, SITE_WRITE_RECV, CS_PIT_WRITE_RECEIVING, line, q->line,
                      "writes to a tensor (or a view of it) that the irecv posted at %s:%d is "
                      "still receiving into: the message may overwrite this write, or this write "
                      "the message. Call wait() on the irecv's work handle first",
                      script, q->line);
    if (!send)
        return report(r, SITE_READ_RECV, CS_PIT_READ_RECEIVING, line, q->line,
                      "reads a tensor (or a view of it) that the irecv posted at %s:%d is still "
                      "receiving into: it holds the old values or part of the message. Call "
                      "wait() on the irecv's work handle before reading it",
                      script, q->line);
    return CS_OK; /* reading what an isend sends is fine */
}

/* An access to a tensor of an async collective not yet waited on. */
static int check_coll(cs_rank *r, const struct cs_fl_coll *c, cs_access how, int line) {
    const char *script = r->world->script_name;
    if (how == CS_ACCESS_WRITE)
        return report(r, SITE_COLL_WRITE, CS_PIT_COLL_WRITE, line, c->line,
                      "writes to a tensor (or a view of it) that the async %s called at %s:%d "
                      "still uses: until its work handle is waited on, the collective may still "
                      "read or write it. Call wait() on the work handle first",
                      c->name, script, c->line);
    if (c->output)
        return report(r, SITE_COLL_READ, CS_PIT_COLL_READ, line, c->line,
                      "reads a tensor (or a view of it) that the async %s called at %s:%d still "
                      "writes into: it may hold the old values or part of the result. Call wait() "
                      "on the work handle before reading it",
                      c->name, script, c->line);
    return CS_OK; /* reading what the collective only reads is fine */
}

int cs_rank_access(cs_rank *r, const cs_tensor *t, cs_access how, int line) {
    cs_inflight *fl = &r->inflight;
    if (!t->st->io) return CS_OK; /* the common case: O(1) */
    /* a read conflicts only with a write in flight: 1e5 isends of one tensor
     * were 1e10 overlap tests (minutes past any timeout, unbudgeted) */
    if (how == CS_ACCESS_READ && !t->st->io_w) return CS_OK;
    fl->tests += (uint64_t)fl->ncoll + (uint64_t)fl->n;
    for (int i = 0; i < fl->ncoll; i++) {
        const struct cs_fl_coll *c = &fl->cv[i];
        if (!c->t || c->st != t->st || !touches(t, c->lo, c->hi)) continue;
        int rc = check_coll(r, c, how, line);
        if (rc != CS_OK) return rc;
    }
    for (int i = 0; i < fl->n; i++) {
        const struct cs_fl_entry *e = &fl->v[i];
        if (e->st != t->st || e->q->eager || !touches(t, e->lo, e->hi)) continue;
        int rc = check_entry(r, e, how, line);
        if (rc != CS_OK) return rc;
    }
    return CS_OK;
}

uint64_t cs_inflight_take_tests(cs_rank *r) {
    uint64_t n = r->inflight.tests;
    r->inflight.tests = 0;
    return n;
}

/* ---- blocking operations on the rank itself */

static bool self_partner(cs_matcher *m, int self, cs_op op, int tag) {
    bool found = false;
    pthread_mutex_lock(&m->lock);
    if (op == CS_OP_RECV) {
        for (const cs_msg *msg = m->unexpected; msg && !found; msg = msg->next)
            found = msg->src == self && msg->ctx == 0 && msg->tag == tag;
    } else {
        for (const cs_request *rq = m->posted; rq && !found; rq = rq->next)
            found = rq->ctx == 0 && rq->tag == tag &&
                    (rq->peer == self || rq->peer == CS_ANY_SOURCE);
    }
    pthread_mutex_unlock(&m->lock);
    return found;
}

int cs_pitfall_self(cs_rank *r, cs_op op, int peer, int tag, bool eager, int line) {
    if (peer != r->rank || eager || (op != CS_OP_SEND && op != CS_OP_RECV)) return CS_OK;
    if (self_partner(&r->world->matchers[r->rank], r->rank, op, tag)) return CS_OK;
    if (op == CS_OP_RECV)
        return report(r, SITE_SELF, CS_PIT_SELF_RECV, line, 0,
                      "dist.recv from rank %d, the rank itself, waits forever: no isend to "
                      "itself was posted before it, and only this rank could send one. Copy the "
                      "tensor instead (dst:copy_(src)), or post dist.isend to yourself first",
                      peer);
    return report(r, SITE_SELF, CS_PIT_SELF_SEND, line, 0,
                  "dist.send to rank %d, the rank itself, waits forever: the send is not eager "
                  "and no irecv from itself was posted before it, and only this rank could "
                  "receive it. Copy the tensor instead (dst:copy_(src)), or post dist.irecv "
                  "from yourself first",
                  peer);
}
