/* engine_nccl.c -- every rank a thread of this process with a GPU of its own;
 * NCCL moves the payload (built only when configure found CUDA and NCCL).
 *
 * NCCL's point-to-point has no tags and no any-source, so matching stays
 * where it is for every engine (match.c): a send hands its envelope to the
 * destination's matcher as on the thread engine, and only once a receive has
 * matched it does this file issue the payload -- ncclSend on the sender's
 * communicator and ncclRecv on the receiver's, in one ncclGroupStart/End, each
 * on its rank's stream -- and record a CUDA event behind each. The requests
 * complete when their events have (the progress thread queries them without
 * blocking), so a wait is a CUDA event completing, and is_completed() reads
 * what the last query found.
 *
 * Ordering. NCCL pairs the k-th send from a to b with the k-th receive on b
 * from a, and runs the operations of one communicator one after the other.
 * Every transfer is issued under one lock (`issue`), sender and receiver side
 * in one group, so every rank's communicator sees the transfers in one global
 * order: the earliest unfinished one heads both its streams and can always
 * run. Point-to-point has a communicator of its own (`p2p`), apart from the
 * collectives' (`coll`): a transfer matched while its sender sits in a
 * collective must not queue behind it.
 *
 * Collectives (--algo nccl, the default here) are NCCL's own on the world
 * group; all_to_all, gather and scatter are grouped send/recv, as torch
 * does; barrier is a one-element all_reduce. Other --algo choices run the
 * visible schedules of coll_algos.c over the point-to-point path above.
 *
 * Communicators are non-blocking (ncclConfig_t.blocking = 0), so no NCCL call
 * holds a thread while peers catch up: whoever waits polls
 * ncclCommGetAsyncError and can give up when the run ends. On a deadlock
 * verdict (or any other end) the progress thread aborts every communicator
 * (ncclCommAbort), which ends kernels that wait for peers that will never
 * come; NCCL's asynchronous errors fail every rank's waits with NCCL's text.
 *
 * Owns: the communicators, streams and events of the world's ranks, and the
 * list of issued operations not yet seen complete.
 */
#include "world.h"

#include <cuda_runtime_api.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* nccl.h declares ncclGroupStart() and friends without (void): its style,
 * not a problem of this file. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <nccl.h>
#pragma GCC diagnostic pop

#include "collectives.h"
#include "device.h"

#define INIT_SECONDS 120.0  /* communicator set-up, at the longest */
#define ASYNC_CHECK_S 0.01  /* how often the progress thread asks NCCL for errors */

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

/* ---- messages */

static void say(char *buf, size_t len, const char *what, ncclResult_t rc, ncclComm_t comm) {
    const char *last = comm ? ncclGetLastError(comm) : NULL;
    snprintf(buf, len, "NCCL error: %s: %s%s%s", what, ncclGetErrorString(rc),
             last && *last ? ": " : "", last && *last ? last : "");
}

static void say_cuda(char *buf, size_t len, const char *what, cudaError_t rc) {
    snprintf(buf, len, "CUDA error: %s: %s (%s)", what, cudaGetErrorString(rc), cudaGetErrorName(rc));
    cudaGetLastError(); /* not sticky: later calls start clean */
}

static void nap(int *round) {
    if (*round < 64) {
        sched_yield();
    } else {
        long us = *round < 200 ? 20 : 500;
        struct timespec ts = {0, us * 1000};
        nanosleep(&ts, NULL);
    }
    (*round)++;
}

/* ---- types */

static bool nccl_type(cs_dtype d, ncclDataType_t *out) {
    static const ncclDataType_t map[CS_NDTYPES] = {
        [CS_FLOAT32] = ncclFloat32, [CS_FLOAT64] = ncclFloat64, [CS_INT32] = ncclInt32,
        [CS_INT64] = ncclInt64, [CS_UINT8] = ncclUint8,
    };
    if ((unsigned)d >= CS_NDTYPES) return false;
    *out = map[d];
    return true;
}

/* torch's words for what NCCL cannot reduce. */
static int nccl_op(cs_rank *r, int op, ncclRedOp_t *out) {
    static const struct { int ok; ncclRedOp_t op; } map[CS_RED_NOPS] = {
        [CS_RED_SUM] = {1, ncclSum}, [CS_RED_AVG] = {1, ncclAvg},
        [CS_RED_PRODUCT] = {1, ncclProd}, [CS_RED_MIN] = {1, ncclMin}, [CS_RED_MAX] = {1, ncclMax},
    };
    if ((unsigned)op >= CS_RED_NOPS || !map[op].ok) {
        snprintf(r->errmsg, sizeof r->errmsg, "Cannot use ReduceOp.%s with NCCL",
                 cs_redop_name((cs_redop)op));
        return CS_EARG;
    }
    *out = map[op].op;
    return CS_OK;
}

/* ---- readiness of non-blocking communicators */

/* Wait until NCCL has finished what it started on comms (set-up, or the
 * enqueueing of a group). With the issue lock held by the caller when
 * `locked`; otherwise it is taken per look, so the run's end can abort the
 * communicators meanwhile. w NULL: not in a run (set-up), no abort to see. */
static int ready(nccl_engine *e, ncclComm_t *comms, int k, bool locked, cs_world *w,
                 double deadline, char *err, size_t len) {
    for (int round = 0;; nap(&round)) {
        if (!locked) pthread_mutex_lock(&e->issue);
        int busy = 0, rc = CS_OK;
        if (e->dead) rc = CS_EABORT;
        for (int i = 0; i < k && rc == CS_OK; i++) {
            ncclResult_t st = ncclSuccess, q = ncclCommGetAsyncError(comms[i], &st);
            if (q != ncclSuccess) st = q;
            if (st == ncclInProgress) busy++;
            else if (st != ncclSuccess) {
                say(err, len, "communicator", st, comms[i]);
                rc = CS_ETRANSPORT;
            }
        }
        if (!locked) pthread_mutex_unlock(&e->issue);
        if (rc != CS_OK || !busy) return rc;
        if (w && cs_world_aborted(w)) return CS_EABORT;
        if (!w && cs_now() > deadline) {
            snprintf(err, len, "NCCL did not set up its communicators within %g s", INIT_SECONDS);
            return CS_ETRANSPORT;
        }
    }
}

/* ---- the progress thread: completions, errors, the end of the run */

static void abort_all(nccl_engine *e) {
    pthread_mutex_lock(&e->issue);
    if (!e->dead) {
        e->dead = true;
        for (int i = 0; i < e->n; i++) {
            cs_device_set(e->r[i].dev);
            if (e->r[i].coll) ncclCommAbort(e->r[i].coll);
            if (e->r[i].p2p) ncclCommAbort(e->r[i].p2p);
            e->r[i].coll = e->r[i].p2p = NULL;
        }
    }
    pthread_mutex_unlock(&e->issue);
}

/* NCCL's asynchronous errors (a peer's failure, a network error) end the
 * run: every rank's waits fail with NCCL's text, and the rank says it. */
static void check_async(nccl_engine *e) {
    char why[256] = "";
    pthread_mutex_lock(&e->issue);
    for (int i = 0; i < e->n && !e->dead && !why[0]; i++) {
        ncclComm_t c[2] = {e->r[i].coll, e->r[i].p2p};
        for (int k = 0; k < 2 && !why[0]; k++) {
            ncclResult_t st = ncclSuccess;
            if (ncclCommGetAsyncError(c[k], &st) == ncclSuccess && st != ncclSuccess &&
                st != ncclInProgress)
                say(why, sizeof why, "asynchronous error", st, c[k]);
        }
    }
    pthread_mutex_unlock(&e->issue);
    if (!why[0]) return;
    for (int i = 0; i < e->n; i++) cs_engine_break(&e->base, &e->base.world->ranks[i], CS_ETRANSPORT, why);
}

static void *progress_main(void *arg) {
    nccl_engine *e = arg;
    cs_world *w = e->base.world;
    double next_check = 0;
    int round = 0;
    pthread_mutex_lock(&e->plock);
    while (!e->stop) {
        if (!e->pending) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += 2 * 1000 * 1000;
            if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
            pthread_cond_timedwait(&e->pcond, &e->plock, &ts);
            round = 0;
        }
        /* Take what completed out of the list; finish it without the lock.
         * Once the run has ended nothing completes any more: the report is
         * the verdict's (the requests are dropped silently at the end). */
        pend *done = NULL, **pp = &e->pending;
        while (*pp && !cs_world_aborted(w)) {
            pend *p = *pp;
            cudaError_t q = cudaEventQuery(p->ev);
            if (q == cudaErrorNotReady) {
                pp = &p->next;
                continue;
            }
            *pp = p->next;
            p->next = done;
            done = p;
            if (q != cudaSuccess && p->q) {
                char msg[256];
                say_cuda(msg, sizeof msg, "waiting for a transfer", q);
                p->q->errmsg = strdup(msg); /* read by finish below */
            }
        }
        bool more = e->pending != NULL;
        pthread_mutex_unlock(&e->plock);
        while (done) {
            pend *p = done;
            done = p->next;
            cudaEventDestroy(p->ev);
            cs_tensor_release(p->keep);
            if (p->q) {
                char *err = p->q->errmsg;
                p->q->errmsg = NULL;
                cs_request_finish(p->q, err ? CS_ETRANSPORT : CS_OK, err);
                free(err);
            }
            free(p);
        }
        if (cs_world_aborted(w)) abort_all(e);
        double now = cs_now();
        if (now >= next_check) {
            check_async(e);
            next_check = now + ASYNC_CHECK_S;
        }
        if (more) nap(&round);
        pthread_mutex_lock(&e->plock);
    }
    pthread_mutex_unlock(&e->plock);
    return NULL;
}

/* Record an event on stream s (device dev) for request q: q completes with it,
 * and keep (taken over, may be NULL) is freed then. The issue lock is held. */
static int watch(nccl_engine *e, int dev, cudaStream_t s, cs_request *q, cs_tensor *keep,
                 char *err, size_t len) {
    pend *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, len, "out of memory for a transfer");
        return CS_ENOMEM;
    }
    cudaError_t rc = cudaSetDevice(dev);
    if (rc == cudaSuccess) rc = cudaEventCreateWithFlags(&p->ev, cudaEventDisableTiming);
    if (rc == cudaSuccess && (rc = cudaEventRecord(p->ev, s)) != cudaSuccess) cudaEventDestroy(p->ev);
    if (rc != cudaSuccess) {
        say_cuda(err, len, "recording a transfer's event", rc);
        free(p);
        return CS_ETRANSPORT;
    }
    p->q = q;
    p->keep = keep;
    pthread_mutex_lock(&e->plock);
    p->next = e->pending;
    e->pending = p;
    pthread_cond_signal(&e->pcond);
    pthread_mutex_unlock(&e->plock);
    return CS_OK;
}

/* ---- point to point */

/* An eager send completes at once: its bytes are first copied aside on the
 * sender's GPU (charged to the sender's cap, as the host copy is on the
 * thread engine), and that copy is what travels when a receive matches. */
static int nccl_send(cs_engine *eng, cs_request *sq, bool eager) {
    cs_world *w = eng->world;
    cs_rank *r = sq->owner;
    cs_msg *msg = calloc(1, sizeof *msg);
    if (!msg) {
        snprintf(r->errmsg, sizeof r->errmsg, "out of memory sending a message");
        return CS_ENOMEM;
    }
    cs_msg_envelope(msg, sq);
    if (eager) {
        cs_tensor *copy = cs_tensor_clone(cs_rank_budget(r), sq->buf);
        if (!copy) {
            free(msg);
            sq->unbuffered = true; /* api.c fails the send at its line */
            cs_request_release(sq); /* the engine's reference: nothing carries it */
            return CS_OK;
        }
        msg->engine_data = copy;
        cs_request_finish(sq, CS_OK, NULL);
    } else {
        msg->sreq = sq;
    }
    cs_match_deliver(w, &w->matchers[sq->peer], msg);
    return CS_OK;
}

/* The pair matched (the receiver's matcher lock is held): issue both halves. */
static void nccl_transfer(cs_engine *eng, cs_msg *msg, cs_request *rq) {
    nccl_engine *e = (nccl_engine *)eng;
    cs_tensor *from = msg->engine_data ? msg->engine_data : msg->sreq->buf;
    nrank *s = &e->r[msg->src], *d = &e->r[rq->rank];
    cs_request *sq = msg->sreq;
    msg->sreq = NULL;
    char err[512] = "";
    int rc = CS_OK;
    int saved = -1;
    cudaGetDevice(&saved);
    pthread_mutex_lock(&e->issue);
    if (e->dead) {
        rc = CS_EABORT;
        snprintf(err, sizeof err, "the run is ending");
    } else if (msg->bytes) {
        ncclComm_t both[2] = {s->p2p, d->p2p};
        ncclResult_t q = ncclGroupStart();
        if (q == ncclSuccess)
            q = ncclSend(cs_tensor_data(from), msg->bytes, ncclUint8, rq->rank, s->p2p, s->pstream);
        if (q == ncclSuccess)
            q = ncclRecv(cs_tensor_data(rq->buf), msg->bytes, ncclUint8, msg->src, d->p2p, d->pstream);
        ncclResult_t g = ncclGroupEnd();
        if (q == ncclSuccess) q = g;
        if (q != ncclSuccess && q != ncclInProgress) {
            say(err, sizeof err, "send/recv", q, s->p2p);
            rc = CS_ETRANSPORT;
        } else {
            rc = ready(e, both, 2, true, eng->world, 0, err, sizeof err);
        }
    }
    /* Both requests complete when their stream has done the work (at once
     * for an empty message: events on idle streams). */
    /* An eager send's copy lives until ncclSend has read it. */
    if (rc == CS_OK && (sq || msg->engine_data) &&
        (rc = watch(e, s->dev, s->pstream, sq, msg->engine_data, err, sizeof err)) == CS_OK) {
        sq = NULL;
        msg->engine_data = NULL;
    }
    if (rc == CS_OK && (rc = watch(e, d->dev, d->pstream, rq, NULL, err, sizeof err)) == CS_OK)
        rq = NULL;
    pthread_mutex_unlock(&e->issue);
    if (saved >= 0) cudaSetDevice(saved);
    /* The run is ending: drop the engine's references without a word (the
     * waits return at once); a failure fails both sides with its text. */
    cs_request *left[2] = {sq, rq};
    for (int i = 0; i < 2; i++) {
        if (!left[i]) continue;
        if (rc == CS_EABORT) cs_request_release(left[i]);
        else cs_request_finish(left[i], rc, err);
    }
    cs_tensor_release(msg->engine_data);
    msg->engine_data = NULL;
    cs_msg_free(msg);
}

static void nccl_reject(cs_engine *eng, cs_msg *msg, const char *why) {
    (void)eng;
    if (msg->sreq) {
        cs_request *sq = msg->sreq;
        msg->sreq = NULL;
        cs_request_finish(sq, CS_EMISMATCH, why);
    }
    cs_tensor_release(msg->engine_data);
    msg->engine_data = NULL;
    cs_msg_free(msg);
}

/* ---- collectives */

/* A tensor this rank may hand to NCCL: on its own GPU. torch's words for a
 * host tensor. */
static bool tensor_on(const nrank *nr, int rank, const cs_tensor *t, char *why, size_t len) {
    if (!cs_tensor_on_device(t)) {
        snprintf(why, len, "Tensors must be CUDA and dense: this one is on the host, and the "
                           "nccl engine moves GPU tensors only (tensor.zeros(n, {device=\"cuda\"}), "
                           "t:cuda())");
        return false;
    }
    if (cs_tensor_device(t) != nr->dev) {
        snprintf(why, len, "the tensor is on cuda:%d, but rank %d runs on cuda:%d (one GPU per "
                           "rank: t:to(\"cuda\") moves it to the rank's own)",
                 cs_tensor_device(t), rank, nr->dev);
        return false;
    }
    return true;
}

static bool nccl_tensor_ok(cs_engine *eng, cs_rank *r, const cs_tensor *t, char *why, size_t len) {
    return tensor_on(&((nccl_engine *)eng)->r[r->rank], r->rank, t, why, len);
}

static int check_on(cs_rank *r, const nrank *nr, const cs_tensor *t) {
    char why[300];
    if (!t || tensor_on(nr, r->rank, t, why, sizeof why)) return CS_OK;
    snprintf(r->errmsg, sizeof r->errmsg, "%s", why);
    return CS_EARG;
}

static int check_all(cs_rank *r, const nrank *nr, const cs_native_coll *c, int n) {
    int rc = check_on(r, nr, c->t);
    if (rc == CS_OK) rc = check_on(r, nr, c->out);
    for (int i = 0; rc == CS_OK && c->blocks && i < n; i++) rc = check_on(r, nr, c->blocks[i]);
    for (int i = 0; rc == CS_OK && c->blocks2 && i < n; i++) rc = check_on(r, nr, c->blocks2[i]);
    return rc;
}

static size_t count_of(const cs_tensor *t) { return (size_t)cs_tensor_numel(t); }

/* Issue the NCCL calls of c inside the group the caller opened. */
static ncclResult_t issue_coll(const nccl_engine *e, int me, const cs_native_coll *c,
                               ncclDataType_t ty, ncclRedOp_t op, void *flat) {
    const nrank *nr = &e->r[me];
    ncclComm_t cm = nr->coll;
    cudaStream_t s = nr->cstream;
    int n = e->n;
    ncclResult_t q = ncclSuccess;
    switch (c->kind) {
    case CS_NATIVE_ALL_REDUCE:
        return ncclAllReduce(cs_tensor_data(c->t), cs_tensor_data(c->t), count_of(c->t), ty, op, cm, s);
    case CS_NATIVE_BROADCAST:
        return ncclBroadcast(cs_tensor_data(c->t), cs_tensor_data(c->t), count_of(c->t), ty, c->root, cm, s);
    case CS_NATIVE_REDUCE: /* recvbuff is read only on the root: in place everywhere */
        return ncclReduce(cs_tensor_data(c->t), cs_tensor_data(c->t), count_of(c->t), ty, op, c->root, cm, s);
    case CS_NATIVE_ALL_GATHER:
        if (flat) /* the blocks are one tensor (all_gather_into_tensor) */
            return ncclAllGather(cs_tensor_data(c->t), flat, count_of(c->t), ty, cm, s);
        for (int j = 0; j < n && q == ncclSuccess; j++) /* a list: a broadcast per rank */
            q = ncclBroadcast(cs_tensor_data(j == me ? c->t : c->blocks[j]),
                              cs_tensor_data(c->blocks[j]), count_of(c->t), ty, j, cm, s);
        return q;
    case CS_NATIVE_REDUCE_SCATTER: /* the inputs end to end (flat) */
        return ncclReduceScatter(flat, cs_tensor_data(c->out), count_of(c->out), ty, op, cm, s);
    case CS_NATIVE_GATHER: /* grouped send/recv, as torch does */
        q = ncclSend(cs_tensor_data(c->t), count_of(c->t), ty, c->root, cm, s);
        for (int j = 0; me == c->root && j < n && q == ncclSuccess; j++)
            q = ncclRecv(cs_tensor_data(c->blocks[j]), count_of(c->t), ty, j, cm, s);
        return q;
    case CS_NATIVE_SCATTER:
        for (int j = 0; me == c->root && j < n && q == ncclSuccess; j++)
            q = ncclSend(cs_tensor_data(c->blocks[j]), count_of(c->t), ty, j, cm, s);
        if (q == ncclSuccess) q = ncclRecv(cs_tensor_data(c->t), count_of(c->t), ty, c->root, cm, s);
        return q;
    case CS_NATIVE_ALL_TO_ALL: /* sizes may differ between pairs: each pair's own count */
        for (int j = 0; j < n && q == ncclSuccess; j++) {
            q = ncclSend(cs_tensor_data(c->blocks2[j]), count_of(c->blocks2[j]), ty, j, cm, s);
            if (q == ncclSuccess)
                q = ncclRecv(cs_tensor_data(c->blocks[j]), count_of(c->blocks[j]), ty, j, cm, s);
        }
        return q;
    case CS_NATIVE_BARRIER:
        return ncclAllReduce(nr->one, nr->one, 1, ncclFloat32, ncclSum, cm, s);
    }
    return ncclInvalidArgument;
}

/* Wait for the event on the rank's own thread: the run's end and NCCL's
 * errors end the wait too. */
static int wait_event(nccl_engine *e, cs_rank *r, cudaEvent_t ev) {
    cs_world *w = e->base.world;
    for (int round = 0;; nap(&round)) {
        cudaError_t q = cudaEventQuery(ev);
        if (q == cudaSuccess) return CS_OK;
        if (q != cudaErrorNotReady) {
            say_cuda(r->errmsg, sizeof r->errmsg, "waiting for a collective", q);
            return CS_ETRANSPORT;
        }
        if (cs_world_aborted(w)) return CS_EABORT;
        if (atomic_load(&e->base.broken)) {
            snprintf(r->errmsg, sizeof r->errmsg, "%s", e->base.broken_why);
            return e->base.broken_err;
        }
    }
}

static int run_coll(nccl_engine *e, cs_rank *r, nrank *nr, const cs_native_coll *c,
                    ncclDataType_t ty, ncclRedOp_t op, void *flat);

/* The start of n equal blocks that lie end to end in memory, else NULL. */
static void *end_to_end(cs_tensor **blocks, int n) {
    if (!blocks) return NULL;
    size_t one = cs_tensor_nbytes(blocks[0]);
    char *base = cs_tensor_data(blocks[0]);
    for (int j = 1; j < n; j++)
        if ((char *)cs_tensor_data(blocks[j]) != base + one * (size_t)j ||
            cs_tensor_nbytes(blocks[j]) != one)
            return NULL;
    return base;
}

static int nccl_coll(cs_engine *eng, cs_rank *r, const cs_native_coll *c) {
    nccl_engine *e = (nccl_engine *)eng;
    nrank *nr = &e->r[r->rank];
    int rc = check_all(r, nr, c, e->n);
    if (rc != CS_OK) return rc;
    cs_dtype d = c->t ? c->t->dtype : c->out ? c->out->dtype : c->blocks ? c->blocks[0]->dtype : CS_FLOAT32;
    ncclDataType_t ty;
    ncclRedOp_t op = ncclSum;
    if (!nccl_type(d, &ty)) {
        snprintf(r->errmsg, sizeof r->errmsg, "NCCL has no type for %s", cs_dtype_name(d));
        return CS_EARG;
    }
    bool reduces = c->kind == CS_NATIVE_ALL_REDUCE || c->kind == CS_NATIVE_REDUCE ||
                   c->kind == CS_NATIVE_REDUCE_SCATTER;
    if (reduces && (rc = nccl_op(r, c->op, &op)) != CS_OK) return rc;

    /* Blocks that are one tensor already (the _tensor forms) go to NCCL as
     * they are. reduce_scatter of a list: its inputs are first laid end to
     * end on the GPU, as torch flattens them, for one ncclReduceScatter
     * (NCCL then writes no buffer but the output); copied on the
     * collective's stream, so NCCL reads them after the copies. */
    void *flat = NULL;
    bool owned = false;
    if (c->kind == CS_NATIVE_ALL_GATHER || c->kind == CS_NATIVE_REDUCE_SCATTER)
        flat = end_to_end(c->blocks, e->n);
    if (!flat && c->kind == CS_NATIVE_REDUCE_SCATTER) {
        owned = true;
        size_t one = cs_tensor_nbytes(c->out);
        if (!(flat = cs_device_alloc(nr->dev, one * (size_t)e->n))) {
            snprintf(r->errmsg, sizeof r->errmsg, "%s", cs_device_errmsg());
            return CS_ENOMEM;
        }
        for (int j = 0; j < e->n; j++) {
            cudaError_t ce = cudaMemcpyAsync((char *)flat + one * (size_t)j, cs_tensor_data(c->blocks[j]),
                                             one, cudaMemcpyDeviceToDevice, nr->cstream);
            if (ce != cudaSuccess) {
                say_cuda(r->errmsg, sizeof r->errmsg, "copying reduce_scatter's inputs", ce);
                cs_device_free(nr->dev, flat);
                return CS_ETRANSPORT;
            }
        }
    }
    rc = run_coll(e, r, nr, c, ty, op, flat);
    if (owned) cs_device_free(nr->dev, flat);
    return rc;
}

/* Issue c on the rank's collective communicator and wait for it. */
static int run_coll(nccl_engine *e, cs_rank *r, nrank *nr, const cs_native_coll *c,
                    ncclDataType_t ty, ncclRedOp_t op, void *flat) {
    int rc;
    pthread_mutex_lock(&e->issue);
    if (e->dead) {
        pthread_mutex_unlock(&e->issue);
        return CS_EABORT;
    }
    ncclResult_t q = ncclGroupStart();
    if (q == ncclSuccess) q = issue_coll(e, r->rank, c, ty, op, flat);
    ncclResult_t g = ncclGroupEnd();
    if (q == ncclSuccess) q = g;
    if (q != ncclSuccess && q != ncclInProgress) say(r->errmsg, sizeof r->errmsg, "collective", q, nr->coll);
    pthread_mutex_unlock(&e->issue);
    if (q != ncclSuccess && q != ncclInProgress) return CS_ETRANSPORT;
    /* Enqueued once the communicator is ready; the peers may still be on
     * their way, so the lock is not held while waiting. */
    ncclComm_t cm = nr->coll;
    if (q == ncclInProgress &&
        (rc = ready(e, &cm, 1, false, e->base.world, 0, r->errmsg, sizeof r->errmsg)) != CS_OK)
        return rc;
    cudaEvent_t ev;
    cudaError_t ce = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
    if (ce == cudaSuccess && (ce = cudaEventRecord(ev, nr->cstream)) != cudaSuccess) cudaEventDestroy(ev);
    if (ce != cudaSuccess) {
        say_cuda(r->errmsg, sizeof r->errmsg, "recording a collective's event", ce);
        return CS_ETRANSPORT;
    }
    rc = wait_event(e, r, ev);
    cudaEventDestroy(ev);
    return rc;
}

/* ---- set-up and tear-down */

static int nccl_rank_start(cs_engine *eng, cs_rank *r) {
    nccl_engine *e = (nccl_engine *)eng;
    if (cs_device_set(e->r[r->rank].dev) < 0) {
        snprintf(r->errmsg, sizeof r->errmsg, "%s", cs_device_errmsg());
        return CS_ETRANSPORT;
    }
    return CS_OK;
}

/* The unexpected messages a run left hold eager copies on their GPUs. */
static void drop_copies(nccl_engine *e) {
    cs_world *w = e->base.world;
    for (int i = 0; i < e->n; i++)
        for (cs_msg *m = w->matchers[i].unexpected; m; m = m->next) {
            cs_tensor_release(m->engine_data);
            m->engine_data = NULL;
        }
}

static void nccl_destroy(cs_engine *eng) {
    nccl_engine *e = (nccl_engine *)eng;
    if (e->started) {
        pthread_mutex_lock(&e->plock);
        e->stop = true;
        pthread_cond_signal(&e->pcond);
        pthread_mutex_unlock(&e->plock);
        pthread_join(e->progress, NULL);
    }
    int saved = -1;
    cudaGetDevice(&saved);
    /* A clean end finalizes (flushes, then frees); a run that ended early,
     * or an engine that never started, aborts what may still wait on a peer. */
    if (e->started && !e->dead && !cs_world_aborted(eng->world)) {
        ncclComm_t *all = calloc((size_t)e->n * 2, sizeof *all);
        int k = 0;
        pthread_mutex_lock(&e->issue);
        ncclGroupStart(); /* one thread finalizing several ranks' communicators */
        for (int i = 0; all && i < e->n; i++) {
            cs_device_set(e->r[i].dev);
            ncclCommFinalize(e->r[i].coll);
            ncclCommFinalize(e->r[i].p2p);
            all[k++] = e->r[i].coll;
            all[k++] = e->r[i].p2p;
        }
        ncclGroupEnd();
        char err[256];
        bool ok = all && ready(e, all, k, true, NULL, cs_now() + INIT_SECONDS, err, sizeof err) == CS_OK;
        for (int i = 0; ok && i < e->n; i++) {
            cs_device_set(e->r[i].dev);
            ncclCommDestroy(e->r[i].coll);
            ncclCommDestroy(e->r[i].p2p);
            e->r[i].coll = e->r[i].p2p = NULL;
        }
        pthread_mutex_unlock(&e->issue);
        free(all);
    }
    abort_all(e); /* whatever is left */
    for (pend *p = e->pending, *next; p; p = next) {
        next = p->next;
        cudaEventDestroy(p->ev);
        cs_request_release(p->q); /* the run is over: no complete event */
        cs_tensor_release(p->keep);
        free(p);
    }
    drop_copies(e);
    for (int i = 0; e->r && i < e->n; i++) {
        cs_device_set(e->r[i].dev);
        if (e->r[i].cstream) cudaStreamDestroy(e->r[i].cstream);
        if (e->r[i].pstream) cudaStreamDestroy(e->r[i].pstream);
        cs_device_free(e->r[i].dev, e->r[i].one);
    }
    if (saved >= 0) cudaSetDevice(saved);
    pthread_mutex_destroy(&e->issue);
    pthread_mutex_destroy(&e->plock);
    pthread_cond_destroy(&e->pcond);
    free(e->r);
    free(e);
}

static const cs_engine_ops nccl_ops = {
    .send = nccl_send,
    .transfer = nccl_transfer,
    .reject = nccl_reject,
    .destroy = nccl_destroy,
    .rank_start = nccl_rank_start,
    .coll = nccl_coll,
    .tensor_ok = nccl_tensor_ok,
};

/* One rank per GPU: NCCL refuses two ranks on one device. */
static int nccl_check(int n, char *err, size_t len) {
    int gpus = cs_device_count();
    if (n <= gpus) return 0;
    char why[300] = "";
    if (!gpus) snprintf(why, sizeof why, " (%s)", cs_device_errmsg());
    snprintf(err, len,
             "the nccl engine runs one rank per GPU (NCCL refuses two ranks on one device): "
             "%d rank%s asked for, %d GPU%s here%s; use --engine thread or --engine tcp",
             n, n == 1 ? "" : "s", gpus, gpus == 1 ? "" : "s", why);
    return -1;
}

/* Communicators for every rank, from this thread: one group, so NCCL sets
 * them up together (the threads' own devices are set as each rank starts). */
static int init_comms(nccl_engine *e, bool p2p, char *err, size_t len) {
    ncclUniqueId id;
    ncclResult_t q = ncclGetUniqueId(&id);
    if (q != ncclSuccess) {
        say(err, len, "ncclGetUniqueId", q, NULL);
        return -1;
    }
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    cfg.blocking = 0;
    cfg.commName = p2p ? "commsim-p2p" : "commsim-coll";
    ncclComm_t *comms = calloc((size_t)e->n, sizeof *comms);
    if (!comms) {
        snprintf(err, len, "out of memory for %d communicators", e->n);
        return -1;
    }
    q = ncclGroupStart();
    for (int i = 0; i < e->n && q == ncclSuccess; i++) {
        cudaError_t ce = cudaSetDevice(e->r[i].dev);
        if (ce != cudaSuccess) {
            say_cuda(err, len, "cudaSetDevice", ce);
            q = ncclUnhandledCudaError;
            break;
        }
        q = ncclCommInitRankConfig(&comms[i], e->n, id, i, &cfg);
    }
    ncclResult_t g = ncclGroupEnd();
    if (q == ncclSuccess) q = g;
    int rc = 0;
    if (q != ncclSuccess && q != ncclInProgress) {
        if (!err[0]) say(err, len, "ncclCommInitRankConfig", q, NULL);
        rc = -1;
    } else if (ready(e, comms, e->n, true, NULL, cs_now() + INIT_SECONDS, err, len) != CS_OK) {
        rc = -1;
    }
    for (int i = 0; i < e->n; i++) {
        if (p2p) e->r[i].p2p = comms[i];
        else e->r[i].coll = comms[i];
    }
    free(comms);
    return rc;
}

static int init_rank(nrank *nr, char *err, size_t len) {
    /* Blocking streams: they wait for what the rank's tensor operations
     * queued on the default stream, so NCCL reads what the script wrote. */
    cudaError_t ce = cudaSetDevice(nr->dev);
    if (ce == cudaSuccess) ce = cudaStreamCreate(&nr->cstream);
    if (ce == cudaSuccess) ce = cudaStreamCreate(&nr->pstream);
    if (ce != cudaSuccess) {
        say_cuda(err, len, "creating a stream", ce);
        return -1;
    }
    if (!(nr->one = cs_device_alloc(nr->dev, sizeof(float)))) {
        snprintf(err, len, "%s", cs_device_errmsg());
        return -1;
    }
    return 0;
}

static cs_engine *nccl_new(cs_world *w, void *arg) {
    (void)arg;
    int n = w->cfg.world;
    char err[512] = "";
    if (nccl_check(n, err, sizeof err) < 0) {
        fprintf(stderr, "commsim: %s\n", err);
        return NULL;
    }
    nccl_engine *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    e->base.ops = &nccl_ops;
    e->base.world = w;
    e->n = n;
    pthread_mutex_init(&e->issue, NULL);
    pthread_mutex_init(&e->plock, NULL);
    pthread_cond_init(&e->pcond, NULL);
    int saved = -1;
    cudaGetDevice(&saved);
    bool ok = (e->r = calloc((size_t)n, sizeof *e->r)) != NULL;
    if (!ok) snprintf(err, sizeof err, "out of memory for %d ranks", n);
    for (int i = 0; ok && i < n; i++) {
        e->r[i].dev = i;
        ok = init_rank(&e->r[i], err, sizeof err) == 0;
    }
    ok = ok && init_comms(e, false, err, sizeof err) == 0 && init_comms(e, true, err, sizeof err) == 0;
    if (ok && pthread_create(&e->progress, NULL, progress_main, e) != 0) {
        snprintf(err, sizeof err, "cannot start the progress thread: %s", strerror(errno));
        ok = false;
    }
    e->started = ok;
    if (saved >= 0) cudaSetDevice(saved);
    if (!ok) {
        fprintf(stderr, "commsim: the nccl engine cannot start: %s\n", err);
        nccl_destroy(&e->base);
        return NULL;
    }
    return &e->base;
}

const cs_engine_kind cs_engine_nccl = {
    .name = "nccl",
    .summary = "every rank a thread with a GPU of its own; NCCL moves device tensors",
    .caps = CS_ENGINE_DEVICE | CS_ENGINE_DEVICE_ONLY | CS_ENGINE_NATIVE_COLL | CS_ENGINE_TAGS |
            CS_ENGINE_ANY_SOURCE,
    .create = nccl_new,
    .threads_per_rank = 1,
    .wait_yields = 32,
    .check = nccl_check,
};
