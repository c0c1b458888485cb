/* engine_tcp.c -- every rank a process; a full mesh of TCP connections.
 *
 * Sending: the rank's thread queues a frame on the peer's connection and writes
 * it at once when the queue was empty (the common case: no hand-off to another
 * thread on the way out). What the socket does not take is written by the
 * progress thread when epoll says it can. An eager send goes as MSG with its
 * payload and completes at once (its bytes are copied only if the socket could
 * not take them). A rendezvous send goes as RTS; the receiver's matcher pairs
 * it with a receive, answers CTS, and the payload follows as DATA, read
 * straight into the receive tensor: nothing large is buffered on either side.
 *
 * Receiving: the progress thread reads every connection, delivers MSG and RTS
 * to the rank's matcher (match.c, shared with the thread engine) and completes
 * receives when their DATA has arrived. It also streams the rank's events to
 * the controller (coalesced, flushed on every wake-up and at least every 2 ms)
 * and obeys the controller's ABORT and FLUSH.
 *
 * Locks: matcher -> connection -> bus -> controller connection. Requests are
 * finished (which emits events) only after a connection's lock is released.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <time.h>

#include "engine_tcp_internal.h"

/* ---- engine operations (rank thread, or the progress thread via the matcher) */

static tcp_engine *tcp_of(cs_engine *e) { return (tcp_engine *)e; }

static void envelope_of(const cs_request *sq, cs_envelope *env) {
    cs_msg m = {0};
    cs_msg_envelope(&m, sq);
    *env = (cs_envelope){.src = m.src, .tag = m.tag, .ctx = m.ctx, .bytes = m.bytes,
                         .dtype = (uint8_t)m.dtype, .ndim = (uint8_t)m.ndim, .line = m.line,
                         .sreq_id = m.sreq_id};
    memcpy(env->shape, m.shape, sizeof env->shape);
}

/* A send to oneself never touches a socket: the thread engine's way. */
static int send_local(tcp_engine *e, cs_request *sq) {
    cs_world *w = e->base.world;
    cs_msg *msg = calloc(1, sizeof *msg);
    if (!msg) return CS_ENOMEM;
    cs_msg_envelope(msg, sq);
    msg->sreq = sq;
    cs_match_deliver(w, &w->matchers[e->rank], msg);
    return CS_OK;
}

static int tcp_send(cs_engine *eng, cs_request *sq, bool eager) {
    tcp_engine *e = tcp_of(eng);
    if (sq->peer == e->rank) return send_local(e, sq);
    tconn *c = &e->conns[sq->peer];
    uint8_t meta[CS_WIRE_ENVELOPE];
    cs_cur cur = {.p = meta, .len = sizeof meta};
    cs_envelope env;
    envelope_of(sq, &env);
    cs_envelope_put(&cur, &env);
    if (eager) {
        txitem *it = tcp_item_new(CS_FR_MSG, meta, sizeof meta, cs_tensor_data(sq->buf), sq->bytes);
        if (!it) goto nomem;
        tcp_conn_push(c, it, true);
        cs_request_finish(sq, CS_OK, NULL); /* buffered (or written): an eager send is done */
        return CS_OK;
    }
    /* Rendezvous: a small payload travels with the request (SYNC, completed by
     * ACK); a large one waits for CTS, so the receiver never buffers it. */
    bool inline_data = sq->bytes <= CS_WIRE_SYNC_MAX;
    txitem *it = inline_data ? tcp_item_new(CS_FR_SYNC, meta, sizeof meta, cs_tensor_data(sq->buf), sq->bytes)
                             : tcp_item_new(CS_FR_RTS, meta, sizeof meta, NULL, 0);
    rts_wait *r = calloc(1, sizeof *r);
    if (!it || !r) {
        free(it);
        free(r);
        goto nomem;
    }
    r->id = sq->id;
    r->sq = sq;
    txitem *done = NULL;
    pthread_mutex_lock(&c->lock);
    if (c->dead) {
        cs_request_release(sq); /* stays pending: the run is ending */
        free(r);
        free(it);
    } else {
        r->next = c->rts; /* before the RTS leaves: the CTS may come back at once */
        c->rts = r;
        tcp_conn_push_locked(c, it, false, &done);
    }
    pthread_mutex_unlock(&c->lock);
    tcp_items_done(done);
    return CS_OK;
nomem:
    snprintf(sq->owner->errmsg, sizeof sq->owner->errmsg, "out of memory sending a message");
    return CS_ENOMEM;
}

static void send_id(tconn *c, int type, uint64_t id) {
    uint8_t m[8];
    cs_cur cur = {.p = m, .len = sizeof m};
    cs_put_u64(&cur, id);
    txitem *it = tcp_item_new(type, m, sizeof m, NULL, 0);
    if (it) tcp_conn_push(c, it, false);
}

/* The matcher paired msg with rq (its lock held). Local and eager messages
 * carry their bytes; a remote rendezvous message is cleared to send. */
static void tcp_transfer(cs_engine *eng, cs_msg *msg, cs_request *rq) {
    (void)eng;
    tconn *c = msg->engine_data;
    if (!c || msg->data) {
        uint64_t sreq_id = msg->sreq_id;
        cs_msg_transfer_local(msg, rq);
        if (c) send_id(c, CS_FR_ACK, sreq_id); /* a SYNC: its sender waits */
        return;
    }
    cts_wait *cw = calloc(1, sizeof *cw);
    uint8_t meta[16];
    cs_cur cur = {.p = meta, .len = sizeof meta};
    txitem *done = NULL;
    pthread_mutex_lock(&c->lock);
    if (!cw || c->dead) {
        cs_request_release(rq); /* stays pending: the run is ending (or memory is out) */
        free(cw);
    } else {
        cw->token = ++c->next_token;
        cw->rq = rq;
        if (c->cts_t) c->cts_t->next = cw;
        else c->cts_h = cw;
        c->cts_t = cw;
        cs_put_u64(&cur, msg->sreq_id);
        cs_put_u64(&cur, cw->token);
        txitem *it = tcp_item_new(CS_FR_CTS, meta, sizeof meta, NULL, 0);
        if (it) tcp_conn_push_locked(c, it, false, &done);
    }
    pthread_mutex_unlock(&c->lock);
    tcp_items_done(done);
    cs_msg_free(msg);
}

static void tcp_reject(cs_engine *eng, cs_msg *msg, const char *why) {
    (void)eng;
    tconn *c = msg->engine_data;
    if (c) {
        uint8_t meta[8 + CS_WIRE_MAX_TEXT];
        size_t n = strlen(why);
        if (n > CS_WIRE_MAX_TEXT) n = CS_WIRE_MAX_TEXT;
        cs_cur cur = {.p = meta, .len = sizeof meta};
        cs_put_u64(&cur, msg->sreq_id);
        cs_put_bytes(&cur, why, n);
        txitem *it = tcp_item_new(CS_FR_REJECT, NULL, 0, NULL, 0);
        /* the reason may not fit the inline head: send it as the item's data */
        if (it) {
            cs_wire_hdr_put(it->head, CS_FR_REJECT, (uint32_t)cur.pos, 0);
            it->data = meta;
            it->dlen = cur.pos;
            tcp_conn_push(c, it, true);
        }
    } else if (msg->sreq) {
        cs_request *sq = msg->sreq;
        msg->sreq = NULL;
        cs_request_finish(sq, CS_EMISMATCH, why);
    }
    cs_msg_free(msg);
}

/* ---- receiving on a mesh connection (progress thread) */

static rts_wait *take_rts(tconn *c, uint64_t id) {
    pthread_mutex_lock(&c->lock);
    rts_wait **p = &c->rts, *r = NULL;
    while (*p && (*p)->id != id) p = &(*p)->next;
    if (*p) {
        r = *p;
        *p = r->next;
    }
    pthread_mutex_unlock(&c->lock);
    return r;
}

static int on_envelope(tconn *c, const cs_frame_hdr *h, cs_cur *meta, void **dst, char *err,
                       size_t errlen) {
    tcp_engine *e = c->e;
    cs_envelope env;
    if (cs_envelope_get(meta, &env, e->world) < 0 || env.src != c->peer ||
        (h->type != CS_FR_RTS && h->data_len != env.bytes)) {
        snprintf(err, errlen, "malformed %s envelope", cs_frame_name(h->type));
        return -1;
    }
    cs_msg *msg = calloc(1, sizeof *msg);
    if (!msg) goto nomem;
    *msg = (cs_msg){.src = env.src, .tag = env.tag, .ctx = env.ctx, .bytes = env.bytes,
                    .dtype = (cs_dtype)env.dtype, .ndim = env.ndim, .line = env.line,
                    .sreq_id = env.sreq_id};
    memcpy(msg->shape, env.shape, sizeof msg->shape);
    cs_world *w = e->base.world;
    if (h->type == CS_FR_RTS) {
        msg->engine_data = c;
        cs_match_deliver(w, &w->matchers[e->rank], msg);
        return 0;
    }
    msg->data = malloc(env.bytes ? env.bytes : 1);
    if (!msg->data) {
        free(msg);
        goto nomem;
    }
    if (h->type == CS_FR_SYNC) msg->engine_data = c; /* ACK it once matched */
    c->rx_msg = msg;
    *dst = msg->data;
    return 0;
nomem:
    snprintf(err, errlen, "out of memory receiving a message of %llu bytes",
             (unsigned long long)env.bytes);
    return -1;
}

static int on_cts(tconn *c, cs_cur *meta, char *err, size_t errlen) {
    uint64_t id = cs_get_u64(meta), token = cs_get_u64(meta);
    rts_wait *r = take_rts(c, id);
    if (!r) {
        snprintf(err, errlen, "CTS for unknown send %llu", (unsigned long long)id);
        return -1;
    }
    cs_request *sq = r->sq;
    free(r);
    uint8_t m[8];
    cs_cur cur = {.p = m, .len = sizeof m};
    cs_put_u64(&cur, token);
    txitem *it = tcp_item_new(CS_FR_DATA, m, sizeof m, cs_tensor_data(sq->buf), sq->bytes);
    if (!it) {
        cs_request_finish(sq, CS_ENOMEM, "out of memory sending a message");
        return 0;
    }
    it->finish = sq; /* the tensor stays put until then: the sender waits on sq */
    tcp_conn_push(c, it, false);
    return 0;
}

static int on_data(tconn *c, const cs_frame_hdr *h, cs_cur *meta, void **dst, char *err,
                   size_t errlen) {
    uint64_t token = cs_get_u64(meta);
    pthread_mutex_lock(&c->lock);
    cts_wait *cw = c->cts_h;
    if (cw && cw->token == token) {
        c->cts_h = cw->next;
        if (!c->cts_h) c->cts_t = NULL;
    }
    pthread_mutex_unlock(&c->lock);
    if (!cw || cw->token != token || h->data_len != cw->rq->bytes) {
        snprintf(err, errlen, "DATA that no CTS asked for");
        return -1;
    }
    c->rx_cts = cw;
    *dst = cs_tensor_data(cw->rq->buf);
    return 0;
}

static int on_ack(tconn *c, cs_cur *meta, char *err, size_t errlen) {
    uint64_t id = cs_get_u64(meta);
    rts_wait *r = take_rts(c, id);
    if (!r) {
        snprintf(err, errlen, "ACK of unknown send %llu", (unsigned long long)id);
        return -1;
    }
    cs_request_finish(r->sq, CS_OK, NULL);
    free(r);
    return 0;
}

static int on_reject(tconn *c, cs_cur *meta, char *err, size_t errlen) {
    uint64_t id = cs_get_u64(meta);
    size_t n = meta->len - meta->pos;
    char why[CS_WIRE_MAX_TEXT + 1];
    memcpy(why, cs_get_bytes(meta, n), n);
    why[n] = 0;
    rts_wait *r = take_rts(c, id);
    if (!r) {
        snprintf(err, errlen, "REJECT of unknown send %llu", (unsigned long long)id);
        return -1;
    }
    cs_request_finish(r->sq, CS_EMISMATCH, why);
    free(r);
    return 0;
}

static int mesh_frame(void *ud, const cs_frame_hdr *h, cs_cur *meta, void **dst, char *err,
                      size_t errlen) {
    tconn *c = ud;
    switch (h->type) {
    case CS_FR_MSG:
    case CS_FR_SYNC:
    case CS_FR_RTS: return on_envelope(c, h, meta, dst, err, errlen);
    case CS_FR_ACK: return on_ack(c, meta, err, errlen);
    case CS_FR_CTS: return on_cts(c, meta, err, errlen);
    case CS_FR_DATA: return on_data(c, h, meta, dst, err, errlen);
    case CS_FR_REJECT: return on_reject(c, meta, err, errlen);
    default:
        snprintf(err, errlen, "unexpected %s frame", cs_frame_name(h->type));
        return -1;
    }
}

static int mesh_payload(void *ud, char *err, size_t errlen) {
    (void)err, (void)errlen;
    tconn *c = ud;
    tcp_engine *e = c->e;
    if (c->rx_msg) {
        cs_msg *msg = c->rx_msg;
        c->rx_msg = NULL;
        cs_world *w = e->base.world;
        cs_match_deliver(w, &w->matchers[e->rank], msg);
    } else if (c->rx_cts) {
        cts_wait *cw = c->rx_cts;
        c->rx_cts = NULL;
        cs_request_finish(cw->rq, CS_OK, NULL);
        free(cw);
    }
    return 0;
}

static const cs_rx_ops mesh_ops = {mesh_frame, mesh_payload};

/* ---- the controller connection */

/* Move the encoded events into the controller's queue (ctl.lock held). */
static void events_queue_locked(tcp_engine *e, txitem **done) {
    if (!e->evlen) return;
    txitem *it = calloc(1, sizeof *it);
    if (!it) return; /* keep them for the next try */
    it->data = e->evbuf;
    it->dlen = e->evlen;
    it->owned = e->evbuf;
    e->evbuf = NULL;
    e->evlen = e->evcap = 0;
    tcp_conn_push_locked(&e->ctl, it, false, done);
}

/* Queue it for the controller, after every event emitted so far when asked:
 * the controller must see what led up to a frame before the frame. */
static void ctl_push(tcp_engine *e, txitem *it, bool borrowed, bool with_events) {
    txitem *done = NULL;
    pthread_mutex_lock(&e->ctl.lock);
    if (with_events) events_queue_locked(e, &done);
    if (it) tcp_conn_push_locked(&e->ctl, it, borrowed, &done);
    pthread_mutex_unlock(&e->ctl.lock);
    tcp_items_done(done);
}

static void ctl_send(tcp_engine *e, int type, bool with_events) {
    ctl_push(e, tcp_item_new(type, NULL, 0, NULL, 0), false, with_events);
}

static void end_job(tcp_engine *e, int reason) {
    pthread_mutex_lock(&e->end_lock);
    if (!e->ended) {
        e->ended = true;
        e->end_reason = reason;
    }
    pthread_cond_broadcast(&e->end_cond);
    pthread_mutex_unlock(&e->end_lock);
}

static bool valid_reason(uint32_t r) {
    return r == CS_END_ERROR || r == CS_END_DEADLOCK || r == CS_END_TIMEOUT ||
           r == CS_END_DIED || r == CS_END_QUIT;
}

static int ctl_frame(void *ud, const cs_frame_hdr *h, cs_cur *meta, void **dst, char *err,
                     size_t errlen) {
    (void)dst;
    tcp_engine *e = ud;
    if (h->type == CS_FR_ABORT) {
        uint32_t why = cs_get_u32(meta);
        if (!valid_reason(why)) {
            snprintf(err, errlen, "ABORT with unknown reason %u", why);
            return -1;
        }
        cs_world_abort(e->base.world, (cs_end_reason)why);
        end_job(e, (int)why);
        return 0;
    }
    if (h->type == CS_FR_FLUSH) {
        ctl_send(e, CS_FR_FLUSHED, true);
        return 0;
    }
    if (h->type == CS_FR_GO) {
        uint64_t seq = cs_get_u64(meta);
        pthread_mutex_lock(&e->end_lock);
        bool ok = seq == e->gate_seq && e->go_seq < seq; /* the gate the rank waits at */
        if (ok) e->go_seq = seq;
        pthread_cond_broadcast(&e->end_cond);
        pthread_mutex_unlock(&e->end_lock);
        if (ok) return 0;
        snprintf(err, errlen, "GO for gate %llu, but the rank waits at none", (unsigned long long)seq);
        return -1;
    }
    snprintf(err, errlen, "unexpected %s frame from the controller", cs_frame_name(h->type));
    return -1;
}

static int ctl_payload(void *ud, char *err, size_t errlen) {
    (void)ud, (void)err, (void)errlen;
    return 0;
}

static const cs_rx_ops ctl_ops = {ctl_frame, ctl_payload};

/* The controller closed the connection: the job is over (after our BYE) or the
 * controller died (before it): then the rank unwinds and the process leaves. */
static void ctl_closed(tcp_engine *e, const char *err) {
    tcp_conn_kill(&e->ctl);
    pthread_mutex_lock(&e->end_lock);
    bool finishing = e->finishing;
    pthread_mutex_unlock(&e->end_lock);
    if (!finishing) {
        fprintf(stderr, "commsim: rank %d: lost the controller%s%s; leaving\n", e->rank,
                err ? ": " : "", err ? err : "");
        cs_world_abort(e->base.world, CS_END_DIED);
        atomic_store(&e->ctl_lost_at, cs_now());
    }
    end_job(e, finishing ? CS_END_NONE : CS_END_DIED);
}

static void event_emit(void *ud, const cs_event *ev) {
    tcp_engine *e = ud;
    size_t n = cs_wire_event_len(ev);
    pthread_mutex_lock(&e->ctl.lock);
    if (e->evlen + CS_WIRE_HDR + n > e->evcap) {
        size_t cap = e->evcap ? e->evcap : 4096;
        while (cap < e->evlen + CS_WIRE_HDR + n) cap *= 2;
        uint8_t *nb = realloc(e->evbuf, cap);
        if (!nb) {
            pthread_mutex_unlock(&e->ctl.lock);
            return;
        }
        e->evbuf = nb;
        e->evcap = cap;
    }
    cs_wire_hdr_put(e->evbuf + e->evlen, CS_FR_EVENT, (uint32_t)n, 0);
    cs_cur cur = {.p = e->evbuf + e->evlen + CS_WIRE_HDR, .len = n};
    cs_wire_event_put(&cur, ev);
    e->evlen += CS_WIRE_HDR + n;
    pthread_mutex_unlock(&e->ctl.lock);
}

cs_sink cs_tcp_event_sink(cs_engine *e) { return (cs_sink){event_emit, e}; }

/* ---- gates of a gated run */

/* Ask for GO: what the rank is about to do, and its tensor as printed for the
 * front end to show (it is the rank's, and the rank stands still until GO). */
static int gate_ask(tcp_engine *e, cs_rank *r, cs_op op, int line, uint64_t seq) {
    cs_gate_msg g = {.seq = seq, .op = (uint8_t)op, .line = line, .peer = CS_NO_RANK};
    cs_tensor *t = NULL;
    int peer, tag;
    if (cs_rank_gate_op(r, &peer, &tag, &t)) {
        g.peer = peer;
        g.tag = tag;
    }
    char *text = t ? cs_tensor_format(t) : NULL;
    g.text = text;
    g.text_len = text ? strlen(text) : 0;
    size_t n = cs_gate_len(&g);
    uint8_t *meta = malloc(n);
    txitem *it = tcp_item_new(CS_FR_GATE, NULL, 0, NULL, 0);
    if (!meta || !it) {
        free(text);
        free(meta);
        free(it);
        return CS_ENOMEM;
    }
    cs_cur cur = {.p = meta, .len = n};
    cs_gate_put(&cur, &g);
    free(text);
    /* metadata larger than the item's inline head travels as its data */
    cs_wire_hdr_put(it->head, CS_FR_GATE, (uint32_t)n, 0);
    it->data = it->owned = meta;
    it->dlen = n;
    ctl_push(e, it, false, true);
    return CS_OK;
}

int cs_tcp_gate(void *ud, cs_rank *r, cs_op op, int line) {
    tcp_engine *e = ud;
    cs_world *w = e->base.world;
    pthread_mutex_lock(&e->end_lock);
    uint64_t seq = ++e->gate_seq;
    pthread_mutex_unlock(&e->end_lock);
    int rc = gate_ask(e, r, op, line, seq);
    if (rc != CS_OK) return rc;
    pthread_mutex_lock(&e->end_lock);
    /* GO, ABORT and a lost controller all signal end_cond; the tick is a backstop */
    while (e->go_seq != seq && !e->ended && !cs_world_aborted(w)) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 50 * 1000 * 1000;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&e->end_cond, &e->end_lock, &ts);
    }
    bool go = e->go_seq == seq;
    pthread_mutex_unlock(&e->end_lock);
    return go && !cs_world_aborted(w) ? CS_OK : CS_EABORT;
}

/* ---- the progress thread */

static void conn_readable(tconn *c) {
    char err[256];
    /* The other thread is reading it and reads until the socket is empty. */
    if (pthread_mutex_trylock(&c->rx_lock) != 0) return;
    int rc = c->peer < 0 ? cs_rx_pump(&c->rx, c->fd, &ctl_ops, c->e, err, sizeof err)
                         : cs_rx_pump(&c->rx, c->fd, &mesh_ops, c, err, sizeof err);
    pthread_mutex_unlock(&c->rx_lock);
    if (rc == 0) return;
    tcp_engine *e = c->e;
    if (c->peer < 0) {
        ctl_closed(e, rc == -1 ? err : NULL);
        return;
    }
    /* A peer that exits closes its side: not an error (the controller knows
     * whether it died). A malformed frame from an authenticated peer is. */
    if (rc == -1 && !cs_world_aborted(e->base.world))
        fprintf(stderr, "commsim: rank %d: closing the connection from rank %d: %s\n", e->rank,
                c->peer, err);
    tcp_conn_kill(c);
}

static int progress_once(tcp_engine *e, int ms) {
    struct epoll_event evs[64];
    int n = epoll_wait(e->epfd, evs, 64, ms);
    for (int i = 0; i < n; i++) {
        tconn *c = evs[i].data.ptr;
        if (!c) { /* a nudge: drain it */
            uint64_t v;
            if (read(e->wakefd, &v, sizeof v) < 0) { /* already drained by the other thread */ }
            continue;
        }
        if (evs[i].events & EPOLLOUT) tcp_conn_writable(c);
        if (evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) conn_readable(c);
    }
    /* Events go out in batches: a send per message would wake the controller
     * (on the same cores, locally) as often as the ranks exchange messages. */
    double now = cs_now();
    txitem *done = NULL;
    pthread_mutex_lock(&e->ctl.lock);
    if (now - e->flushed_at >= FLUSH_MS * 1e-3 || e->evlen >= EVENT_BATCH) {
        events_queue_locked(e, &done);
        e->flushed_at = now;
    }
    pthread_mutex_unlock(&e->ctl.lock);
    tcp_items_done(done);
    return n;
}

static void nudge(tcp_engine *e) {
    uint64_t one = 1;
    if (write(e->wakefd, &one, sizeof one) < 0) { /* full: a nudge is pending anyway */ }
}

static void *progress_main(void *arg) {
    tcp_engine *e = arg;
    while (!atomic_load(&e->stop)) {
        if (atomic_load(&e->rank_idle)) {
            /* The rank waits and serves the sockets itself (tcp_idle): step
             * aside, so that an arriving message wakes the waiting thread and
             * not this one. Back within 1 ms of the wait's end. */
            struct timespec ms = {0, 1000 * 1000};
            syscall(SYS_futex, (int *)&e->rank_idle, FUTEX_WAIT_PRIVATE, 1, &ms, NULL, 0);
        } else if (progress_once(e, FLUSH_MS) > 0 && atomic_load(&e->rank_idle)) {
            nudge(e); /* the rank started waiting meanwhile: let it look */
        }
        double lost = atomic_load(&e->ctl_lost_at);
        if (lost && cs_now() - lost > CTL_LOST_GRACE) {
            /* the rank is stuck in C code and the controller is gone: leave */
            fprintf(stderr, "commsim: rank %d: the controller is gone; exiting\n", e->rank);
            _exit(CS_END_DIED);
        }
    }
    return NULL;
}

/* The rank's thread waits: serve the sockets from here until something
 * happens to the rank (a completion or an abort bumps its futex word), so that
 * an arriving message wakes the waiting thread directly. */
static void tcp_idle(cs_engine *eng, cs_rank *r, uint32_t seen) {
    tcp_engine *e = tcp_of(eng);
    /* Not asleep on the futex: completions need not make the system call to
     * wake it (the progress thread nudges through epoll instead). */
    atomic_store(&r->sleeping, 0);
    atomic_store(&e->rank_idle, 1);
    while (atomic_load(&r->futex) == seen && !cs_world_aborted(e->base.world))
        progress_once(e, FLUSH_MS);
    atomic_store(&e->rank_idle, 0);
}

/* ---- life cycle */

/* ---- life cycle */

static void tcp_destroy(cs_engine *eng) {
    tcp_engine *e = tcp_of(eng);
    if (e->started) {
        atomic_store(&e->stop, 1);
        uint64_t one = 1;
        if (write(e->wakefd, &one, sizeof one) < 0) { /* the 2 ms tick ends it anyway */ }
        pthread_join(e->thread, NULL);
    }
    for (int i = 0; e->conns && i < e->world; i++) tcp_conn_free(&e->conns[i]);
    tcp_conn_free(&e->ctl);
    free(e->conns);
    free(e->evbuf);
    if (e->wakefd >= 0) close(e->wakefd);
    if (e->epfd >= 0) close(e->epfd);
    pthread_mutex_destroy(&e->end_lock);
    pthread_cond_destroy(&e->end_cond);
    free(e);
}

static const cs_engine_ops tcp_ops = {
    .name = "tcp",
    .send = tcp_send,
    .transfer = tcp_transfer,
    .reject = tcp_reject,
    .destroy = tcp_destroy,
    .idle = tcp_idle,
};

static void mesh_close(cs_tcp_mesh *m) {
    for (int i = 0; i < m->world; i++)
        if (m->fds[i] >= 0) close(m->fds[i]);
    free(m->fds);
    m->fds = NULL;
    if (m->ctl_fd >= 0) close(m->ctl_fd);
    m->ctl_fd = -1;
}

cs_engine *cs_engine_tcp_new(cs_world *w, cs_tcp_mesh *m) {
    tcp_engine *e = calloc(1, sizeof *e);
    if (!e) {
        mesh_close(m);
        return NULL;
    }
    e->base.ops = &tcp_ops;
    e->base.world = w;
    e->world = m->world;
    e->rank = m->rank;
    pthread_mutex_init(&e->end_lock, NULL);
    pthread_cond_init(&e->end_cond, NULL);
    e->epfd = epoll_create1(EPOLL_CLOEXEC);
    e->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    e->conns = calloc((size_t)m->world, sizeof *e->conns);
    bool ok = e->epfd >= 0 && e->wakefd >= 0 && e->conns;
    if (ok) {
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
        ok = epoll_ctl(e->epfd, EPOLL_CTL_ADD, e->wakefd, &ev) == 0;
    }
    /* From here on the engine owns every socket, even those not yet set up. */
    for (int i = 0; i < m->world; i++) {
        if (m->fds[i] < 0) continue;
        int fd = m->fds[i];
        m->fds[i] = -1;
        if (ok) ok = tcp_conn_init(e, &e->conns[i], fd, i, m->max_payload) == 0;
        else close(fd);
    }
    int cfd = m->ctl_fd;
    m->ctl_fd = -1;
    if (ok) ok = tcp_conn_init(e, &e->ctl, cfd, -1, 0) == 0;
    else close(cfd);
    mesh_close(m);
    if (ok) ok = pthread_create(&e->thread, NULL, progress_main, e) == 0;
    e->started = ok;
    if (!ok) {
        tcp_destroy(&e->base);
        return NULL;
    }
    return &e->base;
}

/* Every mesh queue written out, or the connection gone, or the run aborted. */
static bool mesh_drained(tcp_engine *e) {
    for (int i = 0; i < e->world; i++) {
        tconn *c = &e->conns[i];
        if (!c->e) continue;
        pthread_mutex_lock(&c->lock);
        bool busy = c->txh && !c->dead;
        pthread_mutex_unlock(&c->lock);
        if (busy) return false;
    }
    return true;
}

int cs_tcp_finish(cs_engine *eng) {
    tcp_engine *e = tcp_of(eng);
    /* Eager messages may still sit in a queue: the receiver needs them. */
    while (!mesh_drained(e) && !cs_world_aborted(e->base.world)) usleep(200);
    pthread_mutex_lock(&e->end_lock);
    e->finishing = true;
    pthread_mutex_unlock(&e->end_lock);
    ctl_send(e, CS_FR_BYE, true);
    pthread_mutex_lock(&e->end_lock);
    while (!e->ended) pthread_cond_wait(&e->end_cond, &e->end_lock);
    int why = e->end_reason;
    pthread_mutex_unlock(&e->end_lock);
    return why;
}
