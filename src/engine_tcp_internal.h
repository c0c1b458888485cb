/* engine_tcp_internal.h -- the tcp engine's private layout, shared by
 * engine_tcp.c (the engine: operations, receiving, events, the progress
 * thread) and engine_tcp_conn.c (a connection's send queue and life). */
#ifndef CS_ENGINE_TCP_INTERNAL_H
#define CS_ENGINE_TCP_INTERNAL_H

#include "engine_tcp.h"
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
    uint64_t gate_seq, go_seq; /* gates asked for and passed (gated runs); under end_lock */
    _Atomic double ctl_lost_at; /* when the controller vanished, or 0 */
    _Atomic int rank_idle; /* the rank's thread serves the sockets (tcp_idle) */
};

/* ---- engine_tcp_conn.c */

/* A frame to send: header and metadata inline, the payload by reference. */
txitem *tcp_item_new(int type, const void *meta, uint32_t mlen, const void *data, size_t dlen);
/* Finish and free the items a write completed; called without any lock. */
void tcp_items_done(txitem *done);
/* Queue it and write what the socket takes now; completed items go to *done.
 * When borrowed, it->data belongs to the caller and is copied if it must wait. */
void tcp_conn_push_locked(tconn *c, txitem *it, bool borrowed, txitem **done);
void tcp_conn_push(tconn *c, txitem *it, bool borrowed);
/* The connection is gone: drop its queue and its waits (their requests stay pending). */
void tcp_conn_kill_locked(tconn *c);
void tcp_conn_kill(tconn *c);
/* epoll says the socket takes more: write the queue. */
void tcp_conn_writable(tconn *c);
int tcp_conn_init(tcp_engine *e, tconn *c, int fd, int peer, uint64_t max_payload);
void tcp_conn_free(tconn *c);

#endif
