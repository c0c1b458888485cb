/* events.h -- the event records every rank emits, and the bus that orders them.
 *
 * Ranks never talk to the report or the visualizer: they emit events. The bus
 * gives each event its per-rank sequence number and its time, then hands it to
 * every subscribed sink (the monitor, the trace writer, the live printer) while
 * holding one lock, so every sink sees the same total order, and that order is
 * consistent with what happened: matching emits its events under the same lock
 * that orders them (see match.c). On the thread engine the hot events (post,
 * match, complete) take a ticket instead and wait in a ring, dispatched in
 * ticket order before anything else reaches the sinks (cs_bus_defer). See
 * docs/trace-format.md and docs/design-notes.md, "Event order".
 */
#ifndef CS_EVENTS_H
#define CS_EVENTS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tensor.h"

typedef enum {
    CS_EV_RUN = 0,  /* header: world, engine, send mode, script, seed */
    CS_EV_POST,     /* an operation started: req, op, peer, tag, bytes, dtype, shape, line */
    CS_EV_MATCH,    /* a receive matched a send: rank/req = the receive, peer/peer_req = the send */
    CS_EV_COMPLETE, /* a request finished: rank, req */
    CS_EV_BLOCK,    /* the rank sleeps on reqs[] (all of them, or any when any=true); also,
                     * with its unblock, a wait on an irecv from any source or a
                     * rendezvous isend that did not sleep (monitor_race.c needs
                     * every such wait) */
    CS_EV_UNBLOCK,
    CS_EV_COLL,     /* collective enter/leave (collectives issue) */
    CS_EV_COMPUTE,  /* dist.compute: phase begin/end, ms */
    CS_EV_PRINT,    /* text printed by the script */
    CS_EV_WARN,     /* a pitfall: text */
    CS_EV_ERROR,    /* the rank failed: text (file:line: message), status */
    CS_EV_EXIT,     /* the rank finished: status */
    CS_EV_DEADLOCK, /* verdict, emitted by the monitor: text */
    /* modelled time (--net, vclock.h); none of them without a model */
    CS_EV_WAIT,     /* the rank waits for all of reqs[] (whether or not it blocks) */
    CS_EV_CLOCK,    /* the rank reads its virtual clock (dist.time()) */
    CS_EV_VTIME,    /* the timekeeper's times of a request, wait, compute, clock read or exit */
    CS_EV_NTYPES
} cs_event_type;

/* What kind of operation a request is. */
typedef enum {
    CS_OP_SEND = 0, /* blocking send */
    CS_OP_RECV,
    CS_OP_ISEND,
    CS_OP_IRECV,
    CS_OP_NOPS
} cs_op;

#define CS_ANY_SOURCE (-1)
#define CS_NO_RANK (-2)

typedef struct cs_event {
    cs_event_type type;
    int rank;
    uint64_t seq;   /* per rank, from 0; set by the bus */
    double t;       /* seconds since the run started; set by the bus */
    /* post / match / complete */
    uint64_t req;
    cs_op op;
    int peer;       /* destination of a send, source of a receive (CS_ANY_SOURCE) */
    int tag;
    int ctx;        /* 0: user traffic; collectives use their own contexts */
    size_t bytes;
    cs_dtype dtype;
    int ndim;
    int64_t shape[CS_MAX_DIMS];
    int line;
    bool eager;     /* post of a send: it completes without a matching receive */
    uint64_t peer_req; /* match: the send's request */
    /* block */
    const uint64_t *reqs; /* borrowed for the duration of the emit */
    int nreqs;
    bool any;
    /* coll (name in text, root in peer, group's context in ctx, buffer bytes,
     * dtype, line): what every rank of the group must agree on */
    size_t count;          /* elements the ranks must agree on (see collectives.h) */
    const char *algo;      /* "ring", "tree", ... */
    const char *reduce_op; /* "sum", ...; NULL for collectives that do not reduce */
    const int *group;      /* the group's world ranks; NULL (ngroup 0): the world */
    int ngroup;
    /* compute */
    double ms;
    bool begin;
    /* print / warn / error / deadlock / run(script) */
    const char *text;
    const char *pitfall; /* warn: the pitfall's kind ("write_while_sending", ...; see
                          * outcome.h), or NULL where none is known */
    int status;     /* exit / error */
    /* vtime: virtual nanoseconds (docs/trace-format.md); what it times in
     * text, whose in vrank (the event itself belongs to no rank: the
     * timekeeper writes it, and the ranks' sequence numbers stay theirs) */
    int vrank;
    uint64_t vt;        /* the post, or the start of a wait or compute; the clock read; the exit */
    uint64_t vt_done;   /* when the request, wait or compute completed */
    uint64_t vt_start, vt_end, vt_arrive; /* a request's message: on the wire, arrived */
    /* run header */
    const char *net;    /* the network model, as --net spells it; NULL: none */
    int world;
    const char *engine;
    const char *send_mode;
    uint64_t seed;
    const char *source; /* the script's text (NULL: not recorded, e.g. too long) */
} cs_event;

const char *cs_event_type_name(cs_event_type t);
bool cs_event_type_parse(const char *s, cs_event_type *out);
const char *cs_op_name(cs_op op);
bool cs_op_parse(const char *s, cs_op *out);
static inline bool cs_op_is_send(cs_op op) { return op == CS_OP_SEND || op == CS_OP_ISEND; }

/* A consumer of events. emit runs with the bus lock held: keep it short and never
 * call back into the bus from it (use cs_bus_emit_locked for events a sink derives). */
typedef struct cs_sink {
    void (*emit)(void *ud, const cs_event *ev);
    void *ud;
} cs_sink;

#define CS_BUS_MAX_SINKS 8

typedef struct cs_bus {
    /* set before the run, read by every emitter */
    int world;
    double t0;
    cs_sink sinks[CS_BUS_MAX_SINKS];
    int nsinks;
    struct { void (*fn)(void *ud); void *ud; } afters[CS_BUS_MAX_SINKS]; /* cs_bus_after */
    int nafters;
    /* The deferred events (cs_bus_defer; NULL: none): a ring indexed by a
     * global ticket, written without the lock, dispatched in ticket order
     * under it. What the lock's holder writes, the tickets handed out and
     * the tickets dispatched each have cache lines of their own, so that an
     * emitting rank does not wait for the line a draining one just wrote. */
    struct cs_bus_slot *ring;
    uint64_t id;                   /* unique in the process, for the emitters' caches */
    /* written under the lock */
    _Alignas(64) pthread_mutex_t lock;
    uint64_t *seq; /* next sequence number per rank */
    int depth;                     /* > 0 while dispatching */
    struct cs_pending *pending, *pending_tail; /* emitted by sinks during a dispatch */
    double last_t;                 /* the latest time dispatched, unrounded */
    _Alignas(64) _Atomic uint64_t tickets;
    _Alignas(64) _Atomic uint64_t drained;
    char pad_[56];
} cs_bus;

int cs_bus_init(cs_bus *bus, int world);
void cs_bus_destroy(cs_bus *bus);
void cs_bus_subscribe(cs_bus *bus, cs_sink sink); /* before the run starts */
/* fn(ud) runs in the emitting thread once the bus lock is released, after
 * every emit, forward, poll and unlock: the part of a sink's work that need
 * not hold the lock (the trace writer's wake-up, a system call). It must be
 * cheap when there is nothing to do and never take the bus lock. Before the
 * run starts. */
void cs_bus_after(cs_bus *bus, void (*fn)(void *ud), void *ud);
/* From now on, post, match and complete events are not dispatched at once:
 * they wait in a ring until the next other event, a cs_bus_lock, a
 * cs_bus_forward or a cs_bus_poll, which dispatch them first and in the order
 * they were emitted. Only for a bus whose every post, match and complete comes
 * from a thread that later blocks, exits or emits another event through it
 * (the thread engine's ranks), or that polls the bus within a tick (a tcp
 * rank's progress thread): a deadlock verdict then comes as soon as without
 * the ring. Before the run starts; -1 when out of memory. */
int cs_bus_defer(cs_bus *bus);
/* Stamp ev (seq, t) and hand it to every sink (or to the ring, see above). */
void cs_bus_emit(cs_bus *bus, cs_event *ev);
/* Emit evs[0..n) in that order, as n cs_bus_emit calls would; deferred
 * together (one ticket update, one time) when they all may be. */
void cs_bus_emit_n(cs_bus *bus, cs_event *evs, int n);
/* Dispatch up to max deferred events if the lock is free (a waiting rank's
 * spare time). Returns whether it dispatched any. */
bool cs_bus_poll(cs_bus *bus, int max);
/* Dispatch every deferred event now, waiting for the lock: what a sink was
 * told must precede what its caller does next (a tcp rank's frame to the
 * controller that follows its events). Not from a sink. */
void cs_bus_drain(cs_bus *bus);
/* Order the caller's stores so far before the stream's later events: a
 * thread whose event the stream places after the caller's next one sees
 * them once it has emitted it (a store the ranks read to tell what the
 * monitor will have folded; api.c's any-source flag). */
void cs_bus_order(cs_bus *bus);
/* Lock the bus for a reader of the sinks' state (the monitor): the deferred
 * events are dispatched first, so what it reads is up to date. */
void cs_bus_lock(cs_bus *bus);
void cs_bus_unlock(cs_bus *bus);
/* Same, for a caller that already holds the bus lock. */
void cs_bus_emit_locked(cs_bus *bus, cs_event *ev);
/* Hand an already stamped event (a remote rank's) to the sinks, its time
 * unchanged; its seq is renumbered in the bus's count of its rank. */
void cs_bus_forward(cs_bus *bus, const cs_event *ev);

double cs_now(void); /* CLOCK_MONOTONIC seconds */
/* One step of a spin-wait: tells the core we are spinning (it saves power
 * and lets a sibling hyperthread run). */
static inline void cs_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}
/* A mutex for short critical sections shared between ranks. */
void cs_mutex_init_adaptive(pthread_mutex_t *mu);

#endif
