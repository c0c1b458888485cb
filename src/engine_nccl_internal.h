/* engine_nccl_internal.h -- the nccl engine's private layout, shared by
 * engine_nccl.c (set-up, point to point, the progress thread, the end) and
 * engine_nccl_coll.c (NCCL's collectives). Nothing here is used outside the
 * nccl engine. */
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

typedef struct nccl_engine {
    cs_engine base;
    int n;
    nrank *r;
    pthread_mutex_t issue;  /* every NCCL call of this process; dead */
    bool dead;              /* the communicators were aborted */
    pthread_mutex_t plock;  /* pending, stop */
    pthread_cond_t pcond;
    pend *pending;
    bool stop;
    pthread_t progress;
    bool started;
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

/* ---- engine_nccl_coll.c */
/* cs_engine_ops.coll and .tensor_ok */
CS_INTERNAL int nccl_coll(cs_engine *eng, cs_rank *r, const cs_native_coll *c);
CS_INTERNAL bool nccl_tensor_ok(cs_engine *eng, cs_rank *r, const cs_tensor *t, char *why, size_t len);

#endif
