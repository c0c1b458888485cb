/* render.h -- one frame of the visualizer, drawn into a cell grid from the
 * world model, the history and the controls. Pure: no terminal, no clock, no
 * locks (the caller holds the bus lock while a live model is drawn). */
#ifndef CS_RENDER_H
#define CS_RENDER_H

#include <stdbool.h>
#include <stdint.h>

#include "grid.h"
#include "history.h"
#include "model.h"
#include "monitor.h"

/* A panel that takes the screen, scrolled: the alerts (key a), the selected
 * rank's output (key p). */
typedef enum { CS_FULL_NONE, CS_FULL_ALERTS, CS_FULL_OUTPUT } cs_viz_full;

typedef struct cs_viz_view {
    const cs_monitor *mon;
    const cs_history *hist;
    const cs_viz_gate *gates;   /* per rank, or NULL */
    const char *script;         /* shown in the header */
    const char *const *src;     /* the script's lines */
    int nsrc;
    const char *status;         /* "running", "paused", "finished", "deadlocked", ... */
    const char *extra;          /* more header text ("replay 12/40"), or NULL */
    uint64_t steps;             /* operations that passed their gates */
    double speed;               /* operations per second; 0 = full speed; < 0: not shown */
    double now;                 /* run time, for "blocked for" */
    int selected;
    int rank_top;               /* first rank row shown (the caller keeps it in view) */
    size_t diag_back;           /* diagram rows scrolled back from the newest */
    bool help;
    bool replay;                /* replay's keys in the footer and the help */
    bool band_open;             /* key o: the diagram shows one band's messages */
    bool scaled;                /* key t: the diagram draws virtual time to scale (--net) */
    size_t band_row;            /* that band's history row */
    cs_viz_full full;           /* a panel on the whole screen, or none */
    int full_top;               /* its first line shown */
    const char *popup_title, *popup; /* a box over the frame (a tensor's values) */
    int box_top;                /* the line the popup's or the help's text shows from */
    const char *message;        /* a transient line in the footer */
    const char *end_note;       /* why the run ended, when no event says so yet (the
                                 * visualizer's own --timeout), or NULL */
    bool ascii;                 /* no box drawing or arrows outside ASCII */
} cs_viz_view;

/* Where the panels went, for mouse clicks and scrolling. */
typedef struct cs_viz_layout {
    int ranks_y, ranks_h;       /* rank rows (after the panel's title line) */
    int alerts_y, alerts_h;
    int body_y, body_h;
    int diag_x, diag_w;         /* the diagram's columns */
    int diag_col_first, diag_cw; /* first rank column shown and the width of one */
    int right_x, right_w;
} cs_viz_layout;

/* The smallest frame whose columns and panels do not overlap; a smaller one
 * only says so. */
#define CS_VIZ_MIN_W 60
#define CS_VIZ_MIN_H 15
/* Below that size, g (cleared) says so, what it needs and, after status,
 * how to quit, instead of a frame of text over text; true when it did. */
bool cs_viz_too_small(cs_grid *g, const char *status);

void cs_viz_layout_of(const cs_viz_view *v, int w, int h, cs_viz_layout *out);
/* Lines the alerts take at width w (without their title). */
int cs_viz_alert_lines(const cs_viz_view *v, int w);
/* Lines of the panel v->full at width w, the screen's (0 when none). */
int cs_viz_full_lines(const cs_viz_view *v, int w);
/* The output panel at width w: the row where the selected rank's kept line
 * i begins, and the kept line a row is in. A resize rewraps the lines; these
 * keep the line the reader was at on top. */
int cs_viz_output_row(const cs_viz_view *v, int w, size_t line);
size_t cs_viz_output_line(const cs_viz_view *v, int w, int row);
void cs_viz_render(cs_grid *g, const cs_viz_view *v);
/* The rank under screen cell (x, y) of a frame laid out as l, or -1. */
int cs_viz_hit(const cs_viz_layout *l, int rank_top, int nranks, int x, int y);

/* Text in at most w columns, its end replaced by an ellipsis when it is cut
 * (the learn browser's lists too). */
void cs_viz_put_cut(cs_grid *g, int x, int y, int w, const char *text, int fg, int attr, bool ascii);
/* The last row of g: text, cut with an ellipsis where it does not fit, and
 * "? help  q quit" always at its right end (the learn browser's too). */
void cs_viz_footer(cs_grid *g, const char *text, int fg, int attr, bool ascii);
/* A message that the footer would cut takes the row above it too (the learn
 * browser's errors, which a student must read whole): the rows it needs,
 * and the drawing. */
int cs_viz_footer_rows(const cs_grid *g, const char *text);
void cs_viz_footer_long(cs_grid *g, const char *text, int fg, int attr, bool ascii);

/* A bordered box over the middle of g, up to 76 columns wide and as tall as
 * its text (wrapped to it): the help, a tensor's values. Text taller than
 * the screen allows shows from its line top on, its last row saying which
 * keys scroll it. */
void cs_viz_box(cs_grid *g, bool ascii, const char *title, const char *text, int top);
/* The largest top that still fills such a box on a w x h screen (0: the
 * text fits): where the keys that scroll it stop. */
int cs_viz_box_max_top(int w, int h, const char *text);
/* The text of the box a view shows (a popup, or the help), or NULL. */
const char *cs_viz_box_text(const cs_viz_view *v);

/* Colours of rank states, shared with the legend and tests. */
int cs_viz_state_color(cs_rank_state s, bool parked);
const char *cs_viz_state_word(cs_rank_state s, bool parked);

#endif
