/* world.h -- the private layout of a world and its ranks, shared by api.c,
 * match.c and the engines. Scripts and the CLI use api.h only. */
#ifndef CS_WORLD_H
#define CS_WORLD_H

#include <pthread.h>
#include <stdatomic.h>

#include "api.h"
#include "engine.h"
#include "match.h"

/* The rank's unfinished non-blocking requests and the pitfall sites it has
 * reported (pitfall.c). Touched by the rank's own thread only. */
typedef struct cs_inflight {
    struct cs_fl_entry *v;
    int n, cap;
    struct cs_fl_coll *cv;  /* async collectives not yet waited on: their tensors */
    int ncoll, coll_cap;
    uint64_t next_coll;     /* their work handles' ids, from 1 */
    struct cs_fl_site *sites;
    int nsites, site_cap;
    uint64_t tests;         /* entries looked at by accesses, not yet charged (pitfall.h) */
} cs_inflight;

struct cs_rank {
    cs_world *world;
    int rank;
    uint64_t next_req;      /* request ids, from 1 */
    cs_budget budget;
    uint64_t rng;
    _Atomic int exited;
    int ngroups;            /* dist.new_group calls so far: the next group's context */
    unsigned world_coll_seq; /* collectives called on the world group so far */
    uint16_t coll_sig;      /* the collective it is inside: its call's digest (collectives.c) */
    bool coll_exchange;     /* the requests being posted are an exchange's (coll_algos.c) */
    cs_inflight inflight;
    char errmsg[512];
    /* the operation passing the gate, for cs_rank_gate_op */
    bool gate_set;
    int gate_peer, gate_tag;
    cs_tensor *gate_tensor;
    /* modelled time (--net) */
    uint64_t flops_pending;        /* arithmetic not yet charged to the clock */
    _Atomic uint64_t clock_answer; /* the timekeeper's reply to a clock read, + 1; 0: none yet */
    struct cs_request *own_spare;  /* freed requests the rank takes first (api.c) */
    /* What other threads write, on a line of its own: a peer completing one
     * of the rank's requests does not take the line the rank writes on every
     * operation away from it. */
    _Alignas(64) _Atomic uint32_t futex; /* bumped on every wake-up; the waiter sleeps on it */
    _Atomic int sleeping;
    /* Freed requests kept for the rank's next operations: any thread pushes
     * onto spare, the rank takes the whole list into own_spare. */
    _Atomic(struct cs_request *) spare;
    _Atomic int nspare;            /* in both lists, roughly: the cap's count */
};

struct cs_world {
    cs_world_config cfg;
    char engine_name[32];
    char script_name[256];
    cs_bus *bus;
    cs_engine *engine;
    cs_matcher *matchers;   /* one per rank of this process */
    cs_rank *ranks;
    int spin;               /* busy-poll iterations before yielding */
    int yields;             /* sched_yield calls before sleeping */
    bool oversubscribed;    /* more ranks than cores: yield while spinning */
    bool one_stream;        /* every rank's events are in this process's stream */
    /* A receive from any source has been posted (set before its post event;
     * one_stream only): until then the race detector credits a rendezvous
     * isend's completion at once and need not see the waits on it (api.c). */
    _Atomic bool any_source;
    _Atomic int end;        /* cs_end_reason; CS_END_NONE while running */
    cs_gate_fn gate;
    void *gate_ud;
    pthread_mutex_t end_lock;  /* guards nexited for cs_world_wait */
    pthread_cond_t end_cond;
    int nexited;
};

/* ---- request.c */
/* A new request of rank r (one reference: the caller's), holding t. NULL when
 * out of memory. */
cs_request *cs_request_new(cs_rank *r, cs_op op, cs_tensor *t, int peer, int tag, int line);
/* Free r's pool of spare requests (the world's end). */
void cs_request_free_spares(cs_rank *r);
/* Finish request q: emit its complete event, publish its state, wake its owner
 * and drop the reference the engine held. err != CS_OK fails it with msg. */
void cs_request_finish(cs_request *q, cs_err err, const char *msg);
/* The same in two halves, for a caller that emits several events at once
 * (cs_bus_emit_n): the complete event of a successful q, then, once it is
 * emitted, the state, the wake-up and the engine's reference. */
void cs_request_done_event(const cs_request *q, cs_event *ev);
void cs_request_done_publish(cs_request *q);
/* Wake rank r if it sleeps in a wait (any thread). */
void cs_rank_wake(cs_rank *r);

/* ---- pitfall.c: the hooks api.c calls */
/* A non-blocking request was posted: its buffer is in use until it is waited on. */
void cs_inflight_add(cs_rank *r, cs_request *q);
/* The rank waited on q (or saw it complete): its buffer is the script's again. */
void cs_inflight_done(cs_rank *r, cs_request *q);
/* The rank finishes with status: report requests never waited on (status 0).
 * Returns the status to exit with (CS_END_ERROR when --strict turned them into an error). */
int cs_inflight_exit(cs_rank *r, int status);
/* An async collective (async_op=true) returned its work handle: its tensors
 * (ins read, outs written) are the collective's until the handle is waited
 * on, even though the call has already run it. Returns the handle's id. */
uint64_t cs_inflight_coll_add(cs_rank *r, const char *name, int line, cs_tensor *const *ins,
                              int nin, cs_tensor *const *outs, int nout);
/* The handle was waited on (wait, wait_all, a true is_completed). */
void cs_inflight_coll_done(cs_rank *r, uint64_t id);
/* The handle was collected: if never waited on, it is reported at the exit. */
void cs_inflight_coll_dropped(cs_rank *r, uint64_t id);
/* A blocking send or receive naming the rank itself that nothing posted before
 * can satisfy: it would wait forever. CS_OK, or CS_EPITFALL with --strict. */
int cs_pitfall_self(cs_rank *r, cs_op op, int peer, int tag, bool eager, int line);

#endif
