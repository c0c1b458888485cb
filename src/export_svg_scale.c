/* export_svg_scale.c -- the space-time diagram of a run with a network model
 * (run --net) drawn in virtual time to scale: a lane per rank, x the
 * modelled time, each wait and compute a bar from its start to its end,
 * each message an arrow from the start of its transmission to its arrival,
 * each rank's end a dot, a rank's error an x, a rank the run stopped a
 * square (after the wait it was stopped in), a time axis above the lanes,
 * a deadlock's ranks blocked for good past the end of time. The times are the
 * timekeeper's (its vtime events, kept by the visualizer's history as the
 * TUI's "time to scale" view keeps them); the latest CS_HIST_SPANS are
 * drawn and the picture says when older ones were left out. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "export_svg.h"
#include "history.h"
#include "model.h"
#include "netmodel.h"

#define LEFT 96
#define TOP 100
#define PLOT_W 1200.0   /* pixels for the time drawn */
#define LABEL_MSGS 40   /* more messages than this: arrows without size labels */
#define DEAD_GAP 40     /* past the end of time: the deadlock's column... */
#define DEAD_CW 60
#define DEAD_LABELS 250 /* ...and what each of its ranks waits in */

/* A time in virtual ns as text: "120 us", "1.5 ms". */
static void vtime_text(uint64_t ns, char *buf, size_t len) {
    if (ns >= 1000000000ULL) snprintf(buf, len, "%.6g s", (double)ns / 1e9);
    else if (ns >= 1000000ULL) snprintf(buf, len, "%.6g ms", (double)ns / 1e6);
    else if (ns >= 1000ULL) snprintf(buf, len, "%.6g us", (double)ns / 1e3);
    else snprintf(buf, len, "%llu ns", (unsigned long long)ns);
}

/* A round tick step (1, 2 or 5 times a power of ten ns) giving at most 8 ticks over span. */
static uint64_t tick_step(uint64_t span) {
    uint64_t step = 1;
    for (;;) {
        static const int m[] = {1, 2, 5};
        for (int i = 0; i < 3; i++)
            if (span / (step * (uint64_t)m[i]) <= 8) return step * (uint64_t)m[i];
        step *= 10;
    }
}

/* A collective call in virtual time: from the first post to the last
 * completion of the requests its members posted in it. A call is its
 * context and its number there (each member counts its calls per context
 * alike). */
typedef struct vband {
    int ctx;
    size_t num, first;     /* its number; the event of its first entry */
    int lo_rank, hi_rank;  /* the lanes it covers */
    uint64_t lo, hi;       /* lo > hi: no timed request */
} vband;

typedef struct vbands {
    vband *v;
    size_t n, cap;
} vbands;

static int collect_bands(const cs_export_ctx *x, vbands *b) {
    const cs_replay *rp = x->rp;
    int world = rp->world;
    cs_export_reqmap count = {0}, in = {0}, open = {0};
    int rc = -1;
    for (size_t i = 0; i < x->to; i++) {
        const cs_event *e = &rp->ev[i];
        size_t k = 0, j;
        if (e->type == CS_EV_COLL && e->rank >= 0 && e->rank < world && e->begin) {
            cs_export_reqmap_get(&count, e->rank, (unsigned long long)e->ctx, &k);
            if (cs_export_reqmap_put(&count, e->rank, (unsigned long long)e->ctx, k + 1) < 0) goto out;
            for (j = b->n; j > 0 && !(b->v[j - 1].ctx == e->ctx && b->v[j - 1].num == k); j--) {}
            if (!j) {
                if (b->n == b->cap) {
                    size_t cap = b->cap ? b->cap * 2 : 32;
                    vband *nv = realloc(b->v, cap * sizeof *nv);
                    if (!nv) goto out;
                    b->v = nv, b->cap = cap;
                }
                b->v[b->n++] = (vband){e->ctx, k, i, e->rank, e->rank, UINT64_MAX, 0};
                j = b->n;
            }
            vband *v = &b->v[j - 1];
            if (e->rank < v->lo_rank) v->lo_rank = e->rank;
            if (e->rank > v->hi_rank) v->hi_rank = e->rank;
            if (cs_export_reqmap_put(&open, e->rank, 0, j) < 0) goto out;
        } else if (e->type == CS_EV_COLL && e->rank >= 0 && e->rank < world) {
            if (cs_export_reqmap_put(&open, e->rank, 0, 0) < 0) goto out;
        } else if (e->type == CS_EV_POST && cs_export_reqmap_get(&open, e->rank, 0, &j) && j) {
            if (cs_export_reqmap_put(&in, e->rank, e->req, j) < 0) goto out;
        } else if (e->type == CS_EV_VTIME && e->text && (!strcmp(e->text, "send") || !strcmp(e->text, "recv")) &&
                   cs_export_reqmap_get(&in, e->vrank, e->req, &j) && j) {
            vband *v = &b->v[j - 1];
            uint64_t done = e->vt_done > e->vt ? e->vt_done : e->vt;
            if (e->vt < v->lo) v->lo = e->vt;
            if (done > v->hi) v->hi = done;
        }
    }
    rc = 0;
out:
    cs_export_reqmap_free(&count);
    cs_export_reqmap_free(&in);
    cs_export_reqmap_free(&open);
    return rc;
}

/* The makespan as the report gives it: the latest end of a rank, known only
 * when the run ended normally with every rank's end timed (a deadlock's
 * ranks never end; the drawing's right edge is no makespan). 0 and *ns, or
 * -1 with *ns 1 when a clock passed the largest time, 0 otherwise. */
static int makespan(const cs_export_ctx *x, uint64_t *ns) {
    const cs_replay *rp = x->rp;
    int world = rp->world, ended = 0;
    bool *end = calloc((size_t)world, sizeof *end);
    *ns = 0;
    if (!end) return -1;
    for (size_t i = 0; i < x->to; i++) {
        const cs_event *e = &rp->ev[i];
        if (e->type != CS_EV_VTIME || !e->text || strcmp(e->text, "exit") || e->vrank < 0 ||
            e->vrank >= world)
            continue;
        ended += !end[e->vrank];
        end[e->vrank] = true;
        if (e->vt > *ns) *ns = e->vt;
    }
    free(end);
    if (*ns >= INT64_MAX) return *ns = 1, -1;
    if (x->out.status != 0 || ended < world) return *ns = 0, -1;
    return 0;
}

/* Where a rank's clock stands on the time drawn, t0 to t1: its clock is
 * the run's, and a window (--from) may start after it or end before it. */
static double clock_x(uint64_t at, uint64_t t0, uint64_t t1, double scale) {
    if (at < t0) at = t0;
    if (at > t1) at = t1;
    return LEFT + (double)(at - t0) * scale;
}

/* Rank k ended normally (an outcome that does not know: yes): its end is a
 * dot; a failure is an x, a stop a square. */
static bool finished(const cs_outcome *o, int k) {
    return !o->ranks || k >= o->world || o->ranks[k].state == CS_RS_DONE;
}

int cs_export_svg_scale(FILE *f, const cs_export_ctx *x, char *err, size_t errlen) {
    const cs_replay *rp = x->rp;
    const cs_svg_theme *t = x->o->dark ? &cs_svg_dark : &cs_svg_light;
    const cs_outcome *o = &x->out;
    const char *net = rp->ev[0].net;
    int world = rp->world;
    cs_history h;
    if (cs_history_init(&h, world, 64) < 0) {
        snprintf(err, errlen, "out of memory for the diagram of %d ranks", world);
        return -1;
    }
    vbands bands = {0};
    if (collect_bands(x, &bands) < 0) {
        snprintf(err, errlen, "out of memory for the collective calls");
        cs_history_free(&h);
        free(bands.v);
        return -1;
    }
    for (size_t i = x->from; i < x->to; i++) cs_history_add(&h, &rp->ev[i]);
    /* the ranks' clocks from the run's start (a rank idle since before the
     * window, --from, has no span in it): the time drawn reaches them all */
    uint64_t *clock = cs_export_vclocks(x);
    size_t n = cs_history_nspans(&h);
    uint64_t t0 = UINT64_MAX, t1 = 0;
    size_t msgs = 0;
    for (size_t i = 0; i < n; i++) {
        const cs_hspan *s = cs_history_span(&h, i);
        if (s->from < t0) t0 = s->from;
        if (s->to > t1) t1 = s->to;
        msgs += s->kind == CS_HV_MSG;
    }
    if (!n) t0 = t1 = 0;
    if (!h.spans_dropped) t0 = 0; /* the whole run: from its start */
    for (int k = 0; clock && k < world; k++)
        if (clock[k] > t1) t1 = clock[k];
    uint64_t span = t1 > t0 ? t1 - t0 : 1;
    double scale = PLOT_W / (double)span; /* pixels per ns */
    double lh = cs_svg_lane_h(world), y0 = TOP + lh / 2, dh = world * lh;
    /* A deadlock has no time: its ranks' last waits never end. They run from
     * each one's clock then into a column past the end of time. */
    bool deadlock = false;
    for (size_t i = x->from; i < x->to && !deadlock; i++)
        deadlock = rp->ev[i].type == CS_EV_DEADLOCK;
    double dead_x = LEFT + PLOT_W + DEAD_GAP + DEAD_CW / 2.0;
    double width = LEFT + PLOT_W + (deadlock ? DEAD_GAP + DEAD_CW + DEAD_LABELS : 60);
    int textw = (int)((width - 40) / 7.9);

    char note[600], a[64], b[64];
    uint64_t mk_ns;
    vtime_text(t0, a, sizeof a);
    vtime_text(t1, b, sizeof b);
    int len = snprintf(note, sizeof note,
                       "Virtual time to scale under the network model %s, from %s to %s: each wait "
                       "(amber) and compute (teal) a bar, each message an arrow from the start of "
                       "its transmission to its arrival. ", net, a, b);
    if (h.spans_dropped)
        len += snprintf(note + len, sizeof note - (size_t)len,
                        "Only the latest %zu timed spans are drawn; the %llu before them are not. ", n,
                        (unsigned long long)h.spans_dropped);
    if (deadlock)
        len += snprintf(note + len, sizeof note - (size_t)len,
                        "The deadlocked ranks' last waits (red) never end: they run from where "
                        "each rank's clock stood into the deadlock, past the end of time. ");
    bool stopped = false;
    for (int k = 0; o->ranks && k < o->world && !stopped; k++)
        stopped = o->ranks[k].state == CS_RS_ABORTED && !o->ranks[k].deadlocked;
    if (stopped)
        len += snprintf(note + len, sizeof note - (size_t)len,
                        "A rank the run stopped ends in a square; one stopped in a wait is "
                        "waiting (amber) from where its clock stood up to the square. ");
    if (msgs > LABEL_MSGS)
        snprintf(note + len, sizeof note - (size_t)len, "%zu messages: their sizes are not labelled.",
                 msgs);
    else if (msgs)
        snprintf(note + len, sizeof note - (size_t)len,
                 "Messages are labelled with their size where the label has room.");
    int footer = 1 + cs_svg_footer(NULL, t, x, note, 0, textw);
    double height = TOP + dh + 30 + footer * 17 + 20;

    char attrs[96];
    snprintf(attrs, sizeof attrs, " data-ns-per-px=\"%.9g\" data-t0-ns=\"%llu\"", 1 / scale,
             (unsigned long long)t0);
    cs_svg_head(f, t, width, height, attrs);
    char sub[200], mk[96];
    if (makespan(x, &mk_ns) == 0)
        snprintf(mk, sizeof mk, "makespan %s", cs_vt_format(mk_ns, a, sizeof a));
    else
        snprintf(mk, sizeof mk, "makespan not known, %s", mk_ns
                 ? "a rank's virtual clock passed the largest time" : "the run did not end normally");
    snprintf(sub, sizeof sub, "%s (--net %s); virtual time flows right, to scale", mk, net);
    cs_svg_title(f, t, x, sub);

    /* the axis: round ticks with their times, a faint line down the lanes */
    uint64_t step = tick_step(span);
    for (uint64_t v = (t0 + step - 1) / step * step; v <= t1; v += step) {
        double px = LEFT + (double)(v - t0) * scale;
        vtime_text(v, a, sizeof a);
        cs_svg_text(f, px, TOP - 12, CS_SVG_SMALL, t->muted, "middle", NULL, a);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                   "stroke-dasharray=\"2 4\"/>\n", px, TOP - 6, px, TOP + dh, t->lane);
    }
    /* collective calls as bands over their members' lanes, named above the lanes */
    double label_end = 0;
    for (size_t j = 0; j < bands.n; j++) {
        const vband *v = &bands.v[j];
        if (v->lo > v->hi || v->hi < t0 || v->first < x->from) continue;
        uint64_t lo = v->lo < t0 ? t0 : v->lo;
        double bx = LEFT + (double)(lo - t0) * scale, bw = (double)(v->hi - lo) * scale;
        fprintf(f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" rx=\"4\" fill=\"%s\" "
                   "stroke=\"%s\" fill-opacity=\"0.7\"/>\n", bx, TOP + v->lo_rank * lh + 2, bw,
                (v->hi_rank - v->lo_rank + 1) * lh - 4, t->coll, t->coll_edge);
        const cs_event *e = &rp->ev[v->first];
        char label[96];
        snprintf(label, sizeof label, "%s%s%s", e->text ? e->text : "collective",
                 e->algo ? " " : "", e->algo ? e->algo : "");
        double lw = (double)strlen(label) * 7.3, lx = bx + 2;
        if (lx + lw > width - 8) lx = width - 8 - lw; /* a call at the end: its name stays on the page */
        if (lx >= label_end) { /* side by side calls: the first keeps its name */
            cs_svg_text(f, lx, TOP - 28, CS_SVG_SMALL, t->fg, "start", "bold", label);
            label_end = lx + lw + 8;
        }
    }
    /* lanes */
    for (int k = 0; k < world; k++) {
        double y = y0 + k * lh;
        bool dead = o->ranks && k < o->world && o->ranks[k].deadlocked;
        char name[32];
        snprintf(name, sizeof name, "Rank %d", k);
        cs_svg_text(f, LEFT - 12, y + 5, CS_SVG_FONT, dead ? t->bad : t->fg, "end", "bold", name);
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                   "stroke-width=\"2\"/>\n", LEFT, y, LEFT + PLOT_W, y, dead ? t->bad : t->lane);
    }
    /* waits and computes under the arrows, then the arrows, then the ends */
    double placed[LABEL_MSGS][4];
    size_t nplaced = 0;
    for (int pass = 0; pass < 3; pass++)
        for (size_t i = 0; i < n; i++) {
            const cs_hspan *s = cs_history_span(&h, i);
            if (s->rank < 0 || s->rank >= world) continue;
            double xa = LEFT + (double)(s->from - t0) * scale, xb = LEFT + (double)(s->to - t0) * scale;
            double y = y0 + s->rank * lh;
            if (pass == 0 && (s->kind == CS_HV_WAIT || s->kind == CS_HV_COMPUTE) && s->to > s->from) {
                fprintf(f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"10\" fill=\"%s\">"
                           "<title>%s</title></rect>\n", xa, y - 5, xb - xa,
                        s->kind == CS_HV_WAIT ? t->blocked : t->compute,
                        s->kind == CS_HV_WAIT ? "wait" : "compute");
            } else if (pass == 1 && s->kind == CS_HV_MSG && s->peer >= 0 && s->peer < world) {
                double yb = y0 + s->peer * lh;
                yb += yb > y ? -6 : yb < y ? 6 : lh * 0.4;
                fprintf(f, "<line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" stroke=\"%s\" "
                           "stroke-width=\"1.4\" marker-end=\"url(#arrow)\"/>\n", xa, y, xb, yb, t->msg);
                if (msgs <= LABEL_MSGS) { /* where a label has room: messages at once share a spot */
                    cs_viz_bytes(s->bytes, a, sizeof a);
                    double lx = (xa + xb) / 2 - 4, ly = (y + yb) / 2 + (yb > y ? 10 : -4);
                    double box[4] = {lx - 6.5 * (double)strlen(a), ly - 9, lx, ly + 2};
                    bool room = true;
                    for (size_t q = 0; q < nplaced && room; q++)
                        room = box[2] <= placed[q][0] || placed[q][2] <= box[0] ||
                               box[3] <= placed[q][1] || placed[q][3] <= box[1];
                    if (room && nplaced < LABEL_MSGS) {
                        memcpy(placed[nplaced++], box, sizeof box);
                        cs_svg_text(f, lx, ly, 10, t->msg, "end", NULL, a);
                    }
                }
            } else if (pass == 2 && s->kind == CS_HV_EXIT && finished(o, s->rank)) {
                fprintf(f, "<circle cx=\"%.2f\" cy=\"%.1f\" r=\"5\" fill=\"%s\"><title>end</title>"
                           "</circle>\n", xa, y, t->done);
            }
        }
    /* a rank's error has no time either: an x where its clock stood */
    for (int k = 0; o->ranks && k < world && k < o->world; k++) {
        if (!o->ranks[k].error) continue;
        uint64_t at = clock ? clock[k] : 0;
        cs_svg_text(f, clock_x(at, t0, t1, scale), y0 + k * lh + 6, 18, t->bad,
                    "middle", "bold", "x");
    }
    /* a rank the run stopped (a timeout, an interrupt, another rank's
     * failure) is a square where its clock stood; one stopped inside a wait,
     * or still waiting where the drawn events end, waits from there to the
     * end of the drawn time */
    for (int k = 0; o->ranks && k < world && k < o->world; k++) {
        const cs_outcome_rank *r = &o->ranks[k];
        bool waits = cs_export_waits_at_end(x, k);
        if ((deadlock && r->deadlocked) || (!waits && r->state != CS_RS_ABORTED))
            continue; /* a deadlock's ranks go into its column (when it is drawn) */
        uint64_t at = clock ? clock[k] : 0;
        double xa = clock_x(at, t0, t1, scale), y = y0 + k * lh;
        double xb = waits ? LEFT + PLOT_W : xa;
        if (xb > xa)
            fprintf(f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"10\" fill=\"%s\">"
                       "<title>waiting when the %s</title></rect>\n", xa, y - 5, xb - xa, t->blocked,
                    r->state == CS_RS_ABORTED ? "run stopped it" : "drawn events end");
        if (r->state != CS_RS_ABORTED) continue;
        fprintf(f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"10\" height=\"10\" fill=\"%s\" "
                   "stroke=\"%s\" stroke-width=\"2\"><title>stopped", xb - 5, y - 5, t->bg, t->bad);
        if (r->stop) {
            fputs(": ", f);
            cs_svg_esc(f, r->stop);
        }
        fputs("</title></rect>\n", f);
    }
    if (deadlock) {
        for (int v = 0; v < o->verdict.nops; v++) {
            int k = o->verdict.ops[v].rank;
            bool first = true; /* a rank waiting on several requests: one bar */
            for (int u = 0; u < v && first; u++) first = o->verdict.ops[u].rank != k;
            if (k < 0 || k >= world || !first || !o->ranks || k >= o->world ||
                !o->ranks[k].deadlocked) /* not a finished rank a collective waits on */
                continue;
            uint64_t since = clock ? clock[k] : 0;
            double xa = clock_x(since, t0, t1, scale);
            fprintf(f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"10\" fill=\"%s\">"
                       "<title>blocked for good</title></rect>\n", xa, y0 + k * lh - 5, dead_x - xa,
                    t->bad);
        }
        cs_svg_deadlock(f, t, o, world, dead_x, DEAD_CW, TOP, y0, lh, dh);
    }
    cs_svg_footer(f, t, x, note, TOP + dh + 34, textw);
    fputs("</svg>\n", f);
    cs_history_free(&h);
    free(bands.v);
    free(clock);
    return 0;
}
