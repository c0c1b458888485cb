/* markdown.h -- a chapter's README.md laid out for the terminal: headings,
 * paragraphs wrapped to the width, lists with hanging indents, code blocks
 * kept as written, block quotes; inline `code` and **bold** lose their marks.
 * Pure: text in, styled lines out. */
#ifndef CS_MARKDOWN_H
#define CS_MARKDOWN_H

#include <stdbool.h>

#include "grid.h"

typedef struct cs_md_line {
    char *text;    /* UTF-8, one screen line */
    int fg, attr;  /* cs_color, CS_A_* */
} cs_md_line;

typedef struct cs_md {
    cs_md_line *line;
    int n, cap;
    bool ascii;
} cs_md;

/* Lay md out at width columns. -1 when out of memory. ascii: without UTF-8,
 * where the symbols the chapters use are spelled out (α as alpha, − as -). */
int cs_md_layout(cs_md *out, const char *md, int width, bool ascii);
void cs_md_free(cs_md *d);
/* Draw lines [top, top + h) at (x, y), clipped to w columns; a line cut
 * there ends in a mark (…, or > in ASCII). */
void cs_md_draw(const cs_md *d, cs_grid *g, int x, int y, int w, int h, int top);

#endif
