/* match.h -- requests, messages and MPI matching, shared by every engine.
 *
 * Each receiving rank has a matcher: its posted receives and the messages that
 * arrived before a receive wanted them ("unexpected"), both in order. A receive
 * takes the earliest message from its source (or any source) with its tag and
 * context; a message takes the earliest posted receive that fits. Because an
 * engine delivers the messages of one sender in the order they were sent,
 * messages between one pair with one tag never overtake (MPI's rule).
 *
 * The matcher also checks that the two sides agree (size and dtype), emits the
 * match event, and then asks the engine to move the bytes.
 */
#ifndef CS_MATCH_H
#define CS_MATCH_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "api.h"

enum { CS_REQ_PENDING = 0, CS_REQ_DONE = 1, CS_REQ_FAILED = 2 };

struct cs_request {
    _Atomic int refs;
    _Atomic int state;    /* CS_REQ_*; written last, after the complete event */
    cs_op op;
    cs_rank *owner;
    int rank;             /* the owner's rank */
    uint64_t id;          /* per owner, from 1 */
    int peer;             /* destination of a send; requested source of a receive */
    int source;           /* a matched receive: the actual sender */
    int tag, ctx;
    /* A collective's internal message: the digest of the call (collectives.c),
     * so a message of one call never pairs with a receive of a different one
     * and the monitor's collective mismatch is the only ending; 0 otherwise. */
    uint16_t coll_sig;
    cs_tensor *buf;       /* retained until the request is freed */
    /* A device buf on an engine that moves host memory: its host copy, which
     * the engine reads or writes instead (stage.h); NULL otherwise. */
    cs_tensor *stage;
    bool staged_back;     /* a staged receive's bytes went to the device */
    size_t bytes;
    int line;
    bool eager;
    /* One half of a collective's exchange step (coll_algos.c): the rank sends
     * to and receives from one peer, posting the receive first, and so does
     * the peer (the tcp engine drops the ACK of a SYNC: engine_tcp_conn.c). */
    bool exchange;
    /* An eager send the matcher could not buffer within its sender's memory
     * cap (set on the sender's own thread, inside the engine's send). */
    bool unbuffered;
    int fl_slot;          /* its index in the owner's pitfall registry + 1; 0: not there */
    cs_err err;           /* when failed */
    char *errmsg;
    struct cs_request *next; /* the matcher's posted queue */
};

/* A message as the receiving side sees it before it is matched. */
typedef struct cs_msg {
    int src, tag, ctx;
    uint16_t coll_sig;    /* the sending request's */
    size_t bytes;
    cs_dtype dtype;
    int ndim;
    int64_t shape[CS_MAX_DIMS];
    int line;             /* the send's script line */
    uint64_t sreq_id;     /* the send's request id */
    void *data;           /* an eager message's buffered copy (owned), or NULL */
    cs_budget *charged;   /* the budget data is charged to (its sender's), or NULL */
    cs_request *sreq;     /* thread engine, rendezvous: the sender's request (ref held) */
    void *engine_data;    /* anything else an engine needs to pull the bytes */
    struct cs_msg *next;
} cs_msg;

typedef struct cs_matcher {
    pthread_mutex_t lock;
    int rank;
    cs_request *posted, *posted_tail;
    cs_msg *unexpected, *unexpected_tail;
} cs_matcher;

void cs_matcher_init(cs_matcher *m, int rank);
void cs_matcher_destroy(cs_matcher *m); /* frees unexpected messages left over */

/* ---- pure queue operations; the caller holds m->lock */
bool cs_match_fits(const cs_msg *msg, const cs_request *rq);
cs_msg *cs_match_take_unexpected(cs_matcher *m, const cs_request *rq);
cs_request *cs_match_take_posted(cs_matcher *m, const cs_msg *msg);
void cs_match_push_posted(cs_matcher *m, cs_request *rq);
void cs_match_push_unexpected(cs_matcher *m, cs_msg *msg);

/* Fill msg's envelope from a send request (not data, not sreq). */
void cs_msg_envelope(cs_msg *msg, const cs_request *sq);
void cs_msg_free(cs_msg *msg);
/* Move the bytes of a message that has them at hand -- its buffered copy, or
 * the tensor of a sending request in this process -- into rq; complete rq and
 * that sending request; free msg. The thread engine's transfer. */
void cs_msg_transfer_local(cs_msg *msg, cs_request *rq);

/* Do the matched send and receive agree? If not, write the error naming both
 * ranks, both lines and both shapes into err and return false. */
bool cs_match_check(const cs_msg *msg, const cs_request *rq, const char *script,
                    char *err, size_t errlen);

/* ---- the protocol, with locking and events */

/* A message arrived at its destination's matcher. Takes ownership of msg. An
 * eager send that finds no receive is copied aside, the copy charged to its
 * sender's memory cap until a receive takes it; when the cap refuses, the
 * message waits uncopied, as a rendezvous one, and sreq->unbuffered is set. */
void cs_match_deliver(cs_world *w, cs_matcher *m, cs_msg *msg);
/* The same for a send of this process (the thread engine), with the engine's
 * ref on sq: a posted receive that fits gets the bytes at once (as
 * cs_msg_transfer_local, or both fail on a mismatch) and no message is
 * allocated; one is only for a send that must wait. CS_ENOMEM when that
 * allocation fails (nothing changed then). */
int cs_match_send_local(cs_world *w, cs_matcher *m, cs_request *sq);
/* A message whose bytes are still to come (tcp, read off the socket): when a
 * posted receive fits it and agrees on size and dtype, take it from the queue,
 * announce the match and return it (with the matcher's ref), so the bytes go
 * straight into it and the caller finishes it once they are in; else NULL,
 * and the message is delivered as usual once read. */
cs_request *cs_match_claim(cs_world *w, cs_matcher *m, const cs_msg *msg);
/* The owner posts a receive (the request already carries a ref for the matcher). */
void cs_match_post_recv(cs_world *w, cs_matcher *m, cs_request *rq);

#endif
