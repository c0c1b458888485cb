/* check_wire.c -- the tcp engine's frames: headers and their limits, every
 * metadata codec both ways, the refusal of malformed input, and the frame
 * reader over a real socket (frames split at every byte, large payloads read in
 * place, EOF inside a frame). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "heartbeat.h"
#include "wire.h"
#include "run_suite.h"

static char err[256];

/* ---- headers */

START_TEST(test_header_round_trip) {
    uint8_t h[CS_WIRE_HDR];
    cs_wire_hdr_put(h, CS_FR_MSG, CS_WIRE_ENVELOPE, 12345);
    ck_assert(memcmp(h, "CSIM\x04", 5) == 0); /* magic, version 4 */
    cs_frame_hdr fh;
    ck_assert_int_eq(cs_wire_hdr_get(h, 1 << 20, &fh, err, sizeof err), 0);
    ck_assert_int_eq(fh.type, CS_FR_MSG);
    ck_assert_uint_eq(fh.meta_len, CS_WIRE_ENVELOPE);
    ck_assert_uint_eq(fh.data_len, 12345);
}
END_TEST

static void refused(int type, uint32_t meta, uint64_t data, uint64_t max, const char *why) {
    uint8_t h[CS_WIRE_HDR];
    cs_frame_hdr fh;
    cs_wire_hdr_put(h, type, meta, data);
    ck_assert_int_eq(cs_wire_hdr_get(h, max, &fh, err, sizeof err), -1);
    ck_assert_msg(strstr(err, why), "'%s' lacks '%s'", err, why);
}

START_TEST(test_header_limits) {
    refused(CS_FR_MSG, CS_WIRE_ENVELOPE, 1025, 1024, "payload of 1025 bytes");
    refused(CS_FR_RTS, CS_WIRE_ENVELOPE, 1, 1024, "payload");
    refused(CS_FR_SYNC, CS_WIRE_ENVELOPE, CS_WIRE_SYNC_MAX + 1, 1ull << 40, "payload");
    refused(CS_FR_HELLO, CS_HELLO_LEN + 1, 0, 0, "metadata");
    refused(CS_FR_EVENT, 0xffffffffu, 0, 0, "metadata");
    refused(CS_FR_ABORT, 3, 0, 0, "metadata");
    refused(CS_FR_ALIVE, 5, 0, 0, "metadata");
    refused(CS_FR_ALIVE, 4, 1, 1024, "payload");
    refused(0, 0, 0, 0, "unknown frame type");
    refused(CS_FR_NTYPES, 0, 0, 0, "unknown frame type");
    uint8_t h[CS_WIRE_HDR];
    cs_frame_hdr fh;
    cs_wire_hdr_put(h, CS_FR_BYE, 0, 0);
    h[0] = 'X';
    ck_assert_int_eq(cs_wire_hdr_get(h, 0, &fh, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "bad magic"));
    cs_wire_hdr_put(h, CS_FR_BYE, 0, 0);
    h[4] = 9;
    ck_assert_int_eq(cs_wire_hdr_get(h, 0, &fh, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "version 9"));
    cs_wire_hdr_put(h, CS_FR_BYE, 0, 0);
    h[6] = 1; /* reserved bits */
    ck_assert_int_eq(cs_wire_hdr_get(h, 0, &fh, err, sizeof err), -1);
    char want[96];
    snprintf(want, sizeof want, "reserved header bits set (0x0001) in a frame of type %d", CS_FR_BYE);
    ck_assert_str_eq(err, want);
}
END_TEST

/* ---- metadata */

START_TEST(test_hello_round_trip) {
    uint8_t m[CS_HELLO_LEN];
    cs_cur c = {.p = m, .len = sizeof m};
    cs_hello h = {.rank = 3, .world = 8, .ip = 0x0100007f, .port = 4242}, g;
    ck_assert_int_eq(cs_wire_token_new(h.token), 0);
    ck_assert(cs_wire_token_valid(h.token));
    cs_hello_put(&c, &h, true);
    ck_assert(!c.bad && c.pos == sizeof m);
    cs_cur in = {.p = m, .len = sizeof m};
    ck_assert_int_eq(cs_hello_get(&in, &g, true), 0);
    ck_assert(cs_wire_token_eq(h.token, g.token));
    ck_assert_uint_eq(g.rank, 3);
    ck_assert_uint_eq(g.world, 8);
    ck_assert_uint_eq(g.ip, 0x0100007f);
    ck_assert_uint_eq(g.port, 4242);
    /* a rank outside its world */
    h.rank = 8;
    c = (cs_cur){.p = m, .len = sizeof m};
    cs_hello_put(&c, &h, true);
    in = (cs_cur){.p = m, .len = sizeof m};
    ck_assert_int_eq(cs_hello_get(&in, &g, true), -1);
}
END_TEST

START_TEST(test_tokens) {
    char a[CS_WIRE_TOKEN + 1], b[CS_WIRE_TOKEN + 1];
    cs_wire_token_new(a);
    cs_wire_token_new(b);
    ck_assert(!cs_wire_token_eq(a, b));
    ck_assert(!cs_wire_token_valid("abc"));
    ck_assert(!cs_wire_token_valid("0123456789ABCDEF0123456789abcdef")); /* lower case only */
    ck_assert(cs_wire_token_valid("0123456789abcdef0123456789abcdef"));
}
END_TEST

START_TEST(test_welcome_round_trip) {
    uint32_t ip[3] = {1, 2, 3};
    uint16_t port[3] = {10, 20, 30};
    cs_welcome w = {.world = 3, .eager_limit = 4096, .seed = 7, .mem_limit = 1 << 20,
                    .step_limit = 99, .elapsed_us = 1234, .ip = ip, .port = port,
                    .flags = CS_WELCOME_STRICT | CS_WELCOME_GATED}, g;
    size_t len = cs_welcome_len(3);
    uint8_t *m = malloc(len);
    cs_cur c = {.p = m, .len = len};
    cs_welcome_put(&c, &w);
    ck_assert(!c.bad && c.pos == len);
    cs_cur in = {.p = m, .len = len};
    ck_assert_int_eq(cs_welcome_get(&in, &g), 0);
    ck_assert_uint_eq(g.world, 3);
    ck_assert_uint_eq(g.eager_limit, 4096);
    ck_assert_uint_eq(g.step_limit, 99);
    ck_assert_uint_eq(g.flags, CS_WELCOME_STRICT | CS_WELCOME_GATED);
    ck_assert_uint_eq(g.ip[2], 3);
    ck_assert_uint_eq(g.port[1], 20);
    free(g.ip);
    free(g.port);
    /* the address book must have exactly world entries */
    in = (cs_cur){.p = m, .len = len - 6};
    ck_assert_int_eq(cs_welcome_get(&in, &g), -1);
    /* flags this version does not know */
    w.flags = 4;
    c = (cs_cur){.p = m, .len = len};
    cs_welcome_put(&c, &w);
    in = (cs_cur){.p = m, .len = len};
    ck_assert_int_eq(cs_welcome_get(&in, &g), -1);
    free(m);
}
END_TEST

START_TEST(test_gate_checks) {
    const char *text = "tensor([1., 2.])";
    cs_gate_msg g = {.seq = 3, .op = CS_OP_IRECV, .line = 17, .peer = CS_ANY_SOURCE, .tag = 4,
                     .text = text, .text_len = strlen(text)}, d;
    uint8_t m[CS_GATE_FIXED + 64];
    size_t len = cs_gate_len(&g);
    ck_assert_uint_eq(len, CS_GATE_FIXED + strlen(text));
    cs_cur c = {.p = m, .len = len};
    cs_gate_put(&c, &g);
    ck_assert(!c.bad && c.pos == len);
    cs_cur in = {.p = m, .len = len};
    ck_assert_int_eq(cs_gate_get(&in, &d, 2), 0);
    ck_assert_uint_eq(d.seq, 3);
    ck_assert_int_eq(d.op, CS_OP_IRECV);
    ck_assert_int_eq(d.line, 17);
    ck_assert_int_eq(d.peer, CS_ANY_SOURCE);
    ck_assert_int_eq(d.tag, 4);
    ck_assert_uint_eq(d.text_len, strlen(text));
    ck_assert(memcmp(d.text, text, d.text_len) == 0);
    /* a peer outside the world, an unknown operation, gate number 0 */
    g.peer = 2;
    g.text_len = 0;
    struct { int field; } cases[3] = {{0}, {1}, {2}};
    for (int i = 0; i < 3; i++) {
        cs_gate_msg b = g;
        if (cases[i].field == 1) { b.peer = 0; b.op = CS_OP_NOPS; }
        if (cases[i].field == 2) { b.peer = 0; b.seq = 0; }
        c = (cs_cur){.p = m, .len = CS_GATE_FIXED};
        cs_gate_put(&c, &b);
        in = (cs_cur){.p = m, .len = CS_GATE_FIXED};
        ck_assert_int_eq(cs_gate_get(&in, &d, 2), -1);
    }
    /* a long tensor text is clipped to the limit, never past it */
    char *big = malloc(CS_WIRE_MAX_GATE_TEXT + 100);
    memset(big, 'x', CS_WIRE_MAX_GATE_TEXT + 100);
    g = (cs_gate_msg){.seq = 1, .peer = 1, .text = big, .text_len = CS_WIRE_MAX_GATE_TEXT + 100};
    ck_assert_uint_eq(cs_gate_len(&g), CS_GATE_FIXED + CS_WIRE_MAX_GATE_TEXT);
    free(big);
    /* the header's limits: GO carries exactly 8 bytes, GATE at most its text */
    uint8_t h[CS_WIRE_HDR];
    cs_frame_hdr fh;
    cs_wire_hdr_put(h, CS_FR_GO, 8, 0);
    ck_assert_int_eq(cs_wire_hdr_get(h, 0, &fh, err, sizeof err), 0);
    cs_wire_hdr_put(h, CS_FR_GO, 9, 0);
    ck_assert_int_eq(cs_wire_hdr_get(h, 0, &fh, err, sizeof err), -1);
    cs_wire_hdr_put(h, CS_FR_GATE, CS_GATE_FIXED + CS_WIRE_MAX_GATE_TEXT + 1, 0);
    ck_assert_int_eq(cs_wire_hdr_get(h, 0, &fh, err, sizeof err), -1);
    cs_wire_hdr_put(h, CS_FR_GATE, CS_GATE_FIXED, 1);
    ck_assert_int_eq(cs_wire_hdr_get(h, 1 << 20, &fh, err, sizeof err), -1); /* no payload */
}
END_TEST

START_TEST(test_envelope_checks) {
    cs_envelope e = {.src = 1, .tag = 5, .bytes = 24, .dtype = CS_FLOAT64, .ndim = 2,
                     .shape = {3, 1}, .line = 9, .sreq_id = 77}, g;
    uint8_t m[CS_WIRE_ENVELOPE];
    cs_cur c = {.p = m, .len = sizeof m};
    cs_envelope_put(&c, &e);
    ck_assert(!c.bad && c.pos == sizeof m);
    cs_cur in = {.p = m, .len = sizeof m};
    ck_assert_int_eq(cs_envelope_get(&in, &g, 2), 0);
    ck_assert_uint_eq(g.sreq_id, 77);
    ck_assert_int_eq(g.shape[0], 3);
    in = (cs_cur){.p = m, .len = sizeof m};
    ck_assert_int_eq(cs_envelope_get(&in, &g, 1), -1); /* source outside the world */
    e.bytes = 25; /* bytes that the shape does not describe */
    c = (cs_cur){.p = m, .len = sizeof m};
    cs_envelope_put(&c, &e);
    in = (cs_cur){.p = m, .len = sizeof m};
    ck_assert_int_eq(cs_envelope_get(&in, &g, 2), -1);
    e.bytes = 24;
    e.shape[0] = -3;
    e.shape[1] = -1;
    c = (cs_cur){.p = m, .len = sizeof m};
    cs_envelope_put(&c, &e);
    in = (cs_cur){.p = m, .len = sizeof m};
    ck_assert_int_eq(cs_envelope_get(&in, &g, 2), -1);
}
END_TEST

START_TEST(test_event_round_trip) {
    uint64_t reqs[3] = {4, 5, 6};
    int group[2] = {0, 1};
    cs_event ev = {.type = CS_EV_BLOCK, .rank = 1, .seq = 42, .t = 1.25, .req = 3,
                   .op = CS_OP_IRECV, .peer = CS_ANY_SOURCE, .tag = 2, .bytes = 16,
                   .dtype = CS_INT32, .ndim = 1, .shape = {4}, .line = 17, .eager = true,
                   .peer_req = 8, .reqs = reqs, .nreqs = 3, .any = true, .ms = 2.5,
                   .text = "hello\nworld", .status = 2, .count = 99, .algo = "ring",
                   .group = group, .ngroup = 2};
    size_t n = cs_wire_event_len(&ev);
    uint8_t *m = malloc(n);
    cs_cur c = {.p = m, .len = n};
    cs_wire_event_put(&c, &ev);
    ck_assert(!c.bad && c.pos == n);
    static cs_wire_scratch sc;
    cs_event g;
    cs_cur in = {.p = m, .len = n};
    ck_assert_int_eq(cs_wire_event_get(&in, &g, 2, &sc), 0);
    ck_assert_int_eq(g.type, CS_EV_BLOCK);
    ck_assert_uint_eq(g.seq, 42);
    ck_assert(g.t == 1.25 && g.ms == 2.5);
    ck_assert_int_eq(g.peer, CS_ANY_SOURCE);
    ck_assert(g.eager && g.any && !g.begin);
    ck_assert_int_eq(g.nreqs, 3);
    ck_assert_uint_eq(g.reqs[2], 6);
    ck_assert_str_eq(g.text, "hello\nworld");
    ck_assert_int_eq(g.status, 2);
    ck_assert_uint_eq(g.count, 99);
    ck_assert_str_eq(g.algo, "ring");
    ck_assert_ptr_null(g.reduce_op);
    ck_assert_int_eq(g.ngroup, 2);
    ck_assert_int_eq(g.group[1], 1);
    /* a rank outside the world, and types only the controller may emit */
    in = (cs_cur){.p = m, .len = n};
    ck_assert_int_eq(cs_wire_event_get(&in, &g, 1, &sc), -1);
    m[0] = CS_EV_DEADLOCK;
    in = (cs_cur){.p = m, .len = n};
    ck_assert_int_eq(cs_wire_event_get(&in, &g, 2, &sc), -1);
    m[0] = CS_EV_RUN;
    in = (cs_cur){.p = m, .len = n};
    ck_assert_int_eq(cs_wire_event_get(&in, &g, 2, &sc), -1);
    /* a length that disagrees with the counts */
    m[0] = CS_EV_BLOCK;
    in = (cs_cur){.p = m, .len = n - 1};
    ck_assert_int_eq(cs_wire_event_get(&in, &g, 2, &sc), -1);
    free(m);
    /* no text stays NULL; over-long text is cut to the limit */
    cs_event p = {.type = CS_EV_PRINT, .rank = 0};
    char *big = malloc(CS_WIRE_MAX_EVENT_TEXT + 100);
    memset(big, 'x', CS_WIRE_MAX_EVENT_TEXT + 99);
    big[CS_WIRE_MAX_EVENT_TEXT + 99] = 0;
    p.text = big;
    n = cs_wire_event_len(&p);
    m = malloc(n);
    c = (cs_cur){.p = m, .len = n};
    cs_wire_event_put(&c, &p);
    in = (cs_cur){.p = m, .len = n};
    ck_assert_int_eq(cs_wire_event_get(&in, &g, 1, &sc), 0);
    ck_assert_uint_eq(strlen(g.text), CS_WIRE_MAX_EVENT_TEXT);
    free(m);
    free(big);
}
END_TEST

/* ---- the frame reader over a socket */

typedef struct got {
    int frames, payloads;
    int types[16];
    uint8_t payload[1 << 20];
    int refuse_type;
} got;

static int on_frame(void *ud, const cs_frame_hdr *h, cs_cur *meta, void **dst, char *e,
                    size_t elen) {
    (void)meta;
    got *g = ud;
    if (h->type == g->refuse_type) {
        snprintf(e, elen, "refused");
        return -1;
    }
    g->types[g->frames++ % 16] = h->type;
    if (h->data_len) *dst = g->payload;
    return 0;
}

static int on_payload(void *ud, char *e, size_t elen) {
    (void)e, (void)elen;
    ((got *)ud)->payloads++;
    return 0;
}

static const cs_rx_ops ops = {on_frame, on_payload};

static size_t frame(uint8_t *out, int type, uint32_t meta, size_t data, uint8_t fill) {
    cs_wire_hdr_put(out, type, meta, data);
    memset(out + CS_WIRE_HDR, fill, meta + data);
    return CS_WIRE_HDR + meta + data;
}

START_TEST(test_reader_byte_by_byte) {
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    static uint8_t buf[1 << 12];
    size_t n = frame(buf, CS_FR_BYE, 0, 0, 0);
    n += frame(buf + n, CS_FR_DATA, 8, 100, 7);
    n += frame(buf + n, CS_FR_ABORT, 4, 0, 0);
    n += frame(buf + n, CS_FR_MSG, CS_WIRE_ENVELOPE, 0, 0); /* empty payload */
    static got g;
    memset(&g, 0, sizeof g);
    cs_rx rx;
    ck_assert_int_eq(cs_rx_init(&rx, 1000), 0);
    for (size_t i = 0; i < n; i++) {
        ck_assert_int_eq(write(sv[0], buf + i, 1), 1);
        ck_assert_int_eq(cs_rx_pump(&rx, sv[1], &ops, &g, err, sizeof err), 0);
    }
    ck_assert_int_eq(g.frames, 4);
    ck_assert_int_eq(g.payloads, 2);
    ck_assert_int_eq(g.types[1], CS_FR_DATA);
    ck_assert_int_eq(g.payload[99], 7);
    close(sv[0]);
    ck_assert_int_eq(cs_rx_pump(&rx, sv[1], &ops, &g, err, sizeof err), 1); /* clean EOF */
    cs_rx_free(&rx);
    close(sv[1]);
}
END_TEST

START_TEST(test_reader_large_payload_and_cut) {
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    size_t big = 600 * 1024;
    uint8_t *buf = malloc(CS_WIRE_HDR + 8 + big);
    size_t n = frame(buf, CS_FR_DATA, 8, big, 3);
    static got g;
    memset(&g, 0, sizeof g);
    cs_rx rx;
    ck_assert_int_eq(cs_rx_init(&rx, 1 << 20), 0);
    size_t off = 0;
    while (off < n) { /* a writer and a reader taking turns */
        ssize_t w = send(sv[0], buf + off, n - off, MSG_DONTWAIT);
        if (w > 0) off += (size_t)w;
        ck_assert_int_eq(cs_rx_pump(&rx, sv[1], &ops, &g, err, sizeof err), 0);
    }
    ck_assert_int_eq(g.payloads, 1);
    ck_assert_int_eq(g.payload[big - 1], 3);
    /* a frame cut short by the peer's death */
    ck_assert_int_eq(write(sv[0], buf, 30), 30);
    close(sv[0]);
    int rc = 0;
    for (int i = 0; i < 3 && rc == 0; i++) /* as epoll would report it again */
        rc = cs_rx_pump(&rx, sv[1], &ops, &g, err, sizeof err);
    ck_assert_int_eq(rc, -2);
    cs_rx_free(&rx);
    close(sv[1]);
    free(buf);
}
END_TEST

START_TEST(test_reader_refusals) {
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    uint8_t buf[64];
    static got g;
    memset(&g, 0, sizeof g);
    g.refuse_type = CS_FR_FLUSH;
    cs_rx rx;
    ck_assert_int_eq(cs_rx_init(&rx, 1000), 0);
    size_t n = frame(buf, CS_FR_FLUSH, 0, 0, 0);
    ck_assert_int_eq(write(sv[0], buf, n), (ssize_t)n);
    ck_assert_int_eq(cs_rx_pump(&rx, sv[1], &ops, &g, err, sizeof err), -1);
    ck_assert_str_eq(err, "refused");
    cs_rx_free(&rx);
    /* garbage: refused on the header, before anything is allocated for it */
    ck_assert_int_eq(cs_rx_init(&rx, 1000), 0);
    ck_assert_int_eq(write(sv[0], "GET / HTTP/1.0\r\nHost: x\r\n\r\n", 27), 27);
    ck_assert_int_eq(cs_rx_pump(&rx, sv[1], &ops, &g, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "bad magic"));
    cs_rx_free(&rx);
    close(sv[0]);
    close(sv[1]);
}
END_TEST

/* ---- the rank link's heartbeat */

START_TEST(test_heartbeat) {
    cs_heartbeat h;
    cs_heartbeat_init(&h, 3.0, 100.0);
    ck_assert(cs_heartbeat_interval(&h) == 0.5); /* six per limit */
    ck_assert(cs_heartbeat_due(&h, 100.0));      /* the first at once */
    ck_assert(!cs_heartbeat_due(&h, 100.4));
    ck_assert(cs_heartbeat_due(&h, 100.5));
    ck_assert_uint_eq(cs_heartbeat_ms(&h), 3000);
    /* the other side's shorter limit makes this side speak more often */
    cs_heartbeat_peer(&h, 600, 101.0);
    ck_assert(fabs(cs_heartbeat_interval(&h) - 0.1) < 1e-9);
    ck_assert(!cs_heartbeat_silent(&h, 104.0));
    ck_assert(cs_heartbeat_silent(&h, 104.01));
    cs_heartbeat_heard(&h, 104.0);
    ck_assert(!cs_heartbeat_silent(&h, 106.0));
    /* a long limit still speaks every second; 0 never gives up */
    cs_heartbeat_init(&h, 600.0, 0);
    ck_assert(cs_heartbeat_interval(&h) == 1.0);
    cs_heartbeat_init(&h, 0, 0);
    ck_assert(!cs_heartbeat_silent(&h, 1e9));
    ck_assert(cs_heartbeat_interval(&h) == 1.0);
}
END_TEST

START_TEST(test_heartbeat_env) {
    char msg[256];
    double lim;
    unsetenv(CS_HEARTBEAT_ENV);
    ck_assert_int_eq(cs_heartbeat_limit(&lim, msg, sizeof msg), 0);
    ck_assert(lim == CS_HEARTBEAT_DEFAULT);
    setenv(CS_HEARTBEAT_ENV, "2.5", 1);
    ck_assert_int_eq(cs_heartbeat_limit(&lim, msg, sizeof msg), 0);
    ck_assert(lim == 2.5);
    setenv(CS_HEARTBEAT_ENV, "0", 1);
    ck_assert_int_eq(cs_heartbeat_limit(&lim, msg, sizeof msg), 0);
    ck_assert(lim == 0);
    const char *bad[] = {"-1", "abc", "2s", "nan", "inf", "0.001", "1e9"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        setenv(CS_HEARTBEAT_ENV, bad[i], 1);
        ck_assert_int_eq(cs_heartbeat_limit(&lim, msg, sizeof msg), -1);
        ck_assert_ptr_nonnull(strstr(msg, "COMMSIM_HEARTBEAT="));
    }
    unsetenv(CS_HEARTBEAT_ENV);
}
END_TEST

/* Something unread on a socket (bytes, or its close) is a word from the other side. */
START_TEST(test_heartbeat_unread) {
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    ck_assert(!cs_heartbeat_unread(sv[0]));
    ck_assert_int_eq(write(sv[1], "x", 1), 1);
    ck_assert(cs_heartbeat_unread(sv[0]));
    char c;
    ck_assert_int_eq(read(sv[0], &c, 1), 1);
    ck_assert(!cs_heartbeat_unread(sv[0]));
    close(sv[1]);
    ck_assert(cs_heartbeat_unread(sv[0]));
    close(sv[0]);
}
END_TEST

static Suite *wire_suite(void) {
    Suite *s = suite_create("wire");
    TCase *h = tcase_create("headers");
    tcase_add_test(h, test_header_round_trip);
    tcase_add_test(h, test_header_limits);
    suite_add_tcase(s, h);
    TCase *m = tcase_create("metadata");
    tcase_add_test(m, test_hello_round_trip);
    tcase_add_test(m, test_tokens);
    tcase_add_test(m, test_welcome_round_trip);
    tcase_add_test(m, test_envelope_checks);
    tcase_add_test(m, test_gate_checks);
    tcase_add_test(m, test_event_round_trip);
    suite_add_tcase(s, m);
    TCase *r = tcase_create("reader");
    tcase_add_test(r, test_reader_byte_by_byte);
    tcase_add_test(r, test_reader_large_payload_and_cut);
    tcase_add_test(r, test_reader_refusals);
    suite_add_tcase(s, r);
    TCase *hb = tcase_create("heartbeat");
    tcase_add_test(hb, test_heartbeat);
    tcase_add_test(hb, test_heartbeat_env);
    tcase_add_test(hb, test_heartbeat_unread);
    suite_add_tcase(s, hb);
    return s;
}

int main(void) {
    return run_suite(wire_suite());
}
