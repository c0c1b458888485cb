/* engine_nccl_group.c -- a communicator per group (dist.new_group) for the
 * nccl engine's native collectives, as torch's nccl backend makes one per
 * process group.
 *
 * A group's communicators are made at its first native collective, when
 * every member has arrived (coll_algos.c's barrier of one-byte messages
 * runs first), so no member waits in ncclCommInitRank for one that never
 * comes: a member that never calls is the deadlock verdict of that barrier.
 * The id comes from ncclGetUniqueId: as threads, the first member to get
 * here makes every member's communicator in one ncclGroupStart/End; as
 * processes, the group's lowest member draws it and puts it on the hub under
 * the group's key (its context and lowest member), and the others get it
 * there. ncclCommSplit is not used: it is a call on the world communicator
 * that every rank, member or not, would have to make at the same point.
 *
 * Owns: the table of groups and their communicators (e->groups). Lookups
 * hold glock; a new entry is linked with the issue lock held too, so that
 * the end of the run (nccl_abort_all, under the issue lock only) can walk
 * the table while a group is being made.
 */
#include "engine_nccl_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"

#define ID_BLOB (NCCL_UNIQUE_ID_BYTES + 12) /* the id, the group's size, a hash of its ranks */

static uint64_t members_hash(const int *ranks, int n) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (int i = 0; i < n; i++)
        for (int b = 0; b < 4; b++) {
            h ^= (uint8_t)((unsigned)ranks[i] >> (8 * b));
            h *= 1099511628211ull;
        }
    return h;
}

static int lowest(const int *ranks, int n) {
    int low = ranks[0];
    for (int i = 1; i < n; i++)
        if (ranks[i] < low) low = ranks[i];
    return low;
}

static bool same(const ngroup *g, const cs_native_coll *c) {
    return g->n == c->n && memcmp(g->ranks, c->ranks, (size_t)c->n * sizeof *c->ranks) == 0;
}

static void group_free(ngroup *g) {
    if (!g) return;
    free(g->ranks);
    free(g->comm);
    free(g);
}

static ncclConfig_t group_config(void) {
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    cfg.blocking = 0;
    cfg.commName = "commsim-group";
    return cfg;
}

/* As threads: every member's communicator, from this thread, in one group. */
static int make_here(nccl_engine *e, ngroup *g, char *err, size_t len) {
    ncclUniqueId id;
    ncclResult_t q = ncclGetUniqueId(&id);
    if (q != ncclSuccess) {
        nccl_say(err, len, "ncclGetUniqueId", q, NULL);
        return CS_ETRANSPORT;
    }
    ncclConfig_t cfg = group_config();
    int saved = -1;
    cudaGetDevice(&saved);
    pthread_mutex_lock(&e->issue);
    if (e->dead) {
        pthread_mutex_unlock(&e->issue);
        return CS_EABORT;
    }
    q = ncclGroupStart();
    for (int i = 0; i < g->n && q == ncclSuccess; i++) {
        cudaError_t ce = cudaSetDevice(e->r[g->ranks[i]].dev);
        if (ce != cudaSuccess) {
            nccl_say_cuda(err, len, "cudaSetDevice", ce);
            q = ncclUnhandledCudaError;
            break;
        }
        q = ncclCommInitRankConfig(&g->comm[i], g->n, id, i, &cfg);
    }
    ncclResult_t ge = ncclGroupEnd();
    if (q == ncclSuccess) q = ge;
    pthread_mutex_unlock(&e->issue);
    /* Wait without the lock: other ranks' transfers and collectives go on
     * meanwhile, and nothing NCCL's set-up does on a GPU waits behind them. */
    int rc = CS_OK;
    if (q != ncclSuccess && q != ncclInProgress) {
        if (!err[0]) nccl_say(err, len, "ncclCommInitRankConfig (a group)", q, NULL);
        rc = CS_ETRANSPORT;
    } else {
        rc = nccl_ready(e, g->comm, g->n, false, e->base.world, 0, err, len);
    }
    pthread_mutex_lock(&e->issue);
    if (rc == CS_OK && e->dead) rc = CS_EABORT;
    if (rc == CS_OK) {
        g->next = e->groups;
        e->groups = g;
    } else {
        for (int i = 0; i < g->n; i++)
            if (g->comm[i]) {
                cs_device_set(e->r[g->ranks[i]].dev);
                ncclCommAbort(g->comm[i]);
                g->comm[i] = NULL;
            }
    }
    pthread_mutex_unlock(&e->issue);
    if (saved >= 0) cudaSetDevice(saved);
    return rc;
}

/* As processes: this rank's communicator, the id through the hub. */
static int make_proc(nccl_engine *e, ngroup *g, int me, int world_rank, char *err, size_t len) {
    uint8_t blob[ID_BLOB];
    uint64_t hash = members_hash(g->ranks, g->n);
    if ((uint64_t)g->ctx >= (UINT32_MAX - 1) / 4096) {
        snprintf(err, len, "too many groups for the hub's keys (context %d)", g->ctx);
        return CS_EARG;
    }
    uint32_t key = 1u + (uint32_t)g->ctx * 4096u + (uint32_t)lowest(g->ranks, g->n);
    if (world_rank == lowest(g->ranks, g->n)) {
        ncclUniqueId id;
        ncclResult_t q = ncclGetUniqueId(&id);
        if (q != ncclSuccess) {
            nccl_say(err, len, "ncclGetUniqueId", q, NULL);
            return CS_ETRANSPORT;
        }
        memcpy(blob, &id, NCCL_UNIQUE_ID_BYTES);
        memcpy(blob + NCCL_UNIQUE_ID_BYTES, &g->n, 4);
        memcpy(blob + NCCL_UNIQUE_ID_BYTES + 4, &hash, 8);
        if (nccl_proc_put(e, key, blob, sizeof blob, err, len) < 0) return CS_ETRANSPORT;
    } else {
        long got = nccl_proc_get(e, key, blob, sizeof blob, err, len);
        if (got < 0) return cs_world_aborted(e->base.world) ? CS_EABORT : CS_ETRANSPORT;
        int n;
        uint64_t h;
        memcpy(&n, blob + NCCL_UNIQUE_ID_BYTES, 4);
        memcpy(&h, blob + NCCL_UNIQUE_ID_BYTES + 4, 8);
        if (got != (long)sizeof blob || n != g->n || h != hash) {
            snprintf(err, len, "the group's members disagree on who is in it (its lowest rank, %d, "
                               "made a group of %d ranks)", lowest(g->ranks, g->n), n);
            return CS_EARG;
        }
    }
    ncclUniqueId id;
    memcpy(&id, blob, NCCL_UNIQUE_ID_BYTES);
    ncclConfig_t cfg = group_config();
    pthread_mutex_lock(&e->issue);
    if (e->dead) {
        pthread_mutex_unlock(&e->issue);
        return CS_EABORT;
    }
    cudaSetDevice(e->r[world_rank].dev);
    ncclResult_t q = ncclCommInitRankConfig(&g->comm[me], g->n, id, me, &cfg);
    pthread_mutex_unlock(&e->issue);
    if (q != ncclSuccess && q != ncclInProgress) {
        nccl_say(err, len, "ncclCommInitRankConfig (a group)", q, NULL);
        if (g->comm[me]) ncclCommAbort(g->comm[me]);
        g->comm[me] = NULL;
        return CS_ETRANSPORT;
    }
    /* the other members are on their way: wait without the lock */
    int rc = nccl_ready(e, &g->comm[me], 1, false, e->base.world, 0, err, len);
    pthread_mutex_lock(&e->issue);
    if (rc == CS_OK && !e->dead) {
        g->next = e->groups;
        e->groups = g;
    } else {
        if (rc == CS_OK) rc = CS_EABORT;
        ncclCommAbort(g->comm[me]);
        g->comm[me] = NULL;
    }
    pthread_mutex_unlock(&e->issue);
    return rc;
}

int nccl_group_comm(nccl_engine *e, cs_rank *r, const cs_native_coll *c, ncclComm_t *out) {
    pthread_mutex_lock(&e->glock);
    ngroup *g = e->groups;
    while (g && !(g->ctx == c->ctx && lowest(g->ranks, g->n) == lowest(c->ranks, c->n))) g = g->next;
    int rc = CS_OK;
    if (g && !same(g, c)) {
        snprintf(r->errmsg, sizeof r->errmsg, "two groups of context %d with rank %d lowest differ "
                 "in their members", c->ctx, lowest(c->ranks, c->n));
        rc = CS_EARG;
    } else if (!g) {
        g = calloc(1, sizeof *g);
        if (g && (!(g->ranks = malloc((size_t)c->n * sizeof *g->ranks)) ||
                  !(g->comm = calloc((size_t)c->n, sizeof *g->comm)))) {
            group_free(g);
            g = NULL;
        }
        if (!g) {
            snprintf(r->errmsg, sizeof r->errmsg, "out of memory for a group of %d ranks", c->n);
            rc = CS_ENOMEM;
        } else {
            g->ctx = c->ctx;
            g->n = c->n;
            memcpy(g->ranks, c->ranks, (size_t)c->n * sizeof *g->ranks);
            r->errmsg[0] = 0;
            rc = e->proc ? make_proc(e, g, c->me, r->rank, r->errmsg, sizeof r->errmsg)
                         : make_here(e, g, r->errmsg, sizeof r->errmsg);
            if (rc != CS_OK) {
                group_free(g);
                g = NULL;
            }
        }
    }
    if (g) *out = g->comm[c->me];
    pthread_mutex_unlock(&e->glock);
    return rc;
}

void nccl_groups_abort(nccl_engine *e) {
    for (ngroup *g = e->groups; g; g = g->next)
        for (int i = 0; i < g->n; i++)
            if (g->comm[i]) {
                cs_device_set(e->r[g->ranks[i]].dev);
                ncclCommAbort(g->comm[i]);
                g->comm[i] = NULL;
            }
}

void nccl_groups_end(nccl_engine *e, bool clean) {
    if (clean && e->groups) {
        int k = 0, cap = 0;
        for (ngroup *g = e->groups; g; g = g->next) cap += g->n;
        ncclComm_t *all = calloc((size_t)cap, sizeof *all);
        ncclGroupStart();
        for (ngroup *g = e->groups; all && g; g = g->next)
            for (int i = 0; i < g->n; i++)
                if (g->comm[i]) {
                    cs_device_set(e->r[g->ranks[i]].dev);
                    ncclCommFinalize(g->comm[i]);
                    all[k++] = g->comm[i];
                }
        ncclGroupEnd();
        char err[256];
        bool ok = all && nccl_ready(e, all, k, true, NULL, cs_now() + NCCL_INIT_SECONDS, err,
                                    sizeof err) == CS_OK;
        for (ngroup *g = e->groups; ok && g; g = g->next)
            for (int i = 0; i < g->n; i++)
                if (g->comm[i]) {
                    cs_device_set(e->r[g->ranks[i]].dev);
                    ncclCommDestroy(g->comm[i]);
                    g->comm[i] = NULL;
                }
        free(all);
    }
    nccl_groups_abort(e); /* whatever is left */
    for (ngroup *g = e->groups, *next; g; g = next) {
        next = g->next;
        group_free(g);
    }
    e->groups = NULL;
}
