/* events.c -- event names and the bus that orders events and fans them out. */
#include "events.h"

#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "event_schema.h"
#include "xalloc.h"

static const char *const event_names[CS_EV_NTYPES] = {
    [CS_EV_RUN] = "run",         [CS_EV_POST] = "post",       [CS_EV_MATCH] = "match",
    [CS_EV_COMPLETE] = "complete", [CS_EV_BLOCK] = "block",   [CS_EV_UNBLOCK] = "unblock",
    [CS_EV_COLL] = "coll",       [CS_EV_COMPUTE] = "compute", [CS_EV_PRINT] = "print",
    [CS_EV_WARN] = "warn",       [CS_EV_ERROR] = "error",     [CS_EV_EXIT] = "exit",
    [CS_EV_DEADLOCK] = "deadlock",
    [CS_EV_WAIT] = "wait",
    [CS_EV_CLOCK] = "clock",
    [CS_EV_VTIME] = "vtime",
};

static const char *const op_names[CS_OP_NOPS] = {
    [CS_OP_SEND] = "send", [CS_OP_RECV] = "recv", [CS_OP_ISEND] = "isend", [CS_OP_IRECV] = "irecv",
};

const char *cs_event_type_name(cs_event_type t) {
    return (unsigned)t < CS_EV_NTYPES ? event_names[t] : "?";
}

bool cs_event_type_parse(const char *s, cs_event_type *out) {
    for (int i = 0; i < CS_EV_NTYPES; i++)
        if (strcmp(s, event_names[i]) == 0) {
            *out = (cs_event_type)i;
            return true;
        }
    return false;
}

const char *cs_op_name(cs_op op) {
    return (unsigned)op < CS_OP_NOPS ? op_names[op] : "?";
}

bool cs_op_parse(const char *s, cs_op *out) {
    for (int i = 0; i < CS_OP_NOPS; i++)
        if (strcmp(s, op_names[i]) == 0) {
            *out = (cs_op)i;
            return true;
        }
    return false;
}

void cs_mutex_init_adaptive(pthread_mutex_t *mu) {
    /* Held for a few hundred nanoseconds at a time: spinning briefly on
     * contention beats a trip through the scheduler by two orders of magnitude. */
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
#ifdef PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
#endif
    pthread_mutex_init(mu, &attr);
    pthread_mutexattr_destroy(&attr);
}

double cs_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- the bus */

/* Events that a sink emits while the bus is dispatching (the monitor's deadlock
 * verdict) wait here, so that every sink sees the triggering event first. */
typedef struct cs_pending {
    cs_event ev; /* a deep copy: the emitter's strings die with its frame */
    struct cs_pending *next;
} pending;

/* A deferred event: the fields a post, match or complete carries (none of
 * them points anywhere), and the time it was emitted, in one cache line: the
 * emitting rank writes it and a draining one on another core reads it, and
 * each line costs a transfer between the cores. ready is (ticket + 1) mod
 * 2^32 once written (a slot is rewritten every RING tickets, so 32 bits
 * never confuse two of its tickets). A post's shape (at most two sizes
 * below 2^31) shares a word with a match's peer_req; an event that does not
 * fit is not deferred (fits). */
typedef struct cs_bus_slot {
    _Atomic uint32_t ready;
    uint8_t type, op, ndim, flags; /* SLOT_* */
    int32_t rank, peer, tag, ctx, line;
    int32_t word;                  /* dtype (SLOT_DTYPE) or status */
    uint64_t req, bytes;
    double t;
    union {
        uint64_t peer_req;         /* ndim 0 */
        int32_t dims[2];           /* ndim 1 or 2 */
    } x;
} __attribute__((aligned(64))) slot;

enum { SLOT_EAGER = 1, SLOT_DTYPE = 2 };

_Static_assert(sizeof(slot) == 64, "a deferred event is one cache line");

#define RING (1u << 9) /* slots: a power of two */

int cs_bus_init(cs_bus *bus, int world) {
    memset(bus, 0, sizeof *bus);
    bus->world = world;
    bus->seq = calloc((size_t)(world > 0 ? world : 1), sizeof *bus->seq);
    if (!bus->seq) return -1;
    static _Atomic uint64_t ids;
    bus->id = atomic_fetch_add(&ids, 1) + 1;
    bus->t0 = cs_now();
    atomic_init(&bus->tickets, 0);
    atomic_init(&bus->drained, 0);
    cs_mutex_init_adaptive(&bus->lock);
    return 0;
}

int cs_bus_defer(cs_bus *bus) {
    if (bus->ring) return 0;
    void *p = NULL;
    if (posix_memalign(&p, 64, RING * sizeof(slot)) != 0) return -1;
    bus->ring = p;
    for (unsigned i = 0; i < RING; i++) atomic_init(&bus->ring[i].ready, 0);
    return 0;
}

void cs_bus_destroy(cs_bus *bus) {
    pthread_mutex_destroy(&bus->lock);
    free(bus->seq);
    bus->seq = NULL;
    free(bus->ring);
    bus->ring = NULL;
}

void cs_bus_subscribe(cs_bus *bus, cs_sink sink) {
    if (bus->nsinks < CS_BUS_MAX_SINKS) bus->sinks[bus->nsinks++] = sink;
}

void cs_bus_after(cs_bus *bus, void (*fn)(void *ud), void *ud) {
    if (bus->nafters < CS_BUS_MAX_SINKS) {
        bus->afters[bus->nafters].fn = fn;
        bus->afters[bus->nafters++].ud = ud;
    }
}

/* Release the lock, then run the after hooks (cs_bus_after). */
static void bus_unlock(cs_bus *bus) {
    pthread_mutex_unlock(&bus->lock);
    for (int i = 0; i < bus->nafters; i++) bus->afters[i].fn(bus->afters[i].ud);
}

static void dispatch(cs_bus *bus, const cs_event *ev) {
    bus->depth++;
    for (int i = 0; i < bus->nsinks; i++) bus->sinks[i].emit(bus->sinks[i].ud, ev);
    bus->depth--;
}

/* Deliver what sinks emitted during a dispatch, in order; called at depth 0. */
static void drain_pending(cs_bus *bus) {
    while (bus->pending) {
        pending *p = bus->pending;
        bus->pending = p->next;
        if (!bus->pending) bus->pending_tail = NULL;
        dispatch(bus, &p->ev);
        cs_event_free(&p->ev);
        free(p);
    }
}

/* t: seconds since t0 when the event happened. Dispatch order is the order of
 * the stream, and its times never go back: a deferred event stamped a moment
 * after a later ticket's takes that one's time. */
static void stamp_at(cs_bus *bus, cs_event *ev, double t) {
    if (t < bus->last_t) t = bus->last_t;
    bus->last_t = t;
    /* microseconds: short trace lines that read back exactly */
    ev->t = round(t * 1e6) / 1e6;
    ev->seq = (ev->rank >= 0 && ev->rank < bus->world) ? bus->seq[ev->rank]++ : 0;
}

/* ---- the ring of deferred events */

/* Does the slot hold every field of ev that a sink reads? (A shape's sizes
 * past ndim are read by nobody: a replayed event has zeros there too.) */
static bool fits(const cs_event *ev) {
    if (ev->dtype != 0 && ev->status != 0) return false;
    if (ev->ndim == 0) return true;
    if (ev->ndim > 2 || ev->peer_req != 0) return false;
    for (int i = 0; i < ev->ndim; i++)
        if (ev->shape[i] < 0 || ev->shape[i] > INT32_MAX) return false;
    return true;
}

static bool deferrable(const cs_event *ev) {
    return (ev->type == CS_EV_POST || ev->type == CS_EV_MATCH || ev->type == CS_EV_COMPLETE) &&
           fits(ev);
}

/* Dispatch the deferred event of ticket k (written: its ready is k + 1).
 * The slot is copied out and handed back before the sinks run. */
static void dispatch_slot(cs_bus *bus, uint64_t k) {
    const slot *s = &bus->ring[k & (RING - 1)];
    cs_event ev = {.type = (cs_event_type)s->type, .rank = s->rank, .req = s->req,
                   .op = (cs_op)s->op, .peer = s->peer, .tag = s->tag, .ctx = s->ctx,
                   .bytes = (size_t)s->bytes, .ndim = s->ndim, .line = s->line,
                   .eager = (s->flags & SLOT_EAGER) != 0};
    if (s->flags & SLOT_DTYPE) ev.dtype = (cs_dtype)s->word;
    else ev.status = s->word;
    if (s->ndim == 0) ev.peer_req = s->x.peer_req;
    else
        for (int i = 0; i < s->ndim; i++) ev.shape[i] = s->x.dims[i];
    double t = s->t;
    atomic_store_explicit(&bus->drained, k + 1, memory_order_release);
    stamp_at(bus, &ev, t);
    dispatch(bus, &ev);
    drain_pending(bus);
}

/* Dispatch every deferred event whose ticket is below end (lock held, depth
 * 0). A ticket taken but not yet written is a producer between its two
 * steps: wait for it. It never waits on us (see take_tickets). */
static void drain_to(cs_bus *bus, uint64_t end) {
    uint64_t k = atomic_load_explicit(&bus->drained, memory_order_relaxed);
    for (; k < end; k++) {
        const slot *s = &bus->ring[k & (RING - 1)];
        for (unsigned spins = 0;
             atomic_load_explicit(&s->ready, memory_order_acquire) != (uint32_t)(k + 1); spins++)
            if (spins < 64) cs_cpu_relax();
            else sched_yield();
        dispatch_slot(bus, k);
    }
}

static void drain_all(cs_bus *bus) {
    if (bus->ring && bus->depth == 0)
        drain_to(bus, atomic_load_explicit(&bus->tickets, memory_order_acquire));
}

/* Take n consecutive tickets: their place in the stream. A slot still
 * holding the event RING tickets back (a full ring) is drained by its
 * producer, but only up to its own first ticket, and never by blocking on the
 * lock: a drainer holding the lock may be waiting for an earlier producer,
 * and that one's slot is free as soon as the drainer reaches it. */
static uint64_t take_tickets(cs_bus *bus, unsigned n) {
    /* What this thread last saw drained: most tickets need not look again. */
    static _Thread_local struct { uint64_t bus, drained; } seen;
    uint64_t k = atomic_fetch_add_explicit(&bus->tickets, n, memory_order_acq_rel);
    uint64_t last = k + n - 1;
    if (seen.bus != bus->id) seen.bus = bus->id, seen.drained = 0;
    for (unsigned spins = 0;
         last >= seen.drained + RING &&
         last >= (seen.drained = atomic_load_explicit(&bus->drained, memory_order_acquire)) + RING;
         spins++) {
        if (pthread_mutex_trylock(&bus->lock) == 0) {
            if (bus->depth == 0) drain_to(bus, last - RING + 1);
            bus_unlock(bus);
        } else if (spins < 64) {
            cs_cpu_relax();
        } else {
            sched_yield();
        }
    }
    return k;
}

/* Write ev into the slot of ticket k and publish it. */
static void put(cs_bus *bus, uint64_t k, const cs_event *ev, double t) {
    slot *s = &bus->ring[k & (RING - 1)];
    s->type = (uint8_t)ev->type;
    s->op = (uint8_t)ev->op;
    s->ndim = (uint8_t)ev->ndim;
    s->flags = (ev->eager ? SLOT_EAGER : 0) | (ev->dtype != 0 ? SLOT_DTYPE : 0);
    s->rank = ev->rank;
    s->peer = ev->peer;
    s->tag = ev->tag;
    s->ctx = ev->ctx;
    s->line = ev->line;
    s->word = ev->dtype != 0 ? (int32_t)ev->dtype : ev->status;
    s->req = ev->req;
    s->bytes = ev->bytes;
    s->t = t;
    if (ev->ndim == 0) s->x.peer_req = ev->peer_req;
    else
        for (int i = 0; i < ev->ndim; i++) s->x.dims[i] = (int32_t)ev->shape[i];
    atomic_store_explicit(&s->ready, (uint32_t)(k + 1), memory_order_release);
}

static void defer(cs_bus *bus, const cs_event *ev) {
    uint64_t k = take_tickets(bus, 1);
    put(bus, k, ev, cs_now() - bus->t0);
}

bool cs_bus_poll(cs_bus *bus, int max) {
    if (!bus->ring) return false;
    uint64_t k = atomic_load_explicit(&bus->drained, memory_order_relaxed);
    if (atomic_load_explicit(&bus->ring[k & (RING - 1)].ready, memory_order_acquire) !=
        (uint32_t)(k + 1))
        return false; /* nothing written yet where the next one goes */
    if (pthread_mutex_trylock(&bus->lock) != 0) return false;
    int n = 0;
    if (bus->depth == 0) {
        k = atomic_load_explicit(&bus->drained, memory_order_relaxed);
        for (; n < max && atomic_load_explicit(&bus->ring[k & (RING - 1)].ready,
                                               memory_order_acquire) == (uint32_t)(k + 1);
             n++, k++)
            dispatch_slot(bus, k);
    }
    bus_unlock(bus);
    return n > 0;
}

void cs_bus_drain(cs_bus *bus) {
    if (!bus->ring) return;
    pthread_mutex_lock(&bus->lock);
    drain_all(bus);
    bus_unlock(bus);
}

void cs_bus_order(cs_bus *bus) {
    /* A release in the tickets' chain of updates: every ticket taken after
     * it, and every drain that reads it, synchronises with the caller. An
     * event under the lock is ordered by the lock. */
    if (bus->ring) atomic_fetch_add_explicit(&bus->tickets, 0, memory_order_acq_rel);
}

void cs_bus_lock(cs_bus *bus) {
    pthread_mutex_lock(&bus->lock);
    drain_all(bus);
}

void cs_bus_unlock(cs_bus *bus) { bus_unlock(bus); }

/* ev happened t seconds after t0 (the bus lock is held). */
static void emit_locked_at(cs_bus *bus, cs_event *ev, double t) {
    if (bus->depth > 0) {
        /* A sink emitting: queue a copy, delivered once this dispatch ends; a
         * verdict is never dropped. */
        stamp_at(bus, ev, t);
        pending *p = cs_xcalloc(1, sizeof *p, "an event a sink emitted");
        if (cs_event_copy(&p->ev, ev) < 0) cs_oom("an event a sink emitted", sizeof *p);
        if (bus->pending_tail) bus->pending_tail->next = p;
        else bus->pending = p;
        bus->pending_tail = p;
        return;
    }
    drain_all(bus); /* what was emitted before comes first */
    stamp_at(bus, ev, t);
    dispatch(bus, ev);
    drain_pending(bus);
}

void cs_bus_emit_locked(cs_bus *bus, cs_event *ev) { emit_locked_at(bus, ev, cs_now() - bus->t0); }

void cs_bus_emit(cs_bus *bus, cs_event *ev) {
    if (bus->ring && deferrable(ev)) {
        defer(bus, ev);
        return;
    }
    pthread_mutex_lock(&bus->lock);
    cs_bus_emit_locked(bus, ev);
    bus_unlock(bus);
}

void cs_bus_emit_n(cs_bus *bus, cs_event *evs, int n) {
    bool all = bus->ring && n > 0 && n <= (int)RING;
    for (int i = 0; all && i < n; i++) all = deferrable(&evs[i]);
    if (!all) {
        /* one lock and one clock reading for the lot, as below: with more
         * ranks than cores every lock is contended */
        pthread_mutex_lock(&bus->lock);
        double t = cs_now() - bus->t0;
        for (int i = 0; i < n; i++) emit_locked_at(bus, &evs[i], t);
        bus_unlock(bus);
        return;
    }
    /* one ticket counter update and one clock reading for the lot: the
     * events happened together, under one matcher lock */
    uint64_t k = take_tickets(bus, (unsigned)n);
    double t = cs_now() - bus->t0;
    for (int i = 0; i < n; i++) put(bus, k + (uint64_t)i, &evs[i], t);
}

void cs_bus_forward(cs_bus *bus, const cs_event *ev) {
    pthread_mutex_lock(&bus->lock);
    drain_all(bus);
    /* The bus numbers each rank's stream: a remote rank's own count misses
     * the events the monitor emits here in its name (a message race), so
     * keeping it would give two events one seq. */
    cs_event e = *ev;
    if (e.rank >= 0 && e.rank < bus->world) e.seq = bus->seq[e.rank]++;
    dispatch(bus, &e);
    drain_pending(bus);
    bus_unlock(bus);
}
