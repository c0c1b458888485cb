/* monitor.c -- folding events into the world model; detecting that nothing can
 * move; collecting the pitfalls. The words are explain.c's. */
#include "monitor_internal.h"
#include "recheck.h"
#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const state_names[] = {
    [CS_RS_IDLE] = "idle",           [CS_RS_RUNNING] = "running", [CS_RS_BLOCKED] = "blocked",
    [CS_RS_COMPUTING] = "computing", [CS_RS_DONE] = "done",       [CS_RS_FAILED] = "failed",
    [CS_RS_ABORTED] = "aborted",
};

const char *cs_rank_state_name(cs_rank_state s) {
    return (unsigned)s <= CS_RS_ABORTED ? state_names[s] : "?";
}

/* ---- the request table: open addressing, linear probing, backward-shift delete */

static size_t slot_of(const cs_mon_reqtab *t, uint64_t id) {
    return (size_t)(id * 0x9e3779b97f4a7c15ULL >> 17) & (t->cap - 1);
}

static cs_mon_req *tab_find(const cs_mon_reqtab *t, uint64_t id) {
    if (!t->cap) return NULL;
    for (size_t i = slot_of(t, id);; i = (i + 1) & (t->cap - 1)) {
        if (!t->slot[i]) return NULL;
        if (t->slot[i]->id == id) return t->slot[i];
    }
}

static void tab_put(cs_mon_reqtab *t, cs_mon_req *q);

static void tab_grow(cs_mon_reqtab *t) {
    size_t cap = t->cap ? t->cap * 2 : 16;
    cs_mon_reqtab bigger = {cs_xcalloc(cap, sizeof(cs_mon_req *), "the monitor's request table"),
                            cap, 0};
    for (size_t i = 0; i < t->cap; i++)
        if (t->slot[i]) tab_put(&bigger, t->slot[i]);
    free(t->slot);
    *t = bigger;
}

static void tab_put(cs_mon_reqtab *t, cs_mon_req *q) {
    if ((t->n + 1) * 2 > t->cap) tab_grow(t);
    size_t i = slot_of(t, q->id);
    while (t->slot[i]) i = (i + 1) & (t->cap - 1);
    t->slot[i] = q;
    t->n++;
}

/* Take the request out of the table; returns it (NULL: not there). */
static cs_mon_req *tab_del(cs_mon_reqtab *t, uint64_t id) {
    if (!t->cap) return NULL;
    size_t i = slot_of(t, id);
    while (t->slot[i] && t->slot[i]->id != id) i = (i + 1) & (t->cap - 1);
    cs_mon_req *gone = t->slot[i];
    if (!gone) return NULL;
    t->slot[i] = NULL;
    t->n--;
    /* shift back the entries that probed past the hole */
    for (size_t j = (i + 1) & (t->cap - 1); t->slot[j]; j = (j + 1) & (t->cap - 1)) {
        size_t home = slot_of(t, t->slot[j]->id);
        bool between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (between) continue;
        t->slot[i] = t->slot[j];
        t->slot[j] = NULL;
        i = j;
    }
    return gone;
}

static void tab_free(cs_mon_reqtab *t) {
    for (size_t i = 0; i < t->cap; i++)
        if (t->slot[i]) {
            free(t->slot[i]->clock);
            free(t->slot[i]->rclock);
            free(t->slot[i]);
        }
    free(t->slot);
    memset(t, 0, sizeof *t);
}

/* ---- life */

int cs_monitor_init(cs_monitor *m, int world) {
    memset(m, 0, sizeof *m);
    m->world = world;
    m->ranks = calloc((size_t)(world > 0 ? world : 1), sizeof *m->ranks);
    if (!m->ranks) return -1;
    m->nlive = world;
    for (int i = 0; i < world; i++) m->ranks[i].op = -1;
    return 0;
}



void cs_monitor_destroy(cs_monitor *m) {
    for (int i = 0; i < m->world; i++) {
        tab_free(&m->ranks[i].reqs);
        free(m->ranks[i].wait);
        free(m->ranks[i].error);
        free(m->ranks[i].waiters);
    }
    for (int i = 0; i < m->nspare; i++) {
        free(m->spare[i]->clock);
        free(m->spare[i]);
    }
    for (int i = 0; i < m->npitfalls; i++) free(m->pitfalls[i].text);
    free(m->pitfalls);
    free(m->run_error);
    free(m->recheck);
    free(m->ranks);
    free(m->script);
    free(m->engine);
    free(m->send_mode);
    cs_verdict_free(&m->deadlock);
    cs_monitor_coll_destroy(m);
    cs_monitor_race_destroy(m);
    memset(m, 0, sizeof *m);
}

cs_mon_req *cs_mon_lookup(const cs_monitor *m, int rank, uint64_t id) {
    if (rank < 0 || rank >= m->world) return NULL;
    return tab_find(&m->ranks[rank].reqs, id);
}

const cs_mon_req *cs_monitor_find(const cs_monitor *m, int rank, uint64_t id) {
    return cs_mon_lookup(m, rank, id);
}

void cs_monitor_each_req(const cs_monitor *m, int rank,
                         void (*fn)(void *ud, const cs_mon_req *q), void *ud) {
    if (rank < 0 || rank >= m->world) return;
    const cs_mon_reqtab *t = &m->ranks[rank].reqs;
    for (size_t i = 0; i < t->cap; i++)
        if (t->slot[i]) fn(ud, t->slot[i]);
}

const char *cs_mon_script(const cs_monitor *m) { return m->script ? m->script : "line"; }

static void set_state(cs_monitor *m, int rank, cs_rank_state s, double t) {
    cs_mon_rank *r = &m->ranks[rank];
    bool was_live = r->state < CS_RS_DONE, live = s < CS_RS_DONE;
    if (r->state == CS_RS_BLOCKED) m->nblocked--;
    if (s == CS_RS_BLOCKED) m->nblocked++;
    if (was_live && !live) m->nlive--;
    r->state = s;
    r->since = t;
}

/* A request leaves the model once nothing more can happen to it. Its memory
 * serves one of the next posts: a post and a settle per operation, and the
 * allocator's locks are shared with the ranks. */
static void settle(cs_monitor *m, cs_mon_rank *r, cs_mon_req *q) {
    if (!q->done || (!q->matched && cs_op_is_send(q->op))) return;
    q = tab_del(&r->reqs, q->id);
    if (!q) return;
    free(q->rclock);
    q->rclock = NULL;
    /* a spare keeps its clock's memory too (the race detector's, world sized) */
    if (m->nspare < (int)(sizeof m->spare / sizeof *m->spare)) {
        m->spare[m->nspare++] = q;
        return;
    }
    free(q->clock);
    free(q);
}

/* ---- can anything still move? */

bool cs_mon_fits(const cs_mon_req *send, const cs_mon_req *recv) {
    return send->peer == recv->rank && send->ctx == recv->ctx && send->tag == recv->tag &&
           (recv->peer == CS_ANY_SOURCE || recv->peer == send->rank);
}

/* Is there an unmatched request on the other side that q could pair with? */
static bool has_partner(const cs_monitor *m, const cs_mon_req *q) {
    bool send = cs_op_is_send(q->op);
    for (int k = 0; k < m->world; k++) {
        if (send && k != q->peer) continue;
        if (!send && q->peer != CS_ANY_SOURCE && k != q->peer) continue;
        const cs_mon_reqtab *t = &m->ranks[k].reqs;
        for (size_t i = 0; i < t->cap; i++) {
            const cs_mon_req *p = t->slot[i];
            if (!p || p->matched || cs_op_is_send(p->op) == send) continue;
            if (send ? cs_mon_fits(q, p) : cs_mon_fits(p, q)) return true;
        }
    }
    return false;
}

/* Move r->wait_open past the requests that are done (settled ones are gone
 * from the table: done too). */
static void skip_done(cs_mon_rank *r) {
    while (r->wait_open < r->nwait) {
        const cs_mon_req *q = tab_find(&r->reqs, r->wait[r->wait_open]);
        if (q && !q->done) break;
        r->wait_open++;
    }
}

/* About to move, known in O(1): every request it waits on is done (its
 * unblock is on its way), or the first open one is paired (bytes in flight).
 * stuck() would say so too, after scanning every open request. */
static bool moving(const cs_monitor *m, int rank) {
    const cs_mon_rank *r = &m->ranks[rank];
    if (r->wait_open == r->nwait) return true;
    const cs_mon_req *q = tab_find(&r->reqs, r->wait[r->wait_open]);
    return q && q->matched;
}

/* A blocked rank is stuck when each request it waits on is unfinished, not
 * already paired (bytes in flight), and has no partner that could pair it. */
static bool stuck(const cs_monitor *m, int rank) {
    const cs_mon_rank *r = &m->ranks[rank];
    bool pending = false;
    for (int i = r->wait_open; i < r->nwait; i++) {
        const cs_mon_req *q = tab_find(&r->reqs, r->wait[i]);
        if (!q || q->done) continue;
        if (q->matched || has_partner(m, q)) return false;
        pending = true;
    }
    return pending;
}

static void declare_deadlock(cs_monitor *m) {
    m->deadlocked = true;
    cs_mon_deadlock_verdict(m, &m->deadlock);
    m->verdict = m->deadlock.text;
    if (m->bus) {
        cs_event ev = {.type = CS_EV_DEADLOCK, .rank = -1, .text = m->verdict};
        cs_bus_emit_locked(m->bus, &ev);
    }
    if (m->on_deadlock) m->on_deadlock(m->ud);
}

/* ---- the wait-for graph: who could still release a stuck rank */

static bool live(const cs_monitor *m, int k) { return m->ranks[k].state < CS_RS_DONE; }

/* Could a rank outside the candidate set still complete q? A send or a
 * receive naming a peer waits on that peer only (AND); a receive from any
 * source on every other rank (OR). */
static bool releasable(const cs_monitor *m, const cs_mon_req *q) {
    if (q->peer != CS_ANY_SOURCE)
        return q->peer >= 0 && q->peer < m->world && live(m, q->peer) &&
               !m->ranks[q->peer].in_deadlock;
    for (int k = 0; k < m->world; k++)
        if (k != q->rank && live(m, k) && !m->ranks[k].in_deadlock) return true;
    return false;
}

/* Rank k stays in the candidate set while one request it needs cannot be
 * completed by anyone outside the set. */
static bool held(const cs_monitor *m, int rank) {
    const cs_mon_rank *r = &m->ranks[rank];
    for (int i = r->wait_open; i < r->nwait; i++) {
        const cs_mon_req *q = tab_find(&r->reqs, r->wait[i]);
        if (q && !q->done && !releasable(m, q)) return true;
    }
    return false;
}

/* The largest set of stuck blocked ranks none of which a rank outside it can
 * release (a greatest fixpoint: start from every stuck rank, drop those that
 * someone outside could still release, until nothing changes). Marks the
 * members in_deadlock and returns how many there are. */
static int find_deadlock(cs_monitor *m) {
    int n = 0;
    for (int k = 0; k < m->world; k++) {
        cs_mon_rank *r = &m->ranks[k];
        r->in_deadlock = r->state == CS_RS_BLOCKED && stuck(m, k);
        n += r->in_deadlock;
    }
    for (bool changed = n > 0; changed;) {
        changed = false;
        for (int k = 0; k < m->world; k++)
            if (m->ranks[k].in_deadlock && !held(m, k)) {
                m->ranks[k].in_deadlock = false;
                n--;
                changed = true;
            }
    }
    return n;
}

/* The verdict waits until the run has settled: every live rank blocked, and
 * none with bytes on their way or a partner posted. Then the report (who waits
 * on what) depends on the program only, not on how far other ranks happened
 * to get (on the tcp engine, events arrive in batches). A rank that never
 * blocks is handled by cs_monitor_declare_stuck at the timeout. */
static void check_progress(cs_monitor *m) {
    /* After a failure the run is ending with that error: waits on the failed
     * rank are its consequence, not a second verdict. */
    if (m->deadlocked || m->nfailed || m->nblocked == 0 || m->nblocked < m->nlive) return;
    /* A rank unwound by the run's end (a timeout, a quit): the waits on it
     * are that end's consequence, not a deadlock (on tcp its exit may come
     * before the others' and used to make one: "rank 1 has already finished"). */
    for (int k = 0; k < m->world; k++)
        if (m->ranks[k].state == CS_RS_ABORTED) return;
    /* The cheap test first, on every rank: a wait_all over thousands of
     * receives would otherwise be scanned in full on each event of its peer. */
    for (int k = 0; k < m->world; k++)
        if (m->ranks[k].state == CS_RS_BLOCKED && moving(m, k)) return;
    /* A collective mismatch waits for the members that have not called it:
     * once they are stuck elsewhere, it is the verdict (the calls that
     * disagree wait for each other forever, which is no deadlock to explain). */
    if (cs_monitor_coll_held(m)) {
        for (int k = 0; k < m->world; k++)
            if (m->ranks[k].state == CS_RS_BLOCKED && cs_monitor_coll_held_missing(m, k) &&
                !stuck(m, k))
                return;
        cs_monitor_coll_declare_held(m);
        return;
    }
    for (int k = 0; k < m->world; k++)
        if (m->ranks[k].state == CS_RS_BLOCKED && !stuck(m, k)) return;
    if (find_deadlock(m) > 0) declare_deadlock(m);
}

bool cs_monitor_declare_stuck(cs_monitor *m) {
    if (!m->deadlocked && !m->nfailed && cs_monitor_coll_held(m)) { /* a missing member runs on */
        cs_monitor_coll_declare_held(m);
        return false;
    }
    if (m->deadlocked || m->nfailed || m->nblocked == 0 || find_deadlock(m) == 0) return false;
    declare_deadlock(m);
    return true;
}

/* Can this event close a deadlock? Only a rank blocking, a rank ending (it
 * can release nobody any more), or a blocked rank still waiting after one of
 * its requests completed (wait_all). Everything else can only help. */
static bool may_close(const cs_monitor *m, const cs_event *ev) {
    const cs_mon_rank *r = &m->ranks[ev->rank];
    switch (ev->type) {
    case CS_EV_BLOCK:
    case CS_EV_EXIT: return true;
    case CS_EV_COMPLETE:
        if (r->state != CS_RS_BLOCKED) return false;
        for (int i = r->wait_open; i < r->nwait; i++) {
            const cs_mon_req *q = tab_find(&r->reqs, r->wait[i]);
            if (q && !q->done) return true;
        }
        return false;
    default: return false;
    }
}

/* ---- pitfalls: each once (its kind and sites), in the order found */

/* Remember a warning; false when the same pitfall is already known. */
static bool add_warning(cs_monitor *m, int rank, int line, const char *text, const char *kind) {
    if (!text) return false;
    cs_pitfall p;
    cs_pitfall_of(&p, rank, line, text, kind);
    for (int i = 0; i < m->npitfalls; i++)
        if (cs_pitfall_same(&m->pitfalls[i], &p)) return false;
    if (m->npitfalls == m->pit_cap) {
        m->pit_cap = m->pit_cap ? m->pit_cap * 2 : 8;
        m->pitfalls = cs_xrealloc(m->pitfalls, (size_t)m->pit_cap * sizeof *m->pitfalls,
                                  "the list of pitfalls");
    }
    p.text = cs_xstrdup(text, "a pitfall");
    m->pitfalls[m->npitfalls++] = p;
    return true;
}

/* A pitfall the monitor found itself: live, it becomes a warn event (which
 * comes back here and is recognised); in a replay the trace carries it. */
static void monitor_warn(cs_monitor *m, cs_pitfall_kind kind, int rank, int line, const char *text) {
    const char *name = cs_pitfall_kind_name(kind);
    if (!add_warning(m, rank, line, text, name) || !m->bus) return;
    cs_event ev = {.type = CS_EV_WARN, .rank = rank, .line = line, .text = text, .pitfall = name};
    cs_bus_emit_locked(m->bus, &ev);
}

static void warn_race(void *ud, int rank, int line, const char *text) {
    monitor_warn(ud, CS_PIT_RACE, rank, line, text);
}

static void warn_unreceived(void *ud, int rank, int line, const char *text) {
    monitor_warn(ud, CS_PIT_UNRECEIVED, rank, line, text);
}

/* Every rank has exited: a clean run may still have left messages behind.
 * An interrupted one (a rank aborted: quit, timeout) left them by design. */
static void check_end(cs_monitor *m) {
    bool aborted = false;
    for (int k = 0; k < m->world; k++) {
        if (m->ranks[k].state < CS_RS_DONE) return;
        aborted |= m->ranks[k].state == CS_RS_ABORTED;
    }
    m->ended = true;
    /* A collective mismatch whose missing members finished without calling it. */
    if (!m->deadlocked && !m->nfailed && !aborted && cs_monitor_coll_held(m))
        cs_monitor_coll_declare_held(m);
    /* Eager sends let a rank leave a collective that others never called:
     * nothing blocks, yet the collective can never complete. */
    if (!m->deadlocked && !m->nfailed && !aborted && cs_monitor_coll_unfinished(m))
        declare_deadlock(m);
    if (!m->deadlocked && !m->nfailed && !aborted) cs_mon_leftovers(m, warn_unreceived, m);
}

/* ---- the fold */

static void fold_post(cs_monitor *m, cs_mon_rank *r, const cs_event *ev) {
    cs_mon_req *q = m->nspare ? m->spare[--m->nspare]
                              : cs_xcalloc(1, sizeof *q, "a request of the monitor");
    uint32_t *clock = q->clock; /* a spare's, for cs_monitor_race_post to fill */
    *q = (cs_mon_req){.rank = ev->rank, .id = ev->req, .op = ev->op, .peer = ev->peer,
                      .tag = ev->tag, .ctx = ev->ctx, .bytes = ev->bytes, .dtype = ev->dtype,
                      .ndim = ev->ndim, .line = ev->line, .eager = ev->eager, .clock = clock};
    memcpy(q->shape, ev->shape, sizeof q->shape);
    tab_put(&r->reqs, q);
    cs_monitor_race_post(m, q, warn_race);
    if (cs_op_is_send(q->op)) m->unmatched++;
    r->line = ev->line;
    if (ev->ctx == 0) { /* the script's own operation, not a collective's traffic */
        r->op = (int)ev->op;
        r->peer = ev->peer;
    }
}

static void fold_match(cs_monitor *m, const cs_event *ev) {
    cs_mon_req *rq = tab_find(&m->ranks[ev->rank].reqs, ev->req);
    if (rq) rq->matched = true;
    if (ev->peer >= 0 && ev->peer < m->world) {
        cs_mon_rank *s = &m->ranks[ev->peer];
        cs_mon_req *sq = tab_find(&s->reqs, ev->peer_req);
        if (sq && !sq->matched) cs_monitor_race_match(m, rq, sq, warn_race);
        if (sq && !sq->matched) {
            sq->matched = true;
            m->unmatched--;
            settle(m, s, sq);
        }
    }
    if (ev->ctx == 0) {
        m->messages++;
        m->bytes += ev->bytes;
    }
}

/* A wait that ends with a request still open was cut short: the run ended
 * (a timeout, an interrupt) and woke it, or the rank died in it. */
static void note_cut(cs_mon_rank *r) {
    skip_done(r);
    r->cut = r->wait_open < r->nwait;
    if (r->cut) {
        r->cut_req = r->wait[r->wait_open];
        r->cut_line = r->wait_line;
    }
}

static void fold_block(cs_mon_rank *r, const cs_event *ev) {
    if (ev->nreqs > r->wait_cap) {
        r->wait = cs_xrealloc(r->wait, (size_t)ev->nreqs * sizeof *r->wait, "a rank's wait list");
        r->wait_cap = ev->nreqs;
    }
    if (ev->nreqs) memcpy(r->wait, ev->reqs, (size_t)ev->nreqs * sizeof *r->wait);
    r->nwait = ev->nreqs;
    r->wait_open = 0;
    r->wait_line = ev->line;
}

static void copy_text(char **dst, const char *src) {
    free(*dst);
    *dst = cs_xstrdup(src, "a text of the monitor");
}

static void fold_error(cs_monitor *m, int rank, const cs_event *ev) {
    cs_mon_rank *r = &m->ranks[rank];
    copy_text(&r->error, ev->text);
    r->status = ev->status;
    if (ev->line > 0) r->end_line = ev->line;
    if (r->state != CS_RS_FAILED) {
        /* Who waits on it now: the report names them (the run stops them). */
        if (!m->nfailed) r->waiters = cs_mon_failed_waiters(m, rank);
        if (!m->nfailed) m->fail_status = ev->status;
        m->nfailed++;
    }
    set_state(m, rank, CS_RS_FAILED, ev->t);
}

/* Events that belong to no rank: the header, the verdict, the run's own end. */
static int fold_rankless(cs_monitor *m, const cs_event *ev) {
    switch (ev->type) {
    case CS_EV_RUN:
        copy_text(&m->script, ev->text);
        copy_text(&m->engine, ev->engine);
        copy_text(&m->send_mode, ev->send_mode);
        m->have_run = true;
        return 0;
    case CS_EV_DEADLOCK:
        if (!m->deadlocked) { /* a replay of a verdict declared at a timeout: its ranks */
            m->deadlocked = true;
            find_deadlock(m);
            /* The structure from the model, as live; the words as recorded. */
            cs_mon_deadlock_verdict(m, &m->deadlock);
            if (ev->text) copy_text(&m->deadlock.text, ev->text);
            m->verdict = m->deadlock.text;
        }
        return 0;
    case CS_EV_WARN:
        if (ev->text && strncmp(ev->text, CS_RECHECK_PREFIX, strlen(CS_RECHECK_PREFIX)) == 0)
            copy_text(&m->recheck, ev->text); /* the summary's line, not a pitfall */
        else add_warning(m, ev->rank, ev->line, ev->text, ev->pitfall);
        return 0;
    case CS_EV_ERROR:
        /* A collective mismatch: the coll events it came from gave it already. */
        if (cs_monitor_coll_verdict(m) && ev->text && !strcmp(ev->text, cs_monitor_coll_verdict(m)))
            return 0;
        if (!m->run_error) {
            copy_text(&m->run_error, ev->text);
            m->run_status = ev->status;
        }
        return 0;
    default: return -1;
    }
}

int cs_monitor_fold(cs_monitor *m, const cs_event *ev) {
    if (ev->type == CS_EV_RUN || ev->rank < 0) return fold_rankless(m, ev);
    if (ev->rank >= m->world) return -1;
    cs_mon_rank *r = &m->ranks[ev->rank];
    r->nevents++;
    if (r->state == CS_RS_IDLE) set_state(m, ev->rank, CS_RS_RUNNING, ev->t);
    switch (ev->type) {
    case CS_EV_POST: fold_post(m, r, ev); break;
    case CS_EV_MATCH: fold_match(m, ev); break;
    case CS_EV_COMPLETE: {
        cs_mon_req *q = tab_find(&r->reqs, ev->req);
        if (q) {
            q->done = true;
            cs_monitor_race_complete(m, q);
            settle(m, r, q);
        }
        skip_done(r);
        break;
    }
    case CS_EV_WAIT: /* what it waits on before it blocks, if it does: a rank
                      * stopped while it spins or polls was in this wait */
        fold_block(r, ev);
        skip_done(r);
        break;
    case CS_EV_BLOCK:
        fold_block(r, ev);
        cs_monitor_race_waited(m, ev->rank, ev->reqs, ev->nreqs);
        set_state(m, ev->rank, CS_RS_BLOCKED, ev->t);
        break;
    case CS_EV_UNBLOCK:
        note_cut(r);
        r->nwait = r->wait_open = 0;
        set_state(m, ev->rank, CS_RS_RUNNING, ev->t);
        break;
    case CS_EV_COLL: cs_monitor_coll_fold(m, ev); break;
    case CS_EV_COMPUTE:
        set_state(m, ev->rank, ev->begin ? CS_RS_COMPUTING : CS_RS_RUNNING, ev->t);
        break;
    case CS_EV_WARN: add_warning(m, ev->rank, ev->line, ev->text, ev->pitfall); break;
    case CS_EV_ERROR: fold_error(m, ev->rank, ev); break;
    case CS_EV_EXIT:
        /* no unblock: it died asleep, or it was stopped before it blocked */
        if (r->state == CS_RS_BLOCKED || (ev->status && !r->cut)) note_cut(r);
        if (r->state != CS_RS_FAILED) {
            if (ev->line > 0) r->end_line = ev->line; /* where an abort stopped it */
            set_state(m, ev->rank, ev->status == 0 ? CS_RS_DONE : CS_RS_ABORTED, ev->t);
        }
        if (ev->status) r->status = ev->status;
        check_end(m);
        break;
    default: break;
    }
    if (may_close(m, ev)) check_progress(m);
    return 0;
}

static void monitor_emit(void *ud, const cs_event *ev) { cs_monitor_fold(ud, ev); }

cs_sink cs_monitor_sink(cs_monitor *m) { return (cs_sink){monitor_emit, m}; }
