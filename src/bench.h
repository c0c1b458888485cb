/* bench.h -- commsim bench: measure the engines through the ordinary launcher.
 *
 * A bench is a plan of runs, one per (engine, send mode, op, algorithm); each
 * run is a generated Lua script (bench_script.c) started by cs_launch_run in a
 * child process, headless, with the visualizer, trace and eager recheck off,
 * so it takes the very code path of 'commsim run' and its peak RSS is the
 * child's. Rank 0 prints one machine line per size; bench.c turns those into
 * rows (time, algbw, busbw as nccl-tests computes them) and bench_format.c
 * prints them as a table, CSV or JSON.
 */
#ifndef CS_BENCH_H
#define CS_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define CS_BENCH_MAX_LIST 64

typedef enum { CS_BENCH_TABLE = 0, CS_BENCH_CSV, CS_BENCH_JSON } cs_bench_format;

/* What one op is and how its bytes count: the table in bench.c. */
typedef struct cs_bench_op {
    const char *name;    /* --op NAME, and the name the script knows */
    bool p2p;            /* two ranks whatever -n says */
    bool sized;          /* false: one row of size 0 (barrier) */
    int family;          /* the --algo family of a collective (cs_coll_family), -1 for p2p */
} cs_bench_op;

typedef struct cs_bench_opts {
    const char *engines[CS_BENCH_MAX_LIST]; int nengines;
    const char *modes[CS_BENCH_MAX_LIST]; int nmodes;
    const cs_bench_op *ops[CS_BENCH_MAX_LIST]; int nops;
    const char *algos[CS_BENCH_MAX_LIST]; int nalgos; /* "default" = the run's choice */
    size_t sizes[CS_BENCH_MAX_LIST]; int nsizes;
    int nranks;           /* collectives; p2p ops use 2 */
    long iters;           /* > 0: fixed; 0: chosen by time */
    double seconds;       /* per size when iters is 0 */
    cs_bench_format format;
    const char *net;      /* --net: every run under this network model, or NULL (real time) */
    size_t mem_limit;     /* bytes per rank, as run's --mem-limit */
    FILE *out, *err;
} cs_bench_opts;

/* One measured line. time is per iteration (p2p: half round trip for
 * pingpong, per message for bw and bibw), slowest rank. */
typedef struct cs_bench_row {
    const char *engine, *mode, *op, *algo;
    int ranks;
    size_t bytes;
    long iters, warmup;
    double time_s, algbw, busbw; /* seconds, GB/s (1e9 bytes) */
    double rss_mib;              /* the run's peak resident set */
} cs_bench_row;

const cs_bench_op *cs_bench_op_find(const char *name);
const cs_bench_op *cs_bench_op_at(int i);
/* nccl-tests' busbw factor of op on n ranks. */
double cs_bench_busbw_factor(const char *op, int n);

/* Parse "8:64M" (doubling) or "8,1K,4M" into sizes; false with a message. */
bool cs_bench_sizes_parse(const char *spec, size_t *sizes, int *n, char *err, size_t errlen);
/* Whether a comma list has an empty entry ("8,,16", "thread,"): a typo, not
 * a shorter list. */
bool cs_bench_list_gap(const char *list);

/* Is name 'default' or an algorithm of some collective family? */
bool cs_bench_algo_known(const char *name);

/* Run the plan and print it. 0, or 1 when a run failed (the others still ran)
 * or when the plan has no run at all (said on o->err). */
int cs_bench_run(const cs_bench_opts *o);

/* The Lua script of one run (bench_script.c); NULL algo: the default. */
char *cs_bench_script(const cs_bench_op *op, const char *algo, const size_t *sizes, int nsizes,
                      long iters, double seconds);

/* Output (bench_format.c): the header once, a row at a time, the footer. */
void cs_bench_begin(const cs_bench_opts *o);
void cs_bench_row_print(const cs_bench_opts *o, const cs_bench_row *r, bool first);
void cs_bench_end(const cs_bench_opts *o, int failed);

/* --calibrate (bench_calibrate.c): a line time = alpha + bytes / bandwidth
 * fitted to pingpong's half round trips, least squares on relative error. */
typedef struct cs_bench_fit_result {
    double alpha_s;          /* seconds, >= 0 */
    double bandwidth;        /* bytes per second, > 0 */
    double rms_err, max_err; /* relative error of the line at the points */
    int points;
} cs_bench_fit_result;

/* Fit n points; false when no line with positive bandwidth fits (fewer than
 * two distinct sizes, or time not growing with size). */
bool cs_bench_fit(const double *bytes, const double *secs, int n, cs_bench_fit_result *fit);
/* The fit as a --net model: "alpha=4.21us,bandwidth=1.93GB/s". */
void cs_bench_net_string(const cs_bench_fit_result *fit, char *buf, size_t len);
/* Measure o's engines (pingpong over o's sizes), fit and print them in o's
 * format. 0, or 1 when an engine could not be measured or fitted. */
int cs_bench_calibrate(const cs_bench_opts *o);

#endif
