/* timeline.h -- moving through a recorded event array one operation at a
 * time, as the live gates do: a step is a post and what follows it up to the
 * next post. Pure functions of the array, for the replay view. */
#ifndef CS_TIMELINE_H
#define CS_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "events.h"

/* The first position to show: after the run header, if there is one. */
size_t cs_timeline_start(const cs_event *ev, size_t n);
/* The position one step after pos (n at the end). */
size_t cs_timeline_next(const cs_event *ev, size_t n, size_t pos);
/* The position one step before pos (the start at the beginning). */
size_t cs_timeline_prev(const cs_event *ev, size_t n, size_t pos);
/* Operations (posts) among the first pos events. */
uint64_t cs_timeline_ops(const cs_event *ev, size_t pos);

#endif
