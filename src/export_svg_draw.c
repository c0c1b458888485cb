/* export_svg_draw.c -- the parts of an SVG picture both diagrams draw the
 * same way (export_svg.h): themes, text, the head, the title, the footer,
 * the deadlock's column. */
#include <string.h>

#include "export_svg.h"

const cs_svg_theme cs_svg_light = {"#ffffff", "#1b1f24", "#57606a", "#d0d7de", "#0550ae", "#e8a33d",
                                   "#8fbcbb", "#ddf4ff", "#54aeff", "#cf222e", "#bf8700", "#2da44e"};
const cs_svg_theme cs_svg_dark = {"#0d1117", "#e6edf3", "#8b949e", "#30363d", "#79c0ff", "#d29922",
                                  "#2f6f6a", "#0c2d6b", "#388bfd", "#ff7b72", "#e3b341", "#3fb950"};

void cs_svg_esc(FILE *f, const char *s) {
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

void cs_svg_text(FILE *f, double x, double y, int size, const char *fill, const char *anchor,
                 const char *weight, const char *s) {
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%d\" fill=\"%s\" text-anchor=\"%s\"%s%s%s>",
            x, y, size, fill, anchor, weight ? " font-weight=\"" : "", weight ? weight : "",
            weight ? "\"" : "");
    cs_svg_esc(f, s);
    fputs("</text>\n", f);
}

int cs_svg_para(FILE *f, double x, double y, int width, const char *fill, const char *s) {
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
        if (f) cs_svg_text(f, x, y + lines * 17, CS_SVG_FONT, fill, "start", NULL, buf);
        lines++;
        s += n;
    }
    return lines;
}

double cs_svg_lane_h(int world) { return world <= 4 ? 56 : world <= 8 ? 46 : 38; }

void cs_svg_fit(char *s, double w) {
    size_t max = w > 14 ? (size_t)((w - 6) / 6.8) : 2;
    if (strlen(s) > max && max >= 3) strcpy(s + max - 2, "..");
}

void cs_svg_head(FILE *f, const cs_svg_theme *t, double width, double height, const char *attrs) {
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
               "viewBox=\"0 0 %.0f %.0f\" font-family=\"DejaVu Sans, Verdana, sans-serif\"%s>\n",
            width, height, width, height, attrs);
    fputs("<defs>", f);
    const char *marks[][2] = {{"arrow", t->msg}, {"warrow", t->bad}, {"carrow", t->coll_edge}};
    for (size_t m = 0; m < 3; m++)
        fprintf(f, "<marker id=\"%s\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"%d\" "
                   "markerHeight=\"%d\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" "
                   "fill=\"%s\"/></marker>", marks[m][0], m == 2 ? 5 : 7, m == 2 ? 5 : 7, marks[m][1]);
    fputs("</defs>\n", f);
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"%s\"/>\n", t->bg);
}

void cs_svg_title(FILE *f, const cs_svg_theme *t, const cs_export_ctx *x, const char *subtitle) {
    const cs_replay *rp = x->rp;
    char title[300];
    snprintf(title, sizeof title, "%s: %d rank%s, %s", rp->script ? rp->script : "trace", rp->world,
             rp->world == 1 ? "" : "s", x->out.word);
    cs_svg_text(f, 20, 30, 18, t->fg, "start", "bold", title);
    cs_svg_text(f, 20, 52, CS_SVG_FONT, t->muted, "start", NULL, subtitle);
}

/* The ranks' own errors (failed) or where the run's end found the ranks it
 * stopped, as the report says them: the first RANKS_SAID, then how many more.
 * Returns the lines. */
#define RANKS_SAID 4
static int rank_lines(FILE *f, const char *fill, const cs_outcome *o, bool failed, double x,
                      double y, int textw) {
    int n = 0, said = 0;
    for (int k = 0; o->ranks && k < o->world; k++) {
        const cs_outcome_rank *r = &o->ranks[k];
        if (failed ? !r->error : r->state != CS_RS_ABORTED || r->deadlocked) continue;
        if (++said > RANKS_SAID) continue;
        char line[600];
        if (failed) snprintf(line, sizeof line, "rank %d failed: %s", k, r->error);
        else if (r->stop) snprintf(line, sizeof line, "rank %d was %s", k, r->stop);
        else snprintf(line, sizeof line, "rank %d did not stop in time: where it was is not known", k);
        n += cs_svg_para(f, x, y + n * 17, textw, fill, line);
    }
    if (said > RANKS_SAID) {
        char line[64];
        snprintf(line, sizeof line, "and %d more ranks %s", said - RANKS_SAID,
                 failed ? "failed" : "stopped");
        n += cs_svg_para(f, x, y + n * 17, textw, fill, line);
    }
    return n;
}

int cs_svg_footer(FILE *f, const cs_svg_theme *t, const cs_export_ctx *x, const char *note,
                  double y, int textw) {
    const cs_outcome *o = &x->out;
    int n = 0;
    if (note && note[0]) n += cs_svg_para(f, 20, y + n * 17, textw, t->muted, note);
    if (o->verdict.kind != CS_OUT_OK) {
        if (f) cs_svg_text(f, 20, y + n * 17, CS_SVG_FONT, t->bad, "start", "bold", o->verdict.headline);
        n++;
        n += cs_svg_para(f, 20, y + n * 17, textw, t->fg, o->verdict.why);
        if (o->verdict.fix) {
            char fix[600];
            snprintf(fix, sizeof fix, "fix: %s", o->verdict.fix);
            n += cs_svg_para(f, 20, y + n * 17, textw, t->muted, fix);
        }
    } else if (o->run_error) {
        /* the run's end, and where it found the ranks it stopped */
        n += cs_svg_para(f, 20, y + n * 17, textw, t->bad, o->run_error);
        n += rank_lines(f, t->fg, o, false, 20, y + n * 17, textw);
    } else {
        n += rank_lines(f, t->bad, o, true, 20, y + n * 17, textw);
        if (x->ending[0]) n += cs_svg_para(f, 20, y + n * 17, textw, t->bad, x->ending);
    }
    for (int q = 0; q < o->npitfalls; q++) {
        char line[400], first[300];
        cs_export_first_line(o->pitfalls[q].text, first, sizeof first);
        snprintf(line, sizeof line, "pitfall %d (rank %d): %s", q + 1, o->pitfalls[q].rank, first);
        n += cs_svg_para(f, 20, y + n * 17, textw, t->warn, line);
    }
    if (!n && f) cs_svg_text(f, 20, y, CS_SVG_FONT, t->done, "start", NULL, "every rank finished");
    return n ? n : 1;
}

void cs_svg_deadlock(FILE *f, const cs_svg_theme *t, const cs_outcome *o, int world, double cx,
                     double cw, double top, double y0, double lh, double dh) {
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
               "fill-opacity=\"0.12\" stroke=\"%s\" stroke-dasharray=\"4 3\"/>\n",
            cx - cw / 2 + 2, top, cw - 4, dh, t->bad, t->bad);
    cs_svg_text(f, cx, top - 6, CS_SVG_SMALL, t->bad, "middle", "bold", "deadlock");
    /* who waits on whom: an arrow from each blocked rank to its peer */
    for (int v = 0; v < o->verdict.nops; v++) {
        const cs_outcome_op *op = &o->verdict.ops[v];
        if (op->peer < 0 || op->peer >= world || op->peer == op->rank) continue;
        double ya = y0 + op->rank * lh, yb = y0 + op->peer * lh;
        double bend = cx + cw * 0.35 * (v % 2 ? -1 : 1);
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
        cs_svg_text(f, cx + cw / 2 + 6, y0 + op->rank * lh - 9, CS_SVG_SMALL, t->bad, "start",
                    "bold", what);
    }
}
