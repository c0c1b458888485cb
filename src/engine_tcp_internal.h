/* engine_tcp_internal.h -- the tcp engine's private layout, shared by
 * engine_tcp.c (the engine: operations, receiving, the progress thread),
 * engine_tcp_conn.c (a connection's send queue and life) and
 * engine_tcp_spin.c (whether a waiting rank polls). Nothing here is used
 * outside the tcp engine. */
#ifndef CS_ENGINE_TCP_INTERNAL_H
#define CS_ENGINE_TCP_INTERNAL_H

#include "engine_tcp.h"
#include "wire.h"
#include "world.h"

/* Shared by this module's files only: hidden from the library's users, as
 * Lua's LUAI_FUNC hides its internals. */
#ifndef CS_INTERNAL
#define CS_INTERNAL __attribute__((visibility("hidden")))
#endif

#define FLUSH_MS CS_RANK_LINK_TICK_MS /* a progress round, at the longest */
#define IDLE_MAX_MS 50 /* a waiting rank's longest sleep in epoll */
#define PARK_MIN_NS (1000L * 1000)      /* the progress thread's first look while the rank waits */
#define PARK_MAX_NS (16L * 1000 * 1000) /* and its longest: it comes back within this */
#define MAX_IOV 64
#define TCP_SYNC_WINDOW (4u << 20) /* SYNC payload bytes unacknowledged per connection */
#define SPIN_EPOLL_EVERY 8 /* a polling rank looks at every socket every 8 polls */

typedef struct txitem {
    struct txitem *next;
    uint8_t head[CS_WIRE_HDR + CS_WIRE_ENVELOPE];
    size_t hlen, hoff;
    const uint8_t *data;
    size_t dlen, doff;
    void *owned;         /* freed once written */
    cs_request *finish;  /* a rendezvous send: finished once its DATA is written */
    cs_budget *budget;   /* an eager send's: pays for the copy while it waits, or NULL */
    size_t charged;      /* bytes charged to it for that copy */
    bool uncopied;       /* it waits uncopied: no room under the cap, or no memory */
    bool over_cap;       /* uncopied because the cap refused (not the machine) */
    uint64_t sync_id;    /* a SYNC: its send's id (tcp_conn_exchanged), else 0 */
} txitem;

typedef struct rts_wait { /* a rendezvous send waiting for its CTS (or ACK) */
    struct rts_wait *next;
    uint64_t id;
    size_t sync_bytes;    /* its SYNC payload, counted in the connection's window */
    cs_request *sq;
    uint64_t xseq;        /* a SYNC of an exchange: its number (tcp_conn_exchanged); else 0 */
} rts_wait;

typedef struct cts_wait { /* a receive waiting for its DATA, in CTS order */
    struct cts_wait *next;
    uint64_t token;
    cs_request *rq;
    bool ack;       /* a SYNC read straight into its claimed receive: ACK token (the send's id) */
    bool exchange;  /* that receive is an exchange's (tcp_conn_exchanged once it is read) */
} cts_wait;

typedef struct tcp_engine tcp_engine;

/* ---- engine_tcp_mesh.c: listen, join, connect the mesh (cs_engine_kind.rank_setup) */
CS_INTERNAL void *tcp_rank_setup(const cs_rank_setup *s);

/* ---- engine_tcp_spin.c: whether a waiting rank polls before it sleeps */
#define TCP_SPIN_S 100e-6      /* the longest poll: a loopback round trip fits */
#define TCP_YIELD_S 200e-6       /* the longest yield-poll (ranks outnumber cores) */
#define TCP_YIELD_SLICE_S 500e-6 /* a yield this long ran other work, not a peer's step */
#define TCP_YIELD_PROBE 1024     /* after that, one wait in 1024 yield-polls */
#define TCP_SPIN_SCORE_MAX 32
#define TCP_SPIN_MISS_COST 8   /* a poll that did not pay wasted what 8 that paid saved */
#define TCP_SPIN_PROBE 256     /* while polls do not pay, one wait in 256 polls */

typedef struct tcp_spin {
    double budget;   /* seconds a wait may poll; 0: never */
    int score;       /* polls that paid, less TCP_SPIN_MISS_COST per one that did not */
    unsigned skips;  /* waits that slept at once */
    bool yield;      /* ranks outnumber cores: hand the core on between polls */
    bool overran;    /* this wait, a yield ran other work for a time slice */
} tcp_spin;

/* A core per rank: poll for up to budget (0: never). */
CS_INTERNAL void tcp_spin_init(tcp_spin *s, double budget);
/* Ranks outnumber cores: yield-poll for up to TCP_YIELD_S. */
CS_INTERNAL void tcp_spin_init_shared(tcp_spin *s);
/* How long the wait starting now polls (0: it sleeps at once). */
CS_INTERNAL double tcp_spin_budget(tcp_spin *s);
/* Between two polls: yield the core where ranks outnumber cores. False: the
 * yield ran other work for a time slice, stop polling (the wait sleeps). */
CS_INTERNAL bool tcp_spin_pause(tcp_spin *s);
/* The wait that polled that long ended while polling (paid) or after. */
CS_INTERNAL void tcp_spin_learn(tcp_spin *s, double polled, bool paid);

typedef struct tconn {
    tcp_engine *e;
    int fd, peer;
    pthread_mutex_t lock; /* the queue, the waits, dead */
    txitem *txh, *txt;
    bool pollout, dead;
    bool deferred;       /* the queue holds frames not yet tried (tcp_conn_defer) */
    rts_wait *rts, **rts_tail; /* oldest first: CTS and ACK come back in about that order */
    cts_wait *cts_h, *cts_t;
    uint64_t next_token;
    size_t sync_inflight; /* SYNC payload bytes sent and not yet acknowledged */
    /* Exchanges with the peer (engine_tcp_conn.c): our sends of them posted,
     * our receives of them matched. The n-th of each are one step's. */
    uint64_t xsent, xmatched;
    pthread_mutex_t rx_lock; /* whoever reads the socket: the rx state below */
    cs_rx rx;
    cs_msg *rx_msg;      /* a MSG whose payload is arriving */
    cts_wait *rx_cts;    /* a DATA whose payload is arriving */
    int rx_fail;         /* why the receiving side closed it: CS_ENOMEM over the cap, else 0 */
} tconn;

struct tcp_engine {
    cs_engine base;
    int world, rank;
    tconn *conns;        /* world entries; conns[rank] is unused */
    cs_rank_link *link;  /* the rank's link to the controller, served by our loop */
    int epfd, wakefd;
    pthread_t thread;
    bool started;
    _Atomic int stop;
    _Atomic int rank_idle; /* the rank's thread serves the sockets (tcp_idle) */
    _Atomic unsigned waits; /* the rank's waits begun (tcp_poll, tcp_idle) */
    _Atomic int call;      /* a gate or the end wants the progress thread now */
    _Atomic int deferred;  /* some connection holds deferred frames */
    tcp_spin spin;         /* the rank thread's: does polling pay (tcp_idle)? */
    struct tconn *_Atomic last_rx; /* the mesh connection that last had frames */
    /* A peer's connection broke (EOF inside a frame, a socket error) while
     * the run goes on: a dying peer's doing, which the controller reports
     * within moments (status 5). If no ABORT comes within TCP_LOST_GRACE_S
     * the peer lives on (a reset, a peer that closed half a frame in), its
     * messages are lost all the same, and the rank's waits fail (tcp_lost). */
    _Atomic int lost;      /* 0: none; 1: being noted; 2: noted; 3: said */
    int lost_peer;
    double lost_at;
    char lost_why[200];
};

#define TCP_LOST_GRACE_S 5.0

/* ---- engine_tcp_conn.c */

/* A frame to send: header and metadata inline, the payload by reference. */
CS_INTERNAL txitem *tcp_item_new(int type, const void *meta, uint32_t mlen, const void *data, size_t dlen);
/* Finish and free the items a write completed; called without any lock. */
CS_INTERNAL void tcp_items_done(txitem *done);
/* Queue it and write what the socket takes now; completed items go to *done.
 * When borrowed, it->data belongs to the caller and is copied if it must wait. */
CS_INTERNAL void tcp_conn_push_locked(tconn *c, txitem *it, bool borrowed, txitem **done);
CS_INTERNAL void tcp_conn_push(tconn *c, txitem *it, bool borrowed);
/* Queue it without writing (it owns its bytes): it leaves with the next frame
 * pushed on c, or at the latest at the next tcp_conn_flush. */
CS_INTERNAL void tcp_conn_defer(tconn *c, txitem *it);
/* Our receive of an exchange from c's peer was matched: the send of the
 * same step is done once written. Returns that send when it waited and is
 * written (the caller finishes it, after the receive), else NULL. */
CS_INTERNAL cs_request *tcp_conn_exchanged(tconn *c);
/* We post the send of an exchange, queued as it (a SYNC, or NULL for an RTS
 * or an eager MSG) and waiting as r (a SYNC's, or NULL): false when the
 * step's receive is matched already, the send then done once it is written
 * (it->finish), r unused. Under c->lock, before the frame is queued. */
CS_INTERNAL bool tcp_conn_exchange_send_locked(tconn *c, cs_request *sq, txitem *it, rts_wait *r);
/* c->rts, under c->lock: append r; unlink the wait *p points to (p: the link
 * that holds it) and return it. */
CS_INTERNAL void tcp_conn_rts_push_locked(tconn *c, rts_wait *r);
CS_INTERNAL rts_wait *tcp_conn_rts_unlink_locked(tconn *c, rts_wait **p);
/* Write what tcp_conn_defer held back. */
CS_INTERNAL void tcp_conn_flush(tconn *c);
/* The connection is gone: drop its queue and its waits (their requests stay pending). */
CS_INTERNAL void tcp_conn_kill(tconn *c);
/* epoll says the socket takes more: write the queue. */
CS_INTERNAL void tcp_conn_writable(tconn *c);
CS_INTERNAL int tcp_conn_init(tcp_engine *e, tconn *c, int fd, int peer, uint64_t max_payload);
CS_INTERNAL void tcp_conn_free(tconn *c);

#endif
