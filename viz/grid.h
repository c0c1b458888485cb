/* grid.h -- a cell grid: what a frame of the visualizer looks like, without a
 * terminal. Render functions draw into a grid; the ncurses front end copies it
 * to the screen; the unit tests read it back as text. */
#ifndef CS_GRID_H
#define CS_GRID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    CS_C_DEFAULT = 0,
    CS_C_RED,
    CS_C_GREEN,
    CS_C_YELLOW,
    CS_C_BLUE,
    CS_C_MAGENTA,
    CS_C_CYAN,
    CS_C_NCOLORS
} cs_color;

enum { CS_A_BOLD = 1, CS_A_REVERSE = 2, CS_A_DIM = 4, CS_A_UNDERLINE = 8 };

/* The right half of a double-width character: the cell before it holds the
 * character, the terminal draws the two as one. */
#define CS_CELL_CONT 0

typedef struct cs_cell {
    uint32_t ch;    /* a Unicode code point, or CS_CELL_CONT */
    uint8_t fg;     /* cs_color */
    uint8_t attr;   /* CS_A_* */
} cs_cell;

typedef struct cs_grid {
    int w, h;
    cs_cell *cells;
} cs_grid;

int cs_grid_init(cs_grid *g, int w, int h);
void cs_grid_free(cs_grid *g);
void cs_grid_clear(cs_grid *g);
/* NULL outside the grid, so drawing code never needs to clip by hand. */
cs_cell *cs_grid_at(cs_grid *g, int x, int y);
void cs_grid_putc(cs_grid *g, int x, int y, uint32_t ch, int fg, int attr);
/* UTF-8 text at (x, y), at most maxw columns; control characters become '?',
 * a double-width character takes two cells (or stops the text where only one
 * is left), a zero-width one is left out. Returns the columns written. */
int cs_grid_put(cs_grid *g, int x, int y, int maxw, const char *s, int fg, int attr);
int cs_grid_printf(cs_grid *g, int x, int y, int maxw, int fg, int attr, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));
void cs_grid_fill(cs_grid *g, int x, int y, int w, int h, uint32_t ch, int fg, int attr);
/* Row y as UTF-8 (trailing spaces kept), for tests and text captures. */
char *cs_grid_row(const cs_grid *g, int y, char *buf, size_t len);
/* The whole grid as UTF-8 lines, trailing spaces trimmed; malloc'ed. */
char *cs_grid_text(const cs_grid *g);

/* Decode one UTF-8 sequence at s; returns its length (1 for a bad byte, which
 * decodes as U+FFFD). */
int cs_utf8_decode(const char *s, uint32_t *cp);
int cs_utf8_encode(uint32_t cp, char *out);
/* Columns a code point takes on the terminal: 2 for CJK and most emoji, 0
 * for combining marks, 1 for the rest, and for what the locale does not know
 * (then the screen draws it as one '?'). */
int cs_cp_width(uint32_t cp);
/* Columns of a UTF-8 string, and of its first n bytes. */
int cs_utf8_width(const char *s);
int cs_utf8_cols(const char *s, size_t n);

#endif
