/* engine_nccl_coll.c -- the nccl engine's collectives: NCCL's own
 * (ncclAllReduce, ncclBroadcast, ncclReduce, ncclAllGather,
 * ncclReduceScatter), all_to_all, gather and scatter as grouped
 * ncclSend/ncclRecv, barrier as a one-element all_reduce; and which tensors
 * a rank may hand to NCCL at all. collectives.c has checked the arguments
 * and the members have all arrived (coll_algos.c) before a call gets here;
 * the rank's own thread issues it on its collective communicator (the
 * world's, or its group's: engine_nccl_group.c) and waits for the CUDA event
 * behind it.
 */
#include "engine_nccl_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectives.h"
#include "device.h"

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

bool nccl_tensor_ok(cs_engine *eng, cs_rank *r, const cs_tensor *t, char *why, size_t len) {
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

/* The communicator a collective runs on, and the rank's place in it. */
typedef struct where {
    ncclComm_t cm;
    int n, me;              /* its ranks; this rank's: roots and blocks count so */
} where;

/* Issue the NCCL calls of c inside the group the caller opened. */
static ncclResult_t issue_coll(const nrank *nr, const where *at, const cs_native_coll *c,
                               ncclDataType_t ty, ncclRedOp_t op, void *flat) {
    ncclComm_t cm = at->cm;
    cudaStream_t s = nr->cstream;
    int n = at->n, me = at->me;
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
    for (int round = 0;; nccl_nap(&round)) {
        cudaError_t q = cudaEventQuery(ev);
        if (q == cudaSuccess) return CS_OK;
        if (q != cudaErrorNotReady) {
            nccl_say_cuda(r->errmsg, sizeof r->errmsg, "waiting for a collective", q);
            return CS_ETRANSPORT;
        }
        if (cs_world_aborted(w)) return CS_EABORT;
        if (atomic_load(&e->base.broken)) {
            snprintf(r->errmsg, sizeof r->errmsg, "%s", e->base.broken_why);
            return e->base.broken_err;
        }
    }
}

static int run_coll(nccl_engine *e, cs_rank *r, nrank *nr, const where *at,
                    const cs_native_coll *c, ncclDataType_t ty, ncclRedOp_t op, void *flat);

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

int nccl_coll(cs_engine *eng, cs_rank *r, const cs_native_coll *c) {
    nccl_engine *e = (nccl_engine *)eng;
    nrank *nr = &e->r[r->rank];
    where at = {.cm = nr->coll, .n = e->n, .me = r->rank};
    if (c->ranks) at.n = c->n, at.me = c->me;
    int rc = check_all(r, nr, c, at.n);
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
    /* a group's communicator: made at its first collective (every member is here) */
    if (c->ranks && (rc = nccl_group_comm(e, r, c, &at.cm)) != CS_OK) return rc;

    /* Blocks that are one tensor already (the _tensor forms) go to NCCL as
     * they are. reduce_scatter of a list: its inputs are first laid end to
     * end on the GPU, as torch flattens them, for one ncclReduceScatter
     * (NCCL then writes no buffer but the output); copied on the
     * collective's stream, so NCCL reads them after the copies. */
    void *flat = NULL;
    bool owned = false;
    if (c->kind == CS_NATIVE_ALL_GATHER || c->kind == CS_NATIVE_REDUCE_SCATTER)
        flat = end_to_end(c->blocks, at.n);
    if (!flat && c->kind == CS_NATIVE_REDUCE_SCATTER) {
        owned = true;
        size_t one = cs_tensor_nbytes(c->out);
        if (!(flat = cs_device_alloc(nr->dev, one * (size_t)at.n))) {
            snprintf(r->errmsg, sizeof r->errmsg, "%s", cs_device_errmsg());
            return CS_ENOMEM;
        }
        for (int j = 0; j < at.n; j++) {
            cudaError_t ce = cudaMemcpyAsync((char *)flat + one * (size_t)j, cs_tensor_data(c->blocks[j]),
                                             one, cudaMemcpyDeviceToDevice, nr->cstream);
            if (ce != cudaSuccess) {
                nccl_say_cuda(r->errmsg, sizeof r->errmsg, "copying reduce_scatter's inputs", ce);
                cs_device_free(nr->dev, flat);
                return CS_ETRANSPORT;
            }
        }
    }
    rc = run_coll(e, r, nr, &at, c, ty, op, flat);
    if (owned) cs_device_free(nr->dev, flat);
    return rc;
}

/* Issue c on the rank's collective communicator and wait for it. */
static int run_coll(nccl_engine *e, cs_rank *r, nrank *nr, const where *at,
                    const cs_native_coll *c, ncclDataType_t ty, ncclRedOp_t op, void *flat) {
    int rc;
    pthread_mutex_lock(&e->issue);
    if (e->dead) {
        pthread_mutex_unlock(&e->issue);
        return CS_EABORT;
    }
    ncclResult_t q = ncclGroupStart();
    if (q == ncclSuccess) q = issue_coll(nr, at, c, ty, op, flat);
    ncclResult_t g = ncclGroupEnd();
    if (q == ncclSuccess) q = g;
    if (q != ncclSuccess && q != ncclInProgress) nccl_say(r->errmsg, sizeof r->errmsg, "collective", q, at->cm);
    pthread_mutex_unlock(&e->issue);
    if (q != ncclSuccess && q != ncclInProgress) return CS_ETRANSPORT;
    /* Enqueued once the communicator is ready; the peers may still be on
     * their way, so the lock is not held while waiting. */
    ncclComm_t cm = at->cm;
    if (q == ncclInProgress &&
        (rc = nccl_ready(e, &cm, 1, false, e->base.world, 0, r->errmsg, sizeof r->errmsg)) != CS_OK)
        return rc;
    cudaEvent_t ev;
    cudaError_t ce = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
    if (ce == cudaSuccess && (ce = cudaEventRecord(ev, nr->cstream)) != cudaSuccess) cudaEventDestroy(ev);
    if (ce != cudaSuccess) {
        nccl_say_cuda(r->errmsg, sizeof r->errmsg, "recording a collective's event", ce);
        return CS_ETRANSPORT;
    }
    rc = wait_event(e, r, ev);
    cudaEventDestroy(ev);
    return rc;
}
