/* engine.h -- the engine interface: transport only.
 *
 * An engine moves bytes between ranks and reports completion. Everything above
 * it -- requests, matching, send modes, error checks, events -- is shared code
 * (api.c, match.c), so every engine behaves the same and shares the tests. Like
 * an event loop's backends, an engine is a table of function pointers.
 */
#ifndef CS_ENGINE_H
#define CS_ENGINE_H

#include "match.h"

typedef struct cs_engine_ops {
    const char *name;
    /* Carry send request sq (its ref is the engine's) to its destination's
     * matcher. For an eager send, buffer the payload first: the caller completes
     * sq as soon as this returns. */
    int (*send)(cs_engine *e, cs_request *sq, bool eager);
    /* The destination's matcher paired msg with posted receive rq (its lock is
     * held): move the payload into rq->buf and complete rq -- and the sender's
     * request of a rendezvous send -- now or when the bytes have arrived. Takes
     * ownership of msg. */
    void (*transfer)(cs_engine *e, cs_msg *msg, cs_request *rq);
    /* The matched pair disagreed: fail the sender's side of msg (if it waits). */
    void (*reject)(cs_engine *e, cs_msg *msg, const char *why);
    void (*destroy)(cs_engine *e);
    /* Optional. Rank r waits for its requests and would sleep: block until
     * something may have happened (a message arrived, a request completed, the
     * run was aborted, or r's futex word no longer equals seen), then return;
     * the caller checks again. An engine whose bytes arrive on sockets makes
     * the waiting thread read them itself, saving a thread hand-off per
     * message. NULL: sleep on the rank's futex word. */
    void (*idle)(cs_engine *e, cs_rank *r, uint32_t seen);
} cs_engine_ops;

struct cs_engine {
    const cs_engine_ops *ops;
    cs_world *world;
};

cs_engine *cs_engine_thread_new(cs_world *w);

#endif
