/* engine_nccl.c -- every rank a thread of this process with a GPU of its own;
 * NCCL moves the payload (built only when configure found CUDA and NCCL).
 * What the ranks as processes share with it (the progress thread, the
 * events, the end) is here too; engine_nccl_proc.c has the rest.
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
 * group (engine_nccl_coll.c); other --algo choices run the visible
 * schedules of coll_algos.c over the point-to-point path above.
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

#include "engine_nccl_internal.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collectives.h"
#include "device.h"
#include "errmsg.h"

#define ASYNC_CHECK_S 0.01  /* how often the progress thread asks NCCL for errors */

/* ---- messages */

void nccl_say(char *buf, size_t len, const char *what, ncclResult_t rc, ncclComm_t comm) {
    const char *last = comm ? ncclGetLastError(comm) : NULL;
    snprintf(buf, len, "NCCL error: %s: %s%s%s", what, ncclGetErrorString(rc),
             last && *last ? ": " : "", last && *last ? last : "");
}

void nccl_say_cuda(char *buf, size_t len, const char *what, cudaError_t rc) {
    snprintf(buf, len, "CUDA error: %s: %s (%s)", what, cudaGetErrorString(rc), cudaGetErrorName(rc));
    cudaGetLastError(); /* not sticky: later calls start clean */
}

void nccl_nap(int *round) {
    if (*round < 64) {
        sched_yield();
    } else {
        long us = *round < 200 ? 20 : 500;
        struct timespec ts = {0, us * 1000};
        nanosleep(&ts, NULL);
    }
    (*round)++;
}

/* ---- readiness of non-blocking communicators */

int nccl_ready(nccl_engine *e, ncclComm_t *comms, int k, bool locked, cs_world *w,
               double deadline, char *err, size_t len) {
    for (int round = 0;; nccl_nap(&round)) {
        if (!locked) pthread_mutex_lock(&e->issue);
        int busy = 0, rc = CS_OK;
        if (e->dead) rc = CS_EABORT;
        for (int i = 0; i < k && rc == CS_OK; i++) {
            ncclResult_t st = ncclSuccess, q = ncclCommGetAsyncError(comms[i], &st);
            if (q != ncclSuccess) st = q;
            if (st == ncclInProgress) busy++;
            else if (st != ncclSuccess) {
                nccl_say(err, len, "communicator", st, comms[i]);
                rc = CS_ETRANSPORT;
            }
        }
        if (!locked) pthread_mutex_unlock(&e->issue);
        if (rc != CS_OK || !busy) return rc;
        if (w && cs_world_aborted(w)) return CS_EABORT;
        if (!w && cs_now() > deadline) {
            snprintf(err, len, "NCCL did not set up its communicators within %g s", NCCL_INIT_SECONDS);
            return CS_ETRANSPORT;
        }
    }
}

/* ---- the progress thread: completions, errors, the end of the run */

void nccl_abort_all(nccl_engine *e) {
    pthread_mutex_lock(&e->issue);
    if (!e->dead) {
        e->dead = true;
        nccl_groups_abort(e);
        for (int i = e->lo; i < e->hi; i++) {
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
    for (int i = e->lo; i < e->hi && !e->dead && !why[0]; i++) {
        ncclComm_t c[2] = {e->r[i].coll, e->r[i].p2p};
        for (int k = 0; k < 2 && !why[0]; k++) {
            ncclResult_t st = ncclSuccess;
            if (c[k] && ncclCommGetAsyncError(c[k], &st) == ncclSuccess && st != ncclSuccess &&
                st != ncclInProgress)
                nccl_say(why, sizeof why, "asynchronous error", st, c[k]);
        }
    }
    /* the groups' too (linked with the issue lock held: engine_nccl_group.c) */
    for (ngroup *g = e->groups; g && !e->dead && !why[0]; g = g->next)
        for (int i = 0; i < g->n && !why[0]; i++) {
            ncclResult_t st = ncclSuccess;
            if (g->comm[i] && ncclCommGetAsyncError(g->comm[i], &st) == ncclSuccess &&
                st != ncclSuccess && st != ncclInProgress)
                nccl_say(why, sizeof why, "asynchronous error (a group)", st, g->comm[i]);
        }
    pthread_mutex_unlock(&e->issue);
    if (!why[0]) return;
    for (int i = e->lo; i < e->hi; i++) cs_engine_break(&e->base, &e->base.world->ranks[i], CS_ETRANSPORT, why);
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
                nccl_say_cuda(msg, sizeof msg, "waiting for a transfer", q);
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
        if (cs_world_aborted(w)) nccl_abort_all(e);
        double now = cs_now();
        if (now >= next_check) {
            check_async(e);
            next_check = now + ASYNC_CHECK_S;
        }
        if (more) nccl_nap(&round);
        pthread_mutex_lock(&e->plock);
    }
    pthread_mutex_unlock(&e->plock);
    return NULL;
}

/* Record an event on stream s (device dev) for request q: q completes with it,
 * and keep (taken over, may be NULL) is freed then. The issue lock is held. */
int nccl_watch(nccl_engine *e, int dev, cudaStream_t s, cs_request *q, cs_tensor *keep,
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
        nccl_say_cuda(err, len, "recording a transfer's event", rc);
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
            nccl_say(err, sizeof err, "send/recv", q, s->p2p);
            rc = CS_ETRANSPORT;
        } else {
            rc = nccl_ready(e, both, 2, true, eng->world, 0, err, sizeof err);
        }
    }
    /* Both requests complete when their stream has done the work (at once
     * for an empty message: events on idle streams). */
    /* An eager send's copy lives until ncclSend has read it. */
    if (rc == CS_OK && (sq || msg->engine_data) &&
        (rc = nccl_watch(e, s->dev, s->pstream, sq, msg->engine_data, err, sizeof err)) == CS_OK) {
        sq = NULL;
        msg->engine_data = NULL;
    }
    if (rc == CS_OK && (rc = nccl_watch(e, d->dev, d->pstream, rq, NULL, err, sizeof err)) == CS_OK)
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
    for (int i = e->lo; i < e->hi; i++)
        for (cs_msg *m = w->matchers[i].unexpected; m; m = m->next) {
            cs_tensor_release(m->engine_data);
            m->engine_data = NULL;
        }
}

void nccl_destroy(cs_engine *eng) {
    nccl_engine *e = (nccl_engine *)eng;
    if (e->started) {
        pthread_mutex_lock(&e->plock);
        e->stop = true;
        pthread_cond_signal(&e->pcond);
        pthread_mutex_unlock(&e->plock);
        pthread_join(e->progress, NULL);
    }
    if (e->proc) nccl_proc_stop(e); /* no ticket is issued from now on */
    int saved = -1;
    cudaGetDevice(&saved);
    /* A clean end finalizes (flushes, then frees); a run that ended early,
     * or an engine that never started, aborts what may still wait on a peer. */
    if (e->started && !e->dead && !cs_world_aborted(eng->world)) {
        ncclComm_t *all = calloc((size_t)e->n * 2, sizeof *all);
        int k = 0;
        pthread_mutex_lock(&e->issue);
        nccl_groups_end(e, true);
        ncclGroupStart(); /* one thread finalizing several ranks' communicators */
        for (int i = e->lo; all && i < e->hi; i++) {
            cs_device_set(e->r[i].dev);
            ncclCommFinalize(e->r[i].coll);
            ncclCommFinalize(e->r[i].p2p);
            all[k++] = e->r[i].coll;
            all[k++] = e->r[i].p2p;
        }
        ncclGroupEnd();
        char err[256];
        bool ok = all && nccl_ready(e, all, k, true, NULL, cs_now() + NCCL_INIT_SECONDS, err, sizeof err) == CS_OK;
        for (int i = e->lo; ok && i < e->hi; i++) {
            cs_device_set(e->r[i].dev);
            ncclCommDestroy(e->r[i].coll);
            ncclCommDestroy(e->r[i].p2p);
            e->r[i].coll = e->r[i].p2p = NULL;
        }
        pthread_mutex_unlock(&e->issue);
        free(all);
    }
    nccl_abort_all(e); /* whatever is left */
    for (pend *p = e->pending, *next; p; p = next) {
        next = p->next;
        cudaEventDestroy(p->ev);
        cs_request_release(p->q); /* the run is over: no complete event */
        cs_tensor_release(p->keep);
        free(p);
    }
    drop_copies(e);
    pthread_mutex_lock(&e->issue);
    nccl_groups_end(e, false); /* what a clean end left: none */
    pthread_mutex_unlock(&e->issue);
    for (int i = e->lo; e->r && i < e->hi; i++) {
        cs_device_set(e->r[i].dev);
        if (e->r[i].cstream) cudaStreamDestroy(e->r[i].cstream);
        if (e->r[i].pstream) cudaStreamDestroy(e->r[i].pstream);
        cs_device_free(e->r[i].dev, e->r[i].one);
    }
    if (saved >= 0) cudaSetDevice(saved);
    if (e->proc) nccl_proc_free(e);
    pthread_mutex_destroy(&e->issue);
    pthread_mutex_destroy(&e->glock);
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
int nccl_check(int n, char *err, size_t len) {
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
        nccl_say(err, len, "ncclGetUniqueId", q, NULL);
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
            nccl_say_cuda(err, len, "cudaSetDevice", ce);
            q = ncclUnhandledCudaError;
            break;
        }
        q = ncclCommInitRankConfig(&comms[i], e->n, id, i, &cfg);
    }
    ncclResult_t g = ncclGroupEnd();
    if (q == ncclSuccess) q = g;
    int rc = 0;
    if (q != ncclSuccess && q != ncclInProgress) {
        if (!err[0]) nccl_say(err, len, "ncclCommInitRankConfig", q, NULL);
        rc = -1;
    } else if (nccl_ready(e, comms, e->n, true, NULL, cs_now() + NCCL_INIT_SECONDS, err, len) != CS_OK) {
        rc = -1;
    }
    for (int i = 0; i < e->n; i++) {
        if (p2p) e->r[i].p2p = comms[i];
        else e->r[i].coll = comms[i];
    }
    free(comms);
    return rc;
}

int nccl_init_rank(nrank *nr, char *err, size_t len) {
    /* Blocking streams: they wait for what the rank's tensor operations
     * queued on the default stream, so NCCL reads what the script wrote. */
    cudaError_t ce = cudaSetDevice(nr->dev);
    if (ce == cudaSuccess) ce = cudaStreamCreate(&nr->cstream);
    if (ce == cudaSuccess) ce = cudaStreamCreate(&nr->pstream);
    if (ce != cudaSuccess) {
        nccl_say_cuda(err, len, "creating a stream", ce);
        return -1;
    }
    if (!(nr->one = cs_device_alloc(nr->dev, sizeof(float)))) {
        snprintf(err, len, "%s", cs_device_errmsg());
        return -1;
    }
    return 0;
}

nccl_engine *nccl_alloc(cs_world *w, int lo, int hi) {
    nccl_engine *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    e->base.ops = NULL;
    e->base.world = w;
    e->n = w->cfg.world;
    e->lo = lo;
    e->hi = hi;
    pthread_mutex_init(&e->issue, NULL);
    pthread_mutex_init(&e->glock, NULL);
    pthread_mutex_init(&e->plock, NULL);
    pthread_cond_init(&e->pcond, NULL);
    if (!(e->r = calloc((size_t)e->n, sizeof *e->r))) {
        pthread_mutex_destroy(&e->issue);
        pthread_mutex_destroy(&e->glock);
        pthread_mutex_destroy(&e->plock);
        pthread_cond_destroy(&e->pcond);
        free(e);
        return NULL;
    }
    return e;
}

int nccl_start_progress(nccl_engine *e, char *err, size_t len) {
    if (pthread_create(&e->progress, NULL, progress_main, e) != 0) {
        snprintf(err, len, "cannot start the progress thread: %s", strerror(errno));
        return -1;
    }
    e->started = true;
    return 0;
}

static cs_engine *nccl_new(cs_world *w, void *arg) {
    (void)arg;
    int n = w->cfg.world;
    char err[512] = "";
    if (nccl_check(n, err, sizeof err) < 0) {
        cs_errf(stderr, "%s\n", err);
        return NULL;
    }
    nccl_engine *e = nccl_alloc(w, 0, n);
    if (!e) {
        cs_errf(stderr, "out of memory for the nccl engine of %d ranks\n", n);
        return NULL;
    }
    e->base.ops = &nccl_ops;
    int saved = -1;
    cudaGetDevice(&saved);
    bool ok = true;
    for (int i = 0; ok && i < n; i++) {
        e->r[i].dev = i;
        ok = nccl_init_rank(&e->r[i], err, sizeof err) == 0;
    }
    ok = ok && init_comms(e, false, err, sizeof err) == 0 && init_comms(e, true, err, sizeof err) == 0;
    ok = ok && nccl_start_progress(e, err, sizeof err) == 0;
    if (saved >= 0) cudaSetDevice(saved);
    if (!ok) {
        cs_errf(stderr, "the nccl engine cannot start: %s\n", err);
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
    .as_processes = "nccl-mp",
    .threads_per_rank = 1,
    .wait_yields = 32,
    .check = nccl_check,
};
