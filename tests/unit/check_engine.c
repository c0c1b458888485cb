/* check_engine.c -- the table of engines (engine.c): lookups by name, the
 * rows' capabilities, what --engine help prints, the world's refusal of an
 * unknown engine; and the rank link (rank_link.c) serving a world on a
 * thread of its own, as an engine without the tcp mesh would use it, and
 * how long a waiting rank may sleep before its link is due. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "engine.h"
#include "rank_link.h"
#include "run_suite.h"
#include "wire.h"
#include "world.h"

START_TEST(test_find_by_name) {
    const cs_engine_kind *th = cs_engine_find("thread"), *tcp = cs_engine_find("tcp");
    ck_assert_ptr_nonnull(th);
    ck_assert_ptr_nonnull(tcp);
    ck_assert_str_eq(th->name, "thread");
    ck_assert_str_eq(tcp->name, "tcp");
    ck_assert_ptr_eq(cs_engine_find(NULL), th); /* the default */
    ck_assert_ptr_null(cs_engine_find("carrier-pigeon"));
    ck_assert_ptr_null(cs_engine_find("help")); /* the CLI's word, not an engine */
    ck_assert_ptr_null(cs_engine_find(""));
    ck_assert_ptr_null(cs_engine_find("TCP"));
}
END_TEST

START_TEST(test_capabilities) {
    const cs_engine_kind *th = cs_engine_find("thread"), *tcp = cs_engine_find("tcp");
    ck_assert(!(th->caps & CS_ENGINE_PROCESSES));
    ck_assert(tcp->caps & CS_ENGINE_PROCESSES);
    for (int i = 0; cs_engine_at(i); i++) {
        const cs_engine_kind *k = cs_engine_at(i);
        /* matching lives above every engine: tags and any-source everywhere */
        ck_assert(k->caps & CS_ENGINE_TAGS);
        ck_assert(k->caps & CS_ENGINE_ANY_SOURCE);
    }
}
END_TEST

START_TEST(test_rows_complete_and_unique) {
    int n = 0;
    for (int i = 0; cs_engine_at(i); i++, n++) {
        const cs_engine_kind *k = cs_engine_at(i);
        ck_assert(k->name && *k->name);
        ck_assert(k->summary && *k->summary);
        ck_assert_ptr_nonnull(k->create);
        ck_assert_int_ge(k->threads_per_rank, 1);
        ck_assert_ptr_eq(cs_engine_find(k->name), k);
    }
    ck_assert_int_ge(n, 2);
    ck_assert_ptr_null(cs_engine_at(n));
    ck_assert_ptr_null(cs_engine_at(-1));
}
END_TEST

START_TEST(test_table_printed) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cs_engine_print_table(f);
    fclose(f);
    for (int i = 0; cs_engine_at(i); i++) {
        ck_assert_ptr_nonnull(strstr(buf, cs_engine_at(i)->name));
        ck_assert_ptr_nonnull(strstr(buf, cs_engine_at(i)->summary));
    }
    ck_assert_ptr_nonnull(strstr(buf, "any-source"));
    ck_assert_ptr_nonnull(strstr(buf, "processes"));
    free(buf);
}
END_TEST

START_TEST(test_world_refuses_unknown_engine) {
    cs_bus bus;
    ck_assert_int_eq(cs_bus_init(&bus, 2), 0);
    char err[256];
    cs_world_config cfg = {.world = 2, .engine = "carrier-pigeon"};
    ck_assert_ptr_null(cs_world_new(&cfg, &bus, err, sizeof err));
    ck_assert_str_eq(err, "unknown engine 'carrier-pigeon'");
    /* an engine of processes needs what a rank process builds for it */
    cfg.engine = "tcp";
    ck_assert_ptr_null(cs_world_new(&cfg, &bus, err, sizeof err));
    ck_assert_ptr_nonnull(strstr(err, "rank processes"));
    cfg.engine = NULL;
    cs_world *w = cs_world_new(&cfg, &bus, err, sizeof err);
    ck_assert_ptr_nonnull(w);
    ck_assert_str_eq(cs_world_config_of(w)->engine, "thread");
    cs_world_free(w);
    cs_bus_destroy(&bus);
}
END_TEST

/* Read frames from the controller's end until one of type arrives. */
static void read_until(int fd, int type) {
    for (;;) {
        cs_frame_hdr h;
        uint8_t *meta = NULL;
        char err[256];
        ck_assert_msg(cs_wire_read_frame(fd, cs_now() + 60, 1 << 20, &h, &meta, err, sizeof err) == 0,
                      "%s", err);
        free(meta);
        if (h.type == type) return;
    }
}

/* The link without any payload plane: events go up, ABORT comes down and
 * aborts the world, BYE goes up, finish returns the controller's reason. */
START_TEST(test_link_on_its_own_thread) {
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    cs_bus bus;
    ck_assert_int_eq(cs_bus_init(&bus, 1), 0);
    char err[256], token[CS_WIRE_TOKEN + 1];
    ck_assert_int_eq(cs_wire_token_new(token), 0);
    cs_world_config cfg = {.world = 1};
    cs_world *w = cs_world_new(&cfg, &bus, err, sizeof err);
    ck_assert_ptr_nonnull(w);
    cs_rank_link *l = cs_rank_link_new(sv[0], 0, 1, token, stderr);
    ck_assert_ptr_nonnull(l);
    ck_assert(!cs_rank_link_driven(l));
    ck_assert_int_eq(cs_rank_link_start(l, w), 0);
    ck_assert(cs_rank_link_driven(l));

    cs_sink sink = cs_rank_link_sink(l);
    cs_event ev = {.type = CS_EV_PRINT, .rank = 0, .text = "hello"};
    sink.emit(sink.ud, &ev);
    read_until(sv[1], CS_FR_EVENT); /* sent within a tick, nobody asked */

    uint8_t why[4];
    cs_cur cur = {.p = why, .len = sizeof why};
    cs_put_u32(&cur, CS_END_QUIT);
    ck_assert_int_eq(cs_wire_send(sv[1], CS_FR_ABORT, why, sizeof why, cs_now() + 60), 0);
    ck_assert_int_eq(cs_rank_link_finish(l), CS_END_QUIT);
    ck_assert(cs_world_aborted(w));
    read_until(sv[1], CS_FR_BYE);

    cs_rank_link_stop(l);
    ck_assert(!cs_rank_link_driven(l));
    cs_world_free(w);
    cs_rank_link_free(l);
    close(sv[1]);
    cs_bus_destroy(&bus);
}
END_TEST

/* How long a waiting rank may sleep: nothing pending, the longest; an event
 * emitted, no longer than a tick; once the tick has sent it, the longest
 * again (no heartbeat before a join). Nothing drives the link here: the test
 * ticks it by hand. */
START_TEST(test_link_due) {
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    char token[CS_WIRE_TOKEN + 1];
    ck_assert_int_eq(cs_wire_token_new(token), 0);
    cs_rank_link *l = cs_rank_link_new(sv[0], 0, 1, token, stderr);
    ck_assert_ptr_nonnull(l);
    ck_assert(cs_rank_link_due(l, cs_now()) == 1.0);

    cs_sink sink = cs_rank_link_sink(l);
    cs_event ev = {.type = CS_EV_PRINT, .rank = 0, .text = "hello"};
    sink.emit(sink.ud, &ev);
    ck_assert(cs_rank_link_due(l, cs_now()) <= CS_RANK_LINK_TICK_MS * 1e-3);

    cs_rank_link_tick(l, cs_now());
    read_until(sv[1], CS_FR_EVENT);
    ck_assert(cs_rank_link_due(l, cs_now()) == 1.0);

    cs_rank_link_free(l);
    close(sv[1]);
}
END_TEST

int main(void) {
    Suite *s = suite_create("engine");
    TCase *tc = tcase_create("table");
    tcase_add_test(tc, test_find_by_name);
    tcase_add_test(tc, test_capabilities);
    tcase_add_test(tc, test_rows_complete_and_unique);
    tcase_add_test(tc, test_table_printed);
    tcase_add_test(tc, test_world_refuses_unknown_engine);
    suite_add_tcase(s, tc);
    TCase *tl = tcase_create("rank link");
    tcase_add_test(tl, test_link_on_its_own_thread);
    tcase_add_test(tl, test_link_due);
    suite_add_tcase(s, tl);
    return run_suite(s);
}
