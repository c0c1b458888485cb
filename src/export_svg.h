/* export_svg.h -- what the two SVG pictures share (export_svg_draw.c): the
 * themes, text and wrapped paragraphs, the file's head, the title and the
 * lines beneath the diagram. export_svg.c draws a trace in event order (the
 * visualizer's diagram rows), export_svg_scale.c in modelled virtual time
 * to scale. Internal to the exporters. */
#ifndef CS_EXPORT_SVG_H
#define CS_EXPORT_SVG_H

#include <stdio.h>

#include "export.h"

#define CS_SVG_FONT 13
#define CS_SVG_SMALL 11

typedef struct cs_svg_theme {
    const char *bg, *fg, *muted, *lane, *msg, *blocked, *compute, *coll, *coll_edge, *bad,
        *warn, *done;
} cs_svg_theme;

extern const cs_svg_theme cs_svg_light, cs_svg_dark;

void cs_svg_esc(FILE *f, const char *s);
void cs_svg_text(FILE *f, double x, double y, int size, const char *fill, const char *anchor,
                 const char *weight, const char *s);
/* Word-wrap s at width characters; draw each line from y down, 17 px apart
 * (f NULL: only count them). Returns the lines. */
int cs_svg_para(FILE *f, double x, double y, int width, const char *fill, const char *s);
/* A lane's height for a world of that many ranks. */
double cs_svg_lane_h(int world);
/* s cut to fit w pixels of small bold text, with ".." when cut. */
void cs_svg_fit(char *s, double w);
/* The XML declaration, the svg element, the arrowheads (arrow, warrow,
 * carrow) and the background. attrs: more attributes of the svg element, or "". */
void cs_svg_head(FILE *f, const cs_svg_theme *t, double width, double height, const char *attrs);
/* The title (script, ranks, verdict) and a subtitle beneath it. */
void cs_svg_title(FILE *f, const cs_svg_theme *t, const cs_export_ctx *x, const char *subtitle);
/* The lines beneath the diagram from y: note (what was aggregated, how it
 * is drawn; may be ""), the verdict with its why and fix, or the run's
 * error, or the ranks' errors and why the events end in no verdict
 * (x->ending), the pitfalls by number. f NULL: only count them. Returns
 * lines. */
int cs_svg_footer(FILE *f, const cs_svg_theme *t, const cs_export_ctx *x, const char *note,
                  double y, int textw);
/* The deadlock (x->out's verdict) as a red dashed column centred on cx, cw
 * wide, over the lanes (from top, dh high; lane k's middle at y0 + k * lh):
 * "deadlock" above it, an arrow from each blocked rank to the rank it waits
 * on, and right of the column what each waits in, beside its lane. */
void cs_svg_deadlock(FILE *f, const cs_svg_theme *t, const cs_outcome *o, int world, double cx,
                     double cw, double top, double y0, double lh, double dh);

#endif
