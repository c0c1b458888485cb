/* launch.h -- running a script on N ranks and reporting how it went. */
#ifndef CS_LAUNCH_H
#define CS_LAUNCH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "api.h"
#include "monitor.h"
#include "report.h"
#include "script.h"
#include "trace.h"

typedef struct cs_monitor cs_monitor;
typedef struct cs_script cs_script;

typedef struct cs_gates cs_gates;

/* What a front end sees of a running job and may do to it, whatever the
 * engine: the thread launcher's world, or the tcp controller's rank processes. */
typedef struct cs_job {
    int world;
    cs_bus *bus;          /* the run's events; the monitor changes under its lock */
    cs_monitor *mon;
    const cs_script *script;
    const char *notice;   /* to show before the run starts (a job token), or NULL */
    /* Every rank has ended (and stays so). */
    bool (*finished)(void *ud);
    /* Why the run ended early; CS_END_NONE while it runs or after a clean end. */
    cs_end_reason (*end_reason)(void *ud);
    /* End the run for why; the first reason wins. A timeout first looks for
     * ranks deadlocked among themselves (that verdict wins then). */
    void (*abort)(void *ud, cs_end_reason why);
    /* From now on every rank passes these gates before each operation. */
    void (*set_gates)(void *ud, cs_gates *g);
    /* The run has finished cleanly: do now what the summary still waits for
     * (the rendezvous recheck of an eager run), so that a front end can show
     * it before it closes. Once; NULL where there is nothing to do. */
    void (*settle)(void *ud);
    /* Every rank runs its script now (the tcp engine's ranks have all
     * joined): one that has sent no event yet is running code before its
     * first call. NULL: from the start (threads). */
    bool (*started)(void *ud);
    void *ud;
} cs_job;

/* An interactive front end (the TUI). attach runs before the ranks start: it
 * subscribes its sinks (after the monitor's) and installs its gates; -1 stops
 * the run before it starts. loop runs on the main thread while the ranks run,
 * instead of the plain wait; it returns when the user is done, after aborting
 * the job if it still runs. The ranks' output is then not printed: the front
 * end shows it; the summary still goes to err once loop has returned. */
typedef struct cs_frontend {
    int (*attach)(void *ud, const cs_job *job);
    void (*loop)(void *ud);
    void *ud;
} cs_frontend;

typedef struct cs_run_opts {
    const char *script;   /* path */
    int nranks;           /* 0: the script header's world, else 2 */
    const char *engine;   /* a name in the engine table (engine.h); NULL: the default */
    const char *send_mode; /* NULL: the header's, else rendezvous */
    const char *net;      /* --net: NULL: the header's, else none (netmodel.h) */
    size_t mem_limit;     /* per rank */
    uint64_t step_limit;  /* per rank */
    uint64_t out_limit;   /* bytes printed per rank; 0 = none (a graded run's bound) */
    double timeout;       /* seconds; 0 = none */
    const char *trace;    /* JSON Lines trace file, or NULL */
    uint64_t seed;
    bool strict;          /* pitfalls are errors (status 2), not warnings */
    bool no_recheck;      /* no rendezvous recheck after an eager run (recheck.h) */
    unsigned char coll_algo[CS_COLL_MAX_FAMILIES]; /* --algo, see collectives.h */
    bool catch_signals;   /* SIGINT/SIGTERM end the run cleanly (status 130) */
    FILE *out, *err;      /* defaults: stdout, stderr */
    /* ranks as processes (controller.c): torchrun's MASTER_ADDR/MASTER_PORT, RANK, WORLD_SIZE */
    const char *master;   /* "HOST[:PORT]" of the controller, or NULL (loopback, any port) */
    int rank;             /* -1: launch every rank here; else this process's rank */
    bool worker;          /* a rank process (started by a controller, or rank > 0) */
    bool by_hand;         /* a rank process started by hand (rank > 0, not --worker) */
    const char *token;    /* the job token, or NULL (random, or COMMSIM_TOKEN) */
    const char *bind;     /* the address rank processes listen on, or NULL */
    const cs_frontend *ui; /* NULL: the plain report */
    cs_report_format report; /* --report: the plain report, or the outcome as JSON on out */
} cs_run_opts;

/* Run, print the report, return the exit status (0 ok, 1 usage or setup error, 2 script
 * error, 3 deadlock, 4 timeout or budget, 5 a rank process died, 130 interrupted). */
int cs_launch_run(const cs_run_opts *o);

/* Was the signal ignored when commsim started (nohup's SIGHUP)? A run then
 * leaves it out of the set it waits for: Linux never discards a blocked
 * signal, so a run under nohup would end as interrupted at a hangup. */
bool cs_launch_signal_ignored(int sig);

/* ---- the controller's side of a run, shared by the launchers */

typedef struct cs_control {
    cs_bus bus;
    cs_monitor mon;
    cs_report rep;
    cs_trace_writer *tw;
    const char *trace_path;
    bool strict;          /* --strict: pitfalls make a clean run an error */
    double timeout;
    cs_report_format report;
    cs_output output;     /* --report json: the ranks' printed lines */
    const cs_run_opts *opts; /* for the rendezvous recheck */
    int world;
    bool recheck;         /* an eager run: recheck it with rendezvous sends if it ends ok */
    bool buffered;        /* the recheck deadlocked: with --strict, that is the verdict */
    bool settled;         /* cs_control_settle ran: the recheck is done */
    bool ui_quit;         /* the user quit in the visualizer (not a signal) */
    _Atomic bool trace_ended; /* the trace passed the file size limit, and that ended the run */
    char timeout_text[160]; /* what a timeout's line says instead of the usual, or "" */
    struct cs_vclock *vclock; /* the timekeeper, with a network model on; else NULL */
} cs_control;

/* Set up the bus with the monitor, the trace writer (o->trace) and the report
 * subscribed, and emit the run header. 0, or -1 after printing why. */
/* net: the network model; with one on, the timekeeper (vclock.h) is
 * subscribed after the monitor, and the header records the model. */
int cs_control_open(cs_control *c, const cs_run_opts *o, const cs_script *script, int world,
                    const char *engine, const char *mode_name, const cs_netmodel *net, FILE *out,
                    FILE *err);
/* Where the timekeeper's answers to clock reads go (before the ranks start). */
void cs_control_clock_answers(cs_control *c, void (*answer)(void *, int, uint64_t), void *ud);
/* The model a run uses: --net, else the script header's, else none. 0, or
 * -1 after printing why. */
int cs_control_resolve_net(const cs_run_opts *o, const char *header_net, const char *script_name,
                           cs_netmodel *net, FILE *err);
/* Every rank ended cleanly: run the rendezvous recheck now (once) rather
 * than in cs_control_close, for a front end that shows its line. */
void cs_control_settle(cs_control *c);
/* The user quit in the visualizer before the run ended: the report says so
 * rather than blaming a signal. Call before aborting the run for CS_END_QUIT. */
void cs_control_ui_quit(cs_control *c);
/* --timeout expired: declare a deadlock among the ranks if there is one
 * (the monitor's on_deadlock then ends the run), before ending it for the timeout. */
void cs_control_timeout(cs_control *c);
/* The report's line for a run that outlived --timeout (seconds). */
void cs_control_timeout_text(char *buf, size_t len, double timeout);
/* Settle the final status (--strict turns pitfalls of a clean run into status
 * 2; a timeout, an interrupt or --strict is recorded as an error event of no
 * rank, for replay), print the summary (or the JSON outcome) and close the
 * trace. Returns the status. */
int cs_control_close(cs_control *c, int status, FILE *err);
/* Free the monitor and the bus (once no rank can emit any more). */
void cs_control_free(cs_control *c);

/* An engine whose ranks are processes: the controller (controller.c), which
 * launches the ranks here or waits for them to join; and a rank process
 * (rank_process.c). */
typedef struct cs_engine_kind cs_engine_kind;
int cs_launch_controller(const cs_run_opts *o, const cs_engine_kind *kind, const cs_script *s,
                         int world, const cs_send_mode *mode, const char *mode_name,
                         const cs_netmodel *net);
int cs_launch_rank_process(const cs_run_opts *o);

#endif
