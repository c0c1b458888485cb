/* check_controller_order.c -- the tcp controller's order of the events it
 * forwards (controller_order.c): a rendezvous send's complete, which its rank
 * may report before the receiver's match arrives, is held until that match
 * has been forwarded, and every event a rank reported after it waits with it.
 * The sends are matched in every order (the oldest first, the newest first,
 * shuffled), with more posted in between, so that the list of unmatched sends
 * drops matched entries from its front, compacts, and moves down. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "controller_internal.h"
#include "run_suite.h"

enum { MAXREQ = 20000 };

static controller k;
static prank ranks[2];
/* when each send's match and complete were forwarded (0: not yet) */
static long matched_at[MAXREQ + 1], completed_at[MAXREQ + 1];
static long forwarded;

static void record(void *ud, const cs_event *ev) {
    (void)ud;
    forwarded++;
    if (ev->type == CS_EV_MATCH && ev->peer == 0) matched_at[ev->peer_req] = forwarded;
    if (ev->type == CS_EV_COMPLETE && ev->rank == 0) completed_at[ev->req] = forwarded;
}

static void setup(void) {
    memset(&k, 0, sizeof k);
    memset(ranks, 0, sizeof ranks);
    memset(matched_at, 0, sizeof matched_at);
    memset(completed_at, 0, sizeof completed_at);
    forwarded = 0;
    k.world = 2;
    k.r = ranks;
    ck_assert_int_eq(cs_bus_init(&k.c.bus, 2), 0);
    cs_bus_subscribe(&k.c.bus, (cs_sink){.emit = record});
}

static void teardown(void) {
    controller_order_free(&k);
    cs_bus_destroy(&k.c.bus);
}

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static unsigned pick(unsigned n) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (unsigned)(rng % n);
}

/* Rank 0 posts a rendezvous isend, rank 1 its irecv. */
static void post_pair(uint64_t id) {
    cs_event s = {.type = CS_EV_POST, .rank = 0, .req = id, .op = CS_OP_ISEND, .peer = 1};
    cs_event r = {.type = CS_EV_POST, .rank = 1, .req = id, .op = CS_OP_IRECV, .peer = 0};
    controller_forward(&k, &s);
    controller_forward(&k, &r);
}

static void complete(uint64_t id) {
    cs_event c = {.type = CS_EV_COMPLETE, .rank = 0, .req = id, .op = CS_OP_ISEND};
    controller_forward(&k, &c);
}

static void match(uint64_t id) {
    cs_event m = {.type = CS_EV_MATCH, .rank = 1, .req = id, .op = CS_OP_IRECV, .peer = 0,
                  .peer_req = id};
    controller_forward(&k, &m);
}

/* Every send posted was matched before its complete was forwarded, and
 * nothing is held any more. */
static void check_order(uint64_t n) {
    ck_assert_int_eq(k.nheld, 0);
    for (uint64_t id = 1; id <= n; id++) {
        ck_assert_msg(matched_at[id] && completed_at[id], "send %lu: match %ld, complete %ld",
                      (unsigned long)id, matched_at[id], completed_at[id]);
        ck_assert_msg(matched_at[id] < completed_at[id], "send %lu completed before its match",
                      (unsigned long)id);
    }
}

/* Rounds: rank 0 posts a few more sends, rank 1 matches some of those still
 * open (order 0: the oldest first; 1: the newest first; 2: any), and rank 0's
 * completes of those reach the controller before rank 1's matches, as they
 * may over two sockets (rank 1 matched first: the completes are in its
 * order). */
static void run(int order) {
    static uint64_t open[MAXREQ], chosen[MAXREQ];
    uint64_t next = 1;
    unsigned nopen = 0;
    while (next <= MAXREQ || nopen) {
        for (int i = 0; i < 1 + (int)pick(64) && next <= MAXREQ; i++) {
            post_pair(next);
            open[nopen++] = next++;
        }
        unsigned m = nopen ? 1 + pick(nopen < 48 ? nopen : 48) : 0;
        for (unsigned j = 0; j < m; j++) {
            unsigned at = order == 0 ? 0 : order == 1 ? nopen - 1 : pick(nopen);
            chosen[j] = open[at];
            memmove(open + at, open + at + 1, (nopen - at - 1) * sizeof *open);
            nopen--;
        }
        for (unsigned j = 0; j < m; j++) complete(chosen[j]);
        ck_assert_int_eq(k.nheld, (int)m); /* the first waits for its match, the rest behind it */
        for (unsigned j = 0; j < m; j++) match(chosen[j]);
        ck_assert_int_eq(k.nheld, 0);
    }
    check_order(MAXREQ);
}

START_TEST(test_oldest_first) { run(0); }
END_TEST
START_TEST(test_newest_first) { run(1); }
END_TEST
START_TEST(test_shuffled) { run(2); }
END_TEST

/* A complete that arrives after its match is not held at all. */
START_TEST(test_matched_first_not_held) {
    post_pair(1);
    match(1);
    complete(1);
    ck_assert_int_eq(k.nheld, 0);
    check_order(1);
}
END_TEST

int main(void) {
    Suite *s = suite_create("controller_order");
    TCase *tc = tcase_create("rendezvous completes");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_oldest_first);
    tcase_add_test(tc, test_newest_first);
    tcase_add_test(tc, test_shuffled);
    tcase_add_test(tc, test_matched_first_not_held);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
