/* check_replay.c -- a trace loaded and folded again: the same model and
 * verdict as live, going back in time, broken and cut traces. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "monitor.h"
#include "replay.h"
#include "trace.h"
#include "run_suite.h"

static char path[64];
static const char *record_source = "--- world: 2\nlocal t = tensor.zeros(4)\n\"\\\u00e9\t\x01\n";

/* The both-send-first deadlock, through a bus into a live monitor and a trace. */
static void record(cs_monitor *live) {
    char err[256];
    cs_bus bus;
    ck_assert_int_eq(cs_bus_init(&bus, 2), 0);
    ck_assert_int_eq(cs_monitor_init(live, 2), 0);
    live->bus = &bus;
    cs_trace_writer *tw = cs_trace_open(path, err, sizeof err);
    ck_assert_msg(tw != NULL, "%s", err);
    cs_bus_subscribe(&bus, cs_monitor_sink(live));
    cs_bus_subscribe(&bus, cs_trace_sink(tw));
    cs_event run = {.type = CS_EV_RUN, .rank = -1, .world = 2, .engine = "thread",
                    .send_mode = "rendezvous", .text = "d.lua", .source = record_source};
    cs_bus_emit(&bus, &run);
    static const uint64_t one[] = {1};
    for (int k = 0; k < 2; k++) {
        cs_event p = {.type = CS_EV_POST, .rank = k, .req = 1, .op = CS_OP_SEND, .peer = 1 - k,
                      .bytes = 16, .ndim = 1, .shape = {4}, .line = 19};
        cs_bus_emit(&bus, &p);
    }
    for (int k = 0; k < 2; k++) {
        cs_event b = {.type = CS_EV_BLOCK, .rank = k, .reqs = one, .nreqs = 1, .line = 19};
        cs_bus_emit(&bus, &b);
    }
    ck_assert_int_eq(cs_trace_close(tw), 0);
    live->bus = NULL;
    cs_bus_destroy(&bus);
}

static void setup(void) {
    snprintf(path, sizeof path, "/tmp/check_replay.%d.jsonl", (int)getpid());
}

static void teardown(void) { unlink(path); }

START_TEST(test_replay_equals_live) {
    cs_monitor live, again;
    cs_replay rp;
    char err[256];
    record(&live);
    ck_assert(live.deadlocked);
    ck_assert_int_eq(cs_replay_load(&rp, path, err, sizeof err), 0);
    ck_assert_int_eq(rp.n, 6); /* run, 2 posts, 2 blocks, the verdict */
    ck_assert_int_eq(rp.world, 2);
    ck_assert_str_eq(rp.script, "d.lua");
    /* the script's text comes back byte for byte (quotes, escapes, UTF-8) */
    ck_assert_ptr_nonnull(rp.source);
    ck_assert_str_eq(rp.source, record_source);
    ck_assert(!rp.cut);
    ck_assert_int_eq(cs_replay_fold(&rp, (size_t)-1, &again), 0);
    ck_assert(again.deadlocked);
    ck_assert_str_eq(again.verdict, live.verdict);
    for (int k = 0; k < 2; k++) ck_assert_int_eq(again.ranks[k].state, live.ranks[k].state);
    cs_monitor_destroy(&again);
    /* back in time: before the second block nobody is stuck yet */
    ck_assert_int_eq(cs_replay_fold(&rp, 4, &again), 0);
    ck_assert(!again.deadlocked);
    ck_assert_int_eq(again.ranks[0].state, CS_RS_BLOCKED);
    ck_assert_int_eq(again.ranks[1].state, CS_RS_RUNNING);
    cs_monitor_destroy(&again);
    cs_monitor_destroy(&live);
    cs_replay_free(&rp);
}
END_TEST

/* --at: an event's number, or a rank's first event on a line */
START_TEST(test_open_at) {
    cs_monitor live;
    cs_replay rp;
    cs_replay_at at;
    char err[256];
    bool found;
    static const char *const refused[] = {"", "0", "-1", "x", "3x", "1:", ":3", "0:0", "-1:3",
                                          "1:2:3", "1: 2", "99999999999999999999"};
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++)
        ck_assert_msg(!cs_replay_at_parse(refused[i], &at), "'%s' was taken", refused[i]);
    record(&live);
    ck_assert_int_eq(cs_replay_load(&rp, path, err, sizeof err), 0);
    /* run, post 0, post 1, block 0, block 1, the verdict: rank 1's first
     * event on line 19 is its post, the third */
    ck_assert(cs_replay_at_parse("1:19", &at));
    ck_assert_int_eq(at.rank, 1);
    ck_assert_int_eq(at.line, 19);
    ck_assert_int_eq(cs_replay_at_events(&rp, &at, &found), 3);
    ck_assert(found);
    ck_assert(cs_replay_at_parse("0:19", &at));
    ck_assert_int_eq(cs_replay_at_events(&rp, &at, &found), 2);
    ck_assert(found);
    ck_assert(cs_replay_at_parse("1:20", &at)); /* never reached: the end */
    ck_assert_int_eq(cs_replay_at_events(&rp, &at, &found), 6);
    ck_assert(!found);
    ck_assert(cs_replay_at_parse("4", &at));
    ck_assert_int_eq(at.event, 4);
    ck_assert_int_eq(at.line, 0);
    ck_assert_int_eq(cs_replay_at_events(&rp, &at, &found), 4);
    ck_assert(found);
    ck_assert(cs_replay_at_parse("99", &at));
    ck_assert_int_eq(cs_replay_at_events(&rp, &at, &found), 6);
    ck_assert(!found);
    at = (cs_replay_at){.event = -1}; /* --end */
    ck_assert_int_eq(cs_replay_at_events(&rp, &at, &found), 6);
    ck_assert(found);
    cs_monitor_destroy(&live);
    cs_replay_free(&rp);
}
END_TEST

static int seen;
static void count(void *ud, const cs_event *ev) {
    (void)ud, (void)ev;
    seen++;
}

START_TEST(test_feed_sinks) {
    cs_monitor live, again;
    cs_replay rp;
    char err[256];
    record(&live);
    ck_assert_int_eq(cs_replay_load(&rp, path, err, sizeof err), 0);
    cs_sink s = {count, NULL};
    seen = 0;
    ck_assert_int_eq(cs_replay_feed(&rp, 3, &again, &s, 1), 0);
    ck_assert_int_eq(seen, 3);
    cs_monitor_destroy(&again);
    cs_monitor_destroy(&live);
    cs_replay_free(&rp);
}
END_TEST

static void write_file(const char *text) {
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

START_TEST(test_malformed_line) {
    cs_monitor live;
    record(&live);
    cs_monitor_destroy(&live);
    FILE *f = fopen(path, "a");
    fputs("{\"type\":\"post\"}\n", f);
    fclose(f);
    cs_replay rp;
    char err[512], want[128];
    ck_assert_int_eq(cs_replay_load(&rp, path, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s:7: ", path);
    ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "%s", err);
    ck_assert_ptr_null(rp.ev);
}
END_TEST

START_TEST(test_cut_trace) {
    cs_monitor live, again;
    record(&live);
    cs_monitor_destroy(&live);
    FILE *f = fopen(path, "a");
    fputs("{\"type\":\"exit\",\"ra", f);
    fclose(f);
    cs_replay rp;
    char err[512];
    ck_assert_int_eq(cs_replay_load(&rp, path, err, sizeof err), 0);
    ck_assert(rp.cut);
    ck_assert_int_eq(rp.n, 6);
    ck_assert_ptr_nonnull(strstr(err, ":7: trace cut off mid-event"));
    ck_assert_int_eq(cs_replay_fold(&rp, rp.n, &again), 0);
    ck_assert(again.deadlocked);
    cs_monitor_destroy(&again);
    cs_replay_free(&rp);
}
END_TEST

/* The status the events imply, as replay gives it and exports draw it:
 * the deadlock's 3 at the end, 1 before it (both ranks still running) and
 * for a finished run cut off mid-event. */
START_TEST(test_status) {
    cs_monitor live, m;
    cs_replay rp;
    char err[512], why[200];
    record(&live);
    cs_monitor_destroy(&live);
    ck_assert_int_eq(cs_replay_load(&rp, path, err, sizeof err), 0);
    ck_assert_int_eq(cs_replay_fold(&rp, rp.n, &m), 0);
    ck_assert_int_eq(cs_replay_status(&rp, rp.n, &m, why, sizeof why), 3);
    ck_assert_str_eq(why, "");
    cs_monitor_destroy(&m);
    ck_assert_int_eq(cs_replay_fold(&rp, 3, &m), 0);
    ck_assert_int_eq(cs_replay_status(&rp, 3, &m, why, sizeof why), 1);
    ck_assert_str_eq(why, "the first 3 events end before the run did: 2 ranks had not finished");
    cs_monitor_destroy(&m);
    cs_replay_free(&rp);

    write_file("{\"type\":\"run\",\"format\":\"commsim-trace\",\"version\":1,\"rank\":-1,\"seq\":0,"
               "\"t\":0,\"world\":1,\"engine\":\"thread\",\"send_mode\":\"rendezvous\",\"seed\":\"0\","
               "\"script\":\"x.lua\"}\n{\"type\":\"exit\",\"rank\":0,\"seq\":0,\"t\":0.1,\"status\":0}\n");
    ck_assert_int_eq(cs_replay_load(&rp, path, err, sizeof err), 0);
    ck_assert_int_eq(cs_replay_fold(&rp, rp.n, &m), 0);
    ck_assert_int_eq(cs_replay_status(&rp, rp.n, &m, why, sizeof why), 0);
    cs_monitor_destroy(&m);
    ck_assert_int_eq(cs_replay_fold(&rp, 1, &m), 0);
    ck_assert_int_eq(cs_replay_status(&rp, 1, &m, why, sizeof why), 1);
    ck_assert_str_eq(why, "the first event ends before the run did: 1 rank had not finished");
    cs_monitor_destroy(&m);
    rp.cut = true; /* as if the writer died mid-line after the exit */
    ck_assert_int_eq(cs_replay_fold(&rp, rp.n, &m), 0);
    ck_assert_int_eq(cs_replay_status(&rp, rp.n, &m, why, sizeof why), 1);
    ck_assert_str_eq(why, "");
    cs_monitor_destroy(&m);
    cs_replay_free(&rp);
}
END_TEST

/* A header without the script's text (an older trace, or a script too long
 * to record) still loads: replay then looks for the file. */
START_TEST(test_header_without_source) {
    cs_replay rp;
    char err[512];
    write_file("{\"type\":\"run\",\"format\":\"commsim-trace\",\"version\":1,\"rank\":-1,\"seq\":0,"
               "\"t\":0,\"world\":1,\"engine\":\"thread\",\"send_mode\":\"rendezvous\",\"seed\":\"0\","
               "\"script\":\"x.lua\"}\n{\"type\":\"exit\",\"rank\":0,\"seq\":0,\"t\":0.1,\"status\":0}\n");
    ck_assert_msg(cs_replay_load(&rp, path, err, sizeof err) == 0, "%s", err);
    ck_assert_str_eq(rp.script, "x.lua");
    ck_assert_ptr_null(rp.source);
    cs_replay_free(&rp);
}
END_TEST

START_TEST(test_not_a_trace) {
    cs_replay rp;
    char err[512];
    write_file("");
    ck_assert_int_eq(cs_replay_load(&rp, path, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "empty trace"));
    ck_assert_int_eq(cs_replay_load(&rp, "/nonexistent/t.jsonl", err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "/nonexistent/t.jsonl"));
}
END_TEST

int main(void) {
    Suite *s = suite_create("replay");
    TCase *tc = tcase_create("replay");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_replay_equals_live);
    tcase_add_test(tc, test_feed_sinks);
    tcase_add_test(tc, test_open_at);
    tcase_add_test(tc, test_malformed_line);
    tcase_add_test(tc, test_cut_trace);
    tcase_add_test(tc, test_not_a_trace);
    tcase_add_test(tc, test_header_without_source);
    tcase_add_test(tc, test_status);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
