/* engine_nccl_internal.h -- the nccl engine's private layout, shared by
 * engine_nccl.c (ranks as threads: set-up, point to point, the progress
 * thread, the end), engine_nccl_proc.c (ranks as processes: the hub's
 * envelopes and tickets), engine_nccl_coll.c (NCCL's collectives) and
 * engine_nccl_group.c (a communicator per group). Nothing here is used
 * outside the nccl engine. */
#ifndef CS_ENGINE_NCCL_INTERNAL_H
#define CS_ENGINE_NCCL_INTERNAL_H

#include <cuda_runtime_api.h>

/* nccl.h declares ncclGroupStart() and friends without (void): its style,
 * not a problem of this engine. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <nccl.h>
#pragma GCC diagnostic pop

#include "world.h"

#ifndef CS_INTERNAL
#define CS_INTERNAL __attribute__((visibility("hidden")))
#endif

typedef struct nrank {
    int dev;
    ncclComm_t coll, p2p;
    cudaStream_t cstream, pstream;
    void *one;              /* barrier's element on dev */
} nrank;

/* An issued operation a request waits on: done when ev has completed. */
typedef struct pend {
    struct pend *next;
    cudaEvent_t ev;
    cs_request *q;          /* the engine's reference, or NULL */
    cs_tensor *keep;        /* an eager send's copy: freed once ncclSend has read it */
} pend;

/* A group's communicators (dist.new_group), made at its first native
 * collective: one per member of this process (lo..hi), by group rank. */
typedef struct ngroup {
    struct ngroup *next;
    int ctx, n;
    int *ranks;             /* group rank -> world rank */
    ncclComm_t *comm;       /* n entries; NULL for members of other processes */
} ngroup;

struct nccl_proc;           /* engine_nccl_proc.c: the hub's side of a rank process */

typedef struct nccl_engine {
    cs_engine base;
    int n;                  /* the world's ranks */
    int lo, hi;             /* the ranks of this process: lo..hi-1 (all of them as threads) */
    nrank *r;               /* n entries; those of other processes unused */
    pthread_mutex_t issue;  /* every NCCL call of this process; dead */
    bool dead;              /* the communicators were aborted */
    pthread_mutex_t plock;  /* pending, stop */
    pthread_cond_t pcond;
    pend *pending;
    bool stop;
    pthread_t progress;
    bool started;
    pthread_mutex_t glock;  /* groups */
    ngroup *groups;
    struct nccl_proc *proc; /* ranks as processes, else NULL */
} nccl_engine;

/* ---- engine_nccl.c */
/* "NCCL error: what: NCCL's text: its last error" / the same for CUDA. */
CS_INTERNAL void nccl_say(char *buf, size_t len, const char *what, ncclResult_t rc, ncclComm_t comm);
CS_INTERNAL void nccl_say_cuda(char *buf, size_t len, const char *what, cudaError_t rc);
/* A polling loop's pause: yield first, then sleep a little longer. */
CS_INTERNAL void nccl_nap(int *round);
/* Wait until NCCL has finished what it started on comms (set-up, or the
 * enqueueing of a group). With the issue lock held by the caller when
 * `locked`; otherwise it is taken per look, so the run's end can abort the
 * communicators meanwhile. w NULL: not in a run (set-up), no abort to see. */
CS_INTERNAL int nccl_ready(nccl_engine *e, ncclComm_t *comms, int k, bool locked, cs_world *w,
                           double deadline, char *err, size_t len);

/* Record an event on stream s (device dev) for request q: q completes with
 * it, and keep (taken over, may be NULL) is freed then. Issue lock held. */
CS_INTERNAL int nccl_watch(nccl_engine *e, int dev, cudaStream_t s, cs_request *q, cs_tensor *keep,
                           char *err, size_t len);
/* The parts both ways of running ranks share: streams and the barrier's
 * element of rank i; the progress thread; the end of the run. */
CS_INTERNAL nccl_engine *nccl_alloc(cs_world *w, int lo, int hi);
CS_INTERNAL int nccl_init_rank(nrank *nr, char *err, size_t len);
CS_INTERNAL int nccl_start_progress(nccl_engine *e, char *err, size_t len);
CS_INTERNAL void nccl_destroy(cs_engine *eng);
CS_INTERNAL int nccl_check(int n, char *err, size_t len);
CS_INTERNAL void nccl_abort_all(nccl_engine *e);
#define NCCL_INIT_SECONDS 120.0 /* communicator set-up, at the longest */

/* ---- engine_nccl_proc.c */
/* The hub's side of a rank process: blob store (the group's unique ids).
 * Put the blob under key (the group's lowest member), or get it. 0, or -1
 * with why in err. */
CS_INTERNAL int nccl_proc_put(nccl_engine *e, uint32_t key, const void *blob, size_t len,
                              char *err, size_t errlen);
CS_INTERNAL long nccl_proc_get(nccl_engine *e, uint32_t key, void *buf, size_t cap, char *err,
                               size_t errlen);
/* Free what the process side holds (the hub's connection, the hub, its
 * tables) once the communicators are gone. */
CS_INTERNAL void nccl_proc_free(nccl_engine *e);
/* Stop the hub's reader (before the communicators go). */
CS_INTERNAL void nccl_proc_stop(nccl_engine *e);

/* ---- engine_nccl_group.c */
/* The communicator of group rank c->me of the group c names, on rank r's
 * behalf: made at the group's first collective (every member has arrived:
 * coll_algos.c's barrier), from an id the group's lowest member draws.
 * CS_OK, or an error with r->errmsg. */
CS_INTERNAL int nccl_group_comm(nccl_engine *e, cs_rank *r, const cs_native_coll *c, ncclComm_t *out);
/* Every group communicator: abort (the run ended early) or finalize and
 * destroy (a clean end); free the table. Issue lock held. */
CS_INTERNAL void nccl_groups_end(nccl_engine *e, bool clean);
CS_INTERNAL void nccl_groups_abort(nccl_engine *e);

/* ---- engine_nccl_coll.c */
/* cs_engine_ops.coll and .tensor_ok */
CS_INTERNAL int nccl_coll(cs_engine *eng, cs_rank *r, const cs_native_coll *c);
CS_INTERNAL bool nccl_tensor_ok(cs_engine *eng, cs_rank *r, const cs_tensor *t, char *why, size_t len);

#endif
