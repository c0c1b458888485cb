/* rank_link.h -- a rank process's link to the controller.
 *
 * Every engine whose ranks are processes has one: the rank joins the job over
 * it (HELLO with the job token, WELCOME with the run's settings and clock),
 * streams its events up (coalesced, in binary), asks at its gates (GATE, with
 * its tensor as printed, then waits for GO), and obeys ABORT and FLUSH; at
 * the end it says BYE and waits until the controller ends the job. If the
 * controller vanishes, the rank unwinds and the process leaves.
 *
 * The link knows nothing of how payload moves between ranks. An engine
 * drives its socket: from its own poll loop (cs_rank_link_watch, then
 * readable/writable/tick from that loop, as the tcp engine does), or the
 * link runs on a thread of its own (cs_rank_link_start, which the rank
 * process calls when the engine's constructor took no socket).
 * See docs/wire-protocol.md for the frames.
 */
#ifndef CS_RANK_LINK_H
#define CS_RANK_LINK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "api.h"
#include "events.h"

typedef struct cs_rank_link cs_rank_link;
typedef struct cs_welcome cs_welcome; /* wire.h */

/* A link over fd, a connection to the controller (taken over: the link
 * closes it). token: the job's, CS_WIRE_TOKEN hex digits. Join errors go to
 * err. NULL when out of memory (fd is closed then). */
cs_rank_link *cs_rank_link_new(int fd, int rank, int world, const char *token, FILE *err);
void cs_rank_link_free(cs_rank_link *l);

/* A TCP connection to ip:port (network order) with Nagle off, retried while
 * nobody listens there yet, until deadline (cs_now() seconds): the controller,
 * or a peer of the tcp mesh. -1 with errno. */
int cs_rank_link_dial(uint32_t ip, uint16_t port, double deadline);

/* The same, with pause(ud) between two tries instead of a 0.1 s sleep: it
 * waits as it likes and returns true to give up (-1, errno the last try's). */
int cs_rank_link_dial_until(uint32_t ip, uint16_t port, double deadline, bool (*pause)(void *),
                            void *ud);

/* ---- joining (before any engine drives the link) */

/* HELLO with the address this rank listens on for its peers (0, 0 for none),
 * then wait for the WELCOME (or a REFUSE). 0, or -1 after printing why. The
 * caller frees wel->ip and wel->port. */
int cs_rank_link_join(cs_rank_link *l, uint32_t ip, uint16_t port, cs_welcome *wel);
/* The heartbeat's limit for this rank (seconds of silence from the controller
 * after which the rank leaves; 0: never): COMMSIM_HEARTBEAT, checked by the
 * caller. Before the join. */
void cs_rank_link_set_heartbeat(cs_rank_link *l, double limit);

/* ---- between the join and an engine driving the link (the tcp mesh's set-up) */

/* Take what the controller sent (ALIVE, FLUSH; an ABORT ends the set-up),
 * say ALIVE when due and judge the controller's silence. Call when the link's
 * fd is readable and at least every cs_rank_link_interval() seconds.
 * 0, or -1 with why the job is over for this rank in err. */
int cs_rank_link_setup_poll(cs_rank_link *l, char *err, size_t errlen);
/* The controller ended the job (an ABORT came): whatever this rank failed
 * at since is a consequence, which the controller's report already explains. */
bool cs_rank_link_ended(cs_rank_link *l);
double cs_rank_link_interval(cs_rank_link *l);

/* The controller's run clock as this process's bus origin (cs_bus.t0):
 * exact on the same kernel, else estimated from the WELCOME's age. */
double cs_rank_link_clock(const cs_welcome *wel);

/* ---- the run */

/* A bus sink sending every event to the controller. */
cs_sink cs_rank_link_sink(cs_rank_link *l);
/* The gate of a gated run (cs_gate_fn, ud = the link): the controller's front
 * end decides when the rank may go. */
int cs_rank_link_gate(void *ud, cs_rank *r, cs_op op, int line);
/* The rank finished (its engine has drained): send the last events and BYE,
 * then wait until the controller ends the job. Returns the reason it gave
 * (CS_END_NONE for a clean end, CS_END_DIED when it vanished). */
int cs_rank_link_finish(cs_rank_link *l);

/* ---- driving the socket from an engine's poll loop */

/* From now on the link serves world w (ABORT aborts it), and its socket is
 * in epfd with data.ptr = tag (EPOLLIN; EPOLLOUT while output waits). */
int cs_rank_link_watch(cs_rank_link *l, cs_world *w, int epfd, void *tag);
/* Called on an ABORT before the world is aborted: the engine reads what its
 * peers already sent. A peer that fails tells us why (a REJECT) before it
 * tells the controller, so what caused the ABORT is in our sockets by now,
 * and the rank ends with that reason instead of "aborted", on every run. */
void cs_rank_link_on_abort(cs_rank_link *l, void (*drain)(void *ud), void *ud);
/* epoll said readable: handle what arrived. 0, or -1 once the controller is
 * gone (the world is aborted then, unless the rank had said BYE). */
int cs_rank_link_readable(cs_rank_link *l);
/* epoll said writable: write what waits. */
void cs_rank_link_writable(cs_rank_link *l);
/* Send the events gathered so far when they are due (every few ms, or a
 * batch's worth). Call at least every CS_RANK_LINK_TICK_MS. */
void cs_rank_link_tick(cs_rank_link *l, double now);
#define CS_RANK_LINK_TICK_MS 2
/* Seconds from now until cs_rank_link_tick has something to do (events to
 * send, an ALIVE to say, the controller's silence to judge); at most 1. A
 * waiting rank sleeps that long instead of ticking idly every few ms. */
double cs_rank_link_due(cs_rank_link *l, double now);
/* The controller vanished a while ago and the rank is still here (stuck in C
 * code): leave the process. Call from a thread that is not the rank's. */
void cs_rank_link_watchdog(cs_rank_link *l);

/* ---- or on a thread of the link's own */

/* Whether something drives the link's socket yet (an engine's loop, or the
 * link's own thread). */
bool cs_rank_link_driven(cs_rank_link *l);

/* The controller connection's socket: a set-up step that waits on others
 * polls it too, since a frame (ABORT) or its close means the job is over. */
int cs_rank_link_fd(const cs_rank_link *l);

/* Serve world w from a thread of the link's own. 0, or -1. */
int cs_rank_link_start(cs_rank_link *l, cs_world *w);
/* Stop that thread (before the world goes). */
void cs_rank_link_stop(cs_rank_link *l);

#endif
