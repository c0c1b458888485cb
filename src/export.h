/* export.h -- pictures of a recorded run: one writer per format (SVG,
 * Mermaid, Perfetto, asciicast), all readers of a trace. This module owns the
 * table of formats and the part they share: the trace loaded whole, the
 * window of events to draw, and the outcome of the run up to its end. */
#ifndef CS_EXPORT_H
#define CS_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "monitor.h"
#include "outcome.h"
#include "replay.h"

typedef struct cs_export_opts {
    const char *format;
    const char *out;        /* NULL or "-": standard output */
    long long from, to;     /* events drawn, by position in the trace; -1: the ends */
    int width, height;      /* 0: the format's default */
    bool dark;              /* --theme dark */
    double speed;           /* asciicast: 0: at the events' times; else steps per second */
    const char *net;        /* --net: time the trace again under this model first, or NULL */
    bool real_time;         /* --time real: a trace with a model drawn in event order and real
                               time, as one without (svg, perfetto) */
    bool virtual_time;      /* --time virtual given: a trace without a model is refused */
} cs_export_opts;

/* What every writer reads. Events [from, to) are drawn; the outcome is the
 * fold of [0, to): the verdict and the pitfalls as replay reports them. */
typedef struct cs_export_ctx {
    const cs_replay *rp;
    const char *path;       /* the trace's */
    const cs_export_opts *o;
    size_t from, to;
    cs_monitor mon;
    cs_outcome out;
    /* why the outcome is a failure when neither a rank nor the monitor says
     * so (the events end before the run did, the trace is cut), else "" */
    char ending[160];
} cs_export_ctx;

typedef int (*cs_export_fn)(FILE *f, const cs_export_ctx *x, char *err, size_t errlen);

typedef struct cs_export_format {
    const char *name, *ext, *summary;
    cs_export_fn write;
} cs_export_format;

const cs_export_format *cs_export_find(const char *name);
void cs_export_print_formats(FILE *f);

/* Load path, draw it in o's format into o->out. 0, or 1 with the reason on
 * stderr (FILE:LINE errors as replay gives them). */
int cs_export_file(const char *path, const cs_export_opts *o);

int cs_export_svg(FILE *f, const cs_export_ctx *x, char *err, size_t errlen);       /* export_svg.c */
int cs_export_svg_scale(FILE *f, const cs_export_ctx *x, char *err, size_t errlen); /* export_svg_scale.c */
/* The trace's network model when the picture is to be drawn in its virtual
 * time (a model, and not --time real), else NULL. */
const char *cs_export_model(const cs_export_ctx *x);
int cs_export_mermaid(FILE *f, const cs_export_ctx *x, char *err, size_t errlen);   /* export_mermaid.c */
int cs_export_perfetto(FILE *f, const cs_export_ctx *x, char *err, size_t errlen);  /* export_perfetto.c */
int cs_export_asciicast(FILE *f, const cs_export_ctx *x, char *err, size_t errlen); /* export_asciicast.c */

/* Helpers the writers share. */
/* s as the body of a JSON string (no quotes). */
void cs_export_json_str(FILE *f, const char *s);
/* The first line of s, at most len-1 bytes. */
void cs_export_first_line(const char *s, char *buf, size_t len);

/* Rank k is in a wait that never ends where the drawn events end: one of a
 * deadlock's ranks, a rank the run stopped inside an operation (a timeout,
 * an interrupt, another rank's failure), or one still blocked where the
 * window ends (--to). */
bool cs_export_waits_at_end(const cs_export_ctx *x, int k);
/* Each rank's virtual clock where the drawn events end (world entries, in
 * ns, malloc'ed; NULL: no memory): the end of its last timed wait or compute
 * (posting takes no virtual time), from the trace's start, not the window's. */
uint64_t *cs_export_vclocks(const cs_export_ctx *x);
/* A map from (rank, request) to an index, for pairing posts with their
 * completions and sends with their receives. */
typedef struct cs_export_reqmap {
    unsigned long long *key;
    size_t *val;
    size_t cap, n;
} cs_export_reqmap;

int cs_export_reqmap_put(cs_export_reqmap *m, int rank, unsigned long long req, size_t val);
bool cs_export_reqmap_get(const cs_export_reqmap *m, int rank, unsigned long long req, size_t *val);
void cs_export_reqmap_free(cs_export_reqmap *m);

#endif
