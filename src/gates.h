/* gates.h -- the gates of an interactive run: before every communication
 * operation a rank passes its gate, which a front end uses to pause, step
 * (every runnable rank, or one) or run at a chosen speed; headless runs
 * have none, and an abort opens them all.
 *
 * Ranks of this process (the thread engine) pass them in their own thread:
 * install with cs_world_set_gate(w, cs_gates_pass, gates). Ranks of other
 * processes (the tcp engine) pass them by message: the controller reports a
 * rank's arrival (cs_gates_arrive) and asks whether it may go
 * (cs_gates_try_pass) whenever something changed, and sends it GO.
 *
 * A rank stopped at its gate is "parked" and the front end can see what it is
 * about to do and the tensor it will send or receive into (that rank cannot
 * touch the tensor while parked).
 */
#ifndef CS_GATES_H
#define CS_GATES_H

#include <stdbool.h>
#include <stdint.h>

#include "api.h"

typedef struct cs_gates cs_gates;

/* paused: start stopped (--step). speed: operations per second over all
 * ranks, 0 = as fast as they go. */
cs_gates *cs_gates_new(int nranks, bool paused, double speed);
void cs_gates_free(cs_gates *c);
/* The gate of a rank of this process (a cs_gate_fn): returns CS_EABORT
 * promptly once its world is aborted. */
int cs_gates_pass(void *ud, cs_rank *r, cs_op op, int line);
/* Called (under the gates' lock: keep it short, e.g. write an eventfd) when a
 * parked remote rank may be able to go: a step, a resume, a new speed. */
void cs_gates_on_change(cs_gates *c, void (*fn)(void *ud), void *ud);

void cs_gates_set_paused(cs_gates *c, bool paused);
bool cs_gates_paused(cs_gates *c);
void cs_gates_set_speed(cs_gates *c, double ops_per_s);
double cs_gates_speed(cs_gates *c);
/* Let rank k pass one more gate while paused. */
void cs_gates_step(cs_gates *c, int k);
/* Forget the steps granted to rank k that it has not used: it blocked in a
 * wait before reaching a gate, and a step must not carry past the block. */
void cs_gates_drop_steps(cs_gates *c, int k);
/* Operations that have passed their gates. */
uint64_t cs_gates_steps(cs_gates *c);

typedef struct cs_gates_park {
    bool parked;
    cs_op op;
    int peer, tag, line;
} cs_gates_park;

/* What rank k waits at its gate to do (parked false if it is not at its gate). */
cs_gates_park cs_gates_parked(cs_gates *c, int k);
/* The values of the tensor rank k's parked operation will send or receive
 * into, as torch prints them (malloc'ed), or NULL when k is not parked. */
char *cs_gates_tensor_text(cs_gates *c, int k);
/* Wake every gate (after an abort, so they notice at once). */
void cs_gates_wake(cs_gates *c);

/* ---- ranks of other processes */

/* Rank k arrived at its gate to do what p says; tensor_text (malloc'ed or
 * NULL) is its tensor as printed, taken over. */
void cs_gates_arrive(cs_gates *c, int k, cs_gates_park p, char *tensor_text);
/* May parked rank k go now? true: it has passed (counted, no longer parked).
 * false: ask again on a change, or after *retry seconds when paced. */
bool cs_gates_try_pass(cs_gates *c, int k, double *retry);
/* Rank k is gone or the run is over: it is no longer parked. */
void cs_gates_leave(cs_gates *c, int k);

#endif
