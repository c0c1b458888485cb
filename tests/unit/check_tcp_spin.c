/* check_tcp_spin.c -- a waiting tcp rank's choice to poll before it sleeps
 * (engine_tcp_spin.c): it polls while polls pay, stops after misses, probes
 * now and then, and comes back once a probe pays; with more ranks than cores
 * it yield-polls, and stops at once when a yield ran other work. Pure logic:
 * no time. */
#include <check.h>
#include <stdlib.h>

#include "engine_tcp_internal.h"
#include "run_suite.h"

#define B 100e-6

START_TEST(test_never_without_budget) {
    tcp_spin s;
    tcp_spin_init(&s, 0);
    for (int i = 0; i < 1000; i++) ck_assert(tcp_spin_budget(&s) == 0);
}
END_TEST

START_TEST(test_polls_while_it_pays) {
    tcp_spin s;
    tcp_spin_init(&s, B);
    for (int i = 0; i < 1000; i++) {
        double b = tcp_spin_budget(&s);
        ck_assert(b == B);
        tcp_spin_learn(&s, b, true);
    }
}
END_TEST

/* Misses stop the polling; then one wait in TCP_SPIN_PROBE polls. */
static int polls_in(tcp_spin *s, int waits, bool pays) {
    int n = 0;
    for (int i = 0; i < waits; i++) {
        double b = tcp_spin_budget(s);
        n += b > 0;
        tcp_spin_learn(s, b, pays);
    }
    return n;
}

START_TEST(test_misses_stop_it) {
    tcp_spin s;
    tcp_spin_init(&s, B);
    /* a full score absorbs a few misses, no more */
    int first = polls_in(&s, TCP_SPIN_SCORE_MAX, false);
    ck_assert_int_le(first, TCP_SPIN_SCORE_MAX / TCP_SPIN_MISS_COST + 1);
    ck_assert_int_eq(polls_in(&s, 100 * TCP_SPIN_PROBE, false), 100);
}
END_TEST

START_TEST(test_mostly_missing_is_not_enough) {
    tcp_spin s;
    tcp_spin_init(&s, B);
    /* one poll in four misses: far more time wasted than saved */
    int polls = 0, waits = 1000 * TCP_SPIN_PROBE;
    for (int i = 0; i < waits; i++) {
        double b = tcp_spin_budget(&s);
        polls += b > 0;
        tcp_spin_learn(&s, b, i % 4 != 0);
    }
    ck_assert_int_lt(polls, waits / 8);
}
END_TEST

START_TEST(test_a_probe_that_pays_brings_it_back) {
    tcp_spin s;
    tcp_spin_init(&s, B);
    polls_in(&s, 10 * TCP_SPIN_PROBE, false);
    int waits = 0;
    double b;
    while ((b = tcp_spin_budget(&s)) == 0) waits++;
    ck_assert_int_lt(waits, TCP_SPIN_PROBE);
    tcp_spin_learn(&s, b, true);
    ck_assert(tcp_spin_budget(&s) == B); /* the next wait polls at once */
}
END_TEST

START_TEST(test_sleeping_at_once_teaches_nothing) {
    tcp_spin s;
    tcp_spin_init(&s, B);
    int score = s.score;
    tcp_spin_learn(&s, 0, false);
    ck_assert_int_eq(s.score, score);
}
END_TEST

/* Ranks outnumber cores: the rank yield-polls, under the same score. */
START_TEST(test_shared_cores_yield_poll) {
    tcp_spin s;
    tcp_spin_init_shared(&s);
    ck_assert(s.yield);
    for (int i = 0; i < 1000; i++) {
        double b = tcp_spin_budget(&s);
        ck_assert(b == TCP_YIELD_S);
        tcp_spin_learn(&s, b, true);
    }
    /* a core of one's own: polling never yields, however long a pause is */
    tcp_spin_init(&s, B);
    ck_assert(tcp_spin_pause(&s));
    ck_assert(!s.overran);
}
END_TEST

/* A yield that ran other work for a time slice (overran) stops the polling
 * at once, not after a few misses: then one wait in TCP_YIELD_PROBE polls,
 * and a probe that pays brings it back. */
START_TEST(test_other_work_stops_yield_polling) {
    tcp_spin s;
    tcp_spin_init_shared(&s);
    double b = tcp_spin_budget(&s);
    ck_assert(b > 0);
    s.overran = true; /* what tcp_spin_pause notes */
    tcp_spin_learn(&s, b, true);
    ck_assert(!s.overran);
    ck_assert_int_eq(polls_in(&s, 10 * TCP_YIELD_PROBE, false), 10);
    int waits = 0;
    while ((b = tcp_spin_budget(&s)) == 0) waits++;
    ck_assert_int_lt(waits, TCP_YIELD_PROBE);
    tcp_spin_learn(&s, b, true);
    ck_assert(tcp_spin_budget(&s) == TCP_YIELD_S);
}
END_TEST

static Suite *spin_suite(void) {
    Suite *s = suite_create("tcp_spin");
    TCase *tc = tcase_create("policy");
    tcase_add_test(tc, test_never_without_budget);
    tcase_add_test(tc, test_polls_while_it_pays);
    tcase_add_test(tc, test_misses_stop_it);
    tcase_add_test(tc, test_mostly_missing_is_not_enough);
    tcase_add_test(tc, test_a_probe_that_pays_brings_it_back);
    tcase_add_test(tc, test_sleeping_at_once_teaches_nothing);
    tcase_add_test(tc, test_shared_cores_yield_poll);
    tcase_add_test(tc, test_other_work_stops_yield_polling);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    return run_suite(spin_suite());
}
