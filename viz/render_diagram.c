/* render_diagram.c -- the space-time diagram: one column per rank, time
 * going down, messages as arrows between lifelines, collectives as bands;
 * scaled to modelled time when the run has a network model.
 */
#include "render_internal.h"
#include "netmodel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int col_x(const cs_viz_layout *l, int k) {
    return l->diag_x + (k - l->diag_col_first) * l->diag_cw + l->diag_cw / 2;
}

static bool col_visible(const cs_viz_layout *l, int k) {
    int x = col_x(l, k);
    return k >= l->diag_col_first && x < l->diag_x + l->diag_w;
}

/* Row i's states, or with i == SIZE_MAX the states now. */
static void draw_lifelines(cs_grid *g, const cs_viz_view *v, const cs_viz_layout *l, size_t i,
                           int y) {
    for (int k = l->diag_col_first; k < v->mon->world && col_visible(l, k); k++) {
        uint8_t s = (i == SIZE_MAX ? v->hist->cur[k] : cs_history_state(v->hist, i, k)) & 0x7F;
        if (s == CS_HS_NONE && i == SIZE_MAX && v->hist->started) s = CS_HS_RUN; /* its code */
        uint32_t ch = ' ';
        int fg = CS_C_DEFAULT, attr = CS_A_DIM;
        switch (s) {
        case CS_HS_RUN: ch = gl(v, G_VLINE); break;
        case CS_HS_COMPUTE: ch = gl(v, G_COMP), fg = CS_C_CYAN, attr = 0; break;
        case CS_HS_COLL: ch = gl(v, G_COLL), fg = CS_C_MAGENTA, attr = 0; break;
        case CS_HS_BLOCKED: ch = gl(v, G_BLOCK), fg = CS_C_RED, attr = CS_A_BOLD; break;
        default: break;
        }
        cs_grid_putc(g, col_x(l, k), y, ch, fg, attr);
    }
}

static void draw_label(cs_grid *g, int x0, int x1, int y, const char *label, int fg) {
    int w = cs_utf8_width(label);
    if (x1 - x0 - 1 >= w) cs_grid_put(g, x0 + (x1 - x0 - w + 1) / 2, y, w, label, fg, CS_A_BOLD);
    else cs_grid_put(g, x1 + 2, y, w, label, fg, CS_A_BOLD); /* no room: beside the head */
}

static void msg_label(const cs_hrow *r, const char *phase, char *label, size_t len) {
    char size[16];
    cs_viz_bytes(r->bytes, size, sizeof size);
    if (phase) snprintf(label, len, "%s %s", size, phase);
    else if (r->count > 1) snprintf(label, len, "%s x%llu", size, (unsigned long long)r->count);
    else snprintf(label, len, "%s", size);
}

/* The columns draw_msg may take, its label included (a label that does not
 * fit between the ends goes beside one of them). */
static void msg_cols(const cs_viz_layout *l, const cs_hrow *r, int *a, int *b) {
    char label[96];
    msg_label(r, NULL, label, sizeof label);
    int lw = cs_utf8_width(label), left = l->diag_x, right = l->diag_x + l->diag_w - 1;
    int lo = r->from < r->to ? r->from : r->to, hi = r->from < r->to ? r->to : r->from;
    int x0 = col_x(l, lo), x1 = col_x(l, hi);
    if (r->from == r->to) *a = x0, *b = x0 + 2 + lw;
    else if (x1 - x0 - 1 >= lw) *a = x0, *b = x1;
    else *a = x0 - lw - 1, *b = x1 + 2 + lw;
    *a = *a < left ? left : *a;
    *b = *b > right ? right : *b;
}

/* brief: a shorter phase for a label that would not fit whole (or NULL). */
static void draw_msg(cs_grid *g, const cs_viz_view *v, const cs_viz_layout *l, const cs_hrow *r,
                     int y, const char *phase, const char *brief) {
    char label[96];
    msg_label(r, phase, label, sizeof label);
    int lo = r->from < r->to ? r->from : r->to, hi = r->from < r->to ? r->to : r->from;
    int xa = col_x(l, lo), xb = col_x(l, hi);
    int left = l->diag_x, right = l->diag_x + l->diag_w - 1;
    if (r->from == r->to) {
        cs_grid_putc(g, xa, y, gl(v, G_SELF), CS_C_GREEN, CS_A_BOLD);
        cs_grid_put(g, xa + 2, y, right - xa - 1, label, CS_C_GREEN, CS_A_BOLD);
        return;
    }
    int x0 = xa < left ? left : xa, x1 = xb > right ? right : xb;
    for (int x = x0; x <= x1; x++) cs_grid_putc(g, x, y, gl(v, G_HLINE), CS_C_GREEN, 0);
    bool rightward = r->to > r->from;
    if (col_visible(l, r->from)) cs_grid_putc(g, col_x(l, r->from), y, gl(v, G_DOT), CS_C_GREEN, CS_A_BOLD);
    if (col_visible(l, r->to))
        cs_grid_putc(g, col_x(l, r->to), y, gl(v, rightward ? G_RIGHT : G_LEFT), CS_C_GREEN, CS_A_BOLD);
    int lw = cs_utf8_width(label), lroom = x0 - 1 - left, rroom = right - x1 - 1;
    if (brief && x1 - x0 - 1 < lw && rroom < lw && lroom < lw) {
        msg_label(r, brief, label, sizeof label);
        lw = cs_utf8_width(label);
    }
    if (x1 - x0 - 1 >= lw || rroom >= lw) {
        draw_label(g, x0, x1, y, label, CS_C_GREEN);
        return;
    }
    /* no room between the ends nor beside the head: beside the tail, else
     * cut with a mark on the wider side, never over the arrow's ends */
    if (lroom >= lw) cs_grid_put(g, x0 - lw - 1, y, lw, label, CS_C_GREEN, CS_A_BOLD);
    else if (rroom >= lroom) cs_viz_put_cut(g, x1 + 2, y, rroom, label, CS_C_GREEN, CS_A_BOLD, v->ascii);
    else cs_viz_put_cut(g, left, y, lroom, label, CS_C_GREEN, CS_A_BOLD, v->ascii);
}

static void draw_band(cs_grid *g, const cs_viz_view *v, const cs_viz_layout *l, size_t i,
                      const cs_hrow *r, int y) {
    int lo = -1, hi = -1;
    for (int k = 0; k < v->mon->world; k++)
        if (cs_history_state(v->hist, i, k) & CS_HS_MARK) {
            if (lo < 0) lo = k;
            hi = k;
        }
    if (lo < 0) return;
    int left = l->diag_x, right = l->diag_x + l->diag_w - 1;
    int x0 = col_x(l, lo) - 1, x1 = col_x(l, hi) + 1;
    x0 = x0 < left ? left : x0;
    x1 = x1 > right ? right : x1;
    for (int x = x0; x <= x1; x++) cs_grid_putc(g, x, y, gl(v, G_BAND), CS_C_MAGENTA, 0);
    for (int k = lo; k <= hi; k++)
        if ((cs_history_state(v->hist, i, k) & CS_HS_MARK) && col_visible(l, k))
            cs_grid_putc(g, col_x(l, k), y, gl(v, G_BANDX), CS_C_MAGENTA, CS_A_BOLD);
    char label[80], algo[32] = "";
    int lw = 0;
    /* with the algorithm's name when it fits, beside the band or over it */
    for (int pass = r->begin && r->algo[0] ? 0 : 1; pass < 2; pass++) {
        if (pass == 0) snprintf(algo, sizeof algo, " (%s)", r->algo);
        else algo[0] = 0;
        if (r->begin && r->count)
            snprintf(label, sizeof label, "%s%s x%llu", r->name, algo, (unsigned long long)r->count);
        else snprintf(label, sizeof label, "%s%s%s", r->name, algo, r->begin ? "" : " done");
        lw = cs_utf8_width(label);
        if (x1 + 2 + lw <= right || x1 - x0 - 1 >= lw) break;
    }
    /* beside the band if it fits, else over it (the band's marks then hide) */
    if (x1 + 2 + lw <= right) cs_grid_put(g, x1 + 2, y, lw, label, CS_C_MAGENTA, CS_A_BOLD);
    else draw_label(g, x0, x1, y, label, CS_C_MAGENTA);
}

static void draw_mark(cs_grid *g, const cs_viz_view *v, const cs_viz_layout *l, const cs_hrow *r,
                      int y) {
    if (r->kind == CS_HROW_DEADLOCK) {
        int w = l->diag_w;
        cs_grid_fill(g, l->diag_x, y, w, 1, gl(v, G_HLINE), CS_C_RED, CS_A_BOLD);
        cs_grid_put(g, l->diag_x + (w - 10) / 2, y, 10, " DEADLOCK ", CS_C_RED,
                    CS_A_BOLD | CS_A_REVERSE);
        return;
    }
    if (r->from < 0 || !col_visible(l, r->from)) return;
    /* a warning, an error, a clean exit, or unwinding after the run ended */
    glyph gg = r->kind == CS_HROW_WARN ? G_WARN : r->kind == CS_HROW_ERROR || r->count ? G_FAIL : G_OK;
    int fg = r->kind == CS_HROW_WARN ? CS_C_YELLOW : r->kind == CS_HROW_ERROR ? CS_C_MAGENTA
           : r->count ? CS_C_DEFAULT : CS_C_BLUE;
    cs_grid_putc(g, col_x(l, r->from), y, gl(v, gg), fg, r->kind == CS_HROW_EXIT && r->count ? CS_A_DIM : CS_A_BOLD);
}

/* Where step k (the sender's k-th message of the call, from 0) falls in the
 * algorithm's schedule, for a group of n ranks. */
static void phase_of(const cs_hrow *r, int n, int k, char *buf, size_t len, bool brief) {
    bool ring = !strcmp(r->algo, "ring"), rd = !strcmp(r->algo, "recursive_doubling");
    const char *rs = brief ? "RS %d" : "reduce-scatter step %d", *ag = brief ? "AG %d" : "all-gather step %d";
    if (ring && !strcmp(r->name, "all_reduce") && n > 1)
        snprintf(buf, len, k < n - 1 ? rs : ag, k < n - 1 ? k + 1 : k - (n - 1) + 1);
    else if (ring && !strcmp(r->name, "reduce_scatter")) snprintf(buf, len, rs, k + 1);
    else if (ring && !strcmp(r->name, "all_gather")) snprintf(buf, len, ag, k + 1);
    else if (rd) snprintf(buf, len, brief ? "round %d" : "doubling round %d", k + 1);
    else if (strstr(r->algo, "tree") || strstr(r->algo, "binomial"))
        snprintf(buf, len, brief ? "send %d" : "tree, its send %d", k + 1);
    else snprintf(buf, len, "step %d", k + 1);
}

/* Key o: one band opened into its internal messages, one arrow each, with
 * the phase of the algorithm it belongs to. */
static bool draw_band_open(cs_grid *g, const cs_viz_view *v, const cs_viz_layout *l, int y0, int rows) {
    const cs_history *h = v->hist;
    const struct cs_hband *b = cs_history_band(h, v->band_row);
    const cs_hrow *r = cs_history_row(h, v->band_row);
    if (!b || !r) return false;
    int n = 0;
    for (int k = 0; k < h->world; k++) n += (cs_history_state(h, v->band_row, k) & CS_HS_MARK) != 0;
    draw_lifelines(g, v, l, v->band_row, y0 + 1);
    draw_band(g, v, l, v->band_row, r, y0 + 1);
    size_t first = v->diag_back < b->nmsg ? v->diag_back : 0;
    for (size_t i = first; i < b->nmsg && (int)(i - first) < rows - 2; i++) {
        const struct cs_hcmsg *m = &b->msg[i];
        cs_hrow fake = {.kind = CS_HROW_MSG, .from = m->from, .to = m->to, .bytes = m->bytes,
                        .count = 1};
        char phase[48], brief[24];
        phase_of(r, n, m->step, phase, sizeof phase, false);
        phase_of(r, n, m->step, brief, sizeof brief, true);
        draw_msg(g, v, l, &fake, y0 + 2 + (int)(i - first), phase, brief);
    }
    char note[96];
    snprintf(note, sizeof note, "%u messages of this call (PgDn/PgUp scroll, o closes)", b->nmsg);
    cs_viz_put_cut(g, l->diag_x + 1, l->body_y + l->body_h - 1, l->diag_w - 2, note, CS_C_YELLOW, 0,
                   v->ascii);
    return true;
}

/* Key t, a run with a network model: rows are equal stretches of virtual
 * time from 0 to the latest time seen; each rank's lifeline shows when it
 * computed and waited, and each message is an arrow on the row of its
 * arrival. */
/* Virtual time per row: the first 1, 2 or 5 times a power of ten that fits
 * the run into body rows, so the scale reads at a glance. */
static uint64_t row_ns(const cs_history *h, int body) {
    uint64_t need = (h->vmax + (uint64_t)body - 1) / (uint64_t)body, p = 1;
    for (;;) {
        if (p >= need) return p;
        if (2 * p >= need) return 2 * p;
        if (5 * p >= need) return 5 * p;
        if (p > UINT64_MAX / 100) return UINT64_MAX / 10;
        p *= 10;
    }
}

static const char *scaled_title(const cs_history *h, int body, char *buf, size_t len) {
    char per[32], all[32];
    snprintf(buf, len, "to scale: 1 row = %s, 0 to %s (t: order)",
             cs_vt_format(row_ns(h, body), per, sizeof per), cs_vt_format(h->vmax, all, sizeof all));
    return buf;
}

/* Each message on the row of its arrival (rows of per ns, body of them),
 * unless it would cross one placed there already: then on the nearest free
 * row of the first avail after it (else before), so that no arrow hides
 * another. Two arrows may share an end (a relay reads as a chain), never
 * a stretch of shaft or label. Drawn when draw; returns how many found no
 * row. */
static int place_msgs(cs_grid *g, const cs_viz_view *v, const cs_viz_layout *l, int y0, int body,
                      uint64_t per, int avail, bool draw) {
    const cs_history *h = v->hist;
    uint8_t *used = calloc((size_t)avail * (size_t)l->diag_w, 1);
    if (!used) return 0;
    int hidden = 0;
    for (size_t i = 0, n = cs_history_nspans(h); i < n; i++) {
        const cs_hspan *s = cs_history_span(h, i);
        if (s->kind != CS_HV_MSG) continue;
        cs_hrow r = {.kind = CS_HROW_MSG, .from = s->rank, .to = s->peer, .bytes = s->bytes,
                     .count = 1};
        int a, b, y = -1;
        int row = (int)(s->to / per < (uint64_t)body ? s->to / per : (uint64_t)body - 1);
        if (row >= avail) row = avail - 1;
        msg_cols(l, &r, &a, &b);
        for (int d = 0; d < avail && y < 0; d++) {
            int t = d < avail - row ? row + d : row - (d - (avail - row)) - 1;
            if (t < 0) break;
            const uint8_t *u = used + (size_t)t * l->diag_w - l->diag_x;
            bool free_row = true;
            for (int x = a; x <= b && free_row; x++) free_row = x == a || x == b ? u[x] != 2 : !u[x];
            if (free_row) y = t;
        }
        if (y < 0) {
            hidden++;
            continue;
        }
        uint8_t *u = used + (size_t)y * l->diag_w - l->diag_x; /* 1: an arrow's end, 2: its shaft */
        for (int x = a; x <= b; x++) u[x] = x == a || x == b ? (u[x] ? u[x] : 1) : 2;
        if (draw) draw_msg(g, v, l, &r, y0 + 1 + y, NULL, NULL);
    }
    free(used);
    return hidden;
}

static void draw_scaled(cs_grid *g, const cs_viz_view *v, const cs_viz_layout *l, int y0,
                        int body) {
    const cs_history *h = v->hist;
    int w = h->world;
    uint64_t per = row_ns(h, body);
    uint8_t *st = calloc((size_t)body * (size_t)w, 1);
    if (!st) {
        cs_grid_printf(g, l->diag_x + 1, y0 + 1, l->diag_w - 2, CS_C_YELLOW, 0,
                       "out of memory drawing to scale");
        return;
    }
#define ROW(t) ((int)((t) / per < (uint64_t)body ? (t) / per : (uint64_t)body - 1))
    int *end = malloc((size_t)w * sizeof *end);
    for (int k = 0; end && k < w; k++) end[k] = body; /* running until its exit */
    size_t n = cs_history_nspans(h);
    for (size_t i = 0; end && i < n; i++) {
        const cs_hspan *s = cs_history_span(h, i);
        if (s->kind == CS_HV_EXIT) end[s->rank] = ROW(s->from) + 1;
    }
    /* A rank that failed or was stopped has no exit span: its lane ends
     * where its clock stood (a failure is marked there, below). */
    const cs_monitor *m = v->mon;
    for (int k = 0; end && m && k < w && k < m->world; k++)
        if (m->ranks[k].state == CS_RS_FAILED || m->ranks[k].state == CS_RS_ABORTED)
            end[k] = ROW(cs_history_vclock(h, k)) + 1;
    for (int k = 0; k < w; k++)
        for (int y = 0; y < (end ? end[k] : body); y++) st[(size_t)y * w + k] = CS_HS_RUN;
    /* A rank the deadlock found blocked, or one the run stopped in a wait,
     * waits from its clock then to the end: a wait that never ends has no
     * span of its own. */
    for (int k = 0; k < w; k++)
        if ((h->frozen && h->frozen[k].state == CS_RS_BLOCKED) ||
            (m && k < m->world && cs_monitor_stopped_waiting(m, k)))
            for (int y = ROW(cs_history_vclock(h, k)); y < body; y++)
                st[(size_t)y * w + k] = CS_HS_BLOCKED;
    for (size_t i = 0; i < n; i++) {
        const cs_hspan *s = cs_history_span(h, i);
        if ((s->kind != CS_HV_WAIT && s->kind != CS_HV_COMPUTE) || s->to <= s->from) continue;
        for (int y = ROW(s->from); y <= ROW(s->to - 1); y++)
            st[(size_t)y * w + s->rank] = s->kind == CS_HV_WAIT ? CS_HS_BLOCKED : CS_HS_COMPUTE;
    }
    for (int y = 0; y < body; y++)
        for (int k = l->diag_col_first; k < w && col_visible(l, k); k++) {
            uint32_t ch = ' ';
            int fg = CS_C_DEFAULT, attr = CS_A_DIM;
            switch (st[(size_t)y * w + k]) {
            case CS_HS_RUN: ch = gl(v, G_VLINE); break;
            case CS_HS_COMPUTE: ch = gl(v, G_COMP), fg = CS_C_CYAN, attr = 0; break;
            case CS_HS_BLOCKED: ch = gl(v, G_BLOCK), fg = CS_C_RED, attr = CS_A_BOLD; break;
            default: break;
            }
            cs_grid_putc(g, col_x(l, k), y0 + 1 + y, ch, fg, attr);
        }
    for (int k = l->diag_col_first; m && k < w && k < m->world && col_visible(l, k); k++)
        if (m->ranks[k].state == CS_RS_FAILED)
            cs_grid_putc(g, col_x(l, k), y0 + 1 + ROW(cs_history_vclock(h, k)), gl(v, G_FAIL),
                         CS_C_RED, CS_A_BOLD);
    /* With more messages than free places, the last row says how many are
     * not drawn instead of arrows over arrows. */
    int hidden = place_msgs(g, v, l, y0, body, per, body, false);
    if (hidden && body > 1) hidden = place_msgs(g, v, l, y0, body, per, body - 1, false);
    place_msgs(g, v, l, y0, body, per, hidden && body > 1 ? body - 1 : body, true);
    if (hidden) {
        cs_grid_fill(g, l->diag_x, y0 + body, l->diag_w, 1, ' ', CS_C_DEFAULT, 0);
        char note[96];
        snprintf(note, sizeof note, "%d message%s not drawn: no free row (a taller window, or t)",
                 hidden, hidden == 1 ? "" : "s");
        cs_viz_put_cut(g, l->diag_x + 1, y0 + body, l->diag_w - 2, note, CS_C_YELLOW, 0, v->ascii);
    }
#undef ROW
    free(end);
    free(st);
    if (h->spans_dropped)
        cs_grid_printf(g, l->diag_x + 1, y0 + body, l->diag_w - 2, CS_C_YELLOW, 0,
                       "%llu older spans not kept", (unsigned long long)h->spans_dropped);
}

void cs_viz_draw_diagram(cs_grid *g, const cs_viz_view *v, const cs_viz_layout *l) {
    const cs_history *h = v->hist;
    char t[128];
    int tn = snprintf(t, sizeof t, "space-time: %llu msgs", (unsigned long long)h->messages);
    if (h->coll_msgs)
        snprintf(t + tn, sizeof t - (size_t)tn, " + %llu in collectives",
                 (unsigned long long)h->coll_msgs);
    int body = l->body_y + l->body_h - 1 - (l->body_y + 1) - 1;
    bool scaled = v->scaled && cs_history_nspans(h) && h->vmax && body > 0;
    if (scaled) scaled_title(h, body, t, sizeof t);
    else if (cs_history_nspans(h) && (size_t)tn + 16 < sizeof t)
        snprintf(t + strlen(t), sizeof t - strlen(t), " (t: to scale)");
    cs_viz_title(g, v, l->diag_x, l->body_y, l->diag_w, t);
    int y0 = l->body_y + 1; /* the rank numbers; rows start below */
    for (int k = l->diag_col_first; k < v->mon->world && col_visible(l, k); k++) {
        char num[12];
        snprintf(num, sizeof num, "%d", k);
        int x = col_x(l, k) - ((int)strlen(num) - 1) / 2;
        cs_grid_put(g, x, y0, (int)strlen(num), num, CS_C_DEFAULT,
                    k == v->selected ? CS_A_BOLD | CS_A_REVERSE : CS_A_BOLD);
    }
    if (h->dropped_rows) { /* the memory bound shows: nothing leaves silently */
        cs_grid_printf(g, l->diag_x + 1, ++y0, l->diag_w - 2, CS_C_YELLOW, 0,
                       "%llu older rows (%llu msgs) not kept", (unsigned long long)h->dropped_rows,
                       (unsigned long long)h->dropped_msgs);
    }
    int rows = l->body_y + l->body_h - 1 - y0;
    if (rows < 1) return;
    if (scaled) {
        draw_scaled(g, v, l, y0, rows - 1 > 0 ? rows - 1 : 1);
        return;
    }
    if (v->band_open && draw_band_open(g, v, l, y0, rows)) return;
    /* scrolling back stops at a full page of the oldest rows */
    size_t total = h->n, page = (size_t)rows - 1;
    size_t back = total > page ? (v->diag_back < total - page ? v->diag_back : total - page) : 0;
    /* following the newest, the last line shows every rank as it is now */
    size_t room = (size_t)rows - (back == 0), end = total - back;
    size_t first = end > room ? end - room : 0;
    if (back == 0) draw_lifelines(g, v, l, SIZE_MAX, y0 + 1 + (int)(end - first));
    for (size_t i = first; i < end; i++) {
        int y = y0 + 1 + (int)(i - first);
        const cs_hrow *r = cs_history_row(h, i);
        draw_lifelines(g, v, l, i, y);
        if (r->kind == CS_HROW_MSG) draw_msg(g, v, l, r, y, NULL, NULL);
        else if (r->kind == CS_HROW_COLL) draw_band(g, v, l, i, r, y);
        else draw_mark(g, v, l, r, y);
    }
    /* notes on the bottom row, over the rows just drawn there */
    char note[64] = "";
    if (back) snprintf(note, sizeof note, "(scrolled back %zu rows: End follows)", back);
    else if (v->scaled && !cs_history_nspans(h))
        snprintf(note, sizeof note, "no modelled time: run with --net to draw it to scale (t)");
    if (note[0])
        cs_viz_put_cut(g, l->diag_x + 1, l->body_y + l->body_h - 1, l->diag_w - 2, note,
                       CS_C_YELLOW, 0, v->ascii);
}
