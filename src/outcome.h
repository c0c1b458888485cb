/* outcome.h -- the structured outcome of a run: what ended it, which ranks
 * and operations were involved, why, how to fix it, the pitfalls found, the
 * counts and how each rank ended, and the ranks' printed output.
 *
 * One outcome, many readers: the plain report prints it as text, --report
 * json serialises it (docs/report-format.md is the contract), the visualizer
 * shows its verdict, and a replay of the trace builds the same one as the
 * live run did. The kind and the pitfall kind names are part of that contract:
 * add names, never rename one.
 */
#ifndef CS_OUTCOME_H
#define CS_OUTCOME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "events.h"

#define CS_OUTCOME_VERSION 1

/* What ended the run. Each deadlock class has its own kind, named for the
 * explanation the report gives. */
typedef enum {
    CS_OUT_OK = 0,
    CS_OUT_DEADLOCK_SENDS,       /* every blocked rank sends; rendezvous sends wait */
    CS_OUT_DEADLOCK_EAGER_LIMIT, /* the same, with eager:N and a message above N */
    CS_OUT_DEADLOCK_RECVS,       /* every blocked rank receives */
    CS_OUT_DEADLOCK_CYCLE,       /* sends and receives waiting on each other in a cycle */
    CS_OUT_DEADLOCK_TAG,         /* a send and a receive that differ only in their tag */
    CS_OUT_DEADLOCK_SELF,        /* a blocking send or receive to the rank itself */
    CS_OUT_DEADLOCK_FINISHED,    /* a wait on a rank that has finished (mismatched send/recv) */
    CS_OUT_DEADLOCK_FAILED,      /* a wait on a rank that has failed */
    CS_OUT_DEADLOCK_ANY_SOURCE,  /* a receive from any rank, every other rank finished */
    CS_OUT_DEADLOCK_COLLECTIVE,  /* a collective some members never call */
    CS_OUT_DEADLOCK_BUFFERED,    /* --strict: ok only because eager sends were buffered */
    CS_OUT_COLL_MISMATCH,        /* members' n-th collective calls differ */
    CS_OUT_GROUP_MISMATCH,       /* ranks mean different groups by one context */
    CS_OUT_SIZE_MISMATCH,        /* a receive into a tensor of another size or dtype */
    CS_OUT_SCRIPT_ERROR,         /* a rank raised an error */
    CS_OUT_STRICT,               /* --strict: pitfalls turned into an error */
    CS_OUT_TIMEOUT,              /* --timeout expired */
    CS_OUT_BUDGET,               /* a rank exceeded its instruction or memory budget */
    CS_OUT_RANK_DIED,            /* a rank process died */
    CS_OUT_INTERRUPTED,          /* SIGINT, SIGTERM or the user quit */
    CS_OUT_INCOMPLETE,           /* replay: the trace ends before the run did */
    CS_OUT_NKINDS
} cs_outcome_kind;

const char *cs_outcome_kind_name(cs_outcome_kind k);
bool cs_outcome_kind_parse(const char *s, cs_outcome_kind *out);
static inline bool cs_outcome_kind_is_deadlock(cs_outcome_kind k) {
    return k >= CS_OUT_DEADLOCK_SENDS && k <= CS_OUT_DEADLOCK_BUFFERED;
}

/* An operation of a rank that the verdict involves: a blocked send or
 * receive, or a collective call. */
typedef struct cs_outcome_op {
    int rank;
    char op[32];          /* "send", "recv", "isend", "irecv", or a collective's name */
    int peer;             /* destination, source, a collective's root; CS_ANY_SOURCE; CS_NO_RANK */
    int tag;              /* -1 for a collective */
    size_t bytes;         /* a collective: 0 */
    size_t count;         /* a collective: the elements the members agree on */
    char reduce_op[12];   /* a collective that reduces: "sum", ...; else "" */
    cs_dtype dtype;
    int ndim;             /* -1: no shape known (collectives) */
    int64_t shape[CS_MAX_DIMS];
    int line;             /* where it was posted or called */
    int wait_line;        /* where the rank waits for it (a non-blocking op), or 0 */
    bool missing;         /* a collective: the rank did not call it (line: where it is) */
} cs_outcome_op;

/* A pitfall kind: which misuse. */
typedef enum {
    CS_PIT_WRITE_SENDING = 0, /* writes a buffer an isend still sends */
    CS_PIT_WRITE_RECEIVING,   /* writes a buffer an irecv still receives into */
    CS_PIT_READ_RECEIVING,    /* reads a buffer an irecv still receives into */
    CS_PIT_NEVER_WAITED,      /* a request never waited on */
    CS_PIT_SELF_SEND,         /* a blocking send to the rank itself */
    CS_PIT_SELF_RECV,         /* a blocking receive from the rank itself */
    CS_PIT_UNRECEIVED,        /* messages sent and never received */
    CS_PIT_BUFFERING,         /* works only because sends were buffered (the recheck) */
    CS_PIT_RACE,              /* a receive from any source that two sends could match */
    CS_PIT_COLL_NEVER_WAITED, /* an async collective's work handle never waited on */
    CS_PIT_COLL_WRITE,        /* writes a tensor of an async collective before its wait */
    CS_PIT_COLL_READ,         /* reads an output of an async collective before its wait */
    CS_PIT_OTHER,             /* a text of no known kind (a newer trace) */
    CS_PIT_NKINDS
} cs_pitfall_kind;

const char *cs_pitfall_kind_name(cs_pitfall_kind k);

/* A pitfall, once per kind and sites. site is where the rank misused the
 * buffer (or posted the request, or sent); other is the second site (the
 * isend or irecv whose buffer it was), 0 when the kind has none. peer and tag
 * are the other rank and tag the text names, else CS_NO_RANK and -1. */
typedef struct cs_pitfall {
    cs_pitfall_kind kind;
    int rank;             /* the rank that reported it first */
    int line, other_line;
    int peer, tag;
    char *text;           /* as the report prints it */
} cs_pitfall;

/* Recognise a warn event's pitfall: the event carries the text and the
 * rank's line; the kind and the other site are read from the text, whose
 * wording the pitfall checks fix. p->text borrows text: copy it to keep it. */
void cs_pitfall_of(cs_pitfall *p, int rank, int line, const char *text, const char *kind);
/* Same kind, same sites, same peer and tag: one pitfall. */
bool cs_pitfall_same(const cs_pitfall *a, const cs_pitfall *b);

/* The verdict the monitor reached: a deadlock or a collective mismatch. The
 * text is the report's block for it (header, one line per rank, why, fix),
 * composed from the parts. */
typedef struct cs_verdict {
    cs_outcome_kind kind; /* CS_OUT_OK: none */
    char *text;
    char *headline;       /* its first line */
    char *why, *note, *fix; /* note may be NULL */
    cs_outcome_op *ops;
    int nops;
} cs_verdict;

void cs_verdict_free(cs_verdict *v);

/* A line a rank printed. */
typedef struct cs_outcome_line {
    int rank;
    char *text;
} cs_outcome_line;

/* The ranks' printed output, collected from print events (one entry per line). */
typedef struct cs_output {
    cs_outcome_line *v;
    size_t n, cap;
} cs_output;

cs_sink cs_output_sink(cs_output *out);
void cs_output_free(cs_output *out);

/* How one rank ended. */
typedef struct cs_outcome_rank {
    int state;            /* a cs_rank_state (monitor.h) */
    bool deadlocked;      /* one of the ranks of the deadlock */
    int status;
    int line;             /* its latest operation's line (0: none) */
    char *error;          /* its error text, or NULL */
    int error_line;       /* the line its error names, or 0 */
    char *waiters;        /* who waited on it when it failed (report lines), or NULL */
    char *stop;           /* aborted: where the run's end found it, in words
                           * (cs_monitor_stop_text), or NULL when not known */
    int stop_line;        /* and the line, or 0 */
    bool stop_waiting;    /* stopped inside an operation or a wait, not running */
} cs_outcome_rank;

/* Modelled time (--net, docs/time-model.md): how long the run took in
 * virtual time, and how each rank spent it. */
typedef struct cs_outcome_time_rank {
    uint64_t end_ns;      /* its clock when it finished */
    uint64_t compute_ns;  /* dist.compute and modelled arithmetic */
    uint64_t comm_ns;     /* waiting while a message it waited for was on the wire */
    uint64_t wait_ns;     /* waiting with none of them on the wire: for a peer */
} cs_outcome_time_rank;

typedef struct cs_outcome_time {
    char *net;            /* the model as --net spells it; NULL: no model (real time) */
    bool complete;        /* every rank finished normally: the times below hold */
    bool overflow;        /* not complete because a clock passed the largest time */
    uint64_t makespan_ns; /* the latest end of a rank */
    cs_outcome_time_rank *ranks; /* world entries when complete */
} cs_outcome_time;

typedef struct cs_outcome {
    int version;
    int status;           /* the exit status */
    cs_outcome_kind kind;
    const char *word;     /* the report's verdict word: "ok", "deadlock", ... */
    char *script, *engine, *send_mode;
    int world;
    cs_verdict verdict;   /* a copy of the monitor's (kind OK: none) */
    char *recheck;        /* the rendezvous recheck's summary line, or NULL */
    cs_verdict recheck_verdict; /* its deadlock (kind OK: none) */
    char *run_error;      /* why the run itself ended (timeout, interrupt, --strict), or NULL */
    char *explanation, *fix; /* the verdict's, else the run's or the failed rank's error */
    cs_outcome_rank *ranks; /* world entries */
    cs_pitfall *pitfalls;
    int npitfalls;
    uint64_t messages, bytes, collectives, unreceived;
    const cs_output *output; /* borrowed; NULL: not collected */
    cs_outcome_time time; /* with a network model on */
} cs_outcome;

typedef struct cs_monitor cs_monitor;

/* Build the outcome of a run that ends with status from the monitor's final
 * model (and the output collected, or NULL). Ends the process when out of memory. */
void cs_outcome_build(cs_outcome *o, const cs_monitor *m, int status, const cs_output *output);
void cs_outcome_free(cs_outcome *o);
/* Add the modelled times the timekeeper computed (vclock.h). */
struct cs_vclock;
void cs_outcome_time_from(cs_outcome *o, const struct cs_vclock *v);

/* The report's word for a status: "ok", "error", "deadlock", ... */
const char *cs_outcome_word(int status);

/* One JSON document (docs/report-format.md), newline-terminated, malloc'd. */
char *cs_outcome_json(const cs_outcome *o);
/* Its "time" object alone, for t on world ranks (commsim grade's JSON
 * gives each variant's); a new reference (jansson's json_t). */
struct json_t;
struct json_t *cs_outcome_time_json(const cs_outcome_time *t, int world);

#endif
