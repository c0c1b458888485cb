/* request.c -- a request's life: made by its rank's operation, referenced by
 * the engine and the matcher while it is in flight, finished (its complete
 * event, its state, its owner woken) by whichever thread ends it, freed by
 * whichever drops the last reference, into its owner's pool of spares. */
#include "world.h"

#include <stdlib.h>
#include <string.h>

/* A request is freed by whichever thread drops the last reference, often not
 * its owner's; malloc then moves memory between threads on every message.
 * Each rank keeps up to SPARE_MAX freed ones instead. */
#define SPARE_MAX 64

static cs_request *request_alloc(cs_rank *r) {
    cs_request *q = r->own_spare;
    if (!q && atomic_load_explicit(&r->spare, memory_order_relaxed))
        q = atomic_exchange_explicit(&r->spare, NULL, memory_order_acquire);
    if (!q) return calloc(1, sizeof *q);
    r->own_spare = q->next;
    atomic_fetch_sub_explicit(&r->nspare, 1, memory_order_relaxed);
    memset(q, 0, sizeof *q);
    return q;
}

static void request_free(cs_request *q) {
    cs_rank *r = q->owner;
    if (!r || atomic_load_explicit(&r->nspare, memory_order_relaxed) >= SPARE_MAX) {
        free(q);
        return;
    }
    atomic_fetch_add_explicit(&r->nspare, 1, memory_order_relaxed);
    cs_request *head = atomic_load_explicit(&r->spare, memory_order_relaxed);
    do q->next = head;
    while (!atomic_compare_exchange_weak_explicit(&r->spare, &head, q, memory_order_release,
                                                  memory_order_relaxed));
}

static void free_list(cs_request *q) {
    while (q) {
        cs_request *next = q->next;
        free(q);
        q = next;
    }
}

void cs_request_free_spares(cs_rank *r) {
    free_list(r->own_spare);
    r->own_spare = NULL;
    free_list(atomic_exchange(&r->spare, NULL));
}

cs_request *cs_request_new(cs_rank *r, cs_op op, cs_tensor *t, int peer, int tag, int line) {
    cs_request *q = request_alloc(r);
    if (!q) return NULL;
    atomic_init(&q->refs, 1);
    atomic_init(&q->state, CS_REQ_PENDING);
    q->op = op;
    q->owner = r;
    q->rank = r->rank;
    q->id = r->next_req++;
    q->peer = peer;
    q->source = CS_NO_RANK;
    q->tag = tag;
    q->buf = cs_tensor_retain(t);
    q->bytes = cs_tensor_nbytes(t);
    q->line = line;
    return q;
}

cs_request *cs_request_retain(cs_request *q) {
    atomic_fetch_add_explicit(&q->refs, 1, memory_order_relaxed);
    return q;
}

void cs_request_release(cs_request *q) {
    if (!q || atomic_fetch_sub_explicit(&q->refs, 1, memory_order_acq_rel) != 1) return;
    cs_tensor_release(q->buf);
    cs_tensor_release(q->stage);
    free(q->errmsg);
    request_free(q);
}

/* seq_cst, as the state's stores: the other half of cs_rank_wake's handshake */
bool cs_request_is_completed(const cs_request *q) {
    return atomic_load_explicit(&q->state, memory_order_seq_cst) != CS_REQ_PENDING;
}

cs_op cs_request_op(const cs_request *q) { return q->op; }
uint64_t cs_request_id(const cs_request *q) { return q->id; }
int cs_request_line(const cs_request *q) { return q->line; }
int cs_request_source(const cs_request *q) { return q->source; }

void cs_request_finish(cs_request *q, cs_err err, const char *msg) {
    cs_rank *owner = q->owner;
    cs_event ev = {.type = CS_EV_COMPLETE, .rank = owner->rank, .req = q->id, .op = q->op,
                   .status = err};
    cs_bus_emit(owner->world->bus, &ev);
    if (err != CS_OK) {
        q->err = err;
        q->errmsg = msg ? strdup(msg) : NULL;
    }
    atomic_store_explicit(&q->state, err == CS_OK ? CS_REQ_DONE : CS_REQ_FAILED,
                          memory_order_seq_cst); /* see cs_rank_wake */
    cs_rank_wake(owner);
    cs_request_release(q); /* the engine's reference */
}

void cs_request_done_event(const cs_request *q, cs_event *ev) {
    *ev = (cs_event){.type = CS_EV_COMPLETE, .rank = q->rank, .req = q->id, .op = q->op,
                     .status = CS_OK};
}

void cs_request_done_publish(cs_request *q) {
    cs_rank *owner = q->owner;
    atomic_store_explicit(&q->state, CS_REQ_DONE, memory_order_seq_cst); /* see cs_rank_wake */
    cs_rank_wake(owner);
    cs_request_release(q); /* the engine's reference */
}
