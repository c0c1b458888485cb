/* timeline.c -- step boundaries in an event array: the positions just
 * before each post. */
#include "timeline.h"

size_t cs_timeline_start(const cs_event *ev, size_t n) {
    return n && ev[0].type == CS_EV_RUN ? 1 : 0;
}

size_t cs_timeline_next(const cs_event *ev, size_t n, size_t pos) {
    size_t i = pos;
    if (i < n && ev[i].type == CS_EV_POST) i++; /* the post itself */
    while (i < n && ev[i].type != CS_EV_POST) i++; /* and what follows, to the next */
    return i;
}

size_t cs_timeline_prev(const cs_event *ev, size_t n, size_t pos) {
    size_t start = cs_timeline_start(ev, n);
    if (pos > n) pos = n;
    size_t i = pos;
    while (i > start && ev[i - 1].type != CS_EV_POST) i--;
    /* i - 1 is the post that began the step ending at pos */
    if (i > start) i--;
    return i > start ? i : start;
}

uint64_t cs_timeline_ops(const cs_event *ev, size_t pos) {
    uint64_t n = 0;
    for (size_t i = 0; i < pos; i++) n += ev[i].type == CS_EV_POST;
    return n;
}
