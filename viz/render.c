/* render.c -- drawing one frame: header, rank table, alerts, space-time
 * diagram (render_diagram.c), source, messages in flight, output, footer;
 * help and popups on top.
 *
 * Everything is drawn from the view into the grid; nothing here keeps state
 * between frames, so a resize is just the next frame at another size.
 */
#include "render_internal.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recheck.h"


/* ---- words and colours */

const char *cs_viz_state_word(cs_rank_state s, bool parked) {
    if (parked) return "ready";
    return cs_rank_state_name(s);
}

int cs_viz_state_color(cs_rank_state s, bool parked) {
    if (parked) return CS_C_YELLOW;
    switch (s) {
    case CS_RS_RUNNING: return CS_C_GREEN;
    case CS_RS_BLOCKED: return CS_C_RED;
    case CS_RS_COMPUTING: return CS_C_CYAN;
    case CS_RS_DONE: return CS_C_BLUE;
    case CS_RS_FAILED: return CS_C_MAGENTA;
    default: return CS_C_DEFAULT;
    }
}

/* ---- text helpers */

/* Draw text wrapped at word boundaries into w columns, at most maxh lines
 * after the first skip ones, which are left out (g NULL: only count).
 * Returns the lines drawn. */
#define NBSP_UTF8 "\xc2\xa0"

static int wrap_rows(cs_grid *g, int x, int y, int w, int skip, int maxh, const char *text,
                     int fg, int attr, int indent) {
    int lines = 0;
    maxh = maxh > INT_MAX - skip ? INT_MAX : maxh + skip;
    bool cont = false; /* a continuation of a wrapped line: indented */
    const char *p = text;
    while (*p && lines < maxh) {
        int avail = w - (cont ? indent : 0);
        if (avail < 8) avail = w;
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        /* take up to avail columns (a wide character counts two), backing
         * off to a space; at least one character, so that a line too narrow
         * for it still moves on */
        size_t take = 0, last_space = 0;
        int cols = 0;
        while (take < len) {
            uint32_t cp;
            size_t k = (size_t)cs_utf8_decode(p + take, &cp);
            int cw = cs_cp_width(cp);
            if (cols + cw > avail && take > 0) break;
            if (cp == ' ') last_space = take;
            take += k;
            cols += cw;
        }
        if (take < len && last_space > 0) take = last_space;
        if (g && lines >= skip) {
            char buf[1024];
            size_t n = 0;
            /* a no-break space (NBSP_UTF8) keeps two words together: drawn
             * as a space */
            for (size_t i = 0; i < take && n < sizeof buf - 1; i++)
                if (strncmp(p + i, NBSP_UTF8, 2) == 0 && i + 1 < take) buf[n++] = ' ', i++;
                else buf[n++] = p[i];
            buf[n] = 0;
            cs_grid_put(g, x + (cont ? indent : 0), y + lines - skip, avail, buf, fg, attr);
        }
        lines++;
        p += take;
        cont = take < len;
        if (cont)
            while (*p == ' ') p++;
        else if (*p == '\n') p++;
    }
    return lines > skip ? lines - skip : 0;
}

static int wrap(cs_grid *g, int x, int y, int w, int maxh, const char *text, int fg, int attr,
                int indent) {
    return wrap_rows(g, x, y, w, 0, maxh, text, fg, attr, indent);
}

void cs_viz_title(cs_grid *g, const cs_viz_view *v, int x, int y, int w, const char *text) {
    cs_grid_fill(g, x, y, w, 1, gl(v, G_HLINE), CS_C_DEFAULT, CS_A_DIM);
    char t[256];
    snprintf(t, sizeof t, " %s ", text);
    cs_viz_put_cut(g, x + 1, y, w - 2, t, CS_C_DEFAULT, CS_A_BOLD, v->ascii);
}

/* ---- layout */

/* The alerts' text at width w from line y: what does not fit between y and
 * end is cut (g NULL: only count). Returns the lines used. */
static int alert_text(cs_grid *g, const cs_viz_view *v, int y, int end, int w);

int cs_viz_alert_lines(const cs_viz_view *v, int w) { return alert_text(NULL, v, 0, 1 << 20, w); }

static int alerts_lines(const cs_viz_view *v, int w) { return cs_viz_alert_lines(v, w); }

void cs_viz_layout_of(const cs_viz_view *v, int w, int h, cs_viz_layout *o) {
    memset(o, 0, sizeof *o);
    int nr = v->mon->world;
    int body_min = 6;
    int ranks_h = nr < (h - 2) / 4 ? nr : (h - 2) / 4;
    if (ranks_h < 2) ranks_h = nr < 2 ? nr : 2;
    o->ranks_y = 2;
    o->ranks_h = ranks_h;
    int y = o->ranks_y + ranks_h;
    int al = alerts_lines(v, w);
    int room = h - 1 - y - body_min - 1;
    if (al > 0) {
        /* a deadlock's explanation is the point of the frame: it may take the room */
        int cap = v->mon->deadlocked || h / 3 > room ? room : h / 3;
        o->alerts_h = al + 1 < cap ? al + 1 : cap; /* + its title line */
        if (o->alerts_h < 0) o->alerts_h = 0;
        o->alerts_y = y;
        y += o->alerts_h;
    }
    o->body_y = y;
    o->body_h = h - 1 - y;
    o->diag_x = 0;
    o->diag_w = w * 11 / 20;
    o->right_x = o->diag_w + 1;
    o->right_w = w - o->right_x;
    int cw = nr ? (o->diag_w - 1) / nr : 4;
    o->diag_cw = cw < 4 ? 4 : cw > 10 ? 10 : cw;
    int vis = (o->diag_w - 1) / o->diag_cw;
    int first = v->selected - vis / 2;
    if (first > nr - vis) first = nr - vis;
    o->diag_col_first = first < 0 ? 0 : first;
}

int cs_viz_hit(const cs_viz_layout *l, int rank_top, int nranks, int x, int y) {
    int k = -1;
    if (y >= l->ranks_y && y < l->ranks_y + l->ranks_h) k = rank_top + (y - l->ranks_y);
    else if (y > l->body_y && y < l->body_y + l->body_h && x >= l->diag_x &&
             x < l->diag_x + l->diag_w)
        k = l->diag_col_first + (x - l->diag_x) / l->diag_cw;
    return k >= 0 && k < nranks ? k : -1;
}

/* ---- header and footer */

static int status_color(const char *s) {
    if (!strcmp(s, "deadlocked") || !strcmp(s, "failed")) return CS_C_RED;
    if (!strcmp(s, "running")) return CS_C_GREEN;
    if (!strcmp(s, "paused")) return CS_C_YELLOW;
    return CS_C_BLUE;
}

/* The header's facts, each with the rank at which it goes when the line is
 * too narrow: the send mode and the engine first (they do not change during
 * a run), the event's position in a replay and the program's name last. The
 * caller's extra text is split at its double spaces. */
typedef struct hfield {
    char text[96];
    int drop; /* 1 stays longest */
} hfield;

static int header_fields(const cs_viz_view *v, hfield *f, int max) {
    const cs_monitor *m = v->mon;
    int n = 0;
#define FIELD(rank, ...) (n < max ? (snprintf(f[n].text, sizeof f[n].text, __VA_ARGS__), f[n++].drop = (rank)) : 0)
    FIELD(1, "%s", v->script ? v->script : "?");
    FIELD(6, "%s", m->engine ? m->engine : "thread");
    if (m->send_mode) FIELD(7, "%s", m->send_mode);
    FIELD(3, "world %d", m->world);
    FIELD(5, "step %llu", (unsigned long long)v->steps);
    if (v->speed > 0) FIELD(4, "%g ops/s", v->speed);
    else if (v->speed == 0) FIELD(4, "full speed");
    /* extra: "event 7/40  t=0.120s  (trace cut off)": the position stays */
    for (const char *p = v->extra, *q; p && *p; p = q + (*q ? 2 : 0)) {
        q = strstr(p, "  ");
        if (!q) q = p + strlen(p);
        FIELD(p == v->extra ? 2 : 4, "%.*s", (int)(q - p), p);
    }
#undef FIELD
    return n;
}

static void draw_header(cs_grid *g, const cs_viz_view *v) {
    char status[32];
    /* the status, shouted, always fits: the rest is cut before it */
    int n = snprintf(status, sizeof status, " %s ", v->status ? v->status : "");
    for (int i = 0; i < n; i++)
        if (status[i] >= 'a' && status[i] <= 'z') status[i] = (char)(status[i] - 32);
    int sx = g->w - n > 0 ? g->w - n : 0;
    cs_grid_fill(g, 0, 0, g->w, 1, ' ', CS_C_DEFAULT, CS_A_REVERSE);
    hfield f[16];
    int nf = header_fields(v, f, 16);
    char rest[512];
    /* drop the least telling facts until the rest fits whole */
    for (int level = 8;; level--) {
        size_t o = 0;
        for (int i = 0; i < nf && o < sizeof rest; i++)
            if (f[i].drop && f[i].drop < level)
                o += (size_t)snprintf(rest + o, sizeof rest - o, " %s ", f[i].text);
        if (level <= 2 || cs_utf8_width(rest) + 1 <= sx) break;
    }
    /* the program's name goes first when the facts of the run do not fit */
    int x = 0;
    if (9 + cs_utf8_width(rest) + 1 <= sx)
        x = cs_grid_printf(g, 0, 0, sx, CS_C_DEFAULT, CS_A_REVERSE | CS_A_BOLD, " commsim ");
    cs_grid_put(g, x, 0, sx - x - 1, rest, CS_C_DEFAULT, CS_A_REVERSE);
    cs_grid_put(g, sx, 0, n, status, status_color(v->status ? v->status : ""),
                CS_A_REVERSE | CS_A_BOLD);
}

/* ---- the footer: whatever it says, "? help  q quit" stays at its right end */

static const char *const footer_tail[][2] = {{"?", "help"}, {"q", "quit"}};

static int key_width(const char *const k[2]) { return (int)strlen(k[0]) + (int)strlen(k[1]) + 3; }

/* A key in reverse video and what it does; returns the columns used. */
static int put_key(cs_grid *g, int x, int y, const char *const k[2]) {
    int n = cs_grid_put(g, x, y, g->w - x, k[0], CS_C_DEFAULT, CS_A_REVERSE);
    return n + cs_grid_printf(g, x + n, y, g->w - x - n, CS_C_DEFAULT, 0, " %s  ", k[1]);
}

void cs_viz_put_cut(cs_grid *g, int x, int y, int w, const char *text, int fg, int attr, bool ascii) {
    if (w <= 0) return;
    if (cs_utf8_width(text) <= w) {
        cs_grid_put(g, x, y, w, text, fg, attr);
        return;
    }
    const char *ell = ascii ? "..." : "\u2026";
    int ew = cs_utf8_width(ell);
    int n = cs_grid_put(g, x, y, w > ew ? w - ew : w, text, fg, attr);
    if (w > ew) cs_grid_put(g, x + n, y, ew, ell, fg, attr);
}

/* Where the tail starts: right-aligned, one column from the edge. */
static int tail_x(const cs_grid *g) {
    int tw = -2; /* no gap after the last key */
    for (size_t i = 0; i < 2; i++) tw += key_width(footer_tail[i]);
    return g->w - 1 - tw < 1 ? 1 : g->w - 1 - tw;
}

void cs_viz_footer(cs_grid *g, const char *text, int fg, int attr, bool ascii) {
    int y = g->h - 1, tx = tail_x(g);
    cs_grid_fill(g, 0, y, g->w, 1, ' ', CS_C_DEFAULT, 0);
    cs_viz_put_cut(g, 1, y, tx - 3, text, fg, attr, ascii);
    for (size_t i = 0; i < 2; i++) tx += put_key(g, tx, y, footer_tail[i]);
}

/* Where a message too long for the footer breaks: the longest start of it,
 * ending before a space, that fills the row above (0: it fits the footer). */
static size_t footer_break(const cs_grid *g, const char *text) {
    int room = tail_x(g) - 3, full = g->w - 2;
    if (cs_utf8_width(text) <= room) return 0;
    size_t n = strlen(text), brk = 0;
    for (size_t i = 1; i < n && cs_utf8_cols(text, i) <= full; i++)
        if (text[i] == ' ') brk = i;
    return brk ? brk : (size_t)cs_utf8_cols(text, n) > (size_t)full ? 0 : n;
}

int cs_viz_footer_rows(const cs_grid *g, const char *text) {
    return footer_break(g, text) ? 2 : 1;
}

void cs_viz_footer_long(cs_grid *g, const char *text, int fg, int attr, bool ascii) {
    size_t brk = footer_break(g, text);
    if (!brk) {
        cs_viz_footer(g, text, fg, attr, ascii);
        return;
    }
    char first[1024];
    snprintf(first, sizeof first, "%.*s", (int)(brk < sizeof first ? brk : sizeof first - 1), text);
    cs_grid_fill(g, 0, g->h - 2, g->w, 1, ' ', CS_C_DEFAULT, 0);
    cs_grid_put(g, 1, g->h - 2, g->w - 2, first, fg, attr);
    text += brk;
    while (*text == ' ') text++;
    cs_viz_footer(g, text, fg, attr, ascii);
}

static void draw_footer(cs_grid *g, const cs_viz_view *v) {
    if (v->message && v->full != CS_FULL_ALERTS) { /* the run's keys work under the output */
        cs_viz_footer(g, v->message, CS_C_YELLOW, CS_A_BOLD, v->ascii);
        return;
    }
    if (v->full) { /* the way back first: a narrow footer cuts the end */
        cs_viz_footer(g, v->full == CS_FULL_ALERTS
                             ? "a or esc: back   alerts: arrows, PgUp/PgDn scroll"
                             : "p or esc: back   output: arrows, PgUp/PgDn scroll, End follows",
                      CS_C_DEFAULT, 0, v->ascii);
        return;
    }
    /* by importance: at 80 columns the keys up to p fit (the rest are under ?) */
    static const char *const live[][2] = {
        {"space", "step"}, {"s", "step rank"}, {"r", "run/pause"}, {"tab", "rank"},
        {"p", "output"},   {"+/-", "speed"},   {"enter", "tensor"}, {NULL, NULL},
    };
    static const char *const replay[][2] = {
        {"space", "next op"}, {"b", "back"}, {"] [", "event"}, {"G g", "end/start"},
        {"r", "play/pause"},  {"+/-", "speed"}, {NULL, NULL},
    };
    const char *const (*keys)[2] = v->replay ? replay : live;
    cs_viz_footer(g, "", CS_C_DEFAULT, 0, v->ascii);
    /* the keys in their order while they fit before the tail: the last go first */
    int x = 1, y = g->h - 1;
    for (size_t i = 0; keys[i][0] && x + key_width(keys[i]) <= tail_x(g); i++)
        x += put_key(g, x, y, keys[i]);
}

/* ---- the rank table */

static void rank_row(cs_grid *g, const cs_viz_view *v, int k, int y) {
    cs_viz_rank r;
    const cs_viz_rank *fr = v->hist && v->hist->frozen ? &v->hist->frozen[k] : NULL;
    if (fr) r = *fr;
    else cs_viz_describe(v->mon, v->hist, v->gates ? &v->gates[k] : NULL, k, v->ascii, &r);
    bool sel = k == v->selected;
    int attr = sel ? CS_A_REVERSE : 0;
    cs_grid_fill(g, 0, y, g->w, 1, ' ', CS_C_DEFAULT, attr);
    if (sel) cs_grid_putc(g, 0, y, gl(v, G_SEL), CS_C_DEFAULT, attr | CS_A_BOLD);
    cs_grid_printf(g, 1, y, 6, CS_C_DEFAULT, attr | CS_A_BOLD, "%5d", k);
    cs_grid_put(g, 8, y, 10, cs_viz_state_word(r.state, r.parked),
                cs_viz_state_color(r.state, r.parked), attr | CS_A_BOLD);
    int opw = g->w - 19 - 18;
    cs_grid_put(g, 19, y, opw, r.op, CS_C_DEFAULT, attr);
    if (r.line > 0) cs_grid_printf(g, g->w - 17, y, 8, CS_C_DEFAULT, attr, "line %d", r.line);
    if (r.state == CS_RS_BLOCKED) {
        double t = (fr ? v->hist->t : v->now) - r.since;
        cs_grid_printf(g, g->w - 8, y, 8, CS_C_RED, attr, "%6.1fs", t > 0 ? t : 0);
    }
}

static void draw_ranks(cs_grid *g, const cs_viz_view *v, const cs_viz_layout *l) {
    char t[96];
    int n = v->mon->world;
    if (n > l->ranks_h)
        snprintf(t, sizeof t, "ranks %d-%d of %d", v->rank_top, v->rank_top + l->ranks_h - 1, n);
    else snprintf(t, sizeof t, "ranks");
    cs_viz_title(g, v, 0, l->ranks_y - 1, g->w, t);
    cs_grid_put(g, g->w - 30, l->ranks_y - 1, 29, v->hist && v->hist->frozen ?
                " as the deadlock found them " : "", CS_C_RED, 0);
    for (int i = 0; i < l->ranks_h && v->rank_top + i < n; i++)
        rank_row(g, v, v->rank_top + i, l->ranks_y + i);
}

/* ---- alerts: the deadlock with its cycle, errors, warnings */

/* "DEADLOCK  wait-for cycle: rank 0 → rank 1 → rank 0", wrapped (g NULL:
 * only count). A cycle longer than the ranks kept is elided in the middle,
 * never closed early: "rank 0 → … → rank 15 → … (20 ranks) → rank 0".
 * Returns the lines used. */
static int draw_cycle(cs_grid *g, const cs_viz_view *v, int y, int end, int w) {
    int buf[CS_HIST_CYCLE_KEEP], n;
    const int *cyc = buf;
    if (v->hist && v->hist->frozen) cyc = v->hist->cycle, n = v->hist->ncycle;
    else n = cs_viz_cycle(v->mon, buf, CS_HIST_CYCLE_KEEP);
    if (g) cs_grid_put(g, 1, y, w - 2, "DEADLOCK", CS_C_RED, CS_A_BOLD | CS_A_REVERSE);
    if (n == 0) return 1;
    int named = n < CS_HIST_CYCLE_KEEP ? n : CS_HIST_CYCLE_KEEP;
    char text[400];
    size_t o = (size_t)snprintf(text, sizeof text, "wait-for cycle: ");
    const char *arrow = v->ascii ? " -> " : " → ";
    /* a line may break after an arrow, never inside "rank 3" */
    for (int i = 0; i < named && o < sizeof text; i++)
        o += (size_t)snprintf(text + o, sizeof text - o, "rank" NBSP_UTF8 "%d%s", cyc[i], arrow);
    if (named < n && o < sizeof text)
        o += (size_t)snprintf(text + o, sizeof text - o, "%s (%d" NBSP_UTF8 "ranks)%s",
                              v->ascii ? "..." : "…", n, arrow);
    if (o < sizeof text) snprintf(text + o, sizeof text - o, "rank" NBSP_UTF8 "%d", cyc[0]);
    int lines = wrap(g, 11, y, w - 12, end - y, text, CS_C_RED, CS_A_BOLD, 0);
    return lines > 0 ? lines : 1;
}

/* The report's deadlock text, its paragraphs (a line and the indented lines
 * under it) reordered: the first, where each rank is stuck (two internal
 * requests a rank in a collective), goes after why and fix, which an alert
 * of a few rows at 80x24 must show (g NULL: only count). The rank table
 * shows where each rank is stuck already. Returns the lines used. */
static int deadlock_text(cs_grid *g, int y, int end, int w, const char *text) {
    const char *p = strchr(text, '\n');
    while (p && p[1] == ' ') p = strchr(p + 1, '\n');
    char *first = p && p[1] ? strndup(text, (size_t)(p - text)) : NULL;
    if (!first) return wrap(g, 1, y, w - 2, end - y, text, CS_C_RED, 0, 4);
    int n = wrap(g, 1, y, w - 2, end - y, p + 1, CS_C_RED, 0, 4);
    n += wrap(g, 1, y + n, w - 2, end - y - n, first, CS_C_RED, 0, 4);
    free(first);
    return n;
}

/* Under the run's own end (a timeout, an interrupt): where it found the
 * ranks it stopped, the first CS_STOPS_SHOWN, as the summary says it (g NULL:
 * only count). Returns the lines used. */
static int stop_text(cs_grid *g, const cs_monitor *m, int y, int end, int w) {
    int y0 = y, shown = 0;
    for (int k = 0; k < m->world && y < end && shown < CS_STOPS_SHOWN; k++) {
        int line;
        char *stop = cs_monitor_stop_text(m, k, &line);
        if (!stop) continue;
        char text[640];
        snprintf(text, sizeof text, "rank %d was %s", k, stop);
        free(stop);
        int n = wrap(g, 3, y, w - 4, end - y, text, CS_C_MAGENTA, 0, 4);
        y += n ? n : 1;
        shown++;
    }
    return y - y0;
}

static int alert_text(cs_grid *g, const cs_viz_view *v, int y, int end, int w) {
    const cs_monitor *m = v->mon;
    int y0 = y;
    if (m->deadlocked && m->deadlock.text && y < end) {
        y += draw_cycle(g, v, y, end, w);
        y += deadlock_text(g, y, end, w, m->deadlock.text);
    }
    for (int k = 0; k < m->world && y < end; k++)
        if (m->ranks[k].error) {
            /* whose error: the text names a file and line, not the rank */
            char who[32] = "";
            if (strncmp(m->ranks[k].error, "rank ", 5) != 0)
                snprintf(who, sizeof who, "rank %d: ", k);
            if (g) cs_grid_put(g, 1, y, w - 2, who, CS_C_MAGENTA, CS_A_BOLD);
            int x = 1 + (int)strlen(who);
            int n = wrap(g, x, y, w - 1 - x, end - y, m->ranks[k].error, CS_C_MAGENTA,
                         CS_A_BOLD, 4);
            y += n ? n : 1;
        }
    /* the run's own end (a timeout): recorded as an event of no rank, or not
     * yet recorded while the visualizer that timed it out is up */
    const char *note = m->run_error ? m->run_error : v->end_note;
    if (note && y < end) {
        int n = wrap(g, 1, y, w - 2, end - y, note, CS_C_MAGENTA, CS_A_BOLD, 4);
        y += n ? n : 1;
        y += stop_text(g, m, y, end, w);
    }
    /* An eager run rechecked with rendezvous sends: the summary's line, in
     * green when it holds, yellow when only buffering kept the run going */
    if (m->recheck && y < end) {
        bool ok = strncmp(m->recheck + strlen(CS_RECHECK_PREFIX), "ok", 2) == 0;
        size_t n = strcspn(m->recheck, "\n");
        char *line = strndup(m->recheck, n);
        int k = line ? wrap(g, 1, y, w - 2, end - y, line, ok ? CS_C_GREEN : CS_C_YELLOW,
                            ok ? 0 : CS_A_BOLD, 4) : 0;
        free(line);
        y += k ? k : 1;
    }
    size_t nw = cs_history_nwarn(v->hist);
    for (size_t i = 0; i < nw && y < end; i++) {
        if (g) cs_grid_put(g, 1, y, 9, "warning: ", CS_C_YELLOW, CS_A_BOLD);
        int n = wrap(g, 10, y, w - 11, end - y, cs_history_warn(v->hist, i), CS_C_YELLOW, 0, 2);
        y += n ? n : 1;
    }
    return y - y0;
}

typedef int (*panel_text)(cs_grid *g, const cs_viz_view *v, int y, int end, int w);

/* A panel's lines top..top+h-1 into rows y..y+h of g: drawn from its first
 * line on a grid of h rows of its own, starting top rows above it (the grid
 * clips them), then copied; so a scrolled panel wraps exactly as an
 * unscrolled one, and the lines below the window are not even wrapped. */
static void panel_window(cs_grid *g, const cs_viz_view *v, panel_text text, int y, int h,
                         int top) {
    cs_grid win;
    if (h <= 0 || cs_grid_init(&win, g->w, h) < 0) return;
    text(&win, v, -top, h, g->w);
    for (int i = 0; i < h; i++)
        for (int x = 0; x < g->w; x++) {
            cs_cell *c = cs_grid_at(g, x, y + i);
            if (c) *c = *cs_grid_at(&win, x, i);
        }
    cs_grid_free(&win);
}

static void draw_alerts(cs_grid *g, const cs_viz_view *v, const cs_viz_layout *l) {
    if (!l->alerts_h) return;
    int total = alerts_lines(v, g->w), shown = l->alerts_h - 1;
    char t[96];
    if (total > shown)
        snprintf(t, sizeof t, "alerts (%d more line%s: a shows them all)", total - shown,
                 total - shown == 1 ? "" : "s");
    else snprintf(t, sizeof t, "alerts");
    cs_viz_title(g, v, 0, l->alerts_y, g->w, t);
    panel_window(g, v, alert_text, l->alerts_y + 1, shown, 0);
}

/* The selected rank's output, every kept line wrapped (g NULL: only count);
 * lines no longer kept are counted first. Returns the lines used. */
static int output_text(cs_grid *g, const cs_viz_view *v, int y, int end, int w) {
    int k = v->selected, y0 = y;
    if (!v->hist || k >= v->hist->world) return 0;
    size_t n = cs_history_nout(v->hist, k);
    uint64_t lost = v->hist->out[k].total - n;
    if (lost && y < end) {
        if (g)
            cs_grid_printf(g, 1, y, w - 2, CS_C_DEFAULT, CS_A_DIM,
                           "(the first %llu lines printed are not kept: the last %zu are)",
                           (unsigned long long)lost, n);
        y++;
    }
    for (size_t i = 0; i < n && y < end; i++) {
        const char *line = cs_history_out(v->hist, k, i);
        int lines = wrap(g, 1, y, w - 2, end - y, line ? line : "", CS_C_DEFAULT, 0, 2);
        y += lines > 0 ? lines : 1;
    }
    return y - y0;
}

/* Rows from the output panel's top to where kept line `line` begins, or,
 * with line SIZE_MAX, the kept line that row `row` is in. */
static size_t output_walk(const cs_viz_view *v, int w, size_t line, int row) {
    int k = v->selected, y = 0;
    if (!v->hist || k >= v->hist->world) return 0;
    size_t n = cs_history_nout(v->hist, k), i = 0;
    if (v->hist->out[k].total > n) y++; /* the "not kept" row */
    for (; i < n && (line == SIZE_MAX ? y <= row : i < line); i++) {
        const char *s = cs_history_out(v->hist, k, i);
        int r = wrap(NULL, 1, 0, w - 2, 1 << 20, s ? s : "", 0, 0, 2);
        y += r > 0 ? r : 1;
    }
    if (line != SIZE_MAX) return (size_t)y;
    return i > 0 && y > row ? i - 1 : i;
}

int cs_viz_output_row(const cs_viz_view *v, int w, size_t line) {
    return (int)output_walk(v, w, line, 0);
}

size_t cs_viz_output_line(const cs_viz_view *v, int w, int row) {
    return output_walk(v, w, SIZE_MAX, row);
}

static panel_text full_text(const cs_viz_view *v) {
    return v->full == CS_FULL_OUTPUT ? output_text : v->full == CS_FULL_ALERTS ? alert_text : NULL;
}

int cs_viz_full_lines(const cs_viz_view *v, int w) {
    panel_text text = full_text(v);
    return text ? text(NULL, v, 0, 1 << 20, w) : 0;
}

/* Keys a and p: the alerts, or the selected rank's output, alone between the
 * header and the footer, scrolled. The output goes on while it is read: the
 * title says how much is below the last line shown. */
static void draw_full(cs_grid *g, const cs_viz_view *v) {
    int total = cs_viz_full_lines(v, g->w), h = g->h - 3;
    int top = v->full_top > total - h ? total - h : v->full_top;
    if (top < 0) top = 0;
    int last = top + h < total ? top + h : total;
    char t[160];
    if (v->full == CS_FULL_ALERTS)
        snprintf(t, sizeof t, "alerts, lines %d-%d of %d", total ? top + 1 : 0, last, total);
    else {
        int k = v->selected;
        unsigned long long lines = k < v->hist->world ? v->hist->out[k].total : 0;
        int n = snprintf(t, sizeof t, "output, rank %d (%llu line%s)", k, lines,
                         lines == 1 ? "" : "s");
        if (total)
            n += snprintf(t + n, sizeof t - (size_t)n, ", rows %d-%d of %d", top + 1, last, total);
        if (last < total)
            snprintf(t + n, sizeof t - (size_t)n, ": %d more below, End follows", total - last);
    }
    cs_viz_title(g, v, 0, 1, g->w, t);
    panel_window(g, v, full_text(v), 2, h, top);
}


/* ---- the right column: source, messages in flight, output */

static int right_box(cs_grid *g, const cs_viz_view *v, const cs_viz_layout *l, int y,
                     const char *t) {
    cs_viz_title(g, v, l->right_x, y, l->right_w, t);
    return y + 1;
}

/* The ranks whose current line is `line`, in at most w columns: the list
 * ("0,1"), or its head and how many more ("0,1+254", "36+3"), or only how
 * many ("×1024"). Whatever fits, the count is the true one. */
static void line_marks(const cs_viz_view *v, int line, char *buf, size_t len, int w) {
    int first[2], n = 0;
    for (int k = 0; k < v->mon->world; k++) {
        int at = v->hist && v->hist->frozen ? v->hist->frozen[k].line : 0;
        if (!at) {
            cs_viz_rank r;
            cs_viz_describe(v->mon, v->hist, v->gates ? &v->gates[k] : NULL, k, v->ascii, &r);
            /* an ended rank leaves its line, unless it failed there */
            if (r.state >= CS_RS_DONE && r.state != CS_RS_FAILED) continue;
            at = r.line;
        }
        if (at != line) continue;
        if (n < 2) first[n] = k;
        n++;
    }
    buf[0] = 0;
    if (n == 0) return;
    /* the forms, most telling first: the first that fits wins */
    if (n == 1) snprintf(buf, len, "%d", first[0]);
    else if (n == 2) snprintf(buf, len, "%d,%d", first[0], first[1]);
    else snprintf(buf, len, "%d,%d+%d", first[0], first[1], n - 2);
    if (cs_utf8_width(buf) > w && n > 1) snprintf(buf, len, "%d+%d", first[0], n - 1);
    if (cs_utf8_width(buf) > w) snprintf(buf, len, "%s%d", v->ascii ? "x" : "×", n);
}

static void draw_source(cs_grid *g, const cs_viz_view *v, const cs_viz_layout *l, int y, int h) {
    char t[64];
    snprintf(t, sizeof t, "source, rank %d", v->selected);
    y = right_box(g, v, l, y, t);
    h--;
    if (h > 0 && !v->src)
        cs_grid_printf(g, l->right_x + 1, y, l->right_w - 2, CS_C_DEFAULT, CS_A_DIM,
                       "(the source of %s was not found)", v->script ? v->script : "the script");
    if (h <= 0 || !v->src) return;
    cs_viz_rank sel;
    cs_viz_describe(v->mon, v->hist, v->gates ? &v->gates[v->selected] : NULL, v->selected,
                    v->ascii, &sel);
    if (v->hist && v->hist->frozen) sel = v->hist->frozen[v->selected];
    int cur = sel.line;
    int top = cur - h / 2;
    if (top > v->nsrc - h + 1) top = v->nsrc - h + 1;
    if (top < 1) top = 1;
    for (int i = 0; i < h && top + i <= v->nsrc; i++) {
        int ln = top + i;
        char marks[32];
        line_marks(v, ln, marks, sizeof marks, 6);
        bool here = ln == cur;
        int attr = here ? CS_A_REVERSE : 0;
        cs_grid_fill(g, l->right_x, y + i, l->right_w, 1, ' ', CS_C_DEFAULT, attr);
        cs_grid_put(g, l->right_x + 6 - cs_utf8_width(marks), y + i, 6, marks, CS_C_YELLOW,
                    attr | CS_A_BOLD);
        cs_grid_printf(g, l->right_x + 6, y + i, 5, CS_C_DEFAULT, attr | CS_A_DIM, "%4d ", ln);
        cs_viz_put_cut(g, l->right_x + 11, y + i, l->right_w - 11, v->src[ln - 1], CS_C_DEFAULT,
                       attr, v->ascii);
    }
}

static void draw_inflight(cs_grid *g, const cs_viz_view *v, const cs_viz_layout *l, int y, int h) {
    cs_viz_msg msgs[64];
    size_t n = cs_viz_inflight(v->mon, msgs, 64);
    char t[64];
    snprintf(t, sizeof t, "in flight: %zu", n);
    y = right_box(g, v, l, y, t);
    const char *arrow = v->ascii ? "->" : "→";
    /* as many as fit; the last row says how many more (beside an entry when
     * only one row is left, so that a small screen still names one) */
    int rows = h - 1;
    size_t shown = n < (size_t)(rows > 0 ? rows : 0) ? n : (size_t)(rows > 0 ? rows : 0);
    if (shown < n && shown > 1) shown--;
    if (shown > 64) shown = 64;
    for (size_t i = 0; i < shown; i++) {
        const cs_viz_msg *m = &msgs[i];
        char from[12], size[16], more[32] = "";
        if (m->from < 0) snprintf(from, sizeof from, "any");
        else snprintf(from, sizeof from, "%d", m->from);
        cs_viz_bytes(m->bytes, size, sizeof size);
        if (i + 1 == shown && shown < n && rows == 1)
            snprintf(more, sizeof more, "  (+%zu more)", n - shown);
        char row[160];
        snprintf(row, sizeof row, "%s %s %d  %s  tag %d  %s  line %d%s", from, arrow, m->to, size,
                 m->tag, m->state, m->line, more);
        cs_viz_put_cut(g, l->right_x + 1, y + (int)i, l->right_w - 2, row, CS_C_DEFAULT, 0, v->ascii);
    }
    if (shown < n && rows > 1)
        cs_grid_printf(g, l->right_x + 1, y + (int)shown, l->right_w - 2, CS_C_DEFAULT, CS_A_DIM,
                       "... %zu more", n - shown);
}

static void draw_output(cs_grid *g, const cs_viz_view *v, const cs_viz_layout *l, int y, int h) {
    char t[96];
    int k = v->selected;
    uint64_t total = k < v->hist->world ? v->hist->out[k].total : 0;
    /* the newest rows, as a terminal shows them: each line wrapped
     * (continuations indented), the oldest one shown cut to its last rows */
    int rows = h - 1, w = l->right_w - 2, used = 0, skip = 0;
    size_t n = cs_history_nout(v->hist, k), first = n;
    while (first > 0 && used < rows) {
        int lines = wrap(NULL, 0, 0, w, INT_MAX, cs_history_out(v->hist, k, first - 1), 0, 0, 2);
        if (lines < 1) lines = 1;
        if (used + lines > rows) skip = used + lines - rows;
        used += lines - skip;
        first--;
    }
    /* older lines than fit: the key that shows them, where the title has room */
    int tn = snprintf(t, sizeof t, "output, rank %d (%llu line%s", k, (unsigned long long)total,
                      total == 1 ? "" : "s");
    snprintf(t + tn, sizeof t - (size_t)tn, first > 0 || skip > 0 || total > n ? ": p scrolls)" : ")");
    if (cs_utf8_width(t) + 4 > l->right_w) snprintf(t + tn, sizeof t - (size_t)tn, ")");
    y = right_box(g, v, l, y, t);
    for (size_t i = first; i < n && rows > 0; i++) {
        int lines = wrap_rows(g, l->right_x + 1, y, w, i == first ? skip : 0, rows,
                              cs_history_out(v->hist, k, i), CS_C_DEFAULT, 0, 2);
        if (lines < 1) lines = 1;
        y += lines;
        rows -= lines;
    }
}

static void draw_body(cs_grid *g, const cs_viz_view *v, const cs_viz_layout *l) {
    if (l->body_h < 3) return;
    cs_viz_draw_diagram(g, v, l);
    for (int y = l->body_y; y < l->body_y + l->body_h; y++)
        cs_grid_putc(g, l->diag_w, y, gl(v, G_VLINE), CS_C_DEFAULT, CS_A_DIM);
    int h = l->body_h, src_h = h / 2, fl_h = (h - src_h) / 2, out_h = h - src_h - fl_h;
    draw_source(g, v, l, l->body_y, src_h);
    draw_inflight(g, v, l, l->body_y + src_h, fl_h);
    draw_output(g, v, l, l->body_y + src_h + fl_h, out_h);
}

/* ---- overlays */

/* A box over the frame, up to 76 columns wide and as tall as the text (the
 * help fits at 80x24); text the screen cannot hold scrolls, by whole lines
 * of the text, its last row saying so. */

/* One line of a box's text (n bytes at p), wrapped under its description:
 * the column after the first run of two spaces ("space    advance every
 * ..."). g NULL: only count. Returns the rows used. */
static int box_line(cs_grid *g, int x, int y, int w, int maxh, const char *p, size_t n) {
    char line[1024];
    snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1), p);
    const char *gap = strstr(line, "  ");
    int indent = 0;
    if (gap && gap > line && gap - line < 24) {
        indent = (int)(gap - line) + (int)strspn(gap, " ");
        if (indent > w / 2) indent = 0;
    }
    int k = wrap(g, x, y, w, maxh, line, CS_C_DEFAULT, 0, indent);
    return k ? k : 1;
}

/* The text, each line wrapped on its own, from row y; the rows used. */
static int box_text(cs_grid *g, int x, int y, int w, int maxh, const char *text) {
    int rows = 0;
    for (const char *p = text; *p && rows < maxh;) {
        size_t n = strcspn(p, "\n");
        rows += box_line(g, x, y + rows, w, maxh - rows, p, n);
        p += n + (p[n] == '\n');
    }
    return rows;
}

/* The text from its line k on. */
static const char *from_line(const char *text, int k) {
    for (; k > 0 && *text; k--) {
        const char *nl = strchr(text, '\n');
        text = nl ? nl + 1 : text + strlen(text);
    }
    return text;
}

static int box_width(int w) { return w - 4 < 76 ? w - 4 : 76; }
static int box_room(int h) { return h - 6 > 1 ? h - 6 : 1; } /* its text's rows, at most */

int cs_viz_box_max_top(int w, int h, const char *text) {
    int tw = box_width(w) - 4, room = box_room(h);
    if (tw < 1 || box_text(NULL, 0, 0, tw, 1 << 20, text) <= room) return 0;
    /* scrolled, the last row is the keys': the last lines that fill the
     * rest, walked back from the end (a trailing newline ends the last
     * line, as box_text reads it) */
    const char *first = text + strlen(text), *e = first;
    if (e > text && e[-1] == '\n') e--;
    for (int rows = 0;;) {
        const char *s = e;
        while (s > text && s[-1] != '\n') s--;
        int k = box_line(NULL, 0, 0, tw, 1 << 20, s, (size_t)(e - s));
        if (rows + k > room - 1) break;
        rows += k;
        first = s;
        if (s == text) break;
        e = s - 1; /* the newline before it */
    }
    int top = 0;
    for (const char *p = text; p < first; p++) top += *p == '\n';
    return top;
}

void cs_viz_box(cs_grid *g, bool ascii, const char *t, const char *text, int top) {
    int w = box_width(g->w);
    int total = box_text(NULL, 0, 0, w - 4, 1 << 20, text);
    int lines = total < box_room(g->h) ? total : box_room(g->h);
    if (lines < 1) lines = 1;
    int h = lines + 4, x = (g->w - w) / 2, y = (g->h - h) / 2;
    uint32_t hl = ascii ? (uint32_t)asc[G_HLINE] : uni[G_HLINE];
    uint32_t vl = ascii ? (uint32_t)asc[G_VLINE] : uni[G_VLINE];
    cs_grid_fill(g, x, y, w, h, ' ', CS_C_DEFAULT, 0);
    for (int i = x; i < x + w; i++) {
        cs_grid_putc(g, i, y, hl, CS_C_CYAN, 0);
        cs_grid_putc(g, i, y + h - 1, hl, CS_C_CYAN, 0);
    }
    for (int j = y; j < y + h; j++) {
        cs_grid_putc(g, x, j, vl, CS_C_CYAN, 0);
        cs_grid_putc(g, x + w - 1, j, vl, CS_C_CYAN, 0);
    }
    cs_grid_printf(g, x + 2, y, w - 4, CS_C_CYAN, CS_A_BOLD, " %s ", t);
    if (total <= lines) {
        box_text(g, x + 2, y + 2, w - 4, lines, text);
        return;
    }
    int max = cs_viz_box_max_top(g->w, g->h, text);
    top = top < 0 ? 0 : top > max ? max : top;
    box_text(g, x + 2, y + 2, w - 4, lines - 1, from_line(text, top));
    const char *keys = top < max ? "more below: down arrow or PgDn; other keys close"
                                 : "the end: up arrow or PgUp back; other keys close";
    cs_grid_put(g, x + 2, y + 1 + lines, w - 4, keys, CS_C_DEFAULT, CS_A_DIM);
}

/* One line per key; the box wraps the closing paragraph to its width. */
#define HELP_RUN                                                                   \
    "space    advance every runnable rank by one operation\n"                      \
    "s        step only the selected rank\n"                                       \
    "r        run or pause\n"                                                      \
    "+ / -    faster / slower (operations per second; 0 = full speed)\n"           \
    "enter    the tensor of the selected rank's next operation (when ready)\n"
#define HELP_REPLAY                                                                \
    "space    forward to the next operation          b   back one\n"               \
    "] / [    forward / back one event\n"                                          \
    "G / g    the end / the start of the trace\n"                                  \
    "r        play or pause          + / -   faster / slower\n"
#define HELP_COMMON                                                                       \
    "tab, arrows, click   select a rank\n"                                                \
    "PgUp/PgDn, End       scroll the diagram back / follow the newest\n"                  \
    "a        the alerts on the whole screen (a or esc: back)\n"                          \
    "p        the selected rank's output on the whole screen (p or esc: back)\n"          \
    "o        open the latest collective band: its messages with their phases\n"          \
    "t        the diagram: virtual time to scale (--net) or event order\n"                \
    "?        this help (any key closes it)      q   quit\n"                              \
    "\n"                                                                                  \
    "states: idle (not started), ready (stopped at its gate), running, blocked (in a send " \
    "or receive), computing, done, failed, aborted. Diagram: a column per rank, time going " \
    "down, an arrow per message with its size, thick stretches are blocked, = bands are "   \
    "collectives (x N: their internal messages, each one operation when stepping)."

const char *cs_viz_box_text(const cs_viz_view *v) {
    if (v->popup) return v->popup;
    if (v->help) return v->replay ? HELP_REPLAY HELP_COMMON : HELP_RUN HELP_COMMON;
    return NULL;
}

bool cs_viz_too_small(cs_grid *g, const char *status) {
    if (g->w >= CS_VIZ_MIN_W && g->h >= CS_VIZ_MIN_H) return false;
    char text[160];
    snprintf(text, sizeof text, "window too small (%dx%d, need %dx%d)\n%s%sq quits",
             g->w, g->h, CS_VIZ_MIN_W, CS_VIZ_MIN_H, status ? status : "", status ? ": " : "");
    wrap(g, 1, 0, g->w - 2, g->h, text, CS_C_YELLOW, CS_A_BOLD, 2);
    return true;
}

void cs_viz_render(cs_grid *g, const cs_viz_view *v) {
    cs_grid_clear(g);
    if (cs_viz_too_small(g, v->status)) return;
    cs_viz_layout l;
    cs_viz_layout_of(v, g->w, g->h, &l);
    draw_header(g, v);
    if (v->full) {
        draw_full(g, v);
    } else {
        draw_ranks(g, v, &l);
        draw_alerts(g, v, &l);
        draw_body(g, v, &l);
    }
    draw_footer(g, v);
    if (v->popup) cs_viz_box(g, v->ascii, v->popup_title ? v->popup_title : "", v->popup, v->box_top);
    else if (v->help) cs_viz_box(g, v->ascii, "keys", cs_viz_box_text(v), v->box_top);
}
