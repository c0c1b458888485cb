/* recheck.h -- the rendezvous recheck: a program that works only because its
 * sends were buffered.
 *
 * When a run with eager sends (eager or eager:N) ends ok, the same script runs
 * again, headless, with rendezvous sends: same world, limits, seed and
 * collective algorithms, on the thread engine whatever engine the first run
 * used (matching and the monitor are shared, so the verdict is the same). Its
 * outcome becomes one line of the summary: "with rendezvous sends: ok", or
 * "with rendezvous sends: deadlock at FILE:LINE -- ..." with that deadlock's
 * explanation. The line travels in the trace as a warn event of no rank, so a
 * replay prints it too. The deadlock is a pitfall (buffering_hazard), or with
 * --strict the verdict of the run (status 3, kind deadlock_buffered).
 */
#ifndef CS_RECHECK_H
#define CS_RECHECK_H

#include <stdbool.h>

#include "outcome.h"

/* Every recheck line starts so; a warn event of no rank with it is the recheck. */
#define CS_RECHECK_PREFIX "with rendezvous sends: "

typedef struct cs_run_opts cs_run_opts;
typedef struct cs_monitor cs_monitor;

typedef struct cs_recheck {
    bool ran;             /* false: the recheck could not tell (it failed otherwise) */
    bool deadlock;
    bool covered;         /* the deadlock is only the sends already reported unreceived */
    int rank, line;       /* where it deadlocks: the first operation the verdict names */
    char *block;          /* the summary line, and the deadlock's report after it */
} cs_recheck;

/* Should a run with this send mode be rechecked? */
bool cs_recheck_wanted(const cs_run_opts *o, const char *mode_name);
/* Run o's script again with rendezvous sends on world ranks; mon is the first
 * run's final model (its unreceived messages). Fills r; free with cs_recheck_free. */
void cs_recheck_run(cs_recheck *r, const cs_run_opts *o, int world, const cs_monitor *mon);
void cs_recheck_free(cs_recheck *r);

/* The verdict of --strict from a recheck block (the text of the warn event):
 * the rendezvous deadlock's headline, ranks, why, note and fix, with the note
 * that eager buffering hid it. False when the block holds no deadlock. */
bool cs_recheck_verdict(const char *block, const char *send_mode, cs_verdict *v);

#endif
