/* monitor_race.c -- message races: a receive from any source whose match
 * depends on timing.
 *
 * Happens-before is tracked with one vector clock per rank, kept here from
 * the event stream (nothing travels on the engines' wire): a rank ticks on
 * each post; a receive's match joins the send's clock at its post (early for
 * an irecv, which can only hide a race, never invent one); a rendezvous send,
 * which completes only after its match, learns the receive's clock at its
 * post, and, when that receive is from any source, that it is over (its
 * wild's from_at). Eager sends complete when buffered and learn nothing.
 *
 * A receive R is over for its rank at the rank's next post after it: a
 * blocking receive's next post, an irecv's first post after a wait on it
 * (its block event: the rank announces every wait on an irecv from any
 * source, api.c). Posts between an irecv and its wait come before R's match
 * as far as the program says, so a send they cause can still race with R.
 * Everyone else learns that R is over from its rank's later posts, or, when
 * R took a rendezvous send, from that send's completion.
 *
 * A receive R from any source (the script's own traffic) that matched a send
 * from rank a races with a send S from another rank b, to the same rank, tag
 * and context, when S could have been the one R took:
 *   - S was posted and unmatched when R matched, and no receive posted before
 *     R on that rank could take S; or
 *   - S was matched later by a receive posted after R, and S does not happen
 *     after R's match (its clock has not seen it); or
 *   - S was posted after R matched, without its clock having seen it, and no
 *     receive posted before R on that rank could take S: the case above,
 *     told at the post, for a send that nothing ever matches (a deadlock).
 * Reported once per receive site, as a warning of the receiving rank.
 * Worlds above CS_RACE_MAX_WORLD ranks are not checked (the clocks are
 * world x world).
 *
 * Before the first receive from any source (in the stream's order) no clock
 * is kept: a race needs such a receive, and whether a clock knows it is over
 * compares counters ticked after its post, which no earlier post's clock can
 * reach. So the clocks start at zero with that post, and a request posted
 * before it has none: a send without a clock knows of no receive from any
 * source (nor of anything else that matters here).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "monitor_internal.h"
#include "xalloc.h"

#define CS_RACE_MAX_WORLD 64

/* An any-source receive that matched: the sends after it may race with it. */
typedef struct wild {
    int rank, line, tag, ctx;
    uint64_t id;          /* its request: later receives of the rank have larger ids */
    int from, from_line;  /* the send it took */
    uint64_t from_id;     /* that send's request */
    uint32_t at;          /* its rank's counter at its next post after it is over
                           * (NOT_YET: an irecv not waited on yet) */
    uint32_t from_at;     /* the sender's counter once its rendezvous send has
                           * completed, so R has taken it (NOT_YET: not yet, or eager) */
} wild;

#define NOT_YET UINT32_MAX

/* Does clock c know that w is over? */
static bool knows(const uint32_t *c, const wild *w) {
    return c[w->rank] >= w->at || c[w->from] >= w->from_at;
}

/* A rendezvous isend complete before its rank waited on it: what it learnt,
 * kept until that wait, in a table by rank and request (a script may have
 * 80,000 of them in flight and wait on them all at once). A free slot has
 * no rclock. */
typedef struct learnt {
    int rank;
    uint64_t id;
    uint32_t *rclock;
} learnt;

struct cs_mon_race {
    int world;
    bool any_source;      /* a receive from any source has been posted */
    learnt *l;
    size_t nl, lcap;      /* lcap: 0 or a power of two */
    uint32_t *vc;         /* world x world: vc[r * world + k] */
    wild *w;
    int nw, cap;
    int *sites;           /* (rank, line) pairs already reported */
    int nsites, site_cap;
};

static uint32_t *clock_of(cs_mon_race *x, int r) { return x->vc + (size_t)r * (size_t)x->world; }

static cs_mon_race *race_get(cs_monitor *m) {
    if (m->world <= 0 || m->world > CS_RACE_MAX_WORLD) return NULL;
    if (!m->race) {
        m->race = cs_xcalloc(1, sizeof *m->race, "the race detector");
        m->race->world = m->world;
        m->race->vc = cs_xcalloc((size_t)m->world * (size_t)m->world, sizeof *m->race->vc,
                                 "the race detector's clocks");
    }
    return m->race;
}

void cs_monitor_race_destroy(cs_monitor *m) {
    if (!m->race) return;
    free(m->race->vc);
    free(m->race->w);
    free(m->race->sites);
    for (size_t i = 0; i < m->race->lcap; i++) free(m->race->l[i].rclock);
    free(m->race->l);
    free(m->race);
    m->race = NULL;
}

/* into c when it is not NULL: a settled request's clock memory, reused */
static uint32_t *copy_clock(cs_mon_race *x, int r, uint32_t *c) {
    if (!c) c = cs_xmalloc((size_t)x->world * sizeof *c, "a request's clock");
    memcpy(c, clock_of(x, r), (size_t)x->world * sizeof *c);
    return c;
}

static void join(cs_mon_race *x, int r, const uint32_t *other) {
    uint32_t *c = clock_of(x, r);
    for (int k = 0; k < x->world; k++)
        if (other[k] > c[k]) c[k] = other[k];
}

/* ---- reporting */

static void report(cs_monitor *m, cs_mon_race *x, const wild *w, int b, int b_line,
                   void (*warn)(void *, int, int, const char *)) {
    for (int i = 0; i < x->nsites; i++)
        if (x->sites[2 * i] == w->rank && x->sites[2 * i + 1] == w->line) return;
    if (x->nsites == x->site_cap) {
        x->site_cap = x->site_cap ? x->site_cap * 2 : 8;
        x->sites = cs_xrealloc(x->sites, (size_t)x->site_cap * 2 * sizeof *x->sites,
                               "the race detector's sites");
    }
    x->sites[2 * x->nsites] = w->rank;
    x->sites[2 * x->nsites++ + 1] = w->line;
    /* The senders in rank order: the words do not depend on which came first. */
    int r1 = w->from, l1 = w->from_line, r2 = b, l2 = b_line;
    if (r2 < r1) r1 = b, l1 = b_line, r2 = w->from, l2 = w->from_line;
    const char *s = cs_mon_script(m);
    char text[512];
    snprintf(text, sizeof text,
             "%s:%d: message race: this receive from any source could match the send from rank "
             "%d at %s:%d or the send from rank %d at %s:%d; which arrives first depends on "
             "timing. Name the source, use distinct tags, or order the sends with messages",
             s, w->line, r1, s, l1, r2, s, l2);
    warn(m, w->rank, w->line, text);
}

/* ---- the fold */

/* Could a receive of rank d posted before request id, still unmatched, take send s? */
static bool taken_earlier(const cs_monitor *m, int d, uint64_t id, const cs_mon_req *s) {
    const cs_mon_reqtab *t = &m->ranks[d].reqs;
    for (size_t i = 0; i < t->cap; i++) {
        const cs_mon_req *p = t->slot[i];
        if (p && !cs_op_is_send(p->op) && !p->matched && p->id < id && cs_mon_fits(s, p))
            return true;
    }
    return false;
}

/* q->clock, when set, is memory to reuse (its contents mean nothing yet). */
void cs_monitor_race_post(cs_monitor *m, cs_mon_req *q,
                          void (*warn)(void *, int, int, const char *)) {
    cs_mon_race *x = race_get(m);
    if (!x || q->rank < 0 || q->rank >= x->world) {
        free(q->clock);
        q->clock = NULL;
        return;
    }
    if (q->peer == CS_ANY_SOURCE && !cs_op_is_send(q->op)) x->any_source = true;
    if (!x->any_source) { /* see "Before the first receive from any source" above */
        free(q->clock);
        q->clock = NULL;
        return;
    }
    clock_of(x, q->rank)[q->rank]++;
    q->clock = copy_clock(x, q->rank, q->clock);
    if (!cs_op_is_send(q->op) || q->ctx != 0) return;
    /* Any-source receives of its destination that matched before this send,
     * which has not seen them: it could have been the one they took. */
    for (int i = 0; i < x->nw; i++) {
        const wild *w = &x->w[i];
        if (w->rank == q->peer && w->from != q->rank && w->tag == q->tag && w->ctx == q->ctx &&
            !knows(q->clock, w) && !taken_earlier(m, w->rank, w->id, q))
            report(m, x, w, q->rank, q->line, warn);
    }
}

void cs_monitor_race_match(cs_monitor *m, cs_mon_req *r, cs_mon_req *s,
                           void (*warn)(void *, int, int, const char *)) {
    cs_mon_race *x = race_get(m);
    if (!x || !r || !s || r->rank >= x->world || s->rank >= x->world) return;
    int d = r->rank;
    if (s->clock) join(x, d, s->clock);
    if (!r->clock) return;
    /* A blocking receive is over by the rank's next post: a send that knows
     * that post (its counter) comes after the receive. An irecv is over at
     * the rank's first post after its wait, which may not have come yet. */
    uint32_t at = r->op != CS_OP_IRECV ? r->clock[d] + 1 : r->waited_at ? r->waited_at : NOT_YET;
    /* A rendezvous send learns what the receive's rank did before posting
     * it, not what it did after: an irecv may match long after its post,
     * before or after its rank reached its wait. That a receive from any
     * source is over is known through the wild below (from_at). */
    if (!s->eager && !s->done && !s->rclock) {
        s->rclock = cs_xmalloc((size_t)x->world * sizeof *s->rclock, "a request's clock");
        memcpy(s->rclock, r->clock, (size_t)x->world * sizeof *s->rclock);
    }
    if (r->ctx != 0) return;
    /* Earlier any-source receives of this rank that s could have matched. */
    for (int i = 0; i < x->nw; i++) {
        wild *w = &x->w[i];
        if (w->rank == d && w->from != s->rank && w->tag == s->tag && w->ctx == s->ctx &&
            w->id < r->id && (!s->clock || !knows(s->clock, w)))
            report(m, x, w, s->rank, s->line, warn);
    }
    if (r->peer != CS_ANY_SOURCE) return;
    wild w = {d, r->line, r->tag, r->ctx, r->id, s->rank, s->line, s->id, at, NOT_YET};
    /* Sends from other ranks waiting right now that it could have taken. */
    for (int k = 0; k < m->world; k++) {
        if (k == s->rank) continue;
        const cs_mon_reqtab *t = &m->ranks[k].reqs;
        for (size_t i = 0; i < t->cap; i++) {
            const cs_mon_req *p = t->slot[i];
            if (p && cs_mon_req_in_flight(p) && cs_mon_fits(p, r) && !taken_earlier(m, d, r->id, p))
                report(m, x, &w, k, p->line, warn);
        }
    }
    /* Forget receives no later send can race with: every rank has seen them. */
    for (int i = 0; i < x->nw;) {
        bool seen = true;
        for (int k = 0; k < x->world && seen; k++) seen = knows(clock_of(x, k), &x->w[i]);
        if (seen) x->w[i] = x->w[--x->nw];
        else i++;
    }
    if (x->nw == x->cap) {
        x->cap = x->cap ? x->cap * 2 : 8;
        x->w = cs_xrealloc(x->w, (size_t)x->cap * sizeof *x->w, "the race detector");
    }
    x->w[x->nw++] = w;
}

/* ---- the table of what isends learnt before their wait */

static size_t learnt_home(const cs_mon_race *x, int rank, uint64_t id) {
    uint64_t h = (id ^ ((uint64_t)(uint32_t)rank << 40)) * 0x9e3779b97f4a7c15ULL;
    return (size_t)(h >> 17) & (x->lcap - 1);
}

static void learnt_put(cs_mon_race *x, int rank, uint64_t id, uint32_t *rclock) {
    if ((x->nl + 1) * 2 > x->lcap) { /* grow: every entry to its new home */
        learnt *old = x->l;
        size_t n = x->lcap;
        x->lcap = n ? n * 2 : 16;
        x->l = cs_xcalloc(x->lcap, sizeof *x->l, "the race detector");
        x->nl = 0;
        for (size_t i = 0; i < n; i++)
            if (old[i].rclock) learnt_put(x, old[i].rank, old[i].id, old[i].rclock);
        free(old);
    }
    size_t i = learnt_home(x, rank, id);
    while (x->l[i].rclock) i = (i + 1) & (x->lcap - 1);
    x->l[i] = (learnt){rank, id, rclock};
    x->nl++;
}

/* Take (rank, id)'s clock out of the table; NULL when it is not there. */
static uint32_t *learnt_take(cs_mon_race *x, int rank, uint64_t id) {
    if (!x->nl) return NULL;
    size_t i = learnt_home(x, rank, id);
    while (x->l[i].rclock && (x->l[i].rank != rank || x->l[i].id != id))
        i = (i + 1) & (x->lcap - 1);
    uint32_t *rc = x->l[i].rclock;
    if (!rc) return NULL;
    x->l[i].rclock = NULL;
    x->nl--;
    /* the entries after it in its run move to where they now belong */
    for (size_t j = (i + 1) & (x->lcap - 1); x->l[j].rclock; j = (j + 1) & (x->lcap - 1)) {
        learnt e = x->l[j];
        x->l[j].rclock = NULL;
        x->nl--;
        learnt_put(x, e.rank, e.id, e.rclock);
    }
    return rc;
}

size_t cs_monitor_race_unwaited(const cs_monitor *m) { return m->race ? m->race->nl : 0; }

/* Rank learns that its rendezvous send id matched a receive of clock rc. */
static void learn(cs_mon_race *x, int rank, uint64_t id, const uint32_t *rc) {
    join(x, rank, rc);
    uint32_t now = ++clock_of(x, rank)[rank];
    /* From here on its rank's posts carry that the irecv that took it matched. */
    for (int i = 0; i < x->nw; i++)
        if (x->w[i].from == rank && x->w[i].from_id == id) x->w[i].from_at = now;
}

void cs_monitor_race_complete(cs_monitor *m, cs_mon_req *q) {
    cs_mon_race *x = race_get(m);
    if (!x || !q->rclock || q->rank >= x->world) return;
    /* The script's isend completes behind its rank's back: the rank knows
     * it only at its wait (a blocking send, or an isend already waited on,
     * is in that wait now; a collective waits on its own within the call).
     * Before any receive from any source was posted, knowing it now hides
     * nothing: the receive's clock predates every such receive, whose
     * counters (at, from_at) it therefore cannot reach. So it is credited
     * at once, and the thread engine does not tell those waits (api.c). */
    if (q->op == CS_OP_ISEND && q->ctx == 0 && !q->waited_at && x->any_source) {
        learnt_put(x, q->rank, q->id, q->rclock);
        q->rclock = NULL;
        return;
    }
    learn(x, q->rank, q->id, q->rclock);
}

void cs_monitor_race_waited(cs_monitor *m, int rank, const uint64_t *reqs, int n) {
    cs_mon_race *x = race_get(m);
    if (!x || !reqs || rank < 0 || rank >= x->world) return;
    for (int j = 0; j < n && x->nl; j++) {
        uint32_t *rc = learnt_take(x, rank, reqs[j]);
        if (!rc) continue;
        learn(x, rank, reqs[j], rc);
        free(rc);
    }
    uint32_t next = clock_of(x, rank)[rank] + 1;
    for (int j = 0; j < n; j++) {
        cs_mon_req *q = cs_mon_lookup(m, rank, reqs[j]);
        if (q && !q->waited_at) q->waited_at = next;
        for (int i = 0; i < x->nw; i++)
            if (x->w[i].rank == rank && x->w[i].id == reqs[j] && x->w[i].at == NOT_YET)
                x->w[i].at = next;
    }
}

int cs_monitor_race_took(const cs_monitor *m, int rank, int from, int ctx, uint64_t before) {
    const cs_mon_race *x = m->race;
    for (int i = 0; x && i < x->nw; i++) {
        const wild *w = &x->w[i];
        if (w->rank != rank || w->from != from || w->ctx != ctx || w->id >= before) continue;
        for (int k = 0; k < x->nsites; k++)
            if (x->sites[2 * k] == w->rank && x->sites[2 * k + 1] == w->line) return w->line;
    }
    return 0;
}

int cs_monitor_race_left(const cs_monitor *m, const cs_mon_req *s, int *took) {
    const cs_mon_race *x = m->race;
    for (int i = 0; x && i < x->nw; i++) {
        const wild *w = &x->w[i];
        if (w->rank != s->peer || w->from == s->rank || w->tag != s->tag || w->ctx != s->ctx ||
            (s->clock && knows(s->clock, w)))
            continue;
        for (int k = 0; k < x->nsites; k++)
            if (x->sites[2 * k] == w->rank && x->sites[2 * k + 1] == w->line) {
                *took = w->from;
                return w->line;
            }
    }
    return 0;
}
