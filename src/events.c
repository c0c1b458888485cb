/* events.c -- event names and the bus that orders events and fans them out. */
#include "events.h"

#include <math.h>
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

int cs_bus_init(cs_bus *bus, int world) {
    memset(bus, 0, sizeof *bus);
    bus->world = world;
    bus->seq = calloc((size_t)(world > 0 ? world : 1), sizeof *bus->seq);
    if (!bus->seq) return -1;
    bus->t0 = cs_now();
    cs_mutex_init_adaptive(&bus->lock);
    return 0;
}

void cs_bus_destroy(cs_bus *bus) {
    pthread_mutex_destroy(&bus->lock);
    free(bus->seq);
    bus->seq = NULL;
}

void cs_bus_subscribe(cs_bus *bus, cs_sink sink) {
    if (bus->nsinks < CS_BUS_MAX_SINKS) bus->sinks[bus->nsinks++] = sink;
}

void cs_bus_lock(cs_bus *bus) { pthread_mutex_lock(&bus->lock); }
void cs_bus_unlock(cs_bus *bus) { pthread_mutex_unlock(&bus->lock); }

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

static void stamp(cs_bus *bus, cs_event *ev) {
    /* microseconds: short trace lines that read back exactly */
    ev->t = round((cs_now() - bus->t0) * 1e6) / 1e6;
    ev->seq = (ev->rank >= 0 && ev->rank < bus->world) ? bus->seq[ev->rank]++ : 0;
}

void cs_bus_emit_locked(cs_bus *bus, cs_event *ev) {
    stamp(bus, ev);
    if (bus->depth > 0) {
        /* A sink emitting: queue a copy, delivered once this dispatch ends; a
         * verdict is never dropped. */
        pending *p = cs_xcalloc(1, sizeof *p, "an event a sink emitted");
        if (cs_event_copy(&p->ev, ev) < 0) cs_oom("an event a sink emitted", sizeof *p);
        if (bus->pending_tail) bus->pending_tail->next = p;
        else bus->pending = p;
        bus->pending_tail = p;
        return;
    }
    dispatch(bus, ev);
    drain_pending(bus);
}

void cs_bus_emit(cs_bus *bus, cs_event *ev) {
    pthread_mutex_lock(&bus->lock);
    cs_bus_emit_locked(bus, ev);
    pthread_mutex_unlock(&bus->lock);
}

void cs_bus_forward(cs_bus *bus, const cs_event *ev) {
    pthread_mutex_lock(&bus->lock);
    if (ev->rank >= 0 && ev->rank < bus->world && ev->seq >= bus->seq[ev->rank])
        bus->seq[ev->rank] = ev->seq + 1;
    dispatch(bus, ev);
    drain_pending(bus);
    pthread_mutex_unlock(&bus->lock);
}
