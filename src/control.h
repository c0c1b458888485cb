/* control.h -- the gates of DESIGN.md section 1 for an interactive run: pause,
 * step (every runnable rank, or one), run at a chosen speed.
 *
 * Install with cs_world_set_gate(w, cs_control_gate, ctl). A rank stopped at
 * its gate is "parked" and the front end can see what it is about to do (and
 * read that operation's tensor: the rank cannot touch it while parked). Every
 * gate returns CS_EABORT promptly once the world is aborted.
 */
#ifndef CS_CONTROL_H
#define CS_CONTROL_H

#include <stdbool.h>
#include <stdint.h>

#include "api.h"

typedef struct cs_control cs_control;

/* paused: start stopped (--step). speed: operations per second over all
 * ranks, 0 = as fast as they go. */
cs_control *cs_control_new(cs_world *w, bool paused, double speed);
void cs_control_free(cs_control *c);
int cs_control_gate(void *ud, cs_rank *r, cs_op op, int line);

void cs_control_set_paused(cs_control *c, bool paused);
bool cs_control_paused(cs_control *c);
void cs_control_set_speed(cs_control *c, double ops_per_s);
double cs_control_speed(cs_control *c);
/* Let rank k pass one more gate while paused. */
void cs_control_step(cs_control *c, int k);
/* Forget the steps granted to rank k that it has not used: it blocked in a
 * wait before reaching a gate, and a step must not carry past the block. */
void cs_control_drop_steps(cs_control *c, int k);
/* Operations that have passed their gates. */
uint64_t cs_control_steps(cs_control *c);

typedef struct cs_control_park {
    bool parked;
    cs_op op;
    int peer, tag, line;
} cs_control_park;

/* What rank k waits at its gate to do (parked false if it is not at its gate). */
cs_control_park cs_control_parked(cs_control *c, int k);
/* The values of the tensor rank k's parked operation will send or receive
 * into, as torch prints them (malloc'ed), or NULL when k is not parked. */
char *cs_control_tensor_text(cs_control *c, int k);
/* Wake every gate (after an abort, so they notice at once). */
void cs_control_wake(cs_control *c);

#endif
