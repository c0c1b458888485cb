/* monitor.h -- the world model: a fold over the event stream.
 *
 * The monitor sees events only, never a pointer into a rank, so the same code
 * serves a live run on any engine and the replay of a trace. From the model it
 * decides when the run can no longer make progress: every live rank sleeps on
 * requests that nothing posted or in flight can ever complete.
 */
#ifndef CS_MONITOR_H
#define CS_MONITOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "events.h"

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
} cs_mon_req;

typedef struct cs_mon_reqtab { /* open addressing by id */
    cs_mon_req **slot;
    size_t cap, n;
} cs_mon_reqtab;

typedef struct cs_mon_rank {
    cs_rank_state state;
    int line;             /* the line of its latest operation */
    uint64_t *wait;       /* requests it sleeps on */
    int nwait, wait_cap, wait_line;
    double since;         /* when it entered its state */
    int status;           /* exit status */
    char *error;          /* its error text, if it failed */
    cs_mon_reqtab reqs;
    uint64_t nevents;
} cs_mon_rank;

typedef struct cs_mon_coll cs_mon_coll; /* collectives: monitor_coll.c */

typedef struct cs_monitor {
    int world;
    char *script, *engine, *send_mode;
    cs_mon_rank *ranks;
    int nlive, nblocked, nfailed;
    uint64_t messages, bytes; /* user messages matched */
    bool deadlocked;
    char *verdict;            /* the deadlock report, once found */
    cs_bus *bus;              /* live runs: where the deadlock event goes; NULL in replay */
    void (*on_deadlock)(void *ud);
    void (*on_error)(void *ud); /* a verdict that is an error (collective mismatch) */
    void *ud;
    cs_mon_coll *coll;
    bool have_run;
} cs_monitor;

int cs_monitor_init(cs_monitor *m, int world);
void cs_monitor_destroy(cs_monitor *m);
/* Fold one event. Returns -1 for an event that contradicts the model (a rank
 * out of range): the model is left unchanged. */
int cs_monitor_fold(cs_monitor *m, const cs_event *ev);
/* A sink that folds every event it is given. */
cs_sink cs_monitor_sink(cs_monitor *m);

const cs_mon_req *cs_monitor_find(const cs_monitor *m, int rank, uint64_t id);

/* ---- collectives (monitor_coll.c) */
void cs_monitor_coll_fold(cs_monitor *m, const cs_event *ev);
void cs_monitor_coll_destroy(cs_monitor *m);
/* A deadlock's explanation at the collective level (malloc'd), or NULL when no
 * collective is waiting for ranks that never called it. */
char *cs_monitor_coll_explain(const cs_monitor *m);
/* The collective mismatch found, or NULL. */
const char *cs_monitor_coll_verdict(const cs_monitor *m);
/* Collective calls every member of their group has entered. */
uint64_t cs_monitor_coll_calls(const cs_monitor *m);

#endif
