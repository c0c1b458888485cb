/* launch.h -- running a script on N ranks and reporting how it went. */
#ifndef CS_LAUNCH_H
#define CS_LAUNCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "api.h"

typedef struct cs_monitor cs_monitor;
typedef struct cs_script cs_script;

/* An interactive front end (the TUI). attach runs before the ranks start: it
 * subscribes its sinks (after the monitor's) and installs its gates; -1 stops
 * the run before it starts. loop runs on the main thread while the ranks run,
 * instead of the plain wait; it returns when the user is done, after aborting
 * the world if it still runs. The ranks' output is then not printed: the front
 * end shows it; the summary still goes to err. */
typedef struct cs_frontend {
    int (*attach)(void *ud, cs_world *w, cs_bus *bus, cs_monitor *mon, const cs_script *s);
    void (*loop)(void *ud);
    void *ud;
} cs_frontend;

typedef struct cs_run_opts {
    const char *script;   /* path */
    int nranks;           /* 0: the script header's world, else 2 */
    const char *engine;   /* "thread" */
    const char *send_mode; /* NULL: the header's, else rendezvous */
    size_t mem_limit;     /* per rank */
    uint64_t step_limit;  /* per rank */
    double timeout;       /* seconds; 0 = none */
    const char *trace;    /* JSON Lines trace file, or NULL */
    uint64_t seed;
    unsigned char coll_algo[CS_COLL_MAX_FAMILIES]; /* --algo, see collectives.h */
    bool catch_signals;   /* SIGINT/SIGTERM end the run cleanly (status 130) */
    FILE *out, *err;      /* defaults: stdout, stderr */
    const cs_frontend *ui; /* NULL: the plain report */
} cs_run_opts;

/* Run, print the report, return the exit status (DESIGN.md section 9). */
int cs_launch_run(const cs_run_opts *o);

#endif
