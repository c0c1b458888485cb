/* render_internal.h -- what the frame's parts share: glyphs with their
 * ASCII stand-ins, the box title, and the diagram's entry point. */
#ifndef CS_VIZ_RENDER_INTERNAL_H
#define CS_VIZ_RENDER_INTERNAL_H

#include "render.h"

/* Glyphs with their ASCII stand-ins (NO_COLOR or a non-UTF-8 terminal still
 * get a readable diagram). */
typedef enum { G_VLINE, G_BLOCK, G_COMP, G_COLL, G_HLINE, G_RIGHT, G_LEFT, G_DOT, G_BAND,
               G_BANDX, G_OK, G_FAIL, G_WARN, G_SEL, G_ARROW, G_SELF, G_NGLYPHS } glyph;

static const uint32_t uni[G_NGLYPHS] = {
    [G_VLINE] = 0x2502, [G_BLOCK] = 0x2503, [G_COMP] = 0x250A, [G_COLL] = 0x2551,
    [G_HLINE] = 0x2500, [G_RIGHT] = 0x25B6, [G_LEFT] = 0x25C0, [G_DOT] = 0x25CF,
    [G_BAND] = 0x2550,  [G_BANDX] = 0x256A, [G_OK] = 0x2713,  [G_FAIL] = 0x2717,
    [G_WARN] = '!',     [G_SEL] = 0x25B8,   [G_ARROW] = 0x2192, [G_SELF] = 0x21BA,
};
static const char asc[G_NGLYPHS] = {
    [G_VLINE] = '|', [G_BLOCK] = '#', [G_COMP] = ':', [G_COLL] = 'H', [G_HLINE] = '-',
    [G_RIGHT] = '>', [G_LEFT] = '<',  [G_DOT] = 'o',  [G_BAND] = '=', [G_BANDX] = '+',
    [G_OK] = 'v',    [G_FAIL] = 'X',  [G_WARN] = '!', [G_SEL] = '>',  [G_ARROW] = '>',
    [G_SELF] = '@',
};

static inline uint32_t gl(const cs_viz_view *v, glyph g) { return v->ascii ? (uint32_t)asc[g] : uni[g]; }

/* A box's title: a rule with the text set into it. */
void cs_viz_title(cs_grid *g, const cs_viz_view *v, int x, int y, int w, const char *text);
/* The space-time diagram in the layout's body (render_diagram.c). */
void cs_viz_draw_diagram(cs_grid *g, const cs_viz_view *v, const cs_viz_layout *l);

#endif
