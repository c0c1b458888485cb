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
    int op;               /* its latest operation: a cs_op, or -1 before the first */
    int peer;             /* that operation's peer */
    uint64_t *wait;       /* requests it sleeps on */
    int nwait, wait_cap, wait_line;
    double since;         /* when it entered its state */
    int status;           /* exit status */
    char *error;          /* its error text, if it failed */
    char *waiters;        /* a failed rank: who waited on it when it failed (report lines) */
    bool in_deadlock;     /* one of the ranks of the deadlock, once declared */
    cs_mon_reqtab reqs;   /* its pending requests: posted, not yet settled */
    uint64_t nevents;
} cs_mon_rank;

/* An extension of the monitor: a detector with state of its own that folds the
 * events it cares about (collectives: coll events, and the internal traffic of
 * their contexts) and takes part in the verdict. Everything is optional. */
typedef struct cs_monitor cs_monitor;
struct cs_sbuf;
typedef struct cs_mon_ext {
    void *state;
    /* Every event of a rank, after the monitor has folded it. */
    void (*fold)(void *state, const cs_monitor *m, const cs_event *ev);
    /* Can blocked rank k still be released by something only the extension
     * knows about? (Called only when the p2p model says it is stuck.) */
    bool (*can_release)(void *state, const cs_monitor *m, int rank);
    /* Explain a deadlock (after the list of waits), writing "why:" and "fix:"
     * lines with cs_sb_printf (monitor_internal.h); true when it did, and the
     * point-to-point explanation is skipped. */
    bool (*explain)(void *state, const cs_monitor *m, struct cs_sbuf *out);
    void (*destroy)(void *state);
} cs_mon_ext;

struct cs_monitor {
    int world;
    char *script, *engine, *send_mode;
    cs_mon_rank *ranks;
    int nlive, nblocked, nfailed;
    uint64_t messages, bytes; /* user messages matched */
    bool deadlocked;
    char *verdict;            /* the deadlock report, once found */
    cs_bus *bus;              /* live runs: where the deadlock event goes; NULL in replay */
    void (*on_deadlock)(void *ud);
    void *ud;
    bool have_run;
    bool ended;               /* every rank has exited */
    uint64_t unmatched;       /* sends posted, not yet received (in flight or buffered) */
    char **warnings;          /* pitfall texts, each once, in order */
    int nwarnings, warn_cap;
    char *run_error;          /* the run ended for a reason of its own (timeout, quit, --strict) */
    int run_status;
    cs_mon_ext ext;           /* collectives (see cs_mon_ext) */
};

int cs_monitor_init(cs_monitor *m, int world);
void cs_monitor_destroy(cs_monitor *m);
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
/* Install an extension (before the first event); the monitor destroys it. */
void cs_monitor_set_ext(cs_monitor *m, cs_mon_ext ext);

#endif
