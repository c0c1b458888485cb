/* export_asciicast.c -- an asciinema v2 recording of the visualizer
 * replaying a trace: the header line, then one [time, "o", text] line per
 * frame. Each frame is drawn by the visualizer's own render functions
 * (viz/render.c into a cell grid, as `commsim replay` draws it); this file
 * only turns the grid into ANSI text. No terminal is opened. */
#include <dirent.h>
#include <libgen.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event_schema.h"
#include "export.h"
#include "grid.h"
#include "history.h"
#include "lessons.h"
#include "render.h"
#include "timeline.h"

#define MAX_FRAMES 3000 /* past this, frames are sampled: a recording stays small */

/* SGR for a cell's colour and attributes, as ncurses would show them. */
static int sgr(char *buf, int fg, int attr) {
    int n = sprintf(buf, "\x1b[0");
    if (attr & CS_A_BOLD) n += sprintf(buf + n, ";1");
    if (attr & CS_A_DIM) n += sprintf(buf + n, ";2");
    if (attr & CS_A_UNDERLINE) n += sprintf(buf + n, ";4");
    if (attr & CS_A_REVERSE) n += sprintf(buf + n, ";7");
    if (fg > CS_C_DEFAULT && fg < CS_C_NCOLORS) n += sprintf(buf + n, ";%d", 30 + fg);
    return n + sprintf(buf + n, "m");
}

/* The grid as one JSON string body: home, every row, attributes on change. */
static void frame_text(FILE *f, const cs_grid *g) {
    char seq[32], utf[8];
    fputs("\\u001b[H", f);
    for (int y = 0; y < g->h; y++) {
        int fg = -1, attr = -1;
        for (int x = 0; x < g->w; x++) {
            const cs_cell *c = &g->cells[y * g->w + x];
            if (c->fg != fg || c->attr != attr) {
                fg = c->fg;
                attr = c->attr;
                sgr(seq, fg, attr);
                fputs("\\u001b", f);
                fputs(seq + 1, f);
            }
            if (c->ch == CS_CELL_CONT) continue; /* a wide character's right half */
            uint32_t ch = c->ch;
            if (ch == '"' || ch == '\\') fputc('\\', f);
            if (ch < 0x20) ch = '?';
            utf[cs_utf8_encode(ch, utf)] = 0;
            fputs(utf, f);
        }
        fputs("\\u001b[0m", f);
        if (y + 1 < g->h) fputs("\\r\\n", f);
    }
}

/* The script's lines for the source panel: NULL-terminated, in one block. */
typedef struct source {
    char *buf;
    char **line;
    int n;
} source;

static bool read_source(source *s, const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    s->buf = malloc(1 << 20);
    size_t n = s->buf ? fread(s->buf, 1, (1 << 20) - 1, f) : 0;
    fclose(f);
    if (!s->buf) return false;
    s->buf[n] = 0;
    size_t lines = 1;
    for (size_t i = 0; i < n; i++) lines += s->buf[i] == '\n';
    s->line = malloc(lines * sizeof *s->line);
    if (!s->line) return false;
    for (char *p = s->buf, *nl; p && *p; p = nl ? nl + 1 : NULL) {
        if ((nl = strchr(p, '\n'))) *nl = 0;
        s->line[s->n++] = p;
    }
    return true;
}

/* As the replay view looks for it: beside the trace, here, then in the chapters. */
static void find_source(source *s, const char *trace, const char *name) {
    char path[4096 + 2 * CS_EV_MAX_NAME], buf[4096];
    if (!name || strchr(name, '/') || strlen(name) >= CS_EV_MAX_NAME) return;
    char *dup = strdup(trace);
    snprintf(path, sizeof path, "%s/%s", dup ? dirname(dup) : ".", name);
    free(dup);
    if (read_source(s, path) || read_source(s, name)) return;
    DIR *d = opendir(cs_lessons_dir(buf, sizeof buf));
    struct dirent *e;
    while (d && !s->n && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s/%s", buf, e->d_name, name);
        free(s->buf);
        free(s->line);
        *s = (source){0};
        read_source(s, path);
    }
    if (d) closedir(d);
}

/* The frames are drawn with the widths of UTF-8 text whatever the caller's
 * locale: under LC_ALL=C wcwidth knows no wide character, and a row of
 * CJK text would run past the recording's width. */
static int export_frames(FILE *f, const cs_export_ctx *x, char *err, size_t errlen);

int cs_export_asciicast(FILE *f, const cs_export_ctx *x, char *err, size_t errlen) {
    locale_t utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
    locale_t was = utf8 ? uselocale(utf8) : (locale_t)0;
    int rc = export_frames(f, x, err, errlen);
    if (utf8) {
        uselocale(was);
        freelocale(utf8);
    }
    return rc;
}

static int export_frames(FILE *f, const cs_export_ctx *x, char *err, size_t errlen) {
    const cs_replay *rp = x->rp;
    int w = x->o->width ? x->o->width : 100, hgt = x->o->height ? x->o->height : 30;
    cs_monitor mon;
    cs_history hist;
    cs_grid g;
    if (cs_monitor_init(&mon, rp->world) < 0 || cs_history_init(&hist, rp->world, 0) < 0 ||
        cs_grid_init(&g, w, hgt) < 0) {
        snprintf(err, errlen, "out of memory for the visualizer's model");
        return -1;
    }
    hist.mon = &mon;  /* the deadlock snapshot, as the replay view takes it */
    source src = {0};
    find_source(&src, x->path, rp->script);
    hist.ascii = false;
    size_t pos = 0, start = cs_timeline_start(rp->ev, x->to);
    if (start < x->from) start = x->from;
    /* fold up to the first frame without drawing; the operations so far are
     * counted as they go (counting them again per frame is quadratic) */
    uint64_t ops = 0;
    for (; pos < start; pos++) {
        cs_monitor_fold(&mon, &rp->ev[pos]);
        cs_history_add(&hist, &rp->ev[pos]);
        ops += rp->ev[pos].type == CS_EV_POST;
    }
    /* sample steps when there are too many to draw */
    size_t steps = 0;
    for (size_t p = start; p < x->to; p = cs_timeline_next(rp->ev, x->to, p)) steps++;
    size_t every = steps / MAX_FRAMES + 1, step = 0;
    fprintf(f, "{\"version\": 2, \"width\": %d, \"height\": %d, \"title\": \"commsim replay ", w, hgt);
    cs_export_json_str(f, rp->script);
    fputs("\", \"env\": {\"TERM\": \"xterm-256color\"}}\n", f);
    double t0 = pos ? rp->ev[pos - 1].t : 0, clock = 0;
    for (;;) {
        bool last = pos >= x->to;
        if (step++ % every == 0 || last) {
            char extra[96];
            double now = pos ? rp->ev[pos - 1].t : 0;
            snprintf(extra, sizeof extra, "event %zu/%zu  t=%.3fs%s", pos, rp->n, now,
                     rp->cut ? "  (trace cut off)" : "");
            cs_viz_view view = {.mon = &mon, .hist = &hist, .script = rp->script,
                                .src = (const char *const *)src.line, .nsrc = src.n,
                                .status = mon.deadlocked ? "deadlocked"
                                          : mon.nfailed  ? "failed"
                                          : pos == rp->n ? "end of trace"
                                                         : "replay",
                                .extra = extra, .steps = ops,
                                .speed = -1, .now = now, .selected = 0,
                                /* a run with a network model: the diagram in its virtual time */
                                .scaled = cs_export_model(x) != NULL};
            cs_grid_clear(&g);
            cs_viz_render(&g, &view);
            /* event times are seconds of a run that may last milliseconds: a
             * frame shows at least 0.1 s, so the recording can be watched.
             * Down the file t may go back across ranks (ranks as processes
             * stamp their own events): frames wait only for the latest t
             * seen, so their times never go back (asciicast v2 needs that) */
            double at = x->o->speed > 0 ? clock : clock + (now > t0 ? now - t0 : 0);
            fprintf(f, "[%.6f, \"o\", \"", at);
            if (clock == 0) fputs("\\u001b[2J", f);
            frame_text(f, &g);
            fputs("\"]\n", f);
            clock = at + (x->o->speed > 0 ? 1.0 / x->o->speed : 0.1);
            if (now > t0) t0 = now;
        }
        if (last) break;
        size_t next = cs_timeline_next(rp->ev, x->to, pos);
        for (; pos < next; pos++) {
            cs_monitor_fold(&mon, &rp->ev[pos]);
            cs_history_add(&hist, &rp->ev[pos]);
            ops += rp->ev[pos].type == CS_EV_POST;
        }
    }
    free(src.buf);
    free(src.line);
    cs_grid_free(&g);
    cs_history_free(&hist);
    cs_monitor_destroy(&mon);
    return 0;
}
