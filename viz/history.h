/* history.h -- what the visualizer remembers of the event stream: the rows of
 * the space-time diagram, each rank's printed output, the warnings.
 *
 * A sink on the bus (its emit runs under the bus lock; readers take the bus
 * lock too). Memory is bounded: when the diagram is full the oldest rows leave
 * and are counted, repeated identical messages share one row with a count, and
 * collectives' internal messages are counted in their band. Nothing is dropped
 * without a count the screen shows.
 */
#ifndef CS_HISTORY_H
#define CS_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "events.h"
#include "monitor.h"

/* What a rank did during the stretch of time a diagram row covers. */
typedef enum {
    CS_HS_NONE = 0,   /* not started */
    CS_HS_RUN,
    CS_HS_COMPUTE,
    CS_HS_COLL,       /* inside a collective */
    CS_HS_BLOCKED,
    CS_HS_DONE,
    CS_HS_FAILED,
    CS_HS_MARK = 0x80 /* flag: this rank is what the row is about */
} cs_hist_state;

typedef enum { CS_HROW_MSG, CS_HROW_COLL, CS_HROW_EXIT, CS_HROW_ERROR, CS_HROW_WARN,
               CS_HROW_DEADLOCK,
               CS_HROW_STATES /* lifelines only: the ranks as they were at the verdict */
} cs_hrow_kind;

typedef struct cs_hrow {
    cs_hrow_kind kind;
    int from, to;      /* MSG: sender and receiver; other kinds: the rank (or -1) */
    int tag;
    size_t bytes;
    uint64_t count;    /* MSG: identical messages in a row; COLL: internal messages */
    bool begin;        /* COLL: entry or exit */
    double t;
    char name[24];     /* COLL: its name */
    uint32_t call;     /* COLL: the call's number on its context (its messages' tag) */
    char algo[24];     /* COLL: the algorithm ("ring", "tree", ...) */
} cs_hrow;

/* The latest operation a rank posted, for the rank table. */
typedef struct cs_hpost {
    bool valid;
    cs_op op;
    int peer, tag, line;
    size_t bytes;
} cs_hpost;

#define CS_HIST_OUT_KEEP 2000 /* printed lines kept per rank (its ring grows to that) */
#define CS_HIST_OUT_BYTES (256u << 10) /* and their bytes: a line may be 64 KiB */
#define CS_HIST_WARN_KEEP 16
#define CS_HIST_CYCLE_KEEP 16 /* ranks of a wait-for cycle named; longer ones are elided */

typedef struct cs_hout {
    char **line;       /* a ring of cap lines; cap reaches KEEP before it wraps */
    size_t cap;
    uint64_t total;    /* lines ever printed */
    uint64_t first;    /* the oldest kept: lines [first, total) are, at i % KEEP */
    size_t bytes;      /* theirs, at most OUT_BYTES but for the newest line */
} cs_hout;

/* Modelled time (--net): what the timekeeper timed (its vtime events), kept
 * to draw the diagram to scale. */
typedef enum { CS_HV_WAIT, CS_HV_COMPUTE, CS_HV_MSG, CS_HV_EXIT } cs_hv_kind;

typedef struct cs_hspan {
    uint8_t kind;      /* cs_hv_kind */
    int rank, peer;    /* MSG: sender and receiver */
    size_t bytes;
    uint64_t from, to; /* virtual ns: the span; MSG: its transmission's start and its arrival */
} cs_hspan;

#define CS_HIST_SPANS 8192

typedef struct cs_history {
    int world;
    size_t cap, head, n;   /* ring of rows */
    cs_hrow *rows;
    uint8_t *st;           /* cap x world cs_hist_state, row-major */
    uint8_t *cur, *pend;   /* each rank's state now, and its worst since the last row */
    uint64_t dropped_rows, dropped_msgs, messages, coll_msgs;
    cs_hpost *last;        /* per rank */
    cs_hout *out;          /* per rank */
    char *warn[CS_HIST_WARN_KEEP];
    uint64_t nwarn;
    double t;              /* time of the latest event */
    uint64_t nevents;
    /* The ranks as they were when the deadlock was found: after it the ranks
     * unwind (aborted), but the screen must show who was blocked on what. */
    const cs_monitor *mon; /* set by the owner to enable the snapshot */
    struct cs_viz_rank *frozen;
    int cycle[CS_HIST_CYCLE_KEEP], ncycle; /* the wait-for cycle then: its first
                                            * entries, and its true length */
    bool ascii;            /* the snapshot's arrows in ASCII */
    bool started;          /* every rank runs its script (set by a rank's first
                            * event, or by a live run's owner once its ranks have
                            * started): a rank with no event yet is computing
                            * before its first call, shown running, not idle */
    /* Collective calls: each rank's calls per context (a call's messages carry
     * its number as their tag), and the bands of recent calls, so a message is
     * counted in the band of its own call, not the latest one. */
    uint32_t **calls;      /* per rank, indexed by context */
    int *ncalls;           /* per rank, contexts allocated */
    struct cs_hband {
        int ctx;
        uint32_t call;
        bool begin;
        uint64_t row;
        struct cs_hcmsg { int from, to, step; size_t bytes; } *msg; /* its messages, in order */
        uint32_t nmsg;
        int *sent;          /* per rank: messages sent so far in this call (a step number) */
    } band[64];
    unsigned nband;        /* bands ever opened; the last 64 are kept */
    /* modelled time: a ring of the latest CS_HIST_SPANS spans (allocated at
     * the first vtime event); the oldest leave and are counted */
    cs_hspan *spans;
    size_t span_head, nspans;
    uint64_t spans_dropped;
    uint64_t *vclock;      /* per rank: cs_history_vclock (allocated with the spans) */
    uint64_t vmax;         /* the latest virtual time seen */
} cs_history;

/* cap: diagram rows kept (0: a default that bounds memory for the world size). */
int cs_history_init(cs_history *h, int world, size_t cap);
void cs_history_free(cs_history *h);
void cs_history_add(cs_history *h, const cs_event *ev);
cs_sink cs_history_sink(cs_history *h);

/* Row i (0 = oldest kept) and the state of rank k during it. */
const cs_hrow *cs_history_row(const cs_history *h, size_t i);
uint8_t cs_history_state(const cs_history *h, size_t i, int k);
/* Printed line i (0 = oldest kept) of rank k, and how many are kept. */
size_t cs_history_nout(const cs_history *h, int k);
const char *cs_history_out(const cs_history *h, int k, size_t i);
const char *cs_history_warn(const cs_history *h, size_t i); /* 0 = oldest kept */
/* The band opened at row i, with its internal messages (the 64 latest bands
 * keep theirs, up to CS_HIST_BAND_MSGS each), or NULL. */
#define CS_HIST_BAND_MSGS 1024
const struct cs_hband *cs_history_band(const cs_history *h, size_t i);
/* The row of the newest band that kept messages, or SIZE_MAX. */
size_t cs_history_last_band(const cs_history *h);
size_t cs_history_nwarn(const cs_history *h);
/* Span i (0 = oldest kept) of modelled time, and how many are kept (0:
 * the run has no network model). */
size_t cs_history_nspans(const cs_history *h);
const cs_hspan *cs_history_span(const cs_history *h, size_t i);
/* Rank k's virtual clock: the latest end of its waits and computes
 * (posting costs no virtual time), 0 with none, kept as the spans come (the
 * ring's oldest may be gone). A rank blocked for good entered its last wait
 * then. */
uint64_t cs_history_vclock(const cs_history *h, int k);

#endif
