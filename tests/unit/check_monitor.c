/* check_monitor.c -- the world model and the progress verdict, on hand-written
 * event sequences: what is a deadlock, and what only looks like one. */
#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "monitor.h"
#include "monitor_internal.h"
#include "report.h"
#include "run_suite.h"

static cs_monitor mon;

static void start(int world, const char *mode) {
    ck_assert_int_eq(cs_monitor_init(&mon, world), 0);
    cs_event run = {.type = CS_EV_RUN, .rank = -1, .world = world, .engine = "thread",
                    .send_mode = mode, .text = "t.lua"};
    ck_assert_int_eq(cs_monitor_fold(&mon, &run), 0);
}

static void post(int rank, uint64_t req, cs_op op, int peer, size_t bytes, int line, bool eager) {
    cs_event ev = {.type = CS_EV_POST, .rank = rank, .req = req, .op = op, .peer = peer,
                   .bytes = bytes, .dtype = CS_FLOAT32, .ndim = 1, .shape = {(int64_t)bytes / 4},
                   .line = line, .eager = eager};
    ck_assert_int_eq(cs_monitor_fold(&mon, &ev), 0);
}

static void match(int rrank, uint64_t rreq, int srank, uint64_t sreq, size_t bytes) {
    cs_event ev = {.type = CS_EV_MATCH, .rank = rrank, .req = rreq, .peer = srank,
                   .peer_req = sreq, .bytes = bytes};
    cs_monitor_fold(&mon, &ev);
}

static void complete(int rank, uint64_t req) {
    cs_event ev = {.type = CS_EV_COMPLETE, .rank = rank, .req = req};
    cs_monitor_fold(&mon, &ev);
}

static void block(int rank, int line, int n, const uint64_t *reqs) {
    cs_event ev = {.type = CS_EV_BLOCK, .rank = rank, .line = line, .nreqs = n, .reqs = reqs};
    cs_monitor_fold(&mon, &ev);
}

static void unblock(int rank) {
    cs_event ev = {.type = CS_EV_UNBLOCK, .rank = rank};
    cs_monitor_fold(&mon, &ev);
}

static void quit(int rank) {
    cs_event ev = {.type = CS_EV_EXIT, .rank = rank, .status = 0};
    cs_monitor_fold(&mon, &ev);
}

static const uint64_t R1[] = {1}, R2[] = {2}, R12[] = {1, 2};

START_TEST(test_both_send_first) {
    start(2, "rendezvous");
    post(0, 1, CS_OP_SEND, 1, 40, 5, false);
    post(1, 1, CS_OP_SEND, 0, 40, 5, false);
    block(0, 5, 1, R1);
    ck_assert(!mon.deadlocked); /* rank 1 still runs */
    block(1, 5, 1, R1);
    ck_assert(mon.deadlocked);
    ck_assert_ptr_nonnull(strstr(mon.verdict, "rank 0 is blocked in send to rank 1 (tag 0, float32 [10], 40 bytes) at t.lua:5"));
    ck_assert_ptr_nonnull(strstr(mon.verdict, "rank 1 is blocked in send to rank 0"));
    ck_assert_ptr_nonnull(strstr(mon.verdict, "every blocked rank is sending"));
    ck_assert_ptr_nonnull(strstr(mon.verdict, "fix: reorder"));
    cs_monitor_destroy(&mon);
}
END_TEST

START_TEST(test_completed_before_block_is_no_deadlock) {
    start(2, "rendezvous");
    post(0, 1, CS_OP_SEND, 1, 4, 1, false);
    post(1, 1, CS_OP_RECV, 0, 4, 2, false);
    match(1, 1, 0, 1, 4);
    complete(1, 1);
    complete(0, 1);
    post(1, 2, CS_OP_RECV, 0, 4, 3, false);
    block(1, 3, 1, R2);
    block(0, 1, 1, R1); /* late block on a request already complete: about to wake */
    ck_assert(!mon.deadlocked);
    unblock(0);
    quit(0);
    ck_assert(mon.deadlocked); /* now rank 1 waits on a finished rank */
    ck_assert_ptr_nonnull(strstr(mon.verdict, "rank 1 waits to receive from rank 0, but rank 0 has already finished"));
    ck_assert_ptr_nonnull(strstr(mon.verdict, "mismatched send/recv"));
    cs_monitor_destroy(&mon);
}
END_TEST

/* An isend waited on before the peer posts its irecv: the peer is running. */
START_TEST(test_pending_isend_then_irecv) {
    start(2, "rendezvous");
    post(0, 1, CS_OP_ISEND, 1, 8, 1, false);
    block(0, 2, 1, R1);
    ck_assert(!mon.deadlocked);
    post(1, 1, CS_OP_IRECV, 0, 8, 4, false);
    match(1, 1, 0, 1, 8);
    complete(1, 1);
    complete(0, 1);
    unblock(0);
    ck_assert(!mon.deadlocked);
    ck_assert_ptr_null(cs_monitor_find(&mon, 0, 1)); /* settled and forgotten */
    ck_assert_int_eq(mon.messages, 1);
    ck_assert_int_eq(mon.bytes, 8);
    cs_monitor_destroy(&mon);
}
END_TEST

/* A send in flight (posted, not yet matched: a TCP frame on its way) can still
 * satisfy a blocked receive, even if every rank sleeps. */
START_TEST(test_partner_in_flight) {
    start(2, "rendezvous");
    post(1, 1, CS_OP_RECV, 0, 4, 2, false);
    block(1, 2, 1, R1);
    post(0, 1, CS_OP_SEND, 1, 4, 1, false);
    block(0, 1, 1, R1);
    ck_assert(!mon.deadlocked);
    cs_monitor_destroy(&mon);
}
END_TEST

/* An eager send completes before anyone receives it; its message still counts. */
START_TEST(test_buffered_eager_message) {
    start(2, "eager");
    post(0, 1, CS_OP_SEND, 1, 4, 1, true);
    complete(0, 1);
    post(0, 2, CS_OP_RECV, 1, 4, 2, false);
    block(0, 2, 1, R2);
    post(1, 1, CS_OP_RECV, 0, 4, 3, false);
    ck_assert(!mon.deadlocked);
    cs_monitor_destroy(&mon);
}
END_TEST

START_TEST(test_any_source_with_live_sender) {
    start(3, "rendezvous");
    post(0, 1, CS_OP_RECV, CS_ANY_SOURCE, 4, 1, false);
    block(0, 1, 1, R1);
    quit(1);
    ck_assert(!mon.deadlocked); /* rank 2 may still send */
    quit(2);
    ck_assert(mon.deadlocked);
    ck_assert_ptr_nonnull(strstr(mon.verdict, "from any rank"));
    cs_monitor_destroy(&mon);
}
END_TEST

START_TEST(test_wait_all_partially_done) {
    start(2, "rendezvous");
    post(0, 1, CS_OP_ISEND, 1, 4, 1, false);
    post(0, 2, CS_OP_IRECV, 1, 4, 2, false);
    post(1, 1, CS_OP_IRECV, 0, 4, 5, false);
    match(1, 1, 0, 1, 4);
    complete(1, 1);
    complete(0, 1);
    block(0, 3, 2, R12); /* one of two done; rank 1 runs */
    ck_assert(!mon.deadlocked);
    quit(1);
    ck_assert(mon.deadlocked);
    ck_assert_ptr_nonnull(strstr(mon.verdict, "waiting (t.lua:3) for the irecv posted at line 2 from rank 1"));
    cs_monitor_destroy(&mon);
}
END_TEST

START_TEST(test_eager_limit_explained) {
    start(2, "eager:1024");
    post(0, 1, CS_OP_SEND, 1, 4096, 1, false);
    post(1, 1, CS_OP_SEND, 0, 4096, 1, false);
    block(0, 1, 1, R1);
    block(1, 1, 1, R1);
    ck_assert(mon.deadlocked);
    ck_assert_ptr_nonnull(strstr(mon.verdict, "sends of up to 1024 bytes are buffered"));
    ck_assert_ptr_nonnull(strstr(mon.verdict, "4096 bytes is larger"));
    cs_monitor_destroy(&mon);
}
END_TEST

START_TEST(test_receive_cycle) {
    start(3, "rendezvous");
    for (int k = 0; k < 3; k++) post(k, 1, CS_OP_RECV, (k + 2) % 3, 4, 7, false);
    for (int k = 0; k < 3; k++) block(k, 7, 1, R1);
    ck_assert(mon.deadlocked);
    ck_assert_ptr_nonnull(strstr(mon.verdict, "waiting to receive and none is sending"));
    cs_monitor_destroy(&mon);
}
END_TEST

START_TEST(test_tag_mismatch_explained) {
    start(2, "rendezvous");
    cs_event s = {.type = CS_EV_POST, .rank = 0, .req = 1, .op = CS_OP_SEND, .peer = 1, .tag = 1,
                  .bytes = 8, .ndim = 1, .shape = {2}, .line = 3};
    cs_monitor_fold(&mon, &s);
    post(1, 1, CS_OP_RECV, 0, 8, 4, false);
    block(0, 3, 1, R1);
    block(1, 4, 1, R1);
    ck_assert(mon.deadlocked);
    ck_assert_ptr_nonnull(strstr(mon.verdict, "tag mismatch: rank 0 sends to rank 1 with tag 1 (t.lua:3), but rank 1 receives from rank 0 with tag 0 (t.lua:4)"));
    /* the tags may only be out of order (a pipeline's backward pass): the fix says that too */
    ck_assert_ptr_nonnull(strstr(mon.verdict, "If both tags are meant (rank 0 sends tag 0 later, or rank 1 receives tag 1 later), the ranks use them in different orders"));
    cs_monitor_destroy(&mon);
}
END_TEST

START_TEST(test_computing_rank_is_live) {
    start(2, "rendezvous");
    post(0, 1, CS_OP_RECV, 1, 4, 1, false);
    block(0, 1, 1, R1);
    cs_event c = {.type = CS_EV_COMPUTE, .rank = 1, .ms = 100, .begin = true};
    cs_monitor_fold(&mon, &c);
    ck_assert_int_eq(mon.ranks[1].state, CS_RS_COMPUTING);
    ck_assert(!mon.deadlocked);
    cs_monitor_destroy(&mon);
}
END_TEST

START_TEST(test_bad_rank_rejected) {
    start(2, "rendezvous");
    cs_event ev = {.type = CS_EV_POST, .rank = 7};
    ck_assert_int_eq(cs_monitor_fold(&mon, &ev), -1);
    cs_monitor_destroy(&mon);
}
END_TEST

/* Many outstanding requests on one rank exercise the table's growth and deletes. */
START_TEST(test_many_requests) {
    start(2, "eager");
    for (uint64_t i = 1; i <= 5000; i++) post(0, i, CS_OP_ISEND, 1, 4, 1, true);
    for (uint64_t i = 1; i <= 5000; i++) complete(0, i);
    for (uint64_t i = 1; i <= 5000; i += 2) match(1, i, 0, i, 4);
    for (uint64_t i = 1; i <= 5000; i++)
        ck_assert((cs_monitor_find(&mon, 0, i) == NULL) == (i % 2 == 1));
    ck_assert_int_eq(mon.messages, 2500);
    cs_monitor_destroy(&mon);
}
END_TEST

static void fail_rank(int rank, const char *text) {
    cs_event ev = {.type = CS_EV_ERROR, .rank = rank, .status = 2, .text = text};
    cs_monitor_fold(&mon, &ev);
}

START_TEST(test_self_wait_explained) {
    start(2, "rendezvous");
    post(1, 1, CS_OP_RECV, 1, 8, 5, false);
    block(1, 5, 1, R1);
    quit(0);
    ck_assert(mon.deadlocked);
    ck_assert_ptr_nonnull(strstr(mon.verdict, "why: rank 1 receives from itself (t.lua:5)"));
    ck_assert_ptr_nonnull(strstr(mon.verdict, "fix: a rank does not need messages to itself"));
    cs_monitor_destroy(&mon);
}
END_TEST

START_TEST(test_any_source_orphan_explained) {
    start(3, "rendezvous");
    post(0, 1, CS_OP_RECV, CS_ANY_SOURCE, 8, 4, false);
    block(0, 4, 1, R1);
    quit(1);
    quit(2);
    ck_assert(mon.deadlocked);
    ck_assert_ptr_nonnull(strstr(mon.verdict, "rank 0 waits to receive from any rank, but every other rank has already finished"));
    cs_monitor_destroy(&mon);
}
END_TEST

/* Waiting on a rank that failed is part of the error, not a deadlock. */
START_TEST(test_failed_rank_waiters) {
    start(3, "rendezvous");
    post(0, 1, CS_OP_RECV, 1, 8, 4, false);
    block(0, 4, 1, R1);
    post(2, 1, CS_OP_ISEND, 1, 12, 9, false);
    fail_rank(1, "t.lua:7: boom");
    ck_assert(!mon.deadlocked);
    ck_assert_ptr_nonnull(mon.ranks[1].waiters);
    ck_assert_ptr_nonnull(strstr(mon.ranks[1].waiters, "rank 0 was waiting on it: recv from rank 1 (tag 0, 8 bytes) posted at t.lua:4"));
    ck_assert_ptr_nonnull(strstr(mon.ranks[1].waiters, "rank 2 was waiting on it: isend to rank 1 (tag 0, 12 bytes) posted at t.lua:9"));
    ck_assert_int_eq(cs_report_status(&mon), 2);
    cs_monitor_destroy(&mon);
}
END_TEST

START_TEST(test_unreceived_messages_warned) {
    start(2, "eager");
    for (uint64_t i = 1; i <= 2; i++) {
        post(0, i, CS_OP_SEND, 1, 4, 3, true);
        complete(0, i);
    }
    post(0, 3, CS_OP_SEND, 1, 4, 6, true);
    complete(0, 3);
    quit(0);
    ck_assert_int_eq(mon.npitfalls, 0);
    quit(1);
    ck_assert(mon.ended);
    ck_assert_int_eq(mon.npitfalls, 2);
    ck_assert_str_eq(mon.pitfalls[0].text, "t.lua:3: 2 messages sent here to rank 1 (tag 0, 8 bytes in all) were never received: the run ended first. Every send needs a matching receive.");
    ck_assert_ptr_nonnull(strstr(mon.pitfalls[1].text, "t.lua:6: 1 message sent here to rank 1 (tag 0, 4 bytes in all) was never received"));
    cs_monitor_destroy(&mon);
}
END_TEST

START_TEST(test_no_leftovers_after_failure) {
    start(2, "eager");
    post(0, 1, CS_OP_SEND, 1, 4, 3, true);
    complete(0, 1);
    quit(0);
    fail_rank(1, "t.lua:9: boom");
    cs_event ex = {.type = CS_EV_EXIT, .rank = 1, .status = 2};
    cs_monitor_fold(&mon, &ex);
    ck_assert(mon.ended);
    ck_assert_int_eq(mon.npitfalls, 0);
    cs_monitor_destroy(&mon);
}
END_TEST

/* Issue 14 item 5: a run that was interrupted (ranks aborted: quit, timeout)
 * left its messages by design: no leftover pitfall. */
START_TEST(test_no_leftovers_after_interrupt) {
    start(2, "rendezvous");
    post(0, 1, CS_OP_ISEND, 1, 4, 3, false);
    for (int k = 0; k < 2; k++) {
        cs_event ex = {.type = CS_EV_EXIT, .rank = k, .status = 1};
        cs_monitor_fold(&mon, &ex);
    }
    ck_assert(mon.ended);
    ck_assert_int_eq(mon.npitfalls, 0);
    cs_monitor_destroy(&mon);
}
END_TEST

START_TEST(test_warnings_once_and_run_errors) {
    start(2, "rendezvous");
    cs_event w = {.type = CS_EV_WARN, .rank = 0, .text = "t.lua:3: something"};
    cs_monitor_fold(&mon, &w);
    cs_monitor_fold(&mon, &w);
    ck_assert_int_eq(mon.npitfalls, 1);
    ck_assert_int_eq(cs_report_status(&mon), 0);
    cs_event e = {.type = CS_EV_ERROR, .rank = -1, .status = 4, .text = "timeout"};
    ck_assert_int_eq(cs_monitor_fold(&mon, &e), 0);
    ck_assert_int_eq(cs_report_status(&mon), 4);
    ck_assert_str_eq(mon.run_error, "timeout");
    cs_monitor_destroy(&mon);
}
END_TEST

/* Ranks that fail together: the first failure in the events gives the status
 * (a live run takes the same), not the largest: a script error then a death
 * reported after it is 2, as the run that wrote those events ended. */
START_TEST(test_first_failure_status) {
    start(3, "rendezvous");
    fail_rank(0, "t.lua:2: boom");
    cs_event d = {.type = CS_EV_ERROR, .rank = 2, .status = 5, .text = "rank 2 died (signal 9)"};
    cs_monitor_fold(&mon, &d);
    cs_event b = {.type = CS_EV_ERROR, .rank = 1, .status = 4, .text = "t.lua:3: memory limit"};
    cs_monitor_fold(&mon, &b);
    ck_assert_int_eq(mon.nfailed, 3);
    ck_assert_int_eq(cs_report_status(&mon), 2);
    cs_monitor_destroy(&mon);
}
END_TEST

static void count_req(void *ud, const cs_mon_req *q) {
    int *n = ud;
    *n += cs_mon_req_in_flight(q);
}

START_TEST(test_model_current_op_and_in_flight) {
    start(2, "rendezvous");
    ck_assert_int_eq(mon.ranks[0].op, -1);
    post(0, 1, CS_OP_ISEND, 1, 8, 3, false);
    post(0, 2, CS_OP_ISEND, 1, 8, 4, false);
    ck_assert_int_eq(mon.ranks[0].op, CS_OP_ISEND);
    ck_assert_int_eq(mon.ranks[0].peer, 1);
    ck_assert_int_eq(mon.ranks[0].line, 4);
    ck_assert_int_eq(mon.unmatched, 2);
    int n = 0;
    cs_monitor_each_req(&mon, 0, count_req, &n);
    ck_assert_int_eq(n, 2);
    post(1, 1, CS_OP_RECV, 0, 8, 7, false);
    match(1, 1, 0, 1, 8);
    ck_assert_int_eq(mon.unmatched, 1);
    n = 0;
    cs_monitor_each_req(&mon, 0, count_req, &n);
    ck_assert_int_eq(n, 1);
    cs_monitor_destroy(&mon);
}
END_TEST

/* A set of blocked ranks that no rank outside it can release is a deadlock,
 * even while other ranks run: declared when they all block, or at the timeout. */
START_TEST(test_partial_deadlock) {
    start(3, "rendezvous");
    post(0, 1, CS_OP_SEND, 1, 4, 5, false);
    post(1, 1, CS_OP_SEND, 0, 4, 5, false);
    block(0, 5, 1, R1);
    block(1, 5, 1, R1);
    ck_assert(!mon.deadlocked); /* rank 2 still runs: wait for it (or the timeout) */
    ck_assert(cs_monitor_declare_stuck(&mon));
    ck_assert(mon.deadlocked);
    ck_assert(mon.ranks[0].in_deadlock && mon.ranks[1].in_deadlock && !mon.ranks[2].in_deadlock);
    ck_assert_ptr_nonnull(strstr(mon.verdict, "deadlock: these ranks wait on each other"));
    ck_assert_ptr_nonnull(strstr(mon.verdict, "rank 2 is still running, but can release none of them"));
    cs_monitor_destroy(&mon);
}
END_TEST

/* ... but not when a running rank is at the end of the chain, or can send to
 * an any-source receive. */
START_TEST(test_chain_to_a_running_rank) {
    start(3, "rendezvous");
    post(0, 1, CS_OP_RECV, 1, 4, 5, false);
    post(1, 1, CS_OP_RECV, 2, 4, 6, false);
    block(0, 5, 1, R1);
    block(1, 6, 1, R1);
    ck_assert(!cs_monitor_declare_stuck(&mon));
    cs_monitor_destroy(&mon);
    start(3, "rendezvous");
    post(0, 1, CS_OP_RECV, CS_ANY_SOURCE, 4, 5, false);
    post(1, 1, CS_OP_RECV, 0, 4, 6, false);
    block(0, 5, 1, R1);
    block(1, 6, 1, R1);
    ck_assert(!cs_monitor_declare_stuck(&mon)); /* rank 2 may send to rank 0 */
    quit(2);
    ck_assert(mon.deadlocked);
    cs_monitor_destroy(&mon);
}
END_TEST

/* wait_all needs every request: one that only a stuck rank can complete is enough. */
START_TEST(test_wait_all_is_and) {
    start(3, "rendezvous");
    post(0, 1, CS_OP_IRECV, 1, 4, 3, false);
    post(0, 2, CS_OP_IRECV, 2, 4, 4, false);
    post(1, 1, CS_OP_RECV, 0, 4, 7, false);
    block(0, 5, 2, R12);
    block(1, 7, 1, R1);
    ck_assert(cs_monitor_declare_stuck(&mon)); /* rank 2 could complete request 2, not 1 */
    ck_assert(!mon.ranks[2].in_deadlock);
    cs_monitor_destroy(&mon);
}
END_TEST

/* Live, a pitfall the monitor finds goes out once as a warn event of the sender. */
static int nwarn_events, warn_rank;
static void capture(void *ud, const cs_event *ev) {
    (void)ud;
    if (ev->type == CS_EV_WARN) nwarn_events++, warn_rank = ev->rank;
}

START_TEST(test_live_warn_event) {
    cs_bus bus;
    ck_assert_int_eq(cs_bus_init(&bus, 2), 0);
    start(2, "eager");
    mon.bus = &bus;
    cs_bus_subscribe(&bus, cs_monitor_sink(&mon));
    cs_bus_subscribe(&bus, (cs_sink){capture, NULL});
    cs_event ev = {.type = CS_EV_POST, .rank = 1, .req = 1, .op = CS_OP_SEND, .peer = 0,
                   .bytes = 4, .line = 2, .eager = true};
    cs_bus_emit(&bus, &ev);
    cs_event c = {.type = CS_EV_COMPLETE, .rank = 1, .req = 1};
    cs_bus_emit(&bus, &c);
    for (int k = 0; k < 2; k++) {
        cs_event ex = {.type = CS_EV_EXIT, .rank = k};
        cs_bus_emit(&bus, &ex);
    }
    ck_assert_int_eq(nwarn_events, 1);
    ck_assert_int_eq(warn_rank, 1);
    ck_assert_int_eq(mon.npitfalls, 1);
    cs_monitor_destroy(&mon);
    cs_bus_destroy(&bus);
}
END_TEST

/* ---- the deferred events of the thread engine's bus (cs_bus_defer) */

typedef struct seen_ev {
    cs_event_type type;
    int rank;
    uint64_t seq, req;
    double t;
} seen_ev;

static seen_ev *seen;
static int nseen, seen_cap;

static void record(void *ud, const cs_event *ev) {
    (void)ud;
    if (nseen == seen_cap) {
        seen_cap = seen_cap ? 2 * seen_cap : 1024;
        seen = realloc(seen, (size_t)seen_cap * sizeof *seen);
        ck_assert_ptr_nonnull(seen);
    }
    seen[nseen++] = (seen_ev){ev->type, ev->rank, ev->seq, ev->req, ev->t};
}

static void deferred_bus(cs_bus *bus, int world) {
    nseen = 0;
    ck_assert_int_eq(cs_bus_init(bus, world), 0);
    ck_assert_int_eq(cs_bus_defer(bus), 0);
    cs_bus_subscribe(bus, (cs_sink){record, NULL});
}

/* A post, match or complete waits; any other event, or a reader taking the
 * lock, dispatches what waits first, in the order it was emitted. */
START_TEST(test_deferred_order) {
    cs_bus bus;
    deferred_bus(&bus, 2);
    cs_event p = {.type = CS_EV_POST, .rank = 0, .req = 1, .op = CS_OP_SEND, .peer = 1};
    cs_bus_emit(&bus, &p);
    ck_assert_int_eq(nseen, 0);
    cs_event x = {.type = CS_EV_EXIT, .rank = 1};
    cs_bus_emit(&bus, &x);
    ck_assert_int_eq(nseen, 2);
    ck_assert_int_eq(seen[0].type, CS_EV_POST);
    ck_assert_int_eq(seen[1].type, CS_EV_EXIT);
    /* a batch keeps its order and comes out whole */
    cs_event b[3] = {{.type = CS_EV_MATCH, .rank = 1, .req = 1, .peer = 0, .peer_req = 1},
                     {.type = CS_EV_COMPLETE, .rank = 1, .req = 1},
                     {.type = CS_EV_COMPLETE, .rank = 0, .req = 1}};
    cs_bus_emit_n(&bus, b, 3);
    ck_assert_int_eq(nseen, 2);
    ck_assert(cs_bus_poll(&bus, 2));
    ck_assert_int_eq(nseen, 4);
    cs_bus_lock(&bus);
    cs_bus_unlock(&bus);
    ck_assert_int_eq(nseen, 5);
    ck_assert(!cs_bus_poll(&bus, 2));
    ck_assert_int_eq(seen[2].type, CS_EV_MATCH);
    ck_assert_int_eq(seen[3].type, CS_EV_COMPLETE);
    ck_assert_int_eq(seen[3].rank, 1);
    ck_assert_int_eq(seen[4].rank, 0);
    /* per-rank sequence numbers in dispatch order */
    ck_assert_uint_eq(seen[0].seq, 0);
    ck_assert_uint_eq(seen[4].seq, 1);
    ck_assert_uint_eq(seen[2].seq, 1);
    ck_assert_uint_eq(seen[3].seq, 2);
    /* cs_bus_drain dispatches all that waits, however many, and nothing
     * when nothing does */
    for (int i = 0; i < 40; i++) {
        cs_event c = {.type = CS_EV_COMPLETE, .rank = i % 2, .req = (uint64_t)i + 2};
        cs_bus_emit(&bus, &c);
    }
    ck_assert_int_eq(nseen, 5);
    cs_bus_drain(&bus);
    ck_assert_int_eq(nseen, 45);
    ck_assert_uint_eq(seen[44].req, 41);
    cs_bus_drain(&bus);
    ck_assert_int_eq(nseen, 45);
    cs_bus_destroy(&bus);
}
END_TEST

/* Every field a post, match or complete carries comes out of the ring as it
 * went in; one that a slot cannot hold (three sizes, a size past 2^31) is
 * dispatched at once, after what waited before it. */
static cs_event *full_seen;
static int nfull_seen;

static void record_full(void *ud, const cs_event *ev) {
    (void)ud;
    full_seen = realloc(full_seen, (size_t)(nfull_seen + 1) * sizeof *full_seen);
    ck_assert_ptr_nonnull(full_seen);
    full_seen[nfull_seen++] = *ev;
}

static void same_fields(const cs_event *a, const cs_event *b) {
    ck_assert_int_eq(a->type, b->type);
    ck_assert_int_eq(a->rank, b->rank);
    ck_assert_uint_eq(a->req, b->req);
    ck_assert_int_eq(a->op, b->op);
    ck_assert_int_eq(a->peer, b->peer);
    ck_assert_int_eq(a->tag, b->tag);
    ck_assert_int_eq(a->ctx, b->ctx);
    ck_assert_uint_eq(a->bytes, b->bytes);
    ck_assert_int_eq(a->dtype, b->dtype);
    ck_assert_int_eq(a->ndim, b->ndim);
    for (int i = 0; i < a->ndim; i++) ck_assert_int_eq(a->shape[i], b->shape[i]);
    ck_assert_int_eq(a->line, b->line);
    ck_assert_int_eq(a->eager, b->eager);
    ck_assert_uint_eq(a->peer_req, b->peer_req);
    ck_assert_int_eq(a->status, b->status);
}

START_TEST(test_deferred_fields) {
    cs_bus bus;
    nfull_seen = 0;
    ck_assert_int_eq(cs_bus_init(&bus, 4), 0);
    ck_assert_int_eq(cs_bus_defer(&bus), 0);
    cs_bus_subscribe(&bus, (cs_sink){record_full, NULL});
    cs_event ev[] = {
        {.type = CS_EV_POST, .rank = 3, .req = 7, .op = CS_OP_ISEND, .peer = 2, .tag = 99,
         .ctx = 5, .bytes = 24, .dtype = CS_FLOAT64, .ndim = 2, .shape = {1, 3},
         .line = 41, .eager = true},
        {.type = CS_EV_POST, .rank = 2, .req = 1, .op = CS_OP_IRECV, .peer = CS_ANY_SOURCE,
         .tag = INT32_MAX, .bytes = 4, .ndim = 0, .line = 1},
        {.type = CS_EV_POST, .rank = 1, .req = 2, .op = CS_OP_RECV, .peer = 0,
         .bytes = (size_t)4 << 30, .ndim = 1, .shape = {INT32_MAX}, .line = 9},
        {.type = CS_EV_MATCH, .rank = 2, .req = 1, .op = CS_OP_IRECV, .peer = 3,
         .peer_req = UINT64_C(1) << 40, .tag = 99, .ctx = 5, .bytes = 24},
        {.type = CS_EV_COMPLETE, .rank = 2, .req = 1, .op = CS_OP_IRECV},
        {.type = CS_EV_COMPLETE, .rank = 3, .req = 7, .op = CS_OP_ISEND, .status = -2},
    };
    int n = (int)(sizeof ev / sizeof *ev);
    for (int i = 0; i < n; i++) cs_bus_emit(&bus, &ev[i]);
    ck_assert_int_eq(nfull_seen, 0); /* all waiting */
    /* three sizes, and a size a slot cannot hold: no waiting for these */
    cs_event big[2] = {
        {.type = CS_EV_POST, .rank = 0, .req = 3, .op = CS_OP_SEND, .peer = 1, .bytes = 96,
         .dtype = CS_FLOAT32, .ndim = 3, .shape = {2, 3, 4}, .line = 12},
        {.type = CS_EV_POST, .rank = 0, .req = 4, .op = CS_OP_SEND, .peer = 1,
         .bytes = (size_t)1 << 33, .dtype = CS_UINT8, .ndim = 1,
         .shape = {(int64_t)1 << 33}, .line = 13},
    };
    cs_bus_emit(&bus, &big[0]);
    ck_assert_int_eq(nfull_seen, n + 1);
    cs_bus_emit(&bus, &big[1]);
    ck_assert_int_eq(nfull_seen, n + 2);
    for (int i = 0; i < n; i++) same_fields(&full_seen[i], &ev[i]);
    same_fields(&full_seen[n], &big[0]);
    same_fields(&full_seen[n + 1], &big[1]);
    free(full_seen);
    full_seen = NULL;
    cs_bus_destroy(&bus);
}
END_TEST

/* Threads emit many more events than the ring holds, with locked events in
 * between and nobody else draining: every event comes out once, each
 * thread's in its order, numbered per rank without gaps, times never
 * going back. */
#define PER_THREAD 5000
static cs_bus mt_bus;

static void *emitter(void *arg) {
    int rank = (int)(intptr_t)arg;
    for (int i = 1; i <= PER_THREAD; i++) {
        cs_event ev = {.type = CS_EV_POST, .rank = rank, .req = (uint64_t)i};
        if (i % 997 == 0) ev.type = CS_EV_COMPUTE; /* through the lock */
        cs_bus_emit(&mt_bus, &ev);
        if (i % 301 == 0) cs_bus_poll(&mt_bus, 3);
    }
    return NULL;
}

START_TEST(test_deferred_threads) {
    enum { N = 3 };
    deferred_bus(&mt_bus, N);
    pthread_t t[N];
    for (int k = 0; k < N; k++)
        ck_assert_int_eq(pthread_create(&t[k], NULL, emitter, (void *)(intptr_t)k), 0);
    for (int k = 0; k < N; k++) pthread_join(t[k], NULL);
    cs_bus_lock(&mt_bus);
    cs_bus_unlock(&mt_bus);
    ck_assert_int_eq(nseen, N * PER_THREAD);
    uint64_t next[N] = {0}, req[N] = {0};
    for (int i = 0; i < nseen; i++) {
        int k = seen[i].rank;
        ck_assert_int_ge(k, 0);
        ck_assert_int_lt(k, N);
        ck_assert_uint_eq(seen[i].seq, next[k]++);
        ck_assert_uint_eq(seen[i].req, ++req[k]);
        if (i > 0) ck_assert(seen[i].t >= seen[i - 1].t);
    }
    cs_bus_destroy(&mt_bus);
}
END_TEST

/* The deadlock verdict needs no reader: the block that closes it dispatches
 * the deferred posts first. */
START_TEST(test_deferred_deadlock_at_block) {
    cs_bus bus;
    deferred_bus(&bus, 2);
    start(2, "rendezvous");
    mon.bus = &bus;
    cs_bus_subscribe(&bus, cs_monitor_sink(&mon));
    for (int k = 0; k < 2; k++) {
        cs_event p = {.type = CS_EV_POST, .rank = k, .req = 1, .op = CS_OP_SEND, .peer = 1 - k,
                      .bytes = 4, .dtype = CS_FLOAT32, .ndim = 1, .shape = {1}, .line = 3};
        cs_bus_emit(&bus, &p);
    }
    ck_assert(!mon.deadlocked);
    uint64_t one = 1;
    cs_event b0 = {.type = CS_EV_BLOCK, .rank = 0, .line = 3, .nreqs = 1, .reqs = &one};
    cs_bus_emit(&bus, &b0);
    ck_assert(!mon.deadlocked);
    cs_event b1 = {.type = CS_EV_BLOCK, .rank = 1, .line = 3, .nreqs = 1, .reqs = &one};
    cs_bus_emit(&bus, &b1);
    ck_assert(mon.deadlocked);
    ck_assert(mon.ranks[0].in_deadlock && mon.ranks[1].in_deadlock);
    cs_monitor_destroy(&mon);
    cs_bus_destroy(&bus);
}
END_TEST

/* ---- message races (monitor_race.c) */

static int races(void) {
    int n = 0;
    for (int i = 0; i < mon.npitfalls; i++) n += mon.pitfalls[i].kind == CS_PIT_RACE;
    return n;
}

/* Two ranks send to rank 0 with one tag; rank 0 receives from any source. */
START_TEST(test_race_two_senders) {
    start(3, "eager");
    post(1, 1, CS_OP_SEND, 0, 4, 10, true);
    post(2, 1, CS_OP_SEND, 0, 4, 12, true);
    post(0, 1, CS_OP_RECV, CS_ANY_SOURCE, 4, 6, false);
    match(0, 1, 2, 1, 4);
    ck_assert_int_eq(races(), 1);
    ck_assert_ptr_nonnull(strstr(mon.pitfalls[0].text, "t.lua:6: message race: this receive from "
                                 "any source could match the send from rank 1 at t.lua:10 or the "
                                 "send from rank 2 at t.lua:12; which arrives first depends on timing"));
    ck_assert_int_eq(mon.pitfalls[0].rank, 0);
    ck_assert_int_eq(mon.pitfalls[0].line, 6);
    ck_assert_int_eq(mon.pitfalls[0].other_line, 10);
    /* the second receive takes the other send: still one race, at the first receive */
    post(0, 2, CS_OP_RECV, CS_ANY_SOURCE, 4, 7, false);
    match(0, 2, 1, 1, 4);
    ck_assert_int_eq(races(), 1);
    cs_monitor_destroy(&mon);
}
END_TEST

/* The later send was posted after the first receive's match (it was not yet
 * sent), but nothing ordered it after that receive: still a race. */
START_TEST(test_race_later_send) {
    start(3, "rendezvous");
    post(1, 1, CS_OP_SEND, 0, 4, 10, true);
    post(0, 1, CS_OP_RECV, CS_ANY_SOURCE, 4, 6, false);
    match(0, 1, 1, 1, 4);
    post(0, 2, CS_OP_RECV, CS_ANY_SOURCE, 4, 7, false);
    post(2, 1, CS_OP_SEND, 0, 4, 12, true);
    match(0, 2, 2, 1, 4);
    ck_assert_int_eq(races(), 1);
    cs_monitor_destroy(&mon);
}
END_TEST

/* Rank 0 tells rank 2 to send only after its first receive: ordered, no race. */
START_TEST(test_no_race_when_ordered) {
    start(3, "eager");
    post(1, 1, CS_OP_SEND, 0, 4, 10, true);
    post(0, 1, CS_OP_RECV, CS_ANY_SOURCE, 4, 6, false);
    match(0, 1, 1, 1, 4);
    post(0, 2, CS_OP_SEND, 2, 4, 8, true); /* the go-ahead */
    post(2, 1, CS_OP_RECV, 0, 4, 11, false);
    match(2, 1, 0, 2, 4);
    post(2, 2, CS_OP_SEND, 0, 4, 12, true);
    post(0, 3, CS_OP_RECV, CS_ANY_SOURCE, 4, 7, false);
    match(0, 3, 2, 2, 4);
    ck_assert_int_eq(races(), 0);
    cs_monitor_destroy(&mon);
}
END_TEST

/* A rendezvous send completes only after its receive was posted, so what the
 * sender does next follows that receive; an eager send learns nothing. */
static void relay(bool eager) {
    start(3, eager ? "eager" : "rendezvous");
    post(0, 1, CS_OP_RECV, CS_ANY_SOURCE, 4, 6, false);
    post(1, 1, CS_OP_SEND, 0, 4, 10, eager);
    match(0, 1, 1, 1, 4);
    complete(1, 1);
    post(1, 2, CS_OP_SEND, 2, 4, 11, eager); /* then rank 1 tells rank 2 */
    post(2, 1, CS_OP_RECV, 1, 4, 12, false);
    match(2, 1, 1, 2, 4);
    post(2, 2, CS_OP_SEND, 0, 4, 13, eager);
    post(0, 2, CS_OP_RECV, CS_ANY_SOURCE, 4, 7, false);
    match(0, 2, 2, 2, 4);
}

START_TEST(test_race_through_rendezvous_completion) {
    relay(false);
    ck_assert_int_eq(races(), 0);
    cs_monitor_destroy(&mon);
    relay(true);
    ck_assert_int_eq(races(), 1);
    cs_monitor_destroy(&mon);
}
END_TEST

/* Rank 0 posts an irecv from any source, then tells rank 1 to send, then
 * waits (the irecv took rank 2's message first): rank 1's send follows a post
 * that came before the wait, so the irecv could have taken it: a race. */
static void irecv_then_send(bool wait_first) {
    uint64_t one = 1;
    start(3, "eager");
    post(0, 1, CS_OP_IRECV, CS_ANY_SOURCE, 4, 5, false);
    post(2, 1, CS_OP_SEND, 0, 4, 13, true);
    match(0, 1, 2, 1, 4);
    complete(0, 1);
    if (wait_first) { /* w:wait() before the go-ahead: the irecv is over */
        block(0, 7, 1, &one);
        unblock(0);
    }
    post(0, 2, CS_OP_SEND, 1, 4, 6, true); /* the go-ahead */
    post(1, 1, CS_OP_RECV, 0, 4, 10, false);
    match(1, 1, 0, 2, 4);
    post(1, 2, CS_OP_SEND, 0, 4, 11, true);
    if (!wait_first) {
        block(0, 7, 1, &one);
        unblock(0);
    }
    post(0, 3, CS_OP_RECV, CS_ANY_SOURCE, 4, 8, false);
    match(0, 3, 1, 2, 4);
}

START_TEST(test_race_irecv_open_until_its_wait) {
    irecv_then_send(false);
    ck_assert_int_eq(races(), 1);
    ck_assert_ptr_nonnull(strstr(mon.pitfalls[0].text, "t.lua:5: message race: this receive from "
                                 "any source could match the send from rank 1 at t.lua:11 or the "
                                 "send from rank 2 at t.lua:13"));
    cs_monitor_destroy(&mon);
    irecv_then_send(true);
    ck_assert_int_eq(races(), 0);
    cs_monitor_destroy(&mon);
}
END_TEST

/* An irecv not yet waited on took a rendezvous send: the sender's completion
 * tells that it is over, and what the sender causes next follows it. */
START_TEST(test_irecv_over_through_rendezvous_completion) {
    start(3, "rendezvous");
    post(0, 1, CS_OP_IRECV, CS_ANY_SOURCE, 4, 6, false);
    post(0, 2, CS_OP_SEND, 2, 4, 9, false); /* before the wait: it orders nothing */
    post(1, 1, CS_OP_SEND, 0, 4, 10, false);
    match(0, 1, 1, 1, 4);
    complete(1, 1);
    post(1, 2, CS_OP_SEND, 2, 4, 11, false); /* then rank 1 tells rank 2 */
    post(2, 1, CS_OP_RECV, 1, 4, 12, false);
    match(2, 1, 1, 2, 4);
    post(2, 2, CS_OP_SEND, 0, 4, 13, false);
    post(0, 3, CS_OP_RECV, CS_ANY_SOURCE, 4, 7, false);
    match(0, 3, 2, 2, 4);
    ck_assert_int_eq(races(), 0);
    cs_monitor_destroy(&mon);
}
END_TEST

/* Rank 2's rendezvous isend completes (rank 0's irecv from any source took
 * it) before rank 2 lets rank 1 send: rank 2 knows that only if it waited
 * on the isend first. */
static void isend_then_go(bool wait_first) {
    uint64_t one = 1;
    start(3, "rendezvous");
    post(0, 1, CS_OP_IRECV, CS_ANY_SOURCE, 4, 5, false);
    post(2, 1, CS_OP_ISEND, 0, 4, 14, false);
    match(0, 1, 2, 1, 4);
    complete(0, 1);
    complete(2, 1);
    if (wait_first) {
        block(2, 15, 1, &one);
        unblock(2);
    }
    post(2, 2, CS_OP_SEND, 1, 4, 16, false); /* the go-ahead */
    post(1, 1, CS_OP_RECV, 2, 4, 10, false);
    match(1, 1, 2, 2, 4);
    post(1, 2, CS_OP_SEND, 0, 4, 11, false);
    block(0, 7, 1, &one);
    unblock(0);
    post(0, 2, CS_OP_RECV, CS_ANY_SOURCE, 4, 8, false);
    match(0, 2, 1, 2, 4);
}

/* Until a receive from any source is posted, a rendezvous isend's completion
 * is credited at once: the thread engine does not tell waits that need not
 * be told, and the detector keeps nothing for them. From that post on, what
 * it learnt waits for its rank's wait. */
START_TEST(test_isend_credited_before_any_source) {
    start(2, "rendezvous");
    for (uint64_t i = 1; i <= 1000; i++) {
        post(1, i, CS_OP_ISEND, 0, 4, 10, false);
        post(0, i, CS_OP_RECV, 1, 4, 6, false);
        match(0, i, 1, i, 4);
        complete(0, i);
        complete(1, i);
    }
    ck_assert_uint_eq(cs_monitor_race_unwaited(&mon), 0);
    post(0, 1001, CS_OP_IRECV, CS_ANY_SOURCE, 4, 7, false);
    post(1, 1001, CS_OP_ISEND, 0, 4, 10, false);
    match(0, 1001, 1, 1001, 4);
    complete(0, 1001);
    complete(1, 1001);
    ck_assert_uint_eq(cs_monitor_race_unwaited(&mon), 1);
    uint64_t id = 1001;
    block(1, 11, 1, &id);
    unblock(1);
    ck_assert_uint_eq(cs_monitor_race_unwaited(&mon), 0);
    ck_assert_int_eq(races(), 0);
    cs_monitor_destroy(&mon);
}
END_TEST

START_TEST(test_isend_learns_at_its_wait) {
    isend_then_go(false);
    ck_assert_int_eq(races(), 1);
    ck_assert_ptr_nonnull(strstr(mon.pitfalls[0].text, "t.lua:5: message race: this receive from "
                                 "any source could match the send from rank 1 at t.lua:11 or the "
                                 "send from rank 2 at t.lua:14"));
    cs_monitor_destroy(&mon);
    isend_then_go(true);
    ck_assert_int_eq(races(), 0);
    cs_monitor_destroy(&mon);
}
END_TEST

/* Rank 1 posts an irecv from rank 0, sends to rank 2 (whose receive from
 * any source takes it), then waits on the irecv, which only then takes rank
 * 0's rendezvous send: rank 0 learns that the irecv was posted, not that
 * rank 1's send to rank 2 was matched, so its own send to rank 2 races. */
START_TEST(test_rendezvous_learns_the_post_only) {
    uint64_t one = 1;
    start(3, "rendezvous");
    post(1, 1, CS_OP_IRECV, 0, 4, 18, false);
    post(1, 2, CS_OP_SEND, 2, 4, 19, false);
    post(2, 1, CS_OP_RECV, CS_ANY_SOURCE, 4, 30, false);
    match(2, 1, 1, 2, 4);
    complete(2, 1);
    complete(1, 2);
    block(1, 21, 1, &one); /* rank 1 waits on the irecv before it matches */
    post(0, 1, CS_OP_SEND, 1, 4, 5, false);
    match(1, 1, 0, 1, 4);
    complete(1, 1);
    unblock(1);
    complete(0, 1);
    post(0, 2, CS_OP_SEND, 2, 4, 6, false);
    post(2, 2, CS_OP_RECV, CS_ANY_SOURCE, 4, 31, false);
    match(2, 2, 0, 2, 4);
    ck_assert_int_eq(races(), 1);
    ck_assert_ptr_nonnull(strstr(mon.pitfalls[0].text, "t.lua:30: message race: this receive from "
                                 "any source could match the send from rank 0 at t.lua:6 or the "
                                 "send from rank 1 at t.lua:19"));
    cs_monitor_destroy(&mon);
}
END_TEST

int main(void) {
    Suite *s = suite_create("monitor");
    TCase *tc = tcase_create("verdicts");
    tcase_add_test(tc, test_both_send_first);
    tcase_add_test(tc, test_completed_before_block_is_no_deadlock);
    tcase_add_test(tc, test_pending_isend_then_irecv);
    tcase_add_test(tc, test_partner_in_flight);
    tcase_add_test(tc, test_buffered_eager_message);
    tcase_add_test(tc, test_any_source_with_live_sender);
    tcase_add_test(tc, test_wait_all_partially_done);
    tcase_add_test(tc, test_eager_limit_explained);
    tcase_add_test(tc, test_receive_cycle);
    tcase_add_test(tc, test_tag_mismatch_explained);
    tcase_add_test(tc, test_computing_rank_is_live);
    tcase_add_test(tc, test_bad_rank_rejected);
    tcase_add_test(tc, test_many_requests);
    tcase_add_test(tc, test_self_wait_explained);
    tcase_add_test(tc, test_any_source_orphan_explained);
    tcase_add_test(tc, test_failed_rank_waiters);
    tcase_add_test(tc, test_unreceived_messages_warned);
    tcase_add_test(tc, test_no_leftovers_after_failure);
    tcase_add_test(tc, test_no_leftovers_after_interrupt);
    tcase_add_test(tc, test_warnings_once_and_run_errors);
    tcase_add_test(tc, test_first_failure_status);
    tcase_add_test(tc, test_model_current_op_and_in_flight);
    tcase_add_test(tc, test_partial_deadlock);
    tcase_add_test(tc, test_chain_to_a_running_rank);
    tcase_add_test(tc, test_wait_all_is_and);
    tcase_add_test(tc, test_live_warn_event);
    tcase_add_test(tc, test_race_two_senders);
    tcase_add_test(tc, test_race_later_send);
    tcase_add_test(tc, test_no_race_when_ordered);
    tcase_add_test(tc, test_race_through_rendezvous_completion);
    tcase_add_test(tc, test_race_irecv_open_until_its_wait);
    tcase_add_test(tc, test_irecv_over_through_rendezvous_completion);
    tcase_add_test(tc, test_isend_learns_at_its_wait);
    tcase_add_test(tc, test_rendezvous_learns_the_post_only);
    tcase_add_test(tc, test_isend_credited_before_any_source);
    suite_add_tcase(s, tc);
    TCase *bus = tcase_create("deferred bus");
    tcase_add_test(bus, test_deferred_order);
    tcase_add_test(bus, test_deferred_fields);
    tcase_add_test(bus, test_deferred_threads);
    tcase_add_test(bus, test_deferred_deadlock_at_block);
    suite_add_tcase(s, bus);
    return run_suite(s);
}
