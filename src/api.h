/* api.h -- the rank-side API: worlds, ranks, requests (work handles), point to
 * point, waits, compute, printing. Every call emits its events and passes the
 * rank's gate first. The Lua binding (script_dist.c) is a thin layer over this.
 *
 * Errors: calls return CS_OK or a negative cs_err; the message is in
 * cs_rank_errmsg(). CS_EABORT means the run is being torn down (deadlock,
 * another rank's error, timeout, quit): unwind without reporting anything.
 */
#ifndef CS_API_H
#define CS_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "events.h"
#include "netmodel.h"
#include "tensor.h"

typedef struct cs_world cs_world;
typedef struct cs_rank cs_rank;
typedef struct cs_request cs_request;
typedef struct cs_engine cs_engine;

typedef enum {
    CS_OK = 0,
    CS_EARG = -1,      /* bad argument: peer out of range, non-contiguous tensor, ... */
    CS_EMISMATCH = -2, /* the matched send and receive disagree on size or dtype */
    CS_EABORT = -3,    /* the run is ending: unwind */
    CS_ENOMEM = -4,
    CS_ETRANSPORT = -5, /* the engine failed (a peer process died, a socket broke) */
    CS_EPITFALL = -6   /* --strict: a pitfall (see pitfall.h) is an error */
} cs_err;

/* Why a run ended early. The first reason given wins. Values are exit statuses. */
typedef enum {
    CS_END_NONE = 0,
    CS_END_ERROR = 2,    /* a script raised an error */
    CS_END_DEADLOCK = 3,
    CS_END_TIMEOUT = 4,  /* --timeout, or a rank's instruction or memory budget */
    CS_END_DIED = 5,     /* a rank process died */
    CS_END_QUIT = 130    /* the user quit (q, Ctrl-C) */
} cs_end_reason;

#define CS_COLL_MAX_FAMILIES 16

/* ---- send modes: rendezvous (eager_limit 0), eager (SIZE_MAX), eager:N */
typedef struct cs_send_mode {
    size_t eager_limit; /* a send of at most this many bytes completes once buffered */
    bool rendezvous_only;
} cs_send_mode;

bool cs_send_mode_parse(const char *s, cs_send_mode *out);
/* "rendezvous", "eager" or "eager:N" */
const char *cs_send_mode_format(const cs_send_mode *m, char *buf, size_t len);
bool cs_send_mode_is_eager(const cs_send_mode *m, size_t bytes);

/* ---- a world: the ranks of one run that live in this process */
typedef struct cs_world_config {
    int world;              /* number of ranks */
    cs_send_mode mode;
    size_t mem_limit;       /* per rank, bytes; 0 = unlimited */
    uint64_t seed;          /* randn streams derive from it and the rank */
    const char *engine;     /* a name in the engine table (engine.h); NULL: the default */
    const char *script;     /* the script's name, for messages */
    bool strict;            /* pitfalls fail the rank instead of warning */
    void *engine_arg;       /* a rank process: what it built for its engine (tcp: a cs_tcp_mesh) */
    /* the collective algorithm per family (collectives.h: cs_coll_family ->
     * cs_coll_algo); 0 = the family's default */
    unsigned char coll_algo[CS_COLL_MAX_FAMILIES];
    /* --net: with a model on, waits and clock reads are announced to the
     * timekeeper (vclock.h), dist.compute does not sleep, and dist.time()
     * returns the rank's virtual clock */
    cs_netmodel net;
} cs_world_config;

/* A world over the thread engine: every rank lives in this process. Events go to
 * bus, which must outlive the world. NULL on failure with a message in err. */
cs_world *cs_world_new(const cs_world_config *cfg, cs_bus *bus, char *err, size_t errlen);
void cs_world_free(cs_world *w);
int cs_world_size(const cs_world *w);
cs_rank *cs_world_rank(cs_world *w, int rank);
const cs_world_config *cs_world_config_of(const cs_world *w);

/* End the run: wake every gate and every wait; they return CS_EABORT. Thread-safe,
 * callable from a bus sink. Returns true for the call whose reason won. */
bool cs_world_abort(cs_world *w, cs_end_reason why);
/* Why a job ended (a cs_end_reason, as the controller's ABORT carries it), in
 * words: "the ranks deadlocked". */
const char *cs_end_words(int why);
cs_end_reason cs_world_end_reason(const cs_world *w);
bool cs_world_aborted(const cs_world *w);

/* Wait until every rank has exited (returns 0), or, when stop_on_abort, the run
 * is aborted (1), or the absolute time deadline (cs_now() seconds) passes (-1). */
int cs_world_wait(cs_world *w, double deadline, bool stop_on_abort);

/* The gate: before every communication operation a rank passes it. NULL (the
 * default) is an open gate. The visualizer installs one that waits for steps;
 * it must return promptly once the world is aborted. */
typedef int (*cs_gate_fn)(void *ud, cs_rank *r, cs_op op, int line);
void cs_world_set_gate(cs_world *w, cs_gate_fn fn, void *ud);
/* Inside a gate call, on the rank's own thread: the peer, tag and tensor of the
 * point-to-point operation about to start. false for other operations. */
bool cs_rank_gate_op(const cs_rank *r, int *peer, int *tag, cs_tensor **t);

/* ---- a rank's context (used by its own thread only, unless stated) */
int cs_rank_id(const cs_rank *r);
int cs_rank_world_size(const cs_rank *r);
cs_world *cs_rank_world(cs_rank *r);
cs_budget *cs_rank_budget(cs_rank *r);
uint64_t *cs_rank_rng(cs_rank *r);
const char *cs_rank_errmsg(const cs_rank *r);

/* ---- requests (work handles). Reference counted: the engine holds one while the
 * operation is in flight, so releasing an unfinished request is safe. */
cs_request *cs_request_retain(cs_request *q);
void cs_request_release(cs_request *q);
bool cs_request_is_completed(const cs_request *q);   /* done or failed; thread-safe */
cs_op cs_request_op(const cs_request *q);
uint64_t cs_request_id(const cs_request *q);
int cs_request_line(const cs_request *q);
int cs_request_source(const cs_request *q); /* a completed receive: who sent it */

/* ---- point to point. tag >= 0. src may be CS_ANY_SOURCE. line: the script line
 * of the call, carried into events and error messages (0 if unknown). */
int cs_send(cs_rank *r, cs_tensor *t, int dst, int tag, int line);
int cs_recv(cs_rank *r, cs_tensor *t, int src, int tag, int line, int *from);
int cs_isend(cs_rank *r, cs_tensor *t, int dst, int tag, int line, cs_request **out);
int cs_irecv(cs_rank *r, cs_tensor *t, int src, int tag, int line, cs_request **out);
int cs_wait(cs_rank *r, cs_request *q, int line);
/* torch's is_completed() for the owner: a request seen completed counts as
 * waited on (its buffer is the script's again). */
bool cs_test(cs_rank *r, cs_request *q);
int cs_wait_all(cs_rank *r, cs_request **qs, int n, int line);
/* The same in communication context ctx (> 0): collectives' internal traffic,
 * which user receives (context 0) never match. See collectives.h. */
int cs_isend_ctx(cs_rank *r, cs_tensor *t, int dst, int tag, int ctx, int line, cs_request **out);
int cs_irecv_ctx(cs_rank *r, cs_tensor *t, int src, int tag, int ctx, int line, cs_request **out);

/* ---- the rest of a script's life */
/* Busy for ms (real time; with a model, virtual time only); CS_EABORT if the run ends. */
int cs_compute(cs_rank *r, double ms, int line);
/* Seconds since the run started; with a model, the rank's virtual clock,
 * once the timekeeper has timed everything before (a negative value: the
 * run ended first). */
double cs_time(cs_rank *r, int line);
/* With a model that sets flops=: n more floating-point operations of tensor
 * arithmetic, charged to the clock before the rank's next operation. */
void cs_rank_flops(cs_rank *r, uint64_t n);
/* The timekeeper's answer to rank's clock read (any thread): ns. */
void cs_world_clock_answer(cs_world *w, int rank, uint64_t ns);
/* The rank printed text (len bytes; a NUL in it is written "\0"). */
void cs_print(cs_rank *r, const char *text, size_t len, int line);
/* A malloc'd copy of s (len bytes) with each NUL written as the two
 * characters "\0"; NULL: no memory. */
char *cs_text_nul_escape(const char *s, size_t len);
void cs_warn(cs_rank *r, const char *pitfall, const char *text, int line);
/* The rank failed: emits an error event with msg ("file:line: message") and ends
 * the run with why (CS_END_ERROR or CS_END_TIMEOUT for budgets). */
void cs_rank_fail(cs_rank *r, cs_end_reason why, const char *msg);
/* The same, with the script line it failed on (0: not known), for the
 * visualizer's row and source marks. */
void cs_rank_fail_at(cs_rank *r, cs_end_reason why, int line, const char *msg);
/* The rank's script returned (status 0) or unwound after an abort. */
void cs_rank_exit(cs_rank *r, int status);
/* The same, with the script line an abort stopped it at (0: not known). */
void cs_rank_exit_at(cs_rank *r, int status, int line);

#endif
