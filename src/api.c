/* api.c -- the rank-side API: worlds, point to point, waits (a request's
 * life is request.c's).
 *
 * Every operation passes the rank's gate, emits its post event, and hands the
 * request to the engine (sends) or to the rank's own matcher (receives). A rank
 * that must wait spins briefly, then sleeps on a futex word of its own; whoever
 * completes one of its requests bumps the word and wakes it. The spin is what
 * makes a message cost a microsecond instead of a condition variable's tens.
 */
#include "world.h"
#include "event_schema.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "pitfall.h"
#include "stage.h"

/* ---- futex: sleep on a rank's word until someone bumps it */

static void futex_wait(_Atomic uint32_t *word, uint32_t seen, const struct timespec *rel) {
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, seen, rel, NULL, 0);
}

static void futex_wake_all(_Atomic uint32_t *word) {
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* An engine with an idle loop of its own (tcp) watches the word while the
 * rank waits, so it is bumped on every wake-up. Otherwise only a sleeper
 * needs the bump: a waker stores what it publishes (a request's state, a clock
 * answer) and then reads sleeping; a waiter stores sleeping and then reads
 * what it waits for, all sequentially consistent, so at least one of the two
 * sees the other. The locked increment of a line the peer reads cost a round
 * trip between cores on every message of a spinning peer. */
void cs_rank_wake(cs_rank *r) {
    if (r->world->engine->ops->idle) {
        atomic_fetch_add(&r->futex, 1);
        if (atomic_load(&r->sleeping)) futex_wake_all(&r->futex);
        return;
    }
    if (!atomic_load(&r->sleeping)) return;
    atomic_fetch_add(&r->futex, 1);
    futex_wake_all(&r->futex);
}

/* ---- worlds */


cs_world *cs_world_new(const cs_world_config *cfg, cs_bus *bus, char *err, size_t errlen) {
    if (cfg->world < 1) {
        snprintf(err, errlen, "world size must be at least 1 (got %d)", cfg->world);
        return NULL;
    }
    const cs_engine_kind *kind = cs_engine_find(cfg->engine);
    if (!kind) {
        snprintf(err, errlen, "unknown engine '%s'", cfg->engine);
        return NULL;
    }
    if (kind->rank_setup && !cfg->engine_arg) {
        snprintf(err, errlen, "engine '%s' runs in rank processes (its connections are missing)",
                 kind->name);
        return NULL;
    }
    const char *engine = kind->name;
    cs_world *w = calloc(1, sizeof *w);
    if (!w) goto nomem;
    w->cfg = *cfg;
    snprintf(w->engine_name, sizeof w->engine_name, "%s", engine);
    w->cfg.engine = w->engine_name;
    snprintf(w->script_name, sizeof w->script_name, "%s", cfg->script ? cfg->script : "script");
    w->cfg.script = w->script_name;
    w->bus = bus;
    /* aligned, for the line of what other threads write (world.h) */
    if ((size_t)cfg->world > SIZE_MAX / sizeof *w->ranks) goto nomem;
    w->ranks = aligned_alloc(_Alignof(cs_rank), (size_t)cfg->world * sizeof *w->ranks);
    if (w->ranks) memset(w->ranks, 0, (size_t)cfg->world * sizeof *w->ranks);
    w->matchers = calloc((size_t)cfg->world, sizeof *w->matchers);
    if (!w->ranks || !w->matchers) goto nomem;
    for (int i = 0; i < cfg->world; i++) {
        cs_rank *r = &w->ranks[i];
        r->world = w;
        r->rank = i;
        r->next_req = 1;
        r->budget.limit = cfg->mem_limit;
        /* splitmix64 of seed and rank: distinct, reproducible streams */
        uint64_t z = cfg->seed + 0x9e3779b97f4a7c15ULL * (uint64_t)(i + 1);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        r->rng = (z ^ (z >> 31)) | 1;
        cs_matcher_init(&w->matchers[i], i);
    }
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    w->oversubscribed = cfg->world * kind->threads_per_rank > (ncpu > 0 ? ncpu : 1);
    /* Spinning pays only while the peer is running on another core; with more
     * ranks than cores, yield instead so the peer gets to run at all. */
    w->spin = w->oversubscribed ? 0 : 4000;
    w->yields = kind->wait_yields;
    w->one_stream = !(kind->caps & CS_ENGINE_PROCESSES);
    pthread_mutex_init(&w->end_lock, NULL);
    pthread_cond_init(&w->end_cond, NULL);
    w->engine = kind->create(w, cfg->engine_arg);
    if (!w->engine) { /* out of memory, or what the engine printed (NCCL's set-up) */
        snprintf(err, errlen, "cannot start the %s engine for %d ranks", engine, cfg->world);
        cs_world_free(w);
        return NULL;
    }
    return w;
nomem:
    snprintf(err, errlen, "out of memory creating a world of %d ranks", cfg->world);
    cs_world_free(w);
    return NULL;
}

void cs_world_free(cs_world *w) {
    if (!w) return;
    if (w->engine) w->engine->ops->destroy(w->engine);
    if (w->matchers) {
        for (int i = 0; i < w->cfg.world; i++) cs_matcher_destroy(&w->matchers[i]);
        pthread_mutex_destroy(&w->end_lock);
        pthread_cond_destroy(&w->end_cond);
    }
    for (int i = 0; w->ranks && i < w->cfg.world; i++) {
        cs_request_free_spares(&w->ranks[i]);
    }
    free(w->matchers);
    free(w->ranks);
    free(w);
}

int cs_world_size(const cs_world *w) { return w->cfg.world; }
cs_rank *cs_world_rank(cs_world *w, int rank) { return &w->ranks[rank]; }
const cs_world_config *cs_world_config_of(const cs_world *w) { return &w->cfg; }

const char *cs_end_words(int why) {
    switch (why) {
    case CS_END_ERROR: return "a rank's script failed";
    case CS_END_DEADLOCK: return "the ranks deadlocked";
    case CS_END_TIMEOUT: return "the timeout or a budget ran out";
    case CS_END_DIED: return "a rank process died or stopped responding";
    case CS_END_QUIT: return "it was interrupted";
    default: return "the controller could not start every rank";
    }
}

cs_end_reason cs_world_end_reason(const cs_world *w) { return (cs_end_reason)atomic_load(&w->end); }
bool cs_world_aborted(const cs_world *w) { return atomic_load_explicit(&w->end, memory_order_acquire) != 0; }

void cs_world_set_gate(cs_world *w, cs_gate_fn fn, void *ud) {
    w->gate = fn;
    w->gate_ud = ud;
}

bool cs_world_abort(cs_world *w, cs_end_reason why) {
    int none = CS_END_NONE;
    if (!atomic_compare_exchange_strong(&w->end, &none, (int)why)) return false;
    for (int i = 0; i < w->cfg.world; i++) {
        atomic_fetch_add(&w->ranks[i].futex, 1);
        futex_wake_all(&w->ranks[i].futex);
    }
    pthread_mutex_lock(&w->end_lock);
    pthread_cond_broadcast(&w->end_cond);
    pthread_mutex_unlock(&w->end_lock);
    return true;
}

int cs_world_wait(cs_world *w, double deadline, bool stop_on_abort) {
    int rc = -1;
    pthread_mutex_lock(&w->end_lock);
    for (;;) {
        if (w->nexited == w->cfg.world) { rc = 0; break; }
        if (stop_on_abort && cs_world_aborted(w)) { rc = 1; break; }
        double left = deadline - cs_now();
        if (left <= 0) break;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        double when = (double)ts.tv_sec + ts.tv_nsec * 1e-9 + (left < 3600 ? left : 3600);
        ts.tv_sec = (time_t)when;
        ts.tv_nsec = (long)((when - (double)ts.tv_sec) * 1e9);
        pthread_cond_timedwait(&w->end_cond, &w->end_lock, &ts);
    }
    pthread_mutex_unlock(&w->end_lock);
    return rc;
}

/* ---- ranks */

int cs_rank_id(const cs_rank *r) { return r->rank; }
int cs_rank_world_size(const cs_rank *r) { return r->world->cfg.world; }
cs_world *cs_rank_world(cs_rank *r) { return r->world; }
cs_budget *cs_rank_budget(cs_rank *r) { return &r->budget; }
uint64_t *cs_rank_rng(cs_rank *r) { return &r->rng; }
const char *cs_rank_errmsg(const cs_rank *r) { return r->errmsg; }

static void emit(cs_rank *r, cs_event *ev) {
    ev->rank = r->rank;
    cs_bus_emit(r->world->bus, ev);
}

static int fail_arg(cs_rank *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail_arg(cs_rank *r, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->errmsg, sizeof r->errmsg, fmt, ap);
    va_end(ap);
    return CS_EARG;
}

static int gate(cs_rank *r, cs_op op, int line) {
    cs_world *w = r->world;
    if (cs_world_aborted(w)) return CS_EABORT;
    if (w->gate) return w->gate(w->gate_ud, r, op, line);
    return CS_OK;
}

/* A point-to-point operation passes the gate with its details visible to it. */
static int gate_p2p(cs_rank *r, cs_op op, int line, int peer, int tag, cs_tensor *t) {
    r->gate_set = true;
    r->gate_peer = peer;
    r->gate_tag = tag;
    r->gate_tensor = t;
    int rc = gate(r, op, line);
    r->gate_set = false;
    return rc;
}

bool cs_rank_gate_op(const cs_rank *r, int *peer, int *tag, cs_tensor **t) {
    if (!r->gate_set) return false;
    *peer = r->gate_peer;
    *tag = r->gate_tag;
    *t = r->gate_tensor;
    return true;
}

static void fill_post(cs_event *ev, const cs_request *q, const cs_tensor *t) {
    ev->type = CS_EV_POST;
    ev->req = q->id;
    ev->op = q->op;
    ev->peer = q->peer;
    ev->tag = q->tag;
    ev->ctx = q->ctx;
    ev->bytes = q->bytes;
    ev->dtype = t->dtype;
    ev->ndim = t->ndim;
    memcpy(ev->shape, t->shape, sizeof ev->shape);
    ev->line = q->line;
    ev->eager = q->eager;
}

/* ---- modelled time: what the timekeeper (vclock.c) must hear from the rank */

/* Arithmetic charged since the last operation becomes one compute span. */
static void flush_flops(cs_rank *r, int line) {
    if (!r->flops_pending) return;
    uint64_t ns = cs_netmodel_flops_ns(&r->world->cfg.net, r->flops_pending);
    r->flops_pending = 0;
    cs_event ev = {.type = CS_EV_COMPUTE, .ms = (double)ns / 1e6, .begin = true, .line = line};
    emit(r, &ev);
    ev.begin = false;
    emit(r, &ev);
}

void cs_rank_flops(cs_rank *r, uint64_t n) {
    if (r->world->cfg.net.flops) r->flops_pending += n;
}

/* The rank waits for every request of qs: its clock moves to their end. */
static void announce_wait(cs_rank *r, cs_request **qs, int n, int line) {
    uint64_t small[16];
    uint64_t *ids = n <= 16 ? small : malloc((size_t)n * sizeof *ids);
    if (!ids) {
        snprintf(r->errmsg, sizeof r->errmsg, "out of memory announcing a wait");
        return;
    }
    for (int i = 0; i < n; i++) ids[i] = qs[i]->id;
    cs_event ev = {.type = CS_EV_WAIT, .reqs = ids, .nreqs = n, .line = line};
    emit(r, &ev);
    if (ids != small) free(ids);
}

void cs_world_clock_answer(cs_world *w, int rank, uint64_t ns) {
    if (rank < 0 || rank >= w->cfg.world) return;
    cs_rank *r = &w->ranks[rank];
    atomic_store(&r->clock_answer, ns + 1);
    cs_rank_wake(r);
}

/* ---- posting */

static int check_tensor(cs_rank *r, const cs_tensor *t, const char *what) {
    if (!t) return fail_arg(r, "dist.%s: expected a tensor", what);
    if (!cs_tensor_is_contiguous(t))
        return fail_arg(r, "dist.%s: the tensor must be contiguous (use t:contiguous())", what);
    cs_engine *e = r->world->engine;
    char why[300];
    if (e->ops->tensor_ok && !e->ops->tensor_ok(e, r, t, why, sizeof why))
        return fail_arg(r, "dist.%s: %s", what, why);
    return CS_OK;
}

/* A send reads its tensor and a receive writes it: either may touch a buffer
 * that an unfinished isend/irecv still owns. A blocking one on the rank itself
 * may wait forever. Only the script's own traffic (context 0): a collective's
 * internal requests are the collective's business. */
static int pitfalls(cs_rank *r, cs_op op, const cs_tensor *t, int peer, int tag, int ctx,
                    bool eager, int line) {
    int rc = CS_OK;
    if (ctx != 0) return CS_OK;
    if (cs_rank_has_inflight(r))
        rc = cs_rank_access(r, t, cs_op_is_send(op) ? CS_ACCESS_READ : CS_ACCESS_WRITE, line);
    if (rc == CS_OK) rc = cs_pitfall_self(r, op, peer, tag, eager, line);
    return rc;
}

static int post_send(cs_rank *r, cs_op op, cs_tensor *t, int dst, int tag, int ctx, int line,
                     cs_request **out) {
    const char *name = cs_op_name(op);
    cs_world *w = r->world;
    int rc;
    r->errmsg[0] = '\0'; /* a CS_ENOMEM below may leave its details here */
    if ((rc = check_tensor(r, t, name)) != CS_OK) return rc;
    if (dst < 0 || dst >= w->cfg.world)
        return fail_arg(r, "dist.%s: destination %d is outside the world (ranks 0 to %d)", name, dst,
                        w->cfg.world - 1);
    if (tag < 0) return fail_arg(r, "dist.%s: tag must be >= 0 (got %d)", name, tag);
    if ((rc = gate_p2p(r, op, line, dst, tag, t)) != CS_OK) return rc;
    bool eager = cs_send_mode_is_eager(&w->cfg.mode, cs_tensor_nbytes(t));
    if ((rc = pitfalls(r, op, t, dst, tag, ctx, eager, line)) != CS_OK) return rc;
    flush_flops(r, line);
    cs_request *q = cs_request_new(r, op, t, dst, tag, line);
    if (!q) return CS_ENOMEM;
    if ((rc = cs_stage_post(r, q, true)) != CS_OK) {
        cs_request_release(q);
        return rc;
    }
    q->ctx = ctx;
    q->coll_sig = ctx ? r->coll_sig : 0;
    q->exchange = ctx && r->coll_exchange;
    q->eager = eager;
    cs_event ev = {0};
    fill_post(&ev, q, t);
    emit(r, &ev);
    rc = w->engine->ops->send(w->engine, cs_request_retain(q), q->eager);
    if (rc != CS_OK) {
        cs_request_release(q);
        cs_request_release(q);
        return rc;
    }
    if (q->unbuffered) { /* queued uncopied; the rank fails at this line */
        snprintf(r->errmsg, sizeof r->errmsg,
                 "no room to buffer an eager send of %zu bytes (eager messages not yet "
                 "received count against their sender's cap)", q->bytes);
        cs_request_release(q);
        return CS_ENOMEM;
    }
    if (op == CS_OP_ISEND && ctx == 0) cs_inflight_add(r, q);
    *out = q;
    return CS_OK;
}

static int post_recv(cs_rank *r, cs_op op, cs_tensor *t, int src, int tag, int ctx, int line,
                     cs_request **out) {
    const char *name = cs_op_name(op);
    cs_world *w = r->world;
    int rc;
    if ((rc = check_tensor(r, t, name)) != CS_OK) return rc;
    if (src != CS_ANY_SOURCE && (src < 0 || src >= w->cfg.world))
        return fail_arg(r, "dist.%s: source %d is outside the world (ranks 0 to %d)", name, src,
                        w->cfg.world - 1);
    if (tag < 0) return fail_arg(r, "dist.%s: tag must be >= 0 (got %d)", name, tag);
    if ((rc = gate_p2p(r, op, line, src, tag, t)) != CS_OK) return rc;
    if ((rc = pitfalls(r, op, t, src, tag, ctx, false, line)) != CS_OK) return rc;
    flush_flops(r, line);
    cs_request *q = cs_request_new(r, op, t, src, tag, line);
    if (!q) return CS_ENOMEM;
    if ((rc = cs_stage_post(r, q, false)) != CS_OK) {
        cs_request_release(q);
        return rc;
    }
    q->ctx = ctx;
    q->coll_sig = ctx ? r->coll_sig : 0;
    q->exchange = ctx && r->coll_exchange;
    if (src == CS_ANY_SOURCE && !atomic_load_explicit(&w->any_source, memory_order_relaxed)) {
        atomic_store(&w->any_source, true); /* before its event: see waits_wild */
        cs_bus_order(w->bus);
    }
    cs_event ev = {0};
    fill_post(&ev, q, t);
    emit(r, &ev);
    cs_match_post_recv(w, &w->matchers[r->rank], cs_request_retain(q));
    if (op == CS_OP_IRECV && ctx == 0) cs_inflight_add(r, q);
    *out = q;
    return CS_OK;
}

/* ---- waiting */

typedef struct waitset {
    cs_request **qs;
    int n;
} waitset;

static bool all_done(const waitset *ws) {
    for (int i = 0; i < ws->n; i++)
        if (!cs_request_is_completed(ws->qs[i])) return false;
    return true;
}

static void emit_block(cs_rank *r, const waitset *ws, int line, bool block) {
    uint64_t small[16];
    uint64_t *ids = ws->n <= 16 ? small : malloc((size_t)ws->n * sizeof *ids);
    cs_event ev = {.type = block ? CS_EV_BLOCK : CS_EV_UNBLOCK, .line = line};
    if (block && ids) {
        for (int i = 0; i < ws->n; i++) ids[i] = ws->qs[i]->id;
        ev.reqs = ids;
        ev.nreqs = ws->n;
    }
    emit(r, &ev);
    if (ids != small) free(ids);
}

/* An irecv from any source or a rendezvous isend of the script's: what the
 * rank knows changes at its wait, not when the request completes, so the
 * race detector must see every wait on one (monitor_race.c), also a wait
 * that finds it complete and never sleeps.
 *
 * Except an isend's, while no receive from any source was posted before its
 * completion in the stream: the detector then credits the completion at
 * once (it carries nothing a race could hide behind). Where every rank's
 * events share this stream, the flag tells: it was set before that post's
 * event, and the completion's event was emitted before the rank saw the
 * request done, so a post the stream places before it is seen here
 * (cs_bus_order). A rank process cannot see the others' posts: it tells
 * every wait, and the detector ignores what it does not need. */
static bool waits_wild(const cs_world *w, cs_request *const *qs, int n) {
    bool sends = !w->one_stream || atomic_load(&w->any_source);
    for (int i = 0; i < n; i++)
        if (qs[i]->ctx == 0 && ((qs[i]->op == CS_OP_IRECV && qs[i]->peer == CS_ANY_SOURCE) ||
                                (qs[i]->op == CS_OP_ISEND && !qs[i]->eager && sends)))
            return true;
    return false;
}

/* The engine dropped a connection: what this wait waits for may never come. */
static int engine_broken(cs_rank *r) {
    cs_engine *e = r->world->engine;
    if (!atomic_load(&e->broken)) return CS_OK;
    snprintf(r->errmsg, sizeof r->errmsg, "%s", e->broken_why);
    return e->broken_err;
}

/* Spin, then (the engine's poll first, where it has one) announce the block
 * and sleep until every request is done or the run is aborted. The block
 * event precedes the sleep, so the monitor always knows who sleeps on what. */
static int wait_set(cs_rank *r, const waitset *ws, int line, bool *slept) {
    cs_world *w = r->world;
    *slept = false;
    /* Poll with pause while the peer likely runs on another core, then yield
     * the core a few times (the peer may be waiting for it), then sleep. */
    for (int i = 0; i < w->spin + w->yields; i++) {
        if (all_done(ws)) return CS_OK;
        if (cs_world_aborted(w)) return all_done(ws) ? CS_OK : CS_EABORT; /* see below */
        if (engine_broken(r) != CS_OK) return engine_broken(r);
        /* The time a rank waits anyway dispatches the deferred events, a
         * few at a time, so that it still sees its request end at once: as
         * the wait begins, all that are ready, looking at the requests
         * between (the peer is only starting the work that ends the wait:
         * a ping-pong's half round trip fell from ~1.0 to ~0.7 us), then
         * every 16 spins. */
        if ((i & 15) == 0 && cs_bus_poll(w->bus, 4)) {
            while (i == 0 && !all_done(ws) && cs_bus_poll(w->bus, 4)) {}
            continue;
        }
        if (i < w->spin) cs_cpu_relax();
        else sched_yield();
    }
    bool announced = false, polled = !w->engine->ops->poll;
    int rc = CS_OK;
    for (;;) {
        uint32_t seen = atomic_load(&r->futex);
        if (all_done(ws)) break;
        /* Done before the abort (looked at again: the request may have ended
         * just before it, as both sides of a mismatch do at once): the wait
         * reports how its requests ended, a failure the rank's own. */
        if (cs_world_aborted(w)) { rc = all_done(ws) ? CS_OK : CS_EABORT; break; }
        if ((rc = engine_broken(r)) != CS_OK) break;
        if (!polled) { /* the engine's spinning: its sockets */
            polled = true;
            w->engine->ops->poll(w->engine, r, seen);
            continue;
        }
        if (!announced) {
            emit_block(r, ws, line, true);
            announced = true;
            continue; /* look again: the event took time */
        }
        atomic_store(&r->sleeping, 1);
        if (!all_done(ws) && !cs_world_aborted(w)) {
            if (w->engine->ops->idle) w->engine->ops->idle(w->engine, r, seen);
            else futex_wait(&r->futex, seen, NULL);
        }
        atomic_store(&r->sleeping, 0);
    }
    if (announced) emit_block(r, ws, line, false);
    *slept = announced;
    return rc;
}

static int finish_wait(cs_rank *r, cs_request **qs, int n) {
    for (int i = 0; i < n; i++)
        if (atomic_load(&qs[i]->state) == CS_REQ_FAILED) {
            snprintf(r->errmsg, sizeof r->errmsg, "%s",
                     qs[i]->errmsg ? qs[i]->errmsg : "the operation failed");
            return qs[i]->err;
        }
    return CS_OK;
}

int cs_wait(cs_rank *r, cs_request *q, int line) {
    return cs_wait_all(r, &q, 1, line);
}

int cs_wait_all(cs_rank *r, cs_request **qs, int n, int line) {
    for (int i = 0; i < n; i++)
        if (qs[i]->owner != r) return fail_arg(r, "wait: the work handle belongs to rank %d", qs[i]->rank);
    /* A block event lists at most CS_EV_MAX_REQS requests (the wire and the
     * trace bound it): a longer list is waited for in slices, one after the
     * other. Waiting for all is waiting for each, and a slice that can never
     * finish is a deadlock the monitor sees as it would see the whole list. */
    for (int at = 0; at < n; at += CS_EV_MAX_REQS) {
        waitset ws = {.qs = qs + at, .n = n - at < CS_EV_MAX_REQS ? n - at : CS_EV_MAX_REQS};
        if (r->world->cfg.net.on) {
            flush_flops(r, line);
            announce_wait(r, ws.qs, ws.n, line);
        }
        bool slept;
        int rc = wait_set(r, &ws, line, &slept);
        if (rc != CS_OK) return rc;
        if (!slept && waits_wild(r->world, ws.qs, ws.n)) { /* a wait that did not sleep, told */
            emit_block(r, &ws, line, true);
            emit_block(r, &ws, line, false);
        }
    }
    for (int i = 0; i < n; i++) cs_inflight_done(r, qs[i]);
    int rc = finish_wait(r, qs, n);
    for (int i = 0; i < n && rc == CS_OK; i++) rc = cs_stage_done(r, qs[i]);
    return rc;
}

bool cs_test(cs_rank *r, cs_request *q) {
    bool done = cs_request_is_completed(q);
    if (done && q->owner == r) {
        cs_inflight_done(r, q);
        /* torch: a completed is_completed() makes the buffer the script's
         * again, so a staged receive lands now; a device failure shows at
         * the next wait */
        cs_stage_done(r, q);
        /* Seen completed is waited on: the clock moves to its completion. */
        if (r->world->cfg.net.on) announce_wait(r, &q, 1, q->line);
        if (waits_wild(r->world, &q, 1)) {
            waitset ws = {&q, 1};
            emit_block(r, &ws, q->line, true);
            emit_block(r, &ws, q->line, false);
        }
    }
    return done;
}

/* ---- point to point */

int cs_isend(cs_rank *r, cs_tensor *t, int dst, int tag, int line, cs_request **out) {
    return post_send(r, CS_OP_ISEND, t, dst, tag, 0, line, out);
}

int cs_irecv(cs_rank *r, cs_tensor *t, int src, int tag, int line, cs_request **out) {
    return post_recv(r, CS_OP_IRECV, t, src, tag, 0, line, out);
}

int cs_send(cs_rank *r, cs_tensor *t, int dst, int tag, int line) {
    cs_request *q;
    int rc = post_send(r, CS_OP_SEND, t, dst, tag, 0, line, &q);
    if (rc != CS_OK) return rc;
    rc = cs_wait(r, q, line);
    cs_request_release(q);
    return rc;
}

int cs_recv(cs_rank *r, cs_tensor *t, int src, int tag, int line, int *from) {
    cs_request *q;
    int rc = post_recv(r, CS_OP_RECV, t, src, tag, 0, line, &q);
    if (rc != CS_OK) return rc;
    rc = cs_wait(r, q, line);
    if (from) *from = q->source;
    cs_request_release(q);
    return rc;
}

/* Collectives' internal messages: the same operations in their own context. */
int cs_isend_ctx(cs_rank *r, cs_tensor *t, int dst, int tag, int ctx, int line, cs_request **out) {
    return post_send(r, CS_OP_ISEND, t, dst, tag, ctx, line, out);
}

int cs_irecv_ctx(cs_rank *r, cs_tensor *t, int src, int tag, int ctx, int line, cs_request **out) {
    return post_recv(r, CS_OP_IRECV, t, src, tag, ctx, line, out);
}

/* ---- the rest of a script's life */

int cs_compute(cs_rank *r, double ms, int line) {
    if (!(ms >= 0) || ms > 3600e3) return fail_arg(r, "compute: ms must be between 0 and 3600000");
    cs_world *w = r->world;
    flush_flops(r, line);
    cs_event ev = {.type = CS_EV_COMPUTE, .ms = ms, .begin = true, .line = line};
    emit(r, &ev);
    if (w->cfg.net.on) { /* virtual time only: the timekeeper adds ms to the clock */
        ev.begin = false;
        emit(r, &ev);
        return cs_world_aborted(w) ? CS_EABORT : CS_OK;
    }
    double until = cs_now() + ms / 1e3;
    int rc = CS_OK;
    for (;;) {
        uint32_t seen = atomic_load(&r->futex);
        if (cs_world_aborted(w)) { rc = CS_EABORT; break; }
        double left = until - cs_now();
        if (left <= 0) break;
        struct timespec rel = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
        atomic_store(&r->sleeping, 1);
        if (!cs_world_aborted(w)) futex_wait(&r->futex, seen, &rel);
        atomic_store(&r->sleeping, 0);
    }
    ev.begin = false;
    emit(r, &ev);
    return rc;
}

double cs_time(cs_rank *r, int line) {
    cs_world *w = r->world;
    if (!w->cfg.net.on) return cs_now() - w->bus->t0;
    flush_flops(r, line);
    atomic_store(&r->clock_answer, 0);
    cs_event ev = {.type = CS_EV_CLOCK, .line = line};
    emit(r, &ev);
    /* The answer comes once the timekeeper has timed the rank's past: at
     * once, unless it waits for other ranks to say what they do. */
    for (;;) {
        uint32_t seen = atomic_load(&r->futex);
        uint64_t a = atomic_load(&r->clock_answer);
        if (a) return (double)(a - 1) / 1e9;
        if (cs_world_aborted(w) || engine_broken(r) != CS_OK) return -1;
        atomic_store(&r->sleeping, 1);
        if (!atomic_load(&r->clock_answer) && !cs_world_aborted(w)) {
            if (w->engine->ops->idle) w->engine->ops->idle(w->engine, r, seen);
            else futex_wait(&r->futex, seen, NULL);
        }
        atomic_store(&r->sleeping, 0);
    }
}

/* A copy of s (len bytes) with each NUL written as "\0": events carry C
 * strings, and what follows a NUL is kept. NULL: no memory. */
char *cs_text_nul_escape(const char *s, size_t len) {
    size_t n = 0;
    for (const char *p = s; (p = memchr(p, '\0', len - (size_t)(p - s))); p++) n++;
    char *out = malloc(len + n + 1), *o = out;
    if (!out) return NULL;
    for (size_t i = 0; i < len; i++) {
        if (s[i]) *o++ = s[i];
        else *o++ = '\\', *o++ = '0';
    }
    *o = '\0';
    return out;
}

/* An event carries at most CS_EV_MAX_TEXT bytes of text (the wire and the
 * trace bound it), so longer output leaves as several print events, cut at
 * line ends: the report tags each line alone, so every engine and a replay
 * print the same lines. A single line longer than an event is cut, and the
 * cut is said in the output. */
static void print_events(cs_rank *r, const char *text, size_t len, int line) {
    const size_t max = CS_EV_MAX_TEXT - 1;
    const char *orig = text;
    char *buf = NULL;
    while (len > max) {
        const char *nl = text + max;
        while (nl > text && *nl != '\n') nl--; /* text[max] may be the newline itself */
        if (*nl != '\n') nl = NULL;
        if (!nl) { /* one line longer than an event: its head, and say so */
            const char *end = memchr(text + max, '\n', len - max);
            size_t line_len = end ? (size_t)(end - text) : len;
            char note[96];
            int nn = snprintf(note, sizeof note, " [commsim: line cut, %zu more bytes]",
                              line_len - (max - sizeof note));
            if (!buf && !(buf = malloc(max + 1))) return;
            memcpy(buf, text, max - sizeof note);
            memcpy(buf + max - sizeof note, note, (size_t)nn + 1);
            cs_event ev = {.type = CS_EV_PRINT, .text = buf, .line = line};
            emit(r, &ev);
            if (!end) {
                free(buf);
                return;
            }
            len -= (size_t)(end + 1 - text);
            text = end + 1;
            if (len == 0) break; /* the output ended with that line's newline */
            continue;
        }
        if (!buf && !(buf = malloc(max + 1))) return;
        memcpy(buf, text, (size_t)(nl - text));
        buf[nl - text] = '\0';
        cs_event ev = {.type = CS_EV_PRINT, .text = buf, .line = line};
        emit(r, &ev);
        len -= (size_t)(nl + 1 - text);
        text = nl + 1;
        if (len == 0) { /* the output ended with this newline */
            free(buf);
            return;
        }
    }
    free(buf);
    if (len == 0 && *text == '\0' && text != orig) return; /* nothing after the last cut */
    cs_event ev = {.type = CS_EV_PRINT, .text = text, .line = line};
    emit(r, &ev);
}

void cs_print(cs_rank *r, const char *text, size_t len, int line) {
    if (!memchr(text, '\0', len)) {
        print_events(r, text, len, line);
        return;
    }
    char *esc = cs_text_nul_escape(text, len);
    if (esc) print_events(r, esc, strlen(esc), line);
    free(esc);
}

void cs_warn(cs_rank *r, const char *pitfall, const char *text, int line) {
    cs_event ev = {.type = CS_EV_WARN, .text = text, .line = line, .pitfall = pitfall};
    emit(r, &ev);
}

void cs_rank_fail_at(cs_rank *r, cs_end_reason why, int line, const char *msg) {
    /* End the run first, so the error (not its consequences) decides the status. */
    cs_world_abort(r->world, why);
    cs_event ev = {.type = CS_EV_ERROR, .text = msg, .status = (int)why, .line = line};
    emit(r, &ev);
}

void cs_rank_fail(cs_rank *r, cs_end_reason why, const char *msg) {
    cs_rank_fail_at(r, why, 0, msg);
}

void cs_rank_exit(cs_rank *r, int status) { cs_rank_exit_at(r, status, 0); }

void cs_rank_exit_at(cs_rank *r, int status, int line) {
    cs_world *w = r->world;
    status = cs_inflight_exit(r, status);
    if (status == 0) flush_flops(r, 0);
    cs_event ev = {.type = CS_EV_EXIT, .status = status, .line = status ? line : 0};
    emit(r, &ev);
    atomic_store(&r->exited, 1);
    pthread_mutex_lock(&w->end_lock);
    w->nexited++;
    pthread_cond_broadcast(&w->end_cond);
    pthread_mutex_unlock(&w->end_lock);
}
