/* export_mermaid.c -- a trace as a Mermaid sequenceDiagram, as the chapters
 * draw their patterns: a participant per rank, an arrow per message with its
 * size and tag, a note for each blocked wait, a rect around each collective,
 * the deadlock as a note over its ranks, where the run's end found each rank
 * it stopped, and a last note when the events end before the run did. Text
 * is kept to the grammar subset docs/export.md lists (no ';' or '#', one
 * line per statement). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "model.h"

#define MAX_ARROWS 2000 /* a diagram past this is unreadable: the rest is counted */

/* Text safe inside a message or note: one line, no control characters, no
 * statement separators. */
static void put_text(FILE *f, const char *s) {
    for (; s && *s; s++) {
        char c = *s;
        if ((unsigned char)c < 0x20 || c == 0x7f) c = ' '; /* ESC would drive a terminal that shows it */
        else if (c == ';') c = ',';
        else if (c == '#') c = ' ';
        else if (c == '%' && s[1] == '%') c = ' ';
        fputc(c, f);
    }
}

/* The start of a note over every rank. */
static void note_over_all(FILE *f, int world) {
    if (world <= 1) fputs("    Note over R0: ", f);
    else fprintf(f, "    Note over R0,R%d: ", world - 1);
}

/* Where the run's own end (a timeout, an interrupt) found each rank it
 * stopped, as the report says it: a note over each of the first STOPS_SAID,
 * then how many more. */
#define STOPS_SAID 4
static void stop_notes(FILE *f, const cs_outcome *o, int world) {
    int said = 0;
    if (!o->run_error) return; /* a rank's failure stopped them: its error says why */
    for (int k = 0; o->ranks && k < o->world && k < world; k++) {
        const cs_outcome_rank *r = &o->ranks[k];
        if (r->state != CS_RS_ABORTED || r->deadlocked || !r->stop) continue;
        if (++said > STOPS_SAID) continue;
        fprintf(f, "    Note over R%d: stopped: ", k);
        put_text(f, r->stop);
        fputc('\n', f);
    }
    if (said > STOPS_SAID) {
        note_over_all(f, world);
        fprintf(f, "and %d more ranks stopped\n", said - STOPS_SAID);
    }
}

typedef struct post {
    cs_op op;
    int peer, tag, line, ctx;
    size_t bytes;
} post;

int cs_export_mermaid(FILE *f, const cs_export_ctx *x, char *err, size_t errlen) {
    const cs_replay *rp = x->rp;
    cs_export_reqmap posts = {0};
    post *pv = NULL;
    size_t npv = 0, cap = 0;
    unsigned long long skipped = 0, arrows = 0;
    int inside = 0; /* ranks inside a collective: the rect is open while > 0 */
    fputs("sequenceDiagram\n", f);
    for (int k = 0; k < rp->world; k++) fprintf(f, "    participant R%d as Rank %d\n", k, k);
    for (size_t i = 0; i < x->to; i++) {
        const cs_event *e = &rp->ev[i];
        if (e->type == CS_EV_POST) {
            if (npv == cap) {
                cap = cap ? cap * 2 : 256;
                post *nv = realloc(pv, cap * sizeof *pv);
                if (!nv) goto oom;
                pv = nv;
            }
            pv[npv] = (post){e->op, e->peer, e->tag, e->line, e->ctx, e->bytes};
            if (cs_export_reqmap_put(&posts, e->rank, e->req, npv++) < 0) goto oom;
            continue;
        }
        if (i < x->from) continue;
        char buf[96], sz[32];
        switch (e->type) {
        case CS_EV_MATCH:
            if (arrows >= MAX_ARROWS) {
                skipped++;
                break;
            }
            arrows++;
            cs_viz_bytes(e->bytes, sz, sizeof sz);
            fprintf(f, "    R%d->>R%d: %s tag %d\n", e->peer, e->rank, sz, e->tag);
            break;
        case CS_EV_BLOCK: {
            size_t at;
            if (arrows >= MAX_ARROWS || !e->nreqs ||
                !cs_export_reqmap_get(&posts, e->rank, e->reqs[0], &at) || pv[at].ctx)
                break; /* a collective's internal waits are the rect's business */
            cs_viz_op_text(pv[at].op, pv[at].peer, pv[at].tag, pv[at].bytes, true, buf, sizeof buf);
            fprintf(f, "    Note over R%d: blocked in %s", e->rank, buf);
            if (e->line) fprintf(f, " at line %d", e->line);
            fputc('\n', f);
            break;
        }
        case CS_EV_COLL:
            if (e->begin) {
                if (inside++ == 0) {
                    fputs("    rect rgba(120, 160, 255, 0.15)\n", f);
                    note_over_all(f, rp->world);
                    put_text(f, e->text);
                    if (e->algo && *e->algo) fprintf(f, " (%s)", e->algo);
                    if (e->reduce_op && *e->reduce_op) fprintf(f, " %s", e->reduce_op);
                    fputc('\n', f);
                }
            } else if (inside > 0 && --inside == 0) {
                fputs("    end\n", f);
            }
            break;
        case CS_EV_WARN:
        case CS_EV_ERROR:
            if (e->rank < 0) /* the run's own end (a timeout), over every rank */
                note_over_all(f, rp->world);
            else
                fprintf(f, "    Note over R%d: %s: ", e->rank,
                        e->type == CS_EV_WARN ? "pitfall" : "error");
            cs_export_first_line(e->text, buf, sizeof buf);
            put_text(f, buf);
            fputc('\n', f);
            break;
        case CS_EV_DEADLOCK: {
            int lo = rp->world, hi = -1;
            for (int k = 0; k < x->mon.world; k++)
                if (x->out.ranks && x->out.ranks[k].deadlocked) {
                    if (k < lo) lo = k;
                    if (k > hi) hi = k;
                }
            if (hi < 0) lo = 0, hi = rp->world - 1;
            if (inside > 0) fputs("    end\n", f), inside = 0;
            char line[200];
            cs_export_first_line(e->text, line, sizeof line);
            if (lo == hi) fprintf(f, "    Note over R%d: ", lo);
            else fprintf(f, "    Note over R%d,R%d: ", lo, hi);
            put_text(f, line);
            fputc('\n', f);
            break;
        }
        default: break;
        }
    }
    if (inside > 0) fputs("    end\n", f);
    if (skipped) {
        note_over_all(f, rp->world);
        fprintf(f, "%llu more messages not drawn\n", skipped);
    }
    stop_notes(f, &x->out, rp->world);
    /* no deadlock note says how these events end: say it */
    if (x->ending[0] && rp->world > 0) {
        note_over_all(f, rp->world);
        put_text(f, x->ending);
        fputc('\n', f);
    }
    cs_export_reqmap_free(&posts);
    free(pv);
    return 0;
oom:
    cs_export_reqmap_free(&posts);
    free(pv);
    snprintf(err, errlen, "out of memory drawing the sequence diagram");
    return -1;
}
