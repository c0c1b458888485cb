/* export.c -- the table of picture formats and what they share: loading the
 * trace (the replay's loader, so a bad trace is refused with the same
 * FILE:LINE reason), the window of events, the outcome of the run. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "export.h"
#include "xalloc.h"

static const cs_export_format formats[] = {
    {"svg", "svg", "the space-time diagram, for slides (open in a browser)", cs_export_svg},
    {"mermaid", "mmd", "a Mermaid sequenceDiagram, for Markdown and notebooks", cs_export_mermaid},
    {"perfetto", "json", "Chrome Trace Event JSON for ui.perfetto.dev", cs_export_perfetto},
    {"asciicast", "cast", "an asciinema v2 recording of the visualizer", cs_export_asciicast},
};
#define NFORMATS (sizeof formats / sizeof formats[0])

const cs_export_format *cs_export_find(const char *name) {
    for (size_t i = 0; i < NFORMATS; i++)
        if (strcmp(name, formats[i].name) == 0) return &formats[i];
    return NULL;
}

void cs_export_print_formats(FILE *f) {
    for (size_t i = 0; i < NFORMATS; i++)
        fprintf(f, "  %-10s %s\n", formats[i].name, formats[i].summary);
}

void cs_export_json_str(FILE *f, const char *s) {
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (*p < 0x20) fprintf(f, "\\u%04x", *p);
            else fputc(*p, f);
        }
    }
}

void cs_export_first_line(const char *s, char *buf, size_t len) {
    size_t n = 0;
    while (s && s[n] && s[n] != '\n' && n + 1 < len) n++;
    if (len) {
        if (s) memcpy(buf, s, n);
        buf[n] = 0;
    }
}

bool cs_export_waits_at_end(const cs_export_ctx *x, int k) {
    const cs_outcome *o = &x->out;
    if (!o->ranks || k < 0 || k >= o->world) return false;
    const cs_outcome_rank *r = &o->ranks[k];
    return r->deadlocked || r->state == CS_RS_BLOCKED || (r->state == CS_RS_ABORTED && r->stop_waiting);
}

uint64_t *cs_export_vclocks(const cs_export_ctx *x) {
    const cs_replay *rp = x->rp;
    uint64_t *clock = calloc((size_t)(rp->world > 0 ? rp->world : 1), sizeof *clock);
    for (size_t i = 0; clock && i < x->to; i++) {
        const cs_event *e = &rp->ev[i];
        if (e->type != CS_EV_VTIME || e->vrank < 0 || e->vrank >= rp->world || !e->text ||
            (strcmp(e->text, "wait") && strcmp(e->text, "compute")))
            continue;
        uint64_t done = e->vt_done > e->vt ? e->vt_done : e->vt;
        if (done > clock[e->vrank]) clock[e->vrank] = done;
    }
    return clock;
}

static unsigned long long rkey(int rank, unsigned long long req) {
    return ((unsigned long long)(unsigned)(rank + 2) << 44) ^ req;
}

static size_t slot(unsigned long long k, size_t cap) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return (size_t)k & (cap - 1);
}

int cs_export_reqmap_put(cs_export_reqmap *m, int rank, unsigned long long req, size_t val) {
    if ((m->n + 1) * 2 > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 1024;
        unsigned long long *key = calloc(cap, sizeof *key);
        size_t *v = malloc(cap * sizeof *v);
        if (!key || !v) {
            free(key);
            free(v);
            return -1;
        }
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->key[i]) continue;
            size_t s = slot(m->key[i], cap);
            while (key[s]) s = (s + 1) & (cap - 1);
            key[s] = m->key[i];
            v[s] = m->val[i];
        }
        free(m->key);
        free(m->val);
        m->key = key;
        m->val = v;
        m->cap = cap;
    }
    unsigned long long k = rkey(rank, req);
    size_t s = slot(k, m->cap);
    while (m->key[s] && m->key[s] != k) s = (s + 1) & (m->cap - 1);
    if (!m->key[s]) m->n++;
    m->key[s] = k;
    m->val[s] = val;
    return 0;
}

bool cs_export_reqmap_get(const cs_export_reqmap *m, int rank, unsigned long long req, size_t *val) {
    if (!m->cap) return false;
    unsigned long long k = rkey(rank, req);
    for (size_t s = slot(k, m->cap); m->key[s]; s = (s + 1) & (m->cap - 1))
        if (m->key[s] == k) {
            *val = m->val[s];
            return true;
        }
    return false;
}

void cs_export_reqmap_free(cs_export_reqmap *m) {
    free(m->key);
    free(m->val);
    memset(m, 0, sizeof *m);
}

const char *cs_export_model(const cs_export_ctx *x) {
    const cs_replay *rp = x->rp;
    if (x->o->real_time || !rp->n || rp->ev[0].type != CS_EV_RUN) return NULL;
    return rp->ev[0].net;
}

int cs_export_file(const char *path, const cs_export_opts *o) {
    const cs_export_format *fmt = cs_export_find(o->format);
    if (!fmt) {
        cs_errf(stderr, "unknown format '%s'; one of:\n", o->format);
        cs_export_print_formats(stderr);
        return 1;
    }
    char err[600];
    cs_replay rp;
    if (cs_replay_open(&rp, path, err, sizeof err) < 0) {
        cs_errf(stderr, "%s\n", err);
        return 1;
    }
    if (rp.cut) cs_errf(stderr, "%s: exported the %zu events before it\n", err, rp.n);
    /* The virtual times are computed again from the events, as replay does,
     * with --net's model or the recorded one: a picture cannot disagree with
     * the report, whatever the trace's vtime lines say. */
    bool model = rp.n && rp.ev[0].type == CS_EV_RUN && rp.ev[0].net;
    if ((o->net || model) && cs_replay_retime(&rp, o->net, err, sizeof err) < 0) {
        cs_errf(stderr, "--net: %s\n", err);
        cs_replay_free(&rp);
        return 1;
    }
    /* asked for modelled time, a picture in real time would pass for one */
    if (o->virtual_time && !(rp.n && rp.ev[0].type == CS_EV_RUN && rp.ev[0].net)) {
        cs_errf(stderr, "--time virtual: %s was recorded without a network model, so it has only "
                "real time (record it with 'commsim run --net MODEL')\n", path);
        cs_replay_free(&rp);
        return 1;
    }
    /* --from past the last event would draw nothing, and call it a picture */
    if (o->from > 0 && (size_t)o->from >= rp.n) {
        cs_errf(stderr, "--from %lld: %s has %zu events (0 to %zu)\n", o->from, path, rp.n,
                rp.n ? rp.n - 1 : 0);
        cs_replay_free(&rp);
        return 1;
    }
    cs_export_ctx x = {.rp = &rp, .path = path, .o = o};
    x.to = o->to >= 0 && (size_t)o->to < rp.n ? (size_t)o->to : rp.n; /* past the end: the end */
    x.from = o->from > 0 ? (size_t)o->from : 0;
    if (x.from > x.to) x.from = x.to;
    if (cs_replay_fold(&rp, x.to, &x.mon) < 0) {
        cs_errf(stderr, "out of memory\n");
        cs_replay_free(&rp);
        return 1;
    }
    /* the verdict replay gives these events, and why when they alone say it */
    int status = cs_replay_status(&rp, x.to, &x.mon, x.ending, sizeof x.ending);
    cs_outcome_build(&x.out, &x.mon, status, NULL);
    if (!x.ending[0] && x.out.kind == CS_OUT_INCOMPLETE) /* cut, every rank done */
        snprintf(x.ending, sizeof x.ending, "the trace is cut off: the run went on past its "
                 "last whole event");
    bool std = !o->out || strcmp(o->out, "-") == 0;
    FILE *f = std ? stdout : fopen(o->out, "wb");
    int rc = 1;
    if (!f) {
        cs_errf(stderr, "%s: %s\n", o->out, strerror(errno));
    } else {
        const char *name = std ? "stdout" : o->out;
        err[0] = 0;
        bool failed = fmt->write(f, &x, err, sizeof err) < 0;
        if (fflush(f) != 0 || ferror(f)) {
            if (!err[0]) snprintf(err, sizeof err, "%s: %s", name, strerror(errno));
            failed = true;
        }
        if (!std && fclose(f) != 0) {
            if (!err[0]) snprintf(err, sizeof err, "%s: %s", name, strerror(errno));
            failed = true;
        }
        if (failed) cs_errf(stderr, "%s\n", err[0] ? err : "write failed");
        /* as replay: a cut trace is drawn up to the cut, and is never a
         * success; the message above the picture said so */
        rc = failed || rp.cut;
    }
    cs_outcome_free(&x.out);
    cs_monitor_destroy(&x.mon);
    cs_replay_free(&rp);
    return rc;
}
