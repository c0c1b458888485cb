/* vclock.h -- modelled time: a virtual clock per rank under an alpha-beta
 * network model (netmodel.h), computed from the event stream.
 *
 * The timekeeper is a sink of the run's events, like the monitor, and lives
 * where the monitor does (the launcher's process; on the tcp engine, the
 * controller). From each rank's posts, waits, computes and clock readings,
 * in that rank's order, and from the matches, it runs a discrete-event
 * simulation of the program in virtual time: transmissions are placed on
 * their links in the order (ready time, sender rank, request id), and one is
 * placed only once no transmission that could precede it can still appear
 * (a conservative simulation: see docs/time-model.md). Virtual times are
 * then a function of each rank's operations and the pairing of its messages,
 * never of the real order in which events arrived, so every engine and a
 * replay of the trace give the same ones.
 *
 * A rank reads its clock (dist.time()) by emitting a clock event; the
 * timekeeper answers through answer() as soon as the rank's earlier
 * operations are timed. It annotates the stream with vtime events through
 * emit(). Not thread-safe: the bus lock serialises every call.
 */
#ifndef CS_VCLOCK_H
#define CS_VCLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "events.h"
#include "netmodel.h"

typedef struct cs_vclock cs_vclock;

/* Per rank, once it has exited: its clock and how its time was spent. */
typedef struct cs_vclock_rank {
    bool exited;
    uint64_t end_ns;      /* its clock when it finished */
    uint64_t compute_ns;  /* dist.compute and modelled arithmetic */
    uint64_t comm_ns;     /* in a wait while one of its waited messages was on the wire */
    uint64_t wait_ns;     /* in a wait with none of them on the wire: waiting for a peer */
} cs_vclock_rank;

typedef void (*cs_vclock_answer_fn)(void *ud, int rank, uint64_t ns);
typedef void (*cs_vclock_emit_fn)(void *ud, cs_event *ev);

/* NULL when out of memory. */
cs_vclock *cs_vclock_new(const cs_netmodel *net, int world);
void cs_vclock_free(cs_vclock *v);
void cs_vclock_set_answer(cs_vclock *v, cs_vclock_answer_fn fn, void *ud);
void cs_vclock_set_emit(cs_vclock *v, cs_vclock_emit_fn fn, void *ud);
/* Fold one event. vtime events are ignored (a replay recomputes them). */
void cs_vclock_feed(cs_vclock *v, const cs_event *ev);
cs_sink cs_vclock_sink(cs_vclock *v);
const cs_netmodel *cs_vclock_model(const cs_vclock *v);

/* Every rank exited and every clock is known (the run ended normally, and
 * no clock passed the largest virtual time). */
bool cs_vclock_complete(const cs_vclock *v);
/* The latest end of a rank: the run's makespan in virtual time. */
uint64_t cs_vclock_makespan(const cs_vclock *v);
const cs_vclock_rank *cs_vclock_rank_info(const cs_vclock *v, int rank);
/* Out of memory at some point: the times are incomplete (said in the report). */
bool cs_vclock_failed(const cs_vclock *v);
/* A rank's clock passed INT64_MAX ns (some 292 years) and stopped there: the
 * times are not known (said in the report). */
bool cs_vclock_overflowed(const cs_vclock *v);

#endif
