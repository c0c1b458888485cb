/* engine_tcp.h -- the TCP engine: one rank per process, a full mesh of sockets.
 *
 * The rank process (rank_process.c) joins the job over its link to the
 * controller (rank_link.h) and builds the mesh: one connected socket per other
 * rank. The engine then owns the mesh: a progress thread (epoll) reads and
 * writes in the background and delivers arriving messages to the shared
 * matcher; the same loop drives the rank's link. See docs/wire-protocol.md.
 */
#ifndef CS_ENGINE_TCP_H
#define CS_ENGINE_TCP_H

#include <stdint.h>

#include "engine.h"
#include "rank_link.h"

/* What the engine runs on in a rank process (cs_world_config.engine_arg),
 * built by tcp_rank_setup (engine_tcp_mesh.c). */
typedef struct cs_tcp_mesh {
    int world, rank;
    int *fds;             /* world entries: a connected socket per peer, -1 for self */
    cs_rank_link *link;   /* the link to the controller: driven by the progress
                           * thread, still the rank process's to free */
    uint64_t max_payload; /* the largest message accepted (the run's memory cap) */
} cs_tcp_mesh;

#endif
