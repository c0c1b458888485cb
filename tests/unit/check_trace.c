/* check_trace.c -- trace files: every event type through the writer and back,
 * exact strings and times, write-through, write errors, and the reader's answer
 * to every kind of bad line (cut, malformed, over-long, wrong version, empty). */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace.h"
#include "trace_line.h"
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include "run_suite.h"

/* ---- helpers */

static char path[64];

/* A fresh temporary file name in path; the file exists and is empty. */
static void new_path(void) {
    strcpy(path, "/tmp/check_trace_XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
}

static void put_file(const char *text, size_t len) {
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(text, 1, len, f), len);
    fclose(f);
}

static char *get_file(void) {
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static const char *str_or_null(const char *s) { return s ? s : "(null)"; }

static void assert_str_field(const char *name, const char *a, const char *b) {
    ck_assert_msg((a == NULL) == (b == NULL) && (!a || strcmp(a, b) == 0),
                  "%s: \"%s\" != \"%s\"", name, str_or_null(a), str_or_null(b));
}

/* Every member of cs_event, so a field the codec forgets shows up here. */
static void assert_events_equal(const cs_event *a, const cs_event *b) {
    ck_assert_int_eq(a->type, b->type);
    ck_assert_int_eq(a->rank, b->rank);
    ck_assert_uint_eq(a->seq, b->seq);
    ck_assert_msg(a->t == b->t, "t: %.17g != %.17g", a->t, b->t);
    ck_assert_uint_eq(a->req, b->req);
    ck_assert_int_eq(a->op, b->op);
    ck_assert_int_eq(a->peer, b->peer);
    ck_assert_int_eq(a->tag, b->tag);
    ck_assert_int_eq(a->ctx, b->ctx);
    ck_assert_uint_eq(a->bytes, b->bytes);
    ck_assert_int_eq(a->dtype, b->dtype);
    ck_assert_int_eq(a->ndim, b->ndim);
    for (int i = 0; i < CS_MAX_DIMS; i++) ck_assert_int_eq(a->shape[i], b->shape[i]);
    ck_assert_int_eq(a->line, b->line);
    ck_assert_int_eq(a->eager, b->eager);
    ck_assert_uint_eq(a->peer_req, b->peer_req);
    ck_assert_int_eq(a->nreqs, b->nreqs);
    for (int i = 0; i < a->nreqs; i++) ck_assert_uint_eq(a->reqs[i], b->reqs[i]);
    ck_assert_int_eq(a->any, b->any);
    ck_assert_msg(a->ms == b->ms, "ms: %.17g != %.17g", a->ms, b->ms);
    ck_assert_int_eq(a->begin, b->begin);
    assert_str_field("text", a->text, b->text);
    ck_assert_int_eq(a->status, b->status);
    ck_assert_int_eq(a->world, b->world);
    assert_str_field("engine", a->engine, b->engine);
    assert_str_field("send_mode", a->send_mode, b->send_mode);
    ck_assert_uint_eq(a->seed, b->seed);
}

static void write_events(const cs_event *evs, int n) {
    char err[256];
    cs_trace_writer *w = cs_trace_open(path, err, sizeof err);
    ck_assert_msg(w != NULL, "%s", err);
    cs_sink s = cs_trace_sink(w);
    for (int i = 0; i < n; i++) s.emit(s.ud, &evs[i]);
    ck_assert_ptr_null(cs_trace_error(w));
    ck_assert_int_eq(cs_trace_close(w), 0);
}

/* Read path back and compare with evs; the trace must then end cleanly. */
static void read_back(const cs_event *evs, int n) {
    char err[256];
    cs_event ev;
    cs_trace_reader *r = cs_trace_reader_open(path, err, sizeof err);
    ck_assert_msg(r != NULL, "%s", err);
    for (int i = 0; i < n; i++) {
        int rc = cs_trace_read(r, &ev, err, sizeof err);
        ck_assert_msg(rc == 1, "event %d: rc %d: %s", i, rc, err);
        assert_events_equal(&evs[i], &ev);
    }
    ck_assert_int_eq(cs_trace_read(r, &ev, err, sizeof err), 0);
    ck_assert_int_eq(cs_trace_read(r, &ev, err, sizeof err), 0);
    cs_trace_reader_close(r);
}

/* The error the reader gives for a trace with this content (after its events). */
static int read_error(const char *text, char *err, size_t errlen) {
    cs_event ev;
    int rc;
    put_file(text, strlen(text));
    cs_trace_reader *r = cs_trace_reader_open(path, err, errlen);
    ck_assert_ptr_nonnull(r);
    while ((rc = cs_trace_read(r, &ev, err, errlen)) == 1)
        ;
    cs_trace_reader_close(r);
    return rc;
}

static cs_event run_event(int world) {
    return (cs_event){.type = CS_EV_RUN, .rank = -1, .world = world, .engine = "thread",
                      .send_mode = "rendezvous", .text = "lessons/01/ring.lua", .seed = 42};
}

/* ---- round trips */

static const uint64_t some_reqs[] = {3, 4, 9007199254740993ull};
/* more than the writer's staging ring holds inline: the event goes as a line */
static const uint64_t many_reqs[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};

/* One of every type, with every field of the type set (and a few variants). */
static int sample_events(cs_event *evs) {
    int n = 0;
    evs[n++] = run_event(3);
    evs[n - 1].net = "alpha=10us,bandwidth=1GB/s";
    evs[n++] = (cs_event){.type = CS_EV_POST, .rank = 0, .seq = 0, .t = 0.001, .req = 1,
                          .op = CS_OP_ISEND, .peer = 2, .tag = 7, .ctx = 0, .bytes = 48,
                          .dtype = CS_FLOAT64, .ndim = 2, .shape = {2, 3}, .line = 12,
                          .eager = true};
    evs[n++] = (cs_event){.type = CS_EV_POST, .rank = 2, .seq = 0, .t = 0.0015, .req = 5,
                          .op = CS_OP_IRECV, .peer = CS_ANY_SOURCE, .tag = 7, .ctx = 3, .bytes = 0,
                          .dtype = CS_UINT8, .ndim = 0, .line = 4};
    evs[n++] = (cs_event){.type = CS_EV_POST, .rank = 1, .seq = 0, .t = 0.002, .req = 2,
                          .op = CS_OP_RECV, .peer = 0, .tag = 0, .bytes = 16, .dtype = CS_INT32,
                          .ndim = 4, .shape = {1, 1, 2, 2}, .line = 9};
    evs[n++] = (cs_event){.type = CS_EV_POST, .rank = 1, .seq = 1, .t = 0.002, .req = 3,
                          .op = CS_OP_SEND, .peer = 2, .bytes = 8, .dtype = CS_INT64, .ndim = 1,
                          .shape = {1}, .line = 10};
    evs[n++] = (cs_event){.type = CS_EV_MATCH, .rank = 2, .seq = 1, .t = 0.003, .req = 5,
                          .op = CS_OP_IRECV, .peer = 0, .tag = 7, .ctx = 3, .bytes = 48,
                          .peer_req = 1};
    evs[n++] = (cs_event){.type = CS_EV_COMPLETE, .rank = 2, .seq = 2, .t = 0.004, .req = 5,
                          .op = CS_OP_IRECV, .status = -2};
    evs[n++] = (cs_event){.type = CS_EV_COMPLETE, .rank = 2, .seq = 3, .t = 0.004, .req = 6,
                          .op = CS_OP_ISEND};
    evs[n++] = (cs_event){.type = CS_EV_BLOCK, .rank = 0, .seq = 1, .t = 0.005, .reqs = some_reqs,
                          .nreqs = 3, .any = true, .line = 13};
    evs[n++] = (cs_event){.type = CS_EV_BLOCK, .rank = 1, .seq = 2, .t = 0.005, .reqs = some_reqs,
                          .nreqs = 1, .any = false, .line = 11};
    evs[n++] = (cs_event){.type = CS_EV_UNBLOCK, .rank = 0, .seq = 2, .t = 0.006, .line = 13};
    evs[n++] = (cs_event){.type = CS_EV_COLL, .rank = 0, .seq = 3, .t = 0.007, .text = "all_reduce",
                          .begin = true, .peer = -1, .ctx = 1, .bytes = 40, .line = 20};
    evs[n++] = (cs_event){.type = CS_EV_COLL, .rank = 0, .seq = 4, .t = 0.008, .text = "broadcast",
                          .begin = false, .peer = 2, .ctx = 2, .bytes = 4, .line = 21};
    evs[n++] = (cs_event){.type = CS_EV_COMPUTE, .rank = 1, .seq = 3, .t = 0.009, .ms = 2.5,
                          .begin = true, .line = 30};
    evs[n++] = (cs_event){.type = CS_EV_COMPUTE, .rank = 1, .seq = 4, .t = 0.0115, .ms = 2.5};
    evs[n++] = (cs_event){.type = CS_EV_PRINT, .rank = 2, .seq = 4, .t = 0.012,
                          .text = "[rank 2] tensor([1., 2.])", .line = 5};
    evs[n++] = (cs_event){.type = CS_EV_PRINT, .rank = 2, .seq = 5, .t = 0.012, .text = ""};
    evs[n++] = (cs_event){.type = CS_EV_WARN, .rank = 0, .seq = 5, .t = 0.013,
                          .text = "buffer written before wait", .line = 14};
    evs[n++] = (cs_event){.type = CS_EV_WARN, .rank = -1, .t = 0.013, .text = "unreceived message"};
    evs[n++] = (cs_event){.type = CS_EV_ERROR, .rank = 1, .seq = 5, .t = 0.014,
                          .text = "ring.lua:9: size mismatch", .status = 2, .line = 9};
    evs[n++] = (cs_event){.type = CS_EV_EXIT, .rank = 0, .seq = 6, .t = 0.015, .status = 0};
    evs[n++] = (cs_event){.type = CS_EV_EXIT, .rank = 1, .seq = 6, .t = 0.015, .status = -7};
    evs[n++] = (cs_event){.type = CS_EV_DEADLOCK, .rank = -1, .t = 0.016,
                          .text = "ranks 0 and 1 both call send first"};
    evs[n++] = (cs_event){.type = CS_EV_DEADLOCK, .rank = CS_NO_RANK, .t = 0.017, .text = "x",
                          .line = 3};
    evs[n++] = (cs_event){.type = CS_EV_WAIT, .rank = 0, .seq = 7, .t = 0.018, .reqs = some_reqs,
                          .nreqs = 2, .line = 15};
    evs[n++] = (cs_event){.type = CS_EV_CLOCK, .rank = 1, .seq = 7, .t = 0.019, .line = 16};
    evs[n++] = (cs_event){.type = CS_EV_VTIME, .rank = -1, .vrank = 1, .t = 0.019, .text = "send",
                          .req = 3, .peer = 2, .bytes = 1000, .line = 16,
                          .vt = 5, .vt_done = 11005, .vt_start = 5, .vt_end = 1005,
                          .vt_arrive = 11005};
    evs[n++] = (cs_event){.type = CS_EV_VTIME, .rank = -1, .vrank = 0, .t = 0.02, .text = "wait",
                          .vt = 0, .vt_done = 220000, .line = 2};
    evs[n++] = (cs_event){.type = CS_EV_BLOCK, .rank = 2, .seq = 6, .t = 0.021, .reqs = many_reqs,
                          .nreqs = 12, .any = false, .line = 11};
    return n;
}

START_TEST(test_roundtrip_every_type) {
    cs_event evs[40];
    int n = sample_events(evs);
    bool seen[CS_EV_NTYPES] = {false};
    for (int i = 0; i < n; i++) seen[evs[i].type] = true;
    for (int t = 0; t < CS_EV_NTYPES; t++) ck_assert_msg(seen[t], "type %d not sampled", t);
    new_path();
    write_events(evs, n);
    read_back(evs, n);
    unlink(path);
}
END_TEST

START_TEST(test_run_header_line) {
    cs_event ev = run_event(2);
    ev.seed = UINT64_MAX; /* does not fit a JSON integer: written as a string */
    new_path();
    write_events(&ev, 1);
    ck_assert_str_eq(get_file(),
                     "{\"type\":\"run\",\"format\":\"commsim-trace\",\"version\":1,\"rank\":-1,"
                     "\"seq\":0,\"t\":0.0,\"world\":2,\"engine\":\"thread\",\"send_mode\":"
                     "\"rendezvous\",\"seed\":\"18446744073709551615\",\"script\":"
                     "\"lessons/01/ring.lua\"}\n");
    read_back(&ev, 1);
    unlink(path);
}
END_TEST

START_TEST(test_strings_exact) {
    static const char *texts[] = {
        "say \"hi\" and \\back\\slash",
        "two\nlines\r\nand a\ttab",
        "control \x01\x1f and DEL \x7f",
        "UTF-8: h\xc3\xa9llo w\xc3\xb6rld \xe2\x9c\x93 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x8e\x89",
        "{\"type\":\"run\"}\n{\"not\":\"a line\"}",
        "/* \\u0041 stays six characters */",
    };
    enum { N = sizeof texts / sizeof *texts };
    cs_event evs[N + 1];
    evs[0] = run_event(1);
    for (int i = 0; i < N; i++)
        evs[i + 1] = (cs_event){.type = CS_EV_PRINT, .rank = 0, .seq = (uint64_t)i, .t = 0.5,
                                .text = texts[i], .line = i + 1};
    new_path();
    write_events(evs, N + 1);
    read_back(evs, N + 1);
    unlink(path);
}
END_TEST

START_TEST(test_invalid_utf8_repaired) {
    cs_event evs[2] = {run_event(1), {.type = CS_EV_PRINT, .rank = 0, .text = "a\xff" "b\xc3"}};
    char err[256];
    cs_event ev;
    new_path();
    write_events(evs, 2);
    cs_trace_reader *r = cs_trace_reader_open(path, err, sizeof err);
    ck_assert_int_eq(cs_trace_read(r, &ev, err, sizeof err), 1);
    ck_assert_int_eq(cs_trace_read(r, &ev, err, sizeof err), 1);
    ck_assert_str_eq(ev.text, "a\xef\xbf\xbd" "b\xef\xbf\xbd");
    cs_trace_reader_close(r);
    unlink(path);
}
END_TEST

START_TEST(test_long_text_truncated) {
    size_t n = 100000; /* "é" repeated: the cut must fall between characters */
    char *big = malloc(2 * n + 1);
    for (size_t i = 0; i < n; i++) memcpy(big + 2 * i, "\xc3\xa9", 2);
    big[2 * n] = '\0';
    cs_event evs[2] = {run_event(1), {.type = CS_EV_PRINT, .rank = 0, .text = big}};
    char err[256];
    cs_event ev;
    new_path();
    write_events(evs, 2);
    cs_trace_reader *r = cs_trace_reader_open(path, err, sizeof err);
    ck_assert_int_eq(cs_trace_read(r, &ev, err, sizeof err), 1);
    ck_assert_int_eq(cs_trace_read(r, &ev, err, sizeof err), 1);
    ck_assert_uint_eq(strlen(ev.text), CS_TRACE_MAX_TEXT);
    ck_assert_int_eq(strncmp(ev.text, big, CS_TRACE_MAX_TEXT), 0);
    cs_trace_reader_close(r);
    free(big);
    unlink(path);
}
END_TEST

START_TEST(test_times_exact_and_short) {
    static const double ts[] = {0.1,      1.0 / 3, 1e-9, 123456.789, 2.5e-300, 9876543210.0123456,
                                CS_EV_MAX_TIME, 0.0};
    enum { N = sizeof ts / sizeof *ts };
    cs_event evs[N + 1];
    evs[0] = run_event(1);
    for (int i = 0; i < N; i++)
        evs[i + 1] = (cs_event){.type = CS_EV_COMPUTE, .rank = 0, .seq = (uint64_t)i, .t = ts[i],
                                .ms = ts[N - 1 - i], .begin = i % 2};
    new_path();
    write_events(evs, N + 1);
    ck_assert_ptr_nonnull(strstr(get_file(), "\"t\":0.1,"));
    ck_assert_ptr_nonnull(strstr(get_file(), "\"t\":123456.789,"));
    read_back(evs, N + 1);
    unlink(path);
}
END_TEST

START_TEST(test_write_through) {
    char err[256];
    cs_event ev, evs[2] = {run_event(2), {.type = CS_EV_EXIT, .rank = 1, .t = 1}};
    new_path();
    cs_trace_writer *w = cs_trace_open(path, err, sizeof err);
    cs_sink s = cs_trace_sink(w);
    s.emit(s.ud, &evs[0]);
    s.emit(s.ud, &evs[1]);
    ck_assert_int_eq(cs_trace_flush(w), 0);
    /* still open: everything emitted and flushed is already in the file */
    cs_trace_reader *r = cs_trace_reader_open(path, err, sizeof err);
    ck_assert_int_eq(cs_trace_read(r, &ev, err, sizeof err), 1);
    ck_assert_int_eq(cs_trace_read(r, &ev, err, sizeof err), 1);
    assert_events_equal(&evs[1], &ev);
    ck_assert_int_eq(cs_trace_read(r, &ev, err, sizeof err), 0);
    cs_trace_reader_close(r);
    ck_assert_int_eq(cs_trace_close(w), 0);
    unlink(path);
}
END_TEST

START_TEST(test_disk_full) {
    char err[256];
    cs_event evs[2] = {run_event(1), {.type = CS_EV_EXIT, .rank = 0}};
    cs_trace_writer *w = cs_trace_open("/dev/full", err, sizeof err);
    ck_assert_msg(w != NULL, "%s", err);
    cs_sink s = cs_trace_sink(w);
    s.emit(s.ud, &evs[0]);
    s.emit(s.ud, &evs[1]); /* does not crash, does not write */
    errno = 0;
    ck_assert_int_eq(cs_trace_flush(w), -1);
    ck_assert_int_eq(errno, ENOSPC);
    ck_assert_str_eq(cs_trace_error(w), "/dev/full: No space left on device");
    errno = 0;
    ck_assert_int_eq(cs_trace_close(w), -1);
    ck_assert_int_eq(errno, ENOSPC);
}
END_TEST

START_TEST(test_writer_wants_run_first) {
    char err[256];
    cs_event post = {.type = CS_EV_EXIT, .rank = 0}, run = run_event(1);
    new_path();
    cs_trace_writer *w = cs_trace_open(path, err, sizeof err);
    cs_sink s = cs_trace_sink(w);
    s.emit(s.ud, &post);
    ck_assert_ptr_nonnull(strstr(cs_trace_error(w), "exit event before the run header"));
    s.emit(s.ud, &run);
    s.emit(s.ud, &post);
    s.emit(s.ud, &run);
    ck_assert_int_eq(cs_trace_close(w), -1);
    ck_assert_int_eq(errno, EINVAL);
    cs_event evs[2] = {run, post}; /* the first post and the second run were dropped */
    read_back(evs, 2);
    unlink(path);
}
END_TEST

START_TEST(test_unencodable_event) {
    char err[256];
    cs_event run = run_event(1), bogus = {.type = CS_EV_NTYPES, .rank = 0};
    new_path();
    cs_trace_writer *w = cs_trace_open(path, err, sizeof err);
    cs_sink s = cs_trace_sink(w);
    s.emit(s.ud, &run);
    s.emit(s.ud, &bogus); /* reported, skipped; the writer goes on */
    ck_assert_ptr_nonnull(strstr(cs_trace_error(w), "cannot encode"));
    ck_assert_int_eq(cs_trace_close(w), -1);
    read_back(&run, 1);
    unlink(path);
}
END_TEST

START_TEST(test_open_errors) {
    char err[256];
    cs_event ev;
    cs_trace_reader *r = cs_trace_reader_open("/tmp", err, sizeof err); /* a directory */
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(cs_trace_read(r, &ev, err, sizeof err), -1);
    ck_assert_str_eq(err, "/tmp:1: read error: Is a directory");
    cs_trace_reader_close(r);
    ck_assert_ptr_null(cs_trace_open("/nonexistent/dir/t.jsonl", err, sizeof err));
    ck_assert_str_eq(err, "/nonexistent/dir/t.jsonl: No such file or directory");
    ck_assert_ptr_null(cs_trace_reader_open("/nonexistent.jsonl", err, sizeof err));
    ck_assert_str_eq(err, "/nonexistent.jsonl: No such file or directory");
    ck_assert_int_eq(cs_trace_close(NULL), 0);
    cs_trace_reader_close(NULL);
}
END_TEST

/* ---- the reader on bad input */

#define RUN2 "{\"type\":\"run\",\"format\":\"commsim-trace\",\"version\":1,\"rank\":-1,\"seq\":0," \
             "\"t\":0,\"world\":2,\"engine\":\"thread\",\"send_mode\":\"eager\",\"seed\":\"1\"," \
             "\"script\":\"s.lua\"}\n"
#define POST(extra) "{\"type\":\"post\",\"rank\":0,\"seq\":0,\"t\":0.5,\"req\":1,\"op\":\"send\"," \
                    "\"tag\":0,\"ctx\":0,\"bytes\":4,\"dtype\":\"float32\",\"eager\":false," \
                    "\"line\":3" extra "}\n"

static const struct {
    const char *text;
    const char *want; /* the message after "PATH:" */
} bad[] = {
    {RUN2 "{\"type\":\n", "2: not JSON: "},
    {RUN2 "[1, 2]\n", "2: not an object"},
    {RUN2 "42\n", "2: not an object"},
    {RUN2 "\n", "2: empty line"},
    {RUN2 "{\"rank\":0,\"seq\":0,\"t\":0}\n", "2: missing field \"type\""},
    {RUN2 "{\"type\":7,\"rank\":0,\"seq\":0,\"t\":0}\n", "2: field \"type\" must be a string"},
    {RUN2 "{\"type\":\"foo\",\"rank\":0,\"seq\":0,\"t\":0}\n", "2: unknown type \"foo\""},
    {RUN2 "{\"type\":\"complete\",\"rank\":0,\"t\":0,\"req\":1,\"op\":\"send\"}\n",
     "2: missing field \"seq\""},
    {RUN2 "{\"type\":\"complete\",\"rank\":0,\"seq\":\"0\",\"t\":0,\"req\":1,\"op\":\"send\"}\n",
     "2: field \"seq\" must be an integer"},
    {RUN2 "{\"type\":\"complete\",\"rank\":0,\"seq\":-1,\"t\":0,\"req\":1,\"op\":\"send\"}\n",
     "2: field \"seq\" out of range: -1"},
    {RUN2 "{\"type\":\"complete\",\"rank\":0,\"seq\":0,\"t\":-1,\"req\":1,\"op\":\"send\"}\n",
     "2: field \"t\" must be a number >= 0"},
    {RUN2 "{\"type\":\"complete\",\"rank\":0,\"seq\":0,\"t\":0}\n", "2: missing field \"req\""},
    {RUN2 "{\"type\":\"complete\",\"rank\":2,\"seq\":0,\"t\":0,\"req\":1,\"op\":\"send\"}\n",
     "2: rank 2 out of range (world 2)"},
    {RUN2 "{\"type\":\"complete\",\"rank\":-1,\"seq\":0,\"t\":0,\"req\":1,\"op\":\"send\"}\n",
     "2: a complete event needs a rank >= 0, not -1"},
    {RUN2 "{\"type\":\"complete\",\"rank\":-3,\"seq\":0,\"t\":0,\"req\":1,\"op\":\"send\"}\n",
     "2: field \"rank\" out of range: -3"},
    {RUN2 POST(",\"peer\":2,\"shape\":[1]"), "2: peer 2 out of range (world 2)"},
    {RUN2 POST(",\"peer\":-2,\"shape\":[1]"), "2: field \"peer\" out of range: -2"},
    {RUN2 POST(",\"peer\":1,\"shape\":[1,1,1,1,1]"), "2: field \"shape\" has 5 entries, at most 4"},
    {RUN2 POST(",\"peer\":1,\"shape\":[-1]"), "2: field \"shape\" must hold integers >= 0"},
    {RUN2 POST(",\"peer\":1,\"shape\":3"), "2: field \"shape\" must be an array"},
    {RUN2 POST(",\"peer\":1,\"shape\":[1],\"tag\":-1"), "2: not JSON: duplicate object key"},
    {RUN2 POST(",\"peer\":1,\"shape\":[1.5]"), "2: field \"shape\" must hold integers >= 0"},
    {RUN2 POST(",\"peer\":1"), "2: missing field \"shape\""},
    {RUN2 "{\"type\":\"post\",\"rank\":0,\"seq\":0,\"t\":0,\"req\":1,\"op\":\"bcast\"}\n",
     "2: unknown op \"bcast\""},
    {RUN2 "{\"type\":\"post\",\"rank\":0,\"seq\":0,\"t\":0,\"req\":1,\"op\":\"recv\",\"peer\":1,"
          "\"tag\":0,\"ctx\":0,\"bytes\":0,\"dtype\":\"bfloat\"}\n", "2: unknown dtype \"bfloat\""},
    {RUN2 "{\"type\":\"post\",\"rank\":0,\"seq\":0,\"t\":0,\"req\":1,\"op\":\"recv\",\"peer\":1,"
          "\"tag\":-5}\n", "2: field \"tag\" out of range: -5"},
    {RUN2 "{\"type\":\"block\",\"rank\":0,\"seq\":0,\"t\":0,\"reqs\":[1],\"any\":1,\"line\":1}\n",
     "2: field \"any\" must be true or false"},
    {RUN2 "{\"type\":\"block\",\"rank\":0,\"seq\":0,\"t\":0,\"reqs\":[\"1\"]}\n",
     "2: field \"reqs\" must hold integers >= 0"},
    {RUN2 "{\"type\":\"compute\",\"rank\":0,\"seq\":0,\"t\":0,\"begin\":true,\"ms\":-2}\n",
     "2: field \"ms\" must be a number >= 0"},
    /* a status no run ends with: a replay would exit with it */
    {RUN2 "{\"type\":\"error\",\"rank\":-1,\"seq\":0,\"t\":0.1,\"status\":99,\"text\":\"x\"}\n",
     "2: field \"status\" out of range: 99 (an error's is 2, 3, 4, 5 or 130)"},
    {RUN2 "{\"type\":\"error\",\"rank\":0,\"seq\":0,\"t\":0.1,\"status\":0,\"text\":\"x\"}\n",
     "2: field \"status\" out of range: 0 (an error's is 2, 3, 4, 5 or 130)"},
    /* a span no picture draws: it would vanish from every export */
    {RUN2 "{\"type\":\"vtime\",\"rank\":-1,\"seq\":0,\"t\":0.1,\"what\":\"bogus\",\"vrank\":0,"
          "\"vt\":5}\n",
     "2: field \"what\": unknown kind \"bogus\" (send, recv, wait, compute, time or exit)"},
    /* finite but past any run: a picture or a nanosecond count of it would not be */
    {RUN2 "{\"type\":\"exit\",\"rank\":0,\"seq\":0,\"t\":1e303,\"status\":0}\n",
     "2: field \"t\" out of range: 1e+303 (at most 1e10 seconds)"},
    {RUN2 "{\"type\":\"compute\",\"rank\":0,\"seq\":0,\"t\":0,\"begin\":true,\"ms\":2e10}\n",
     "2: field \"ms\" out of range: 2e+10 (at most 1e10)"},
    {RUN2 "{\"type\":\"print\",\"rank\":0,\"seq\":0,\"t\":0,\"text\":5}\n",
     "2: field \"text\" must be a string"},
    {RUN2 "{\"type\":\"print\",\"rank\":0,\"seq\":0,\"t\":0,\"text\":\"a\",\"line\":-1}\n",
     "2: field \"line\" out of range: -1"},
    {RUN2 "{\"type\":\"exit\",\"rank\":0,\"seq\":1,\"t\":0,\"status\":0}\n",
     "2: rank 0: seq 1, expected 0"},
    {RUN2 "{\"type\":\"exit\",\"rank\":1,\"seq\":0,\"t\":0,\"status\":0}\n"
          "{\"type\":\"exit\",\"rank\":1,\"seq\":0,\"t\":0,\"status\":0}\n",
     "3: rank 1: seq 0, expected 1"},
    {RUN2 RUN2, "2: second run event"},
    {"{\"type\":\"exit\",\"rank\":0,\"seq\":0,\"t\":0,\"status\":0}\n",
     "1: first event is \"exit\", expected \"run\""},
    {"{\"type\":\"run\",\"format\":\"other\",\"version\":1}\n",
     "1: not a commsim trace (format \"other\")"},
    {"{\"type\":\"run\",\"format\":\"commsim-trace\"}\n", "1: missing field \"version\""},
    {"{\"type\":\"run\",\"format\":\"commsim-trace\",\"version\":\"1\"}\n",
     "1: field \"version\" must be an integer"},
    {"{\"type\":\"run\",\"format\":\"commsim-trace\",\"version\":3,\"future\":true}\n",
     "1: unsupported version 3 (this reader reads versions 1 and 2)"},
    {"{\"type\":\"run\",\"format\":\"commsim-trace\",\"version\":1,\"rank\":-1,\"seq\":0,\"t\":0,"
     "\"world\":0}\n", "1: field \"world\" out of range: 0"},
    {"{\"type\":\"run\",\"format\":\"commsim-trace\",\"version\":1,\"rank\":-1,\"seq\":0,\"t\":0,"
     "\"world\":99999999999}\n", "1: field \"world\" out of range: 99999999999"},
    {"{\"type\":\"run\",\"format\":\"commsim-trace\",\"version\":1,\"rank\":-1,\"seq\":0,\"t\":0,"
     "\"world\":65537}\n", "1: field \"world\" out of range: 65537"},
    {"{\"type\":\"run\",\"format\":\"commsim-trace\",\"version\":1,\"rank\":3,\"seq\":0,\"t\":0,"
     "\"world\":2,\"engine\":\"\",\"send_mode\":\"\",\"seed\":\"1\",\"script\":\"\"}\n",
     "1: rank 3 out of range (world 2)"},
    {"{\"type\":\"run\",\"format\":\"commsim-trace\",\"version\":1,\"rank\":-1,\"seq\":0,\"t\":0,"
     "\"world\":2,\"engine\":\"\",\"send_mode\":\"\",\"seed\":\"18446744073709551616\"}\n",
     "1: field \"seed\" must be a decimal string of a 64-bit integer"},
    /* the modes replay and export act on, as their options would take them */
    {"{\"type\":\"run\",\"format\":\"commsim-trace\",\"version\":1,\"rank\":-1,\"seq\":0,\"t\":0,"
     "\"world\":2,\"engine\":\"thread\",\"send_mode\":\"telepathy\",\"seed\":\"1\",\"script\":\"s\"}\n",
     "1: field \"send_mode\": unknown mode \"telepathy\" (rendezvous, eager or eager:BYTES)"},
    {"{\"type\":\"run\",\"format\":\"commsim-trace\",\"version\":1,\"rank\":-1,\"seq\":0,\"t\":0,"
     "\"world\":2,\"engine\":\"thread\",\"send_mode\":\"eager:-5\",\"seed\":\"1\",\"script\":\"s\"}\n",
     "1: field \"send_mode\": unknown mode \"eager:-5\""},
    {"{\"type\":\"run\",\"format\":\"commsim-trace\",\"version\":2,\"rank\":-1,\"seq\":0,\"t\":0,"
     "\"world\":2,\"engine\":\"thread\",\"send_mode\":\"eager\",\"seed\":\"1\",\"script\":\"s\","
     "\"net\":\"warp-drive\"}\n",
     "1: field \"net\": unknown model 'warp-drive' (none, "},
    {"\xef\xbb\xbf{}\n", "1: not JSON: "},
    {"", "1: empty trace: no run event"},
};

START_TEST(test_malformed_lines) {
    char err[512], want[512];
    new_path();
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int rc = read_error(bad[i].text, err, sizeof err);
        snprintf(want, sizeof want, "%s:%s", path, bad[i].want);
        ck_assert_msg(rc == -1, "case %zu: rc %d (%s)", i, rc, err);
        ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "case %zu: got \"%s\", want \"%s\"", i,
                      err, want);
    }
    unlink(path);
}
END_TEST

START_TEST(test_errors_repeat) {
    char err[256], again[256];
    cs_event ev;
    new_path();
    put_file(RUN2 "[]\n" RUN2, strlen(RUN2 "[]\n" RUN2));
    cs_trace_reader *r = cs_trace_reader_open(path, err, sizeof err);
    ck_assert_int_eq(cs_trace_read(r, &ev, err, sizeof err), 1);
    ck_assert_int_eq(cs_trace_reader_world(r), 2);
    ck_assert_int_eq(cs_trace_read(r, &ev, err, sizeof err), -1);
    ck_assert_int_eq(cs_trace_read(r, &ev, again, sizeof again), -1);
    ck_assert_str_eq(err, again);
    cs_trace_reader_close(r);
    unlink(path);
}
END_TEST

START_TEST(test_cut_last_line) {
    static const char *cuts[] = {"{\"type\":\"exit\",\"rank\":1,\"seq\":0,\"t\":0,\"sta", "{", " "};
    char err[256], want[256];
    cs_event ev;
    new_path();
    snprintf(want, sizeof want, "%s:3: trace cut off mid-event", path);
    for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
        char text[1024];
        snprintf(text, sizeof text, RUN2 "%s%s",
                 "{\"type\":\"exit\",\"rank\":0,\"seq\":0,\"t\":0,\"status\":0}\n", cuts[i]);
        put_file(text, strlen(text));
        cs_trace_reader *r = cs_trace_reader_open(path, err, sizeof err);
        ck_assert_int_eq(cs_trace_read(r, &ev, err, sizeof err), 1);
        ck_assert_int_eq(cs_trace_read(r, &ev, err, sizeof err), 1);
        ck_assert_int_eq(cs_trace_read(r, &ev, err, sizeof err), CS_TRACE_CUT);
        ck_assert_str_eq(err, want);
        ck_assert_int_eq(cs_trace_read(r, &ev, err, sizeof err), CS_TRACE_CUT);
        ck_assert_str_eq(err, want);
        cs_trace_reader_close(r);
    }
    /* The same bytes with a newline are a malformed line, not a cut. */
    ck_assert_int_eq(read_error(RUN2 "{\"type\":\n", err, sizeof err), -1);
    unlink(path);
}
END_TEST

START_TEST(test_last_line_without_newline) {
    const char *text = RUN2 "{\"type\":\"exit\",\"rank\":0,\"seq\":0,\"t\":0,\"status\":3}";
    char err[256];
    cs_event ev;
    new_path();
    put_file(text, strlen(text));
    cs_trace_reader *r = cs_trace_reader_open(path, err, sizeof err);
    ck_assert_int_eq(cs_trace_read(r, &ev, err, sizeof err), 1);
    ck_assert_int_eq(cs_trace_read(r, &ev, err, sizeof err), 1);
    ck_assert_int_eq(ev.status, 3);
    ck_assert_int_eq(cs_trace_read(r, &ev, err, sizeof err), 0);
    cs_trace_reader_close(r);
    /* A complete line that is wrong stays an error, even as the last line. */
    ck_assert_int_eq(read_error(RUN2 "{\"type\":\"exit\"}", err, sizeof err), -1);
    unlink(path);
}
END_TEST

START_TEST(test_long_lines) {
    /* A valid event padded with spaces to exactly the limit is read; one more
     * byte is refused without reading the rest. */
    const char *ev = "{\"type\":\"exit\",\"rank\":0,\"seq\":0,\"t\":0,\"status\":0}";
    size_t hdr = strlen(RUN2), len = hdr + CS_TRACE_MAX_LINE + 2;
    char *text = malloc(len + 1), err[256], want[256];
    cs_event e;
    memcpy(text, RUN2, hdr);
    memset(text + hdr, ' ', CS_TRACE_MAX_LINE);
    memcpy(text + hdr, ev, strlen(ev));
    text[hdr + CS_TRACE_MAX_LINE] = '\n';
    text[hdr + CS_TRACE_MAX_LINE + 1] = '\0';
    new_path();
    put_file(text, strlen(text));
    cs_trace_reader *r = cs_trace_reader_open(path, err, sizeof err);
    ck_assert_int_eq(cs_trace_read(r, &e, err, sizeof err), 1);
    ck_assert_msg(cs_trace_read(r, &e, err, sizeof err) == 1, "%s", err);
    ck_assert_int_eq(cs_trace_read(r, &e, err, sizeof err), 0);
    cs_trace_reader_close(r);

    text[hdr + CS_TRACE_MAX_LINE] = ' ';
    text[hdr + CS_TRACE_MAX_LINE + 1] = '\n';
    text[hdr + CS_TRACE_MAX_LINE + 2] = '\0';
    snprintf(want, sizeof want, "%s:2: line longer than %d bytes", path, CS_TRACE_MAX_LINE);
    ck_assert_int_eq(read_error(text, err, sizeof err), -1);
    ck_assert_str_eq(err, want);
    free(text);
    unlink(path);
}
END_TEST

START_TEST(test_empty_file) {
    char err[256], want[256];
    new_path();
    snprintf(want, sizeof want, "%s:1: empty trace: no run event", path);
    ck_assert_int_eq(read_error("", err, sizeof err), -1);
    ck_assert_str_eq(err, want);
    /* only the header: a valid, empty run */
    ck_assert_int_eq(read_error(RUN2, err, sizeof err), 0);
    unlink(path);
}
END_TEST

START_TEST(test_lenient_on_what_is_harmless) {
    /* CRLF line ends, unknown fields (later minor additions), a seed as an
     * integer and t as an integer are all accepted. */
    const char *text =
        "{\"type\":\"run\",\"format\":\"commsim-trace\",\"version\":1,\"rank\":-1,\"seq\":0,"
        "\"t\":0,\"world\":1,\"engine\":\"tcp\",\"send_mode\":\"eager:64\",\"seed\":7,"
        "\"script\":\"a\",\"host\":\"x\"}\r\n"
        "{\"type\":\"unblock\",\"rank\":0,\"seq\":0,\"t\":2,\"why\":{\"deep\":[1,2]}}\r\n";
    char err[256];
    cs_event ev;
    new_path();
    put_file(text, strlen(text));
    cs_trace_reader *r = cs_trace_reader_open(path, err, sizeof err);
    ck_assert_msg(cs_trace_read(r, &ev, err, sizeof err) == 1, "%s", err);
    ck_assert_uint_eq(ev.seed, 7);
    ck_assert_str_eq(ev.send_mode, "eager:64");
    ck_assert_msg(cs_trace_read(r, &ev, err, sizeof err) == 1, "%s", err);
    ck_assert_int_eq(ev.type, CS_EV_UNBLOCK);
    ck_assert(ev.t == 2.0);
    ck_assert_int_eq(cs_trace_read(r, &ev, err, sizeof err), 0);
    cs_trace_reader_close(r);
    unlink(path);
}
END_TEST

/* ---- the conversion functions on their own */

START_TEST(test_json_conversion) {
    cs_trace_strings store = {0};
    char err[256];
    cs_event in = {.type = CS_EV_BLOCK, .rank = 70, .seq = 9, .t = 1.25, .reqs = some_reqs,
                   .nreqs = 3, .line = 2}, out;
    json_t *o = cs_event_to_json(&in);
    ck_assert_ptr_nonnull(o);
    /* no world known: ranks and peers have no upper bound */
    ck_assert_msg(cs_event_from_json(o, 0, &out, &store, err, sizeof err) == 0, "%s", err);
    json_decref(o); /* the store keeps what out points into */
    assert_events_equal(&in, &out);
    o = cs_event_to_json(&in);
    ck_assert_int_eq(cs_event_from_json(o, 4, &out, &store, err, sizeof err), -1);
    ck_assert_str_eq(err, "rank 70 out of range (world 4)");
    json_decref(o);
    o = json_integer(1);
    ck_assert_int_eq(cs_event_from_json(o, 0, &out, &store, err, sizeof err), -1);
    ck_assert_str_eq(err, "not an object");
    json_decref(o);
    cs_trace_strings_free(&store);
    cs_trace_strings_free(&store); /* idempotent */

    cs_event bogus = {.type = CS_EV_NTYPES};
    ck_assert_ptr_null(cs_event_to_json(&bogus));
}
END_TEST

/* ---- the fast line encoder: the general path's bytes, exactly */

/* The writer's general path: the object dumped compact at the shortest
 * precision of the time, and a newline. */
static char *general_line(const cs_event *ev) {
    char buf[40], *line;
    double t = ev->t;
    int p;
    json_t *o = cs_event_to_json(ev);
    ck_assert_ptr_nonnull(o);
    for (p = 1; p <= 17; p++) {
        snprintf(buf, sizeof buf, "%.*g", p, t);
        if (strtod(buf, NULL) == t) break;
    }
    line = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(p));
    json_decref(o);
    ck_assert_ptr_nonnull(line);
    char *nl = malloc(strlen(line) + 2);
    sprintf(nl, "%s\n", line);
    free(line);
    return nl;
}

static uint64_t rnd_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) { /* xorshift64*: the same events on every run */
    rnd_state ^= rnd_state >> 12, rnd_state ^= rnd_state << 25, rnd_state ^= rnd_state >> 27;
    return rnd_state * 2685821657736338717ull;
}

static double rnd_time(void) {
    static const double scale[] = {0, 1e-6, 1e-5, 1e-4, 1e-3, 0.01, 0.1, 1, 10, 100, 1e3, 1e4,
                                   1e5, 1e6, 1e7, 9e7};
    double x = scale[rnd() % 16] * (double)(rnd() % 100000) / 1000.0;
    if (rnd() % 8 == 0) x = (double)(rnd() % 1000); /* whole seconds: 100 is 1e2 */
    if (rnd() % 10 == 0) return x * 1.0000001; /* off the grid, often */
    return round(x * 1e6) / 1e6;
}

static const char *rnd_text(char *buf, size_t cap) {
    static const char *const bits[] = {"a", "Z", " ", "\"", "\\", "/", "\n", "\t", "\x01",
                                       "\x1f", "\x7f", "\xc3\xa9", "\xe2\x82\xac",
                                       "\xf0\x9f\x98\x80", "\xff", "\xc3", "\xed\xa0\x80"};
    size_t n = rnd() % 12, len = 0;
    buf[0] = 0;
    for (size_t i = 0; i < n; i++) {
        const char *b = bits[rnd() % (sizeof bits / sizeof *bits)];
        if (len + strlen(b) + 1 > cap) break;
        strcpy(buf + len, b);
        len += strlen(b);
    }
    return buf;
}

/* A random event of any type but the header, every field of the schema set
 * (texts, reqs and group: its storage). */
static void rnd_event(cs_event *ev, char texts[4][128], uint64_t *reqs, int *group) {
    int nt = 0;
    memset(ev, 0, sizeof *ev);
    ev->type = (cs_event_type)(1 + rnd() % (CS_EV_NTYPES - 1));
    ev->rank = (int)(rnd() % 70) - 2;
    ev->seq = rnd() % 3 ? rnd() % 100000 : rnd();
    ev->t = rnd_time();
    for (int i = 0; i < CS_F_NFIELDS; i++) {
        const cs_field *f = &cs_fields[i];
        if (f->alias) continue;
        switch (f->kind) {
        case CS_FK_INT: CS_FIELD(ev, f, int) = (int)(rnd() % 2000) - 1000; break;
        case CS_FK_U64: CS_FIELD(ev, f, uint64_t) = rnd() % 4 ? rnd() % 1000 : rnd(); break;
        case CS_FK_SIZE: CS_FIELD(ev, f, size_t) = rnd() % 4 ? rnd() % 1000 : rnd(); break;
        case CS_FK_BOOL: CS_FIELD(ev, f, bool) = rnd() % 2; break;
        case CS_FK_DOUBLE: CS_FIELD(ev, f, double) = rnd_time(); break;
        case CS_FK_STR:
            CS_FIELD(ev, f, const char *) = rnd() % 5 ? rnd_text(texts[nt % 4], 128) : NULL;
            nt++;
            break;
        case CS_FK_OP: ev->op = (cs_op)(rnd() % CS_OP_NOPS); break;
        case CS_FK_DTYPE: ev->dtype = (cs_dtype)(rnd() % 3); break;
        case CS_FK_SHAPE:
            ev->ndim = (int)(rnd() % (CS_MAX_DIMS + 1));
            for (int d = 0; d < ev->ndim; d++)
                ev->shape[d] = rnd() % 8 ? (int64_t)(rnd() % 5000) : (int64_t)(rnd() >> 2);
            break;
        case CS_FK_REQS:
            ev->nreqs = (int)(rnd() % 40);
            if (rnd() % 2) ev->nreqs %= 4; /* a wait on one or two, as most are */
            for (int r = 0; r < ev->nreqs; r++) reqs[r] = rnd() % 3 ? rnd() % 999 : rnd();
            ev->reqs = rnd() % 6 ? reqs : NULL;
            break;
        case CS_FK_GROUP:
            ev->ngroup = (int)(rnd() % 40);
            for (int r = 0; r < ev->ngroup; r++) group[r] = (int)(rnd() % 1000);
            ev->group = rnd() % 2 ? group : NULL;
            break;
        case CS_FK_SEED: ev->seed = rnd(); break;
        default: break; /* a kind added since: left zero */
        }
    }
}

START_TEST(test_fast_line_equals_general) {
    static uint64_t reqs[40];
    static int group[40];
    char texts[4][128];
    int fast = 0;
    cs_bytebuf b = {0};

    for (int iter = 0; iter < 40000; iter++) {
        cs_event ev;
        rnd_event(&ev, texts, reqs, group);
        b.len = 0;
        int r = cs_trace_line(&ev, &b);
        ck_assert_int_ge(r, 0);
        if (r == 0) {
            ck_assert_uint_eq(b.len, 0);
            continue;
        }
        fast++;
        char *want = general_line(&ev);
        ck_assert_msg(b.len == strlen(want) && memcmp(b.data, want, b.len) == 0,
                      "fast:    %.*s\ngeneral: %s", (int)b.len, b.data, want);
        free(want);
    }
    /* most events take the fast path; the test is not vacuous */
    ck_assert_int_gt(fast, 20000);
    cs_bytebuf_free(&b);
}
END_TEST

/* Times on the bus's microsecond grid at every edge of the fixed form the
 * fast encoder writes for itself: 100 us (the least), fractions with every
 * count of leading and trailing zeros, whole seconds with and without a
 * trailing zero, the seconds' every digit count, up to the largest. */
START_TEST(test_fast_line_time_edges) {
    static const uint64_t us[] = {0, 1, 99, 100, 101, 120, 999, 1000, 1001, 9999, 10000, 10500,
                                  99999, 100000, 123456, 999999, 1000000, 1000001, 1000010,
                                  1100000, 2000000, 9000000, 10000000, 11000000, 10000001,
                                  12345678, 99999999, 100000000, 123000000, 999999999,
                                  1000000000, 7000000000, 12345678901, 99999999999999,
                                  99999999999999 - 999999 + 1};
    cs_bytebuf b = {0};
    for (size_t i = 0; i < sizeof us / sizeof *us; i++) {
        cs_event ev = {.type = CS_EV_COMPLETE, .rank = 1, .seq = 2, .req = 3};
        ev.t = (double)us[i] / 1e6;
        b.len = 0;
        ck_assert_int_eq(cs_trace_line(&ev, &b), 1);
        char *want = general_line(&ev);
        ck_assert_msg(b.len == strlen(want) && memcmp(b.data, want, b.len) == 0,
                      "%" PRIu64 " us:\nfast:    %.*s\ngeneral: %s", us[i], (int)b.len, b.data,
                      want);
        free(want);
    }
    cs_bytebuf_free(&b);
}
END_TEST

/* Every count of decimal digits, at both of its ends, as the general path
 * writes it: the fast encoder writes numbers two digits at a time from the
 * back, and a boundary off by one shows here. */
START_TEST(test_fast_line_number_edges) {
    cs_bytebuf b = {0};
    uint64_t v = 1;
    for (int digits = 1; digits <= 19; digits++, v *= 10) {
        uint64_t edges[] = {v - 1, v, v + 1, v * 10 - 1};
        for (int k = 0; k < 4; k++) {
            cs_event ev = {.type = CS_EV_COMPLETE, .rank = 3, .t = 0.5};
            ev.seq = edges[k];
            ev.req = edges[k];
            ev.status = -(int)(edges[k] % 2000000000u);
            ev.line = (int)(edges[k] % 2000000000u);
            b.len = 0;
            ck_assert_int_eq(cs_trace_line(&ev, &b), 1);
            char *want = general_line(&ev);
            ck_assert_msg(b.len == strlen(want) && memcmp(b.data, want, b.len) == 0,
                          "fast:    %.*s\ngeneral: %s", (int)b.len, b.data, want);
            free(want);
        }
    }
    cs_bytebuf_free(&b);
}
END_TEST

/* What the writer thread writes is the general path's line for every event,
 * whether the sink staged its fields (values that fit a slot's widths) or
 * encoded it whole (those that do not, and the types with strings). */
START_TEST(test_writer_lines_equal_general) {
    static uint64_t reqs[40];
    static int group[40];
    char texts[4][128], err[256];
    enum { N = 6000 };
    static char *want[N];
    cs_event run = run_event(70);
    int n = 0;

    new_path();
    cs_trace_writer *w = cs_trace_open(path, err, sizeof err);
    ck_assert_msg(w != NULL, "%s", err);
    cs_sink s = cs_trace_sink(w);
    s.emit(s.ud, &run);
    while (n < N) {
        cs_event ev;
        rnd_event(&ev, texts, reqs, group);
        if (ev.type == CS_EV_COMPUTE) continue; /* its ms sets the precision too */
        switch (n % 7) { /* widths at the slot's edges: 32-bit counters, int32 sizes */
        case 1: ev.seq = (uint64_t)UINT32_MAX + (rnd() % 2); break;
        case 2: ev.req = (uint64_t)UINT32_MAX + (rnd() % 2); break;
        case 3: if (ev.ndim > 0) ev.shape[0] = (int64_t)INT32_MAX + (int64_t)(rnd() % 2); break;
        case 4: if (ev.nreqs > 0) reqs[0] = (uint64_t)UINT32_MAX + (rnd() % 2); break;
        }
        want[n++] = general_line(&ev);
        s.emit(s.ud, &ev);
    }
    ck_assert_int_eq(cs_trace_close(w), 0);

    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    ck_assert_ptr_nonnull(f);
    ck_assert_int_gt(getline(&line, &cap, f), 0); /* the header */
    for (int i = 0; i < N; i++) {
        ck_assert_int_gt(getline(&line, &cap, f), 0);
        ck_assert_msg(strcmp(line, want[i]) == 0, "event %d:\nwritten: %sgeneral: %s", i, line,
                      want[i]);
        free(want[i]);
    }
    ck_assert_int_eq(getline(&line, &cap, f), -1);
    free(line);
    fclose(f);
    unlink(path);
}
END_TEST

/* A name outside the program's tables (a corrupt op or dtype) is the general
 * path's to spell: the fast encoder declines and leaves the buffer as it was. */
START_TEST(test_fast_line_declines_unknown_names) {
    cs_bytebuf b = {0};
    cs_event post = {.type = CS_EV_POST, .rank = 1, .t = 0.5, .op = CS_OP_SEND, .ndim = 1};
    post.shape[0] = 4;
    ck_assert_int_eq(cs_trace_line(&post, &b), 1);
    size_t len = b.len;
    post.op = (cs_op)(CS_OP_NOPS + 3);
    ck_assert_int_eq(cs_trace_line(&post, &b), 0);
    post.op = CS_OP_SEND;
    post.dtype = (cs_dtype)(CS_NDTYPES + 1);
    ck_assert_int_eq(cs_trace_line(&post, &b), 0);
    ck_assert_uint_eq(b.len, len);
    cs_bytebuf_free(&b);
}
END_TEST

/* A line appended to a buffer at every fill level around a growth: the
 * encoder writes its first members before it knows the line's size, and a
 * growth in the middle must keep them, and what the buffer held before. */
START_TEST(test_fast_line_appends_across_growth) {
    static const int64_t shape[] = {16, 3};
    cs_event post = {.type = CS_EV_POST, .rank = 12, .seq = 4692, .t = 0.214916, .req = 1877,
                     .op = CS_OP_ISEND, .peer = 13, .tag = 7, .bytes = 192,
                     .dtype = CS_FLOAT32, .ndim = 2, .line = 9};
    memcpy(post.shape, shape, sizeof shape);
    char *want = general_line(&post);
    size_t n = strlen(want);

    for (size_t fill = 0; fill <= 256; fill++) {
        cs_bytebuf b = {.data = malloc(256), .len = fill, .cap = 256};
        ck_assert_ptr_nonnull(b.data);
        memset(b.data, 'x', fill);
        ck_assert_int_eq(cs_trace_line(&post, &b), 1);
        ck_assert_uint_eq(b.len, fill + n);
        for (size_t i = 0; i < fill; i++) ck_assert_int_eq(b.data[i], 'x');
        ck_assert_msg(memcmp(b.data + fill, want, n) == 0, "fill %zu: %.*s", fill, (int)n,
                      b.data + fill);
        cs_bytebuf_free(&b);
    }
    free(want);
}
END_TEST

/* The buffer both encoders append to: every byte kept across each growth,
 * the capacity a power of two from 4 KiB, room asked for never short. */
START_TEST(test_trace_buf_append_and_grow) {
    cs_bytebuf b = {0};
    char chunk[5000];
    size_t total = 0;

    for (size_t i = 0; i < sizeof chunk; i++) chunk[i] = (char)('a' + i % 26);
    for (size_t n = 0; n < 40; n++) {
        size_t len = (n * 977) % sizeof chunk; /* 0 too, and sizes past 4 KiB */
        ck_assert(cs_bytebuf_append(&b, chunk, len));
        total += len;
        ck_assert_uint_eq(b.len, total);
        ck_assert_uint_ge(b.cap, b.len);
        if (total) ck_assert_uint_ge(b.cap, 4096); /* an empty append allocates nothing */
        ck_assert_uint_eq(b.cap & (b.cap - 1), 0);
    }
    for (size_t off = 0, n = 0; n < 40; n++) {
        size_t len = (n * 977) % sizeof chunk;
        ck_assert_msg(memcmp(b.data + off, chunk, len) == 0, "append %zu", n);
        off += len;
    }
    size_t want = b.cap; /* more than is free: a growth */
    ck_assert(cs_bytebuf_room(&b, want));
    ck_assert_uint_ge(b.cap - b.len, want);
    ck_assert_uint_eq(b.len, total);
    ck_assert_msg(memcmp(b.data, chunk, 977) == 0, "kept across the growth");
    cs_bytebuf_free(&b);
    ck_assert_ptr_null(b.data);
    ck_assert_uint_eq(b.cap, 0);
}
END_TEST

/* Ranks emitting through a bus at once: the writer thread gets every line,
 * whole and in the bus's order, past several batches (and the wait for room
 * when a batch fills). */
enum { BUS_RANKS = 4, BUS_EVENTS = 6000 };
static cs_bus test_bus;

static void *emitter(void *arg) {
    int rank = (int)(intptr_t)arg;
    static const char pad[] = "a line long enough that the batches fill up quickly, "
                              "so that the emitters wait for the writer now and then: "
                              "4 ranks x 6000 lines of about 250 bytes are 6 MB, more "
                              "than one batch may hold";
    for (int i = 0; i < BUS_EVENTS; i++) {
        cs_event ev = {.type = CS_EV_PRINT, .rank = rank, .text = pad, .line = i + 1};
        cs_bus_emit(&test_bus, &ev);
    }
    return NULL;
}

START_TEST(test_writer_thread_under_load) {
    char err[256];
    pthread_t th[BUS_RANKS];
    cs_event ev, run = run_event(BUS_RANKS);
    uint64_t next[BUS_RANKS] = {0};
    int n = 0, rc;

    new_path();
    cs_trace_writer *w = cs_trace_open(path, err, sizeof err);
    ck_assert_msg(w != NULL, "%s", err);
    ck_assert_int_eq(cs_bus_init(&test_bus, BUS_RANKS), 0);
    cs_trace_subscribe(w, &test_bus);
    cs_bus_emit(&test_bus, &run);
    for (int i = 0; i < BUS_RANKS; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, emitter, (void *)(intptr_t)i), 0);
    for (int i = 0; i < BUS_RANKS; i++) pthread_join(th[i], NULL);
    ck_assert_int_eq(cs_trace_close(w), 0);
    cs_bus_destroy(&test_bus);

    cs_trace_reader *r = cs_trace_reader_open(path, err, sizeof err);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(cs_trace_read(r, &ev, err, sizeof err), 1); /* the header */
    while ((rc = cs_trace_read(r, &ev, err, sizeof err)) == 1) {
        ck_assert_int_eq(ev.type, CS_EV_PRINT);
        ck_assert_uint_eq(ev.seq, next[ev.rank]); /* per rank in order, none lost */
        ck_assert_int_eq(ev.line, (int)next[ev.rank] + 1);
        next[ev.rank]++;
        n++;
    }
    ck_assert_msg(rc == 0, "%s", err);
    ck_assert_int_eq(n, BUS_RANKS * BUS_EVENTS);
    cs_trace_reader_close(r);
    unlink(path);
}
END_TEST

/* Lines in path, counted; -1 when it cannot be read. */
static long file_lines(void) {
    FILE *f = fopen(path, "rb");
    long n = 0;
    int c;
    if (!f) return -1;
    while ((c = getc(f)) != EOF) n += c == '\n';
    fclose(f);
    return n;
}

/* Poll until path has n lines (at most 30 s; Check's timeout may end it
 * first): whether the writer ever writes them, not how fast. */
static bool wait_lines(long n) {
    for (int i = 0; i < 30000; i++) {
        if (file_lines() >= n) return true;
        usleep(1000);
    }
    return false;
}

/* Without a flush, what the ranks emit reaches the file while the run goes
 * on: the writer takes it by itself, and a writer that found nothing for a
 * while (asleep) is woken by the next event (the bus's after hook). */
START_TEST(test_lines_written_while_running) {
    char err[256];
    cs_bus bus;
    cs_event run = run_event(2);
    new_path();
    cs_trace_writer *w = cs_trace_open(path, err, sizeof err);
    ck_assert_msg(w != NULL, "%s", err);
    ck_assert_int_eq(cs_bus_init(&bus, 2), 0);
    cs_trace_subscribe(w, &bus);
    cs_bus_emit(&bus, &run);
    for (int round = 0; round < 3; round++) {
        cs_event ev = {.type = CS_EV_UNBLOCK, .rank = round % 2, .line = round + 1};
        cs_bus_emit(&bus, &ev);
        ck_assert_msg(wait_lines(round + 2), "round %d: the line never reached the file", round);
        usleep(100 * 1000); /* long enough for the writer to fall asleep */
    }
    ck_assert_int_eq(cs_trace_close(w), 0);
    cs_bus_destroy(&bus);
    ck_assert_int_eq(file_lines(), 4);
    unlink(path);
}
END_TEST

/* Far more events than the staging ring holds, from one thread, without the
 * hook: the sink waits for the writer when the ring is full, and nothing is
 * lost or reordered. */
START_TEST(test_ring_full_waits) {
    enum { N = 50000 };
    char err[256];
    cs_event ev, run = run_event(1);
    int rc;
    new_path();
    cs_trace_writer *w = cs_trace_open(path, err, sizeof err);
    ck_assert_msg(w != NULL, "%s", err);
    cs_sink s = cs_trace_sink(w);
    s.emit(s.ud, &run);
    for (int i = 0; i < N; i++) {
        ev = (cs_event){.type = CS_EV_COMPLETE, .rank = 0, .seq = (uint64_t)i, .t = i * 1e-6,
                        .req = (uint64_t)i + 1, .op = CS_OP_RECV};
        s.emit(s.ud, &ev);
    }
    ck_assert_int_eq(cs_trace_close(w), 0);
    cs_trace_reader *r = cs_trace_reader_open(path, err, sizeof err);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(cs_trace_read(r, &ev, err, sizeof err), 1); /* the header */
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(cs_trace_read(r, &ev, err, sizeof err), 1);
        ck_assert_uint_eq(ev.req, (uint64_t)i + 1);
    }
    rc = cs_trace_read(r, &ev, err, sizeof err);
    ck_assert_msg(rc == 0, "%s", err);
    cs_trace_reader_close(r);
    unlink(path);
}
END_TEST

static Suite *trace_suite(void) {
    Suite *s = suite_create("trace");
    TCase *rt = tcase_create("roundtrip");
    tcase_add_test(rt, test_roundtrip_every_type);
    tcase_add_test(rt, test_run_header_line);
    tcase_add_test(rt, test_strings_exact);
    tcase_add_test(rt, test_invalid_utf8_repaired);
    tcase_add_test(rt, test_long_text_truncated);
    tcase_add_test(rt, test_times_exact_and_short);
    tcase_add_test(rt, test_json_conversion);
    tcase_add_test(rt, test_fast_line_equals_general);
    tcase_add_test(rt, test_fast_line_number_edges);
    tcase_add_test(rt, test_fast_line_time_edges);
    tcase_add_test(rt, test_fast_line_appends_across_growth);
    tcase_add_test(rt, test_trace_buf_append_and_grow);
    tcase_add_test(rt, test_fast_line_declines_unknown_names);
    tcase_add_test(rt, test_writer_lines_equal_general);
    suite_add_tcase(s, rt);
    TCase *wr = tcase_create("writer");
    tcase_add_test(wr, test_write_through);
    tcase_add_test(wr, test_disk_full);
    tcase_add_test(wr, test_writer_wants_run_first);
    tcase_add_test(wr, test_unencodable_event);
    tcase_add_test(wr, test_open_errors);
    tcase_add_test(wr, test_writer_thread_under_load);
    tcase_add_test(wr, test_lines_written_while_running);
    tcase_add_test(wr, test_ring_full_waits);
    suite_add_tcase(s, wr);
    TCase *rd = tcase_create("reader");
    tcase_add_test(rd, test_malformed_lines);
    tcase_add_test(rd, test_errors_repeat);
    tcase_add_test(rd, test_cut_last_line);
    tcase_add_test(rd, test_last_line_without_newline);
    tcase_add_test(rd, test_long_lines);
    tcase_add_test(rd, test_empty_file);
    tcase_add_test(rd, test_lenient_on_what_is_harmless);
    suite_add_tcase(s, rd);
    return s;
}

int main(void) {
    return run_suite(trace_suite());
}
