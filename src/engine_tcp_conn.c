/* engine_tcp_conn.c -- a tcp engine connection: its send queue (written by
 * whichever thread queues a frame while the socket takes more, else by the one
 * epoll tells it does again; a deferred frame waits for the next one or a
 * flush), its death, its set-up and tear-down. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "engine_tcp_internal.h"
#include "msgbuf.h"

/* ---- the send queue */

txitem *tcp_item_new(int type, const void *meta, uint32_t mlen, const void *data, size_t dlen) {
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
static void item_free(txitem *it) {
    if (it->charged) cs_budget_refund(it->budget, it->charged);
    cs_msgbuf_free(it->owned);
    free(it);
}

static void item_drop(txitem *it) {
    if (it->finish) cs_request_release(it->finish);
    item_free(it);
}

/* Finish and free the items a write completed; called without any lock. */
void tcp_items_done(txitem *done) {
    while (done) {
        txitem *next = done->next;
        if (done->finish) cs_request_finish(done->finish, CS_OK, NULL);
        item_free(done);
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

static void append(tconn *c, txitem *it) {
    it->next = NULL;
    if (c->txt) c->txt->next = it;
    else c->txh = it;
    c->txt = it;
}

/* Queue it and write what the socket takes now. When borrowed, it->data
 * belongs to the caller and is copied if it must wait in the queue. */
void tcp_conn_push_locked(tconn *c, txitem *it, bool borrowed, txitem **done) {
    if (c->dead) {
        item_drop(it);
        return;
    }
    append(c, it);
    /* Written now unless the socket is full (then epoll's writer has the
     * queue); deferred frames ahead of it go in the same system call. */
    c->deferred = false;
    if (!c->pollout && tx_write_locked(c, done) < 0) {
        conn_kill_locked(c);
        return;
    }
    bool queued = false;
    for (txitem *q = c->txh; q; q = q->next) queued |= q == it;
    if (queued && borrowed && it->doff < it->dlen) {
        /* The copy is the sender's memory as long as the socket does not take
         * it (a peer that reads slowly, or not at all): it counts against the
         * sender's cap, as a buffered eager send does on the thread engine.
         * Without room (or memory) the item waits uncopied, its send pending
         * until written; over the cap the caller fails the rank at its line,
         * as the thread engine does (without memory the send just waits, as
         * a rendezvous one: the machine, not the script, is short). */
        void *copy = NULL;
        if (it->budget && !cs_budget_charge(it->budget, it->dlen)) {
            it->over_cap = true;
        } else if (!(copy = cs_msgbuf_alloc(it->dlen)) && it->budget) {
            cs_budget_refund(it->budget, it->dlen);
        }
        if (copy) {
            memcpy(copy, it->data, it->dlen);
            it->data = copy;
            it->owned = copy;
            if (it->budget) it->charged = it->dlen;
        } else {
            it->uncopied = true;
        }
    }
    if (c->txh) arm(c, true);
}

void tcp_conn_push(tconn *c, txitem *it, bool borrowed) {
    txitem *done = NULL;
    pthread_mutex_lock(&c->lock);
    tcp_conn_push_locked(c, it, borrowed, &done);
    pthread_mutex_unlock(&c->lock);
    tcp_items_done(done);
}

void tcp_conn_defer(tconn *c, txitem *it) {
    pthread_mutex_lock(&c->lock);
    if (c->dead) {
        item_drop(it);
    } else {
        append(c, it);
        c->deferred = true;
    }
    pthread_mutex_unlock(&c->lock);
    atomic_store(&c->e->deferred, 1); /* after c->deferred: see tcp_flush_deferred */
}

void tcp_conn_flush(tconn *c) {
    txitem *done = NULL;
    pthread_mutex_lock(&c->lock);
    if (c->deferred && !c->dead) {
        c->deferred = false;
        if (!c->pollout) {
            if (tx_write_locked(c, &done) < 0) conn_kill_locked(c);
            else if (c->txh) arm(c, true);
        }
    }
    pthread_mutex_unlock(&c->lock);
    tcp_items_done(done);
}

/* ---- exchanges: a SYNC without its ACK
 *
 * A small rendezvous send goes as SYNC and completes on the receiver's ACK,
 * a second trip. But in a collective's exchange step (recursive doubling's
 * rounds, a two-rank ring: coll_algos.c marks the requests) each of the two
 * ranks posts its receive from the other before its send to it. So the
 * peer's message of the step proves that the peer's receive for ours was
 * posted before it left; a collective's receive names its source, tag and
 * context, and the call's digest fixes both sizes, so ours will match it.
 * Our SYNC is then done once it is written, without an ACK; and a rank
 * never ACKs a SYNC that its own exchange receive took: the sender needs
 * none. Each step costs one trip instead of two. These rules are local
 * (no frame or field is added, and both ranks follow them without
 * agreeing on anything at run time), because both ranks mark the same steps.
 *
 * A step's send and receive are paired by number: steps are sequential
 * (each waits for both), so the n-th exchange send to a peer and the n-th
 * exchange receive from it matched are one step's, whichever comes first:
 * the receive matched before the send is posted (the peer was ahead: its
 * message waited here), or after (the send waits in c->rts). */
/* Appended, not pushed in front: a CTS or ACK looks its send up from the
 * oldest, which it nearly always is (a window of 80,000 isends to one peer
 * walked the whole list per reply, newest first: minutes instead of a second). */
void tcp_conn_rts_push_locked(tconn *c, rts_wait *r) {
    r->next = NULL;
    if (!c->rts) c->rts_tail = &c->rts;
    *c->rts_tail = r;
    c->rts_tail = &r->next;
}

rts_wait *tcp_conn_rts_unlink_locked(tconn *c, rts_wait **p) {
    rts_wait *r = *p;
    *p = r->next;
    if (!r->next) c->rts_tail = p; /* it was the last */
    return r;
}

bool tcp_conn_exchange_send_locked(tconn *c, cs_request *sq, txitem *it, rts_wait *r) {
    uint64_t k = ++c->xsent;
    if (!it) return true; /* an RTS or an eager MSG: it completes its own way */
    if (c->xmatched >= k) {
        it->finish = sq; /* its bytes are the sender's tensor until written */
        return false;
    }
    r->xseq = k;
    return true;
}

cs_request *tcp_conn_exchanged(tconn *c) {
    cs_request *sq = NULL;
    pthread_mutex_lock(&c->lock);
    uint64_t k = ++c->xmatched;
    rts_wait **p = &c->rts;
    while (*p && (*p)->xseq != k) p = &(*p)->next;
    if (*p) { /* (a dead connection has no waits left) */
        rts_wait *r = tcp_conn_rts_unlink_locked(c, p);
        c->sync_inflight -= r->sync_bytes;
        sq = r->sq;
        free(r);
        for (txitem *it = c->txh; it && sq; it = it->next)
            if (it->sync_id == sq->id) it->finish = sq, sq = NULL; /* done once written */
    }
    pthread_mutex_unlock(&c->lock);
    return sq;
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

void tcp_conn_kill(tconn *c) {
    pthread_mutex_lock(&c->lock);
    conn_kill_locked(c);
    pthread_mutex_unlock(&c->lock);
}

void tcp_conn_writable(tconn *c) {
    txitem *done = NULL;
    pthread_mutex_lock(&c->lock);
    if (!c->dead) {
        if (tx_write_locked(c, &done) < 0) conn_kill_locked(c);
        else if (!c->txh) arm(c, false);
    }
    pthread_mutex_unlock(&c->lock);
    tcp_items_done(done);
}

/* ---- life cycle */

int tcp_conn_init(tcp_engine *e, tconn *c, int fd, int peer, uint64_t max_payload) {
    c->e = e;
    c->fd = fd;
    c->peer = peer;
    pthread_mutex_init(&c->lock, NULL);
    pthread_mutex_init(&c->rx_lock, NULL);
    if (cs_rx_init(&c->rx, max_payload) < 0) return -1;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
    return epoll_ctl(e->epfd, EPOLL_CTL_ADD, fd, &ev);
}

void tcp_conn_free(tconn *c) {
    if (!c->e) return;
    tcp_conn_kill(c);
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
