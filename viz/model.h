/* model.h -- what the visualizer draws, derived from the monitor's world model,
 * the history and the gates: one line per rank, the wait-for cycle of a
 * deadlock, the messages in flight. Pure functions of their inputs. */
#ifndef CS_VIZ_MODEL_H
#define CS_VIZ_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include "events.h"
#include "history.h"
#include "monitor.h"

/* A rank stopped at its gate: the operation it will start next. */
typedef struct cs_viz_gate {
    bool parked;
    cs_op op;
    int peer, tag, line;
} cs_viz_gate;

typedef struct cs_viz_rank {
    cs_rank_state state;
    bool parked;      /* waiting at its gate for a step */
    char op[48];      /* "send -> 1 tag 0 (16 B)", what it waits on or did last */
    int line;
    double since;     /* when it entered its state */
} cs_viz_rank;

/* Describe rank k. gate may be NULL (no gates: replay, headless). */
void cs_viz_describe(const cs_monitor *m, const cs_history *h, const cs_viz_gate *gate, int k,
                     bool ascii, cs_viz_rank *out);

/* "send -> 1 tag 0 (16 B)" */
void cs_viz_op_text(cs_op op, int peer, int tag, size_t bytes, bool ascii, char *buf, size_t len);
/* "16 B", "4 KiB", "2.5 MiB" */
void cs_viz_bytes(size_t bytes, char *buf, size_t len);

/* The ranks a blocked rank waits on (concrete peers of its unfinished waits). */
int cs_viz_waits_on(const cs_monitor *m, int k, int *peers, int max);
/* A cycle in the wait-for graph among blocked ranks: cycle[0] -> cycle[1] ->
 * ... -> cycle[n-1] -> cycle[0]. Returns n, its true length (0 if there is
 * none), and fills at most max entries: a longer cycle is cut, not closed
 * early, so the caller must not draw an edge back from cycle[max-1]. */
int cs_viz_cycle(const cs_monitor *m, int *cycle, int max);

typedef struct cs_viz_msg {
    int from, to;     /* to: -1 for a receive from any source */
    int tag, line;
    size_t bytes;
    const char *state; /* "posted", "matched", "buffered", "recv posted" */
} cs_viz_msg;

/* Messages in flight: user sends not yet received and receives not yet
 * matched, ordered by rank and request. Returns how many there are in all;
 * fills at most max. */
size_t cs_viz_inflight(const cs_monitor *m, cs_viz_msg *out, size_t max);

#endif
