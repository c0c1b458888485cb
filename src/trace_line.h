/* trace_line.h -- the trace writer's fast encoder of one line (trace_line.c),
 * which appends to the writer's growing buffer (bytebuf.h).
 *
 * cs_trace_line appends exactly the bytes the general path (cs_event_to_json,
 * dumped compact at the time's shortest precision, and a newline) gives, for
 * the events it knows how to: every type but the run header and compute
 * events, whose times sit on the bus's microsecond grid and whose strings are
 * well-formed UTF-8 within their limits. Anything else is left to trace.c.
 */
#ifndef CS_TRACE_LINE_H
#define CS_TRACE_LINE_H

#include <stdbool.h>
#include <stddef.h>

#include "bytebuf.h"
#include "events.h"

/* Append ev's line (newline included) to b: 1; 0 when ev needs the general
 * path (b unchanged); -1 when out of memory (b unchanged). */
int cs_trace_line(const cs_event *ev, cs_bytebuf *b);

#endif
