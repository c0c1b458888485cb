/* match.c -- MPI matching over posted receives and unexpected messages. */
#include "world.h"
#include "stage.h"

#include "msgbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cs_matcher_init(cs_matcher *m, int rank) {
    memset(m, 0, sizeof *m);
    m->rank = rank;
    cs_mutex_init_adaptive(&m->lock);
}

void cs_msg_free(cs_msg *msg) {
    if (!msg) return;
    if (msg->sreq) cs_request_release(msg->sreq);
    if (msg->data && msg->charged) cs_budget_refund(msg->charged, msg->bytes ? msg->bytes : 1);
    cs_msgbuf_free(msg->data);
    free(msg);
}

/* The payload, from the sender's tensor into the receiver's (or into an eager
 * send's copy, eager_copy). memmove: a script
 * may send and receive on overlapping views of one tensor. A script may also
 * write its send buffer while this copies it (the buffer-reuse pitfall, which
 * pitfall.c reports): that race is the lesson's, not the simulator's, and
 * tests/tsan.supp names this function, and only it, for ThreadSanitizer. */
__attribute__((noinline)) static void copy_payload(void *to, const void *from, size_t n) {
    memmove(to, from, n);
}

void cs_msg_transfer_local(cs_msg *msg, cs_request *rq) {
    const void *from = msg->data ? msg->data : cs_request_payload(msg->sreq);
    if (msg->bytes) copy_payload(cs_request_payload(rq), from, msg->bytes);
    cs_request_finish(rq, CS_OK, NULL);
    if (msg->sreq) {
        cs_request *sq = msg->sreq;
        msg->sreq = NULL;
        cs_request_finish(sq, CS_OK, NULL);
    }
    cs_msg_free(msg);
}

/* What is left at the end of a run was never matched: drop the engine's refs. */
void cs_matcher_destroy(cs_matcher *m) {
    while (m->unexpected) {
        cs_msg *next = m->unexpected->next;
        cs_msg_free(m->unexpected);
        m->unexpected = next;
    }
    while (m->posted) {
        cs_request *next = m->posted->next;
        cs_request_release(m->posted);
        m->posted = next;
    }
    pthread_mutex_destroy(&m->lock);
}

/* ---- queues */

/* 0 on either side (a program message, or a peer that does not stamp its
 * collectives' messages) fits any digest. */
bool cs_match_fits(const cs_msg *msg, const cs_request *rq) {
    return msg->ctx == rq->ctx && msg->tag == rq->tag &&
           (!msg->coll_sig || !rq->coll_sig || msg->coll_sig == rq->coll_sig) &&
           (rq->peer == CS_ANY_SOURCE || rq->peer == msg->src);
}

cs_msg *cs_match_take_unexpected(cs_matcher *m, const cs_request *rq) {
    cs_msg *prev = NULL;
    for (cs_msg *msg = m->unexpected; msg; prev = msg, msg = msg->next) {
        if (!cs_match_fits(msg, rq)) continue;
        if (prev) prev->next = msg->next;
        else m->unexpected = msg->next;
        if (m->unexpected_tail == msg) m->unexpected_tail = prev;
        msg->next = NULL;
        return msg;
    }
    return NULL;
}

cs_request *cs_match_take_posted(cs_matcher *m, const cs_msg *msg) {
    cs_request *prev = NULL;
    for (cs_request *rq = m->posted; rq; prev = rq, rq = rq->next) {
        if (!cs_match_fits(msg, rq)) continue;
        if (prev) prev->next = rq->next;
        else m->posted = rq->next;
        if (m->posted_tail == rq) m->posted_tail = prev;
        rq->next = NULL;
        return rq;
    }
    return NULL;
}

void cs_match_push_posted(cs_matcher *m, cs_request *rq) {
    rq->next = NULL;
    if (m->posted_tail) m->posted_tail->next = rq;
    else m->posted = rq;
    m->posted_tail = rq;
}

void cs_match_push_unexpected(cs_matcher *m, cs_msg *msg) {
    msg->next = NULL;
    if (m->unexpected_tail) m->unexpected_tail->next = msg;
    else m->unexpected = msg;
    m->unexpected_tail = msg;
}

void cs_msg_envelope(cs_msg *msg, const cs_request *sq) {
    msg->src = sq->rank;
    msg->tag = sq->tag;
    msg->ctx = sq->ctx;
    msg->coll_sig = sq->coll_sig;
    msg->bytes = sq->bytes;
    msg->dtype = sq->buf->dtype;
    msg->ndim = sq->buf->ndim;
    memcpy(msg->shape, sq->buf->shape, sizeof msg->shape);
    msg->line = sq->line;
    msg->sreq_id = sq->id;
}

/* ---- agreement of the two sides */

static void describe(char *buf, size_t len, cs_dtype d, int ndim, const int64_t *shape) {
    char dims[96];
    snprintf(buf, len, "%s %s", cs_dtype_name(d), cs_tensor_shape_str(ndim, shape, dims, sizeof dims));
}

/* A wire envelope's dtype is checked on arrival; the guard only keeps an
 * unknown one from dividing by zero. */
static size_t elements(size_t bytes, cs_dtype d) {
    size_t size = cs_dtype_size(d);
    return size ? bytes / size : bytes;
}

bool cs_match_check(const cs_msg *msg, const cs_request *rq, const char *script, char *err,
                    size_t errlen) {
    const cs_tensor *t = rq->buf;
    if (msg->bytes == rq->bytes && msg->dtype == t->dtype) return true;
    char sent[128], want[128];
    describe(sent, sizeof sent, msg->dtype, msg->ndim, msg->shape);
    describe(want, sizeof want, t->dtype, t->ndim, t->shape);
    const char *s = script ? script : "line";
    /* Same number of elements: only the dtype differs, say so. The byte
     * counts may agree while both differ (float64 [2] against float32 [4]). */
    bool dtype = elements(msg->bytes, msg->dtype) == elements(rq->bytes, t->dtype);
    snprintf(err, errlen,
             "%s mismatch: rank %d receives %s (%zu bytes) at %s:%d, but rank %d sent %s "
             "(%zu bytes) at %s:%d; both sides must use the same %s", dtype ? "dtype" : "size",
             rq->rank, want, rq->bytes, s, rq->line, msg->src, sent, msg->bytes, s, msg->line,
             dtype ? "dtype" : "number of elements and dtype");
    return false;
}

/* ---- the protocol */

static void emit_match(cs_world *w, const cs_msg *msg, const cs_request *rq) {
    cs_event ev = {.type = CS_EV_MATCH, .rank = rq->rank, .req = rq->id, .op = rq->op,
                   .peer = msg->src, .peer_req = msg->sreq_id, .tag = msg->tag,
                   .ctx = msg->ctx, .bytes = msg->bytes};
    cs_bus_emit(w->bus, &ev);
}

/* Pair msg with rq: check, announce, let the engine move the bytes. */
static void pair(cs_world *w, cs_msg *msg, cs_request *rq) {
    char err[512];
    rq->source = msg->src;
    emit_match(w, msg, rq);
    if (!cs_match_check(msg, rq, w->script_name, err, sizeof err)) {
        w->engine->ops->reject(w->engine, msg, err);
        cs_request_finish(rq, CS_EMISMATCH, err);
        return;
    }
    w->engine->ops->transfer(w->engine, msg, rq);
}

/* Copy an eager send's bytes aside. The copy counts against the sender's
 * memory cap: buffered messages are memory the sender's script chose to use,
 * and only the sender can be stopped at the line that did it. NULL when the
 * cap refuses it (*refused) or the machine does (the send then waits for its
 * receive, as a rendezvous send). */
static void *eager_copy(cs_request *sq, bool *refused) {
    cs_budget *b = cs_rank_budget(sq->owner);
    size_t n = sq->bytes ? sq->bytes : 1;
    *refused = !cs_budget_charge(b, n);
    if (*refused) return NULL;
    void *data = cs_msgbuf_alloc(n);
    if (!data) {
        cs_budget_refund(b, n);
        return NULL;
    }
    copy_payload(data, cs_request_payload(sq), sq->bytes);
    return data;
}

/* msg carries data, its send's copy (eager_copy), from now on: the send
 * completes. Under the matcher's lock, where its event takes its place. */
static void buffered(cs_msg *msg, void *data) {
    cs_request *sq = msg->sreq;
    msg->data = data;
    msg->charged = cs_rank_budget(sq->owner);
    msg->sreq = NULL;
    cs_request_finish(sq, CS_OK, NULL);
}

/* An eager send that found no receive: copied aside, it completes now. */
static void buffer_eager(cs_msg *msg) {
    bool refused;
    void *data = eager_copy(msg->sreq, &refused);
    if (data) buffered(msg, data);
    else if (refused) msg->sreq->unbuffered = true;
}

void cs_match_deliver(cs_world *w, cs_matcher *m, cs_msg *msg) {
    pthread_mutex_lock(&m->lock);
    cs_request *rq = cs_match_take_posted(m, msg);
    if (rq) {
        pair(w, msg, rq);
    } else {
        /* Nobody waits yet. An eager send is copied aside and completes now; a
         * rendezvous send stays pending until a receive takes it. */
        if (msg->sreq && msg->sreq->eager && !msg->data) buffer_eager(msg);
        cs_match_push_unexpected(m, msg);
    }
    pthread_mutex_unlock(&m->lock);
}

int cs_match_send_local(cs_world *w, cs_matcher *m, cs_request *sq) {
    cs_msg env = {0}, *msg = NULL;
    cs_msg_envelope(&env, sq);
    env.sreq = sq;
    void *copy = NULL;
    bool refused = false;
    pthread_mutex_lock(&m->lock);
    cs_request *rq = cs_match_take_posted(m, &env);
    if (!rq && sq->eager) {
        /* No receive yet: copy the bytes aside without the lock, then look
         * again (a receive posted meanwhile takes the copy). Copied under
         * it, megabytes at a time, a stream of sends kept the receiver from
         * posting for a whole window, so that every send was copied twice. */
        pthread_mutex_unlock(&m->lock);
        if ((msg = malloc(sizeof *msg))) copy = eager_copy(sq, &refused);
        pthread_mutex_lock(&m->lock);
        rq = cs_match_take_posted(m, &env);
    }
    if (rq && !copy) { /* pair(), with the thread engine's transfer and reject inlined */
        char err[512];
        rq->source = env.src;
        if (!cs_match_check(&env, rq, w->script_name, err, sizeof err)) {
            emit_match(w, &env, rq);
            cs_request_finish(sq, CS_EMISMATCH, err);
            cs_request_finish(rq, CS_EMISMATCH, err);
        } else {
            /* match, then both completes, as one batch of the stream; the
             * states are published only after it */
            cs_event ev[3] = {{.type = CS_EV_MATCH, .rank = rq->rank, .req = rq->id, .op = rq->op,
                               .peer = env.src, .peer_req = env.sreq_id, .tag = env.tag,
                               .ctx = env.ctx, .bytes = env.bytes}};
            cs_request_done_event(rq, &ev[1]);
            cs_request_done_event(sq, &ev[2]);
            if (env.bytes) copy_payload(cs_request_payload(rq), cs_request_payload(sq), env.bytes);
            cs_bus_emit_n(w->bus, ev, 3);
            cs_request_done_publish(rq);
            cs_request_done_publish(sq);
        }
        pthread_mutex_unlock(&m->lock);
        free(msg);
        return CS_OK;
    }
    if (!msg && !(msg = malloc(sizeof *msg))) { /* no receive was taken */
        pthread_mutex_unlock(&m->lock);
        return CS_ENOMEM;
    }
    *msg = env;
    if (copy) buffered(msg, copy);
    else if (refused) sq->unbuffered = true; /* queued uncopied: the rank fails */
    if (rq) pair(w, msg, rq);
    else cs_match_push_unexpected(m, msg);
    pthread_mutex_unlock(&m->lock);
    return CS_OK;
}

cs_request *cs_match_claim(cs_world *w, cs_matcher *m, const cs_msg *msg) {
    cs_request *rq = NULL;
    char err[1];
    pthread_mutex_lock(&m->lock);
    for (cs_request *q = m->posted; q && !rq; q = q->next)
        if (cs_match_fits(msg, q)) rq = q;
    /* A mismatch takes the usual way, which reports it once the bytes are read. */
    if (rq && cs_match_check(msg, rq, NULL, err, sizeof err)) {
        cs_match_take_posted(m, msg); /* the same receive: the first that fits */
        rq->source = msg->src;
        emit_match(w, msg, rq);
    } else {
        rq = NULL;
    }
    pthread_mutex_unlock(&m->lock);
    return rq;
}

/* A waiting send of this process (the thread engine, rendezvous) that agrees
 * with rq: as pair() and cs_msg_transfer_local, with the match and both
 * completes as one batch of the stream, as cs_match_send_local does. A
 * ping-pong whose sends arrive before their receives settles into this path
 * for good, so it is as short as the other. */
static bool pair_local(cs_world *w, cs_msg *msg, cs_request *rq) {
    cs_request *sq = msg->sreq;
    if (!sq || msg->data || msg->engine_data || msg->bytes != rq->bytes ||
        msg->dtype != rq->buf->dtype)
        return false;
    rq->source = msg->src;
    cs_event ev[3] = {{.type = CS_EV_MATCH, .rank = rq->rank, .req = rq->id, .op = rq->op,
                       .peer = msg->src, .peer_req = msg->sreq_id, .tag = msg->tag,
                       .ctx = msg->ctx, .bytes = msg->bytes}};
    cs_request_done_event(rq, &ev[1]);
    cs_request_done_event(sq, &ev[2]);
    if (msg->bytes) copy_payload(cs_request_payload(rq), cs_request_payload(sq), msg->bytes);
    cs_bus_emit_n(w->bus, ev, 3);
    msg->sreq = NULL;
    cs_request_done_publish(rq);
    cs_request_done_publish(sq);
    cs_msg_free(msg);
    return true;
}

void cs_match_post_recv(cs_world *w, cs_matcher *m, cs_request *rq) {
    pthread_mutex_lock(&m->lock);
    cs_msg *msg = cs_match_take_unexpected(m, rq);
    if (msg && !pair_local(w, msg, rq)) pair(w, msg, rq);
    else if (!msg) cs_match_push_posted(m, rq);
    pthread_mutex_unlock(&m->lock);
}
