/* trace_line.h -- the trace writer's fast encoder of one line (trace_line.c),
 * and the growing buffer that it and the writer append to.
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

#include "events.h"

/* A growing byte buffer; zero-initialised is empty. */
typedef struct cs_trace_buf {
    char *data;
    size_t len, cap;
} cs_trace_buf;

/* Room for n more bytes past b->len (b->cap doubles, from 4 KiB); false
 * when out of memory, b unchanged. Inline: the encoder asks on every line. */
bool cs_trace_buf_grow(cs_trace_buf *b, size_t n);
static inline bool cs_trace_buf_room(cs_trace_buf *b, size_t n) {
    return b->len + n <= b->cap || cs_trace_buf_grow(b, n);
}
/* Append n bytes; false when out of memory, b unchanged. */
bool cs_trace_buf_append(cs_trace_buf *b, const void *p, size_t n);
void cs_trace_buf_free(cs_trace_buf *b);

/* Append ev's line (newline included) to b: 1; 0 when ev needs the general
 * path (b unchanged); -1 when out of memory (b unchanged). */
int cs_trace_line(const cs_event *ev, cs_trace_buf *b);

#endif
