/* export_svg.c -- the space-time diagram of a trace as one self-contained
 * SVG, for a slide: a lane per rank, time flowing right, an arrow per message
 * with its size and tag, blocked stretches as bars, collective calls as
 * labelled bands, the deadlock's ranks and their waits in red with the
 * verdict beneath, the pitfalls numbered at their sites.
 *
 * The columns are the visualizer's diagram rows (viz/history.c), so the
 * picture aggregates as the TUI does: repeated identical messages share an
 * arrow with a count, a collective's own messages are counted in its band,
 * and past --width columns the oldest leave; the picture says what was. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "history.h"
#include "model.h"

#define CW 88          /* a column's width: a label of 12 characters fits */
#define LEFT 96        /* the rank names */
#define TOP 112        /* room above the lanes for the bands' labels */
#define FONT 13
#define SMALL 11
#define DEFAULT_COLS 120

typedef struct theme {
    const char *bg, *fg, *muted, *lane, *msg, *blocked, *compute, *coll, *coll_edge, *bad,
        *warn, *done;
} theme;

static const theme light = {"#ffffff", "#1b1f24", "#57606a", "#d0d7de", "#0550ae", "#e8a33d",
                            "#8fbcbb", "#ddf4ff", "#54aeff", "#cf222e", "#bf8700", "#2da44e"};
static const theme dark = {"#0d1117", "#e6edf3", "#8b949e", "#30363d", "#79c0ff", "#d29922",
                           "#2f6f6a", "#0c2d6b", "#388bfd", "#ff7b72", "#e3b341", "#3fb950"};

static void esc(FILE *f, const char *s) {
    for (; s && *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\n': case '\t': case '\r': fputc(' ', f); break;
        default:
            if ((unsigned char)*s >= 0x20) fputc(*s, f);
        }
    }
}

static void text(FILE *f, double x, double y, int size, const char *fill, const char *anchor,
                 const char *weight, const char *s) {
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%d\" fill=\"%s\" text-anchor=\"%s\"%s%s%s>",
            x, y, size, fill, anchor, weight ? " font-weight=\"" : "", weight ? weight : "",
            weight ? "\"" : "");
    esc(f, s);
    fputs("</text>\n", f);
}

/* Word-wrap s at width characters; draw each line from y down. Returns the lines drawn. */
static int para(FILE *f, double x, double y, int width, const char *fill, const char *s) {
    int lines = 0;
    char buf[512];
    while (s && *s) {
        while (*s == ' ' || *s == '\n') s++;
        if (!*s) break;
        size_t n = 0, cut = 0;
        while (s[n] && s[n] != '\n' && n < (size_t)width && n < sizeof buf - 1) {
            if (s[n] == ' ') cut = n;
            n++;
        }
        if (s[n] && s[n] != '\n' && s[n] != ' ' && cut) n = cut;
        memcpy(buf, s, n);
        buf[n] = 0;
        text(f, x, y + lines * 17, FONT, fill, "start", NULL, buf);
        lines++;
        s += n;
    }
    return lines;
}

static double lane_h(int world) { return world <= 4 ? 56 : world <= 8 ? 46 : 38; }

/* The collective band that starts at row b ends at the next end row of the same name and context. */
static size_t band_end(const cs_history *h, size_t b) {
    const cs_hrow *r = cs_history_row(h, b);
    for (size_t i = b + 1; i < h->n; i++) {
        const cs_hrow *e = cs_history_row(h, i);
        if (e->kind == CS_HROW_COLL && !e->begin && e->tag == r->tag &&
            strncmp(e->name, r->name, sizeof e->name) == 0)
            return i;
    }
    return h->n - 1;
}

/* The algorithm and reduction of the call whose first member entered at t. */
static void coll_algo(const cs_export_ctx *x, const char *name, int ctx, double t, char *buf,
                      size_t len) {
    buf[0] = 0;
    for (size_t i = x->from; i < x->to; i++) {
        const cs_event *e = &x->rp->ev[i];
        if (e->type != CS_EV_COLL || !e->begin || e->ctx != ctx || e->t < t || !e->text ||
            strncmp(e->text, name, 23))
            continue;
        snprintf(buf, len, "%s%s%s", e->algo ? e->algo : "", e->reduce_op ? " " : "",
                 e->reduce_op ? e->reduce_op : "");
        return;
    }
}

/* s cut to fit w pixels of small bold text, with ".." when cut. */
static void fit(char *s, double w) {
    size_t max = w > 14 ? (size_t)((w - 6) / 6.8) : 2;
    if (strlen(s) > max && max >= 3) strcpy(s + max - 2, "..");
}

/* When the last member left the call whose band ends at row time t1 (the
 * row is when the first left), and its own messages (context ctx) until then. */
static double band_close(const cs_export_ctx *x, int ctx, double t1) {
    double last = t1;
    for (size_t i = x->from; i < x->to; i++) {
        const cs_event *e = &x->rp->ev[i];
        if (e->type != CS_EV_COLL || e->ctx != ctx || e->t < t1) continue;
        if (e->begin) break;
        last = e->t;
    }
    return last;
}

static unsigned long long inner_msgs(const cs_export_ctx *x, int ctx, double t0, double t1) {
    unsigned long long n = 0;
    for (size_t i = x->from; i < x->to; i++) {
        const cs_event *e = &x->rp->ev[i];
        n += e->type == CS_EV_MATCH && e->ctx == ctx && e->t >= t0 && e->t <= t1;
    }
    return n;
}

static void draw_inner(FILE *f, const cs_export_ctx *x, const theme *t, int ctx, double t0, double t1,
                       double bx, double bw, double y0, double lh, unsigned long long n) {
    double step = bw / (double)n, at = bx;
    for (size_t i = x->from; i < x->to; i++) {
        const cs_event *e = &x->rp->ev[i];
        if (e->type != CS_EV_MATCH || e->ctx != ctx || e->t < t0 || e->t > t1) continue;
        double ya = y0 + e->peer * lh, yb = y0 + e->rank * lh;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                   "stroke-width=\"1.2\"/>\n", at + step * 0.2, ya, at + step * 0.8, yb, t->coll_edge);
        at += step;
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

int cs_export_svg(FILE *f, const cs_export_ctx *x, char *err, size_t errlen) {
    const cs_replay *rp = x->rp;
    const theme *t = x->o->dark ? &dark : &light;
    int world = rp->world, maxcols = x->o->width ? x->o->width : DEFAULT_COLS;
    cs_history h;
    if (cs_history_init(&h, world, (size_t)maxcols) < 0) {
        snprintf(err, errlen, "out of memory for the diagram of %d ranks", world);
        return -1;
    }
    for (size_t i = x->from; i < x->to; i++) cs_history_add(&h, &rp->ev[i]);
    size_t ncol = h.n ? h.n : 1;
    double lh = lane_h(world), y0 = TOP + lh / 2;
    double dw = (double)ncol * CW, width = LEFT + dw + 40;
    if (width < 760) width = 760;
    int textw = (int)((width - 40) / 7.9); /* characters of a footer line */

    /* the footer: aggregation, verdict, pitfalls; counted first for the height */
    char agg[400] = "";
    uint64_t merged = 0;
    for (size_t i = 0; i < h.n; i++) {
        const cs_hrow *r = cs_history_row(&h, i);
        if (r->kind == CS_HROW_MSG && r->count > 1) merged += r->count - 1;
    }
    int alen = 0;
    if (h.dropped_rows)
        alen += snprintf(agg + alen, sizeof agg - (size_t)alen,
                         "Aggregated: the first %llu diagram columns (%llu messages) are not drawn, "
                         "only the last %zu. ",
                         (unsigned long long)h.dropped_rows, (unsigned long long)h.dropped_msgs, h.n);
    if (merged)
        alen += snprintf(agg + alen, sizeof agg - (size_t)alen,
                         "%llu repeated identical messages share an arrow (xN). ",
                         (unsigned long long)merged);
    if (h.coll_msgs)
        snprintf(agg + alen, sizeof agg - (size_t)alen,
                 "%llu messages inside collectives are counted in their bands.",
                 (unsigned long long)h.coll_msgs);
    const cs_outcome *o = &x->out;
    int footer = 2 + (agg[0] ? 2 : 0) + (o->verdict.kind != CS_OUT_OK ? 6 : 0) +
                 o->npitfalls * 2 + (o->run_error ? 2 : 0);
    double dh = world * lh, height = TOP + dh + 30 + footer * 17 + 20;

    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
               "viewBox=\"0 0 %.0f %.0f\" font-family=\"DejaVu Sans, Verdana, sans-serif\">\n",
            width, height, width, height);
    fputs("<defs>", f);
    fprintf(f, "<marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" "
               "markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" "
               "fill=\"%s\"/></marker>", t->msg);
    fprintf(f, "<marker id=\"warrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" "
               "markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" "
               "fill=\"%s\"/></marker>", t->bad);
    fputs("</defs>\n", f);
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"%s\"/>\n", t->bg);

    char title[300];
    snprintf(title, sizeof title, "%s: %d rank%s, %s", rp->script ? rp->script : "trace", world,
             world == 1 ? "" : "s", o->word);
    text(f, 20, 30, 18, t->fg, "start", "bold", title);
    snprintf(title, sizeof title, "%llu messages, %llu bytes, %llu collective calls; time flows right",
             (unsigned long long)o->messages, (unsigned long long)o->bytes,
             (unsigned long long)o->collectives);
    text(f, 20, 52, FONT, t->muted, "start", NULL, title);

    /* collective bands under everything */
    for (size_t i = 0; i < h.n; i++) {
        const cs_hrow *r = cs_history_row(&h, i);
        if (r->kind != CS_HROW_COLL || !r->begin) continue;
        size_t e = band_end(&h, i);
        int lo = world, hi = -1;
        for (int k = 0; k < world; k++)
            if (cs_history_state(&h, i, k) & CS_HS_MARK) {
                if (k < lo) lo = k;
                if (k > hi) hi = k;
            }
        if (hi < 0) lo = 0, hi = world - 1;
        double bx = LEFT + (double)i * CW + 4, bw = (double)(e - i + 1) * CW - 8;
        double by = TOP + lo * lh + 2, bh = (hi - lo + 1) * lh - 4;
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" rx=\"6\" fill=\"%s\" "
                   "stroke=\"%s\" fill-opacity=\"0.8\"/>\n", bx, by, bw, bh, t->coll, t->coll_edge);
        char algo[64], label[160];
        coll_algo(x, r->name, r->tag, r->t, algo, sizeof algo);
        double t1 = band_close(x, r->tag, cs_history_row(&h, e)->t);
        unsigned long long inner = inner_msgs(x, r->tag, r->t, t1);
        /* the name, then the algorithm on a line of its own: a band is a few columns wide */
        snprintf(label, sizeof label, "%s", r->name);
        fit(label, bw);
        text(f, bx + 2, TOP - 20, SMALL, t->fg, "start", "bold", label);
        if (algo[0]) {
            fit(algo, bw);
            text(f, bx + 2, TOP - 7, SMALL, t->fg, "start", NULL, algo);
        }
        if (inner && inner <= 96) /* the algorithm's own messages, in time order: its phases */
            draw_inner(f, x, t, r->tag, r->t, t1, bx + 4, bw - 8, y0, lh, inner);
        if (inner) {
            snprintf(label, sizeof label, "%llu msg%s inside", inner, inner == 1 ? "" : "s");
            fit(label, bw);
            text(f, bx + 6, by + bh - 5, SMALL, t->muted, "start", NULL, label);
        }
    }

    /* lanes: names, the line, the state bars (runs of one state merged) */
    for (int k = 0; k < world; k++) {
        double y = y0 + k * lh;
        bool dead = o->ranks && k < o->world && o->ranks[k].deadlocked;
        char name[32];
        snprintf(name, sizeof name, "Rank %d", k);
        text(f, LEFT - 12, y + 5, FONT, dead ? t->bad : t->fg, "end", "bold", name);
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                   "stroke-width=\"2\"/>\n", LEFT, y, LEFT + dw, y, dead ? t->bad : t->lane);
        size_t run = 0;
        for (size_t i = 0; i <= h.n; i++) {
            int s = i < h.n ? cs_history_state(&h, i, k) & 0x7F : -1;
            int p = i ? cs_history_state(&h, i - 1, k) & 0x7F : -2;
            if (i && s == p) continue;
            if (i && state_fill(t, p))
                fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"10\" rx=\"3\" "
                           "fill=\"%s\"><title>%s</title></rect>\n",
                        LEFT + (double)run * CW, y - 5, (double)(i - run) * CW, state_fill(t, p),
                        p == CS_HS_BLOCKED ? "blocked" : p == CS_HS_COMPUTE ? "compute" : "failed");
            run = i;
        }
    }

    /* rows: messages, exits, errors, pitfalls, the deadlock */
    int npit = 0;
    for (size_t i = 0; i < h.n; i++) {
        const cs_hrow *r = cs_history_row(&h, i);
        double cx = LEFT + (double)i * CW + CW / 2.0;
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
            text(f, cx - 4, ly, SMALL, t->msg, "end", NULL, label);
            if (r->count > 1) {
                snprintf(label, sizeof label, "x%llu", (unsigned long long)r->count);
                text(f, cx - 4, ly + SMALL + 1, SMALL, t->msg, "end", "bold", label);
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
            text(f, cx, y0 + r->from * lh + 6, 18, t->bad, "middle", "bold", "x");
            break;
        case CS_HROW_WARN: {
            double y = y0 + (r->from >= 0 ? r->from : 0) * lh;
            npit++;
            fprintf(f, "<path d=\"M%.1f,%.1f l9,16 l-18,0 z\" fill=\"%s\"/>\n", cx, y - 10, t->warn);
            snprintf(label, sizeof label, "%d", npit);
            text(f, cx, y + 4, 10, t->bg, "middle", "bold", label);
            break;
        }
        case CS_HROW_DEADLOCK:
            fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%d\" height=\"%.1f\" fill=\"%s\" "
                       "fill-opacity=\"0.12\" stroke=\"%s\" stroke-dasharray=\"4 3\"/>\n",
                    cx - CW / 2.0 + 2, TOP, CW - 4, dh, t->bad, t->bad);
            text(f, cx, TOP - 6, SMALL, t->bad, "middle", "bold", "deadlock");
            /* who waits on whom: an arrow from each blocked rank to its peer */
            for (int v = 0; v < o->verdict.nops; v++) {
                const cs_outcome_op *op = &o->verdict.ops[v];
                if (op->peer < 0 || op->peer >= world || op->peer == op->rank) continue;
                double ya = y0 + op->rank * lh, yb = y0 + op->peer * lh;
                double bend = cx + CW * 0.35 * (v % 2 ? -1 : 1);
                fprintf(f, "<path d=\"M%.1f,%.1f Q%.1f,%.1f %.1f,%.1f\" fill=\"none\" stroke=\"%s\" "
                           "stroke-width=\"2.4\" marker-end=\"url(#warrow)\"/>\n",
                        cx, ya, bend, (ya + yb) / 2, cx, yb + (yb > ya ? -6 : 6), t->bad);
            }
            /* what each of its ranks waits in, beside its lane */
            for (int v = 0; v < o->verdict.nops; v++) {
                const cs_outcome_op *op = &o->verdict.ops[v];
                if (op->rank < 0 || op->rank >= world) continue;
                char what[96];
                if (op->tag >= 0 && op->peer >= 0)
                    snprintf(what, sizeof what, "%s %s %d, tag %d, line %d", op->op,
                             strstr(op->op, "recv") ? "from" : "to", op->peer, op->tag, op->line);
                else
                    snprintf(what, sizeof what, "%s, line %d", op->op, op->line);
                text(f, cx + CW / 2.0 + 6, y0 + op->rank * lh - 9, SMALL, t->bad, "start", "bold",
                     what);
            }
            break;
        default: break;
        }
    }

    /* the footer */
    double fy = TOP + dh + 34;
    int n = 0;
    if (agg[0]) n += para(f, 20, fy + n * 17, textw, t->muted, agg);
    if (o->verdict.kind != CS_OUT_OK) {
        text(f, 20, fy + n * 17, FONT, t->bad, "start", "bold", o->verdict.headline);
        n++;
        n += para(f, 20, fy + n * 17, textw, t->fg, o->verdict.why);
        if (o->verdict.fix) {
            char fix[600];
            snprintf(fix, sizeof fix, "fix: %s", o->verdict.fix);
            n += para(f, 20, fy + n * 17, textw, t->muted, fix);
        }
    } else if (o->run_error) {
        n += para(f, 20, fy + n * 17, textw, t->bad, o->run_error);
    }
    for (int p = 0; p < o->npitfalls; p++) {
        char line[400], first[300];
        cs_export_first_line(o->pitfalls[p].text, first, sizeof first);
        snprintf(line, sizeof line, "pitfall %d (rank %d): %s", p + 1, o->pitfalls[p].rank, first);
        n += para(f, 20, fy + n * 17, textw, t->warn, line);
    }
    if (!n) text(f, 20, fy, FONT, t->done, "start", NULL, "every rank finished");
    fputs("</svg>\n", f);
    cs_history_free(&h);
    return 0;
}
