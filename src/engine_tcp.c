/* engine_tcp.c -- every rank a process; a full mesh of TCP connections.
 *
 * Sending: the rank's thread queues a frame on the peer's connection and writes
 * it at once unless the socket is full (the common case: no hand-off to another
 * thread on the way out). What the socket does not take is written by the
 * progress thread when epoll says it can. An eager send goes as MSG with its
 * payload and completes at once (its bytes are copied only if the socket could
 * not take them). A small rendezvous send goes as SYNC with its payload and
 * completes on the receiver's ACK; a large one goes as RTS, the receiver's
 * matcher pairs it with a receive and answers CTS, and the payload follows as
 * DATA, read straight into the receive tensor: nothing large is buffered on
 * either side.
 *
 * An ACK owed by the rank's own thread (its receive found the SYNC, or its
 * wait read it) is deferred: it leaves with the rank's next frame to that
 * peer, typically the reply of a ping-pong, so that one write and one wake-up
 * carry both; at the latest when the rank next waits, stops at a gate or
 * ends, or when the progress thread takes over while it computes (within
 * 32 ms: see below).
 *
 * Receiving: the progress thread reads every connection, delivers MSG and RTS
 * to the rank's matcher (match.c, shared with the thread engine) and completes
 * receives when their DATA has arrived. The same loop drives the rank's link
 * to the controller (rank_link.c: events up every 2 ms while there are any,
 * the controller's ABORT, FLUSH and GO), so that a rank process keeps one
 * background thread. While the rank's thread waits it
 * serves the sockets itself (tcp_poll, tcp_idle) and the progress thread
 * steps aside; a waiting rank first polls its sockets for up to 100 us while
 * that pays (engine_tcp_spin.c: before it announces the block with a core per
 * rank, after it when ranks outnumber cores), then sleeps in epoll until a
 * frame arrives or its link is due (the events of the wait's start within a
 * tick, then the next ALIVE). With a core per rank, the rank's posts,
 * matches and completes wait in the bus's ring (events.h) and are encoded
 * for the controller between those polls, not on the way of a message.
 * The progress thread, parked meanwhile, looks again after 1 ms, then after
 * twice as long each time it finds the rank waiting or back from a wait
 * begun since its last look, up to 16 ms: on 64 ranks that mostly wait,
 * waking every few ms was most of the cost, and in a ping-pong on 2 cores
 * every look that took over the sockets took a core from a rank. It takes
 * over once a look finds the rank computing with no wait since the last one
 * (within two looks, 32 ms at most); a gate and the rank's end call it back
 * at once (tcp_flush).
 *
 * Locks: matcher -> connection -> bus -> link. Requests are finished (which
 * emits events) only after a connection's lock is released.
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
#include "errmsg.h"
#include "msgbuf.h"
#include "stage.h"

/* ---- engine operations (rank thread, or the progress thread via the matcher) */

static tcp_engine *tcp_of(cs_engine *e) { return (tcp_engine *)e; }

static void envelope_of(const cs_request *sq, cs_envelope *env) {
    cs_msg m = {0};
    cs_msg_envelope(&m, sq);
    *env = (cs_envelope){.src = m.src, .tag = m.tag, .ctx = m.ctx, .bytes = m.bytes,
                         .dtype = (uint8_t)m.dtype, .ndim = (uint8_t)m.ndim, .line = m.line,
                         .coll_sig = m.coll_sig, .sreq_id = m.sreq_id};
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
        txitem *it = tcp_item_new(CS_FR_MSG, meta, sizeof meta, cs_request_payload(sq), sq->bytes);
        if (!it) goto nomem;
        /* Done once written or copied aside (the copy charged to this rank's
         * cap), as before when the connection is gone; an item that waits
         * uncopied finishes its send when written. */
        it->budget = cs_rank_budget(sq->owner);
        txitem *done = NULL;
        bool now = true;
        pthread_mutex_lock(&c->lock);
        bool dead = c->dead;
        if (sq->exchange) tcp_conn_exchange_send_locked(c, sq, NULL, NULL); /* counted */
        tcp_conn_push_locked(c, it, true, &done);
        /* unless the connection is gone (the item with it), it is queued or
         * written (in done, not yet freed) */
        if (!dead && !c->dead && it->uncopied) {
            it->finish = sq;
            sq->unbuffered = it->over_cap; /* the rank fails at its line */
            now = false;
        }
        pthread_mutex_unlock(&c->lock);
        tcp_items_done(done);
        if (now) cs_request_finish(sq, CS_OK, NULL);
        return CS_OK;
    }
    /* Rendezvous: a small payload travels with the request (SYNC, completed by
     * ACK); a large one waits for CTS, so the receiver never buffers it. The
     * SYNC payloads not yet acknowledged on a connection are bounded
     * (TCP_SYNC_WINDOW): past it a small send goes as RTS too, so a flood of
     * small rendezvous sends posted before their receives costs the receiver
     * no more memory than on the thread engine. */
    rts_wait *r = calloc(1, sizeof *r);
    if (!r) goto nomem;
    pthread_mutex_lock(&c->lock);
    bool inline_data = sq->bytes <= CS_WIRE_SYNC_MAX && c->sync_inflight + sq->bytes <= TCP_SYNC_WINDOW;
    if (inline_data) {
        r->sync_bytes = sq->bytes;
        c->sync_inflight += sq->bytes;
    }
    pthread_mutex_unlock(&c->lock);
    txitem *it = inline_data ? tcp_item_new(CS_FR_SYNC, meta, sizeof meta, cs_request_payload(sq), sq->bytes)
                             : tcp_item_new(CS_FR_RTS, meta, sizeof meta, NULL, 0);
    if (!it) {
        pthread_mutex_lock(&c->lock);
        c->sync_inflight -= r->sync_bytes;
        pthread_mutex_unlock(&c->lock);
        free(r);
        goto nomem;
    }
    r->id = sq->id;
    r->sq = sq;
    if (inline_data) it->sync_id = sq->id;
    txitem *done = NULL;
    pthread_mutex_lock(&c->lock);
    if (c->dead) {
        cs_request_release(sq); /* stays pending: the run is ending */
        free(r);
        free(it);
    } else if (sq->exchange && !tcp_conn_exchange_send_locked(c, sq, inline_data ? it : NULL, r)) {
        /* an exchange whose receive is matched: done once written, no ACK */
        c->sync_inflight -= r->sync_bytes;
        free(r);
        tcp_conn_push_locked(c, it, false, &done);
    } else {
        tcp_conn_rts_push_locked(c, r); /* before the RTS leaves: the CTS may come back at once */
        tcp_conn_push_locked(c, it, false, &done);
    }
    pthread_mutex_unlock(&c->lock);
    tcp_items_done(done);
    return CS_OK;
nomem:
    snprintf(sq->owner->errmsg, sizeof sq->owner->errmsg, "out of memory sending a message");
    return CS_ENOMEM;
}

/* True on the progress thread: what it queues goes out at once, no rank
 * thread being on its way to send anything after it. */
static _Thread_local bool on_progress_thread;

/* A matched SYNC's ACK. Matched by the rank's own thread (its receive found
 * the message, or its wait read it), the ACK waits for the rank's next frame
 * to that peer, typically the reply of a ping-pong, and shares its system
 * call: the sender is not woken twice per message. It leaves at the latest
 * when the rank waits, stops at a gate or ends, or within a progress round
 * (tcp_flush_deferred). */
static void send_ack(tconn *c, uint64_t id) {
    uint8_t m[8];
    cs_cur cur = {.p = m, .len = sizeof m};
    cs_put_u64(&cur, id);
    txitem *it = tcp_item_new(CS_FR_ACK, m, sizeof m, NULL, 0);
    if (!it) return;
    if (on_progress_thread) tcp_conn_push(c, it, false);
    else tcp_conn_defer(c, it);
}

/* Write the ACKs send_ack held back. */
static void tcp_flush_deferred(tcp_engine *e) {
    /* Cleared before the connections are looked at: a frame deferred
     * meanwhile sets it again (tcp_conn_defer), so none is forgotten. */
    if (!atomic_load(&e->deferred) || !atomic_exchange(&e->deferred, 0)) return;
    for (int i = 0; i < e->world; i++)
        if (e->conns[i].e) tcp_conn_flush(&e->conns[i]);
}

/* The matcher paired msg with rq (its lock held). Local and eager messages
 * carry their bytes; a remote rendezvous message is cleared to send. */
static void tcp_transfer(cs_engine *eng, cs_msg *msg, cs_request *rq) {
    tcp_engine *e = tcp_of(eng);
    tconn *c = msg->engine_data;
    bool exchange = rq->exchange; /* (rq may be gone once finished) */
    if (!c || msg->data) {
        uint64_t sreq_id = msg->sreq_id;
        /* an eager MSG from the peer (no engine_data), or a local message */
        tconn *from = c ? c : msg->src != e->rank ? &e->conns[msg->src] : NULL;
        cs_msg_transfer_local(msg, rq);
        if (c && !exchange) send_ack(c, sreq_id); /* a SYNC: its sender waits */
        cs_request *mine = exchange && from ? tcp_conn_exchanged(from) : NULL;
        if (mine) cs_request_finish(mine, CS_OK, NULL);
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
    cs_request *mine = exchange ? tcp_conn_exchanged(c) : NULL;
    if (mine) cs_request_finish(mine, CS_OK, NULL);
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
        r = tcp_conn_rts_unlink_locked(c, p);
        c->sync_inflight -= r->sync_bytes;
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
                    .coll_sig = env.coll_sig, .sreq_id = env.sreq_id};
    memcpy(msg->shape, env.shape, sizeof msg->shape);
    cs_world *w = e->base.world;
    if (h->type == CS_FR_RTS) {
        msg->engine_data = c;
        cs_match_deliver(w, &w->matchers[e->rank], msg);
        return 0;
    }
    /* A receive already waits for it: its bytes go straight into the receive's
     * tensor, one copy, as a rendezvous message's DATA does. */
    cts_wait *cw = calloc(1, sizeof *cw);
    if (!cw) {
        free(msg);
        goto nomem;
    }
    if ((cw->rq = cs_match_claim(w, &w->matchers[e->rank], msg))) {
        /* a SYNC's sender waits for our ACK, unless it is an exchange's */
        cw->exchange = cw->rq->exchange;
        cw->ack = h->type == CS_FR_SYNC && !cw->exchange;
        cw->token = env.sreq_id;
        c->rx_cts = cw;
        free(msg);
        *dst = cs_request_payload(cw->rq);
        return 0;
    }
    free(cw);
    /* A message buffered here until its receive is posted counts against this
     * rank's memory cap, as the thread engine counts its buffered sends: on
     * tcp the bytes have left the sender, so the receiver pays. Over the cap
     * the connection goes, and the rank's waits fail with the reason. */
    size_t n = env.bytes ? env.bytes : 1;
    cs_budget *b = cs_rank_budget(cs_world_rank(w, e->rank));
    if (!cs_budget_charge(b, n)) {
        free(msg);
        c->rx_fail = CS_ENOMEM;
        snprintf(err, errlen,
                 "%llu bytes from rank %d waiting for a receive here (messages not yet received "
                 "count against the receiver's cap on tcp)",
                 (unsigned long long)env.bytes, c->peer);
        return -1;
    }
    msg->data = cs_msgbuf_alloc(n);
    if (!msg->data) {
        cs_budget_refund(b, n);
        free(msg);
        goto nomem;
    }
    msg->charged = b;
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
    txitem *it = tcp_item_new(CS_FR_DATA, m, sizeof m, cs_request_payload(sq), sq->bytes);
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
    *dst = cs_request_payload(cw->rq);
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
        if (cw->ack) send_ack(c, cw->token); /* a SYNC: its sender waits */
        cs_request *mine = cw->exchange ? tcp_conn_exchanged(c) : NULL;
        if (mine) cs_request_finish(mine, CS_OK, NULL);
        free(cw);
    }
    return 0;
}

static const cs_rx_ops mesh_ops = {mesh_frame, mesh_payload};

/* ---- the progress thread */

/* Read what c's socket holds. Unless wait, a reader already at it is left
 * to it: it reads until the socket is empty. */
static void conn_read(tconn *c, bool wait) {
    char err[256];
    if (wait) pthread_mutex_lock(&c->rx_lock);
    else if (pthread_mutex_trylock(&c->rx_lock) != 0) return;
    int rc = cs_rx_pump(&c->rx, c->fd, &mesh_ops, c, err, sizeof err);
    pthread_mutex_unlock(&c->rx_lock);
    tcp_engine *e = c->e;
    if (rc == 0) {
        atomic_store_explicit(&e->last_rx, c, memory_order_relaxed);
        return;
    }
    atomic_store_explicit(&e->last_rx, NULL, memory_order_relaxed);
    /* A peer that exits closes its side: not an error (the controller knows
     * whether it died). A malformed frame from an authenticated peer is. */
    if (rc == -1 && !cs_world_aborted(e->base.world)) {
        cs_errf(stderr, "rank %d: closing the connection from rank %d: %s\n", e->rank,
                c->peer, err);
        /* Its messages are lost with it: the rank's waits fail now, not at the timeout. */
        char why[sizeof e->base.broken_why];
        snprintf(why, sizeof why, "lost the connection from rank %d: %.200s", c->peer, err);
        cs_engine_break(&e->base, cs_world_rank(e->base.world, e->rank),
                        c->rx_fail ? c->rx_fail : CS_ETRANSPORT, c->rx_fail ? err : why);
    }
    int none = 0;
    if (rc == -2 && !cs_world_aborted(e->base.world) && atomic_compare_exchange_strong(&e->lost, &none, 1)) {
        e->lost_peer = c->peer;
        e->lost_at = cs_now();
        snprintf(e->lost_why, sizeof e->lost_why, "%.190s", err);
        atomic_store(&e->lost, 2);
    }
    tcp_conn_kill(c);
}

/* A peer's connection broke TCP_LOST_GRACE_S ago and no ABORT came: the
 * controller saw no death, the peer lives, and what it sent is lost. The
 * rank's waits fail now, saying so, rather than at --timeout as a "timeout". */
static void tcp_lost(tcp_engine *e) {
    if (atomic_load(&e->lost) != 2 || cs_world_aborted(e->base.world) ||
        cs_now() < e->lost_at + TCP_LOST_GRACE_S)
        return;
    atomic_store(&e->lost, 3);
    cs_errf(stderr, "rank %d: lost the connection from rank %d: %s\n", e->rank, e->lost_peer,
            e->lost_why);
    char why[sizeof e->base.broken_why];
    snprintf(why, sizeof why, "lost the connection from rank %d: %.200s", e->lost_peer, e->lost_why);
    cs_engine_break(&e->base, cs_world_rank(e->base.world, e->rank), CS_ETRANSPORT, why);
}

static void conn_readable(tconn *c) { conn_read(c, false); }

/* Before an ABORT takes effect (cs_rank_link_on_abort): every frame our peers
 * sent before it, a REJECT that fails one of our sends above all. */
static void drain_peers(void *ud) {
    tcp_engine *e = ud;
    for (int i = 0; i < e->world; i++) {
        tconn *c = &e->conns[i];
        if (!c->e) continue; /* no socket: ourselves */
        pthread_mutex_lock(&c->lock);
        bool dead = c->dead;
        pthread_mutex_unlock(&c->lock);
        if (!dead) conn_read(c, true);
    }
}

static int progress_once(tcp_engine *e, int ms) {
    struct epoll_event evs[64];
    int n = epoll_wait(e->epfd, evs, 64, ms);
    for (int i = 0; i < n; i++) {
        void *tag = evs[i].data.ptr;
        if (!tag) { /* a nudge: drain it */
            uint64_t v;
            if (read(e->wakefd, &v, sizeof v) < 0) { /* already drained by the other thread */ }
            continue;
        }
        if (tag == e->link) {
            if (evs[i].events & EPOLLOUT) cs_rank_link_writable(e->link);
            if (evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP) && cs_rank_link_readable(e->link) < 0)
                atomic_store_explicit(&e->last_rx, NULL, memory_order_relaxed);
            continue;
        }
        tconn *c = tag;
        if (evs[i].events & EPOLLOUT) tcp_conn_writable(c);
        if (evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) conn_readable(c);
    }
    cs_rank_link_tick(e->link, cs_now()); /* the events gathered meanwhile, when due */
    return n;
}

/* Back to work now: a gate, the rank's end, the engine's destruction. */
static void call_progress(tcp_engine *e) {
    atomic_store(&e->call, 1);
    syscall(SYS_futex, (int *)&e->call, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void nudge(tcp_engine *e) {
    uint64_t one = 1;
    if (write(e->wakefd, &one, sizeof one) < 0) { /* full: a nudge is pending anyway */ }
}

static void *progress_main(void *arg) {
    tcp_engine *e = arg;
    on_progress_thread = true;
    long park_ns = PARK_MIN_NS;
    unsigned seen = atomic_load(&e->waits) - 1; /* the first look takes over */
    while (!atomic_load(&e->stop)) {
        tcp_flush_deferred(e); /* the rank computes: its ACKs wait no longer */
        unsigned waits = atomic_load(&e->waits);
        bool called = atomic_exchange(&e->call, 0);
        bool waited = atomic_load(&e->rank_idle) || waits != seen;
        seen = waits;
        if (!called && waited) {
            /* The rank waits, or has waited since our last look, and then
             * serves the sockets and the link itself (tcp_idle): step aside,
             * so that an arriving message wakes the waiting thread and not
             * this one. Nobody wakes us when a wait ends (that would cost
             * every wait a system call), and a rank that alternates short
             * computations with waits (a ping-pong) needs no help: we look
             * again after a while, and longer while each look finds the rank
             * waiting or back from a wait, since waking every millisecond on
             * 64 ranks was most of what a busy ring cost, and on 2 ranks
             * with a core each every wake-up took a core from one of them. */
            struct timespec ts = {0, park_ns};
            if (syscall(SYS_futex, (int *)&e->call, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0) < 0 &&
                errno == ETIMEDOUT && park_ns < PARK_MAX_NS)
                park_ns *= 2;
            /* A wait ticks the link only after a few polls (spin_poll): the
             * events and ALIVEs of a rank whose waits all end sooner leave
             * from here. */
            cs_rank_link_tick(e->link, cs_now());
        } else {
            /* The rank has computed since our last look, or stops at a
             * gate or ends (tcp_flush): its sockets and link are ours. */
            park_ns = PARK_MIN_NS;
            if (progress_once(e, FLUSH_MS) > 0 && atomic_load(&e->rank_idle))
                nudge(e); /* the rank started waiting meanwhile: let it look */
        }
        cs_rank_link_watchdog(e->link);
        tcp_lost(e);
    }
    return NULL;
}

/* A wait begins (progress_main reads the count). Only the rank's thread
 * writes it: no locked instruction on the way of a message. */
static void count_wait(tcp_engine *e) {
    unsigned n = atomic_load_explicit(&e->waits, memory_order_relaxed);
    atomic_store_explicit(&e->waits, n + 1, memory_order_relaxed);
}

/* One poll of a waiting rank: mostly a read of the connection that last
 * brought something (the reply it waits for likely comes from there: one
 * system call instead of epoll's two), and every few polls every socket. */
static void spin_poll(tcp_engine *e, unsigned i) {
    tconn *c = atomic_load_explicit(&e->last_rx, memory_order_relaxed);
    if (c && i % SPIN_EPOLL_EVERY) conn_readable(c);
    else progress_once(e, 0);
}

/* How long a waiting rank may sleep in epoll: until its link has something
 * to do (the events of the wait's start leave within a tick, then nothing is
 * due until the next ALIVE), at most IDLE_MAX_MS (an abort raised by another
 * thread only bumps the rank's futex word, which the loop sees on waking). */
static int idle_ms(tcp_engine *e) {
    double ms = cs_rank_link_due(e->link, cs_now()) * 1e3;
    return ms <= 0 ? 0 : ms >= IDLE_MAX_MS ? IDLE_MAX_MS : (int)ms + 1;
}

/* Rank r's thread polls (or yield-polls) its sockets for up to the budget
 * that polling earns (engine_tcp_spin.c), dispatching the deferred events
 * (events.h) between polls: the time the rank waits anyway encodes them for
 * the controller. True when r's futex word moved from seen meanwhile. */
static bool poll_for(tcp_engine *e, cs_rank *r, uint32_t seen) {
    cs_world *w = e->base.world;
    double budget = tcp_spin_budget(&e->spin), spin_end = cs_now() + budget;
    bool spinning = budget > 0;
    unsigned polls = 0;
    while (spinning && atomic_load(&r->futex) == seen && !cs_world_aborted(w)) {
        tcp_flush_deferred(e); /* nothing of ours follows them while we wait */
        if (cs_bus_poll(w->bus, 4)) continue; /* look again first: it took time */
        /* yield-polling: every socket each time (a collective's next frame
         * comes from another peer than the last one) */
        spin_poll(e, e->spin.yield ? 0 : ++polls);
        spinning = tcp_spin_pause(&e->spin) && cs_now() < spin_end;
    }
    tcp_spin_learn(&e->spin, budget, atomic_load(&r->futex) != seen);
    return atomic_load(&r->futex) != seen;
}

/* The wait's first look, before it announces the block: with a core per
 * rank, poll (a ping-pong's reply comes within the budget, and then no block
 * nor unblock is emitted, encoded or folded). Ranks outnumbering cores
 * yield-poll after the announcement, as before (tcp_idle): yield-polling
 * before it measured no better, on a 64-rank ring or a small all_reduce
 * (docs/bench.md). */
static void tcp_poll(cs_engine *eng, cs_rank *r, uint32_t seen) {
    tcp_engine *e = tcp_of(eng);
    if (e->spin.yield) return;
    /* Not asleep on the futex: completions need not make the system call to
     * wake it. The progress thread steps aside (progress_main). */
    atomic_store(&r->sleeping, 0);
    count_wait(e);
    atomic_store(&e->rank_idle, 1);
    poll_for(e, r, seen);
    atomic_store(&e->rank_idle, 0);
}

/* The rank's thread waits: serve the sockets from here until something
 * happens to the rank (a completion or an abort bumps its futex word), so that
 * an arriving message wakes the waiting thread directly. */
static void tcp_idle(cs_engine *eng, cs_rank *r, uint32_t seen) {
    tcp_engine *e = tcp_of(eng);
    /* Not asleep on the futex: completions need not make the system call to
     * wake it (the progress thread nudges through epoll instead). */
    atomic_store(&r->sleeping, 0);
    count_wait(e);
    atomic_store(&e->rank_idle, 1);
    /* Yield-poll first where ranks outnumber cores (a core per rank polled
     * in tcp_poll, before the block), then sleep in epoll. */
    if (!e->spin.yield || !poll_for(e, r, seen))
        while (atomic_load(&r->futex) == seen && !cs_world_aborted(e->base.world)) {
            tcp_flush_deferred(e);
            progress_once(e, idle_ms(e));
        }
    atomic_store(&e->rank_idle, 0);
}

/* ---- life cycle */

static void tcp_destroy(cs_engine *eng) {
    tcp_engine *e = tcp_of(eng);
    if (e->started) {
        atomic_store(&e->stop, 1);
        call_progress(e); /* parked or in epoll: either way, back now */
        uint64_t one = 1;
        if (write(e->wakefd, &one, sizeof one) < 0) { /* the 2 ms tick ends it anyway */ }
        pthread_join(e->thread, NULL);
    }
    for (int i = 0; e->conns && i < e->world; i++) tcp_conn_free(&e->conns[i]);
    free(e->conns);
    if (e->wakefd >= 0) close(e->wakefd);
    if (e->epfd >= 0) close(e->epfd);
    free(e);
}

static void tcp_flush(cs_engine *eng, bool drain);

static const cs_engine_ops tcp_ops = {
    .send = tcp_send,
    .transfer = tcp_transfer,
    .reject = tcp_reject,
    .destroy = tcp_destroy,
    .idle = tcp_idle,
    .poll = tcp_poll,
    .flush = tcp_flush,
};

static void mesh_close(cs_tcp_mesh *m) {
    for (int i = 0; i < m->world; i++)
        if (m->fds[i] >= 0) close(m->fds[i]);
    free(m->fds);
    m->fds = NULL;
}

/* The engine over mesh m (tcp_rank_setup's): it takes the sockets and frees m. */
static cs_engine *tcp_new(cs_world *w, void *arg) {
    cs_tcp_mesh *m = arg;
    tcp_engine *e = calloc(1, sizeof *e);
    if (!e) {
        mesh_close(m);
        free(m);
        return NULL;
    }
    e->base.ops = &tcp_ops;
    e->base.world = w;
    e->world = m->world;
    e->rank = m->rank;
    e->link = m->link;
    /* Polling while waiting pays only with a core per rank: with more ranks
     * than cores the peer we wait for may need ours, so we yield it between
     * polls (engine_tcp_spin.c). */
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (m->world <= ncpu) tcp_spin_init(&e->spin, TCP_SPIN_S);
    else tcp_spin_init_shared(&e->spin);
    /* With a core per rank the waits poll, and between polls they dispatch
     * the rank's posts, matches and completes: until then these wait in the
     * bus's ring, and encoding them for the controller is off the path of
     * every message (events.h; rank_link.c sends them on). Not under a
     * network model: the timekeeper answers clock reads from what it has
     * been told, as on the thread engine. */
    bool ok = e->spin.yield || w->cfg.net.on || cs_bus_defer(w->bus) == 0;
    e->epfd = epoll_create1(EPOLL_CLOEXEC);
    e->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    e->conns = calloc((size_t)m->world, sizeof *e->conns);
    ok = ok && e->epfd >= 0 && e->wakefd >= 0 && e->conns;
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
    if (ok) ok = cs_rank_link_watch(e->link, w, e->epfd, e->link) == 0;
    if (ok) cs_rank_link_on_abort(e->link, drain_peers, e);
    mesh_close(m);
    free(m);
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

/* The rank stops at a gate (its ACKs leave now) or has finished (the peers
 * need its eager messages and ACKs still queued). */
static void tcp_flush(cs_engine *eng, bool drain) {
    tcp_engine *e = tcp_of(eng);
    tcp_flush_deferred(e);
    /* The progress thread may be parked for a while since the rank's last
     * wait (progress_main), and from here it alone reads the link (GO, the
     * end) and writes what the sockets did not take: back to work now. */
    call_progress(e);
    if (drain)
        while (!mesh_drained(e) && !cs_world_aborted(e->base.world)) usleep(200);
}

const cs_engine_kind cs_engine_tcp = {
    .name = "tcp",
    .summary = "every rank a process; a full mesh of TCP sockets, on one machine or several",
    .caps = CS_ENGINE_PROCESSES | CS_ENGINE_TAGS | CS_ENGINE_ANY_SOURCE,
    .create = tcp_new,
    .threads_per_rank = 2, /* the rank's and its progress thread */
    .wait_yields = 0,      /* the wait serves the sockets itself (tcp_idle) */
    .rank_setup = tcp_rank_setup,
};
