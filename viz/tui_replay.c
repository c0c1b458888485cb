/* tui_replay.c -- `commsim replay TRACE` in the visualizer: the recorded
 * events folded through the monitor and the history up to a position that
 * the user moves. Forward folds the next events; backward folds again from
 * the start (the world model is a fold: there is nothing to undo).
 */
#include <dirent.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "grade.h"
#include "history.h"
#include "lessons.h"
#include "monitor.h"
#include "render.h"
#include "replay.h"
#include "report.h"
#include "screen.h"
#include "timeline.h"
#include "tui.h"
#include "tui_view.h"

#define FRAME_MS 40

typedef struct rview {
    cs_replay rp;
    size_t pos;          /* events folded */
    cs_monitor mon;
    cs_history hist;
    cs_tui_lines src;
    bool have_src, playing;
    bool graded;         /* a grader's trace: its result lines are not the student's */
    double speed;        /* steps per second while playing */
    double next;         /* when the next step plays */
    cs_tui_nav nav;
} rview;

/* The history is what the screen shows: a grader's result lines stay out of
 * the output pane (the monitor still folds them, so the event count holds). */
static void show(rview *v, const cs_event *e) {
    if (v->graded && e->type == CS_EV_PRINT && cs_grade_marked(e->text)) return;
    cs_history_add(&v->hist, e);
}

/* Fold events [0, upto) into a fresh monitor and history. */
static int refold(rview *v, size_t upto) {
    cs_monitor_destroy(&v->mon);
    cs_history_free(&v->hist);
    if (cs_replay_fold(&v->rp, upto, &v->mon) < 0) return -1;
    if (cs_history_init(&v->hist, v->rp.world, 0) < 0) return -1;
    v->hist.mon = &v->mon;
    v->hist.ascii = cs_screen_ascii();
    v->pos = upto < v->rp.n ? upto : v->rp.n;
    /* the history's deadlock snapshot needs the monitor as it was then: fold
     * both together only when the trace holds a deadlock before upto */
    for (size_t i = 0; i < v->pos; i++)
        if (v->rp.ev[i].type == CS_EV_DEADLOCK) {
            cs_monitor_destroy(&v->mon);
            if (cs_monitor_init(&v->mon, v->rp.world) < 0) return -1;
            for (size_t k = 0; k < v->pos; k++) {
                cs_monitor_fold(&v->mon, &v->rp.ev[k]);
                show(v, &v->rp.ev[k]);
            }
            return 0;
        }
    for (size_t i = 0; i < v->pos; i++) show(v, &v->rp.ev[i]);
    return 0;
}

static void fold_one(rview *v) {
    if (v->pos >= v->rp.n) return;
    cs_monitor_fold(&v->mon, &v->rp.ev[v->pos]);
    show(v, &v->rp.ev[v->pos]);
    v->pos++;
}

static void forward(rview *v) {
    size_t to = cs_timeline_next(v->rp.ev, v->rp.n, v->pos);
    while (v->pos < to) fold_one(v);
}

static bool read_lines(cs_tui_lines *l, const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    char *buf = malloc(1 << 20);
    size_t n = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
    fclose(f);
    bool ok = buf && cs_tui_lines_split(l, buf, n) == 0;
    free(buf);
    return ok;
}

/* The run header records the script's text: the source is the one that ran,
 * wherever the replay is started; for a case the grader ran, the student's
 * file as they wrote it, not the wrapper around it. An older trace, or a script too long to
 * record, names its script without a directory: look beside the trace, in
 * the current directory, then in the chapters of the lessons (./lessons or
 * wherever cs_lessons_dir finds them). */
static void load_source(rview *v, const char *trace) {
    char *own = v->rp.source ? cs_grade_unwrap(v->rp.source) : NULL;
    const char *text = own ? own : v->rp.source;
    v->graded = own != NULL;
    v->have_src = text && cs_tui_lines_split(&v->src, text, strlen(text)) == 0;
    free(own);
    if (v->have_src) return;
    const char *name = v->rp.script;
    if (!name) return;
    char *dup = strdup(trace), path[4096], buf[4096];
    snprintf(path, sizeof path, "%s/%s", dup ? dirname(dup) : ".", name);
    free(dup);
    v->have_src = read_lines(&v->src, path) || read_lines(&v->src, name);
    const char *lessons = cs_lessons_dir(buf, sizeof buf);
    DIR *d = v->have_src ? NULL : opendir(lessons);
    struct dirent *e;
    while (d && !v->have_src && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s/%s", lessons, e->d_name, name);
        v->have_src = read_lines(&v->src, path);
    }
    if (d) closedir(d);
}

static const char *status_word(const rview *v) {
    if (v->mon.deadlocked) return "deadlocked";
    if (v->mon.nfailed) return "failed";
    if (v->pos == v->rp.n) return "end of trace";
    return v->playing ? "playing" : "replay";
}

static void frame(rview *v, cs_grid *g) {
    char extra[96];
    snprintf(extra, sizeof extra, "event %zu/%zu  t=%.3fs%s", v->pos, v->rp.n,
             v->pos ? v->rp.ev[v->pos - 1].t : 0.0, v->rp.cut ? "  (trace cut off)" : "");
    cs_viz_view view = {.mon = &v->mon, .hist = &v->hist, .script = v->rp.script,
                        .src = v->have_src ? (const char *const *)v->src.line : NULL,
                        .nsrc = v->src.n, .status = status_word(v), .extra = extra,
                        .steps = cs_timeline_ops(v->rp.ev, v->pos), .speed = v->playing ? v->speed : -1,
                        .now = v->pos ? v->rp.ev[v->pos - 1].t : 0, .ascii = cs_screen_ascii(),
                        .replay = true};
    cs_tui_nav_apply(&v->nav, &view, g->w, g->h);
    cs_viz_render(g, &view);
}

/* Returns false when the user leaves. */
static bool key(rview *v, int ch, int x, int y) {
    if (cs_tui_nav_key(&v->nav, ch, x, y)) return true;
    switch (ch) {
    case 'q': case 'Q': case 3: return false;
    case ' ': case 'n': v->playing = false; forward(v); break;
    case 'b': case CS_KEY_BACKSPACE:
        v->playing = false;
        refold(v, cs_timeline_prev(v->rp.ev, v->rp.n, v->pos));
        break;
    case ']': v->playing = false; fold_one(v); break;
    case '[': v->playing = false; if (v->pos) refold(v, v->pos - 1); break;
    case 'g': v->playing = false; refold(v, cs_timeline_start(v->rp.ev, v->rp.n)); break;
    case 'G': v->playing = false; while (v->pos < v->rp.n) fold_one(v); break;
    case 'r': v->playing = !v->playing; v->next = 0; break;
    case '+': case '=': /* full speed is no speed for a replay: it stops at the top */
        if (cs_tui_next_speed(v->speed, 1) > 0) v->speed = cs_tui_next_speed(v->speed, 1);
        break;
    case '-': v->speed = cs_tui_next_speed(v->speed, -1); break;
    default: break;
    }
    return true;
}

int cs_tui_replay(const char *path, const cs_replay_at *at) {
    rview v = {.speed = 10};
    char err[600];
    if (cs_replay_open(&v.rp, path, err, sizeof err) < 0) {
        cs_errf(stderr, "%s\n", err);
        return 1;
    }
    if (!cs_screen_open(err, sizeof err)) {
        cs_errf(stderr, "%s\n", err);
        cs_replay_free(&v.rp);
        return 1;
    }
    v.nav.nranks = v.rp.world;
    load_source(&v, path);
    cs_monitor_init(&v.mon, v.rp.world);
    cs_history_init(&v.hist, v.rp.world, 0);
    refold(&v, cs_timeline_start(v.rp.ev, v.rp.n)); /* after the run header */
    bool found;
    size_t upto = cs_replay_at_events(&v.rp, at, &found);
    if (at->event < 0) {
        while (v.pos < v.rp.n) fold_one(&v);
        snprintf(v.nav.message, sizeof v.nav.message,
                 "the end of the run, where it failed: b goes back, g to the start");
    } else if (at->line > 0 || at->event > 0) {
        while (v.pos < upto) fold_one(&v);
        /* the rank selected: the source panel is its, at that line */
        if (at->line > 0 && at->rank < v.rp.world) v.nav.selected = at->rank;
        if (!found && at->line > 0)
            snprintf(v.nav.message, sizeof v.nav.message,
                     "rank %d never reached line %d: this is the end of the run; g goes to the start",
                     at->rank, at->line);
        else if (!found)
            snprintf(v.nav.message, sizeof v.nav.message,
                     "the trace holds %zu events: this is the end of the run; g goes to the start", v.rp.n);
        else if (at->line > 0)
            snprintf(v.nav.message, sizeof v.nav.message,
                     "rank %d at line %d, where it failed: ] [ one event, b back",
                     at->rank, at->line);
        else
            snprintf(v.nav.message, sizeof v.nav.message,
                     "event %zu: ] [ one event, b back, G g end and start", v.pos);
    }
    cs_grid g = {0};
    bool interrupted = false;
    for (;;) {
        int w, h, x = 0, y = 0;
        cs_screen_size(&w, &h);
        if ((g.w != w || g.h != h) && (cs_grid_free(&g), cs_grid_init(&g, w, h) < 0)) break;
        if (v.playing && cs_now() >= v.next) {
            forward(&v);
            v.next = cs_now() + 1.0 / v.speed;
            if (v.pos == v.rp.n) v.playing = false;
        }
        frame(&v, &g);
        cs_screen_show(&g);
        int ch = cs_screen_key(FRAME_MS, &x, &y);
        if (ch != CS_KEY_NONE && !key(&v, ch, x, y)) {
            interrupted = ch == 3; /* Ctrl-C, SIGINT, SIGTERM */
            break;
        }
    }
    cs_grid_free(&g);
    cs_screen_close();
    /* the recorded run's status, as the plain replay gives it */
    cs_monitor full;
    int status = cs_replay_fold(&v.rp, v.rp.n, &full) == 0
                     ? cs_replay_status(&v.rp, v.rp.n, &full, NULL, 0)
                     : 1;
    cs_monitor_destroy(&full);
    if (interrupted) status = 130; /* as for any interrupted command; q gives the run's */
    cs_history_free(&v.hist);
    cs_monitor_destroy(&v.mon);
    cs_tui_lines_free(&v.src);
    cs_tui_nav_free(&v.nav);
    cs_replay_free(&v.rp);
    return status;
}
