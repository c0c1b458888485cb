/* trace_scan.h -- the trace reader's fast path: a line as the writer writes
 * it, decoded straight into an event without building a JSON tree.
 *
 * It accepts only what the full decoder (jansson, then cs_event_from_json)
 * accepts, and decodes it to the same event; anything it is not sure of (an
 * escape in a string, a byte outside ASCII, a nested value, a number it would
 * have to round, a field missing or out of range, a duplicate key) it
 * declines, and the reader decodes the line the full way, which accepts it or
 * refuses it with its FILE:LINE message. Errors therefore have one source.
 */
#ifndef CS_TRACE_SCAN_H
#define CS_TRACE_SCAN_H

#include <stddef.h>

#include "trace.h"

/* Decode line[0..len) (no newline) into ev, as cs_event_from_json would with
 * this world (> 0 bounds ranks; <= 0 skips the bounds). 1: decoded, and the
 * event's strings point into line, which the scan has cut in place (it must
 * live as long as the event); its reqs and group belong to store. 0:
 * declined, line untouched. */
int cs_trace_scan(char *line, size_t len, int world, cs_event *ev, cs_trace_strings *store);

#endif
