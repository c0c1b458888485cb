/* check_hub.c -- the hub (hub.c) with real processes and sockets, no GPU:
 * the HUB frame's codec and its refusals; the store (a blob PUT by one rank
 * reaches every rank that GETs it, before or after the PUT); the relay
 * (envelopes reach their destination, one pair's in order); the sequencer
 * (every transfer gets one ticket, both ends get the same one, and every
 * rank sees its tickets in increasing order: the global issue order the
 * nccl engine's process mode relies on; and the ranks' streams, played in
 * the orders their tickets came, all run to the end: no deadlock); and strangers refused (a wrong
 * token, a spoofed envelope) without harm to the others; and the set-up
 * through the controller (hub_join.c): rank 0's hub address travels in its
 * HELLO and every rank's WELCOME, and every rank gets the blob rank 0 made. */
#include <check.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "api.h"
#include "hub.h"
#include "hub_join.h"
#include "rank_link.h"
#include "run_suite.h"
#include "wire.h"

static const char *TOKEN = "0123456789abcdef0123456789abcdef";
static char err[256];

/* ---- the codec */

static int round_trip(const cs_hub_msg *m, cs_hub_msg *out, int world, uint8_t *buf) {
    cs_cur c = {.p = buf, .len = cs_hub_msg_len(m)};
    cs_hub_msg_put(&c, m);
    ck_assert(!c.bad);
    cs_cur in = {.p = buf, .len = cs_hub_msg_len(m)};
    return cs_hub_msg_get(&in, out, world);
}

START_TEST(test_codec) {
    uint8_t buf[CS_HUB_FIXED + CS_HUB_MAX_DATA + 8];
    cs_hub_msg t = {.kind = CS_HUB_TICKET, .seq = 7, .peer = 2, .peer2 = 3, .sreq = 11, .rid = 12,
                    .bytes = 1 << 20}, o;
    ck_assert_int_eq(round_trip(&t, &o, 4, buf), 0);
    ck_assert_uint_eq(o.seq, 7);
    ck_assert_uint_eq(o.peer, 2);
    ck_assert_uint_eq(o.peer2, 3);
    ck_assert_uint_eq(o.sreq, 11);
    ck_assert_uint_eq(o.rid, 12);
    ck_assert_uint_eq(o.bytes, 1 << 20);
    ck_assert_int_eq(round_trip(&t, &o, 3, buf), -1); /* peer2 outside the world */
    uint8_t blob[128] = {1, 2, 3};
    cs_hub_msg p = {.kind = CS_HUB_PUT, .key = 5, .data = blob, .len = sizeof blob};
    ck_assert_int_eq(round_trip(&p, &o, 1, buf), 0);
    ck_assert_uint_eq(o.len, sizeof blob);
    ck_assert_int_eq(memcmp(o.data, blob, sizeof blob), 0);
    p.len = 0; /* a PUT without a blob */
    ck_assert_int_eq(round_trip(&p, &o, 1, buf), -1);
    cs_hub_msg g = {.kind = CS_HUB_GET, .key = 1, .data = blob, .len = 1}; /* a GET with data */
    ck_assert_int_eq(round_trip(&g, &o, 1, buf), -1);
    cs_hub_msg e = {.kind = CS_HUB_ENV, .data = blob, .len = 16}; /* not an envelope's length */
    ck_assert_int_eq(round_trip(&e, &o, 1, buf), -1);
    cs_hub_msg k = {.kind = CS_HUB_NKINDS};
    ck_assert_int_eq(round_trip(&k, &o, 1, buf), -1);
    k.kind = 0;
    ck_assert_int_eq(round_trip(&k, &o, 1, buf), -1);
    /* a reserved byte set */
    cs_cur c = {.p = buf, .len = CS_HUB_FIXED};
    cs_hub_msg_put(&c, &g);
    buf[1] = 1;
    cs_cur in = {.p = buf, .len = CS_HUB_FIXED};
    ck_assert_int_eq(cs_hub_msg_get(&in, &o, 1), -1);
    /* the header's limits for the type */
    uint8_t h[CS_WIRE_HDR];
    cs_frame_hdr fh;
    cs_wire_hdr_put(h, CS_FR_HUB, CS_HUB_FIXED + CS_HUB_MAX_DATA + 1, 0);
    ck_assert_int_eq(cs_wire_hdr_get(h, 1 << 20, &fh, err, sizeof err), -1);
    cs_wire_hdr_put(h, CS_FR_HUB, CS_HUB_FIXED - 1, 0);
    ck_assert_int_eq(cs_wire_hdr_get(h, 1 << 20, &fh, err, sizeof err), -1);
    cs_wire_hdr_put(h, CS_FR_HUB, CS_HUB_FIXED, 1);
    ck_assert_int_eq(cs_wire_hdr_get(h, 1 << 20, &fh, err, sizeof err), -1);
    cs_wire_hdr_put(h, CS_FR_HUB, CS_HUB_FIXED, 0);
    ck_assert_int_eq(cs_wire_hdr_get(h, 1 << 20, &fh, err, sizeof err), 0);
    ck_assert_str_eq(cs_frame_name(CS_FR_HUB), "HUB");
}
END_TEST

/* ---- ranks as processes: this program again (a child that only forked
 * could not start threads under TSan), in the role named */

static int rank_main(int rank, uint16_t port, const char *dir);
static int join_main(int rank, uint16_t cport);
static int abort_main(uint16_t cport);

static pid_t spawn(const char *role, int rank, uint16_t port, const char *dir) {
    char r[16], p[16];
    snprintf(r, sizeof r, "%d", rank);
    snprintf(p, sizeof p, "%u", port);
    pid_t pid = fork();
    if (pid == 0) {
        execl("/proc/self/exe", "check_hub", "--child", role, r, p, dir, (char *)NULL);
        _exit(127);
    }
    return pid;
}

static int child(char **argv) {
    int rank = atoi(argv[3]);
    uint16_t port = (uint16_t)atoi(argv[4]);
    if (strcmp(argv[2], "ranks") == 0) return rank_main(rank, port, argv[5]);
    if (strcmp(argv[2], "join") == 0) return join_main(rank, port);
    if (strcmp(argv[2], "abort") == 0) return abort_main(port);
    return 126;
}


#define N 4
#define K 6 /* envelopes from every rank to every rank */
#define MY_TICKETS (2 * N * K - K)

typedef struct rank_state {
    cs_hub_client *c;
    int rank;
    pthread_mutex_t lock;
    int nticket, nenv, bad;
    uint64_t last_seq;
    uint64_t last_sreq[N]; /* per source: envelopes arrive in order */
    uint64_t rid;
    char why[256];
    FILE *log;
    bool lost;
    /* envelopes not yet matched: a receive takes them in a random order,
     * as scripts post receives in any order */
    struct { uint32_t src; uint64_t sreq, bytes; } pend[N * K];
    int npend;
    unsigned seed;
} rank_state;

static void envelope(uint8_t *out, int src, uint64_t sreq) {
    cs_envelope env = {.src = src, .bytes = 4, .dtype = CS_FLOAT32, .ndim = 1, .shape = {1},
                       .line = 3, .sreq_id = sreq};
    cs_cur c = {.p = out, .len = CS_WIRE_ENVELOPE};
    cs_envelope_put(&c, &env);
}

/* The handler: an envelope is matched at once (MATCH); a ticket is logged. */
static void on_frame(void *ud, const cs_hub_msg *m, const char *why) {
    rank_state *s = ud;
    pthread_mutex_lock(&s->lock);
    if (!m) {
        s->lost = true;
        snprintf(s->why, sizeof s->why, "%s", why);
        pthread_mutex_unlock(&s->lock);
        return;
    }
    if (m->kind == CS_HUB_ENV) {
        cs_envelope env;
        cs_cur c = {.p = (uint8_t *)m->data, .len = m->len};
        if (cs_envelope_get(&c, &env, N) < 0 || env.src != (int)m->peer ||
            env.sreq_id <= s->last_sreq[m->peer])
            s->bad++;
        s->last_sreq[m->peer] = env.sreq_id;
        s->nenv++;
        s->pend[s->npend].src = m->peer;
        s->pend[s->npend].sreq = env.sreq_id;
        s->pend[s->npend].bytes = env.bytes;
        s->npend++;
        /* match some now, in a random order; the rest once all have come */
        while (s->npend > 0 && (s->nenv == N * K || rand_r(&s->seed) % 3 == 0)) {
            int i = (int)(rand_r(&s->seed) % (unsigned)s->npend);
            cs_hub_msg match = {.kind = CS_HUB_MATCH, .peer = s->pend[i].src, .sreq = s->pend[i].sreq,
                                .rid = ++s->rid, .bytes = s->pend[i].bytes};
            s->pend[i] = s->pend[--s->npend];
            if (cs_hub_send(s->c, &match) < 0) s->bad++;
        }
        pthread_mutex_unlock(&s->lock);
        return;
    }
    if (m->kind == CS_HUB_TICKET) {
        if (m->seq <= s->last_seq || (m->peer != (uint32_t)s->rank && m->peer2 != (uint32_t)s->rank))
            s->bad++;
        s->last_seq = m->seq;
        s->nticket++;
        fprintf(s->log, "%llu %u %u %llu %llu\n", (unsigned long long)m->seq, m->peer, m->peer2,
                (unsigned long long)m->sreq, (unsigned long long)m->rid);
    } else {
        s->bad++;
    }
    pthread_mutex_unlock(&s->lock);
}

/* A child process: one rank. Exit status 0 when everything it saw was right. */
static int rank_main(int rank, uint16_t port, const char *dir) {
    char path[512];
    snprintf(path, sizeof path, "%s/tickets.%d", dir, rank);
    rank_state s = {.rank = rank, .log = fopen(path, "w"), .seed = 12345u + (unsigned)rank};
    pthread_mutex_init(&s.lock, NULL);
    if (!s.log) return 10;
    s.c = cs_hub_dial(htonl(0x7f000001), port, TOKEN, rank, N, cs_now() + 30, err, sizeof err);
    if (!s.c) return 11;
    uint8_t id[128];
    if (rank == 0) {
        for (int i = 0; i < 128; i++) id[i] = (uint8_t)(i * 7 + 1);
        if (cs_hub_put(s.c, 0, id, sizeof id) < 0) return 12;
    }
    uint8_t got[256];
    if (cs_hub_get(s.c, 0, got, sizeof got, cs_now() + 30, NULL, NULL, err, sizeof err) != 128) return 13;
    for (int i = 0; i < 128; i++)
        if (got[i] != (uint8_t)(i * 7 + 1)) return 14;
    /* a key that each rank puts in turn: rank r waits for r - 1's */
    if (rank > 0 && cs_hub_get(s.c, 100 + (uint32_t)rank - 1, got, sizeof got, cs_now() + 30, NULL,
                               NULL, err, sizeof err) != 1)
        return 15;
    uint8_t b = (uint8_t)rank;
    if (cs_hub_put(s.c, 100 + (uint32_t)rank, &b, 1) < 0) return 16;
    cs_hub_client_on(s.c, on_frame, &s);
    uint64_t sreq = 0;
    for (int k = 0; k < K; k++)
        for (int d = 0; d < N; d++) {
            uint8_t env[CS_WIRE_ENVELOPE];
            envelope(env, rank, ++sreq);
            cs_hub_msg m = {.kind = CS_HUB_ENV, .peer = (uint32_t)d, .data = env, .len = sizeof env};
            if (cs_hub_send(s.c, &m) < 0) return 17;
        }
    double until = cs_now() + 60;
    for (;;) {
        pthread_mutex_lock(&s.lock);
        bool done = s.nticket >= MY_TICKETS || s.lost;
        pthread_mutex_unlock(&s.lock);
        if (done || cs_now() > until) break;
        usleep(2000);
    }
    /* everyone has its tickets before anyone leaves: a late frame is not lost */
    b = 1;
    cs_hub_put(s.c, 200 + (uint32_t)rank, &b, 1);
    for (int r = 0; r < N; r++)
        if (cs_hub_get(s.c, 200 + (uint32_t)r, got, sizeof got, cs_now() + 30, NULL, NULL, err,
                       sizeof err) != 1)
            return 18;
    cs_hub_client_free(s.c);
    fclose(s.log);
    if (s.lost) return 19;
    if (s.nticket != MY_TICKETS) {
        fprintf(stderr, "rank %d: %d tickets, %d envelopes\n", rank, s.nticket, s.nenv);
        return 20;
    }
    if (s.nenv != N * K) return 21;
    return s.bad ? 22 : 0;
}

typedef struct ticket { unsigned long long seq, sreq, rid; unsigned src, dst; } ticket;

START_TEST(test_processes) {
    char dir[] = "/tmp/check_hub.XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    cs_hub *h = cs_hub_new(TOKEN, N, htonl(0x7f000001), err, sizeof err);
    ck_assert_msg(h != NULL, "%s", err);
    ck_assert_int_eq(cs_hub_start(h), 0);
    pid_t pids[N];
    for (int r = 0; r < N; r++) {
        pids[r] = spawn("ranks", r, cs_hub_port(h), dir);
        ck_assert_int_gt(pids[r], 0);
    }
    for (int r = 0; r < N; r++) {
        int ws;
        ck_assert_int_eq(waitpid(pids[r], &ws, 0), pids[r]);
        ck_assert_msg(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "rank %d: status %d", r, WEXITSTATUS(ws));
    }
    ck_assert_uint_eq(cs_hub_tickets(h), N * N * K);
    cs_hub_free(h);
    /* every ticket at both its ends, the same there */
    static ticket seen[N * N * K + 1];
    static int count[N * N * K + 1];
    static unsigned long long stream[N][MY_TICKETS]; /* each rank's issue order */
    int nstream[N] = {0};
    memset(count, 0, sizeof count);
    for (int r = 0; r < N; r++) {
        char path[512];
        snprintf(path, sizeof path, "%s/tickets.%d", dir, r);
        FILE *f = fopen(path, "r");
        ck_assert_ptr_nonnull(f);
        ticket t;
        while (fscanf(f, "%llu %u %u %llu %llu", &t.seq, &t.src, &t.dst, &t.sreq, &t.rid) == 5) {
            ck_assert(t.seq >= 1 && t.seq <= N * N * K);
            ck_assert_int_lt(nstream[r], MY_TICKETS);
            stream[r][nstream[r]++] = t.seq;
            ck_assert(t.src == (unsigned)r || t.dst == (unsigned)r);
            if (count[t.seq]++) {
                ck_assert_uint_eq(seen[t.seq].src, t.src);
                ck_assert_uint_eq(seen[t.seq].dst, t.dst);
                ck_assert_uint_eq(seen[t.seq].sreq, t.sreq);
                ck_assert_uint_eq(seen[t.seq].rid, t.rid);
            }
            seen[t.seq] = t;
        }
        fclose(f);
        unlink(path);
    }
    rmdir(dir);
    for (int q = 1; q <= N * N * K; q++)
        ck_assert_int_eq(count[q], seen[q].src == seen[q].dst ? 1 : 2);
    /* The streams cannot deadlock: play every rank's stream in the order
     * its tickets came (a rank issues them so), a transfer running only
     * once it heads the streams of both its ends, as NCCL pairs them; every
     * transfer must run. */
    int head[N] = {0}, done = 0;
    for (bool moved = true; moved;) {
        moved = false;
        for (int r = 0; r < N; r++) {
            if (head[r] == nstream[r]) continue;
            ticket *t = &seen[stream[r][head[r]]];
            int other = (int)(t->src == (unsigned)r ? t->dst : t->src);
            if (other != r && (head[other] == nstream[other] ||
                               stream[other][head[other]] != t->seq))
                continue; /* its other half is not at the head yet */
            head[r]++;
            if (other != r) head[other]++;
            done++;
            moved = true;
        }
    }
    ck_assert_int_eq(done, N * N * K);
}
END_TEST

static void lost(void *ud, const cs_hub_msg *m, const char *why) {
    (void)why;
    if (!m) atomic_store((_Atomic int *)ud, 1);
}

static bool is_set(void *ud) { return *(int *)ud != 0; }

START_TEST(test_strangers) {
    cs_hub *h = cs_hub_new(TOKEN, 2, htonl(0x7f000001), err, sizeof err);
    ck_assert_ptr_nonnull(h);
    ck_assert_int_eq(cs_hub_start(h), 0);
    uint16_t port = cs_hub_port(h);
    /* a wrong token: the hub closes the connection */
    cs_hub_client *bad = cs_hub_dial(htonl(0x7f000001), port, "ffffffffffffffffffffffffffffffff", 0, 2,
                                     cs_now() + 10, err, sizeof err);
    ck_assert_ptr_nonnull(bad);
    _Atomic int gone = 0; /* set by the client's reader thread */
    cs_hub_client_on(bad, lost, &gone);
    uint8_t v[8];
    ck_assert_int_eq(cs_hub_get(bad, 0, v, sizeof v, cs_now() + 10, NULL, NULL, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "lost the hub"));
    for (int i = 0; i < 500 && !gone; i++) usleep(10000);
    ck_assert_int_eq(gone, 1);
    cs_hub_client_free(bad);
    /* the rightful ranks still join; a second rank 0 does not */
    cs_hub_client *a = cs_hub_dial(htonl(0x7f000001), port, TOKEN, 0, 2, cs_now() + 10, err, sizeof err);
    cs_hub_client *b = cs_hub_dial(htonl(0x7f000001), port, TOKEN, 1, 2, cs_now() + 10, err, sizeof err);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    ck_assert_int_eq(cs_hub_put(a, 9, "x", 1), 0);
    ck_assert_int_eq(cs_hub_get(b, 9, v, sizeof v, cs_now() + 10, NULL, NULL, err, sizeof err), 1);
    ck_assert_int_eq(cs_hub_get(a, 9, v, sizeof v, cs_now() + 10, NULL, NULL, err, sizeof err), 1);
    cs_hub_client *twin = cs_hub_dial(htonl(0x7f000001), port, TOKEN, 0, 2, cs_now() + 10, err, sizeof err);
    ck_assert_ptr_nonnull(twin);
    ck_assert_int_eq(cs_hub_get(twin, 9, v, sizeof v, cs_now() + 10, NULL, NULL, err, sizeof err), -1);
    cs_hub_client_free(twin);
    /* another blob under a stored key closes the putter's connection */
    ck_assert_int_eq(cs_hub_put(b, 9, "y", 1), 0);
    ck_assert_int_eq(cs_hub_get(b, 9, v, sizeof v, cs_now() + 10, NULL, NULL, err, sizeof err), -1);
    /* a spoofed envelope (rank 0 claiming rank 1's) closes rank 0's */
    gone = 0;
    cs_hub_client_on(a, lost, &gone);
    uint8_t env[CS_WIRE_ENVELOPE];
    envelope(env, 1, 1);
    cs_hub_msg m = {.kind = CS_HUB_ENV, .peer = 1, .data = env, .len = sizeof env};
    ck_assert_int_eq(cs_hub_send(a, &m), 0);
    for (int i = 0; i < 500 && !gone; i++) usleep(10000);
    ck_assert_int_eq(gone, 1);
    cs_hub_client_free(a);
    cs_hub_client_free(b);
    /* a rank that left does not come back (its tickets went with it) */
    cs_hub_client *c = cs_hub_dial(htonl(0x7f000001), port, TOKEN, 0, 2, cs_now() + 10, err, sizeof err);
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(cs_hub_get(c, 9, v, sizeof v, cs_now() + 10, NULL, NULL, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "lost the hub"));
    cs_hub_client_free(c);
    cs_hub_free(h);
    /* a GET nobody answers ends at its deadline, or when the run ends */
    h = cs_hub_new(TOKEN, 1, htonl(0x7f000001), err, sizeof err);
    ck_assert_ptr_nonnull(h);
    ck_assert_int_eq(cs_hub_start(h), 0);
    c = cs_hub_dial(htonl(0x7f000001), cs_hub_port(h), TOKEN, 0, 1, cs_now() + 10, err, sizeof err);
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(cs_hub_get(c, 77, v, sizeof v, cs_now() + 0.2, NULL, NULL, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "no value for key 77"));
    int ended = 1;
    ck_assert_int_eq(cs_hub_get(c, 78, v, sizeof v, cs_now() + 30, is_set, &ended, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "the run ended"));
    cs_hub_client_free(c);
    cs_hub_free(h);
}
END_TEST

/* ---- the set-up through the controller: rank processes with real links,
 * and the controller's side of the join played here (HELLO in, WELCOME out) */

static int make_blob(void *ud, void *blob, size_t len, char *why, size_t whylen) {
    (void)ud, (void)why, (void)whylen;
    for (size_t i = 0; i < len; i++) ((uint8_t *)blob)[i] = (uint8_t)(i * 13 + 5);
    return 0;
}

static int join_main(int rank, uint16_t cport) {
    uint32_t lo = htonl(0x7f000001);
    int fd = cs_rank_link_dial(lo, cport, cs_now() + 30);
    if (fd < 0) return 30;
    cs_rank_link *link = cs_rank_link_new(fd, rank, N, TOKEN, stderr);
    if (!link) return 31;
    cs_welcome wel = {0};
    cs_rank_setup s = {.rank = rank, .world = N, .token = TOKEN, .ip = lo, .link = link, .wel = &wel,
                       .err = stderr};
    uint8_t blob[256];
    cs_hub *hub;
    cs_hub_client *hc;
    int rc = 0;
    if (cs_hub_join(&s, 0, make_blob, NULL, blob, sizeof blob, &hub, &hc, err, sizeof err) < 0) {
        fprintf(stderr, "rank %d: %s\n", rank, err);
        rc = 32;
    }
    for (size_t i = 0; !rc && i < sizeof blob; i++)
        if (blob[i] != (uint8_t)(i * 13 + 5)) rc = 33;
    if (!rc && (rank == 0) != (hub != NULL)) rc = 34; /* the hub is rank 0's */
    if (!rc && !(wel.port[0] != 0 && wel.port[1] == 0)) rc = 35; /* the WELCOME has the hub's */
    /* rank 0 keeps the hub until every rank has its blob */
    uint8_t one = 1, v[4];
    if (!rc && cs_hub_put(hc, 1000 + (uint32_t)rank, &one, 1) < 0) rc = 36;
    for (int r = 0; !rc && rank == 0 && r < N; r++)
        if (cs_hub_get(hc, 1000 + (uint32_t)r, v, sizeof v, cs_now() + 30, NULL, NULL, err, sizeof err) != 1)
            rc = 37;
    cs_hub_client_free(hc);
    cs_hub_free(hub);
    cs_rank_link_free(link);
    free(wel.ip);
    free(wel.port);
    return rc;
}

START_TEST(test_join) {
    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001)};
    socklen_t len = sizeof sa;
    ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sa, sizeof sa), 0);
    ck_assert_int_eq(listen(lfd, 16), 0);
    ck_assert_int_eq(getsockname(lfd, (struct sockaddr *)&sa, &len), 0);
    pid_t pids[N];
    for (int r = 0; r < N; r++) {
        pids[r] = spawn("join", r, ntohs(sa.sin_port), "");
        ck_assert_int_gt(pids[r], 0);
    }
    /* the controller's side: every HELLO, then one WELCOME with every address */
    int fds[N];
    uint32_t ips[N];
    uint16_t ports[N];
    for (int i = 0; i < N; i++) {
        int fd = accept(lfd, NULL, NULL);
        ck_assert_int_ge(fd, 0);
        cs_frame_hdr fh;
        uint8_t *m;
        ck_assert_int_eq(cs_wire_read_frame(fd, cs_now() + 30, CS_HELLO_LEN, &fh, &m, err, sizeof err), 0);
        ck_assert_int_eq(fh.type, CS_FR_HELLO);
        cs_hello h;
        cs_cur in = {.p = m, .len = fh.meta_len};
        ck_assert_int_eq(cs_hello_get(&in, &h, true), 0);
        free(m);
        fds[h.rank] = fd;
        ips[h.rank] = h.ip;
        ports[h.rank] = h.port;
    }
    ck_assert_uint_ne(ports[0], 0); /* rank 0 joined with its hub's address */
    for (int i = 1; i < N; i++) ck_assert_uint_eq(ports[i], 0);
    cs_welcome w = {.world = N, .ip = ips, .port = ports};
    size_t wl = cs_welcome_len(N);
    uint8_t *wm = malloc(wl);
    cs_cur out = {.p = wm, .len = wl};
    cs_welcome_put(&out, &w);
    for (int i = 0; i < N; i++) ck_assert_int_eq(cs_wire_send(fds[i], CS_FR_WELCOME, wm, (uint32_t)wl, cs_now() + 10), 0);
    free(wm);
    for (int r = 0; r < N; r++) {
        int ws;
        ck_assert_int_eq(waitpid(pids[r], &ws, 0), pids[r]);
        ck_assert_msg(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "rank %d: status %d", r, WEXITSTATUS(ws));
    }
    for (int i = 0; i < N; i++) close(fds[i]);
    close(lfd);
}
END_TEST

/* An ABORT from the controller while a rank waits for the blob ends the
 * wait (the job is over), and nothing is left running. */
static int abort_main(uint16_t cport) {
    uint32_t lo = htonl(0x7f000001);
    int fd = cs_rank_link_dial(lo, cport, cs_now() + 30);
    if (fd < 0) return 40;
    cs_rank_link *link = cs_rank_link_new(fd, 1, 2, TOKEN, stderr);
    cs_welcome wel = {0};
    cs_rank_setup s = {.rank = 1, .world = 2, .token = TOKEN, .ip = lo, .link = link, .wel = &wel,
                       .err = stderr};
    uint8_t blob[8];
    cs_hub *hub;
    cs_hub_client *hc;
    int rc = cs_hub_join(&s, 0, make_blob, NULL, blob, sizeof blob, &hub, &hc, err, sizeof err) < 0 &&
                     strstr(err, "the job ended") && !hub && !hc ? 0 : 41;
    if (rc) fprintf(stderr, "abort: %s\n", err);
    cs_rank_link_free(link);
    free(wel.ip);
    free(wel.port);
    return rc;
}

START_TEST(test_join_abort) {
    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001)};
    socklen_t len = sizeof sa;
    ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sa, sizeof sa), 0);
    ck_assert_int_eq(listen(lfd, 4), 0);
    ck_assert_int_eq(getsockname(lfd, (struct sockaddr *)&sa, &len), 0);
    /* rank 0's hub, here: rank 1 connects to it and waits for a blob nobody puts */
    cs_hub *hub = cs_hub_new(TOKEN, 2, htonl(0x7f000001), err, sizeof err);
    ck_assert_ptr_nonnull(hub);
    ck_assert_int_eq(cs_hub_start(hub), 0);
    pid_t pid = spawn("abort", 1, ntohs(sa.sin_port), "");
    ck_assert_int_gt(pid, 0);
    int fd = accept(lfd, NULL, NULL);
    ck_assert_int_ge(fd, 0);
    cs_frame_hdr fh;
    uint8_t *m;
    ck_assert_int_eq(cs_wire_read_frame(fd, cs_now() + 30, CS_HELLO_LEN, &fh, &m, err, sizeof err), 0);
    free(m);
    uint32_t ips[2] = {htonl(0x7f000001), 0};
    uint16_t ports[2] = {cs_hub_port(hub), 0};
    cs_welcome w = {.world = 2, .ip = ips, .port = ports};
    size_t wl = cs_welcome_len(2);
    uint8_t *wm = malloc(wl);
    cs_cur out = {.p = wm, .len = wl};
    cs_welcome_put(&out, &w);
    ck_assert_int_eq(cs_wire_send(fd, CS_FR_WELCOME, wm, (uint32_t)wl, cs_now() + 10), 0);
    free(wm);
    usleep(200 * 1000); /* let it wait; the outcome is the same if it has not yet */
    uint8_t why[4] = {CS_END_ERROR, 0, 0, 0};
    ck_assert_int_eq(cs_wire_send(fd, CS_FR_ABORT, why, 4, cs_now() + 10), 0);
    int ws;
    ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
    ck_assert_msg(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "status %d", WEXITSTATUS(ws));
    close(fd);
    close(lfd);
    cs_hub_free(hub);
}
END_TEST

/* ---- the hub's end: what it still has for a rank is written before it
 * closes (a rank must not get one half of a transfer's tickets and lose the
 * other), even when that is more than the socket holds */

#define DRAIN_GETS 3000

typedef struct drain {
    int fd;
    _Atomic int go;
    int values;
} drain;

static int count_value(void *ud, const cs_frame_hdr *fh, cs_cur *meta, void **dst, char *why,
                       size_t whylen) {
    (void)dst, (void)why, (void)whylen;
    cs_hub_msg m;
    if (fh->type == CS_FR_HUB && cs_hub_msg_get(meta, &m, 2) == 0 && m.kind == CS_HUB_VALUE &&
        m.key == 5 && m.len == CS_HUB_MAX_DATA)
        ((drain *)ud)->values++;
    return 0;
}

static int no_payload(void *ud, char *why, size_t whylen) {
    (void)ud, (void)why, (void)whylen;
    return -1;
}

static void *drain_reader(void *arg) {
    drain *d = arg;
    while (!atomic_load(&d->go)) usleep(1000);
    cs_rx rx;
    cs_rx_init(&rx, 0);
    for (;;) {
        struct pollfd p = {.fd = d->fd, .events = POLLIN};
        poll(&p, 1, 1000);
        int rc = cs_rx_pump(&rx, d->fd, &(cs_rx_ops){count_value, no_payload}, d, err, sizeof err);
        if (rc != 0) break; /* EOF: the hub closed, after everything */
    }
    cs_rx_free(&rx);
    return NULL;
}

START_TEST(test_drain) {
    cs_hub *h = cs_hub_new(TOKEN, 2, htonl(0x7f000001), err, sizeof err);
    ck_assert_ptr_nonnull(h);
    ck_assert_int_eq(cs_hub_start(h), 0);
    /* rank 0: a raw connection that asks for a 4 KiB blob DRAIN_GETS times
     * (12 MiB of answers, one per GET, whether it came before the blob or
     * after) and reads nothing until the hub is closing */
    drain d = {.fd = cs_rank_link_dial(htonl(0x7f000001), cs_hub_port(h), cs_now() + 10)};
    ck_assert_int_ge(d.fd, 0);
    uint8_t peer[CS_PEER_LEN];
    cs_cur pc = {.p = peer, .len = sizeof peer};
    cs_hello hello = {.rank = 0, .world = 2};
    memcpy(hello.token, TOKEN, CS_WIRE_TOKEN);
    cs_hello_put(&pc, &hello, false);
    ck_assert_int_eq(cs_wire_send(d.fd, CS_FR_PEER, peer, sizeof peer, cs_now() + 10), 0);
    cs_hub_client *b = cs_hub_dial(htonl(0x7f000001), cs_hub_port(h), TOKEN, 1, 2, cs_now() + 10, err, sizeof err);
    ck_assert_ptr_nonnull(b);
    static uint8_t blob[CS_HUB_MAX_DATA];
    ck_assert_int_eq(cs_hub_put(b, 5, blob, sizeof blob), 0);
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, drain_reader, &d), 0);
    uint8_t get[CS_WIRE_HDR + CS_HUB_FIXED];
    cs_hub_msg g = {.kind = CS_HUB_GET, .key = 5};
    cs_wire_hdr_put(get, CS_FR_HUB, CS_HUB_FIXED, 0);
    cs_cur gc = {.p = get + CS_WIRE_HDR, .len = CS_HUB_FIXED};
    cs_hub_msg_put(&gc, &g);
    for (int i = 0; i < DRAIN_GETS; i++) ck_assert_int_eq(cs_wire_write_all(d.fd, get, sizeof get, cs_now() + 30), 0);
    /* then a PUT: once rank 1 sees it, the hub has read every GET before it */
    uint8_t put[CS_WIRE_HDR + CS_HUB_FIXED + 1];
    cs_hub_msg m = {.kind = CS_HUB_PUT, .key = 6, .data = (const uint8_t *)"x", .len = 1};
    cs_wire_hdr_put(put, CS_FR_HUB, CS_HUB_FIXED + 1, 0);
    cs_cur mc = {.p = put + CS_WIRE_HDR, .len = CS_HUB_FIXED + 1};
    cs_hub_msg_put(&mc, &m);
    ck_assert_int_eq(cs_wire_write_all(d.fd, put, sizeof put, cs_now() + 30), 0);
    uint8_t v[4];
    ck_assert_int_eq(cs_hub_get(b, 6, v, sizeof v, cs_now() + 60, NULL, NULL, err, sizeof err), 1);
    atomic_store(&d.go, 1);
    cs_hub_free(h); /* rank 0 reads only now */
    pthread_join(t, NULL);
    ck_assert_int_eq(d.values, DRAIN_GETS);
    close(d.fd);
    cs_hub_client_free(b);
}
END_TEST

int main(int argc, char **argv) {
    if (argc == 6 && strcmp(argv[1], "--child") == 0) return child(argv);
    Suite *s = suite_create("hub");
    TCase *c = tcase_create("codec");
    tcase_add_test(c, test_codec);
    suite_add_tcase(s, c);
    TCase *p = tcase_create("processes");
    tcase_set_timeout(p, 120);
    tcase_add_test(p, test_processes);
    tcase_add_test(p, test_strangers);
    tcase_add_test(p, test_join);
    tcase_add_test(p, test_join_abort);
    tcase_add_test(p, test_drain);
    suite_add_tcase(s, p);
    return run_suite(s);
}
