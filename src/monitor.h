/* monitor.h -- the world model: a fold over the event stream.
 *
 * The monitor sees events only, never a pointer into a rank, so the same code
 * serves a live run on any engine and the replay of a trace. From the model it
 * decides when part of the run can no longer make progress: a set of blocked
 * ranks, each waiting on requests that nothing posted or in flight can
 * complete and that no rank outside the set could still release.
 */
#ifndef CS_MONITOR_H
#define CS_MONITOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "events.h"
#include "outcome.h"

typedef enum {
    CS_RS_IDLE = 0,  /* not started yet */
    CS_RS_RUNNING,
    CS_RS_BLOCKED,
    CS_RS_COMPUTING,
    CS_RS_DONE,
    CS_RS_FAILED,    /* raised an error or exceeded a budget */
    CS_RS_ABORTED    /* unwound because the run ended */
} cs_rank_state;

const char *cs_rank_state_name(cs_rank_state s);

/* A request as the monitor knows it: from its post until it is complete and,
 * for a send, matched (an eager send completes first and can still be received). */
typedef struct cs_mon_req {
    int rank;
    uint64_t id;
    cs_op op;
    int peer, tag, ctx;
    size_t bytes;
    cs_dtype dtype;
    int ndim;
    int64_t shape[CS_MAX_DIMS];
    int line;
    bool eager, matched, done;
    uint32_t *clock;      /* its rank's vector clock at the post (monitor_race.c) */
    uint32_t *rclock;     /* a rendezvous send: its receive's clock at that post */
    uint32_t waited_at;   /* its rank has waited on it: the rank's counter at its next
                           * post (monitor_race.c); 0: not waited on yet */
} cs_mon_req;

typedef struct cs_mon_reqtab { /* open addressing by id */
    cs_mon_req **slot;
    size_t cap, n;
} cs_mon_reqtab;

typedef struct cs_mon_rank {
    cs_rank_state state;
    int line;             /* the line of its latest operation */
    int end_line;         /* failed: the line it failed on; aborted: where the abort
                           * stopped it (0: not known) */
    int op;               /* its latest operation: a cs_op, or -1 before the first */
    int peer;             /* that operation's peer */
    uint64_t *wait;       /* requests it sleeps on */
    int nwait, wait_cap, wait_line;
    int wait_open;        /* wait[0 .. wait_open) are done (a done request stays done):
                           * the scans start here, so a wait_all over n requests costs
                           * O(n) in all, not O(n) per event */
    double since;         /* when it entered its state */
    int status;           /* exit status */
    char *error;          /* its error text, if it failed */
    char *waiters;        /* a failed rank: who waited on it when it failed (report lines) */
    bool in_deadlock;     /* one of the ranks of the deadlock, once declared */
    /* Where the run's end found it (an aborted rank): the wait that was cut
     * short, if its last one ended with a request still open. */
    bool cut;
    uint64_t cut_req;     /* the first request of that wait not done */
    int cut_line;         /* where it waited */
    cs_mon_reqtab reqs;   /* its pending requests: posted, not yet settled */
    uint64_t nevents;
} cs_mon_rank;

typedef struct cs_mon_coll cs_mon_coll; /* collectives: monitor_coll.c */
typedef struct cs_mon_race cs_mon_race; /* message races: monitor_race.c */

typedef struct cs_monitor {
    int world;
    char *script, *engine, *send_mode;
    cs_mon_rank *ranks;
    int nlive, nblocked, nfailed;
    uint64_t messages, bytes; /* user messages matched */
    bool deadlocked;
    cs_verdict deadlock;      /* the deadlock found: kind, ranks, why, fix, text */
    const char *verdict;      /* its text (deadlock.text), for the readers of words */
    cs_bus *bus;              /* live runs: where the deadlock event goes; NULL in replay */
    void (*on_deadlock)(void *ud);
    void (*on_error)(void *ud); /* a verdict that is an error (collective mismatch) */
    void *ud;
    cs_mon_coll *coll;
    cs_mon_race *race;
    bool have_run;
    bool ended;               /* every rank has exited */
    uint64_t unmatched;       /* sends posted, not yet received (in flight or buffered) */
    cs_pitfall *pitfalls;     /* each once (kind and sites), in the order found */
    int npitfalls, pit_cap;
    char *run_error;          /* the run ended for a reason of its own (timeout, quit, --strict) */
    char *recheck;            /* the rendezvous recheck's block (recheck.h), or NULL */
    int run_status;
    int fail_status;          /* the first rank failure's status, in event order */
    cs_mon_req *spare[64];    /* settled requests' memory, for the next posts */
    int nspare;
} cs_monitor;

int cs_monitor_init(cs_monitor *m, int world);
void cs_monitor_destroy(cs_monitor *m);
/* explain.c: where the run's end stopped aborted rank k, in the report's
 * words ("in recv from rank 1 (tag 0, float32 [2], 8 bytes) at x.lua:3";
 * "running at x.lua:6", the line it ran, a dist.compute's too), and that
 * line in *line; NULL (and 0) when the rank was not stopped so, or where it
 * was is not known. malloc'ed. */
char *cs_monitor_stop_text(const cs_monitor *m, int k, int *line);
/* Aborted rank k was stopped inside an operation or a wait (blocked, or
 * spinning in it before it blocked), not running: a wait that never ended. */
bool cs_monitor_stopped_waiting(const cs_monitor *m, int k);
/* The summary and the visualizer's alerts list the first this many of them
 * (a run of 256 ranks would fill the screen; the JSON report has all). */
#define CS_STOPS_SHOWN 8
/* Fold one event. Returns -1 for an event that contradicts the model (a rank
 * out of range): the model is left unchanged. */
int cs_monitor_fold(cs_monitor *m, const cs_event *ev);
/* A sink that folds every event it is given. */
cs_sink cs_monitor_sink(cs_monitor *m);

const cs_mon_req *cs_monitor_find(const cs_monitor *m, int rank, uint64_t id);
/* Call fn on each pending request of rank (in no particular order). */
void cs_monitor_each_req(const cs_monitor *m, int rank,
                         void (*fn)(void *ud, const cs_mon_req *q), void *ud);
/* A send posted and not yet matched: a message in flight (or buffered, eager). */
static inline bool cs_mon_req_in_flight(const cs_mon_req *q) {
    return cs_op_is_send(q->op) && !q->matched;
}
/* A part of the run is deadlocked while other ranks still run (they never
 * block: an endless loop, a long compute): declare it now, as the deadlock
 * verdict. The launcher calls it when --timeout expires. True if declared. */
bool cs_monitor_declare_stuck(cs_monitor *m);

/* ---- message races (monitor_race.c): happens-before from the events */
void cs_monitor_race_post(cs_monitor *m, cs_mon_req *q,
                          void (*warn)(void *, int, int, const char *));
void cs_monitor_race_match(cs_monitor *m, cs_mon_req *recv, cs_mon_req *send,
                           void (*warn)(void *ud, int rank, int line, const char *text));
void cs_monitor_race_complete(cs_monitor *m, cs_mon_req *q);
/* Rank waits on reqs (a block event): an irecv among them is over for the
 * rank from its next post on, and it learns what its isends learnt. */
void cs_monitor_race_waited(cs_monitor *m, int rank, const uint64_t *reqs, int n);
void cs_monitor_race_destroy(cs_monitor *m);
/* Rendezvous isends complete whose rank has not waited on them yet, kept for
 * that wait: what the race detector holds on to. */
size_t cs_monitor_race_unwaited(const cs_monitor *m);
/* The line of a receive from any source of rank, before its request before,
 * that took a message from rank from in context ctx, in a race already
 * reported; 0 if none. A deadlock it caused is explained by it. */
int cs_monitor_race_took(const cs_monitor *m, int rank, int from, int ctx, uint64_t before);
/* The line of a receive from any source, in a race already reported, that
 * took another rank's message (*took: that rank) where the unmatched send s
 * could have gone; 0 if none. A deadlock of s waiting is explained by it. */
int cs_monitor_race_left(const cs_monitor *m, const cs_mon_req *s, int *took);

/* ---- collectives (monitor_coll.c) */
void cs_monitor_coll_fold(cs_monitor *m, const cs_event *ev);
void cs_monitor_coll_destroy(cs_monitor *m);
/* A deadlock's explanation at the collective level (malloc'd, without its
 * "why: " and final newline; *fix gets the fix, malloc'd), or NULL when no
 * collective is waiting for ranks that never called it. */
char *cs_monitor_coll_explain(const cs_monitor *m, char **fix);
/* The collective mismatch found (its report text), or NULL. */
const char *cs_monitor_coll_verdict(const cs_monitor *m);
/* The same as a verdict (kind, ranks' calls, why, fix), or NULL. */
const cs_verdict *cs_monitor_coll_mismatch(const cs_monitor *m);
/* Add to v the calls of the collectives some members never entered: the
 * members inside, and (missing) the members that are not. */
void cs_monitor_coll_ops(const cs_monitor *m, cs_verdict *v);
/* The collective rank is inside on the group of context ctx ("all_reduce"),
 * or NULL. */
const char *cs_monitor_coll_inside(const cs_monitor *m, int ctx, int rank);
/* Is a collective call entered by some members of its group and not by others? */
bool cs_monitor_coll_unfinished(const cs_monitor *m);
/* Collective calls every member of their group has entered. */
uint64_t cs_monitor_coll_calls(const cs_monitor *m);
/* A collective mismatch found and not yet declared: it waits for the members
 * that have not entered the call (so that its words do not depend on how far
 * timing let them get). Is rank one of them? Declare it without them. */
bool cs_monitor_coll_held(const cs_monitor *m);
bool cs_monitor_coll_held_missing(const cs_monitor *m, int rank);
void cs_monitor_coll_declare_held(cs_monitor *m);

#endif
