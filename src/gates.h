/* gates.h -- the gates of DESIGN.md section 1 for an interactive run: pause,
 * step (every runnable rank, or one), run at a chosen speed.
 *
 * Install with cs_world_set_gate(w, cs_gates_pass, ctl). A rank stopped at
 * its gate is "parked" and the front end can see what it is about to do (and
 * read that operation's tensor: the rank cannot touch it while parked). Every
 * gate returns CS_EABORT promptly once the world is aborted.
 */
#ifndef CS_GATES_H
#define CS_GATES_H

#include <stdbool.h>
#include <stdint.h>

#include "api.h"

typedef struct cs_gates cs_gates;

/* paused: start stopped (--step). speed: operations per second over all
 * ranks, 0 = as fast as they go. */
cs_gates *cs_gates_new(cs_world *w, bool paused, double speed);
void cs_gates_free(cs_gates *c);
int cs_gates_pass(void *ud, cs_rank *r, cs_op op, int line);

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

#endif
