/* launch.c -- the thread launcher: a world, one thread per rank, a monitor
 * watching the event stream, and a controller that waits for the end.
 *
 * The controller never polls the ranks: the monitor tells it about a deadlock,
 * a failing rank aborts the world itself, and the timeout is a deadline on a
 * condition variable. After an abort the ranks get a grace period to unwind;
 * a rank stuck inside a C call (a pathological string pattern) cannot be
 * stopped, so the controller then reports and leaves without it.
 */
#include "launch.h"
#include "engine.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collectives.h"
#include "errmsg.h"
#include "gates.h"
#include "world.h"
#include "header.h"
#include "monitor.h"
#include "outq.h"
#include "recheck.h"
#include "report.h"
#include "script.h"
#include "trace.h"
#include "vclock.h"

#define GRACE_SECONDS 2.0

typedef struct rank_thread {
    pthread_t tid;
    cs_rank *rank;
    const cs_script *script;
    const cs_script_limits *limits;
    bool started;
} rank_thread;

static void *rank_main(void *arg) {
    rank_thread *rt = arg;
    cs_engine *e = cs_rank_world(rt->rank)->engine;
    /* Bind the thread to the rank's share of the engine (its GPU) first. */
    if (e->ops->rank_start && e->ops->rank_start(e, rt->rank) != CS_OK) {
        char msg[600];
        snprintf(msg, sizeof msg, "%s", cs_rank_errmsg(rt->rank));
        cs_rank_fail(rt->rank, CS_END_ERROR, msg);
        cs_rank_exit(rt->rank, CS_END_ERROR);
        return NULL;
    }
    cs_script_run(rt->rank, rt->script, rt->limits);
    return NULL;
}

static void on_deadlock(void *ud) { cs_world_abort(ud, CS_END_DEADLOCK); }
static void clock_answer(void *ud, int rank, uint64_t ns) { cs_world_clock_answer(ud, rank, ns); }
static void on_error(void *ud) { cs_world_abort(ud, CS_END_ERROR); }

/* ---- the job a front end drives: the world and its controller */

typedef struct thread_job {
    cs_world *w;
    cs_control *control;
} thread_job;

static bool job_finished(void *ud) { return cs_world_wait(((thread_job *)ud)->w, 0, false) == 0; }
static cs_end_reason job_end_reason(void *ud) { return cs_world_end_reason(((thread_job *)ud)->w); }

static void job_abort(void *ud, cs_end_reason why) {
    thread_job *j = ud;
    if (why == CS_END_QUIT) cs_control_ui_quit(j->control);
    if (why == CS_END_TIMEOUT) cs_control_timeout(j->control); /* a deadlock is the verdict then */
    cs_world_abort(j->w, why);
}

static void job_settle(void *ud) { cs_control_settle(((thread_job *)ud)->control); }

/* The trace passed the file size limit (a grader's cap on a run's trace):
 * the run ends, as at a budget (trace_status says why), unless it was ending
 * already. A full disk does not end it: the run's own status, decided by its
 * script, stays the same whenever the disk fills up. */
static void on_trace_fail(void *ud, int code) {
    thread_job *j = ud;
    if (code == EFBIG && cs_world_abort(j->w, CS_END_ERROR)) atomic_store(&j->control->trace_ended, true);
}

static void job_set_gates(void *ud, cs_gates *g) {
    cs_world_set_gate(((thread_job *)ud)->w, cs_gates_pass, g);
}

/* ---- SIGINT/SIGTERM/SIGHUP: a thread that turns them into a clean abort */

/* The world a signal aborts. The lock is held across the abort, so that
 * set_signal_world(NULL) returns only once no abort is still using the world
 * its caller is about to free. */
static cs_world *signal_world;
static pthread_mutex_t signal_lock = PTHREAD_MUTEX_INITIALIZER;

static void set_signal_world(cs_world *w) {
    pthread_mutex_lock(&signal_lock);
    signal_world = w;
    pthread_mutex_unlock(&signal_lock);
}

static void *signal_main(void *arg) {
    sigset_t *set = arg;
    int sig;
    while (sigwait(set, &sig) == 0) {
        pthread_mutex_lock(&signal_lock);
        if (signal_world) cs_world_abort(signal_world, CS_END_QUIT);
        pthread_mutex_unlock(&signal_lock);
    }
    return NULL;
}

bool cs_launch_signal_ignored(int sig) {
    struct sigaction sa;
    return sigaction(sig, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN;
}

static void catch_signals(bool hup) {
    static sigset_t set;
    static bool started;
    if (started) return;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    /* The terminal went away: end as interrupted, trace whole. Not under the
     * visualizer, which would then wait for keys from a terminal that is gone:
     * there the hangup ends the process. */
    if (hup && !cs_launch_signal_ignored(SIGHUP)) sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, NULL); /* inherited by every rank thread */
    pthread_t t;
    if (pthread_create(&t, NULL, signal_main, &set) == 0) pthread_detach(t);
    started = true;
}

/* ---- settings from the command line and the script header */

int cs_control_resolve_net(const cs_run_opts *o, const char *header_net, const char *script_name,
                           cs_netmodel *net, FILE *err) {
    char msg[512];
    const char *spec = o->net ? o->net : header_net && header_net[0] ? header_net : "none";
    if (cs_netmodel_parse(spec, net, msg, sizeof msg) == 0) return 0;
    if (o->net) cs_errf(err, "%s\n", msg);
    else cs_errf(err, "%s: net: %s\n", script_name, msg + strlen("--net: "));
    return -1;
}

static int resolve(const cs_run_opts *o, const cs_script *s, cs_header *h, int *world,
                   cs_send_mode *mode, char *mode_name, size_t mode_len, cs_netmodel *net,
                   FILE *err) {
    char msg[512];
    if (cs_header_parse(s->name, s->source, s->len, h, msg, sizeof msg) < 0) {
        cs_errf(err, "%s\n", msg);
        return -1;
    }
    if (h->warning[0]) cs_errf(err, "warning: %s\n", h->warning);
    *world = o->nranks > 0 ? o->nranks : h->world > 0 ? h->world : 2;
    const char *m = o->send_mode ? o->send_mode : h->send_mode[0] ? h->send_mode : "rendezvous";
    if (!cs_send_mode_parse(m, mode)) {
        cs_errf(err, "%s: unknown send mode '%s' (rendezvous, eager or eager:N)\n",
                o->send_mode ? "--send-mode" : s->name, m);
        return -1;
    }
    cs_send_mode_format(mode, mode_name, mode_len);
    return cs_control_resolve_net(o, h->net, s->name, net, err);
}

/* With no more ranks than cores, give each rank a core of its own, as MPI
 * launchers bind ranks. Otherwise the scheduler's wake-affinity tends to stack
 * two ranks that wake each other on one core, and every message then costs a
 * context switch (measured: 3 us becomes 25-75 us per message on 2 cores). */
static void pin_ranks(rank_thread *rt, int n) {
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0 || n > CPU_COUNT(&allowed)) return;
    int cpu = -1;
    for (int i = 0; i < n; i++) {
        do cpu++; while (!CPU_ISSET(cpu, &allowed));
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        pthread_setaffinity_np(rt[i].tid, sizeof one, &one);
    }
}

static int start_ranks(cs_world *w, rank_thread *rt, const cs_script *s,
                       const cs_script_limits *lim, FILE *err) {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 2u << 20);
    int n = cs_world_size(w), rc = 0;
    for (int i = 0; i < n; i++) {
        rt[i] = (rank_thread){.rank = cs_world_rank(w, i), .script = s, .limits = lim};
        if (pthread_create(&rt[i].tid, &attr, rank_main, &rt[i]) != 0) {
            cs_errf(err, "cannot start rank %d: %s\n", i, strerror(errno));
            cs_world_abort(w, CS_END_ERROR);
            /* ranks never started still count as exited for the wait */
            for (int k = i; k < n; k++) cs_rank_exit(cs_world_rank(w, k), 1);
            rc = -1;
            break;
        }
        rt[i].started = true;
    }
    pthread_attr_destroy(&attr);
    if (rc == 0) pin_ranks(rt, n);
    return rc;
}

/* Wait for the end; returns false if some rank never came back. */
static bool await_end(cs_world *w, double timeout, cs_control *control) {
    double deadline = timeout > 0 ? cs_now() + timeout : cs_now() + 1e9;
    int rc = cs_world_wait(w, deadline, true);
    if (rc < 0) {
        cs_control_timeout(control); /* a deadlock found now aborts the run first */
        cs_world_abort(w, CS_END_TIMEOUT);
    }
    if (rc != 0) rc = cs_world_wait(w, cs_now() + GRACE_SECONDS, false);
    return rc == 0;
}

/* The timekeeper's vtime events join the stream after the event that
 * caused them (it runs as a sink, under the bus lock). */
static void vclock_emit(void *ud, cs_event *ev) { cs_bus_emit_locked(ud, ev); }

void cs_control_clock_answers(cs_control *c, void (*answer)(void *, int, uint64_t), void *ud) {
    if (c->vclock) cs_vclock_set_answer(c->vclock, answer, ud);
}

int cs_control_open(cs_control *c, const cs_run_opts *o, const cs_script *script, int world,
                    const char *engine, const char *mode_name, const cs_netmodel *net, FILE *out,
                    FILE *err) {
    char msg[512], net_name[160];
    memset(c, 0, sizeof *c);
    c->rep = (cs_report){.out = out, .err = err, .world = world};
    c->trace_path = o->trace;
    c->strict = o->strict;
    c->timeout = o->timeout;
    c->report = o->report;
    c->opts = o;
    c->world = world;
    c->recheck = cs_recheck_wanted(o, mode_name);
    if (cs_bus_init(&c->bus, world) < 0 || cs_monitor_init(&c->mon, world) < 0) {
        cs_errf(err, "out of memory\n");
        return -1;
    }
    if (o->trace && !(c->tw = cs_trace_open(o->trace, msg, sizeof msg))) {
        cs_errf(err, "%s\n", msg);
        cs_monitor_destroy(&c->mon);
        cs_bus_destroy(&c->bus);
        return -1;
    }
    if (net && net->on) {
        if (!(c->vclock = cs_vclock_new(net, world))) {
            cs_errf(err, "out of memory\n");
            cs_monitor_destroy(&c->mon);
            cs_bus_destroy(&c->bus);
            if (c->tw) cs_trace_close(c->tw);
            return -1;
        }
        cs_vclock_set_emit(c->vclock, vclock_emit, &c->bus);
    }
    c->mon.bus = &c->bus;
    cs_bus_subscribe(&c->bus, cs_monitor_sink(&c->mon));
    if (c->vclock) cs_bus_subscribe(&c->bus, cs_vclock_sink(c->vclock));
    if (c->tw) cs_trace_subscribe(c->tw, &c->bus);
    /* The ranks' output as it happens, unless the front end shows it or it
     * goes into the JSON outcome. */
    if (o->report == CS_REPORT_JSON) cs_bus_subscribe(&c->bus, cs_output_sink(&c->output));
    else if (!o->ui) cs_bus_subscribe(&c->bus, cs_report_sink(&c->rep));
    /* The script's text too, so that a replay shows the source wherever the
     * trace goes (unless it is too long to record: then replay looks for it) */
    cs_event ev = {.type = CS_EV_RUN, .rank = -1, .world = world, .engine = engine,
                   .send_mode = mode_name, .text = script->name, .seed = o->seed,
                   .net = c->vclock ? cs_netmodel_format(net, net_name, sizeof net_name) : NULL,
                   .source = script->len <= CS_EV_MAX_SOURCE && !memchr(script->source, 0, script->len)
                                 ? script->source : NULL};
    cs_bus_emit(&c->bus, &ev);
    return 0;
}

void cs_control_timeout(cs_control *c) {
    /* Ranks stuck on each other while another never stops: that is the
     * deadlock verdict, not a timeout. */
    cs_bus_lock(&c->bus);
    cs_monitor_declare_stuck(&c->mon);
    cs_bus_unlock(&c->bus);
}

void cs_control_timeout_text(char *buf, size_t len, double timeout) {
    snprintf(buf, len, "timeout: the run did not finish within %g s (--timeout)", timeout);
}

/* The run's status, recorded as an event when no rank's event explains it (a
 * timeout, an interrupt, --strict), so that a replay of the trace ends the
 * same. Called with the bus locked. */
static int settle_status(cs_control *c, int status) {
    char text[256] = "";
    const cs_monitor *mon = &c->mon;
    if (status == 0 && c->strict && c->buffered) {
        status = CS_END_DEADLOCK;
        snprintf(text, sizeof text, "--strict: this program works only because sends are "
                 "buffered (see the rendezvous recheck above)");
    } else if (status == 0 && c->strict && mon->npitfalls) {
        status = CS_END_ERROR;
        snprintf(text, sizeof text, "--strict: %d pitfall%s found (see the warnings above)",
                 mon->npitfalls, mon->npitfalls == 1 ? "" : "s");
    } else if (status == CS_END_TIMEOUT && cs_report_status(mon) != status) {
        if (c->timeout_text[0]) snprintf(text, sizeof text, "%s", c->timeout_text);
        else cs_control_timeout_text(text, sizeof text, c->timeout);
    } else if (status == CS_END_QUIT && cs_report_status(mon) != status) {
        snprintf(text, sizeof text, "%s", c->ui_quit ? "quit in the visualizer before the run ended"
                                                     : "interrupted (SIGINT, SIGTERM or SIGHUP)");
    }
    if (text[0]) {
        cs_event ev = {.type = CS_EV_ERROR, .rank = -1, .status = status, .text = text};
        cs_bus_emit_locked(&c->bus, &ev);
    }
    return status;
}

/* An eager run ended ok: run it again with rendezvous sends and record what
 * that says (the summary's line; a pitfall, or with --strict the verdict).
 * Called with the bus locked, once every rank has ended. */
static void recheck(cs_control *c) {
    cs_recheck r;
    cs_recheck_run(&r, c->opts, c->world, &c->mon);
    if (r.deadlock && !r.covered) {
        c->buffered = true;
        char text[512];
        snprintf(text, sizeof text, "%s:%d: with rendezvous sends this program deadlocks here: "
                 "it works only because sends are buffered (see the summary)",
                 c->mon.script ? c->mon.script : "line", r.line);
        cs_event ev = {.type = CS_EV_WARN, .rank = r.rank, .line = r.line, .text = text,
                       .pitfall = cs_pitfall_kind_name(CS_PIT_BUFFERING)};
        if (!c->strict) cs_bus_emit_locked(&c->bus, &ev);
    }
    cs_event ev = {.type = CS_EV_WARN, .rank = -1, .text = r.block};
    cs_bus_emit_locked(&c->bus, &ev);
    cs_recheck_free(&r);
}

/* A trace that could not be written is a failed run: status 1 unless the run
 * already failed otherwise. Decided before the summary, so that the verdict
 * shows it; the error event is not in the trace (that is what failed). */
static int trace_status(cs_control *c, int status) {
    if (c->tw) cs_trace_flush(c->tw); /* the writer thread's last batch: its error too */
    const char *e = c->tw ? cs_trace_error(c->tw) : NULL;
    /* The failure ended the run (cs_trace_on_fail): its own verdict. */
    if (e && atomic_load(&c->trace_ended)) status = 0;
    if (!e || status != 0) return status;
    char text[600];
    snprintf(text, sizeof text, "the trace could not be written: %s", e);
    cs_event ev = {.type = CS_EV_ERROR, .rank = -1, .status = 1, .text = text};
    cs_bus_emit_locked(&c->bus, &ev);
    return 1;
}

void cs_control_ui_quit(cs_control *c) {
    cs_bus_lock(&c->bus);
    c->ui_quit = true;
    cs_bus_unlock(&c->bus);
}

void cs_control_settle(cs_control *c) {
    cs_bus_lock(&c->bus);
    if (!c->settled && c->recheck && !c->mon.deadlocked) recheck(c);
    c->settled = true;
    cs_bus_unlock(&c->bus);
}

/* A rank with no event at all when the run is over never ran its script:
 * the run ended while it was still joining (a tcp rank process connecting
 * its mesh when another rank's script failed). It ended with the run, so it
 * is aborted, as the thread engine reports a rank the end cut short, not
 * idle; the event goes into the trace, so that a replay says the same.
 * Called with the bus locked. */
static void never_ran(cs_control *c) {
    for (int k = 0; k < c->world; k++) {
        if (c->mon.ranks[k].state != CS_RS_IDLE) continue;
        cs_event ev = {.type = CS_EV_EXIT, .rank = k, .status = CS_RANK_ABORTED};
        cs_bus_emit_locked(&c->bus, &ev);
    }
}

int cs_control_close(cs_control *c, int status, FILE *err) {
    cs_bus_lock(&c->bus); /* a straggler may still emit */
    never_ran(c);
    if (status == 0 && c->recheck && !c->settled && !c->mon.deadlocked) recheck(c);
    /* A verdict found on the last exit (a collective left unfinished) may
     * come after the engine saw a clean end. */
    if (status == 0 && c->mon.deadlocked) status = CS_END_DEADLOCK;
    /* Ranks that failed together: the engine's first (which ended the run)
     * may not be the first in the events; the trace's decides, as in a replay. */
    if ((status == CS_END_ERROR || status == CS_END_TIMEOUT || status == CS_END_DIED) &&
        !c->mon.deadlocked && !cs_monitor_coll_verdict(&c->mon) && c->mon.fail_status)
        status = c->mon.fail_status;
    status = settle_status(c, status);
    status = trace_status(c, status);
    cs_outcome o;
    cs_outcome_build(&o, &c->mon, status, &c->output);
    if (c->vclock) cs_outcome_time_from(&o, c->vclock);
    if (c->report == CS_REPORT_JSON) {
        char *json = cs_outcome_json(&o);
        fputs(json, c->rep.out);
        fflush(c->rep.out);
        free(json);
    } else {
        cs_report_outcome(&c->rep, &o);
    }
    cs_outcome_free(&o);
    cs_bus_unlock(&c->bus);
    if (c->tw) {
        char why[256];
        const char *e = cs_trace_error(c->tw);
        snprintf(why, sizeof why, "%s", e ? e : "");
        if (cs_trace_close(c->tw) < 0) {
            cs_errf(err, "writing the trace %s failed: %s\n", c->trace_path, why);
            if (status == 0) status = 1; /* the close itself failed */
        }
        c->tw = NULL;
    }
    return status;
}

void cs_control_free(cs_control *c) {
    cs_vclock_free(c->vclock);
    c->vclock = NULL;
    cs_output_free(&c->output);
    cs_monitor_destroy(&c->mon);
    cs_bus_destroy(&c->bus);
}

int cs_launch_run(const cs_run_opts *o) {
    FILE *out = o->out ? o->out : stdout, *err = o->err ? o->err : stderr;
    if (o->worker) return cs_launch_rank_process(o);
    char msg[512], mode_name[64];
    cs_script script;
    if (cs_script_load(&script, o->script, msg, sizeof msg) < 0) {
        cs_errf(err, "%s\n", msg);
        return 1;
    }
    /* A syntax error once, not once per rank; a JSON report (grade) keeps it
     * in the outcome, as the ranks report it. */
    if (o->report != CS_REPORT_JSON && cs_script_check_syntax(&script, msg, sizeof msg) < 0) {
        cs_errf(err, "%s\n", msg);
        cs_script_free(&script);
        return CS_END_ERROR;
    }
    cs_header h;
    int world;
    cs_send_mode mode;
    cs_netmodel net;
    if (resolve(o, &script, &h, &world, &mode, mode_name, sizeof mode_name, &net, err) < 0) {
        cs_script_free(&script);
        return 1;
    }
    const cs_engine_kind *kind = cs_engine_find(o->engine);
    if (!kind) {
        cs_errf(err, "unknown engine '%s'\n", o->engine);
        cs_script_free(&script);
        return 1;
    }
    const char *engine = kind->name;
    /* e.g. a GPU per rank: of the ranks this machine runs (one, when the
     * others are started by hand elsewhere: each of them checks its own) */
    int here = (kind->caps & CS_ENGINE_PROCESSES) && o->rank >= 0 ? 1 : world;
    if (kind->check && kind->check(here, msg, sizeof msg) < 0) {
        cs_errf(err, "%s\n", msg);
        cs_script_free(&script);
        return 1;
    }
    for (int f = 0; f < CS_FAM_N; f++)
        if (o->coll_algo[f] == CS_ALGO_NCCL && !(kind->caps & CS_ENGINE_NATIVE_COLL)) {
            cs_errf(err, "--algo %s=nccl: NCCL's own collectives run on --engine nccl "
                         "only (this run uses the %s engine)\n",
                    cs_coll_family_name((cs_coll_family)f), engine);
            cs_script_free(&script);
            return 1;
        }
    if (kind->caps & CS_ENGINE_PROCESSES) {
        int status = cs_launch_controller(o, kind, &script, world, &mode, mode_name, &net);
        cs_script_free(&script);
        return status;
    }

    /* Headless, the ranks' output goes through a queue, as the tcp engine's
     * controller's does: a reader that stops reading (a pager at its prompt)
     * must not stop every rank in the middle of a print, with the bus held. */
    cs_outq *q = cs_outq_std(!o->ui && !o->out && !o->err, &out, &err);
    cs_control control;
    if (cs_control_open(&control, o, &script, world, engine, mode_name, &net, out, err) < 0) {
        cs_outq_close(q);
        cs_script_free(&script);
        return 1;
    }
    cs_world_config cfg = {.world = world, .mode = mode, .mem_limit = o->mem_limit,
                           .seed = o->seed, .engine = engine, .script = script.name,
                           .strict = o->strict, .net = net};
    memcpy(cfg.coll_algo, o->coll_algo, sizeof cfg.coll_algo);
    cs_world *w = cs_world_new(&cfg, &control.bus, msg, sizeof msg);
    rank_thread *rt = w ? calloc((size_t)world, sizeof *rt) : NULL;
    if (!w || !rt) {
        cs_errf(err, "%s\n", w ? "out of memory" : msg);
        cs_world_free(w);
        if (control.tw) cs_trace_close(control.tw);
        cs_control_free(&control);
        cs_outq_close(q);
        cs_script_free(&script);
        return 1;
    }
    cs_control_clock_answers(&control, clock_answer, w);
    control.mon.on_deadlock = on_deadlock;
    control.mon.on_error = on_error;
    control.mon.ud = w;
    bool ui = o->ui != NULL;
    thread_job tj = {w, &control};
    if (control.tw) cs_trace_on_fail(control.tw, on_trace_fail, &tj);
    cs_job job = {.world = world, .bus = &control.bus, .mon = &control.mon, .script = &script,
                  .finished = job_finished, .end_reason = job_end_reason, .abort = job_abort,
                  .set_gates = job_set_gates, .settle = job_settle, .ud = &tj};
    if (ui && o->ui->attach(o->ui->ud, &job) < 0) {
        cs_errf(err, "cannot start the visualizer\n");
        cs_world_abort(w, CS_END_ERROR);
        ui = false;
    }

    if (o->catch_signals) {
        catch_signals(!ui);
        set_signal_world(w);
    }
    cs_script_limits lim = {.mem_limit = o->mem_limit, .step_limit = o->step_limit,
                            .out_limit = o->out_limit};
    start_ranks(w, rt, &script, &lim, err);
    if (ui) o->ui->loop(o->ui->ud);
    bool clean = await_end(w, o->timeout, &control);
    if (o->catch_signals) set_signal_world(NULL);

    int status = cs_control_close(&control, (int)cs_world_end_reason(w), err);
    if (!clean) {
        /* A rank is stuck in C code and still uses the world: leave without freeing it. */
        cs_errf(err, "a rank did not stop within %g s of the end; exiting without it\n",
                GRACE_SECONDS);
        cs_outq_close(q); /* a rank stuck in C prints nothing more */
        fflush(NULL);
        _exit(status);
    }
    for (int i = 0; i < world; i++)
        if (rt[i].started) pthread_join(rt[i].tid, NULL);
    free(rt);
    cs_world_free(w);
    cs_control_free(&control);
    cs_outq_close(q);
    cs_script_free(&script);
    return status;
}
