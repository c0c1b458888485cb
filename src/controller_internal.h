/* controller_internal.h -- the controller's private layout, shared by
 * controller.c (joining, launching, events, deaths, the end of the run) and
 * controller_ui.c (a front end driving the run: its job, the gates' GO). */
#ifndef CS_CONTROLLER_INTERNAL_H
#define CS_CONTROLLER_INTERNAL_H

#include <stdatomic.h>
#include <sys/types.h>

#include "engine.h"
#include "heartbeat.h"
#include "launch.h"
#include "wire.h"

/* Shared by this module's files only: hidden from the library's users, as
 * Lua's LUAI_FUNC hides its internals. */
#ifndef CS_INTERNAL
#define CS_INTERNAL __attribute__((visibility("hidden")))
#endif

#define MAX_PENDING 64        /* connections waiting to prove the token */
#define FLUSH_SECONDS 0.3     /* the survivors' events after a death */
#define GRACE_SECONDS 2.0     /* ranks unwinding after an abort */
#define JOIN_SECONDS 60.0     /* ranks launched here joining */

typedef enum { RK_NONE = 0, RK_JOINED, RK_BYE, RK_GONE } rank_state;

typedef struct held { /* an event waiting for the post it refers to */
    struct held *next;
    cs_event ev; /* a copy: deep (owned) when the decoded one points into scratch */
    bool owned;  /* ev's strings and arrays are ours (cs_event_copy) */
    uint64_t reqs[4]; /* else ev.reqs points here: a block on a few requests */
} held;

typedef struct prank {
    rank_state state;
    int fd;
    pid_t pid;            /* launched here, or 0 */
    int pidfd;            /* -1 when not launched here or reaped */
    int wstatus;
    bool reaped;
    uint32_t ip;
    uint16_t port;
    cs_rx rx;
    bool flushed;
    held *hh, *ht;
    uint64_t posted_max;  /* the highest request id whose post was delivered */
    uint64_t *rdv;        /* its rendezvous sends delivered and not yet matched, */
    size_t nrdv, rdv_cap; /* ascending: a completion of one waits for its match; */
    size_t rdv_head, rdv_live; /* rdv[rdv_head, nrdv) holds them, rdv_live not
                                * yet matched (controller_order.c: RDV_MATCHED) */
    uint64_t gate_seq;    /* the GATE it waits at for GO, or 0 */
    cs_heartbeat hb;      /* its liveness (heartbeat.h) */
    bool alive;           /* it said ALIVE once: judged from then on */
    double unheard;       /* the longest this process said nothing to it, once that
                           * reached its limit (we were stopped: it gave us up), or 0 */
} prank;

typedef struct pconn { /* a connection that has not proven the token yet */
    struct pconn *next;
    int fd;
    char addr[64];
    cs_rx rx;
    uint32_t id;          /* its epoll tag */
    int rank;             /* set by a valid HELLO */
    cs_hello hello;
} pconn;

typedef struct rank_ud { /* decoding one rank's frames: whose, and room for an event */
    struct controller *k;
    int i;
    cs_wire_scratch s;
} rank_ud;

typedef struct controller {
    const cs_run_opts *o;
    const cs_engine_kind *kind; /* the engine the rank processes run */
    cs_control c;
    FILE *err;
    int world;
    cs_send_mode mode;
    cs_netmodel net;      /* --net: told to the ranks in WELCOME */
    char token[CS_WIRE_TOKEN + 1];
    int lfd, epfd, sigfd;
    uint32_t ip;          /* where the ranks started here dial */
    uint32_t told_ip;     /* where the join line sends the others: --master's address */
    uint16_t port;
    /* A stranger is logged only at an address the user gave or was told
     * (--master, rank 0 by hand): at a port picked here and told to no one
     * it is another run's stale connection (the kernel reuses ports), and a
     * run's output must not depend on other runs. */
    bool log_strangers;
    prank *r;
    pconn *pending;
    int joined, nheld;
    held *spare;          /* released held events, for the next ones */
    int nspare;
    uint32_t next_pending;
    _Atomic bool welcomed; /* every rank joined and runs its script (a front end reads it) */
    _Atomic int status;   /* the first reason the run ended, or 0 (a front end reads it) */
    bool deadlock;        /* the monitor found one (set from its callback) */
    bool mon_error;       /* the monitor found an error (a collective mismatch) */
    _Atomic bool trace_failed; /* the trace passed the file size limit (the writer's thread sets it) */
    int dead;             /* the rank whose death is being reported, or -1 */
    char cause[96];
    const char *fate;     /* what became of it: "died", "stopped responding" */
    double hb_limit;      /* COMMSIM_HEARTBEAT: a rank's silence before it is given up; 0: never */
    double hb_next;       /* when the heartbeat next wants the loop, or 0 */
    char end_text[256];   /* why the run ended, for ranks still joining, or "" */
    double flush_until, grace_until, deadline, join_until;
    pid_t pgid;
    char exe[4096];
    rank_ud *scratch;
    /* a front end (controller_ui.c) */
    cs_gates *gates;      /* every rank asks them before each operation, or NULL */
    double gate_retry_at; /* when paced gates want asking again, or 0 */
    int nparked;          /* ranks waiting for GO */
    int wakefd;           /* eventfd: the front end wants the loop's attention */
    _Atomic int ui_abort; /* a reason the front end ended the run for, or 0 */
    _Atomic bool done;    /* every rank has ended and the processes are reaped */
    int outfd, outw;      /* a pipe for the ranks' stdout and stderr, kept from the
                           * screen (read end, write end), or -1 */
    FILE *real_err;       /* err while the screen is the front end's, or NULL */
    char *captured;       /* what err and the ranks wrote meanwhile (open_memstream) */
    size_t ncaptured;
    char notice[256];     /* for the user before the run starts (the job token), or "" */
} controller;

/* epoll tags: the pointer says what became ready */
enum { TAG_LISTEN = 1, TAG_SIGNAL, TAG_RANK, TAG_PIDFD, TAG_PENDING, TAG_WAKE, TAG_OUTPUT };
#define TAG(kind, i) ((uint64_t)(kind) << 32 | (uint32_t)(i))

CS_INTERNAL void controller_watch(controller *k, int fd, uint64_t tag);
/* End the run for why (the first reason wins the status); every rank unwinds. */
CS_INTERNAL void controller_abort(controller *k, int why);
/* --timeout expired: ranks deadlocked among themselves make it a deadlock. */
CS_INTERNAL void controller_timeout(controller *k);
/* Start the ranks of this machine: every rank, or only o->rank when the others join. */
CS_INTERNAL void controller_spawn_all(controller *k, const cs_run_opts *o);
/* The epoll loop until every rank has said BYE or is gone, then the processes' end. */
CS_INTERNAL void controller_run(controller *k);
/* A frame handler's payload callback for frames that carry none. */
CS_INTERNAL int controller_no_payload(void *ud, char *err, size_t errlen);

/* ---- controller_join.c */

/* A connection at the listening socket: a stranger until its HELLO. */
CS_INTERNAL void controller_accept(controller *k);
/* Stranger id's socket is readable: its HELLO admits it as a rank, or it is refused. */
CS_INTERNAL void controller_pending_readable(controller *k, uint32_t id);
/* Too many strangers waiting: the oldest go first. */
CS_INTERNAL void controller_expire_pending(controller *k);
/* The run ended before WELCOME: close every rank's connection, kill what was spawned. */
CS_INTERNAL void controller_abort_joining(controller *k);
/* The controller's end: strangers still waiting are closed. */
CS_INTERNAL void controller_free_pending(controller *k);

/* ---- controller_order.c */

/* Hand ev (from rank ev->rank) to the bus, or hold it back until the post it
 * refers to has been delivered. */
CS_INTERNAL void controller_forward(controller *k, const cs_event *ev);
/* Deliver every event still held, posted or not (a rank died; the end). */
CS_INTERNAL void controller_release_held(controller *k);
/* Free the held events and the spare nodes. */
CS_INTERNAL void controller_order_free(controller *k);

/* ---- controller_ui.c */

/* Run with o->ui as the front end: it attaches (and may install gates) before
 * the ranks start; the controller's loop runs in a thread of its own while
 * the front end has the main thread. */
CS_INTERNAL void controller_run_ui(controller *k, const cs_run_opts *o, const cs_script *s);
/* A GATE frame from rank i. 0, or -1 with err (a protocol violation). */
CS_INTERNAL int controller_gate_frame(controller *k, int i, cs_cur *meta, char *err, size_t errlen);
/* Send GO to every parked rank the gates let go; note when to ask again. */
CS_INTERNAL void controller_relay_gates(controller *k);
/* Rank i no longer waits at a gate (it died, or the run ended). */
CS_INTERNAL void controller_gate_leave(controller *k, int i);
/* The wake-up eventfd fired: a front end's request or a gate change. */
CS_INTERNAL void controller_woken(controller *k);
/* The ranks wrote to their stdout or stderr while the screen is the front end's. */
CS_INTERNAL void controller_output(controller *k);

#endif
