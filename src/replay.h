/* replay.h -- a recorded trace loaded as an array of events and folded through
 * the same monitor as a live run: the same world model, the same verdict.
 * Going back in time is folding again from the start. */
#ifndef CS_REPLAY_H
#define CS_REPLAY_H

#include <stdbool.h>
#include <stddef.h>

#include "events.h"
#include "monitor.h"

typedef struct cs_replay {
    cs_event *ev;      /* events in file order; strings owned by the replay */
    size_t n;
    int world;
    char *script;      /* from the run header */
    const char *source; /* the script's text from the run header, or NULL (in ev[0]) */
    bool cut;          /* the file ended mid-event (a crash): replayed up to there */
    void *priv;        /* owned storage */
} cs_replay;

/* Load a whole trace. -1 with "FILE:LINE: reason" in err for a malformed one;
 * a cut-off last line is not an error: cut is set, and err says where. */
int cs_replay_load(cs_replay *r, const char *path, char *err, size_t errlen);
/* The same for a trace to be shown (replay, export): one cut inside its run
 * header has nothing to show, and is an error too. */
int cs_replay_open(cs_replay *r, const char *path, char *err, size_t errlen);
void cs_replay_free(cs_replay *r);

/* Time the recorded program again under the network model net (--net
 * syntax; NULL: the one it was recorded with): the recorded vtime events
 * are replaced by the timekeeper's (vclock.h), each after the event that
 * let it be computed, and the header names the model. 0; -1 with the
 * reason in err (a trace recorded without a model has not all its waits). */
int cs_replay_retime(cs_replay *r, const char *net, char *err, size_t errlen);

/* The timekeeper that times the replay (vclock.h): under net (--net syntax),
 * else the model the trace was recorded with. 0 with *out NULL when there is
 * none; -1 with the reason in err (a model named for a trace recorded
 * without one, a bad model, out of memory). */
struct cs_vclock;
int cs_replay_timekeeper(const cs_replay *r, const char *net, struct cs_vclock **out, char *err,
                         size_t errlen);

/* Where a replay opens (`commsim replay --end`, `--at`). */
typedef struct cs_replay_at {
    long event;     /* 0: the start; -1: the end; N > 0: after event N, counted from 1 */
    int rank, line; /* line > 0: after rank's first event at that line of the script */
} cs_replay_at;

/* "--at" spellings: "N" (an event, as the visualizer's header counts them)
 * or "RANK:LINE" (what `commsim grade` names: unlike an event's number, it
 * is the same in every run of a program). False for anything else. */
bool cs_replay_at_parse(const char *s, cs_replay_at *at);
/* How many events to fold to stand where at says; *found is false when no
 * event is there (rank never reached the line): then all of them. */
size_t cs_replay_at_events(const cs_replay *r, const cs_replay_at *at, bool *found);

/* Initialise m and fold events [0, upto) into it (upto > n means all). */
int cs_replay_fold(const cs_replay *r, size_t upto, cs_monitor *m);
/* The same, and hand each event to the sinks too (the report: the ranks'
 * output, warnings and errors as the live run printed them). */
int cs_replay_feed(const cs_replay *r, size_t upto, cs_monitor *m, const cs_sink *sinks,
                   int nsinks);

/* The exit status that the events [0, upto) of r, folded into m, imply: the
 * one replay gives, and the verdict an export of them draws. The monitor's
 * status; else 1 when ranks had not finished, with why saying so ("the trace
 * ends before the run did: 2 ranks had not finished"; why is "" otherwise);
 * and 1 for a cut trace whatever its events say (the loader's message says
 * where it was cut). */
int cs_replay_status(const cs_replay *r, size_t upto, const cs_monitor *m, char *why,
                     size_t whylen);

#endif
