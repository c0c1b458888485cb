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
#include "engine_tcp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "wire.h"
#include "world.h"

#define FLUSH_MS 2
#define CTL_LOST_GRACE 2.0 /* seconds a rank may take to unwind once the controller is gone */
#define MAX_IOV 64
#define EVENT_BATCH (64 * 1024) /* bytes of events that are sent without waiting */

typedef struct txitem {
    struct txitem *next;
    uint8_t head[CS_WIRE_HDR + CS_WIRE_ENVELOPE];
    size_t hlen, hoff;
    const uint8_t *data;
    size_t dlen, doff;
    void *owned;         /* freed once written */
    cs_request *finish;  /* a rendezvous send: finished once its DATA is written */
} txitem;

typedef struct rts_wait { /* a rendezvous send waiting for its CTS (or ACK) */
    struct rts_wait *next;
    uint64_t id;
    cs_request *sq;
} rts_wait;

typedef struct cts_wait { /* a receive waiting for its DATA, in CTS order */
    struct cts_wait *next;
    uint64_t token;
    cs_request *rq;
} cts_wait;

typedef struct tcp_engine tcp_engine;

typedef struct tconn {
    tcp_engine *e;
    int fd, peer;        /* peer -1: the controller */
    pthread_mutex_t lock; /* the queue, the waits, dead */
    txitem *txh, *txt;
    bool pollout, dead;
    rts_wait *rts;
    cts_wait *cts_h, *cts_t;
    uint64_t next_token;
    pthread_mutex_t rx_lock; /* whoever reads the socket: the rx state below */
    cs_rx rx;
    cs_msg *rx_msg;      /* a MSG whose payload is arriving */
    cts_wait *rx_cts;    /* a DATA whose payload is arriving */
} tconn;

struct tcp_engine {
    cs_engine base;
    int world, rank;
    tconn *conns;        /* world entries; conns[rank] is unused */
    tconn ctl;
    uint8_t *evbuf;      /* encoded events not yet queued; under ctl.lock */
    size_t evlen, evcap;
    double flushed_at;   /* when they were last queued; under ctl.lock */
    int epfd, wakefd;
    pthread_t thread;
    bool started;
    _Atomic int stop;
    pthread_mutex_t end_lock;
    pthread_cond_t end_cond;
    bool finishing, ended; /* BYE sent; the controller ended the job */
    int end_reason;
    _Atomic double ctl_lost_at; /* when the controller vanished, or 0 */
    _Atomic int rank_idle; /* the rank's thread serves the sockets (tcp_idle) */
};

/* ---- the send queue */

static txitem *item_new(int type, const void *meta, uint32_t mlen, const void *data, size_t dlen) {
    txitem *it = calloc(1, sizeof *it);
    if (!it) return NULL;
    cs_wire_hdr_put(it->head, type, mlen, dlen);
    if (mlen) memcpy(it->head + CS_WIRE_HDR, meta, mlen);
    it->hlen = CS_WIRE_HDR + mlen;
    it->data = data;
    it->dlen = dlen;
    return it;
}

/* Drop an item that will never be written: its send stays pending (the run is
 * ending), but the engine's reference goes. */
static void item_drop(txitem *it) {
    if (it->finish) cs_request_release(it->finish);
    free(it->owned);
    free(it);
}

/* Finish and free the items a write completed; called without any lock. */
static void items_done(txitem *done) {
    while (done) {
        txitem *next = done->next;
        if (done->finish) cs_request_finish(done->finish, CS_OK, NULL);
        free(done->owned);
        free(done);
        done = next;
    }
}

static void arm(tconn *c, bool out) {
    if (c->pollout == out || c->dead) return;
    struct epoll_event ev = {.events = EPOLLIN | (out ? EPOLLOUT : 0), .data.ptr = c};
    epoll_ctl(c->e->epfd, EPOLL_CTL_MOD, c->fd, &ev);
    c->pollout = out;
}

/* Write queued items (several per system call) until the socket is full.
 * Completed items move to *done. -1 when the socket broke. */
static int tx_write_locked(tconn *c, txitem **done) {
    txitem **tail = done;
    while (*tail) tail = &(*tail)->next;
    while (c->txh) {
        struct iovec iov[MAX_IOV];
        int n = 0;
        for (txitem *it = c->txh; it && n < MAX_IOV - 1; it = it->next) {
            if (it->hoff < it->hlen)
                iov[n++] = (struct iovec){it->head + it->hoff, it->hlen - it->hoff};
            if (it->doff < it->dlen)
                iov[n++] = (struct iovec){(void *)(it->data + it->doff), it->dlen - it->doff};
        }
        ssize_t w = 0;
        if (n) {
            struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)n};
            w = sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (w < 0) {
                if (errno == EINTR) continue;
                return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
            }
        }
        size_t left = (size_t)w;
        while (c->txh) {
            txitem *it = c->txh;
            size_t h = it->hlen - it->hoff < left ? it->hlen - it->hoff : left;
            it->hoff += h;
            left -= h;
            size_t d = it->dlen - it->doff < left ? it->dlen - it->doff : left;
            it->doff += d;
            left -= d;
            if (it->hoff < it->hlen || it->doff < it->dlen) break;
            c->txh = it->next;
            if (!c->txh) c->txt = NULL;
            it->next = NULL;
            *tail = it;
            tail = &it->next;
        }
    }
    return 0;
}

static void conn_kill_locked(tconn *c);

/* Queue it and write what the socket takes now. When borrowed, it->data
 * belongs to the caller and is copied if it must wait in the queue. */
static void conn_push_locked(tconn *c, txitem *it, bool borrowed, txitem **done) {
    if (c->dead) {
        item_drop(it);
        return;
    }
    it->next = NULL;
    if (c->txt) c->txt->next = it;
    else c->txh = it;
    c->txt = it;
    if (c->txh == it && tx_write_locked(c, done) < 0) {
        conn_kill_locked(c);
        return;
    }
    bool queued = false;
    for (txitem *q = c->txh; q; q = q->next) queued |= q == it;
    if (queued && borrowed && it->doff < it->dlen) {
        void *copy = malloc(it->dlen);
        if (copy) {
            memcpy(copy, it->data, it->dlen);
            it->data = copy;
            it->owned = copy;
        }
    }
    if (c->txh) arm(c, true);
}

static void conn_push(tconn *c, txitem *it, bool borrowed) {
    txitem *done = NULL;
    pthread_mutex_lock(&c->lock);
    conn_push_locked(c, it, borrowed, &done);
    pthread_mutex_unlock(&c->lock);
    items_done(done);
}

/* The connection is gone: nothing more goes out or comes in. Requests waiting
 * on it stay pending; the controller ends the run (it sees the death too). */
static void conn_kill_locked(tconn *c) {
    if (c->dead) return;
    c->dead = true;
    epoll_ctl(c->e->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    shutdown(c->fd, SHUT_RDWR);
    while (c->txh) {
        txitem *it = c->txh;
        c->txh = it->next;
        item_drop(it);
    }
    c->txt = NULL;
    while (c->rts) {
        rts_wait *r = c->rts;
        c->rts = r->next;
        cs_request_release(r->sq);
        free(r);
    }
    while (c->cts_h) {
        cts_wait *r = c->cts_h;
        c->cts_h = r->next;
        cs_request_release(r->rq);
        free(r);
    }
    c->cts_t = NULL;
}

static void conn_kill(tconn *c) {
    pthread_mutex_lock(&c->lock);
    conn_kill_locked(c);
    pthread_mutex_unlock(&c->lock);
}

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
        txitem *it = item_new(CS_FR_MSG, meta, sizeof meta, cs_tensor_data(sq->buf), sq->bytes);
        if (!it) goto nomem;
        conn_push(c, it, true);
        cs_request_finish(sq, CS_OK, NULL); /* buffered (or written): an eager send is done */
        return CS_OK;
    }
    /* Rendezvous: a small payload travels with the request (SYNC, completed by
     * ACK); a large one waits for CTS, so the receiver never buffers it. */
    bool inline_data = sq->bytes <= CS_WIRE_SYNC_MAX;
    txitem *it = inline_data ? item_new(CS_FR_SYNC, meta, sizeof meta, cs_tensor_data(sq->buf), sq->bytes)
                             : item_new(CS_FR_RTS, meta, sizeof meta, NULL, 0);
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
        conn_push_locked(c, it, false, &done);
    }
    pthread_mutex_unlock(&c->lock);
    items_done(done);
    return CS_OK;
nomem:
    snprintf(sq->owner->errmsg, sizeof sq->owner->errmsg, "out of memory sending a message");
    return CS_ENOMEM;
}

static void send_id(tconn *c, int type, uint64_t id) {
    uint8_t m[8];
    cs_cur cur = {.p = m, .len = sizeof m};
    cs_put_u64(&cur, id);
    txitem *it = item_new(type, m, sizeof m, NULL, 0);
    if (it) conn_push(c, it, false);
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
        txitem *it = item_new(CS_FR_CTS, meta, sizeof meta, NULL, 0);
        if (it) conn_push_locked(c, it, false, &done);
    }
    pthread_mutex_unlock(&c->lock);
    items_done(done);
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
        txitem *it = item_new(CS_FR_REJECT, NULL, 0, NULL, 0);
        /* the reason may not fit the inline head: send it as the item's data */
        if (it) {
            cs_wire_hdr_put(it->head, CS_FR_REJECT, (uint32_t)cur.pos, 0);
            it->data = meta;
            it->dlen = cur.pos;
            conn_push(c, it, true);
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
    txitem *it = item_new(CS_FR_DATA, m, sizeof m, cs_tensor_data(sq->buf), sq->bytes);
    if (!it) {
        cs_request_finish(sq, CS_ENOMEM, "out of memory sending a message");
        return 0;
    }
    it->finish = sq; /* the tensor stays put until then: the sender waits on sq */
    conn_push(c, it, false);
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
    conn_push_locked(&e->ctl, it, false, done);
}

static void ctl_send(tcp_engine *e, int type, bool with_events) {
    txitem *done = NULL;
    pthread_mutex_lock(&e->ctl.lock);
    if (with_events) events_queue_locked(e, &done);
    txitem *it = item_new(type, NULL, 0, NULL, 0);
    if (it) conn_push_locked(&e->ctl, it, false, &done);
    pthread_mutex_unlock(&e->ctl.lock);
    items_done(done);
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
    conn_kill(&e->ctl);
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
    conn_kill(c);
}

static void conn_writable(tconn *c) {
    txitem *done = NULL;
    pthread_mutex_lock(&c->lock);
    if (!c->dead) {
        if (tx_write_locked(c, &done) < 0) conn_kill_locked(c);
        else if (!c->txh) arm(c, false);
    }
    pthread_mutex_unlock(&c->lock);
    items_done(done);
}

/* One round of progress: wait at most ms for sockets, serve what is ready,
 * send the events gathered so far. Run by the progress thread, and by the rank's
 * own thread while it waits (idle): both may serve the same epoll set. */
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
        if (evs[i].events & EPOLLOUT) conn_writable(c);
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
    items_done(done);
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

static int conn_init(tcp_engine *e, tconn *c, int fd, int peer, uint64_t max_payload) {
    c->e = e;
    c->fd = fd;
    c->peer = peer;
    pthread_mutex_init(&c->lock, NULL);
    pthread_mutex_init(&c->rx_lock, NULL);
    if (cs_rx_init(&c->rx, max_payload) < 0) return -1;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
    return epoll_ctl(e->epfd, EPOLL_CTL_ADD, fd, &ev);
}

static void conn_free(tconn *c) {
    if (!c->e) return;
    conn_kill(c);
    cs_msg_free(c->rx_msg);
    if (c->rx_cts) {
        cs_request_release(c->rx_cts->rq);
        free(c->rx_cts);
    }
    cs_rx_free(&c->rx);
    close(c->fd);
    pthread_mutex_destroy(&c->lock);
    pthread_mutex_destroy(&c->rx_lock);
}

static void tcp_destroy(cs_engine *eng) {
    tcp_engine *e = tcp_of(eng);
    if (e->started) {
        atomic_store(&e->stop, 1);
        uint64_t one = 1;
        if (write(e->wakefd, &one, sizeof one) < 0) { /* the 2 ms tick ends it anyway */ }
        pthread_join(e->thread, NULL);
    }
    for (int i = 0; e->conns && i < e->world; i++) conn_free(&e->conns[i]);
    conn_free(&e->ctl);
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
        if (ok) ok = conn_init(e, &e->conns[i], fd, i, m->max_payload) == 0;
        else close(fd);
    }
    int cfd = m->ctl_fd;
    m->ctl_fd = -1;
    if (ok) ok = conn_init(e, &e->ctl, cfd, -1, 0) == 0;
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
