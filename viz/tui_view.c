/* tui_view.c -- navigation shared by the visualizer's views. */
#include "tui_view.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "screen.h"

int cs_tui_lines_split(cs_tui_lines *l, const char *text, size_t len) {
    memset(l, 0, sizeof *l);
    l->buf = malloc(len + 1);
    size_t cap = 1;
    for (size_t i = 0; i < len; i++) cap += text[i] == '\n';
    l->line = malloc(cap * sizeof *l->line);
    if (!l->buf || !l->line) {
        cs_tui_lines_free(l);
        return -1;
    }
    memcpy(l->buf, text, len);
    l->buf[len] = 0;
    char *p = l->buf;
    while (*p) {
        l->line[l->n++] = p;
        char *nl = strchr(p, '\n');
        if (!nl) break;
        *nl = 0;
        if (nl > p && nl[-1] == '\r') nl[-1] = 0;
        p = nl + 1;
    }
    return 0;
}

void cs_tui_lines_free(cs_tui_lines *l) {
    free(l->buf);
    free(l->line);
    memset(l, 0, sizeof *l);
}

void cs_tui_nav_free(cs_tui_nav *n) {
    free(n->popup);
    n->popup = NULL;
}

void cs_tui_nav_popup(cs_tui_nav *n, const char *title, const char *text) {
    free(n->popup);
    n->popup = strdup(text);
    n->box_top = 0;
    snprintf(n->popup_title, sizeof n->popup_title, "%s", title);
}

void cs_tui_nav_apply(cs_tui_nav *n, cs_viz_view *v, int w, int h) {
    v->selected = n->selected;
    v->help = n->help;
    v->popup = n->popup;
    v->popup_title = n->popup_title;
    /* a box taller than the screen scrolls within its text */
    const char *box = cs_viz_box_text(v);
    n->box_max = box ? cs_viz_box_max_top(w, h, box) : 0;
    if (n->box_top > n->box_max) n->box_top = n->box_max;
    if (n->box_top < 0) n->box_top = 0;
    v->box_top = n->box_top;
    v->message = n->message[0] ? n->message : NULL;
    v->diag_back = n->diag_back;
    v->rank_top = n->rank_top;
    /* the full panel's scroll stays within it; at its end it follows new
     * lines, scrolled back it stays where it is (less +F, tmux copy mode) */
    v->full = n->full;
    n->full_h = h - 3;
    /* the output scrolled back and rewrapped at a new width: the line that
     * was on top stays on top (its row number alone would land elsewhere) */
    if (n->full == CS_FULL_OUTPUT && !n->full_follow && n->full_w > 2 && n->full_w != w)
        n->full_top = cs_viz_output_row(v, w, cs_viz_output_line(v, n->full_w, n->full_top));
    n->full_w = w;
    /* past the kept lines the oldest go as new ones come: scrolled back, the
     * view moves up with its text (a wrapped line that went counts one row) */
    uint64_t lost = 0;
    if (v->hist && n->selected < v->hist->world)
        lost = v->hist->out[n->selected].total - cs_history_nout(v->hist, n->selected);
    if (n->full == CS_FULL_OUTPUT && !n->full_follow && lost > n->out_lost)
        n->full_top -= (int)(lost - n->out_lost) - (n->out_lost == 0); /* + its "not kept" row */
    n->out_lost = lost;
    int total = cs_viz_full_lines(v, w);
    if (n->full_follow || n->full_top > total - n->full_h) n->full_top = total - n->full_h;
    if (n->full_top < 0) n->full_top = 0;
    /* the alerts, opened at their top, stay there: a window made smaller,
     * or a warning come late, must not scroll away the verdict's first line;
     * End, or scrolling down to their end, follows it */
    n->full_follow = n->full_top >= total - n->full_h &&
                     (n->full == CS_FULL_OUTPUT || n->full_top > 0 || n->full_follow);
    v->band_row = v->hist ? cs_history_last_band(v->hist) : SIZE_MAX;
    v->band_open = n->band_open && v->band_row != SIZE_MAX;
    v->scaled = n->scaled;
    v->full_top = n->full_top;
    cs_viz_layout l;
    cs_viz_layout_of(v, w, h, &l);
    if (n->selected < n->rank_top) n->rank_top = n->selected;
    if (l.ranks_h > 0 && n->selected >= n->rank_top + l.ranks_h)
        n->rank_top = n->selected - l.ranks_h + 1;
    /* a taller window shows more rows, not blank ones past the last rank */
    if (l.ranks_h > 0 && n->rank_top > n->nranks - l.ranks_h)
        n->rank_top = n->nranks > l.ranks_h ? n->nranks - l.ranks_h : 0;
    v->rank_top = n->rank_top;
    if (v->hist && n->diag_back > v->hist->n) n->diag_back = v->hist->n;
    v->diag_back = n->diag_back;
    cs_viz_layout_of(v, w, h, &n->layout);
}

static const double ladder[] = {0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000};
#define NLADDER (int)(sizeof ladder / sizeof ladder[0])

double cs_tui_next_speed(double cur, int dir) {
    if (dir > 0) {
        if (cur == 0) return 0;
        for (int i = 0; i < NLADDER; i++)
            if (ladder[i] > cur) return ladder[i];
        return 0;
    }
    if (cur == 0) return ladder[NLADDER - 1];
    for (int i = NLADDER - 1; i >= 0; i--)
        if (ladder[i] < cur) return ladder[i];
    return cur; /* the slowest already */
}

static void select_rank(cs_tui_nav *n, int k) {
    if (n->nranks <= 0) return;
    n->selected = ((k % n->nranks) + n->nranks) % n->nranks;
}

/* A box taller than the screen (box_max > 0): the keys that scroll it. */
static bool scroll_box(cs_tui_nav *n, int ch) {
    switch (ch) {
    case CS_KEY_UP: case 'k': case CS_KEY_WHEEL_UP: n->box_top--; return true;
    case CS_KEY_DOWN: case 'j': case CS_KEY_WHEEL_DOWN: n->box_top++; return true;
    case CS_KEY_PGUP: n->box_top -= 5; return true;
    case CS_KEY_PGDN: n->box_top += 5; return true;
    case CS_KEY_HOME: n->box_top = 0; return true;
    case CS_KEY_END: n->box_top = n->box_max; return true;
    default: return false;
    }
}

/* a: the alerts from their start; p: the output from its newest line, following */
static bool open_full(cs_tui_nav *n, int ch) {
    n->full = ch == 'a' ? CS_FULL_ALERTS : CS_FULL_OUTPUT;
    n->full_top = 0;
    n->full_follow = ch == 'p';
    return true;
}

bool cs_tui_nav_key(cs_tui_nav *n, int ch, int x, int y) {
    if (n->popup || n->help) { /* any key closes an overlay, but those that scroll it */
        if (ch == CS_KEY_RESIZE || ch == CS_KEY_CLICK) return ch == CS_KEY_RESIZE;
        if (n->box_max > 0 && scroll_box(n, ch)) return true;
        cs_tui_nav_free(n);
        n->help = false;
        return ch != 3; /* q too only closes it; Ctrl-C still quits */
    }
    if (ch != CS_KEY_RESIZE) n->message[0] = 0;
    if (n->full) { /* scrolling keys move the panel; its key or escape closes it */
        int page = n->full_h > 1 ? n->full_h - 1 : 1;
        switch (ch) {
        case 'a': case 'p':
            if ((ch == 'a') != (n->full == CS_FULL_ALERTS)) return open_full(n, ch);
            /* fall through */
        case CS_KEY_ESC: n->full = CS_FULL_NONE; return true;
        case CS_KEY_UP: case 'k': case CS_KEY_WHEEL_UP: n->full_top--; break;
        case CS_KEY_DOWN: case 'j': case CS_KEY_WHEEL_DOWN: n->full_top++; break;
        case CS_KEY_PGUP: n->full_top -= page; break;
        case CS_KEY_PGDN: case ' ': n->full_top += page; break;
        case CS_KEY_HOME: n->full_top = 0; break;
        case CS_KEY_END: n->full_top = 1 << 20; n->full_follow = true; return true;
        case CS_KEY_TAB: case CS_KEY_BTAB: /* the next rank's output, from its end */
            select_rank(n, n->selected + (ch == CS_KEY_TAB ? 1 : -1));
            n->full_follow = true;
            return true;
        case '?': n->help = true, n->box_top = 0; return true;
        case 'q': case 3: return false;
        /* the output is read while the run goes on: the run's own keys
         * (s, r, +, -) work under it */
        default: return n->full == CS_FULL_ALERTS;
        }
        /* a key that scrolls leaves the end; the next frame follows again
         * if it went back there */
        n->full_follow = false;
        return true;
    }
    switch (ch) {
    case 'o':
        n->band_open = !n->band_open;
        n->diag_back = 0;
        return true;
    case 't': /* the render says so when the run has no modelled time */
        n->scaled = !n->scaled;
        n->diag_back = 0;
        return true;
    case 'a': case 'p': return open_full(n, ch);
    case CS_KEY_TAB: case CS_KEY_DOWN: case CS_KEY_RIGHT: case 'j': select_rank(n, n->selected + 1); return true;
    case CS_KEY_BTAB: case CS_KEY_UP: case CS_KEY_LEFT: case 'k': select_rank(n, n->selected - 1); return true;
    case CS_KEY_HOME: select_rank(n, 0); return true;
    case CS_KEY_PGUP: case CS_KEY_WHEEL_UP: n->diag_back += ch == CS_KEY_PGUP ? 10 : 3; return true;
    case CS_KEY_PGDN: case CS_KEY_WHEEL_DOWN: {
        size_t d = ch == CS_KEY_PGDN ? 10 : 3;
        n->diag_back = n->diag_back > d ? n->diag_back - d : 0;
        return true;
    }
    case CS_KEY_END: n->diag_back = 0; return true;
    case '?': n->help = true, n->box_top = 0; return true;
    case CS_KEY_RESIZE: return true;
    case CS_KEY_CLICK: {
        int k = cs_viz_hit(&n->layout, n->rank_top, n->nranks, x, y);
        if (k >= 0) n->selected = k;
        return true;
    }
    default: return false;
    }
}
