/* launch.h -- running a script on N ranks and reporting how it went. */
#ifndef CS_LAUNCH_H
#define CS_LAUNCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "api.h"

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
    bool strict;          /* pitfalls are errors (status 2), not warnings */
    unsigned char coll_algo[CS_COLL_MAX_FAMILIES]; /* --algo, see collectives.h */
    bool catch_signals;   /* SIGINT/SIGTERM end the run cleanly (status 130) */
    FILE *out, *err;      /* defaults: stdout, stderr */
} cs_run_opts;

/* Run, print the report, return the exit status (DESIGN.md section 9). */
int cs_launch_run(const cs_run_opts *o);

#endif
