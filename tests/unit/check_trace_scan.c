/* check_trace_scan.c -- the trace reader's fast path against the full decoder
 * (jansson, then cs_event_from_json): every line the writer writes is taken
 * by the fast path and decoded to the same event; over many mutations of
 * those lines (bytes flipped, dropped, inserted), whatever the fast path
 * accepts the full decoder accepts too, with the same event, and a line it
 * declines is left as it was. */
#include <check.h>
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "run_suite.h"
#include "trace.h"
#include "trace_scan.h"

#define WORLD 4

/* One line of every event type, as the writer writes them, and a few that
 * are plain but unusual (integer and exponent times, empty arrays). */
static const char *lines[] = {
    "{\"type\":\"run\",\"format\":\"commsim-trace\",\"version\":1,\"rank\":-1,\"seq\":0,"
    "\"t\":0.00024,\"world\":4,\"engine\":\"thread\",\"send_mode\":\"rendezvous\",\"seed\":\"0\","
    "\"script\":\"ring_allreduce.lua\"}",
    "{\"type\":\"run\",\"format\":\"commsim-trace\",\"version\":1,\"rank\":-1,\"seq\":0,\"t\":0,"
    "\"world\":4,\"engine\":\"tcp\",\"send_mode\":\"eager:64\",\"seed\":\"18446744073709551\","
    "\"script\":\"x.lua\"}",
    "{\"type\":\"print\",\"rank\":0,\"seq\":0,\"t\":0.009394,\"line\":20,"
    "\"text\":\"start:          tensor([1., 2., 3., 4.])\"}",
    "{\"type\":\"post\",\"rank\":0,\"seq\":1,\"t\":0.009474,\"req\":1,\"op\":\"irecv\",\"peer\":3,"
    "\"tag\":0,\"ctx\":0,\"bytes\":4,\"dtype\":\"float32\",\"shape\":[1],\"eager\":false,\"line\":24}",
    "{\"type\":\"post\",\"rank\":1,\"seq\":7,\"t\":1.5e-3,\"req\":12,\"op\":\"recv\",\"peer\":-1,"
    "\"tag\":7,\"ctx\":0,\"bytes\":0,\"dtype\":\"int64\",\"shape\":[],\"eager\":true,\"line\":3}",
    "{\"type\":\"post\",\"rank\":2,\"seq\":3,\"t\":2,\"req\":5,\"op\":\"isend\",\"peer\":1,\"tag\":3,"
    "\"ctx\":2,\"bytes\":96,\"dtype\":\"float64\",\"shape\":[2,3,2],\"eager\":false,\"line\":9}",
    "{\"type\":\"match\",\"rank\":3,\"seq\":2,\"t\":0.012744,\"req\":1,\"op\":\"irecv\",\"peer\":2,"
    "\"tag\":0,\"ctx\":0,\"bytes\":4,\"peer_req\":2}",
    "{\"type\":\"complete\",\"rank\":3,\"seq\":3,\"t\":0.012762,\"req\":1,\"op\":\"irecv\"}",
    "{\"type\":\"complete\",\"rank\":3,\"seq\":4,\"t\":0.012762,\"req\":2,\"op\":\"send\",\"status\":-3}",
    "{\"type\":\"block\",\"rank\":0,\"seq\":1,\"t\":0.003814,\"reqs\":[1,2,30],\"any\":true,\"line\":19}",
    "{\"type\":\"unblock\",\"rank\":1,\"seq\":2,\"t\":0.083337,\"line\":19}",
    "{\"type\":\"coll\",\"rank\":2,\"seq\":37,\"t\":0.016406,\"name\":\"all_reduce\",\"begin\":true,"
    "\"root\":-1,\"ctx\":1,\"bytes\":16,\"dtype\":\"float32\",\"line\":48,\"count\":4,\"algo\":\"ring\","
    "\"reduce_op\":\"SUM\"}",
    "{\"type\":\"coll\",\"rank\":0,\"seq\":5,\"t\":0.5,\"name\":\"broadcast\",\"begin\":false,"
    "\"root\":2,\"ctx\":3,\"bytes\":8,\"dtype\":\"int32\",\"line\":4,\"count\":2,\"algo\":\"tree\","
    "\"group\":[0,2]}",
    "{\"type\":\"compute\",\"rank\":1,\"seq\":9,\"t\":0.25,\"begin\":true,\"ms\":12.5,\"line\":6}",
    "{\"type\":\"warn\",\"rank\":-1,\"seq\":0,\"t\":0.3,\"line\":8,\"text\":\"a pitfall\"}",
    "{\"type\":\"error\",\"rank\":2,\"seq\":11,\"t\":0.4,\"status\":2,\"line\":7,\"text\":\"boom\"}",
    "{\"type\":\"exit\",\"rank\":2,\"seq\":72,\"t\":0.019997,\"status\":0}",
    "{\"type\":\"deadlock\",\"rank\":-1,\"seq\":0,\"t\":0.083282,\"text\":\"deadlock: no rank\"}",
    " { \"type\" : \"exit\" , \"rank\" : 1 , \"seq\" : 2 , \"t\" : 1E2 , \"status\" : 0 } ",
    /* modelled time (version 2) */
    "{\"type\":\"run\",\"format\":\"commsim-trace\",\"version\":2,\"rank\":-1,\"seq\":0,\"t\":0.0002,"
    "\"world\":4,\"engine\":\"thread\",\"send_mode\":\"rendezvous\",\"seed\":\"0\","
    "\"script\":\"pingpong.lua\",\"net\":\"alpha=100us,bandwidth=1GB/s\"}",
    "{\"type\":\"wait\",\"rank\":1,\"seq\":4,\"t\":0.002,\"reqs\":[3],\"line\":12}",
    "{\"type\":\"clock\",\"rank\":0,\"seq\":9,\"t\":0.003,\"line\":7}",
    "{\"type\":\"vtime\",\"rank\":-1,\"seq\":0,\"t\":0.004,\"what\":\"send\",\"vrank\":0,"
    "\"vt\":1000,\"vt_done\":101016,\"vt_start\":1000,\"vt_end\":1016,\"vt_arrive\":101016,"
    "\"req\":1,\"peer\":1,\"bytes\":16,\"line\":5}",
    "{\"type\":\"vtime\",\"rank\":-1,\"seq\":1,\"t\":0.005,\"what\":\"exit\",\"vrank\":3,\"vt\":202032}",
};
#define NLINES (sizeof lines / sizeof lines[0])

static char *canon(const cs_event *ev) {
    json_t *o = cs_event_to_json(ev);
    ck_assert_ptr_nonnull(o);
    char *s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
    json_decref(o);
    ck_assert_ptr_nonnull(s);
    return s;
}

/* The full decoder's event as canonical text, or NULL when it refuses the line. */
static char *full(const char *line, size_t len, int world) {
    json_error_t je;
    json_t *obj = json_loadb(line, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &je);
    if (!obj) return NULL;
    cs_trace_strings store = {0};
    cs_event ev;
    char err[256];
    char *s = cs_event_from_json(obj, world, &ev, &store, err, sizeof err) == 0 ? canon(&ev) : NULL;
    json_decref(obj);
    cs_trace_strings_free(&store);
    return s;
}

/* The fast path's event as canonical text, NULL when it declines (and then
 * the line must be as it was). */
static char *fast(const char *line, size_t len, int world) {
    char *copy = malloc(len + 1);
    ck_assert_ptr_nonnull(copy);
    memcpy(copy, line, len);
    copy[len] = 0;
    cs_trace_strings store = {0};
    cs_event ev;
    char *s = NULL;
    if (cs_trace_scan(copy, len, world, &ev, &store) == 1) s = canon(&ev);
    else ck_assert_mem_eq(copy, line, len);
    cs_trace_strings_free(&store);
    free(copy);
    return s;
}

static int world_for(const char *line) { return strstr(line, "\"type\":\"run\"") ? 0 : WORLD; }

START_TEST(test_writer_lines_take_the_fast_path) {
    for (size_t i = 0; i < NLINES; i++) {
        size_t len = strlen(lines[i]);
        char *a = fast(lines[i], len, world_for(lines[i])), *b = full(lines[i], len, world_for(lines[i]));
        ck_assert_msg(a != NULL, "fast path declined line %zu", i);
        ck_assert_msg(b != NULL, "full decoder refused line %zu", i);
        ck_assert_str_eq(a, b);
        free(a);
        free(b);
    }
}
END_TEST

START_TEST(test_declines_what_it_cannot_vouch_for) {
    static const char *no[] = {
        "{\"type\":\"exit\",\"rank\":2,\"seq\":1,\"t\":0.1,\"status\":0,\"status\":1}", /* duplicate */
        "{\"type\":\"print\",\"rank\":0,\"seq\":0,\"t\":0.1,\"text\":\"a\\nb\"}",       /* escape */
        "{\"type\":\"exit\",\"rank\":9,\"seq\":1,\"t\":0.1,\"status\":0}",               /* rank >= world */
        "{\"type\":\"exit\",\"rank\":2,\"seq\":1,\"t\":-0.1,\"status\":0}",              /* t < 0 */
        "{\"type\":\"exit\",\"rank\":2,\"seq\":1,\"t\":0.1}",                            /* missing */
        "{\"type\":\"exit\",\"rank\":2,\"seq\":1,\"t\":0.1,\"status\":0",                /* cut */
        "{\"type\":\"exit\",\"rank\":2,\"seq\":99999999999999999999,\"t\":0.1,\"status\":0}",
        "{\"type\":\"exit\",\"rank\":2,\"seq\":1,\"t\":1e999,\"status\":0}",
        "{\"type\":\"exit\",\"rank\":2,\"seq\":1,\"t\":1e303,\"status\":0}", /* t past the bound */
        "{\"type\":\"error\",\"rank\":-1,\"seq\":0,\"t\":0.1,\"status\":99,\"text\":\"x\"}",
        "{\"type\":\"vtime\",\"rank\":-1,\"seq\":0,\"t\":0.1,\"what\":\"sendx\",\"vrank\":0,\"vt\":5}",
        "{\"type\":\"vtime\",\"rank\":-1,\"seq\":0,\"t\":0.1,\"what\":\"sen\",\"vrank\":0,\"vt\":5}",
        "{\"type\":\"compute\",\"rank\":2,\"seq\":1,\"t\":0.1,\"begin\":true,\"ms\":2e10}",
        "{\"type\":\"exit\",\"rank\":02,\"seq\":1,\"t\":0.1,\"status\":0}",
        "{\"type\":\"exit\",\"rank\":2,\"seq\":1,\"t\":0.1,\"status\":0} x",
        "{\"type\":\"run\",\"format\":\"commsim-trace\",\"version\":3,\"rank\":-1,\"seq\":0,\"t\":0,"
        "\"world\":4,\"engine\":\"tcp\",\"send_mode\":\"eager\",\"seed\":\"0\",\"script\":\"x\"}",
    };
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
        char *a = fast(no[i], strlen(no[i]), world_for(no[i]));
        ck_assert_msg(a == NULL, "fast path took bad line %zu", i);
    }
}
END_TEST

START_TEST(test_mutants_agree_with_the_full_decoder) {
    static const char alphabet[] = " \t\"\\,:{}[]-+.eE0123456789truefalsnl\x01\x7f\x80\xc3\xa9" "az";
    uint64_t x = 0x9e3779b97f4a7c15ULL;
    unsigned long taken = 0, declined = 0;
    char buf[1024];
    for (int round = 0; round < 60000; round++) {
        const char *src = lines[round % NLINES];
        size_t len = strlen(src);
        memcpy(buf, src, len);
        int edits = 1 + (int)(x % 3);
        for (int k = 0; k < edits; k++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            size_t at = (size_t)(x >> 11) % (len ? len : 1);
            char c = alphabet[(x >> 40) % (sizeof alphabet - 1)];
            switch ((x >> 3) % 3) {
            case 0: buf[at] = c; break;                                   /* flip */
            case 1: memmove(buf + at, buf + at + 1, len - at - 1), len--; break; /* drop */
            default:                                                      /* insert */
                if (len + 1 >= sizeof buf) break;
                memmove(buf + at + 1, buf + at, len - at);
                buf[at] = c;
                len++;
            }
            if (!len) break;
        }
        int world = world_for(src);
        char *a = fast(buf, len, world);
        if (!a) {
            declined++;
            continue;
        }
        taken++;
        char *b = full(buf, len, world);
        ck_assert_msg(b != NULL, "fast path took a line the full decoder refuses: %.*s", (int)len, buf);
        ck_assert_str_eq(a, b);
        free(a);
        free(b);
    }
    /* both kinds occur: the property is tested on lines taken, not vacuously */
    ck_assert_uint_gt(taken, 1000);
    ck_assert_uint_gt(declined, 1000);
}
END_TEST

static Suite *scan_suite(void) {
    Suite *s = suite_create("trace_scan");
    TCase *tc = tcase_create("scan");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_writer_lines_take_the_fast_path);
    tcase_add_test(tc, test_declines_what_it_cannot_vouch_for);
    tcase_add_test(tc, test_mutants_agree_with_the_full_decoder);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(scan_suite()); }
