/* tui_view.h -- what the run and replay views share: a script split into
 * lines, and the navigation state (selection, scrolling, help, popups) with
 * the keys that change it. */
#ifndef CS_TUI_VIEW_H
#define CS_TUI_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "render.h"

typedef struct cs_tui_lines {
    char *buf;
    char **line;
    int n;
} cs_tui_lines;

int cs_tui_lines_split(cs_tui_lines *l, const char *text, size_t len);
void cs_tui_lines_free(cs_tui_lines *l);

typedef struct cs_tui_nav {
    int nranks, selected, rank_top;
    size_t diag_back;
    bool help;
    cs_viz_full full;       /* keys a, p: the alerts or the output take the screen */
    bool band_open;         /* key o: the latest band's messages */
    bool scaled;            /* key t: virtual time to scale instead of event order */
    int full_top, full_h;   /* its scroll, and the rows it had last frame */
    int full_w;             /* the width it was wrapped at last frame */
    bool full_follow;       /* at its end: new lines scroll it (less +F) */
    uint64_t out_lost;      /* the selected rank's output lines no longer kept, last frame */
    char *popup;
    char popup_title[128];
    int box_top, box_max;   /* the popup's or the help's scroll, and its end last frame */
    char message[200];
    cs_viz_layout layout;   /* of the last frame, for clicks */
} cs_tui_nav;

void cs_tui_nav_free(cs_tui_nav *n);
void cs_tui_nav_popup(cs_tui_nav *n, const char *title, const char *text);
/* Put the navigation into the view, scrolling the rank table to the selection. */
void cs_tui_nav_apply(cs_tui_nav *n, cs_viz_view *v, int w, int h);
/* The next speed up (dir > 0) or down the one ladder of speeds (0 = full
 * speed, the fastest), from any value, a --speed given or not. */
double cs_tui_next_speed(double cur, int dir);

/* Handle selection, scrolling, help and popup keys; true if ch was one. */
bool cs_tui_nav_key(cs_tui_nav *n, int ch, int x, int y);

#endif
