/* engine_thread.c -- every rank a thread of this process.
 *
 * Moving bytes is a memcpy: a send goes straight to the destination's matcher,
 * and once paired the payload is copied once, from the sender's tensor (or the
 * eager copy) into the receiver's. Both sides complete at that moment. A send
 * that finds its receive posted allocates nothing (cs_match_send_local).
 */
#include "world.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int thread_send(cs_engine *e, cs_request *sq, bool eager) {
    (void)eager; /* the matcher buffers eager sends that find no receive */
    cs_world *w = e->world;
    if (cs_match_send_local(w, &w->matchers[sq->peer], sq) != CS_OK) {
        snprintf(sq->owner->errmsg, sizeof sq->owner->errmsg, "out of memory sending a message");
        return CS_ENOMEM;
    }
    return CS_OK;
}

static void thread_transfer(cs_engine *e, cs_msg *msg, cs_request *rq) {
    (void)e;
    cs_msg_transfer_local(msg, rq);
}

static void thread_reject(cs_engine *e, cs_msg *msg, const char *why) {
    (void)e;
    if (msg->sreq) {
        cs_request *sq = msg->sreq;
        msg->sreq = NULL;
        cs_request_finish(sq, CS_EMISMATCH, why);
    }
    cs_msg_free(msg);
}

static void thread_destroy(cs_engine *e) { free(e); }

static const cs_engine_ops thread_ops = {
    .send = thread_send,
    .transfer = thread_transfer,
    .reject = thread_reject,
    .destroy = thread_destroy,
};

static cs_engine *thread_new(cs_world *w, void *arg) {
    (void)arg;
    cs_engine *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    e->ops = &thread_ops;
    e->world = w;
    /* Every post, match and complete comes from a rank's own thread, which
     * later blocks, exits or emits another event: they may wait in the bus's
     * ring, dispatched by ranks that spin anyway (events.h). Not with more
     * ranks than cores: nobody spins then, the ring is only more work (a
     * 64-rank ring on 2 cores: a fifth more time). Not under a network
     * model: the timekeeper answers clock reads from what it has been told. */
    if (!w->cfg.net.on && !w->oversubscribed && cs_bus_defer(w->bus) < 0) {
        free(e);
        return NULL;
    }
    return e;
}

const cs_engine_kind cs_engine_thread = {
    .name = "thread",
    .summary = "every rank a thread of this process; a message is one copy",
    .caps = CS_ENGINE_TAGS | CS_ENGINE_ANY_SOURCE,
    .create = thread_new,
    .threads_per_rank = 1,
    .wait_yields = 32,
};
