/* trace.h -- trace files: the event stream as JSON Lines, written and read back.
 *
 * A trace is one JSON object per line, the run header first. The writer is a
 * bus sink that stages each event as it happens; its line is encoded once the
 * bus lock is released and handed to a writer thread, which writes them in
 * batches (within about a millisecond), so ranks never wait on the disk and a
 * killed run leaves whole lines up to the last batch written (trace_writer.c).
 * The reader checks every line against the contract in docs/trace-format.md
 * and never trusts the file: a trace may come from anywhere (a student's
 * upload, a crashed run), and it is fuzzed.
 */
#ifndef CS_TRACE_H
#define CS_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "event_schema.h"
#include "events.h"

#define CS_TRACE_FORMAT "commsim-trace"
#define CS_TRACE_VERSION 1
/* A run with a network model (--net) writes version 2: it adds the wait,
 * clock and vtime event types, which a version 1 reader would refuse one by
 * one; this way it refuses the header, with a message that says why. This
 * reader reads both. */
#define CS_TRACE_VERSION_TIMED 2

/* Limits. The writer never produces a line the reader would refuse: it
 * truncates strings and request lists to these sizes (see docs/trace-format.md). */
#define CS_TRACE_MAX_LINE (1024 * 1024) /* bytes per line, newline excluded */
#define CS_TRACE_MAX_TEXT CS_EV_MAX_TEXT   /* bytes of a text or script string */
#define CS_TRACE_MAX_NAME CS_EV_MAX_NAME   /* bytes of engine, send_mode, coll name */
#define CS_TRACE_MAX_REQS CS_EV_MAX_REQS   /* requests listed by one block event */
#define CS_TRACE_MAX_WORLD CS_EV_MAX_WORLD /* ranks in a run */

/* cs_trace_read's result for a final line that has no newline and does not
 * parse: the writer was killed in the middle of the line. Everything before it
 * was read; the caller decides whether a cut trace is acceptable. */
#define CS_TRACE_CUT 2

/* ---- conversion of one event */

/* Owns what a decoded event points to (text, engine, send_mode, reqs) until the
 * next decode into the same store, or cs_trace_strings_free. Zero-initialised
 * is a valid empty store. */
typedef struct cs_trace_strings {
    json_t *held;       /* the object the event's strings point into */
    uint64_t *reqs;
    size_t reqs_cap;
    int *group;         /* a coll event's group */
    size_t group_cap;
} cs_trace_strings;

void cs_trace_strings_free(cs_trace_strings *store);

/* A new JSON object for ev (reference owned by the caller), or NULL when out of
 * memory or ev->type is not a known type. Strings that are not valid UTF-8 are
 * repaired (U+FFFD), over-long strings and request lists truncated. */
json_t *cs_event_to_json(const cs_event *ev);

/* Decode and range-check obj into ev. world > 0 bounds ranks and peers (a run
 * object bounds them with its own world); world <= 0 skips the upper bounds.
 * Returns 0, or -1 with a reason in err ("missing field \"seq\""). The strings
 * and reqs of ev belong to store. */
int cs_event_from_json(json_t *obj, int world, cs_event *ev, cs_trace_strings *store,
                       char *err, size_t errlen);

/* ---- writing */

typedef struct cs_trace_writer cs_trace_writer;

/* Create (truncate) path. NULL with "PATH: reason" in err on failure. */
cs_trace_writer *cs_trace_open(const char *path, char *err, size_t errlen);
/* Subscribe w to bus: a sink writing every event it is given as one line, in
 * order. Under the bus lock the sink only stages the event; its line is
 * encoded once the lock is released (cs_bus_after), and is in the file once
 * the writer thread's next batch is (cs_trace_flush waits for it). The first
 * event must be the run header; anything before it is dropped and counted as
 * an error. After the first write error (disk full) the writer stops writing,
 * so the file ends at the last complete event plus possibly one cut line, and
 * remembers the error. The sink never fails the run itself: cs_trace_on_fail. */
void cs_trace_subscribe(cs_trace_writer *w, cs_bus *bus);
/* fn(ud, errno) is called once, from the writer's thread, when a write fails
 * (ENOSPC: the disk is full; EFBIG: the file size limit): a run can end then
 * rather than go on writing nothing. A failure before the call is not told:
 * set it first thing. */
void cs_trace_on_fail(cs_trace_writer *w, void (*fn)(void *ud, int code), void *ud);
/* The sink alone, without the hook: the lines wait until the next flush or
 * the close (a caller that emits from one thread). */
cs_sink cs_trace_sink(cs_trace_writer *w);
/* Wait until every line emitted so far is written. 0, or -1 with errno set to
 * the first error's code. */
int cs_trace_flush(cs_trace_writer *w);
/* The first error ("PATH: No space left on device"), or NULL when none. */
const char *cs_trace_error(const cs_trace_writer *w);
/* Close and free w (NULL-safe). 0, or -1 with errno set to the first error's
 * code when any write or the close failed. For the message, ask cs_trace_error
 * before closing (a close that fails on its own leaves only errno). */
int cs_trace_close(cs_trace_writer *w);

/* ---- reading */

typedef struct cs_trace_reader cs_trace_reader;

cs_trace_reader *cs_trace_reader_open(const char *path, char *err, size_t errlen);
/* The next event into ev. Returns 1 (an event: its strings and reqs stay valid
 * until the next read or the close), 0 (clean end of the trace), CS_TRACE_CUT
 * ("FILE:LINE: trace cut off mid-event"), or -1 with "FILE:LINE: reason" in err.
 * After anything but 1 the reader is finished and repeats that result. */
int cs_trace_read(cs_trace_reader *r, cs_event *ev, char *err, size_t errlen);
/* The run header's world, once read (0 before). */
int cs_trace_reader_world(const cs_trace_reader *r);
void cs_trace_reader_close(cs_trace_reader *r); /* NULL-safe */

#endif
