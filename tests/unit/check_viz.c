/* check_viz.c -- the visualizer without a terminal: event sequences go through
 * a bus into the monitor and the history; a frame is rendered into a grid and
 * read back as text. Also the gates of control.c. */
#include <check.h>
#include <locale.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api.h"
#include "event_schema.h"
#include "gates.h"
#include "grid.h"
#include "learn.h"
#include "markdown.h"
#include "history.h"
#include "model.h"
#include "monitor.h"
#include "render.h"
#include "screen.h"
#include "timeline.h"
#include "tui_view.h"
#include "run_suite.h"

static cs_bus bus;
static cs_monitor mon;
static cs_history hist;
static cs_grid grid;
static char *text;

static void start(int world, size_t rows) {
    ck_assert_int_eq(cs_bus_init(&bus, world), 0);
    ck_assert_int_eq(cs_monitor_init(&mon, world), 0);
    ck_assert_int_eq(cs_history_init(&hist, world, rows), 0);
    mon.bus = &bus;
    hist.mon = &mon;
    cs_bus_subscribe(&bus, cs_monitor_sink(&mon));
    cs_bus_subscribe(&bus, cs_history_sink(&hist));
    cs_event run = {.type = CS_EV_RUN, .rank = -1, .world = world, .engine = "thread",
                    .send_mode = "rendezvous", .text = "t.lua"};
    cs_bus_emit(&bus, &run);
}

static void finish(void) {
    free(text);
    text = NULL;
    cs_grid_free(&grid);
    cs_history_free(&hist);
    cs_monitor_destroy(&mon);
    cs_bus_destroy(&bus);
}

static void emit(cs_event ev) { cs_bus_emit(&bus, &ev); }

static void post(int rank, uint64_t req, cs_op op, int peer, size_t bytes, int line) {
    emit((cs_event){.type = CS_EV_POST, .rank = rank, .req = req, .op = op, .peer = peer,
                    .bytes = bytes, .dtype = CS_FLOAT32, .ndim = 1,
                    .shape = {(int64_t)bytes / 4}, .line = line});
}

static void match(int rrank, uint64_t rreq, int srank, uint64_t sreq, size_t bytes) {
    emit((cs_event){.type = CS_EV_MATCH, .rank = rrank, .req = rreq, .peer = srank,
                    .peer_req = sreq, .bytes = bytes});
}

static void complete(int rank, uint64_t req) {
    emit((cs_event){.type = CS_EV_COMPLETE, .rank = rank, .req = req});
}

static void block(int rank, uint64_t req, int line) {
    uint64_t ids[1] = {req};
    emit((cs_event){.type = CS_EV_BLOCK, .rank = rank, .line = line, .nreqs = 1, .reqs = ids});
}

static void quit(int rank) { emit((cs_event){.type = CS_EV_EXIT, .rank = rank}); }

/* A message from s to r, both sides complete. */
static void message(int s, uint64_t sreq, int r, uint64_t rreq, size_t bytes) {
    post(s, sreq, CS_OP_SEND, r, bytes, 7);
    post(r, rreq, CS_OP_RECV, s, bytes, 9);
    match(r, rreq, s, sreq, bytes);
    complete(r, rreq);
    complete(s, sreq);
}

static const char *const src[] = {"local peer = 1 - rank", "dist.send(t, peer)",
                                  "dist.recv(t, peer)"};

static cs_viz_view view(const char *status) {
    return (cs_viz_view){.mon = &mon, .hist = &hist, .script = "t.lua", .src = src, .nsrc = 3,
                         .status = status, .steps = 3, .speed = 10, .now = 1.0};
}

static const char *render(const cs_viz_view *v, int w, int h) {
    cs_grid_free(&grid);
    ck_assert_int_eq(cs_grid_init(&grid, w, h), 0);
    cs_viz_render(&grid, v);
    free(text);
    text = cs_grid_text(&grid);
    return text;
}

/* The grid line that contains needle, or NULL. */
static const char *line_with(const char *needle) {
    static char line[4096];
    for (int y = 0; y < grid.h; y++)
        if (strstr(cs_grid_row(&grid, y, line, sizeof line), needle)) return line;
    return NULL;
}

#define ck_assert_has(needle) ck_assert_msg(strstr(text, needle), "no '%s' in:\n%s", needle, text)

START_TEST(test_grid_put_and_clip) {
    ck_assert_int_eq(cs_grid_init(&grid, 5, 2), 0);
    ck_assert_int_eq(cs_grid_put(&grid, 3, 0, 10, "abc", 0, 0), 2); /* clipped at the edge */
    ck_assert_int_eq(cs_grid_put(&grid, 0, 1, 10, "a→\tb\x01", 0, 0), 5);
    cs_grid_putc(&grid, -1, 7, 'x', 0, 0); /* outside: ignored */
    text = cs_grid_text(&grid);
    ck_assert_str_eq(text, "   ab\na→ b?\n");
    ck_assert_int_eq(cs_utf8_width("a→b"), 3);
    cs_grid_free(&grid);
}
END_TEST

/* Wide characters take two cells, as on the terminal: cut whole at a pane's
 * edge, never half drawn; a narrow one written over half of one blanks the
 * other half. (The columns are the locale's, as on screen: UTF-8 here.) */
START_TEST(test_grid_wide) {
    if (!setlocale(LC_CTYPE, "C.UTF-8")) return; /* no UTF-8 locale to measure with */
    ck_assert_int_eq(cs_utf8_width("日本語"), 6);
    ck_assert_int_eq(cs_utf8_width("e\u0301"), 1); /* a combining accent takes none */
    ck_assert_int_eq(cs_grid_init(&grid, 6, 3), 0);
    ck_assert_int_eq(cs_grid_put(&grid, 0, 0, 5, "日本語", 0, 0), 4); /* the third does not fit */
    ck_assert_int_eq(cs_grid_put(&grid, 1, 1, 10, "日本語", 0, 0), 4);  /* nor at the edge */
    cs_grid_put(&grid, 0, 2, 6, "日本語", 0, 0);
    cs_grid_putc(&grid, 3, 2, 'x', 0, 0); /* over 本's right half */
    text = cs_grid_text(&grid);
    ck_assert_str_eq(text, "日本\n 日本\n日 x語\n");
    cs_grid_free(&grid);
    /* wrapped text measures columns too: 10 wide characters in 8 columns */
    char line[256];
    ck_assert_int_eq(cs_grid_init(&grid, 8, 4), 0);
    cs_grid_put(&grid, 0, 0, 8, "日本語テキスト日本語", 0, 0);
    ck_assert_str_eq(cs_grid_row(&grid, 0, line, sizeof line), "日本語テ");
    cs_grid_free(&grid);
    setlocale(LC_CTYPE, "C");
}
END_TEST

/* A timekeeper's vtime event (docs/trace-format.md). */
static void vtime(const char *what, int rank, int peer, uint64_t from, uint64_t to) {
    bool msg = !strcmp(what, "send");
    emit((cs_event){.type = CS_EV_VTIME, .rank = -1, .vrank = rank, .text = what, .peer = peer,
                    .bytes = msg ? 1000 : 0, .vt = from, .vt_done = to,
                    .vt_start = msg ? from : 0, .vt_arrive = msg ? to : 0});
}

static int lines_with(const char *needle) {
    int n = 0;
    char line[4096];
    for (int y = 0; y < grid.h; y++) n += strstr(cs_grid_row(&grid, y, line, sizeof line), needle) != NULL;
    return n;
}

/* Key t: the diagram in virtual time to scale, rows equal stretches of it. */
static int blocked_rows(uint64_t wait_end) {
    start(2, 0);
    message(0, 1, 1, 1, 1000);
    vtime("send", 0, 1, 0, 11000);
    vtime("wait", 0, -1, 0, wait_end);
    vtime("wait", 1, -1, 0, 11000);
    vtime("compute", 0, -1, wait_end, 22000);
    vtime("exit", 0, -1, 22000, 22000);
    vtime("exit", 1, -1, 11000, 11000);
    cs_viz_view v = view("finished");
    v.ascii = true;
    render(&v, 100, 30);
    ck_assert_has("(t: to scale)");
    v.scaled = true;
    render(&v, 100, 30);
    ck_assert_has("to scale: 1 row = 1 us, ");
    ck_assert_has("0 to 22 us (t: order)");
    ck_assert_msg(line_with("o") && lines_with(">") >= 1, "no arrow in:\n%s", text);
    int n = lines_with("#");
    finish();
    return n;
}

START_TEST(test_scaled_diagram) {
    int half = blocked_rows(11000), most = blocked_rows(20000);
    ck_assert_int_gt(half, 3);
    ck_assert_int_gt(most, half + 3); /* longer waits, more rows */
    start(2, 0);
    message(0, 1, 1, 1, 1000);
    cs_viz_view v = view("finished");
    v.scaled = true;
    render(&v, 100, 30);
    ck_assert_has("no modelled time: run with --net");
    finish();
}
END_TEST

/* A deadlock's waits never end, so the timekeeper times none of them: the
 * ranks it found blocked are drawn blocked from their clocks then (the end
 * of their last wait or compute) to the bottom. Rank 2 blocks at 0 and
 * waits through every row; rank 0 computes from 10 to 20 us, then blocks. */
START_TEST(test_scaled_deadlock) {
    start(3, 0);
    message(1, 1, 0, 1, 1000);
    vtime("send", 1, 0, 0, 10000);
    vtime("wait", 0, -1, 0, 10000);
    vtime("wait", 1, -1, 0, 10000);
    vtime("exit", 1, -1, 10000, 10000);
    quit(1);
    vtime("compute", 0, -1, 10000, 20000);
    post(2, 1, CS_OP_SEND, 0, 16, 5);
    block(2, 1, 5);
    post(0, 2, CS_OP_RECV, 1, 16, 6);
    block(0, 2, 6);
    ck_assert(mon.deadlocked);
    cs_viz_view v = view("deadlocked");
    v.ascii = true;
    v.scaled = true;
    render(&v, 100, 30);
    ck_assert_has("0 to 20 us (t: order)");
    /* rank 2's column: # on every row of the 20 us; rank 0's: # again on
     * the last row, where its clock stood when it blocked */
    char ranks[4096], line[4096];
    int yh = -1;
    for (int y = 0; y < grid.h && yh < 0; y++)
        if (strstr(cs_grid_row(&grid, y, line, sizeof line), "to scale: 1 row = 2 us")) yh = y;
    ck_assert_int_ge(yh, 0);
    cs_grid_row(&grid, yh + 1, ranks, sizeof ranks);
    const char *c0 = strchr(ranks, '0'), *c2 = strchr(ranks, '2');
    ck_assert(c0 && c2);
    int run = 0, last0 = 0;
    for (int y = yh + 2; y < grid.h; y++) {
        const char *r = cs_grid_row(&grid, y, line, sizeof line);
        if (r[c2 - ranks] != '#') break;
        run++;
        last0 = r[c0 - ranks];
    }
    ck_assert_msg(run == 11 && last0 == '#', "%d rows of rank 2 blocked in:\n%s", run, text);
    finish();
}
END_TEST

/* A rank that failed has no exit span: its lane ends where its clock
 * stood, an X there (it ran on to the bottom); a rank that computed on and
 * exited is drawn to its exit as before. */
START_TEST(test_scaled_failed) {
    start(2, 0);
    vtime("compute", 0, -1, 0, 10000);
    vtime("compute", 1, -1, 0, 20000);
    vtime("exit", 1, -1, 20000, 20000);
    quit(1);
    emit((cs_event){.type = CS_EV_ERROR, .rank = 0, .text = "t.lua:3: boom", .status = 2});
    emit((cs_event){.type = CS_EV_EXIT, .rank = 0, .status = 2});
    cs_viz_view v = view("failed");
    v.ascii = true;
    v.scaled = true;
    render(&v, 100, 30);
    char ranks[4096], line[4096];
    int yh = -1;
    for (int y = 0; y < grid.h && yh < 0; y++)
        if (strstr(cs_grid_row(&grid, y, line, sizeof line), "to scale: 1 row = 1 us")) yh = y;
    ck_assert_msg(yh >= 0, "%s", text);
    cs_grid_row(&grid, yh + 1, ranks, sizeof ranks);
    size_t c0 = (size_t)(strchr(ranks, '0') - ranks);
    int fail_row = -1, below = 0;
    for (int y = yh + 2; y < yh + 2 + 20; y++) { /* the 20 rows of 1 us */
        char ch = cs_grid_row(&grid, y, line, sizeof line)[c0];
        if (ch == 'X') fail_row = y - yh - 2;
        else if (fail_row >= 0 && ch != ' ') below++;
    }
    ck_assert_msg(fail_row == 10 && below == 0, "X at row %d, %d drawn below it in:\n%s", fail_row,
                  below, text);
    finish();
}
END_TEST

/* A timeout stops rank 0 in its receive (spinning in the wait: no block)
 * and rank 1 running after a 20 us compute: rank 0 waits from its clock (0)
 * to the bottom, a wait that never ended; rank 1's lane ends at its clock. */
START_TEST(test_scaled_stopped) {
    start(2, 0);
    post(0, 1, CS_OP_RECV, 1, 16, 3);
    uint64_t ids[1] = {1};
    emit((cs_event){.type = CS_EV_WAIT, .rank = 0, .line = 3, .nreqs = 1, .reqs = ids});
    vtime("compute", 1, -1, 0, 20000);
    emit((cs_event){.type = CS_EV_ERROR, .rank = -1, .status = 4,
                    .text = "timeout: the run did not finish within 1 s (--timeout)"});
    emit((cs_event){.type = CS_EV_EXIT, .rank = 0, .status = 1, .line = 3});
    emit((cs_event){.type = CS_EV_EXIT, .rank = 1, .status = 1, .line = 5});
    cs_viz_view v = view("stopped");
    v.ascii = true;
    v.scaled = true;
    render(&v, 100, 30);
    char ranks[4096], line[4096];
    int yh = -1, per = 0;
    for (int y = 0; y < grid.h && yh < 0; y++) {
        const char *r = strstr(cs_grid_row(&grid, y, line, sizeof line), "to scale: 1 row = ");
        if (r) yh = y, per = atoi(r + strlen("to scale: 1 row = "));
    }
    ck_assert_msg(yh >= 0 && per > 0, "%s", text);
    cs_grid_row(&grid, yh + 1, ranks, sizeof ranks);
    size_t c0 = (size_t)(strchr(ranks, '0') - ranks), c1 = (size_t)(strchr(ranks, '1') - ranks);
    int body = 0, comp = 0, after = 0;
    for (int y = yh + 2; y < grid.h; y++, body++) { /* to the bottom: rank 0 blocked */
        const char *r = cs_grid_row(&grid, y, line, sizeof line);
        if (r[c0] != '#') break;
        comp += r[c1] == ':';
        after += body > 20 / per && r[c1] != ' ';
    }
    ck_assert_msg(body > 20 / per && comp == 20 / per && after == 0,
                  "rank 0 blocked on %d rows, rank 1 computing on %d, drawn on %d past its end, in:\n%s",
                  body, comp, after, text);
    finish();
}
END_TEST

/* More messages than rows: each drawn on a row of its own, none over
 * another, and the last row counts those left out. */
START_TEST(test_scaled_crowded) {
    start(2, 0);
    for (int i = 0; i < 60; i++) {
        message(0, 1 + (uint64_t)i, 1, 1 + (uint64_t)i, 1000);
        vtime("send", 0, 1, 0, 5000);
    }
    vtime("exit", 0, -1, 10000, 10000);
    vtime("exit", 1, -1, 10000, 10000);
    cs_viz_view v = view("finished");
    v.ascii = true;
    v.scaled = true;
    render(&v, 100, 30);
    const char *note = line_with("messages not drawn: no free row");
    ck_assert_msg(note, "no note in:\n%s", text);
    int hidden = atoi(strstr(note, "messages not drawn") - 4);
    int drawn = lines_with("o-1000 B-");
    ck_assert_msg(drawn > 5, "%d arrows in:\n%s", drawn, text);
    ck_assert_int_eq(drawn + hidden, 60);
    finish();
}
END_TEST

START_TEST(test_deadlock_frame) {
    start(2, 0);
    post(0, 1, CS_OP_SEND, 1, 16, 2);
    post(1, 1, CS_OP_SEND, 0, 16, 2);
    block(0, 1, 2);
    block(1, 1, 2);
    ck_assert(mon.deadlocked);
    ck_assert_ptr_nonnull(hist.frozen);
    /* the ranks unwind after the abort: the frame still shows them blocked */
    emit((cs_event){.type = CS_EV_UNBLOCK, .rank = 0});
    emit((cs_event){.type = CS_EV_EXIT, .rank = 0, .status = 1});
    cs_viz_view v = view("deadlocked");
    render(&v, 100, 30);
    ck_assert_has("DEADLOCKED");
    ck_assert_has("wait-for cycle: rank 0 → rank 1 → rank 0");
    ck_assert_has("deadlock: no rank can make progress");
    ck_assert_has("fix:");
    const char *r0 = line_with("    0  blocked");
    ck_assert_ptr_nonnull(r0);
    ck_assert_ptr_nonnull(strstr(r0, "send → 1 tag 0 16 B"));
    ck_assert_ptr_nonnull(strstr(r0, "line 2"));
    ck_assert_ptr_nonnull(line_with("    1  blocked"));
    ck_assert_ptr_nonnull(line_with("DEADLOCK ─"));
    ck_assert_ptr_nonnull(line_with("0,1   2 dist.send(t, peer)")); /* both ranks' line */
    ck_assert_has("in flight: 2");
    ck_assert_has("0 → 1  16 B  tag 0  posted  line 2");
    /* the alerts' title counts what it leaves out: "1 more line", never
     * "1 more lines" (some height leaves out exactly one) */
    bool one = false;
    for (int h = 15; h <= 30; h++) {
        render(&v, 80, h);
        ck_assert_msg(!strstr(text, "(1 more lines"), "%s", text);
        one |= strstr(text, "(1 more line: a shows them all)") != NULL;
    }
    ck_assert(one);
    finish();
}
END_TEST

START_TEST(test_message_arrows) {
    start(4, 0);
    message(0, 1, 1, 1, 16);
    message(1, 2, 2, 1, 16);
    message(3, 1, 2, 2, 4096); /* right to left */
    quit(0);
    cs_viz_view v = view("running");
    render(&v, 100, 30);
    ck_assert_has("space-time: 3 msgs");
    const char *a = line_with("──▶");
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(strstr(a, "●──16 B───▶"));
    ck_assert_msg(line_with("◀──4 KiB──●"), "%s", text);
    ck_assert_ptr_nonnull(line_with("✓"));
    ck_assert_ptr_nonnull(line_with("    0  done"));
    finish();
}
END_TEST

START_TEST(test_repeats_and_bounded_rows) {
    start(2, 8);
    for (int i = 0; i < 5; i++) message(0, (uint64_t)i + 1, 1, (uint64_t)i + 1, 8);
    ck_assert_uint_eq(hist.n, 1); /* five identical messages, one row */
    cs_viz_view v = view("running");
    render(&v, 80, 24);
    ck_assert_has("8 B x5");
    for (int i = 0; i < 20; i++) { /* alternate directions: no merging */
        message(0, 100 + (uint64_t)i, 1, 100 + (uint64_t)i, 8);
        message(1, 100 + (uint64_t)i, 0, 100 + (uint64_t)i, 8);
    }
    ck_assert_uint_eq(hist.n, 8);
    ck_assert_uint_eq(hist.messages, 45);
    ck_assert_uint_eq(hist.dropped_rows, 32); /* the first merged with the x5 row */
    ck_assert_uint_eq(hist.dropped_msgs, 37); /* never silently: counted and shown */
    render(&v, 80, 24);
    ck_assert_has("32 older rows (37 msgs) not kept");
    finish();
}
END_TEST

START_TEST(test_blocked_stretch_and_now) {
    start(2, 0);
    post(1, 1, CS_OP_RECV, 0, 16, 9);
    block(1, 1, 9);
    cs_viz_view v = view("running");
    render(&v, 80, 24);
    ck_assert_ptr_nonnull(line_with("recv ← 0 tag 0 16 B"));
    ck_assert_ptr_nonnull(line_with("┃")); /* the now line: rank 1 sleeps */
    ck_assert_has("1.0s");                  /* blocked since 0, now is 1.0 */
    post(0, 1, CS_OP_SEND, 1, 16, 7);
    match(1, 1, 0, 1, 16);
    complete(1, 1);
    complete(0, 1);
    emit((cs_event){.type = CS_EV_UNBLOCK, .rank = 1});
    render(&v, 80, 24);
    ck_assert_ptr_nonnull(line_with("●──16 B"));
    /* the arrow's row marks the receiver's stretch before it as blocked */
    ck_assert_uint_eq(cs_history_state(&hist, 0, 1), CS_HS_BLOCKED | CS_HS_MARK);
    finish();
}
END_TEST

START_TEST(test_collective_band) {
    start(4, 0);
    for (int k = 0; k < 4; k++)
        emit((cs_event){.type = CS_EV_COLL, .rank = k, .begin = true, .text = "all_reduce",
                        .peer = -1, .ctx = 1, .bytes = 16});
    emit((cs_event){.type = CS_EV_MATCH, .rank = 1, .req = 9, .peer = 0, .peer_req = 9,
                    .ctx = 1, .bytes = 16});
    ck_assert_uint_eq(hist.n, 1);
    ck_assert_uint_eq(hist.messages, 0);
    ck_assert_uint_eq(hist.coll_msgs, 1);
    for (int k = 0; k < 4; k++)
        emit((cs_event){.type = CS_EV_COLL, .rank = k, .begin = false, .text = "all_reduce"});
    cs_viz_view v = view("running");
    render(&v, 100, 30);
    ck_assert_msg(line_with("╪═ all_reduce x1"), "%s", text);
    ck_assert_has("╪═════════╪═════════╪═════════╪═ all_reduce done");
    ck_assert_uint_eq(hist.rows[0].count, 1);
    ck_assert_has("space-time: 0 msgs + 1 in collectives");
    finish();
}
END_TEST

START_TEST(test_band_interleaved) {
    start(3, 0);
    cs_event in = {.type = CS_EV_COLL, .begin = true, .text = "barrier", .ctx = 2};
    cs_event out = {.type = CS_EV_COLL, .begin = false, .text = "barrier", .ctx = 2};
    in.rank = 0, emit(in);
    in.rank = 1, emit(in);
    message(2, 1, 0, 1, 8); /* other traffic in between */
    in.rank = 2, emit(in);  /* joins the band two rows up */
    out.rank = 0, emit(out);
    in.rank = 0, emit(in);  /* rank 0's next call: a new band */
    ck_assert_uint_eq(hist.n, 4);
    for (int k = 0; k < 3; k++) ck_assert(cs_history_state(&hist, 0, k) & CS_HS_MARK);
    ck_assert(cs_history_state(&hist, 3, 0) & CS_HS_MARK);
    ck_assert(!(cs_history_state(&hist, 3, 1) & CS_HS_MARK));
    finish();
}
END_TEST

/* Issue 14 item 1: a message counts in the band of its own call (its tag is
 * the call's number), even when later bands were opened meanwhile. */
START_TEST(test_band_counts_own_call) {
    start(4, 0);
    cs_event in = {.type = CS_EV_COLL, .begin = true, .text = "all_reduce", .ctx = 1,
                   .algo = "ring"};
    cs_event out = in;
    out.begin = false;
    for (int k = 0; k < 4; k++) in.rank = k, emit(in); /* call 0 */
    for (int k = 0; k < 2; k++) out.rank = k, emit(out);
    for (int k = 0; k < 2; k++) in.rank = k, emit(in); /* call 1, ranks 0 and 1 */
    for (int i = 0; i < 6; i++) /* call 0's messages, late */
        emit((cs_event){.type = CS_EV_MATCH, .rank = 2 + i % 2, .req = 9, .peer = i % 2,
                        .peer_req = 9, .ctx = 1, .tag = 0, .bytes = 4});
    emit((cs_event){.type = CS_EV_MATCH, .rank = 1, .req = 9, .peer = 0, .peer_req = 9,
                    .ctx = 1, .tag = 1, .bytes = 4});
    for (int k = 2; k < 4; k++) out.rank = k, emit(out);
    for (int k = 2; k < 4; k++) in.rank = k, emit(in); /* join call 1's band */
    ck_assert_uint_eq(hist.n, 3);
    ck_assert_uint_eq(hist.rows[0].count, 6);
    ck_assert_uint_eq(hist.rows[2].count, 1);
    for (int k = 0; k < 4; k++) ck_assert(cs_history_state(&hist, 2, k) & CS_HS_MARK);
    ck_assert_uint_eq(hist.coll_msgs, 7);
    cs_viz_view v = view("running"); /* the algorithm on the band (item 2) */
    render(&v, 100, 30);
    ck_assert_msg(line_with("all_reduce (ring) x6"), "%s", text);
    finish();
}
END_TEST

/* Issue 14 item 3: every blocked rank's bar up to the verdict, the verdict
 * below them, no marks of the ranks unwinding after it; at 80x24 the alert
 * says how much more there is. */
START_TEST(test_deadlock_diagram) {
    start(2, 0);
    post(0, 1, CS_OP_SEND, 1, 16, 2);
    block(0, 1, 2);
    post(1, 1, CS_OP_SEND, 0, 16, 2);
    block(1, 1, 2);
    for (int k = 1; k >= 0; k--) { /* unwinding, in any order */
        emit((cs_event){.type = CS_EV_UNBLOCK, .rank = k});
        emit((cs_event){.type = CS_EV_EXIT, .rank = k, .status = 1});
    }
    cs_viz_view v = view("deadlocked");
    render(&v, 100, 30);
    int dl = -1;
    char line[4096];
    for (int y = 0; y < grid.h; y++)
        if (strstr(cs_grid_row(&grid, y, line, sizeof line), "DEADLOCK ─")) dl = y;
    ck_assert_int_gt(dl, 0);
    cs_grid_row(&grid, dl - 1, line, sizeof line);
    ck_assert_msg(strstr(line, "     ┃         ┃"), "no bars above the verdict:\n%s", text);
    for (int y = dl; y < grid.h - 1; y++) /* nothing of the unwinding below it */
        ck_assert_msg(!strstr(cs_grid_row(&grid, y, line, sizeof line), "✗"), "%s", text);
    render(&v, 80, 24);
    ck_assert_has(" DEADLOCKED");
    ck_assert_has("10 ops/s");
    ck_assert_has("fix:");
    finish();
}
END_TEST

/* Issue 14 items 9-11: one monotone ladder of speeds from any start; help
 * and footer follow the mode; the help box is not wrapped twice. */
START_TEST(test_speed_ladder_and_help) {
    ck_assert(cs_tui_next_speed(0.2, -1) == 0.1);
    ck_assert(cs_tui_next_speed(0.2, 1) == 0.5);
    ck_assert(cs_tui_next_speed(3, 1) == 5);
    ck_assert(cs_tui_next_speed(3, -1) == 2);
    ck_assert(cs_tui_next_speed(1000, 1) == 0);
    ck_assert(cs_tui_next_speed(0, -1) == 1000);
    ck_assert(cs_tui_next_speed(0, 1) == 0);
    for (double s = 0.1; s != 0; s = cs_tui_next_speed(s, 1)) { /* up, then back down */
        double up = cs_tui_next_speed(s, 1);
        ck_assert(up == 0 || up > s);
        ck_assert(cs_tui_next_speed(up, -1) == s);
    }
    start(2, 0);
    cs_viz_view v = view("paused");
    v.help = true;
    render(&v, 100, 30);
    ck_assert_has("step only the selected rank");
    ck_assert_has("this help (any key closes it)");
    ck_assert_msg(line_with("│ receive), computing") == NULL && line_with("│ ranks)") == NULL,
                  "wrapped twice:\n%s", text);
    v.replay = true;
    render(&v, 100, 30);
    ck_assert_has("forward to the next operation");
    ck_assert_has("G / g    the end / the start of the trace");
    ck_assert_msg(!strstr(text, "step only the selected rank"), "%s", text);
    v.help = false;
    render(&v, 100, 30);
    ck_assert_msg(line_with("b back") && line_with("G g end/start"), "%s", text);
    finish();
}
END_TEST

/* The lines kept per rank are bounded in count and in bytes: a script
 * printing 64 KiB lines kept 2000 of them (125 MiB a rank) in the
 * visualizer, charged to no rank's memory cap. */
START_TEST(test_output_kept_bounded) {
    start(2, 0);
    static char big[CS_EV_MAX_TEXT];
    memset(big, 'x', sizeof big - 1);
    for (int i = 0; i < 100; i++) {
        big[0] = (char)('A' + i % 26);
        emit((cs_event){.type = CS_EV_PRINT, .rank = 0, .text = big});
    }
    size_t n = cs_history_nout(&hist, 0), bytes = 0;
    ck_assert_uint_ge(n, 1);
    for (size_t i = 0; i < n; i++) bytes += strlen(cs_history_out(&hist, 0, i));
    ck_assert_uint_le(bytes, CS_HIST_OUT_BYTES);
    ck_assert_int_eq(cs_history_out(&hist, 0, n - 1)[0], 'A' + 99 % 26); /* the newest */
    ck_assert_uint_eq(hist.out[0].total, 100);                           /* all counted */
    cs_viz_view v = view("running");
    v.full = CS_FULL_OUTPUT;
    render(&v, 100, 30);
    char said[96];
    snprintf(said, sizeof said, "(the first %zu lines printed are not kept: the last %zu are)",
             100 - n, n);
    ck_assert_has(said);
    /* a line longer than the budget is still kept, alone */
    static char huge[CS_EV_MAX_TEXT];
    for (int i = 0; i < 5; i++) {
        memset(huge, 'a' + i, sizeof huge - 1);
        emit((cs_event){.type = CS_EV_PRINT, .rank = 1, .text = huge});
    }
    ck_assert_uint_ge(cs_history_nout(&hist, 1), 1);
    /* and short lines still reach the count bound first */
    for (int i = 0; i < CS_HIST_OUT_KEEP + 10; i++)
        emit((cs_event){.type = CS_EV_PRINT, .rank = 1, .text = "line"});
    ck_assert_uint_eq(cs_history_nout(&hist, 1), CS_HIST_OUT_KEEP);
    ck_assert_str_eq(cs_history_out(&hist, 1, 0), "line");
    finish();
}
END_TEST

START_TEST(test_output_warnings_errors) {
    start(2, 0);
    emit((cs_event){.type = CS_EV_PRINT, .rank = 1, .text = "hello\nworld\n"});
    emit((cs_event){.type = CS_EV_WARN, .rank = 0, .text = "t.lua:4: isend buffer written"});
    emit((cs_event){.type = CS_EV_ERROR, .rank = 0, .text = "t.lua:3: boom", .status = 2});
    ck_assert_uint_eq(cs_history_nout(&hist, 1), 2);
    ck_assert_str_eq(cs_history_out(&hist, 1, 1), "world");
    cs_viz_view v = view("failed");
    v.selected = 1;
    render(&v, 100, 30);
    ck_assert_has("output, rank 1 (2 lines)");
    ck_assert_has("world");
    ck_assert_has("warning: t.lua:4: isend buffer written");
    ck_assert_has("t.lua:3: boom");
    ck_assert_ptr_nonnull(line_with("    0  failed"));
    finish();
}
END_TEST

/* The output panel shows the newest rows, as a terminal would: a line that
 * wraps to more rows than are left shows its last ones, above the newer
 * lines. (It used to be left out whole, and the panel showed only the newest
 * line under a title counting three, over empty rows.) */
START_TEST(test_output_long_line_tail) {
    start(1, 0);
    static char big[301];
    memset(big, 'x', 300);
    memcpy(big + 296, "TAIL", 4);
    emit((cs_event){.type = CS_EV_PRINT, .rank = 0, .text = "one"});
    emit((cs_event){.type = CS_EV_PRINT, .rank = 0, .text = big});
    emit((cs_event){.type = CS_EV_PRINT, .rank = 0, .text = "three"});
    cs_viz_view v = view("finished");
    render(&v, 80, 24);
    static char row[4096], above[4096];
    int y = 0;
    while (y < grid.h && !strstr(cs_grid_row(&grid, y, row, sizeof row), "output, rank 0")) y++;
    ck_assert_msg(y < grid.h, "no output panel in:\n%s", text);
    int last = y; /* the panel's last row with text: "three" */
    for (int i = y + 1; i < grid.h - 1; i++)
        if (strstr(cs_grid_row(&grid, i, row, sizeof row), "three")) last = i;
    ck_assert_msg(last > y + 1, "'three' is not under the title, or nothing is above it:\n%s", text);
    ck_assert_msg(strstr(cs_grid_row(&grid, last - 1, above, sizeof above), "xxxTAIL"),
                  "the long line's tail is not above 'three':\n%s", text);
    finish();
}
END_TEST

START_TEST(test_gates_shown) {
    start(2, 0);
    cs_viz_gate gates[2] = {{true, CS_OP_SEND, 1, 3, 2}, {false}};
    cs_viz_view v = view("paused");
    v.gates = gates;
    render(&v, 80, 24);
    ck_assert_has("PAUSED");
    const char *r0 = line_with("    0  ready");
    ck_assert_ptr_nonnull(r0);
    ck_assert_ptr_nonnull(strstr(r0, "send → 1 tag 3"));
    ck_assert_has("step 3  10 ops/s");
    finish();
}
END_TEST

START_TEST(test_many_ranks_scroll) {
    start(256, 0);
    cs_viz_view v = view("running");
    v.selected = 210;
    v.rank_top = 205;
    render(&v, 80, 24);
    ck_assert_has("ranks 205-209 of 256");
    ck_assert_ptr_nonnull(line_with("  205  idle")); /* never started */
    /* the diagram's columns follow the selected rank */
    cs_viz_layout l;
    cs_viz_layout_of(&v, 80, 24, &l);
    ck_assert_int_le(l.diag_col_first, 210);
    ck_assert_int_gt(l.diag_col_first + (l.diag_w - 1) / l.diag_cw, 210);
    ck_assert_ptr_nonnull(line_with("210"));
    /* clicks: a rank row, a diagram column, elsewhere */
    ck_assert_int_eq(cs_viz_hit(&l, 205, 256, 3, l.ranks_y + 2), 207);
    ck_assert_int_eq(cs_viz_hit(&l, 205, 256, l.diag_x + (211 - l.diag_col_first) * l.diag_cw + l.diag_cw / 2, l.body_y + 3), 211);
    ck_assert_int_eq(cs_viz_hit(&l, 205, 256, 3, 0), -1);
    finish();
}
END_TEST

START_TEST(test_nav_keeps_selection_visible) {
    start(256, 0);
    cs_tui_nav nav = {.nranks = 256};
    cs_viz_view v = view("running");
    ck_assert(cs_tui_nav_key(&nav, CS_KEY_BTAB, 0, 0));
    ck_assert_int_eq(nav.selected, 255); /* wraps */
    cs_tui_nav_apply(&nav, &v, 80, 24);
    ck_assert_int_eq(v.rank_top + nav.layout.ranks_h - 1, 255);
    render(&v, 80, 24);
    ck_assert_ptr_nonnull(line_with("▸  255"));
    ck_assert(cs_tui_nav_key(&nav, '?', 0, 0));
    cs_tui_nav_apply(&nav, &v, 80, 24);
    render(&v, 80, 24);
    ck_assert_has("advance every runnable rank by one operation");
    /* every state the rank table shows is named, idle too (a replay's start) */
    ck_assert_has("states: idle (not started), ready");
    ck_assert(cs_tui_nav_key(&nav, 'x', 0, 0)); /* closes the help */
    ck_assert(!nav.help);
    cs_tui_nav_popup(&nav, "rank 0: tensor", "tensor([1., 2., 3.])");
    cs_tui_nav_apply(&nav, &v, 80, 24);
    render(&v, 80, 24);
    ck_assert_has("tensor([1., 2., 3.])");
    cs_tui_nav_free(&nav);
    finish();
}
END_TEST

/* The alerts opened at 200x60, where they fit, then the window made
 * 60x16, where they do not: they still start at their first line (they
 * followed their end, as the output does, and hid the verdict). */
START_TEST(test_nav_alerts_keep_top) {
    start(3, 0);
    message(0, 1, 1, 1, 16);
    quit(0);
    post(1, 2, CS_OP_SEND, 2, 16, 2);
    post(2, 1, CS_OP_SEND, 1, 16, 2);
    block(1, 2, 2);
    block(2, 1, 2);
    cs_viz_view v = view("deadlocked");
    cs_tui_nav nav = {.nranks = 3};
    ck_assert(cs_tui_nav_key(&nav, 'a', 0, 0));
    cs_tui_nav_apply(&nav, &v, 200, 60);
    ck_assert_int_eq(nav.full_top, 0);
    cs_tui_nav_apply(&nav, &v, 60, 16);
    ck_assert_int_gt(cs_viz_full_lines(&v, 60), 16 - 3); /* they no longer fit */
    ck_assert_int_eq(nav.full_top, 0);
    render(&v, 60, 16);
    ck_assert_has("wait-for cycle: rank 1");
    ck_assert_has(" a or esc: back "); /* the way back, whole at 60 columns */
    /* scrolled to their end, they stay at it */
    ck_assert(cs_tui_nav_key(&nav, CS_KEY_END, 0, 0));
    cs_tui_nav_apply(&nav, &v, 60, 16);
    ck_assert_int_eq(nav.full_top, cs_viz_full_lines(&v, 60) - (16 - 3));
    /* End where they all fit, then a smaller window: still their end */
    ck_assert(cs_tui_nav_key(&nav, CS_KEY_HOME, 0, 0));
    cs_tui_nav_apply(&nav, &v, 200, 60);
    ck_assert(cs_tui_nav_key(&nav, CS_KEY_END, 0, 0));
    cs_tui_nav_apply(&nav, &v, 200, 60);
    ck_assert_int_eq(nav.full_top, 0);
    cs_tui_nav_apply(&nav, &v, 60, 16);
    ck_assert_int_eq(nav.full_top, cs_viz_full_lines(&v, 60) - (16 - 3));
    cs_tui_nav_free(&nav);
    finish();
}
END_TEST

/* The output scrolled back to line 41 at 80 columns, where each line takes
 * one row, then the window made 60 wide, where each takes two: line 41 is
 * still on top (its row number, 40, is line 21 there). */
START_TEST(test_nav_output_resize_keeps_line) {
    start(2, 0);
    char line[128];
    for (int i = 1; i <= 100; i++) {
        snprintf(line, sizeof line, "line %d of rank 0: text that wraps at sixty columns but not at 80", i);
        emit((cs_event){.type = CS_EV_PRINT, .rank = 0, .text = line});
    }
    cs_viz_view v = view("paused");
    cs_tui_nav nav = {.nranks = 2};
    ck_assert(cs_tui_nav_key(&nav, 'p', 0, 0));
    cs_tui_nav_apply(&nav, &v, 80, 24);
    ck_assert_int_eq(nav.full_top, 100 - 21); /* at the newest */
    ck_assert(cs_tui_nav_key(&nav, CS_KEY_HOME, 0, 0));
    for (int i = 0; i < 40; i++) ck_assert(cs_tui_nav_key(&nav, CS_KEY_DOWN, 0, 0));
    cs_tui_nav_apply(&nav, &v, 80, 24);
    render(&v, 80, 24);
    ck_assert_ptr_nonnull(strstr(cs_grid_row(&grid, 2, line, sizeof line), " line 41 of rank 0:"));
    cs_tui_nav_apply(&nav, &v, 60, 16);
    render(&v, 60, 16);
    ck_assert_msg(strstr(cs_grid_row(&grid, 2, line, sizeof line), " line 41 of rank 0:"), "%s", text);
    cs_tui_nav_apply(&nav, &v, 80, 24);
    render(&v, 80, 24);
    ck_assert_msg(strstr(cs_grid_row(&grid, 2, line, sizeof line), " line 41 of rank 0:"), "%s", text);
    cs_tui_nav_free(&nav);
    finish();
}
END_TEST

/* A wait-for cycle of 4 ranks at 60 columns wraps after an arrow, never
 * between "rank" and its number ("→ rank" / "3 → rank 0"). */
START_TEST(test_cycle_wraps_whole_ranks) {
    start(4, 0);
    for (int r = 0; r < 4; r++) post(r, 1, CS_OP_SEND, (r + 1) % 4, 16, 2);
    for (int r = 0; r < 4; r++) block(r, 1, 2);
    ck_assert(mon.deadlocked);
    cs_viz_view v = view("deadlocked");
    for (int w = 60; w <= 80; w++) {
        render(&v, w, 24);
        ck_assert_has("wait-for cycle: rank 0 → rank 1");
        char row[512];
        for (int y = 0; y < grid.h; y++) {
            cs_grid_row(&grid, y, row, sizeof row);
            size_t n = strlen(row);
            while (n && row[n - 1] == ' ') row[--n] = 0;
            bool cycle = !strncmp(row, " DEADLOCK  ", 11) || !strncmp(row, "           r", 12);
            ck_assert_msg(!cycle || strcmp(row + n - 5, " rank") != 0, "at %d columns: %s", w, text);
        }
        ck_assert_msg(!strchr(text, 0xa0) && !strstr(text, "\xc2\xa0"), "%s", text);
    }
    finish();
}
END_TEST

/* The help at 60 columns: a key's description wraps under itself, not
 * under the key column. */
START_TEST(test_help_wraps_under_description) {
    start(2, 0);
    cs_viz_view v = view("paused");
    v.help = true;
    render(&v, 60, 16);
    ck_assert_has("│ space    advance every runnable rank by one");
    ck_assert_has("│          operation");
    finish();
}
END_TEST

/* A box taller than the screen scrolls by whole lines of its text: from its
 * top, then from where its last lines fill it, saying so each time; the
 * largest top is exact, with or without a trailing newline. */
START_TEST(test_box_scrolls) {
    char box[2048] = "";
    for (int i = 1; i <= 20; i++) { /* one row each in a box on a 60-wide screen */
        char line[32];
        snprintf(line, sizeof line, "line %d\n", i);
        strcat(box, line);
    }
    /* 15 rows: 9 for the text, 8 of them lines when scrolled */
    ck_assert_int_eq(cs_viz_box_max_top(60, 15, box), 12);
    ck_assert_int_eq(cs_viz_box_max_top(60, 40, box), 0); /* it fits */
    for (int top = 0; top <= 99; top += 99) {
        cs_grid_free(&grid);
        ck_assert_int_eq(cs_grid_init(&grid, 60, 15), 0);
        cs_viz_box(&grid, false, "keys", box, top);
        free(text);
        text = cs_grid_text(&grid);
        if (top == 0) { /* from its top */
            ck_assert_has("│ line 1 ");
            ck_assert_has("│ line 8 ");
            ck_assert_msg(!strstr(text, "line 9 "), "line 9 shown:\n%s", text);
            ck_assert_has("more below: down arrow or PgDn");
        } else { /* past its end: its end */
            ck_assert_has("│ line 13 ");
            ck_assert_has("│ line 20 ");
            ck_assert_msg(!strstr(text, "line 12 "), "line 12 shown:\n%s", text);
            ck_assert_has("the end: up arrow or PgUp back");
        }
    }
    box[strlen(box) - 1] = '\0'; /* no trailing newline: the same lines */
    ck_assert_int_eq(cs_viz_box_max_top(60, 15, box), 12);
}
END_TEST

START_TEST(test_ascii_and_small) {
    start(3, 0);
    hist.ascii = true; /* the deadlock snapshot's words too */
    message(0, 1, 1, 1, 16);
    quit(0);
    post(1, 2, CS_OP_SEND, 2, 16, 2);
    post(2, 1, CS_OP_SEND, 1, 16, 2);
    block(1, 2, 2);
    block(2, 1, 2);
    cs_viz_view v = view("deadlocked");
    v.ascii = true;
    render(&v, 80, 24);
    for (int i = 0; i < grid.w * grid.h; i++)
        ck_assert_msg(grid.cells[i].ch < 0x7F, "non-ASCII U+%04X at %d", grid.cells[i].ch, i);
    ck_assert_has("o--16 B--->");
    ck_assert_has("wait-for cycle: rank 1 -> rank 2 -> rank 1");
    for (int w = 20; w <= 120; w += 7) /* any size draws without writing outside */
        for (int h = 5; h <= 40; h += 5) render(&v, w, h);
    v.full = CS_FULL_ALERTS, v.full_top = 1000, v.help = true; /* the overlays too */
    for (int w = 20; w <= 200; w += 15)
        for (int h = 5; h <= 60; h += 11) render(&v, w, h);
    finish();
}
END_TEST

/* At the smallest sizes: the footer's tail always shown, and below the
 * minimum only a line saying so (no text over text). */
START_TEST(test_footer_and_too_small) {
    start(2, 0);
    cs_viz_view v = view("paused");
    char last[4096];
    for (int w = CS_VIZ_MIN_W; w <= 120; w += 10) {
        render(&v, w, 24);
        cs_grid_row(&grid, grid.h - 1, last, sizeof last);
        ck_assert_msg(strstr(last, "? help  q quit "), "no tail at %d columns: %s", w, last);
        v.message = "a message far longer than any footer would hold at the smallest size drawn";
        render(&v, w, 24);
        cs_grid_row(&grid, grid.h - 1, last, sizeof last);
        ck_assert_msg(strstr(last, w < 95 ? "…  ? help  q quit " : "drawn  "), "at %d columns: %s", w,
                      last);
        ck_assert_msg(strstr(last, "? help  q quit "), "no tail at %d columns: %s", w, last);
        v.message = NULL;
    }
    render(&v, CS_VIZ_MIN_W - 1, CS_VIZ_MIN_H);
    ck_assert_has("window too small (59x15, need 60x15)");
    ck_assert_msg(!strstr(text, "ranks"), "%s", text);
    render(&v, CS_VIZ_MIN_W, CS_VIZ_MIN_H - 1);
    ck_assert_has("window too small");
    finish();
}
END_TEST

START_TEST(test_cycle_and_inflight) {
    start(3, 0);
    post(0, 1, CS_OP_RECV, 2, 8, 3);
    post(1, 1, CS_OP_RECV, 0, 8, 3);
    post(2, 1, CS_OP_RECV, 1, 8, 3);
    block(0, 1, 3);
    block(1, 1, 3);
    block(2, 1, 3);
    int cyc[8];
    ck_assert_int_eq(cs_viz_cycle(&mon, cyc, 8), 3);
    ck_assert_int_eq(cyc[0], 0);
    ck_assert_int_eq(cyc[1], 2);
    ck_assert_int_eq(cyc[2], 1);
    cs_viz_msg msgs[2];
    ck_assert_uint_eq(cs_viz_inflight(&mon, msgs, 2), 3); /* counts all, fills 2 */
    ck_assert_str_eq(msgs[0].state, "recv posted");
    finish();
}
END_TEST

/* ---- gates */

typedef struct gate_arg {
    cs_gates *c;
    cs_rank *r;
    int rc;
} gate_arg;

static void *pass_gate(void *p) {
    gate_arg *a = p;
    a->rc = cs_gates_pass(a->c, a->r, CS_OP_SEND, 5);
    return NULL;
}

static void wait_parked(cs_gates *c, int k) {
    while (!cs_gates_parked(c, k).parked) sched_yield();
}

START_TEST(test_control_step_and_abort) {
    cs_bus b;
    char err[128];
    ck_assert_int_eq(cs_bus_init(&b, 2), 0);
    cs_world_config cfg = {.world = 2, .engine = "thread", .script = "t.lua"};
    cs_world *w = cs_world_new(&cfg, &b, err, sizeof err);
    ck_assert_ptr_nonnull(w);
    cs_gates *c = cs_gates_new(cs_world_size(w), true, 0);
    gate_arg a = {c, cs_world_rank(w, 0), 99};
    cs_gates_step(c, 0);
    cs_gates_drop_steps(c, 0); /* the rank blocked before its gate: forgotten */
    pthread_t t;
    pthread_create(&t, NULL, pass_gate, &a);
    wait_parked(c, 0);
    cs_gates_park p = cs_gates_parked(c, 0);
    ck_assert_int_eq(p.op, CS_OP_SEND);
    ck_assert_int_eq(p.line, 5);
    ck_assert_int_eq(p.peer, CS_NO_RANK); /* not called through a send: no details */
    ck_assert_ptr_null(cs_gates_tensor_text(c, 0));
    ck_assert_uint_eq(cs_gates_steps(c), 0);
    cs_gates_step(c, 0);
    pthread_join(t, NULL);
    ck_assert_int_eq(a.rc, CS_OK);
    ck_assert_uint_eq(cs_gates_steps(c), 1);
    ck_assert(!cs_gates_parked(c, 0).parked);
    /* parked again; the run ends: the gate returns at once */
    a.rc = 99;
    pthread_create(&t, NULL, pass_gate, &a);
    wait_parked(c, 0);
    cs_world_abort(w, CS_END_QUIT);
    cs_gates_wake(c);
    pthread_join(t, NULL);
    ck_assert_int_eq(a.rc, CS_EABORT);
    ck_assert_uint_eq(cs_gates_steps(c), 1);
    cs_gates_free(c);
    for (int k = 0; k < 2; k++) cs_rank_exit(cs_world_rank(w, k), 0);
    cs_world_free(w);
    cs_bus_destroy(&b);
}
END_TEST

START_TEST(test_control_run_and_speed) {
    cs_bus b;
    char err[128];
    ck_assert_int_eq(cs_bus_init(&b, 1), 0);
    cs_world_config cfg = {.world = 1, .engine = "thread", .script = "t.lua"};
    cs_world *w = cs_world_new(&cfg, &b, err, sizeof err);
    cs_gates *c = cs_gates_new(cs_world_size(w), false, 0);
    for (int i = 0; i < 100; i++) /* full speed: never waits */
        ck_assert_int_eq(cs_gates_pass(c, cs_world_rank(w, 0), CS_OP_RECV, 1), CS_OK);
    ck_assert_uint_eq(cs_gates_steps(c), 100);
    cs_gates_set_speed(c, 1e6);
    ck_assert(cs_gates_speed(c) == 1e6);
    for (int i = 0; i < 10; i++)
        ck_assert_int_eq(cs_gates_pass(c, cs_world_rank(w, 0), CS_OP_RECV, 1), CS_OK);
    cs_gates_set_paused(c, true);
    ck_assert(cs_gates_paused(c));
    cs_gates_step(c, 0);
    cs_gates_step(c, 0);
    ck_assert_int_eq(cs_gates_pass(c, cs_world_rank(w, 0), CS_OP_RECV, 1), CS_OK);
    ck_assert_int_eq(cs_gates_pass(c, cs_world_rank(w, 0), CS_OP_RECV, 1), CS_OK);
    ck_assert_uint_eq(cs_gates_steps(c), 112);
    cs_gates_free(c);
    cs_rank_exit(cs_world_rank(w, 0), 0);
    cs_world_free(w);
    cs_bus_destroy(&b);
}
END_TEST

static int changes;
static void count_change(void *ud) { (void)ud; changes++; }

/* A rank of another process, as the tcp controller drives it. */
START_TEST(test_control_remote_rank) {
    cs_gates *c = cs_gates_new(3, true, 0);
    cs_gates_on_change(c, count_change, NULL);
    double retry = 0;
    ck_assert(!cs_gates_try_pass(c, 1, &retry)); /* not at its gate */
    cs_gates_arrive(c, 1, (cs_gates_park){true, CS_OP_ISEND, 2, 7, 12}, strdup("tensor([1.])"));
    cs_gates_park p = cs_gates_parked(c, 1);
    ck_assert(p.parked);
    ck_assert_int_eq(p.op, CS_OP_ISEND);
    ck_assert_int_eq(p.peer, 2);
    ck_assert_int_eq(p.tag, 7);
    ck_assert_int_eq(p.line, 12);
    char *shown = cs_gates_tensor_text(c, 1);
    ck_assert_str_eq(shown, "tensor([1.])");
    free(shown);
    ck_assert(!cs_gates_try_pass(c, 1, &retry)); /* paused, no step */
    ck_assert(retry < 0);                        /* ask again on a change */
    int before = changes;
    cs_gates_step(c, 1);
    ck_assert_int_gt(changes, before); /* the controller is told */
    ck_assert(cs_gates_try_pass(c, 1, &retry));
    ck_assert(!cs_gates_parked(c, 1).parked);
    ck_assert_ptr_null(cs_gates_tensor_text(c, 1));
    ck_assert_uint_eq(cs_gates_steps(c), 1);
    ck_assert(!cs_gates_try_pass(c, 1, &retry)); /* one step, one gate */
    /* paced: the first slot is now, the next 1/speed later */
    cs_gates_set_paused(c, false);
    cs_gates_set_speed(c, 2);
    cs_gates_arrive(c, 0, (cs_gates_park){true, CS_OP_RECV, 1, 0, 3}, NULL);
    cs_gates_arrive(c, 2, (cs_gates_park){true, CS_OP_RECV, 1, 0, 3}, NULL);
    ck_assert(cs_gates_try_pass(c, 0, &retry));
    ck_assert(!cs_gates_try_pass(c, 2, &retry));
    ck_assert(retry > 0 && retry <= 0.5);
    /* a rank that dies at its gate is no longer parked */
    cs_gates_leave(c, 2);
    ck_assert(!cs_gates_parked(c, 2).parked);
    ck_assert(!cs_gates_try_pass(c, 2, &retry));
    cs_gates_free(c);
}
END_TEST

/* ---- replay steps */

START_TEST(test_timeline) {
    /* run, print, post, match, complete, post, complete, exit */
    cs_event_type ty[] = {CS_EV_RUN, CS_EV_PRINT, CS_EV_POST, CS_EV_MATCH, CS_EV_COMPLETE,
                          CS_EV_POST, CS_EV_COMPLETE, CS_EV_EXIT};
    cs_event ev[8];
    for (int i = 0; i < 8; i++) ev[i] = (cs_event){.type = ty[i]};
    size_t s = cs_timeline_start(ev, 8);
    ck_assert_uint_eq(s, 1);
    size_t a = cs_timeline_next(ev, 8, s);   /* the print: up to the first post */
    ck_assert_uint_eq(a, 2);
    size_t b = cs_timeline_next(ev, 8, a);   /* the first post and its match, completion */
    ck_assert_uint_eq(b, 5);
    size_t c = cs_timeline_next(ev, 8, b);   /* the last post to the end */
    ck_assert_uint_eq(c, 8);
    ck_assert_uint_eq(cs_timeline_next(ev, 8, c), 8);
    ck_assert_uint_eq(cs_timeline_prev(ev, 8, c), b); /* back retraces every step */
    ck_assert_uint_eq(cs_timeline_prev(ev, 8, b), a);
    ck_assert_uint_eq(cs_timeline_prev(ev, 8, a), s);
    ck_assert_uint_eq(cs_timeline_prev(ev, 8, s), s);
    ck_assert_uint_eq(cs_timeline_ops(ev, b), 1);
    ck_assert_uint_eq(cs_timeline_ops(ev, 8), 2);
    ck_assert_uint_eq(cs_timeline_start(ev, 0), 0);
    ck_assert_uint_eq(cs_timeline_next(ev, 0, 0), 0);
}
END_TEST

/* ---- chapters */

static const char *md_text(const cs_md *d) {
    static char buf[4096];
    size_t n = 0;
    for (int i = 0; i < d->n && n + strlen(d->line[i].text) + 2 < sizeof buf; i++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s\n", d->line[i].text);
    buf[n] = 0;
    return buf;
}

START_TEST(test_markdown_layout) {
    cs_md d;
    const char *md = "# 1. Title\n\nSome `code` and **bold** words that go on and on until "
                     "they wrap.\n\n```lua\ndist.send(t, 1)   -- kept as written, however long "
                     "it is\n```\n- first item, long enough to wrap\n  onto a second line\n"
                     "- second\n12. numbered\n> quoted\n| a | b |\n";
    ck_assert_int_eq(cs_md_layout(&d, md, 30, false), 0);
    const char *t = md_text(&d);
    ck_assert_msg(strstr(t, "1. Title\n\nSome code and bold words that\ngo on and on until they wrap.\n"),
                  "%s", t);
    ck_assert_msg(strstr(t, "\n  dist.send(t, 1)   -- kept as written, however long it is\n"), "%s", t);
    ck_assert_msg(strstr(t, "• first item, long enough to\n  wrap onto a second line\n• second\n"), "%s", t);
    ck_assert_msg(strstr(t, "12. numbered\n│ quoted\na  b\n"), "%s", t); /* a table row */
    ck_assert_int_eq(d.line[0].fg, CS_C_CYAN);      /* the heading */
    ck_assert(d.line[0].attr & CS_A_BOLD);
    cs_md_free(&d);
    /* a table: columns aligned, its rule drawn, its header bold (item 13) */
    ck_assert_int_eq(cs_md_layout(&d, "| op | **who** |\n|---|:-:|\n| send | rank 0 |\n| all_reduce | every rank |\n", 60, false), 0);
    ck_assert_int_eq(d.n, 4);
    ck_assert_str_eq(d.line[0].text, "op          who");
    ck_assert_str_eq(d.line[1].text, "──────────────────────"); /* 10 + 2 + 10 */
    ck_assert_str_eq(d.line[2].text, "send        rank 0");
    ck_assert_str_eq(d.line[3].text, "all_reduce  every rank");
    ck_assert(d.line[0].attr & CS_A_BOLD);
    cs_md_free(&d);
    /* a code line longer than the pane ends in a mark (item 13) */
    ck_assert_int_eq(cs_md_layout(&d, "```\ncommsim run lessons/02-point-to-point/ring.lua -n 8\n```\n", 30, false), 0);
    ck_assert_int_eq(cs_grid_init(&grid, 30, 3), 0);
    cs_md_draw(&d, &grid, 0, 0, 30, 3, 0);
    char row[256];
    ck_assert_str_eq(cs_grid_row(&grid, 0, row, sizeof row), "  commsim run lessons/02-poin…");
    cs_grid_free(&grid);
    cs_md_free(&d);
    /* *emphasis* loses its marks; 2 * 3 and a*b keep theirs (item 13) */
    ck_assert_int_eq(cs_md_layout(&d, "an *emphasised* word, 2 * 3, a*b (*this*).\n", 60, false), 0);
    ck_assert_str_eq(d.line[0].text, "an emphasised word, 2 * 3, a*b (this).");
    cs_md_free(&d);
    ck_assert_int_eq(cs_md_layout(&d, "- x\n", 30, true), 0);
    ck_assert_str_eq(d.line[0].text, "* x");
    cs_md_free(&d);
    /* without UTF-8, chapter 4's formulas are spelled out, not "? + n ?" */
    ck_assert_int_eq(cs_md_layout(&d, "t(n) = α + n β, 2·α − 1 in µs\n", 60, true), 0);
    ck_assert_str_eq(d.line[0].text, "t(n) = alpha + n beta, 2*alpha - 1 in us");
    cs_md_free(&d);
    ck_assert_int_eq(cs_md_layout(&d, "t(n) = α + n β\n", 60, false), 0);
    ck_assert_str_eq(d.line[0].text, "t(n) = α + n β");
    cs_md_free(&d);
}
END_TEST

START_TEST(test_book) {
    const char *top = getenv("top_srcdir");
    char dir[1024], err[256];
    snprintf(dir, sizeof dir, "%s/lessons", top ? top : ".");
    cs_book b;
    ck_assert_int_eq(cs_book_load(&b, dir, err, sizeof err), 0);
    ck_assert_int_ge(b.n, 2);
    int ch = cs_book_find(&b, "2");
    ck_assert_int_ge(ch, 0);
    ck_assert_str_eq(b.ch[ch].slug, "02-point-to-point");
    ck_assert_int_eq(cs_book_find(&b, "point-to-point"), ch);
    ck_assert_int_eq(cs_book_find(&b, "lessons/02-point-to-point/"), ch);
    ck_assert_int_eq(cs_book_find(&b, "nope"), -1);
    ck_assert_str_eq(b.ch[ch].title, "2. Point-to-point communication");
    bool found = false;
    for (int i = 0; i < b.ch[ch].nlessons; i++)
        if (!strcmp(b.ch[ch].lesson[i].file, "deadlock.lua"))
            found = !strcmp(b.ch[ch].lesson[i].title, "Deadlock: both ranks send first");
    ck_assert(found);
    cs_learn l;
    cs_learn_init(&l, &b, ch);
    ck_assert(l.on_lessons);
    ck_assert_int_eq(cs_learn_key(&l, CS_KEY_DOWN), CS_LEARN_NONE);
    ck_assert_int_eq(l.lesson, 1);
    ck_assert_int_eq(cs_learn_key(&l, CS_KEY_ENTER), CS_LEARN_RUN);
    ck_assert_int_eq(cs_learn_key(&l, CS_KEY_TAB), CS_LEARN_NONE);
    ck_assert(!l.on_lessons);
    ck_assert_int_eq(cs_learn_key(&l, CS_KEY_UP), CS_LEARN_NONE);
    ck_assert_int_eq(l.chapter, ch - 1);
    ck_assert_int_eq(cs_grid_init(&grid, 80, 24), 0);
    cs_learn_render(&l, &grid, false);
    text = cs_grid_text(&grid);
    ck_assert_has("commsim learn  01-");
    ck_assert_has("hello.lua");
    /* a title cut at 80 columns says so; a wide window shows it whole */
    ck_assert_has(" 1. Your first distributed pro… │");
    cs_grid_free(&grid);
    free(text);
    ck_assert_int_eq(cs_grid_init(&grid, 200, 60), 0);
    cs_learn_render(&l, &grid, false);
    text = cs_grid_text(&grid);
    ck_assert_has(" 1. Your first distributed program ");
    ck_assert_has("Hello: every rank says who it is");
    /* an error too long for the footer is read whole: it takes the row
     * above as well, and the footer keeps its keys */
    cs_grid_free(&grid);
    free(text);
    snprintf(l.message, sizeof l.message, "commsim learn: badhdr.lua:1: world: expected a number "
                                          "of ranks from 1 to 4096, got 'banana'");
    ck_assert_int_eq(cs_grid_init(&grid, 80, 24), 0);
    cs_learn_render(&l, &grid, false);
    text = cs_grid_text(&grid);
    char row[256];
    ck_assert_str_eq(cs_grid_row(&grid, 22, row, sizeof row),
                     " commsim learn: badhdr.lua:1: world: expected a number of ranks from 1 to 4096, ");
    ck_assert_ptr_nonnull(strstr(cs_grid_row(&grid, 23, row, sizeof row), " got 'banana'  "));
    ck_assert_ptr_nonnull(strstr(row, "? help  q quit"));
    l.message[0] = 0;
    /* too narrow for the lists and the text: it says so, no text over text */
    cs_grid_free(&grid);
    free(text);
    ck_assert_int_eq(cs_grid_init(&grid, CS_VIZ_MIN_W - 1, 24), 0);
    cs_learn_render(&l, &grid, false);
    text = cs_grid_text(&grid);
    ck_assert_has("window too small (59x24, need 60x15)");
    ck_assert_msg(!strstr(text, "hello.lua"), "%s", text);
    ck_assert_int_eq(cs_learn_key(&l, 'q'), CS_LEARN_QUIT);
    cs_learn_free(&l);
    cs_book_free(&b);
    free(text);
    text = NULL;
    cs_grid_free(&grid);
    ck_assert_int_eq(cs_book_load(&b, "/nonexistent", err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "no chapters"));
}
END_TEST

/* A chapter's exercises follow its scripts: e selects the first, its
 * statement and the student's file on the right; g, c, v and n ask the loop
 * to grade, copy the starter or open a failing case; a grading's text is
 * laid out wrapped, its failing case marked. */
START_TEST(test_book_exercises) {
    const char *top = getenv("top_srcdir");
    char dir[1024], err[256];
    snprintf(dir, sizeof dir, "%s/lessons", top ? top : ".");
    cs_book b;
    ck_assert_int_eq(cs_book_load(&b, dir, err, sizeof err), 0);
    int ch = cs_book_find(&b, "2");
    ck_assert_int_ge(ch, 0);
    ck_assert_int_ge(b.ch[ch].nex, 5);
    ck_assert_str_eq(b.ch[ch].ex[0].name, "bidirectional"); /* by name */
    ck_assert_ptr_nonnull(strstr(b.ch[ch].ex[0].readme, "# Exercise: bidirectional"));
    ck_assert_int_eq(b.ch[cs_book_find(&b, "1")].nex, 0);
    cs_learn l;
    cs_learn_init(&l, &b, ch);
    l.work = "/nonexistent-work";
    ck_assert_ptr_null(cs_learn_exercise(&l)); /* a script is selected */
    ck_assert_int_eq(cs_learn_key(&l, 'g'), CS_LEARN_NONE);
    ck_assert_ptr_nonnull(strstr(l.message, "select an exercise first"));
    ck_assert_int_eq(cs_learn_key(&l, 'e'), CS_LEARN_NONE);
    const cs_exercise *e = cs_learn_exercise(&l);
    ck_assert_ptr_nonnull(e);
    ck_assert_str_eq(e->name, "bidirectional");
    char path[256];
    ck_assert(!cs_learn_student_file(&l, e, path, sizeof path));
    ck_assert_str_eq(path, "/nonexistent-work/bidirectional.lua");
    ck_assert_int_eq(cs_learn_key(&l, 'g'), CS_LEARN_NONE); /* no file yet */
    ck_assert_ptr_nonnull(strstr(l.message, "c copies the starter"));
    ck_assert_int_eq(cs_learn_key(&l, 'c'), CS_LEARN_STARTER);
    ck_assert_int_eq(cs_learn_key(&l, 'v'), CS_LEARN_NONE); /* nothing graded */
    ck_assert_ptr_nonnull(strstr(l.message, "g grades your file first"));
    ck_assert_int_eq(cs_learn_key(&l, CS_KEY_HOME), CS_LEARN_NONE); /* a key clears the message */
    ck_assert_int_eq(cs_grid_init(&grid, 80, 24), 0);
    cs_learn_render(&l, &grid, false);
    text = cs_grid_text(&grid);
    ck_assert_has("exercise bidirectional");
    ck_assert_has("exercises (g grades)");
    ck_assert_has("Exercise: bidirectional");
    ck_assert_has("g grade your file");
    free(text);
    /* a grading: the text result, its failing cases selectable */
    char **fc = calloc(2, sizeof *fc), **ft = calloc(2, sizeof *ft);
    fc[0] = strdup("two ranks"), ft[0] = strdup("/t/a.jsonl");
    fc[1] = strdup("four ranks"), ft[1] = strdup("/t/b.jsonl");
    cs_learn_set_grade(&l, strdup("x.lua: title\n  \u2717 0/1  two ranks\n  \u2717 0/1  four ranks\n\n"
                                  "two ranks:\n  a reason long enough to be wrapped at the width of the "
                                  "pane on the right of the browser\n\nfour ranks:\n  another\ntotal: 0/2\n"),
                       fc, ft, NULL, 2);
    cs_learn_render(&l, &grid, false);
    text = cs_grid_text(&grid);
    ck_assert_has("\u2717 0/1  two ranks");
    ck_assert_has("  a reason long enough to be wrapped at the");
    ck_assert_has("    width of the pane"); /* the wrapped line keeps its indent */
    ck_assert_has("v see the failure  n next failing");
    free(text);
    /* graded again, same exercise, same width: the new text, not the last */
    char **fc2 = calloc(2, sizeof *fc2), **ft2 = calloc(2, sizeof *ft2);
    fc2[0] = strdup("two ranks"), ft2[0] = strdup("/t/a.jsonl");
    fc2[1] = strdup("four ranks"), ft2[1] = strdup("/t/b.jsonl");
    cs_replay_at *fa = calloc(2, sizeof *fa);
    fa[0] = (cs_replay_at){.rank = 1, .line = 7};
    cs_learn_set_grade(&l, strdup("x.lua: title\n  \u2717 0/1  two ranks\n  \u2717 0/1  four ranks\n\n"
                                  "two ranks:\n  graded again\n\nfour ranks:\n  another\ntotal: 0/2\n"),
                       fc2, ft2, fa, 2);
    cs_learn_render(&l, &grid, false);
    text = cs_grid_text(&grid);
    ck_assert_has("  graded again");
    free(text);
    /* without UTF-8 the grader's marks are the diagram's, v and X (they
     * showed as '?') */
    cs_grid_free(&grid);
    ck_assert_int_eq(cs_grid_init(&grid, 90, 24), 0);
    cs_learn_render(&l, &grid, true);
    text = cs_grid_text(&grid);
    ck_assert_has("|  X 0/1  two ranks");
    for (int i = 0; i < grid.w * grid.h; i++)
        ck_assert_msg(grid.cells[i].ch < 0x7F, "non-ASCII U+%04X at %d", grid.cells[i].ch, i);
    free(text);
    cs_grid_free(&grid);
    ck_assert_int_eq(cs_grid_init(&grid, 80, 24), 0);
    snprintf(l.message, sizeof l.message, "x.lua: 0/2");
    ck_assert_int_eq(cs_learn_key(&l, CS_KEY_RESIZE), CS_LEARN_NONE);
    ck_assert_str_eq(l.message, "x.lua: 0/2"); /* a resize is no key of the user's */
    ck_assert_int_eq(cs_learn_key(&l, 'v'), CS_LEARN_FAILURE);
    ck_assert_int_eq(l.grade.sel, 0);
    ck_assert_int_eq(cs_learn_key(&l, 'n'), CS_LEARN_NONE);
    ck_assert_int_eq(l.grade.sel, 1);
    ck_assert_int_eq(cs_learn_key(&l, 'n'), CS_LEARN_NONE);
    ck_assert_int_eq(l.grade.sel, 0); /* round */
    ck_assert_int_eq(cs_learn_key(&l, CS_KEY_ENTER), CS_LEARN_NONE); /* the statement again */
    cs_learn_render(&l, &grid, false);
    text = cs_grid_text(&grid);
    ck_assert_has("Exercise: bidirectional");
    free(text);
    /* another exercise: its own statement; back: the grading again */
    ck_assert_int_eq(cs_learn_key(&l, CS_KEY_DOWN), CS_LEARN_NONE);
    ck_assert_str_eq(cs_learn_exercise(&l)->name, "chunked");
    ck_assert_int_eq(cs_learn_key(&l, 'v'), CS_LEARN_NONE);
    ck_assert_int_eq(cs_learn_key(&l, CS_KEY_UP), CS_LEARN_NONE);
    ck_assert(l.show_grade);
    /* up from the first exercise: the last script, which enter runs */
    ck_assert_int_eq(cs_learn_key(&l, CS_KEY_UP), CS_LEARN_NONE);
    ck_assert_ptr_null(cs_learn_exercise(&l));
    ck_assert_int_eq(cs_learn_key(&l, CS_KEY_ENTER), CS_LEARN_RUN);
    cs_learn_free(&l);
    cs_book_free(&b);
    text = NULL;
    cs_grid_free(&grid);
}
END_TEST

/* The browser lists a chapter's scripts in the order its README names them in
 * headings and table rows (not in code blocks, not as part of a longer name);
 * the others follow by name. Chapter numbers may skip. */
START_TEST(test_script_order) {
    const char *readme = "# 9. Demo\n"
                         "Run `commsim run zeta.lua` first.\n" /* prose: not a place */
                         "```\n### alpha.lua in a code block\n```\n"
                         "| script | shows |\n"
                         "| `zeta.lua`, `all_reduce.lua` | two on a row |\n"
                         "### reduce.lua: the second heading\n"
                         "## mid.lua\n";
    ck_assert_int_eq(cs_learn_script_place(readme, "zeta.lua"), 6);
    ck_assert_int_eq(cs_learn_script_place(readme, "reduce.lua"), 7);
    ck_assert_int_eq(cs_learn_script_place(readme, "alpha.lua"), -1);
    char *names[] = {"alpha.lua", "all_reduce.lua", "beta.lua", "mid.lua", "reduce.lua",
                     "zeta.lua"};
    cs_learn_order_scripts(names, 6, readme);
    const char *want[] = {"all_reduce.lua", "zeta.lua", "reduce.lua", "mid.lua", "alpha.lua",
                          "beta.lua"};
    for (int i = 0; i < 6; i++) ck_assert_str_eq(names[i], want[i]);

    /* a book with a gap (01, 03, 06) and a chapter without a README */
    char dir[] = "/tmp/check_viz_book.XXXXXX", path[256], err[256];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    const char *files[] = {"01-a/README.md", "01-a/b.lua", "01-a/a.lua", "03-c/x.lua",
                           "06-f/README.md", "06-f/one.lua", "06-f/two.lua", "06-f/extra.lua"};
    const char *body[] = {"# A\n### b.lua\n### a.lua\n", "", "", "",
                          "# F\n| `two.lua` |\n| `one.lua` |\n", "", "", ""};
    for (int i = 0; i < 8; i++) {
        snprintf(path, sizeof path, "%s/%.4s", dir, files[i]);
        mkdir(path, 0700);
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        FILE *f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        fputs(body[i], f);
        fclose(f);
    }
    cs_book b;
    ck_assert_int_eq(cs_book_load(&b, dir, err, sizeof err), 0);
    ck_assert_int_eq(b.n, 3);
    int f6 = cs_book_find(&b, "6");
    ck_assert_int_eq(f6, 2);
    ck_assert_int_eq(cs_book_find(&b, "04"), -1);
    ck_assert_str_eq(b.ch[f6].lesson[0].file, "two.lua");
    ck_assert_str_eq(b.ch[f6].lesson[1].file, "one.lua");
    ck_assert_str_eq(b.ch[f6].lesson[2].file, "extra.lua");
    ck_assert_str_eq(b.ch[0].lesson[0].file, "b.lua");
    ck_assert_str_eq(b.ch[1].lesson[0].file, "x.lua");
    cs_book_free(&b);
    for (int i = 7; i >= 0; i--) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        unlink(path);
        snprintf(path, sizeof path, "%s/%.4s", dir, files[i]);
        rmdir(path);
    }
    rmdir(dir);
}
END_TEST

static Suite *viz_suite(void) {
    Suite *s = suite_create("viz");
    TCase *tc = tcase_create("render");
    tcase_add_test(tc, test_grid_put_and_clip);
    tcase_add_test(tc, test_grid_wide);
    tcase_add_test(tc, test_deadlock_frame);
    tcase_add_test(tc, test_scaled_diagram);
    tcase_add_test(tc, test_scaled_crowded);
    tcase_add_test(tc, test_scaled_deadlock);
    tcase_add_test(tc, test_scaled_failed);
    tcase_add_test(tc, test_scaled_stopped);
    tcase_add_test(tc, test_deadlock_diagram);
    tcase_add_test(tc, test_speed_ladder_and_help);
    tcase_add_test(tc, test_message_arrows);
    tcase_add_test(tc, test_repeats_and_bounded_rows);
    tcase_add_test(tc, test_blocked_stretch_and_now);
    tcase_add_test(tc, test_collective_band);
    tcase_add_test(tc, test_band_interleaved);
    tcase_add_test(tc, test_band_counts_own_call);
    tcase_add_test(tc, test_output_kept_bounded);
    tcase_add_test(tc, test_output_warnings_errors);
    tcase_add_test(tc, test_output_long_line_tail);
    tcase_add_test(tc, test_gates_shown);
    tcase_add_test(tc, test_many_ranks_scroll);
    tcase_add_test(tc, test_nav_keeps_selection_visible);
    tcase_add_test(tc, test_nav_alerts_keep_top);
    tcase_add_test(tc, test_nav_output_resize_keeps_line);
    tcase_add_test(tc, test_help_wraps_under_description);
    tcase_add_test(tc, test_box_scrolls);
    tcase_add_test(tc, test_cycle_wraps_whole_ranks);
    tcase_add_test(tc, test_ascii_and_small);
    tcase_add_test(tc, test_cycle_and_inflight);
    tcase_add_test(tc, test_footer_and_too_small);
    suite_add_tcase(s, tc);
    TCase *tg = tcase_create("control");
    tcase_add_test(tg, test_control_step_and_abort);
    tcase_add_test(tg, test_control_run_and_speed);
    tcase_add_test(tg, test_control_remote_rank);
    suite_add_tcase(s, tg);
    TCase *tl = tcase_create("learn");
    tcase_add_test(tl, test_markdown_layout);
    tcase_add_test(tl, test_timeline);
    tcase_add_test(tl, test_book);
    tcase_add_test(tl, test_book_exercises);
    tcase_add_test(tl, test_script_order);
    suite_add_tcase(s, tl);
    return s;
}

int main(void) {
    return run_suite(viz_suite());
}
