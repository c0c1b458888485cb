/* tui_run.c -- the visualizer of a live run: the main thread draws frames and
 * reads keys while the ranks run (threads, or processes behind the tcp
 * controller: the job hides which); the gates (gates.c) do the pausing.
 *
 * A frame is rendered under the bus lock (the monitor and the history change
 * only under it), then copied to the screen without it.
 */
#include "tui.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deferred.h"
#include "gates.h"
#include "history.h"
#include "launch.h"
#include "model.h"
#include "monitor.h"
#include "render.h"
#include "screen.h"
#include "script.h"
#include "tui_view.h"

#define FRAME_MS 40

struct cs_tui {
    cs_tui_opts o;
    const cs_job *job;
    cs_bus *bus;
    cs_monitor *mon;
    cs_history hist;
    bool have_hist;
    cs_gates *ctl;
    cs_viz_gate *gates;
    cs_tui_lines src;
    char script[128];
    cs_tui_nav nav;
    bool opened;
    cs_deferred *report; /* printed when the screen closes */
    double paused_at;    /* run time when paused (blocked-for timers stop), or < 0 */
    bool settled;        /* the finished run's job->settle ran (the recheck) */
    char timed_out[128]; /* the report's line once --timeout ended the run here */
};

cs_tui *cs_tui_new(const cs_tui_opts *o) {
    cs_tui *t = calloc(1, sizeof *t);
    if (t) t->o = *o, t->paused_at = -1;
    return t;
}

void cs_tui_free(cs_tui *t) {
    if (!t) return;
    if (t->have_hist) cs_history_free(&t->hist);
    cs_gates_free(t->ctl);
    free(t->gates);
    cs_tui_lines_free(&t->src);
    cs_tui_nav_free(&t->nav);
    cs_deferred_free(t->report);
    free(t);
}

bool cs_tui_usable(char *err, size_t errlen) {
    if (!cs_screen_open(err, errlen)) return false;
    cs_screen_close();
    return true;
}

static int tui_attach(void *ud, const cs_job *job) {
    cs_tui *t = ud;
    int n = job->world;
    const cs_script *s = job->script;
    t->job = job;
    t->bus = job->bus;
    t->mon = job->mon;
    if (cs_history_init(&t->hist, n, 0) < 0) return -1;
    t->have_hist = true;
    t->hist.mon = t->mon;
    t->hist.ascii = cs_screen_ascii();
    t->ctl = cs_gates_new(n, t->o.paused, t->o.speed);
    t->gates = calloc((size_t)n, sizeof *t->gates);
    if (!t->ctl || !t->gates || cs_tui_lines_split(&t->src, s->source, s->len) < 0) return -1;
    snprintf(t->script, sizeof t->script, "%s", s->name);
    if (job->notice) snprintf(t->nav.message, sizeof t->nav.message, "%s", job->notice);
    char err[256];
    if (!cs_screen_open(err, sizeof err)) return -1;
    t->opened = true;
    cs_bus_subscribe(t->bus, cs_history_sink(&t->hist));
    if (t->o.print_after && (t->report = cs_deferred_new(n, stdout, stderr)))
        cs_bus_subscribe(t->bus, cs_deferred_sink(t->report));
    job->set_gates(job->ud, t->ctl);
    return 0;
}

/* ---- one frame */

static const char *status_word(cs_tui *t, bool finished) {
    switch (t->job->end_reason(t->job->ud)) {
    case CS_END_DEADLOCK: return "deadlocked";
    case CS_END_ERROR: return "failed";
    case CS_END_TIMEOUT: return "timeout";
    case CS_END_DIED: return "rank died";
    case CS_END_QUIT: return "quit";
    default: break;
    }
    if (finished) return "finished";
    return cs_gates_paused(t->ctl) ? "paused" : "running";
}

static void frame(cs_tui *t, cs_grid *g, bool finished) {
    int n = t->job->world;
    for (int k = 0; k < n; k++) {
        cs_gates_park p = cs_gates_parked(t->ctl, k);
        t->gates[k] = (cs_viz_gate){p.parked, p.op, p.peer, p.tag, p.line};
    }
    cs_viz_view v = {.gates = t->gates, .script = t->script,
                     .src = (const char *const *)t->src.line, .nsrc = t->src.n,
                     .status = status_word(t, finished), .steps = cs_gates_steps(t->ctl),
                     .speed = cs_gates_speed(t->ctl), .ascii = cs_screen_ascii()};
    /* the join hint of a hand-started run is done with once the run ends */
    if (finished && t->job->notice && strcmp(t->nav.message, t->job->notice) == 0)
        t->nav.message[0] = 0;
    if (finished && !t->nav.message[0] && !t->nav.full)
        snprintf(t->nav.message, sizeof t->nav.message,
                 "the run has ended (%s): arrows select a rank", v.status);
    cs_bus_lock(t->bus);
    if (!t->hist.started) t->hist.started = !t->job->started || t->job->started(t->job->ud);
    for (int k = 0; k < n; k++) /* a step ends at a block as well as at a gate */
        if (t->mon->ranks[k].state == CS_RS_BLOCKED) cs_gates_drop_steps(t->ctl, k);
    v.mon = t->mon;
    v.hist = &t->hist;
    v.now = cs_now() - t->bus->t0;
    /* paused, the blocked-for timers stop with the run */
    if (!cs_gates_paused(t->ctl) || finished) t->paused_at = -1;
    else if (t->paused_at < 0) t->paused_at = v.now;
    else v.now = t->paused_at;
    /* the report's line for our own timeout, unless the timeout found a deadlock */
    if (t->timed_out[0] && !strcmp(v.status, "timeout")) v.end_note = t->timed_out;
    cs_tui_nav_apply(&t->nav, &v, g->w, g->h);
    cs_viz_render(g, &v);
    cs_bus_unlock(t->bus);
}

/* ---- keys */

static void change_speed(cs_tui *t, int dir) {
    cs_gates_set_speed(t->ctl, cs_tui_next_speed(cs_gates_speed(t->ctl), dir));
}

/* space: every rank that can move now goes one operation further: stopped at
 * its gate, or running toward it. A blocked rank is not runnable. */
static void step_all(cs_tui *t) {
    cs_gates_set_paused(t->ctl, true);
    cs_bus_lock(t->bus);
    int n = t->mon->world;
    for (int k = 0; k < n; k++) {
        cs_rank_state s = t->mon->ranks[k].state;
        bool parked = cs_gates_parked(t->ctl, k).parked;
        if (parked || s == CS_RS_IDLE || s == CS_RS_RUNNING || s == CS_RS_COMPUTING)
            cs_gates_step(t->ctl, k);
    }
    cs_bus_unlock(t->bus);
}

static void step_selected(cs_tui *t) {
    int k = t->nav.selected;
    cs_gates_set_paused(t->ctl, true);
    cs_bus_lock(t->bus);
    cs_rank_state s = t->mon->ranks[k].state;
    cs_bus_unlock(t->bus);
    if (s == CS_RS_BLOCKED || s >= CS_RS_DONE)
        snprintf(t->nav.message, sizeof t->nav.message, "rank %d is %s: %s", k,
                 cs_rank_state_name(s),
                 s == CS_RS_BLOCKED ? "it moves when its peer does" : "nothing left to step");
    else cs_gates_step(t->ctl, k);
}

/* Enter on a rank not stopped at its gate: what would get it there, which
 * depends on the state of the run and of the rank. */
static void not_at_gate(cs_tui *t, int k) {
    cs_bus_lock(t->bus);
    cs_rank_state s = t->mon->ranks[k].state;
    cs_bus_unlock(t->bus);
    const char *why;
    if (s == CS_RS_BLOCKED) why = "is blocked: step its peer; enter works once it is ready";
    else if (s >= CS_RS_DONE) why = "has ended: it has no next operation to show";
    else if (!cs_gates_paused(t->ctl))
        why = "is not stopped at its gate: pause (r) or step, then enter";
    else why = "is on its way to its gate: enter again in a moment";
    snprintf(t->nav.message, sizeof t->nav.message, "rank %d %s", k, why);
}

static void show_tensor(cs_tui *t) {
    int k = t->nav.selected;
    char *text = cs_gates_tensor_text(t->ctl, k);
    if (!text && (t->job->finished(t->job->ud) || t->job->end_reason(t->job->ud))) {
        snprintf(t->nav.message, sizeof t->nav.message,
                 "the run has ended: rank %d has no next operation to show", k);
        return;
    }
    if (!text) {
        not_at_gate(t, k);
        return;
    }
    cs_gates_park p = cs_gates_parked(t->ctl, k);
    char title[96];
    snprintf(title, sizeof title, "rank %d, line %d: the tensor of its %s", k, p.line,
             cs_op_name(p.op));
    cs_tui_nav_popup(&t->nav, title, text);
    free(text);
}

/* Returns false when the user leaves. */
static bool key(cs_tui *t, int ch, int x, int y) {
    if (cs_tui_nav_key(&t->nav, ch, x, y)) return true;
    switch (ch) {
    case 'q': case 'Q': case 3: return false;
    case ' ': step_all(t); break;
    case 's': step_selected(t); break;
    case 'r': cs_gates_set_paused(t->ctl, !cs_gates_paused(t->ctl)); break;
    case '+': case '=': change_speed(t, 1); break;
    case '-': change_speed(t, -1); break;
    case CS_KEY_ENTER: show_tensor(t); break;
    default: break;
    }
    return true;
}

static void end_run(cs_tui *t, cs_end_reason why) {
    t->job->abort(t->job->ud, why);
    cs_gates_wake(t->ctl);
}

static void tui_loop(void *ud) {
    cs_tui *t = ud;
    const cs_job *job = t->job;
    cs_grid g = {0};
    double deadline = t->o.timeout > 0 ? cs_now() + t->o.timeout : 0;
    t->nav.nranks = job->world;
    bool signalled = false;
    for (;;) {
        bool finished = job->finished(job->ud);
        cs_end_reason why = job->end_reason(job->ud);
        if (why == CS_END_QUIT) { /* SIGTERM, SIGINT: the world ends already */
            signalled = true;
            break;
        }
        if (deadline > 0 && !finished && !why && cs_now() > deadline) {
            cs_control_timeout_text(t->timed_out, sizeof t->timed_out, t->o.timeout);
            end_run(t, CS_END_TIMEOUT);
        }
        int w, h;
        cs_screen_size(&w, &h);
        if ((g.w != w || g.h != h) && (cs_grid_free(&g), cs_grid_init(&g, w, h) < 0)) break;
        if (finished && why == CS_END_NONE && !t->settled && job->settle) {
            /* the recheck reruns the script: say so while it does */
            snprintf(t->nav.message, sizeof t->nav.message, "finished; checking what it does with "
                     "rendezvous sends ...");
            frame(t, &g, true);
            cs_screen_show(&g);
            job->settle(job->ud);
            t->nav.message[0] = 0;
        }
        t->settled |= finished && why == CS_END_NONE;
        frame(t, &g, finished || why != CS_END_NONE);
        cs_screen_show(&g);
        int x = 0, y = 0, ch = cs_screen_key(FRAME_MS, &x, &y);
        if (ch != CS_KEY_NONE && !key(t, ch, x, y)) break;
    }
    /* quit mid-run; after a signal the summary says that a signal came,
     * not that the user quit (the ranks may still be unwinding) */
    if (!signalled && !job->finished(job->ud)) end_run(t, CS_END_QUIT);
    cs_gates_wake(t->ctl);
    cs_grid_free(&g);
    if (t->opened) cs_screen_close();
    t->opened = false;
    cs_bus_lock(t->bus);
    cs_deferred_release(t->report);
    cs_bus_unlock(t->bus);
}

cs_frontend cs_tui_frontend(cs_tui *t) {
    return (cs_frontend){.attach = tui_attach, .loop = tui_loop, .ud = t};
}
