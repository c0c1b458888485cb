/* engine_nccl_proc.c -- the nccl engine with every rank a process (the
 * engine table's nccl-procs): launched here (-n), or started by hand on
 * several machines (--master, --rank, torchrun's variables), joined through
 * the controller as the tcp engine's ranks are.
 *
 * NCCL moves the payload; everything else goes through the hub (hub.c),
 * which rank 0's process runs:
 *
 *   - set-up: rank 0 joins the job with the hub's address, which the
 *     WELCOME hands every rank; each rank connects to the hub, rank 0 puts
 *     the world's two unique ids there (the collectives' communicator and
 *     point-to-point's), and every rank gets them and joins the
 *     communicators. A group's id travels the same way (engine_nccl_group.c);
 *   - a send puts its envelope on the hub (ENV), which relays it to the
 *     destination's matcher (match.c, as on every engine); an eager send
 *     first copies its tensor aside on its GPU and completes;
 *   - when a receive matches, the receiver says MATCH; the hub numbers the
 *     transfer and sends the same TICKET to both ends, and each rank issues
 *     ncclSend or ncclRecv in the order its tickets arrive (on its reader
 *     thread, one at a time). So every rank issues its transfers in one
 *     global order, the hub's: the earliest unfinished transfer heads the
 *     point-to-point streams of both its ranks and can always run, and by
 *     induction every issued transfer finishes (docs/engines.md has the
 *     argument in full). The thread mode gets the same order from its lock;
 *   - a mismatch's reason goes back to the sender (REJECT).
 *
 * Owns: the hub (rank 0's process), the connection to it, and the tables of
 * sends waiting for their ticket and matched receives waiting for theirs.
 */
#include "engine_nccl_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "errmsg.h"
#include "hub.h"
#include "hub_join.h"
#include "rank_link.h"
#include "wire.h"

#define WORLD_KEY 0u /* the hub's key of the world's ids; groups use 1 and up */

typedef struct sent { /* a send of this rank, until its ticket */
    struct sent *next;
    uint64_t id;          /* its request id: sreq on the wire */
    cs_request *sq;       /* the engine's reference (rendezvous), or NULL (eager: done) */
    cs_tensor *copy;      /* eager: what travels; else NULL */
    void *data;           /* what ncclSend reads */
} sent;

typedef struct recvd { /* a matched receive, until its ticket */
    struct recvd *next;
    uint64_t rid;
    cs_request *rq;       /* the matcher's reference */
} recvd;

typedef struct nccl_proc {
    int rank, dev;
    cs_rank_link *link;
    cs_hub *hub;          /* rank 0's process: the hub itself */
    cs_hub_client *hc;
    ncclUniqueId ids[2];  /* the world's: collectives, point to point */
    pthread_mutex_t lock; /* sends, recvs, next_rid */
    sent *sends;
    recvd *recvs;
    uint64_t next_rid;
} nccl_proc;

/* ---- the tables */

static sent *take_sent(nccl_proc *p, uint64_t id) {
    pthread_mutex_lock(&p->lock);
    sent **pp = &p->sends;
    while (*pp && (*pp)->id != id) pp = &(*pp)->next;
    sent *s = *pp;
    if (s) *pp = s->next;
    pthread_mutex_unlock(&p->lock);
    return s;
}

static recvd *take_recvd(nccl_proc *p, uint64_t rid) {
    pthread_mutex_lock(&p->lock);
    recvd **pp = &p->recvs;
    while (*pp && (*pp)->rid != rid) pp = &(*pp)->next;
    recvd *r = *pp;
    if (r) *pp = r->next;
    pthread_mutex_unlock(&p->lock);
    return r;
}

static void sent_drop(sent *s, int err, const char *why) {
    if (!s) return;
    if (s->sq) {
        if (err == CS_EABORT) cs_request_release(s->sq);
        else cs_request_finish(s->sq, err, why);
    }
    cs_tensor_release(s->copy);
    free(s);
}

static void recvd_drop(recvd *r, int err, const char *why) {
    if (!r) return;
    if (err == CS_EABORT) cs_request_release(r->rq);
    else cs_request_finish(r->rq, err, why);
    free(r);
}

/* ---- point to point: the rank's side */

static int proc_send(cs_engine *eng, cs_request *sq, bool eager) {
    nccl_engine *e = (nccl_engine *)eng;
    nccl_proc *p = e->proc;
    cs_rank *r = sq->owner;
    sent *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(r->errmsg, sizeof r->errmsg, "out of memory sending a message");
        return CS_ENOMEM;
    }
    s->id = sq->id;
    if (eager) {
        /* the bytes travel from a copy on this GPU, charged to this rank's cap */
        if (!(s->copy = cs_tensor_clone(cs_rank_budget(r), sq->buf))) {
            free(s);
            sq->unbuffered = true; /* api.c fails the send at its line */
            cs_request_release(sq);
            return CS_OK;
        }
        s->data = cs_tensor_data(s->copy);
    } else {
        s->sq = sq;
        s->data = cs_tensor_data(sq->buf);
    }
    cs_msg m = {0};
    cs_msg_envelope(&m, sq);
    cs_envelope env = {.src = m.src, .tag = m.tag, .ctx = m.ctx, .bytes = m.bytes,
                       .dtype = (uint8_t)m.dtype, .ndim = (uint8_t)m.ndim, .line = m.line,
                       .sreq_id = m.sreq_id};
    memcpy(env.shape, m.shape, sizeof env.shape);
    uint8_t meta[CS_WIRE_ENVELOPE];
    cs_cur cur = {.p = meta, .len = sizeof meta};
    cs_envelope_put(&cur, &env);
    /* in the table before the envelope leaves: its ticket may come back at once */
    pthread_mutex_lock(&p->lock);
    s->next = p->sends;
    p->sends = s;
    pthread_mutex_unlock(&p->lock);
    cs_hub_msg hm = {.kind = CS_HUB_ENV, .peer = (uint32_t)sq->peer, .data = meta, .len = sizeof meta};
    if (cs_hub_send(p->hc, &hm) < 0) {
        s = take_sent(p, sq->id);
        if (s) {
            s->sq = NULL; /* the caller fails sq */
            sent_drop(s, CS_EABORT, NULL);
        }
        snprintf(r->errmsg, sizeof r->errmsg, "lost the hub (rank 0's process) sending to rank %d",
                 sq->peer);
        return CS_ETRANSPORT;
    }
    if (eager) cs_request_finish(sq, CS_OK, NULL);
    return CS_OK;
}

/* The receiver's matcher paired msg with rq (its lock held): ask the hub for
 * the transfer's ticket; the payload moves when it comes. */
static void proc_transfer(cs_engine *eng, cs_msg *msg, cs_request *rq) {
    nccl_proc *p = ((nccl_engine *)eng)->proc;
    recvd *rv = calloc(1, sizeof *rv);
    if (!rv) {
        cs_request_finish(rq, CS_ENOMEM, "out of memory receiving a message");
        cs_msg_free(msg);
        return;
    }
    rv->rq = rq;
    pthread_mutex_lock(&p->lock);
    rv->rid = ++p->next_rid;
    rv->next = p->recvs;
    p->recvs = rv;
    pthread_mutex_unlock(&p->lock);
    cs_hub_msg m = {.kind = CS_HUB_MATCH, .peer = (uint32_t)msg->src, .sreq = msg->sreq_id,
                    .rid = rv->rid, .bytes = msg->bytes};
    if (cs_hub_send(p->hc, &m) < 0)
        recvd_drop(take_recvd(p, m.rid), CS_ETRANSPORT, "lost the hub (rank 0's process)");
    cs_msg_free(msg);
}

static void proc_reject(cs_engine *eng, cs_msg *msg, const char *why) {
    nccl_proc *p = ((nccl_engine *)eng)->proc;
    size_t len = strlen(why);
    if (len > CS_HUB_MAX_DATA) len = CS_HUB_MAX_DATA;
    cs_hub_msg m = {.kind = CS_HUB_REJECT, .peer = (uint32_t)msg->src, .sreq = msg->sreq_id,
                    .data = (const uint8_t *)why, .len = (uint32_t)len};
    cs_hub_send(p->hc, &m); /* a hub that is gone fails the sender anyway */
    cs_msg_free(msg);
}

/* ---- what the hub sends (its reader thread, in the hub's order) */

static void on_envelope(nccl_engine *e, const cs_hub_msg *m) {
    cs_world *w = e->base.world;
    cs_envelope env;
    cs_cur c = {.p = (uint8_t *)m->data, .len = m->len};
    cs_msg *msg = calloc(1, sizeof *msg);
    if (!msg || cs_envelope_get(&c, &env, e->n) < 0) {
        free(msg);
        cs_engine_break(&e->base, &w->ranks[e->proc->rank], CS_ETRANSPORT,
                        msg ? "a malformed envelope from the hub" : "out of memory receiving an envelope");
        return;
    }
    *msg = (cs_msg){.src = env.src, .tag = env.tag, .ctx = env.ctx, .bytes = env.bytes,
                    .dtype = (cs_dtype)env.dtype, .ndim = env.ndim, .line = env.line,
                    .sreq_id = env.sreq_id};
    memcpy(msg->shape, env.shape, sizeof msg->shape);
    cs_match_deliver(w, &w->matchers[e->proc->rank], msg);
}

/* Issue this rank's half (or both halves, to itself) of a ticket's transfer. */
static void on_ticket(nccl_engine *e, const cs_hub_msg *t) {
    nccl_proc *p = e->proc;
    cs_world *w = e->base.world;
    nrank *nr = &e->r[p->rank];
    bool sends = t->peer == (uint32_t)p->rank, recvs = t->peer2 == (uint32_t)p->rank;
    sent *s = sends ? take_sent(p, t->sreq) : NULL;
    recvd *rv = recvs ? take_recvd(p, t->rid) : NULL;
    char err[512] = "";
    int rc = CS_OK;
    if ((sends && !s) || (recvs && !rv)) { /* the hub's word is law: it cannot be wrong and go on */
        snprintf(err, sizeof err, "the hub sent a ticket for a transfer this rank does not have");
        sent_drop(s, CS_ETRANSPORT, err);
        recvd_drop(rv, CS_ETRANSPORT, err);
        cs_engine_break(&e->base, &w->ranks[p->rank], CS_ETRANSPORT, err);
        return;
    }
    pthread_mutex_lock(&e->issue);
    if (rc == CS_OK && e->dead) rc = CS_EABORT;
    cudaSetDevice(nr->dev);
    if (rc == CS_OK && t->bytes) {
        ncclResult_t q = ncclGroupStart(); /* to itself: both halves together */
        if (q == ncclSuccess && s) q = ncclSend(s->data, t->bytes, ncclUint8, (int)t->peer2, nr->p2p, nr->pstream);
        if (q == ncclSuccess && rv)
            q = ncclRecv(cs_tensor_data(rv->rq->buf), t->bytes, ncclUint8, (int)t->peer, nr->p2p, nr->pstream);
        ncclResult_t g = ncclGroupEnd();
        if (q == ncclSuccess) q = g;
        if (q != ncclSuccess && q != ncclInProgress) {
            nccl_say(err, sizeof err, "send/recv", q, nr->p2p);
            rc = CS_ETRANSPORT;
        } else if (q == ncclInProgress) {
            /* NCCL is still enqueueing (a first transfer to a peer connects
             * to it): this thread is the only one that issues on p2p, so it
             * waits without the lock, and the rank's collectives go on */
            pthread_mutex_unlock(&e->issue);
            ncclComm_t cm = nr->p2p;
            rc = nccl_ready(e, &cm, 1, false, w, 0, err, sizeof err);
            pthread_mutex_lock(&e->issue);
            if (rc == CS_OK && e->dead) rc = CS_EABORT;
        }
    }
    /* each side completes when its stream has done the work */
    if (rc == CS_OK && s && (rc = nccl_watch(e, nr->dev, nr->pstream, s->sq, s->copy, err, sizeof err)) == CS_OK) {
        free(s);
        s = NULL;
    }
    if (rc == CS_OK && rv && (rc = nccl_watch(e, nr->dev, nr->pstream, rv->rq, NULL, err, sizeof err)) == CS_OK) {
        free(rv);
        rv = NULL;
    }
    pthread_mutex_unlock(&e->issue);
    sent_drop(s, rc, err);
    recvd_drop(rv, rc, err);
}

static void on_reject(nccl_engine *e, const cs_hub_msg *m) {
    char why[CS_HUB_MAX_DATA + 1];
    memcpy(why, m->data ? (const char *)m->data : "", m->len);
    why[m->len] = 0;
    sent_drop(take_sent(e->proc, m->sreq), CS_EMISMATCH, why);
}

static void on_hub(void *ud, const cs_hub_msg *m, const char *why) {
    nccl_engine *e = ud;
    cs_world *w = e->base.world;
    if (!m) { /* the hub is gone: rank 0's process ended or died */
        if (!cs_world_aborted(w))
            cs_engine_break(&e->base, &w->ranks[e->proc->rank], CS_ETRANSPORT, why);
        return;
    }
    switch (m->kind) {
    case CS_HUB_ENV: on_envelope(e, m); break;
    case CS_HUB_TICKET: on_ticket(e, m); break;
    case CS_HUB_REJECT: on_reject(e, m); break;
    default: break; /* VALUE is the client's own */
    }
}

/* ---- the store, for the groups' ids */

static bool run_over(void *ud) { return cs_world_aborted(((nccl_engine *)ud)->base.world); }

int nccl_proc_put(nccl_engine *e, uint32_t key, const void *blob, size_t len, char *err, size_t errlen) {
    if (cs_hub_put(e->proc->hc, key, blob, len) == 0) return 0;
    snprintf(err, errlen, "lost the hub (rank 0's process)");
    return -1;
}

long nccl_proc_get(nccl_engine *e, uint32_t key, void *buf, size_t cap, char *err, size_t errlen) {
    return cs_hub_get(e->proc->hc, key, buf, cap, cs_now() + 1e9, run_over, e, err, errlen);
}

/* ---- set-up in the rank process */

/* The GPU of this rank: LOCAL_RANK (torchrun's: the rank's place on its
 * machine), else the rank itself (every rank launched on this machine). */
static int local_device(int rank) {
    const char *s = getenv("LOCAL_RANK");
    char *end;
    if (s && *s) {
        long v = strtol(s, &end, 10);
        if (!*end && v >= 0 && v < CS_WIRE_MAX_WORLD) return (int)v;
    }
    return rank;
}

static void proc_free(nccl_proc *p) {
    if (!p) return;
    cs_hub_client_free(p->hc);
    cs_hub_free(p->hub);
    for (sent *s = p->sends, *n; s; s = n) {
        n = s->next;
        s->next = NULL;
        sent_drop(s, CS_EABORT, NULL);
    }
    for (recvd *r = p->recvs, *n; r; r = n) {
        n = r->next;
        recvd_drop(r, CS_EABORT, NULL);
    }
    pthread_mutex_destroy(&p->lock);
    free(p);
}

/* Rank 0's: the world's two ids, the collectives' and point-to-point's. */
static int make_ids(void *ud, void *blob, size_t len, char *err, size_t errlen) {
    (void)ud;
    ncclUniqueId *ids = blob;
    for (size_t k = 0; k < len / sizeof *ids; k++) {
        ncclResult_t q = ncclGetUniqueId(&ids[k]);
        if (q != ncclSuccess) {
            nccl_say(err, errlen, "ncclGetUniqueId", q, NULL);
            return -1;
        }
    }
    return 0;
}

static void *proc_rank_setup(const cs_rank_setup *s) {
    char err[512] = "";
    /* One rank per GPU, refused before joining: the rank ends with status 1
     * and the reason, as a launched world too many for the GPUs does. */
    int dev = local_device(s->rank), gpus = cs_device_count();
    if (dev >= gpus) {
        char why[300] = "";
        if (!gpus) snprintf(why, sizeof why, " (%s)", cs_device_errmsg());
        cs_errf(s->err, "rank %d: the nccl engine runs one rank per GPU (NCCL refuses two ranks on "
                        "one device): this rank needs cuda:%d (LOCAL_RANK, else its rank), %d GPU%s "
                        "here%s; use --engine tcp\n",
                s->rank, dev, gpus, gpus == 1 ? "" : "s", why);
        return NULL;
    }
    nccl_proc *p = calloc(1, sizeof *p);
    if (!p) {
        cs_errf(s->err, "rank %d: out of memory\n", s->rank);
        return NULL;
    }
    pthread_mutex_init(&p->lock, NULL);
    p->rank = s->rank;
    p->dev = dev;
    p->link = s->link;
    if (cs_hub_join(s, WORLD_KEY, make_ids, NULL, p->ids, sizeof p->ids, &p->hub, &p->hc, err,
                    sizeof err) < 0) {
        if (err[0]) cs_errf(s->err, "rank %d: the nccl engine cannot start: %s\n", s->rank, err);
        proc_free(p);
        return NULL;
    }
    return p;
}

/* ---- the engine */

static const cs_engine_ops proc_ops; /* below */

void nccl_proc_stop(nccl_engine *e) {
    cs_hub_client_free(e->proc->hc);
    e->proc->hc = NULL;
}

void nccl_proc_free(nccl_engine *e) {
    proc_free(e->proc);
    e->proc = NULL;
}

static cs_engine *proc_new(cs_world *w, void *arg) {
    nccl_proc *p = arg;
    char err[512] = "";
    nccl_engine *e = nccl_alloc(w, p->rank, p->rank + 1);
    if (!e) {
        cs_errf(stderr, "rank %d: out of memory for the nccl engine\n", p->rank);
        proc_free(p);
        return NULL;
    }
    e->base.ops = &proc_ops;
    e->proc = p;
    nrank *nr = &e->r[p->rank];
    nr->dev = p->dev;
    /* The link runs from now on: an ABORT (another rank failed to start)
     * ends the communicators' set-up instead of leaving it to time out. */
    bool linked = cs_rank_link_start(p->link, w) == 0;
    bool ok = linked && nccl_init_rank(nr, err, sizeof err) == 0;
    if (!linked) snprintf(err, sizeof err, "cannot start the link to the controller");
    if (ok) {
        ncclConfig_t cc = NCCL_CONFIG_INITIALIZER, pc = NCCL_CONFIG_INITIALIZER;
        cc.blocking = pc.blocking = 0;
        cc.commName = "commsim-coll";
        pc.commName = "commsim-p2p";
        pthread_mutex_lock(&e->issue);
        ncclResult_t q = ncclGroupStart();
        if (q == ncclSuccess) q = ncclCommInitRankConfig(&nr->coll, e->n, p->ids[0], p->rank, &cc);
        if (q == ncclSuccess) q = ncclCommInitRankConfig(&nr->p2p, e->n, p->ids[1], p->rank, &pc);
        ncclResult_t g = ncclGroupEnd();
        if (q == ncclSuccess) q = g;
        pthread_mutex_unlock(&e->issue);
        if (q != ncclSuccess && q != ncclInProgress) {
            nccl_say(err, sizeof err, "ncclCommInitRankConfig", q, NULL);
            ok = false;
        } else {
            ncclComm_t both[2] = {nr->coll, nr->p2p};
            int rc = nccl_ready(e, both, 2, false, w, 0, err, sizeof err);
            if (rc == CS_EABORT) snprintf(err, sizeof err, "the job ended while NCCL set up");
            ok = rc == CS_OK;
        }
    }
    if (ok) cs_hub_client_on(p->hc, on_hub, e);
    ok = ok && nccl_start_progress(e, err, sizeof err) == 0;
    if (!ok) {
        cs_errf(stderr, "rank %d: the nccl engine cannot start: %s\n", p->rank, err);
        if (linked) cs_rank_link_stop(p->link); /* it serves w, which goes with this failure */
        nccl_destroy(&e->base);
        return NULL;
    }
    return &e->base;
}

static int proc_rank_start(cs_engine *eng, cs_rank *r) {
    nccl_engine *e = (nccl_engine *)eng;
    if (cs_device_set(e->r[r->rank].dev) < 0) {
        snprintf(r->errmsg, sizeof r->errmsg, "%s", cs_device_errmsg());
        return CS_ETRANSPORT;
    }
    return CS_OK;
}

static const cs_engine_ops proc_ops = {
    .send = proc_send,
    .transfer = proc_transfer,
    .reject = proc_reject,
    .destroy = nccl_destroy,
    .rank_start = proc_rank_start,
    .coll = nccl_coll,
    .tensor_ok = nccl_tensor_ok,
};

const cs_engine_kind cs_engine_nccl_procs = {
    .name = "nccl-mp",
    .summary = "nccl with every rank a process, here or on several machines (--master)",
    .caps = CS_ENGINE_PROCESSES | CS_ENGINE_DEVICE | CS_ENGINE_DEVICE_ONLY | CS_ENGINE_NATIVE_COLL |
            CS_ENGINE_TAGS | CS_ENGINE_ANY_SOURCE,
    .create = proc_new,
    .threads_per_rank = 1,
    .wait_yields = 32,
    .rank_setup = proc_rank_setup,
    .check = nccl_check,
};
