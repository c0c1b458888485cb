/* export_svg.c -- the space-time diagram of a trace as one self-contained
 * SVG, for a slide: a lane per rank, time flowing right, an arrow per message
 * with its size and tag, blocked stretches as bars, collective calls as
 * labelled bands, the deadlock's ranks and their waits in red with the
 * verdict beneath, the pitfalls numbered at their sites.
 *
 * The columns are the visualizer's diagram rows (viz/history.c), so the
 * picture aggregates as the TUI does: repeated identical messages share an
 * arrow with a count, and past --width columns the oldest leave; the
 * picture says what was. A collective's own messages are drawn inside its
 * band by step of its algorithm's schedule. This is the picture in event
 * order; a trace with a network model is drawn to scale by
 * export_svg_scale.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "export_svg.h"
#include "history.h"
#include "model.h"

#define CW 88          /* a column's width: a label of 12 characters fits */
#define LEFT 96        /* the rank names */
#define TOP 112        /* room above the lanes for the bands' labels */
#define FONT CS_SVG_FONT
#define SMALL CS_SVG_SMALL
#define DEFAULT_COLS 120

typedef cs_svg_theme theme;

/* ---- the collective calls, by identity
 *
 * A call is (context, number): every member numbers its calls on a context
 * the same way (its entries so far), and the call's own messages carry that
 * number as their tag. So a message is counted and drawn in the band of its
 * own call even when calls overlap in time, and a band ends at its own
 * call's exit row. */

#define STEP_W 34     /* a step of an algorithm's schedule inside its band */
#define DRAW_STEPS 32 /* past this many steps or DRAW_MSGS messages a band */
#define DRAW_MSGS 512 /* names its phases and counts instead of drawing each */
#define NO_ROW UINT64_MAX

typedef struct cmsg {
    int from, to, step;
} cmsg;

typedef struct call {
    int ctx;
    uint32_t num;
    size_t first;    /* the event of its first entry: name, algorithm, reduction */
    int members;     /* its group's size */
    uint64_t row;    /* its band's row (absolute, as the history counts rows) */
    bool closed;     /* a member left: the band's end row exists */
    uint64_t nmsg;   /* its own messages */
    int steps;       /* the most any member sent: the schedule's length */
    cmsg *msg;       /* the first DRAW_MSGS of them */
    int *sent;       /* per rank: its messages so far, the step of its next */
    uint8_t *in;     /* per rank: 0 not entered, 1 inside, 2 left */
    uint64_t *req;   /* per rank: its latest request when it entered */
} call;

/* Where a diagram row is drawn: a row of ranks that had not entered an open
 * call when they did their part (an arrow between two ranks still finishing
 * their own work while others already wait in an all_reduce, or an eager
 * send received after its sender entered) goes just before that call's band,
 * so the band holds its own call's traffic only. Per-rank order is kept:
 * such a row comes before its ranks' entries anyway. */
typedef struct rowinfo {
    uint64_t before; /* the band row it is drawn before; NO_ROW: in place */
    uint8_t *hide;   /* per rank: waiting inside that call then (no state bar) */
} rowinfo;

typedef struct pass {
    const cs_export_ctx *x;
    int world;
    cs_history h;
    call *calls;
    size_t ncap, ncalls;   /* ring of the latest calls: as many as rows */
    rowinfo *rows;         /* h.cap entries, by absolute row % h.cap */
    uint8_t *hide;
    uint64_t *req;         /* per rank: its latest request posted */
    cs_export_reqmap count; /* (rank, context) -> calls entered */
    uint64_t moved;
} pass;

static call *find_call(pass *p, int ctx, uint32_t num) {
    size_t kept = p->ncalls < p->ncap ? p->ncalls : p->ncap;
    for (size_t j = 1; j <= kept; j++) {
        call *c = &p->calls[(p->ncalls - j) % p->ncap];
        if (c->ctx == ctx && c->num == num) return c;
    }
    return NULL;
}

static call *new_call(pass *p, int ctx, uint32_t num, size_t ev, int members) {
    call *c = &p->calls[p->ncalls++ % p->ncap];
    if (!c->sent || !c->in || !c->msg || !c->req) { /* a slot's first use: all four, or none */
        free(c->sent), free(c->in), free(c->msg), free(c->req);
        c->sent = calloc((size_t)p->world, sizeof *c->sent);
        c->in = calloc((size_t)p->world, 1);
        c->msg = malloc(DRAW_MSGS * sizeof *c->msg);
        c->req = calloc((size_t)p->world, sizeof *c->req);
        if (!c->sent || !c->in || !c->msg || !c->req) return NULL;
    }
    memset(c->sent, 0, (size_t)p->world * sizeof *c->sent);
    memset(c->in, 0, (size_t)p->world);
    cmsg *m = c->msg;
    int *sent = c->sent;
    uint8_t *in = c->in;
    uint64_t *req = c->req;
    *c = (call){.ctx = ctx, .num = num, .first = ev, .members = members, .row = NO_ROW,
                .msg = m, .sent = sent, .in = in, .req = req};
    return c;
}

/* A collective entry or exit: the call it belongs to. */
static int on_coll(pass *p, const cs_event *e, size_t i, call **out) {
    size_t n = 0;
    *out = NULL;
    cs_export_reqmap_get(&p->count, e->rank, (unsigned long long)e->ctx, &n);
    uint32_t num = (uint32_t)(e->begin ? n : n ? n - 1 : 0) & 0x7fffffffu;
    if (e->begin && cs_export_reqmap_put(&p->count, e->rank, (unsigned long long)e->ctx, n + 1) < 0)
        return -1;
    call *c = find_call(p, e->ctx, num);
    if (!c && e->begin && !(c = new_call(p, e->ctx, num, i, e->ngroup > 0 ? e->ngroup : p->world)))
        return -1;
    if (!c) return 0;
    c->in[e->rank] = e->begin ? 1 : 2;
    if (e->begin) c->req[e->rank] = p->req[e->rank];
    if (!e->begin) c->closed = true;
    *out = c;
    return 0;
}

static void on_match(pass *p, const cs_event *e) {
    call *c = find_call(p, e->ctx, (uint32_t)e->tag);
    if (!c || e->peer < 0 || e->peer >= p->world) return;
    int step = c->sent[e->peer]++;
    if (step + 1 > c->steps) c->steps = step + 1;
    if (c->nmsg < DRAW_MSGS) c->msg[c->nmsg] = (cmsg){e->peer, e->rank, step};
    c->nmsg++;
}

/* Whether rank k's part in the row made by event e came after k entered
 * call c. A message's send or receive posted before the entry (an eager
 * send, an irecv, or a match seen after the sender's entry, as a tcp run's
 * events may come) is not: the message is drawn before the band. */
static bool inside(const call *c, int k, const cs_event *e) {
    if (c->in[k] != 1 || e->type != CS_EV_MATCH) return c->in[k] != 0;
    return (k == e->rank ? e->req : e->peer_req) > c->req[k];
}

/* A new diagram row, made by event e: drawn in place, or before the band of
 * an open call none of its ranks was in then (the earliest such band). */
static void place_row(pass *p, uint64_t abs, const cs_event *e) {
    rowinfo *ri = &p->rows[abs % p->h.cap];
    ri->before = NO_ROW;
    memset(ri->hide, 0, (size_t)p->world);
    const cs_hrow *r = cs_history_row(&p->h, (size_t)(abs - p->h.dropped_rows));
    if (!r || (r->kind != CS_HROW_MSG && r->kind != CS_HROW_WARN && r->kind != CS_HROW_ERROR &&
               r->kind != CS_HROW_EXIT) || r->from < 0)
        return;
    size_t kept = p->ncalls < p->ncap ? p->ncalls : p->ncap;
    const call *best = NULL;
    for (size_t j = 1; j <= kept; j++) {
        const call *c = &p->calls[(p->ncalls - j) % p->ncap];
        if (c->row == NO_ROW || c->closed || c->row >= abs || inside(c, r->from, e) ||
            (r->kind == CS_HROW_MSG && r->to >= 0 && inside(c, r->to, e)))
            continue;
        if (!best || c->row < best->row) best = c;
    }
    if (!best) return;
    ri->before = best->row;
    for (int k = 0; k < p->world; k++) ri->hide[k] = best->in[k] == 1;
    p->moved++;
}

static void pass_free(pass *p) {
    for (size_t j = 0; p->calls && j < p->ncap; j++) {
        free(p->calls[j].sent);
        free(p->calls[j].in);
        free(p->calls[j].msg);
        free(p->calls[j].req);
    }
    free(p->calls);
    free(p->rows);
    free(p->hide);
    free(p->req);
    cs_export_reqmap_free(&p->count);
    cs_history_free(&p->h);
}

/* Every event of the window through the visualizer's history, the calls
 * tracked beside it. */
static int pass_run(pass *p, const cs_export_ctx *x, size_t maxcols) {
    const cs_replay *rp = x->rp;
    memset(p, 0, sizeof *p);
    p->x = x;
    p->world = rp->world;
    if (cs_history_init(&p->h, p->world, maxcols) < 0) return -1;
    p->ncap = p->h.cap + 8;
    p->calls = calloc(p->ncap, sizeof *p->calls);
    p->rows = calloc(p->h.cap, sizeof *p->rows);
    p->hide = calloc(p->h.cap, (size_t)p->world);
    p->req = calloc((size_t)p->world, sizeof *p->req);
    if (!p->calls || !p->rows || !p->hide || !p->req) return -1;
    for (size_t j = 0; j < p->h.cap; j++) p->rows[j].hide = p->hide + j * (size_t)p->world;
    for (size_t i = x->from; i < x->to; i++) {
        const cs_event *e = &rp->ev[i];
        bool ranked = e->rank >= 0 && e->rank < p->world;
        call *c = NULL;
        if (e->type == CS_EV_COLL && ranked && on_coll(p, e, i, &c) < 0) return -1;
        if (e->type == CS_EV_MATCH && e->ctx != 0 && ranked) on_match(p, e);
        if (e->type == CS_EV_POST && ranked && e->req > p->req[e->rank]) p->req[e->rank] = e->req;
        uint64_t before = p->h.dropped_rows + p->h.n;
        cs_history_add(&p->h, e);
        uint64_t after = p->h.dropped_rows + p->h.n;
        for (uint64_t a = before; a < after; a++) {
            const cs_hrow *r = cs_history_row(&p->h, (size_t)(a - p->h.dropped_rows));
            if (c && r->kind == CS_HROW_COLL && r->begin && r->tag == c->ctx && r->call == c->num)
                c->row = a;
            place_row(p, a, e);
        }
    }
    return 0;
}

/* The call whose band opens at row i. */
static const call *band_call(const pass *p, const cs_hrow *r, uint64_t abs) {
    size_t kept = p->ncalls < p->ncap ? p->ncalls : p->ncap;
    for (size_t j = 1; j <= kept; j++) {
        const call *c = &p->calls[(p->ncalls - j) % p->ncap];
        if (c->row == abs && c->ctx == r->tag && c->num == r->call) return c;
    }
    return NULL;
}

/* The row where the band that opens at row b ends: its own call's exit. */
static size_t band_end(const cs_history *h, size_t b) {
    const cs_hrow *r = cs_history_row(h, b);
    for (size_t i = b + 1; i < h->n; i++) {
        const cs_hrow *e = cs_history_row(h, i);
        if (e->kind == CS_HROW_COLL && !e->begin && e->tag == r->tag && e->call == r->call) return i;
    }
    return h->n - 1;
}

/* ---- the phases of the built-in algorithms
 *
 * A member's k-th message in a call (its step k, from 0) falls in a phase of
 * the algorithm's schedule: the ring all-reduce's first n - 1 steps are its
 * reduce-scatter, the next n - 1 its all-gather; the other algorithms have
 * one phase of rounds or sends. */
typedef struct phase_rule {
    const char *name, *algo; /* NULL: any */
    const char *phase[2], *abbr[2];
    bool split;              /* two phases of n - 1 steps each */
} phase_rule;

static const phase_rule phase_rules[] = {
    {"all_reduce", "ring", {"reduce-scatter", "all-gather"}, {"RS", "AG"}, true},
    {"reduce_scatter", "ring", {"reduce-scatter", NULL}, {"RS", NULL}, false},
    {"all_gather", "ring", {"all-gather", NULL}, {"AG", NULL}, false},
    {NULL, "recursive_doubling", {"doubling rounds", NULL}, {"R", NULL}, false},
    {NULL, "recursive_halving", {"halving, doubling", NULL}, {"R", NULL}, false},
    {NULL, "dissemination", {"dissemination rounds", NULL}, {"R", NULL}, false},
    {NULL, "tree", {"tree sends", NULL}, {"T", NULL}, false},
    {NULL, NULL, {"steps", NULL}, {"S", NULL}, false},
};

static const phase_rule *rule_for(const char *name, const char *algo) {
    for (size_t i = 0;; i++) {
        const phase_rule *r = &phase_rules[i];
        if ((!r->name || (name && !strcmp(r->name, name))) &&
            (!r->algo || (algo && !strcmp(r->algo, algo))))
            return r;
    }
}

/* Step k's phase (0 or 1) and its number within the phase (from 1). */
static int phase_of(const phase_rule *r, int members, int k, int *num) {
    if (r->split && members > 1 && k >= members - 1) {
        *num = k - (members - 1) + 1;
        return 1;
    }
    *num = k + 1;
    return 0;
}

/* The width a band needs inside for its call's schedule. */
static double inner_width(const call *c) {
    if (!c || !c->nmsg) return 0;
    /* at least room for its labels ("ring SUM, 24 msgs") */
    if (c->steps <= DRAW_STEPS && c->nmsg <= DRAW_MSGS)
        return c->steps * STEP_W + 16 > 130 ? c->steps * STEP_W + 16 : 130;
    return 170;
}

/* A call's own messages inside its band, one slot per step of the schedule:
 * each step labelled (RS1, RS2, ... AG1, ...), each phase named beneath its
 * steps with a dashed line between phases. */
static void draw_schedule(FILE *f, const theme *t, const call *c, const char *name,
                          const char *algo, double bx, double bw, double by, double bh, double y0,
                          double lh) {
    const phase_rule *pr = rule_for(name, algo);
    char label[64];
    if (c->steps > DRAW_STEPS || c->nmsg > DRAW_MSGS) { /* too many to draw: say what they were */
        int first = pr->split && c->members > 1 ? c->members - 1 : c->steps;
        double ty = by + 14;
        for (int ph = 0; ph < 2 && pr->phase[ph]; ph++) {
            int n = ph == 0 ? (first < c->steps ? first : c->steps) : c->steps - first;
            if (n <= 0) continue;
            snprintf(label, sizeof label, "%s: %d step%s", pr->phase[ph], n, n == 1 ? "" : "s");
            cs_svg_text(f, bx + 8, ty, SMALL, t->fg, "start", NULL, label);
            ty += SMALL + 3;
        }
        return;
    }
    double ix = bx + 8, sw = (bw - 16) / c->steps;
    int prev = -1;
    for (int k = 0; k < c->steps; k++) {
        int num, ph = phase_of(pr, c->members, k, &num);
        double xk = ix + (k + 0.5) * sw;
        snprintf(label, sizeof label, "%s%d", pr->abbr[ph] ? pr->abbr[ph] : "S", num);
        cs_svg_text(f, xk, by + 12, 9, t->muted, "middle", NULL, label);
        if (ph != prev && prev >= 0)
            fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                       "stroke-dasharray=\"3 3\"/>\n", ix + k * sw, by + 3, ix + k * sw, by + bh - 3,
                    t->coll_edge);
        if (ph != prev) { /* the phase's name beneath its steps */
            int last = k;
            while (last + 1 < c->steps && phase_of(pr, c->members, last + 1, &num) == ph) last++;
            const char *pn = pr->phase[ph] ? pr->phase[ph] : "steps";
            if (strlen(pn) * 6.2 <= (last - k + 1) * sw + 4) /* else the step labels say it */
                cs_svg_text(f, ix + (k + last + 1) * sw / 2, by + bh - 5, 10, t->fg, "middle", NULL, pn);
        }
        prev = ph;
    }
    for (uint64_t j = 0; j < c->nmsg; j++) {
        const cmsg *m = &c->msg[j];
        double xk = ix + (m->step + 0.5) * sw, ya = y0 + m->from * lh, yb = y0 + m->to * lh;
        yb += yb > ya ? -4 : 4;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                   "stroke-width=\"1.3\" marker-end=\"url(#carrow)\"/>\n",
                xk - sw * 0.32, ya, xk + sw * 0.32, yb, t->coll_edge);
    }
}

static const char *state_fill(const theme *t, int s) {
    switch (s) {
    case CS_HS_BLOCKED: return t->blocked;
    case CS_HS_COMPUTE: return t->compute;
    case CS_HS_FAILED: return t->bad;
    default: return NULL;
    }
}

/* ---- layout: which row each column draws, and where the columns are */

typedef struct layout {
    size_t n;      /* columns: one per kept row */
    size_t *row;   /* column -> history row */
    size_t *col;   /* history row -> column */
    double *x;     /* column -> its left edge; x[n]: the diagram's right end */
} layout;

typedef struct okey {
    double key;
    size_t row;
} okey;

static int by_key(const void *a, const void *b) {
    const okey *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

static void layout_free(layout *l) {
    free(l->row);
    free(l->col);
    free(l->x);
}

/* The column where a band's schedule must stop: the first inside it where
 * another call opens (calls of disjoint groups side by side) or the
 * deadlock is drawn; else just past its end. */
static size_t stop_col(const cs_history *h, const size_t *row, size_t cb, size_t ce) {
    for (size_t c = cb + 1; c <= ce; c++) {
        const cs_hrow *o = cs_history_row(h, row[c]);
        if ((o->kind == CS_HROW_COLL && o->begin) || o->kind == CS_HROW_STATES ||
            o->kind == CS_HROW_DEADLOCK)
            return c;
    }
    return ce + 1 > cb ? ce + 1 : cb + 1;
}

static int layout_build(layout *l, const pass *p) {
    const cs_history *h = &p->h;
    size_t n = h->n;
    memset(l, 0, sizeof *l);
    l->n = n;
    okey *k = malloc((n ? n : 1) * sizeof *k);
    l->row = malloc((n ? n : 1) * sizeof *l->row);
    l->col = malloc((n ? n : 1) * sizeof *l->col);
    l->x = malloc((n + 1) * sizeof *l->x);
    if (!k || !l->row || !l->col || !l->x) {
        free(k);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const rowinfo *ri = &p->rows[(h->dropped_rows + i) % h->cap];
        k[i].row = i;
        k[i].key = (double)i;
        if (ri->before != NO_ROW)
            k[i].key = ri->before < h->dropped_rows ? -0.5 : (double)(ri->before - h->dropped_rows) - 0.5;
    }
    if (n) qsort(k, n, sizeof *k, by_key);
    for (size_t c = 0; c < n; c++) l->row[c] = k[c].row, l->col[k[c].row] = c;
    free(k);
    /* a band as wide as its call's schedule needs: its first column widens */
    double *w = l->x; /* widths first, then turned into edges */
    for (size_t c = 0; c < n; c++) w[c] = CW;
    for (size_t i = 0; i < n; i++) {
        const cs_hrow *r = cs_history_row(h, i);
        if (r->kind != CS_HROW_COLL || !r->begin) continue;
        double need = inner_width(band_call(p, r, h->dropped_rows + i));
        size_t b = l->col[i], e = l->col[band_end(h, i)];
        double have = (double)(stop_col(h, l->row, b, e) - b) * CW - 8;
        if (need > have) w[b] += need - have;
    }
    double at = LEFT;
    for (size_t c = 0; c <= n; c++) {
        double wc = c < n ? w[c] : 0;
        l->x[c] = at;
        at += wc;
    }
    return 0;
}

/* Rank k's state in the column c draws. */
static int col_state(const pass *p, const layout *l, size_t c, int k) {
    size_t i = l->row[c];
    const rowinfo *ri = &p->rows[(p->h.dropped_rows + i) % p->h.cap];
    if (ri->before != NO_ROW && ri->hide[k]) return CS_HS_COLL; /* inside the band it precedes */
    return cs_history_state(&p->h, i, k) & 0x7F;
}

int cs_export_svg(FILE *f, const cs_export_ctx *x, char *err, size_t errlen) {
    if (cs_export_model(x)) return cs_export_svg_scale(f, x, err, errlen); /* virtual time to scale */
    const cs_replay *rp = x->rp;
    const theme *t = x->o->dark ? &cs_svg_dark : &cs_svg_light;
    int world = rp->world, maxcols = x->o->width ? x->o->width : DEFAULT_COLS;
    pass p;
    layout L = {0};
    if (pass_run(&p, x, (size_t)maxcols) < 0 || layout_build(&L, &p) < 0) {
        snprintf(err, errlen, "out of memory for the diagram of %d ranks", world);
        layout_free(&L);
        pass_free(&p);
        return -1;
    }
    const cs_history *h = &p.h;
    double lh = cs_svg_lane_h(world), y0 = TOP + lh / 2;
    double dw = L.x[L.n] - LEFT, width = LEFT + (dw > CW ? dw : CW) + 40;
    if (width < 760) width = 760;
    int textw = (int)((width - 40) / 7.9); /* characters of a footer line */

    /* the footer: aggregation, layout, verdict, pitfalls; counted first for the height */
    char agg[600] = "";
    uint64_t merged = 0;
    for (size_t i = 0; i < h->n; i++) {
        const cs_hrow *r = cs_history_row(h, i);
        if (r->kind == CS_HROW_MSG && r->count > 1) merged += r->count - 1;
    }
    int alen = 0;
    if (h->dropped_rows)
        alen += snprintf(agg + alen, sizeof agg - (size_t)alen,
                         "Aggregated: the first %llu diagram columns (%llu messages) are not drawn, "
                         "only the last %zu. ",
                         (unsigned long long)h->dropped_rows, (unsigned long long)h->dropped_msgs, h->n);
    if (merged)
        alen += snprintf(agg + alen, sizeof agg - (size_t)alen,
                         "%llu repeated identical messages share an arrow (xN). ",
                         (unsigned long long)merged);
    if (h->coll_msgs)
        alen += snprintf(agg + alen, sizeof agg - (size_t)alen,
                         "%llu messages inside collectives are drawn in their own call's band, "
                         "by step of its schedule. ", (unsigned long long)h->coll_msgs);
    if (p.moved)
        snprintf(agg + alen, sizeof agg - (size_t)alen,
                 "%llu column%s of ranks not yet in a collective %s drawn before its band.",
                 (unsigned long long)p.moved, p.moved == 1 ? "" : "s", p.moved == 1 ? "is" : "are");
    const cs_outcome *o = &x->out;
    int footer = 2 + cs_svg_para(NULL, 0, 0, textw, NULL, agg) + (o->verdict.kind != CS_OUT_OK ? 6 : 0) +
                 o->npitfalls * 2 + (o->run_error || x->ending[0] ? 2 : 0);
    double dh = world * lh, height = TOP + dh + 30 + footer * 17 + 20;

    cs_svg_head(f, t, width, height, "");
    char sub[300];
    snprintf(sub, sizeof sub, "%llu message%s, %llu bytes, %llu collective call%s; time flows right",
             (unsigned long long)o->messages, o->messages == 1 ? "" : "s", (unsigned long long)o->bytes,
             (unsigned long long)o->collectives, o->collectives == 1 ? "" : "s");
    cs_svg_title(f, t, x, sub);

    /* collective bands under everything: a rectangle over each run of its
     * members' lanes, its schedule up to where another call opens inside it
     * (calls of disjoint groups run side by side) or the deadlock is drawn */
    for (size_t i = 0; i < h->n; i++) {
        const cs_hrow *r = cs_history_row(h, i);
        if (r->kind != CS_HROW_COLL || !r->begin) continue;
        size_t cb = L.col[i], ce = L.col[band_end(h, i)];
        if (ce < cb) ce = cb;
        int lo = world, hi = -1;
        for (int k = 0; k < world; k++)
            if (cs_history_state(h, i, k) & CS_HS_MARK) {
                if (k < lo) lo = k;
                if (k > hi) hi = k;
            }
        bool all = hi < 0;
        if (all) lo = 0, hi = world - 1;
        double bx = L.x[cb] + 4, bw = L.x[ce + 1] - L.x[cb] - 8;
        for (int k = lo; k <= hi; k++) {
            if (!all && !(cs_history_state(h, i, k) & CS_HS_MARK)) continue;
            int run = k;
            while (run + 1 <= hi && (all || (cs_history_state(h, i, run + 1) & CS_HS_MARK))) run++;
            fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" rx=\"6\" "
                       "fill=\"%s\" stroke=\"%s\" fill-opacity=\"0.8\"/>\n", bx, TOP + k * lh + 2, bw,
                    (run - k + 1) * lh - 4, t->coll, t->coll_edge);
            k = run;
        }
        double sw = L.x[stop_col(h, L.row, cb, ce)] - L.x[cb] - 8; /* the schedule's room */
        double by = TOP + lo * lh + 2, bh = (hi - lo + 1) * lh - 4;
        const call *c = band_call(&p, r, h->dropped_rows + i);
        const cs_event *first = c ? &rp->ev[c->first] : NULL;
        const char *algo = first && first->algo ? first->algo : r->algo;
        char label[160];
        /* the name, then the algorithm, reduction and messages on a line of their own */
        snprintf(label, sizeof label, "%s", r->name);
        cs_svg_fit(label, sw);
        cs_svg_text(f, bx + 2, TOP - 20, SMALL, t->fg, "start", "bold", label);
        int n = snprintf(label, sizeof label, "%s%s%s", algo, first && first->reduce_op ? " " : "",
                         first && first->reduce_op ? first->reduce_op : "");
        if (c && c->nmsg)
            snprintf(label + n, sizeof label - (size_t)n, "%s%llu msg%s", n ? ", " : "",
                     (unsigned long long)c->nmsg, c->nmsg == 1 ? "" : "s");
        cs_svg_fit(label, sw);
        if (label[0]) cs_svg_text(f, bx + 2, TOP - 7, SMALL, t->fg, "start", NULL, label);
        if (c && c->nmsg) draw_schedule(f, t, c, r->name, algo, bx, sw, by, bh, y0, lh);
    }

    /* lanes: names, the line, the state bars (runs of one state merged) */
    for (int k = 0; k < world; k++) {
        double y = y0 + k * lh;
        bool dead = o->ranks && k < o->world && o->ranks[k].deadlocked;
        char name[32];
        snprintf(name, sizeof name, "Rank %d", k);
        cs_svg_text(f, LEFT - 12, y + 5, FONT, dead ? t->bad : t->fg, "end", "bold", name);
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                   "stroke-width=\"2\"/>\n", LEFT, y, L.x[L.n], y, dead ? t->bad : t->lane);
        size_t run = 0;
        for (size_t c = 0; c <= L.n; c++) {
            int s = c < L.n ? col_state(&p, &L, c, k) : -1;
            int ps = c ? col_state(&p, &L, c - 1, k) : -2;
            if (c && s == ps) continue;
            if (c && state_fill(t, ps))
                fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"10\" rx=\"3\" "
                           "fill=\"%s\"><title>%s</title></rect>\n",
                        L.x[run], y - 5, L.x[c] - L.x[run], state_fill(t, ps),
                        ps == CS_HS_BLOCKED ? "blocked" : ps == CS_HS_COMPUTE ? "compute" : "failed");
            run = c;
        }
    }

    /* rows: messages, exits, errors, pitfalls, the deadlock */
    int npit = 0;
    for (size_t c = 0; c < L.n; c++) {
        const cs_hrow *r = cs_history_row(h, L.row[c]);
        double cx = L.x[c] + CW / 2.0;
        char label[64], sz[32];
        switch (r->kind) {
        case CS_HROW_MSG: {
            if (r->from < 0 || r->to < 0) break;
            double ya = y0 + r->from * lh, yb = y0 + r->to * lh;
            double xa = cx - CW * 0.3, xb = cx + CW * 0.3;
            if (r->from == r->to) yb += lh * 0.4;
            else yb += yb > ya ? -6 : 6;
            fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                       "stroke-width=\"1.6\" marker-end=\"url(#arrow)\"/>\n",
                    xa, ya, xb, yb, t->msg);
            cs_viz_bytes(r->bytes, sz, sizeof sz);
            snprintf(label, sizeof label, "%s t%d", sz, r->tag);
            /* beside the arrow's middle, on the side the arrow leaves free */
            double ly = (ya + yb) / 2 + (yb > ya ? 10 : -4);
            if (r->from == r->to) ly = ya + lh * 0.2;
            cs_svg_text(f, cx - 4, ly, SMALL, t->msg, "end", NULL, label);
            if (r->count > 1) {
                snprintf(label, sizeof label, "x%llu", (unsigned long long)r->count);
                cs_svg_text(f, cx - 4, ly + SMALL + 1, SMALL, t->msg, "end", "bold", label);
            }
            break;
        }
        case CS_HROW_EXIT:
            if (r->from < 0) break;
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\"><title>exit %llu</title>"
                       "</circle>\n", cx, y0 + r->from * lh, r->count ? t->bad : t->done,
                    (unsigned long long)r->count);
            break;
        case CS_HROW_ERROR:
            if (r->from < 0) break;
            cs_svg_text(f, cx, y0 + r->from * lh + 6, 18, t->bad, "middle", "bold", "x");
            break;
        case CS_HROW_WARN: {
            double y = y0 + (r->from >= 0 ? r->from : 0) * lh;
            npit++;
            fprintf(f, "<path d=\"M%.1f,%.1f l9,16 l-18,0 z\" fill=\"%s\"/>\n", cx, y - 10, t->warn);
            snprintf(label, sizeof label, "%d", npit);
            cs_svg_text(f, cx, y + 4, 10, t->bg, "middle", "bold", label);
            break;
        }
        case CS_HROW_DEADLOCK:
            cs_svg_deadlock(f, t, o, world, cx, CW, TOP, y0, lh, dh);
            break;
        default: break;
        }
    }

    cs_svg_footer(f, t, x, agg, TOP + dh + 34, textw);
    fputs("</svg>\n", f);
    layout_free(&L);
    pass_free(&p);
    return 0;
}
