/* engine.h -- the engine interface (transport only) and the table of engines.
 *
 * An engine moves bytes between ranks and reports completion. Everything above
 * it -- requests, matching, send modes, error checks, events -- is shared code
 * (api.c, match.c), so every engine behaves the same and shares the tests. Like
 * an event loop's backends, an engine is a table of function pointers.
 *
 * Engines are chosen by name from one table (engine.c): each kind says what
 * it is (summary, capabilities), how to build it and how a waiting rank
 * should behave on it. Nothing else in the program compares engine names.
 * Adding an engine: its file (engine_NAME.c, defining its cs_engine_kind), a
 * line in engine.c's table, a line in Makefile.am.
 */
#ifndef CS_ENGINE_H
#define CS_ENGINE_H

#include <stdio.h>

#include "match.h"

typedef struct cs_native_coll cs_native_coll; /* below */

typedef struct cs_engine_ops {
    /* Carry send request sq (its ref is the engine's) to its destination's
     * matcher. For an eager send, buffer the payload first: the caller completes
     * sq as soon as this returns. */
    int (*send)(cs_engine *e, cs_request *sq, bool eager);
    /* The destination's matcher paired msg with posted receive rq (its lock is
     * held): move the payload into rq->buf and complete rq -- and the sender's
     * request of a rendezvous send -- now or when the bytes have arrived. Takes
     * ownership of msg. */
    void (*transfer)(cs_engine *e, cs_msg *msg, cs_request *rq);
    /* The matched pair disagreed: fail the sender's side of msg (if it waits). */
    void (*reject)(cs_engine *e, cs_msg *msg, const char *why);
    void (*destroy)(cs_engine *e);
    /* Optional. Rank r waits for its requests and would sleep: block until
     * something may have happened (a message arrived, a request completed, the
     * run was aborted, or r's futex word no longer equals seen), then return;
     * the caller checks again. An engine whose bytes arrive on sockets makes
     * the waiting thread read them itself, saving a thread hand-off per
     * message. NULL: sleep on the rank's futex word. */
    void (*idle)(cs_engine *e, cs_rank *r, uint32_t seen);
    /* Optional. Rank r is about to wait for its requests: look for what ends
     * the wait without sleeping (polling its sockets), while that pays, and
     * return once r's futex word moves from seen or looking stops paying. A
     * wait that ends here announces no block, as one that ends while
     * spinning: the monitor learns of a deadlock that much later. */
    void (*poll)(cs_engine *e, cs_rank *r, uint32_t seen);
    /* Optional. Send what the engine holds back (acknowledgements waiting to
     * ride on a later frame): the rank is about to stand still at a gate. With
     * drain, the rank has finished: also wait until every queued frame has
     * left, or the run was aborted. */
    void (*flush)(cs_engine *e, bool drain);
    /* Optional. Rank r's thread is about to run its script: bind it to what
     * the engine gave the rank (the nccl engine: its GPU as the thread's
     * current device). CS_OK, or an error with the message in r->errmsg. */
    int (*rank_start)(cs_engine *e, cs_rank *r);
    /* Optional (engines with CS_ENGINE_NATIVE_COLL). Run collective c of rank
     * r with the engine's own implementation and wait for it: CS_OK, or an
     * error with the message in r->errmsg (CS_EABORT when the run ends). */
    int (*coll)(cs_engine *e, cs_rank *r, const cs_native_coll *c);
    /* Optional. Can rank r send or receive t on this engine? false with the
     * reason in why (the nccl engine: host tensors, another rank's GPU). */
    bool (*tensor_ok)(cs_engine *e, cs_rank *r, const cs_tensor *t, char *why, size_t len);
} cs_engine_ops;

/* A collective the engine runs natively (collectives.c checked its
 * arguments). World ranks; tensors contiguous, of one dtype. */
typedef enum {
    CS_NATIVE_ALL_REDUCE, CS_NATIVE_BROADCAST, CS_NATIVE_REDUCE, CS_NATIVE_ALL_GATHER,
    CS_NATIVE_REDUCE_SCATTER, CS_NATIVE_GATHER, CS_NATIVE_SCATTER, CS_NATIVE_ALL_TO_ALL,
    CS_NATIVE_BARRIER
} cs_native_kind;

struct cs_native_coll {
    cs_native_kind kind;
    int op;                /* cs_redop (collectives.h), for the reducing ones */
    int root;              /* broadcast, reduce, gather, scatter */
    cs_tensor *t;          /* all_reduce, broadcast, reduce: in place; all_gather and
                            * gather: the input; scatter: the output */
    cs_tensor *out;        /* reduce_scatter: the output */
    cs_tensor **blocks;    /* world-size tensors: all_gather's outputs, reduce_scatter's
                            * inputs, gather's and scatter's list (root only; else NULL) */
    cs_tensor **blocks2;   /* all_to_all: the inputs (blocks: the outputs) */
    int line;
    /* The group (dist.new_group): ranks[i] is group rank i's world rank, n
     * members, this rank is group rank me, ctx its context; roots and block
     * indices are group ranks. ranks NULL: the world (n, me, ctx unset). */
    const int *ranks;
    int n, me, ctx;
};

struct cs_engine {
    const cs_engine_ops *ops;
    cs_world *world;
    /* Set once when the engine can no longer carry this process's messages
     * (it dropped a peer's connection): every wait from then on fails with
     * broken_err and broken_why instead of waiting for bytes that cannot come. */
    _Atomic int broken;
    int broken_err;
    char broken_why[256];
};

/* Mark e broken (the first reason wins) and wake rank r to see it. */
void cs_engine_break(cs_engine *e, cs_rank *r, int err, const char *why);

/* ---- the table of engines */

typedef struct cs_rank_link cs_rank_link; /* rank_link.h */
typedef struct cs_welcome cs_welcome;     /* wire.h */

/* What a rank process knows when its engine sets up (ranks as processes). */
typedef struct cs_rank_setup {
    int rank, world;
    const char *token;   /* the job's: peers prove it to each other */
    uint32_t ip;         /* where peers may reach this process (network order) */
    bool listen_any;     /* listen on every interface (--bind 0.0.0.0), told as ip */
    cs_rank_link *link;  /* connected to the controller, not yet joined */
    cs_welcome *wel;     /* where the join leaves the WELCOME */
    FILE *err;
} cs_rank_setup;

enum {
    CS_ENGINE_PROCESSES = 1 << 0,   /* ranks are processes (else threads of one process) */
    CS_ENGINE_DEVICE = 1 << 1,      /* tensors may live on a GPU */
    CS_ENGINE_NATIVE_COLL = 1 << 2, /* collectives run on the engine's own, not on p2p */
    CS_ENGINE_TAGS = 1 << 3,        /* messages carry tags */
    CS_ENGINE_ANY_SOURCE = 1 << 4,  /* a receive may name no source */
    CS_ENGINE_DEVICE_ONLY = 1 << 5, /* it moves device tensors only (nccl) */
};

typedef struct cs_engine_kind {
    const char *name;     /* --engine NAME */
    const char *summary;  /* one line for --engine help */
    unsigned caps;        /* CS_ENGINE_* */
    /* The engine of world w. arg: what a rank process built for it (the tcp
     * engine's connections), NULL in a threads run. NULL on failure. */
    cs_engine *(*create)(cs_world *w, void *arg);
    /* Defaults of the wait path (api.c): the threads one rank keeps busy
     * (a waiting rank polls only while every such thread has a core), and how
     * often it yields the core before it sleeps (0: its engine's idle hook
     * serves the wait instead). */
    int threads_per_rank;
    int wait_yields;
    /* Ranks as processes only. In the rank process: join the job over
     * s->link (cs_rank_link_join, with whatever address the peers need) and
     * build what create takes as arg. NULL after printing why. A NULL hook:
     * the rank joins with no address and create gets NULL. An engine whose
     * create does not drive the link (cs_rank_link_watch) leaves it to a
     * thread of the link's own. */
    void *(*rank_setup)(const cs_rank_setup *s);
    /* Optional. The same engine with its ranks as processes (the nccl
     * engine's nccl-mp): what a run naming a master or a rank (--master,
     * --rank, torchrun's MASTER_ADDR and RANK) gets instead. */
    const char *as_processes;
    /* Optional. Can this machine run a world of n ranks on the engine? Asked
     * before anything starts; -1 with the reason in err (a usage error,
     * status 1): the nccl engine needs a GPU per rank. */
    int (*check)(int n, char *err, size_t errlen);
} cs_engine_kind;

/* The engine called name; NULL name: the default (thread). NULL if none is. */
const cs_engine_kind *cs_engine_find(const char *name);
/* The i-th engine of the table, NULL past the end. */
const cs_engine_kind *cs_engine_at(int i);
/* The table as --engine help shows it: name, summary, capabilities. */
void cs_engine_print_table(FILE *f);
/* An engine this program knows but this build lacks (its library was not
 * found): the sentence saying so, else NULL. */
const char *cs_engine_missing(const char *name);

#endif
