/* engine_tcp.h -- the TCP engine: one rank per process, a full mesh of sockets.
 *
 * The worker (launch_proc.c) joins the job and builds the mesh: one connected
 * socket per other rank and one to the controller. The engine then owns them:
 * a progress thread (epoll) reads and writes in the background, delivers
 * arriving messages to the shared matcher, and streams the rank's events to the
 * controller. See docs/wire-protocol.md.
 */
#ifndef CS_ENGINE_TCP_H
#define CS_ENGINE_TCP_H

#include <stdint.h>

#include "engine.h"

typedef struct cs_tcp_mesh {
    int world, rank;
    int *fds;             /* world entries: a connected socket per peer, -1 for self */
    int ctl_fd;           /* the connection to the controller */
    uint64_t max_payload; /* the largest message accepted (the run's memory cap) */
} cs_tcp_mesh;

/* The engine of world w over mesh (taken over: the engine closes the sockets and
 * frees fds). Starts the progress thread. NULL on failure. */
cs_engine *cs_engine_tcp_new(cs_world *w, cs_tcp_mesh *mesh);
/* A bus sink sending every event to the controller. */
cs_sink cs_tcp_event_sink(cs_engine *e);
/* The gate of a gated run (cs_gate_fn, ud = the engine): the controller's
 * front end decides when the rank may go (GATE, then wait for GO or ABORT). */
int cs_tcp_gate(void *ud, cs_rank *r, cs_op op, int line);
/* The rank finished: write out what is queued for the peers, send the last
 * events and BYE, then wait until the controller ends the job (closes or sends
 * ABORT). Returns the reason the controller gave (CS_END_NONE for a clean end). */
int cs_tcp_finish(cs_engine *e);

#endif
