/* check_outcome.c -- the structured outcome, for every verdict class: real
 * runs of scripts (thread engine) and replays of their traces, serialised
 * with --report json and read back with jansson; kinds a script cannot
 * produce in this process (a rank process dying, an interrupt, a trace cut
 * short) from the events that record them. And allocation failure: loud. */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launch.h"
#include "outcome.h"
#include "replay.h"
#include "report.h"
#include "xalloc.h"
#include "run_suite.h"

static char path_buf[1024];

static const char *script(const char *rel) {
    const char *top = getenv("top_srcdir");
    snprintf(path_buf, sizeof path_buf, "%s/%s", top ? top : ".", rel);
    return path_buf;
}

/* A run's JSON outcome, parsed; its exit status in *status. */
static json_t *run_json(cs_run_opts *o, int *status) {
    FILE *out = tmpfile(), *err = tmpfile();
    ck_assert_ptr_nonnull(out);
    o->report = CS_REPORT_JSON;
    o->out = out;
    o->err = err;
    if (!o->mem_limit) o->mem_limit = CS_DEFAULT_MEM_LIMIT;
    if (!o->step_limit) o->step_limit = CS_DEFAULT_STEP_LIMIT;
    if (!o->timeout) o->timeout = 30;
    o->rank = -1;
    *status = cs_launch_run(o);
    rewind(out);
    json_error_t je;
    json_t *doc = json_loadf(out, 0, &je);
    ck_assert_msg(doc, "not one JSON document: %s (line %d)", je.text, je.line);
    /* exactly one document: nothing after it */
    int c;
    while ((c = fgetc(out)) == ' ' || c == '\n') {}
    ck_assert_int_eq(c, EOF);
    fclose(out);
    fclose(err);
    return doc;
}

static const char *str(json_t *doc, const char *key) {
    json_t *v = json_object_get(doc, key);
    ck_assert_msg(v != NULL, "no field '%s'", key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static json_int_t num(json_t *doc, const char *key) {
    json_t *v = json_object_get(doc, key);
    ck_assert_msg(json_is_integer(v), "field '%s' is not an integer", key);
    return json_integer_value(v);
}

/* The fields every outcome has, and its kind and status. */
static void check_common(json_t *doc, int status, const char *kind, int world) {
    ck_assert_int_eq(num(doc, "version"), CS_OUTCOME_VERSION);
    ck_assert_int_eq(num(doc, "status"), status);
    ck_assert_str_eq(str(doc, "kind"), kind);
    ck_assert_str_eq(str(doc, "verdict"), cs_outcome_word(status));
    ck_assert_int_eq(num(doc, "world"), world);
    ck_assert(json_is_array(json_object_get(doc, "operations")));
    ck_assert(json_is_array(json_object_get(doc, "pitfalls")));
    ck_assert(json_is_array(json_object_get(doc, "output")));
    json_t *ranks = json_object_get(doc, "ranks");
    ck_assert_int_eq((int)json_array_size(ranks), world);
    json_t *counts = json_object_get(doc, "counts");
    ck_assert(json_is_integer(json_object_get(counts, "messages")));
    ck_assert(json_is_integer(json_object_get(counts, "bytes")));
    cs_outcome_kind k;
    ck_assert(cs_outcome_kind_parse(kind, &k));
    if (cs_outcome_kind_is_deadlock(k) || k == CS_OUT_COLL_MISMATCH || k == CS_OUT_GROUP_MISMATCH) {
        ck_assert_ptr_nonnull(str(doc, "explanation"));
        ck_assert_ptr_nonnull(str(doc, "fix"));
        ck_assert_ptr_nonnull(str(doc, "headline"));
        ck_assert_ptr_nonnull(str(doc, "report"));
        ck_assert_int_gt((int)json_array_size(json_object_get(doc, "operations")), 0);
    }
}

/* Operation i: its rank, op, peer (-1: any, -3: null) and line. */
static void check_op(json_t *doc, size_t i, int rank, const char *op, int peer, int line) {
    json_t *o = json_array_get(json_object_get(doc, "operations"), i);
    ck_assert_msg(o != NULL, "no operation %zu", i);
    ck_assert_int_eq(num(o, "rank"), rank);
    ck_assert_str_eq(str(o, "op"), op);
    json_t *p = json_object_get(o, "peer");
    if (peer == -1) ck_assert_str_eq(json_string_value(p), "any");
    else if (peer == -3) ck_assert(json_is_null(p));
    else ck_assert_int_eq(json_integer_value(p), peer);
    ck_assert_int_eq(num(json_object_get(o, "site"), "line"), line);
}

/* Run rel with opts, check the common fields; the document. */
static json_t *expect_run(cs_run_opts *o, const char *rel, int status, const char *kind, int world) {
    o->script = script(rel);
    int got;
    json_t *doc = run_json(o, &got);
    ck_assert_msg(got == status, "%s: status %d, expected %d", rel, got, status);
    check_common(doc, status, kind, world);
    return doc;
}

/* ---- every verdict class from a real run */

START_TEST(test_ok_with_output) {
    cs_run_opts o = {0};
    json_t *doc = expect_run(&o, "tests/cli/report/hello_pitfall.lua", 0, "ok", 2);
    json_t *out = json_object_get(doc, "output");
    ck_assert_int_eq((int)json_array_size(out), 2);
    bool seen[2] = {false, false};
    for (size_t i = 0; i < 2; i++) {
        json_t *l = json_array_get(out, i);
        int r = (int)num(l, "rank");
        ck_assert(r == 0 || r == 1);
        char want[32];
        snprintf(want, sizeof want, "hello from\t%d", r);
        ck_assert_str_eq(str(l, "text"), want);
        seen[r] = true;
    }
    ck_assert(seen[0] && seen[1]);
    json_t *pits = json_object_get(doc, "pitfalls");
    ck_assert_int_eq((int)json_array_size(pits), 1);
    json_t *p = json_array_get(pits, 0);
    ck_assert_str_eq(str(p, "kind"), "write_while_sending");
    ck_assert_int_eq(num(json_object_get(p, "site"), "line"), 7);
    ck_assert_int_eq(num(json_object_get(p, "other_site"), "line"), 6);
    ck_assert_int_eq(num(p, "peer"), 1);
    ck_assert(json_is_null(json_object_get(doc, "explanation")));
    ck_assert_str_eq(str(json_array_get(json_object_get(doc, "ranks"), 0), "state"), "done");
    json_decref(doc);
}
END_TEST

START_TEST(test_deadlock_sends) {
    cs_run_opts o = {0};
    json_t *doc = expect_run(&o, "lessons/02-point-to-point/deadlock.lua", 3, "deadlock_sends", 2);
    check_op(doc, 0, 0, "send", 1, 19);
    check_op(doc, 1, 1, "send", 0, 19);
    json_t *op = json_array_get(json_object_get(doc, "operations"), 0);
    ck_assert_int_eq(num(op, "bytes"), 16);
    ck_assert_str_eq(str(op, "dtype"), "float32");
    ck_assert_int_eq(json_integer_value(json_array_get(json_object_get(op, "shape"), 0)), 4);
    ck_assert_int_eq(num(op, "tag"), 0);
    ck_assert_ptr_nonnull(strstr(str(doc, "explanation"), "every blocked rank is sending"));
    ck_assert_ptr_nonnull(strstr(str(doc, "fix"), "reorder"));
    ck_assert_ptr_null(strstr(str(doc, "explanation"), "why:")); /* the words only */
    ck_assert_str_eq(str(json_array_get(json_object_get(doc, "ranks"), 1), "state"), "deadlocked");
    json_decref(doc);
}
END_TEST

START_TEST(test_deadlock_eager_limit) {
    cs_run_opts o = {0};
    json_t *doc = expect_run(&o, "lessons/02-point-to-point/eager_limit.lua", 3,
                             "deadlock_eager_limit", 2);
    ck_assert_ptr_nonnull(strstr(str(doc, "note"), "works for small tensors only"));
    ck_assert_int_gt((int)json_array_size(json_object_get(doc, "output")), 0);
    json_decref(doc);
}
END_TEST

START_TEST(test_deadlock_recvs_tag_finished) {
    cs_run_opts o = {0};
    json_t *doc = expect_run(&o, "tests/cli/report/recvs.lua", 3, "deadlock_recvs", 2);
    check_op(doc, 0, 0, "recv", 1, 4);
    json_decref(doc);
    doc = expect_run(&o, "tests/cli/report/tag.lua", 3, "deadlock_tag", 2);
    check_op(doc, 0, 0, "send", 1, 5);
    check_op(doc, 1, 1, "recv", 0, 7);
    ck_assert_int_eq(num(json_array_get(json_object_get(doc, "operations"), 1), "tag"), 2);
    json_decref(doc);
    doc = expect_run(&o, "tests/cli/report/finished_peer.lua", 3, "deadlock_finished_peer", 2);
    check_op(doc, 0, 1, "recv", 0, 5);
    ck_assert_ptr_nonnull(strstr(str(doc, "fix"), "mismatched send/recv"));
    json_decref(doc);
}
END_TEST

START_TEST(test_deadlock_cycle_self_any) {
    cs_run_opts o = {0};
    json_t *doc = expect_run(&o, "tests/replay/scripts/wait_cycle.lua", 3, "deadlock_cycle", 3);
    json_decref(doc);
    doc = expect_run(&o, "tests/replay/scripts/self_recv.lua", 3, "deadlock_self", 2);
    check_op(doc, 0, 1, "recv", 1, 5);
    ck_assert_str_eq(str(json_array_get(json_object_get(doc, "pitfalls"), 0), "kind"), "self_recv");
    json_decref(doc);
    doc = expect_run(&o, "tests/replay/scripts/any_orphan.lua", 3, "deadlock_any_source", 3);
    check_op(doc, 0, 0, "recv", -1, 7); /* the third receive: two ranks sent one each */
    json_decref(doc);
}
END_TEST

START_TEST(test_deadlock_collective) {
    cs_run_opts o = {0};
    json_t *doc = expect_run(&o, "lessons/03-collectives/mismatch.lua", 3, "deadlock_collective", 4);
    json_t *ops = json_object_get(doc, "operations");
    ck_assert_int_eq((int)json_array_size(ops), 4);
    for (int i = 0; i < 4; i++) {
        json_t *op = json_array_get(ops, (size_t)i);
        ck_assert_str_eq(str(op, "op"), "all_reduce");
        ck_assert_str_eq(str(op, "reduce_op"), "SUM");
        ck_assert_int_eq(num(op, "count"), 4);
        ck_assert(json_is_true(json_object_get(op, "missing")) == (num(op, "rank") == 3));
    }
    json_decref(doc);
}
END_TEST

START_TEST(test_collective_and_group_mismatch) {
    cs_run_opts o = {0};
    json_t *doc = expect_run(&o, "tests/cli/report/coll_mismatch.lua", 2, "collective_mismatch", 2);
    json_t *ops = json_object_get(doc, "operations");
    ck_assert_int_eq((int)json_array_size(ops), 2);
    ck_assert_int_eq(num(json_array_get(ops, 0), "count") + num(json_array_get(ops, 1), "count"), 12);
    ck_assert_ptr_nonnull(strstr(str(doc, "headline"), "collective mismatch"));
    json_decref(doc);
    doc = expect_run(&o, "tests/cli/report/group_mismatch.lua", 2, "group_mismatch", 3);
    check_op(doc, 0, (int)num(json_array_get(json_object_get(doc, "operations"), 0), "rank"),
             "all_reduce", -3, 9);
    json_decref(doc);
}
END_TEST

START_TEST(test_errors) {
    cs_run_opts o = {0};
    json_t *doc = expect_run(&o, "tests/cli/scripts/error.lua", 2, "script_error", 2);
    ck_assert_ptr_nonnull(strstr(str(doc, "explanation"), "attempt to index a nil value"));
    bool found = false;
    json_t *ranks = json_object_get(doc, "ranks");
    for (size_t i = 0; i < json_array_size(ranks); i++) {
        json_t *r = json_array_get(ranks, i);
        if (!str(r, "error")) continue;
        ck_assert_str_eq(str(r, "state"), "failed");
        ck_assert_int_eq(num(json_object_get(r, "error_site"), "line"), 6);
        found = true;
    }
    ck_assert(found);
    json_decref(doc);
    doc = expect_run(&o, "tests/cli/scripts/mismatch.lua", 2, "size_mismatch", 2);
    json_decref(doc);
    o.strict = true;
    doc = expect_run(&o, "tests/replay/scripts/never_waited.lua", 2, "strict", 2);
    json_decref(doc);
    o.send_mode = "eager";
    doc = expect_run(&o, "tests/replay/scripts/unreceived.lua", 2, "strict", 2);
    ck_assert_ptr_nonnull(strstr(str(doc, "run_error"), "--strict"));
    json_decref(doc);
}
END_TEST

START_TEST(test_unreceived_pitfall) {
    cs_run_opts o = {.send_mode = "eager"};
    json_t *doc = expect_run(&o, "tests/replay/scripts/unreceived.lua", 0, "ok", 2);
    json_t *p = json_array_get(json_object_get(doc, "pitfalls"), 0);
    ck_assert_str_eq(str(p, "kind"), "unreceived");
    ck_assert_int_eq(num(p, "peer"), 1);
    ck_assert_int_eq(num(p, "tag"), 7);
    ck_assert_int_eq(num(json_object_get(doc, "counts"), "unreceived"), 3);
    json_decref(doc);
}
END_TEST

START_TEST(test_every_rank_pitfall) {
    cs_run_opts o = {0};
    json_t *doc = expect_run(&o, "tests/replay/scripts/pitfalls_all.lua", 0, "ok", 2);
    static const char *const kinds[] = {"write_while_sending", "read_while_receiving",
                                        "write_while_receiving", "never_waited"};
    json_t *pits = json_object_get(doc, "pitfalls");
    for (size_t k = 0; k < 4; k++) {
        bool found = false;
        for (size_t i = 0; i < json_array_size(pits); i++)
            found |= strcmp(str(json_array_get(pits, i), "kind"), kinds[k]) == 0;
        ck_assert_msg(found, "no %s pitfall", kinds[k]);
    }
    json_decref(doc);
}
END_TEST

START_TEST(test_timeout_and_budgets) {
    cs_run_opts o = {.timeout = 1};
    json_t *doc = expect_run(&o, "tests/cli/scripts/sleeper.lua", 4, "timeout", 2);
    ck_assert_ptr_nonnull(strstr(str(doc, "run_error"), "did not finish within 1 s"));
    json_decref(doc);
    o = (cs_run_opts){.step_limit = 1000000};
    doc = expect_run(&o, "tests/cli/scripts/loop.lua", 4, "budget", 2);
    ck_assert_ptr_nonnull(strstr(str(doc, "explanation"), "instruction budget exceeded"));
    json_decref(doc);
    o = (cs_run_opts){.mem_limit = 64u << 20};
    doc = expect_run(&o, "tests/cli/scripts/membomb.lua", 4, "budget", 1);
    ck_assert_ptr_nonnull(strstr(str(doc, "explanation"), "memory limit exceeded"));
    json_decref(doc);
}
END_TEST

/* ---- replay == live: the same document from the trace */

static char *replay_json(const char *trace, int *status) {
    char err[600];
    cs_replay rp;
    ck_assert_msg(cs_replay_load(&rp, trace, err, sizeof err) == 0, "%s", err);
    cs_output out = {0};
    cs_sink sink = cs_output_sink(&out);
    cs_monitor m;
    ck_assert_int_eq(cs_replay_feed(&rp, rp.n, &m, &sink, 1), 0);
    *status = cs_report_status(&m);
    cs_outcome o;
    cs_outcome_build(&o, &m, *status, &out);
    char *json = cs_outcome_json(&o);
    cs_outcome_free(&o);
    cs_output_free(&out);
    cs_monitor_destroy(&m);
    cs_replay_free(&rp);
    return json;
}

START_TEST(test_replay_equals_live) {
    static const char *const scripts[] = {
        "lessons/02-point-to-point/deadlock.lua", "lessons/03-collectives/mismatch.lua",
        "tests/cli/report/coll_mismatch.lua",      "tests/cli/report/hello_pitfall.lua",
        "tests/replay/scripts/pitfalls_all.lua",   "tests/cli/scripts/error.lua",
        "tests/replay/scripts/partial.lua",
    };
    char trace[] = "/tmp/check_outcome.XXXXXX";
    int fd = mkstemp(trace);
    ck_assert_int_ge(fd, 0);
    for (size_t i = 0; i < sizeof scripts / sizeof *scripts; i++) {
        cs_run_opts o = {.trace = trace, .timeout = i == 6 ? 2 : 0};
        o.script = script(scripts[i]);
        int live_status;
        json_t *live = run_json(&o, &live_status);
        int status;
        char *again = replay_json(trace, &status);
        ck_assert_int_eq(status, live_status);
        json_error_t je;
        json_t *doc = json_loads(again, 0, &je);
        ck_assert_ptr_nonnull(doc);
        /* the output's order across ranks is the trace's: compare whole documents */
        ck_assert_msg(json_equal(doc, live), "%s: replay differs from live:\n%s", scripts[i], again);
        json_decref(doc);
        json_decref(live);
        free(again);
    }
    close(fd);
    unlink(trace);
}
END_TEST

/* ---- what only events can say here */

static cs_monitor mon;

static void fold(cs_event ev) { ck_assert_int_eq(cs_monitor_fold(&mon, &ev), 0); }

static json_t *outcome_of(int status) {
    cs_outcome o;
    cs_outcome_build(&o, &mon, status, NULL);
    char *json = cs_outcome_json(&o);
    cs_outcome_free(&o);
    json_t *doc = json_loads(json, 0, NULL);
    ck_assert_ptr_nonnull(doc);
    free(json);
    return doc;
}

static void start(int world) {
    ck_assert_int_eq(cs_monitor_init(&mon, world), 0);
    fold((cs_event){.type = CS_EV_RUN, .rank = -1, .world = world, .engine = "tcp",
                    .send_mode = "rendezvous", .text = "t.lua"});
}

START_TEST(test_rank_died) {
    start(3);
    fold((cs_event){.type = CS_EV_POST, .rank = 1, .req = 1, .op = CS_OP_RECV, .peer = 2,
                    .bytes = 16, .dtype = CS_FLOAT32, .ndim = 1, .shape = {4}, .line = 11});
    fold((cs_event){.type = CS_EV_ERROR, .rank = 2, .status = CS_END_DIED,
                    .text = "rank 2 died (signal 9) while rank 1 waited to receive from it"});
    json_t *doc = outcome_of(cs_report_status(&mon));
    check_common(doc, CS_END_DIED, "rank_died", 3);
    ck_assert_ptr_nonnull(strstr(str(doc, "explanation"), "rank 2 died"));
    json_t *r2 = json_array_get(json_object_get(doc, "ranks"), 2);
    ck_assert_str_eq(str(r2, "state"), "failed");
    ck_assert_ptr_nonnull(strstr(str(r2, "waiters"), "rank 1 was waiting on it"));
    json_decref(doc);
    cs_monitor_destroy(&mon);
}
END_TEST

START_TEST(test_interrupted_and_incomplete) {
    start(2);
    fold((cs_event){.type = CS_EV_ERROR, .rank = -1, .status = CS_END_QUIT,
                    .text = "interrupted (SIGINT or SIGTERM)"});
    json_t *doc = outcome_of(cs_report_status(&mon));
    check_common(doc, CS_END_QUIT, "interrupted", 2);
    ck_assert_str_eq(str(doc, "run_error"), "interrupted (SIGINT or SIGTERM)");
    json_decref(doc);
    cs_monitor_destroy(&mon);
    /* a trace that ends before the run: replay's status 1 */
    start(2);
    doc = outcome_of(1);
    check_common(doc, 1, "incomplete", 2);
    json_decref(doc);
    cs_monitor_destroy(&mon);
}
END_TEST

/* Where the run's end found each rank it stopped, from the events alone: a
 * wait it woke (the unblock leaves a request open), a rank that died asleep
 * (no unblock: a rank process killed in its wait), one whose wait had ended
 * before (running where its exit says), and one whose exit says nowhere. */
START_TEST(test_where_the_end_found_them) {
    start(4);
    for (int k = 0; k < 3; k++)
        fold((cs_event){.type = CS_EV_POST, .rank = k, .req = 1, .op = CS_OP_RECV, .peer = 3,
                        .bytes = 16, .dtype = CS_FLOAT32, .ndim = 1, .shape = {4}, .line = 5 + k});
    for (int k = 0; k < 3; k++)
        fold((cs_event){.type = CS_EV_BLOCK, .rank = k, .reqs = (uint64_t[]){1}, .nreqs = 1,
                        .line = 5 + k});
    /* rank 2's receive is served: its wait ends whole */
    fold((cs_event){.type = CS_EV_POST, .rank = 3, .req = 1, .op = CS_OP_SEND, .peer = 2,
                    .bytes = 16, .dtype = CS_FLOAT32, .ndim = 1, .shape = {4}, .line = 30});
    fold((cs_event){.type = CS_EV_MATCH, .rank = 2, .req = 1, .op = CS_OP_RECV, .peer = 3,
                    .peer_req = 1, .bytes = 16});
    fold((cs_event){.type = CS_EV_COMPLETE, .rank = 2, .req = 1, .op = CS_OP_RECV});
    fold((cs_event){.type = CS_EV_COMPLETE, .rank = 3, .req = 1, .op = CS_OP_SEND});
    fold((cs_event){.type = CS_EV_UNBLOCK, .rank = 2, .line = 7});
    fold((cs_event){.type = CS_EV_ERROR, .rank = -1, .status = CS_END_TIMEOUT,
                    .text = "timeout: the run did not finish within 1 s (--timeout)"});
    fold((cs_event){.type = CS_EV_UNBLOCK, .rank = 0, .line = 5});
    fold((cs_event){.type = CS_EV_EXIT, .rank = 0, .status = CS_RANK_ABORTED, .line = 5});
    fold((cs_event){.type = CS_EV_EXIT, .rank = 1, .status = CS_RANK_ABORTED}); /* killed asleep */
    fold((cs_event){.type = CS_EV_EXIT, .rank = 2, .status = CS_RANK_ABORTED, .line = 9});
    fold((cs_event){.type = CS_EV_EXIT, .rank = 3, .status = CS_RANK_ABORTED});
    json_t *doc = outcome_of(cs_report_status(&mon));
    check_common(doc, CS_END_TIMEOUT, "timeout", 4);
    json_t *ranks = json_object_get(doc, "ranks");
    static const char *const stop[] = {
        "in recv from rank 3 (tag 0, float32 [4], 16 bytes) at t.lua:5",
        "in recv from rank 3 (tag 0, float32 [4], 16 bytes) at t.lua:6",
        "running at t.lua:9", NULL};
    static const int line[] = {5, 6, 9, 0};
    for (int k = 0; k < 4; k++) {
        json_t *r = json_array_get(ranks, (size_t)k);
        ck_assert_str_eq(str(r, "state"), "aborted");
        json_t *site = json_object_get(r, "stop_site");
        if (stop[k]) {
            ck_assert_str_eq(str(r, "stop"), stop[k]);
            ck_assert_int_eq(num(site, "line"), line[k]);
            ck_assert_str_eq(str(site, "file"), "t.lua");
        } else {
            ck_assert_ptr_null(str(r, "stop"));
            ck_assert(json_is_null(site));
        }
    }
    json_decref(doc);
    cs_monitor_destroy(&mon);
}
END_TEST

/* A rank stopped in its wait before it blocked (spinning or polling: the
 * wait event and no block) was in that wait, not running; one whose wait was
 * served before the end was running. Only the outcome knows which was waiting. */
START_TEST(test_stopped_before_it_blocked) {
    start(3);
    for (int k = 0; k < 2; k++) {
        fold((cs_event){.type = CS_EV_POST, .rank = k, .req = 1, .op = CS_OP_RECV, .peer = 2,
                        .bytes = 16, .dtype = CS_FLOAT32, .ndim = 1, .shape = {4}, .line = 5 + k});
        fold((cs_event){.type = CS_EV_WAIT, .rank = k, .reqs = (uint64_t[]){1}, .nreqs = 1,
                        .line = 5 + k});
    }
    /* rank 1's receive is served while it spins */
    fold((cs_event){.type = CS_EV_POST, .rank = 2, .req = 1, .op = CS_OP_SEND, .peer = 1,
                    .bytes = 16, .dtype = CS_FLOAT32, .ndim = 1, .shape = {4}, .line = 30});
    fold((cs_event){.type = CS_EV_MATCH, .rank = 1, .req = 1, .op = CS_OP_RECV, .peer = 2,
                    .peer_req = 1, .bytes = 16});
    fold((cs_event){.type = CS_EV_COMPLETE, .rank = 1, .req = 1, .op = CS_OP_RECV});
    fold((cs_event){.type = CS_EV_COMPLETE, .rank = 2, .req = 1, .op = CS_OP_SEND});
    fold((cs_event){.type = CS_EV_ERROR, .rank = -1, .status = CS_END_TIMEOUT,
                    .text = "timeout: the run did not finish within 1 s (--timeout)"});
    fold((cs_event){.type = CS_EV_EXIT, .rank = 0, .status = CS_RANK_ABORTED, .line = 5});
    fold((cs_event){.type = CS_EV_EXIT, .rank = 1, .status = CS_RANK_ABORTED, .line = 8});
    fold((cs_event){.type = CS_EV_EXIT, .rank = 2, .status = CS_RANK_ABORTED, .line = 31});
    cs_outcome o;
    cs_outcome_build(&o, &mon, cs_report_status(&mon), NULL);
    ck_assert_str_eq(o.ranks[0].stop, "in recv from rank 2 (tag 0, float32 [4], 16 bytes) at t.lua:5");
    ck_assert_int_eq(o.ranks[0].stop_line, 5);
    ck_assert(o.ranks[0].stop_waiting);
    ck_assert_str_eq(o.ranks[1].stop, "running at t.lua:8");
    ck_assert(!o.ranks[1].stop_waiting);
    ck_assert_str_eq(o.ranks[2].stop, "running at t.lua:31");
    ck_assert(!o.ranks[2].stop_waiting);
    cs_outcome_free(&o);
    cs_monitor_destroy(&mon);
}
END_TEST

START_TEST(test_kind_names) {
    for (int k = 0; k < CS_OUT_NKINDS; k++) {
        cs_outcome_kind back;
        ck_assert(cs_outcome_kind_parse(cs_outcome_kind_name((cs_outcome_kind)k), &back));
        ck_assert_int_eq(back, k);
    }
    ck_assert(!cs_outcome_kind_parse("bogus", &(cs_outcome_kind){0}));
    for (int k = 0; k < CS_PIT_NKINDS; k++)
        ck_assert_str_ne(cs_pitfall_kind_name((cs_pitfall_kind)k), "?");
}
END_TEST

/* A warn event's kind comes from its pitfall field, not from its words; a
 * warn without one (an older trace) is recognised from the text. */
START_TEST(test_pitfall_kind_field) {
    cs_pitfall p;
    for (int k = 0; k < CS_PIT_NKINDS; k++) {
        const char *name = cs_pitfall_kind_name((cs_pitfall_kind)k);
        cs_pitfall_of(&p, 0, 3, "x.lua:3: words that name no kind", name);
        ck_assert_int_eq(p.kind, k);
    }
    /* the field wins over a text that reads like another kind */
    cs_pitfall_of(&p, 0, 3, "x.lua:3: the isend posted here was never waited on", "message_race");
    ck_assert_int_eq(p.kind, CS_PIT_RACE);
    cs_pitfall_of(&p, 0, 3, "x.lua:3: the isend posted here was never waited on", NULL);
    ck_assert_int_eq(p.kind, CS_PIT_NEVER_WAITED);
    cs_pitfall_of(&p, 0, 3, "x.lua:3: the isend posted here was never waited on", "a_newer_kind");
    ck_assert_int_eq(p.kind, CS_PIT_OTHER);
    /* through the monitor, as a replayed trace feeds it */
    start(1);
    fold((cs_event){.type = CS_EV_WARN, .rank = 0, .line = 4, .text = "x.lua:4: plain words",
                    .pitfall = "write_while_receiving"});
    ck_assert_int_eq(mon.npitfalls, 1);
    ck_assert_int_eq(mon.pitfalls[0].kind, CS_PIT_WRITE_RECEIVING);
    cs_monitor_destroy(&mon);
}
END_TEST

/* Output that is not UTF-8 still gives valid JSON. */
START_TEST(test_output_not_utf8) {
    start(1);
    cs_output out = {0};
    cs_sink sink = cs_output_sink(&out);
    cs_event ev = {.type = CS_EV_PRINT, .rank = 0, .text = "a\xff" "b\nsecond"};
    sink.emit(sink.ud, &ev);
    ck_assert_int_eq((int)out.n, 2);
    cs_outcome o;
    cs_outcome_build(&o, &mon, 0, &out);
    char *json = cs_outcome_json(&o);
    json_t *doc = json_loads(json, 0, NULL);
    ck_assert_ptr_nonnull(doc);
    json_t *lines = json_object_get(doc, "output");
    ck_assert_str_eq(str(json_array_get(lines, 0), "text"), "a\xef\xbf\xbd" "b");
    ck_assert_str_eq(str(json_array_get(lines, 1), "text"), "second");
    json_decref(doc);
    free(json);
    cs_outcome_free(&o);
    cs_output_free(&out);
    cs_monitor_destroy(&mon);
}
END_TEST

/* ---- allocation failure ends the run, loudly (the exit status is checked) */

START_TEST(test_oom_in_the_monitor_exits) {
    start(2);
    cs_xalloc_fail_after(1);
    /* the monitor's copy of a post: without it the verdict could be wrong */
    fold((cs_event){.type = CS_EV_POST, .rank = 0, .req = 1, .op = CS_OP_SEND, .peer = 1,
                    .bytes = 4, .line = 3});
    ck_abort_msg("the monitor went on without its request");
}
END_TEST

START_TEST(test_oom_in_the_leftovers_exits) {
    start(2);
    for (uint64_t i = 1; i <= 3; i++)
        fold((cs_event){.type = CS_EV_POST, .rank = 0, .req = i, .op = CS_OP_SEND, .peer = 1,
                        .bytes = 4, .line = (int)i, .eager = true});
    fold((cs_event){.type = CS_EV_EXIT, .rank = 1});
    cs_xalloc_fail_after(1); /* the list of sites of the unreceived messages */
    fold((cs_event){.type = CS_EV_EXIT, .rank = 0});
    ck_abort_msg("the unreceived messages went unreported");
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("outcome");
    TCase *tc = tcase_create("runs");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_ok_with_output);
    tcase_add_test(tc, test_deadlock_sends);
    tcase_add_test(tc, test_deadlock_eager_limit);
    tcase_add_test(tc, test_deadlock_recvs_tag_finished);
    tcase_add_test(tc, test_deadlock_cycle_self_any);
    tcase_add_test(tc, test_deadlock_collective);
    tcase_add_test(tc, test_collective_and_group_mismatch);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_unreceived_pitfall);
    tcase_add_test(tc, test_every_rank_pitfall);
    tcase_add_test(tc, test_timeout_and_budgets);
    tcase_add_test(tc, test_replay_equals_live);
    suite_add_tcase(s, tc);
    tc = tcase_create("events");
    tcase_add_test(tc, test_rank_died);
    tcase_add_test(tc, test_interrupted_and_incomplete);
    tcase_add_test(tc, test_where_the_end_found_them);
    tcase_add_test(tc, test_stopped_before_it_blocked);
    tcase_add_test(tc, test_kind_names);
    tcase_add_test(tc, test_pitfall_kind_field);
    tcase_add_test(tc, test_output_not_utf8);
    tcase_add_exit_test(tc, test_oom_in_the_monitor_exits, 1);
    tcase_add_exit_test(tc, test_oom_in_the_leftovers_exits, 1);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
