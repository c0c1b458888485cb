/* check_netmodel.c -- the --net model's spelling (netmodel.c), and the
 * timekeeper (vclock.c) giving the same virtual times whatever the real
 * order in which the ranks' events reach it. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netmodel.h"
#include "vclock.h"

#include "run_suite.h"

static char err[256];

static cs_netmodel parsed(const char *s) {
    cs_netmodel m;
    ck_assert_msg(cs_netmodel_parse(s, &m, err, sizeof err) == 0, "%s: %s", s, err);
    return m;
}

static void refused(const char *s, const char *why) {
    cs_netmodel m = {.on = true, .alpha_ns = 77};
    ck_assert_msg(cs_netmodel_parse(s, &m, err, sizeof err) < 0, "%s accepted", s);
    ck_assert_msg(strstr(err, why), "%s: '%s' lacks '%s'", s, err, why);
    ck_assert(m.on && m.alpha_ns == 77); /* untouched */
}

START_TEST(test_none_and_presets) {
    cs_netmodel m = parsed("none");
    ck_assert(!m.on);
    for (int i = 0; i < cs_netmodel_npresets; i++) {
        m = parsed(cs_netmodel_presets[i].name);
        ck_assert(m.on && m.alpha_ns > 0 && m.bandwidth > 0 && m.flops == 0);
        ck_assert_str_eq(m.name, cs_netmodel_presets[i].name);
    }
    m = parsed("ethernet-1g");
    ck_assert_uint_eq(m.alpha_ns, 50000);
    ck_assert_uint_eq(m.bandwidth, 125000000);
    m = parsed("pcie");
    ck_assert_uint_eq(m.bandwidth, 31500000000ULL);
    m = parsed("nvlink");
    ck_assert_uint_eq(m.bandwidth, 300000000000ULL);
}
END_TEST

START_TEST(test_custom) {
    cs_netmodel m = parsed("alpha=5us,bandwidth=10GB/s");
    ck_assert(m.on);
    ck_assert_uint_eq(m.alpha_ns, 5000);
    ck_assert_uint_eq(m.bandwidth, 10000000000ULL);
    ck_assert_uint_eq(m.flops, 0);
    ck_assert_str_eq(m.name, "custom");
    m = parsed("bandwidth=125MB/s,alpha=0.5ms,flops=100G"); /* any order */
    ck_assert_uint_eq(m.alpha_ns, 500000);
    ck_assert_uint_eq(m.bandwidth, 125000000);
    ck_assert_uint_eq(m.flops, 100000000000ULL);
    m = parsed("alpha=1s,bandwidth=1B/s,flops=1e12");
    ck_assert_uint_eq(m.alpha_ns, 1000000000);
    ck_assert_uint_eq(m.bandwidth, 1);
    ck_assert_uint_eq(m.flops, 1000000000000ULL);
    m = parsed("alpha=250ns,bandwidth=2.5KB/s,flops=3");
    ck_assert_uint_eq(m.alpha_ns, 250);
    ck_assert_uint_eq(m.bandwidth, 2500);
    ck_assert_uint_eq(m.flops, 3);
    m = parsed("alpha=1us,bandwidth=1TB/s");
    ck_assert_uint_eq(m.bandwidth, 1000000000000ULL);
}
END_TEST

START_TEST(test_refused) {
    refused("", "empty model");
    refused("token-ring", "unknown model 'token-ring'");
    refused("alpha=5us", "needs both alpha=TIME and bandwidth=RATE");
    refused("bandwidth=1GB/s", "needs both");
    refused("alpha=5,bandwidth=1GB/s", "alpha=5: expected a decimal number with a unit");
    refused("alpha=5us,bandwidth=10Gb", "bandwidth=10Gb: expected a decimal number with a unit");
    refused("alpha=5us,bandwidth=10GB", "bandwidth=10GB");
    refused("alpha=-5us,bandwidth=1GB/s", "alpha=-5us");
    refused("alpha=5us,bandwidth=1GB/s,flops=fast", "flops=fast");
    refused("alpha=0us,bandwidth=1GB/s", "alpha must be at least 1ns");
    refused("alpha=5us,bandwidth=0GB/s", "bandwidth must be at least 1B/s");
    refused("alpha=5us,alpha=6us,bandwidth=1GB/s", "alpha given twice");
    refused("alpha=5us,bandwidth=1GB/s,", "trailing comma");
    refused("alpha=5us,latency=1us,bandwidth=1GB/s", "unknown key 'latency'");
    refused("alpha=5us,,bandwidth=1GB/s", "is not key=value");
    refused("alpha=nanus,bandwidth=1GB/s", "alpha=nanus");
    refused("alpha=1e30s,bandwidth=1GB/s", "alpha=1e30s");
}
END_TEST

/* Every key has a range, said when a value falls outside it; numbers are
 * decimal, and a value is rounded to its base unit only once in range. */
START_TEST(test_ranges) {
    const char *alpha = "out of range: alpha must be at least 1ns and at most 3600s";
    refused("alpha=1e10s,bandwidth=1GB/s", alpha);
    refused("alpha=1e9s,bandwidth=1GB/s", alpha);
    refused("alpha=3601s,bandwidth=1GB/s", alpha);
    refused("alpha=0.5ns,bandwidth=1GB/s", alpha);
    refused("alpha=0us,bandwidth=1GB/s", alpha);
    refused("alpha=5us,bandwidth=0.5B/s", "bandwidth must be at least 1B/s and at most 1000TB/s");
    refused("alpha=5us,bandwidth=1001TB/s", "bandwidth must be at least 1B/s and at most 1000TB/s");
    const char *flops = "out of range: flops must be at least 1 and at most 1000P (leave flops "
                        "out for arithmetic that takes no time)";
    refused("alpha=5us,bandwidth=1GB/s,flops=0.4", flops);
    refused("alpha=5us,bandwidth=1GB/s,flops=0.5", flops);
    refused("alpha=5us,bandwidth=1GB/s,flops=1e-30", flops);
    refused("alpha=5us,bandwidth=1GB/s,flops=0", flops);
    refused("alpha=5us,bandwidth=1GB/s,flops=1e19", flops);
    refused("alpha=0x10us,bandwidth=1GB/s", "alpha=0x10us: expected a decimal number with a unit");
    refused("alpha=5us,bandwidth=0x10GB/s", "bandwidth=0x10GB/s: expected a decimal number");
    refused("alpha=5us,bandwidth=1GB/s,flops=0x10", "flops=0x10: expected a decimal number");
    refused("alpha=5us,bandwidth=1GB/s,flops=0x1p4", "flops=0x1p4: expected a decimal number");
    cs_netmodel m = parsed("alpha=3600s,bandwidth=1000TB/s,flops=1000P"); /* the maximums */
    ck_assert_uint_eq(m.alpha_ns, 3600000000000ULL);
    ck_assert_uint_eq(m.bandwidth, 1000000000000000ULL);
    ck_assert_uint_eq(m.flops, 1000000000000000000ULL);
    m = parsed("alpha=1ns,bandwidth=1B/s,flops=1"); /* the minimums */
    ck_assert(m.alpha_ns == 1 && m.bandwidth == 1 && m.flops == 1);
    m = parsed("alpha=1.4ns,bandwidth=1.5B/s,flops=2.5e0"); /* rounded to the nearest */
    ck_assert(m.alpha_ns == 1 && m.bandwidth == 2 && m.flops == 3);
}
END_TEST

START_TEST(test_format_round_trip) {
    const char *specs[] = {"alpha=5us,bandwidth=10GB/s", "alpha=1500ns,bandwidth=31500MB/s",
                           "alpha=2ms,bandwidth=7B/s,flops=100G", "alpha=1s,bandwidth=1TB/s"};
    char buf[160];
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        cs_netmodel a = parsed(specs[i]);
        ck_assert_str_eq(cs_netmodel_format(&a, buf, sizeof buf), specs[i]);
        cs_netmodel b = parsed(buf);
        ck_assert(a.alpha_ns == b.alpha_ns && a.bandwidth == b.bandwidth && a.flops == b.flops);
    }
    cs_netmodel p = parsed("infiniband");
    ck_assert_str_eq(cs_netmodel_format(&p, buf, sizeof buf), "infiniband");
    cs_netmodel n = parsed("none");
    ck_assert_str_eq(cs_netmodel_format(&n, buf, sizeof buf), "none");
}
END_TEST

START_TEST(test_costs) {
    cs_netmodel m = parsed("alpha=10us,bandwidth=1GB/s,flops=1G");
    ck_assert_uint_eq(cs_netmodel_xfer_ns(&m, 1000), 1000);
    ck_assert_uint_eq(cs_netmodel_xfer_ns(&m, 0), 0);
    ck_assert_uint_eq(cs_netmodel_flops_ns(&m, 5000), 5000);
    m = parsed("alpha=1us,bandwidth=3B/s");
    ck_assert_uint_eq(cs_netmodel_xfer_ns(&m, 1), 333333334); /* rounded up */
    ck_assert_uint_eq(cs_netmodel_flops_ns(&m, 1000), 0);     /* no rate: free */
    m = parsed("alpha=1us,bandwidth=1B/s");
    ck_assert_uint_eq(cs_netmodel_xfer_ns(&m, (size_t)1 << 40), (uint64_t)INT64_MAX); /* capped */
    char buf[32];
    ck_assert_str_eq(cs_vt_format(220000, buf, sizeof buf), "220 us");
    ck_assert_str_eq(cs_vt_format(1005000, buf, sizeof buf), "1.005 ms");
    ck_assert_str_eq(cs_vt_format(1500, buf, sizeof buf), "1.5 us");
    ck_assert_str_eq(cs_vt_format(0, buf, sizeof buf), "0 ns");
    ck_assert_str_eq(cs_vt_format(999, buf, sizeof buf), "999 ns");
    ck_assert_str_eq(cs_vt_format(3000000000ULL, buf, sizeof buf), "3 s");
    ck_assert_str_eq(cs_vt_format(1000000001ULL, buf, sizeof buf), "1.000000001 s");
}
END_TEST

/* ---- the timekeeper: one program, its events in many real orders */

#define W 4
#define MAXEV 64

typedef struct script {
    cs_event ev[W][MAXEV]; /* each rank's events in its order */
    int n[W];
    /* match events: (receiver rank, recv req) <- (sender, send req), with
     * the positions after which both posts have happened */
    cs_event match[16];
    int nmatch;
    uint64_t reqs[W][MAXEV][4];
} script;

static void post(script *s, int r, uint64_t req, cs_op op, int peer, size_t bytes, bool eager) {
    s->ev[r][s->n[r]++] = (cs_event){.type = CS_EV_POST, .rank = r, .req = req, .op = op,
                                     .peer = peer, .bytes = bytes, .eager = eager};
}

static void wait1(script *s, int r, uint64_t a, uint64_t b) {
    int i = s->n[r]++;
    s->reqs[r][i][0] = a;
    s->reqs[r][i][1] = b;
    s->ev[r][i] = (cs_event){.type = CS_EV_WAIT, .rank = r, .reqs = s->reqs[r][i], .nreqs = b ? 2 : 1};
}

static void simple(script *s, int r, cs_event_type t, double ms) {
    s->ev[r][s->n[r]++] = (cs_event){.type = t, .rank = r, .ms = ms, .begin = true};
}

static void match(script *s, int r, uint64_t rreq, int src, uint64_t sreq) {
    s->match[s->nmatch++] = (cs_event){.type = CS_EV_MATCH, .rank = r, .req = rreq, .peer = src,
                                       .peer_req = sreq};
}

/* Rank 0 receives from 1, 2 and 3 (posted in reverse); each sender computes
 * a different time first; then a ring exchange among all four. */
static void program(script *s) {
    memset(s, 0, sizeof *s);
    for (int k = 3; k >= 1; k--) post(s, 0, (uint64_t)(4 - k), CS_OP_IRECV, k, 1000, false);
    for (int k = 1; k <= 3; k++) {
        wait1(s, 0, (uint64_t)(4 - k), 0);
        simple(s, 0, CS_EV_CLOCK, 0);
    }
    for (int k = 1; k <= 3; k++) {
        if (k == 2) simple(s, k, CS_EV_COMPUTE, 0.002); /* 2 us */
        post(s, k, 1, CS_OP_SEND, 0, 1000, k == 3);
        wait1(s, k, 1, 0);
        match(s, 0, (uint64_t)(4 - k), k, 1);
    }
    for (int r = 0; r < W; r++) {
        uint64_t base = r == 0 ? 4 : 2;
        post(s, r, base, CS_OP_ISEND, (r + 1) % W, 4096, false);
        post(s, r, base + 1, CS_OP_IRECV, (r + W - 1) % W, 4096, false);
        wait1(s, r, base, base + 1);
        simple(s, r, CS_EV_CLOCK, 0);
        simple(s, r, CS_EV_EXIT, 0);
    }
    for (int r = 0; r < W; r++) {
        int left = (r + W - 1) % W;
        match(s, r, r == 0 ? 5 : 3, left, left == 0 ? 4 : 2);
    }
}

typedef struct seen {
    uint64_t clocks[W][8];
    int nclocks[W];
    char rows[256][160];
    int nrows;
} seen;

static void on_answer(void *ud, int rank, uint64_t ns) {
    seen *z = ud;
    z->clocks[rank][z->nclocks[rank]++] = ns;
}

static void on_vtime(void *ud, cs_event *ev) {
    seen *z = ud;
    snprintf(z->rows[z->nrows++], sizeof z->rows[0], "%d %s %llu %llu %llu %llu %llu %llu",
             ev->vrank, ev->text, (unsigned long long)ev->req, (unsigned long long)ev->vt,
             (unsigned long long)ev->vt_done, (unsigned long long)ev->vt_start,
             (unsigned long long)ev->vt_end, (unsigned long long)ev->vt_arrive);
}

static int cmp_rows(const void *a, const void *b) { return strcmp(a, b); }

/* Feed the program's events with the ranks interleaved at random (each
 * rank's own order kept, a match only after both of its posts). */
static void run(const script *s, unsigned seed, seen *z, uint64_t *makespan) {
    cs_netmodel m = parsed("alpha=10us,bandwidth=1GB/s");
    cs_vclock *v = cs_vclock_new(&m, W);
    memset(z, 0, sizeof *z);
    cs_vclock_set_answer(v, on_answer, z);
    cs_vclock_set_emit(v, on_vtime, z);
    int at[W] = {0};
    bool matched[16] = {false};
    srand(seed);
    for (;;) {
        int ready[W + 16], n = 0;
        for (int r = 0; r < W; r++)
            if (at[r] < s->n[r]) ready[n++] = r;
        for (int i = 0; i < s->nmatch; i++) {
            if (matched[i]) continue;
            const cs_event *mm = &s->match[i];
            bool rposted = false, sposted = false;
            for (int k = 0; k < at[mm->rank]; k++)
                rposted |= s->ev[mm->rank][k].type == CS_EV_POST && s->ev[mm->rank][k].req == mm->req;
            for (int k = 0; k < at[mm->peer]; k++)
                sposted |= s->ev[mm->peer][k].type == CS_EV_POST &&
                           s->ev[mm->peer][k].req == mm->peer_req;
            if (rposted && sposted) ready[n++] = W + i;
        }
        if (!n) break;
        int pick = ready[rand() % n];
        if (pick < W) cs_vclock_feed(v, &s->ev[pick][at[pick]++]);
        else {
            matched[pick - W] = true;
            cs_vclock_feed(v, &s->match[pick - W]);
        }
    }
    ck_assert(cs_vclock_complete(v));
    *makespan = cs_vclock_makespan(v);
    qsort(z->rows, (size_t)z->nrows, sizeof z->rows[0], cmp_rows);
    cs_vclock_free(v);
}

START_TEST(test_any_real_order) {
    static script s;
    static seen first, again;
    program(&s);
    uint64_t ms0, ms;
    run(&s, 1, &first, &ms0);
    /* Rank 1 sends at 0 [0,1us], rank 2 after 2 us of compute [2,3], rank
     * 3 eagerly at 0 [1,2] (sender 1 before 3 at equal ready times). */
    ck_assert_uint_eq(first.nclocks[0], 4);
    ck_assert_uint_eq(first.clocks[0][0], 11000);
    ck_assert_uint_eq(first.clocks[0][1], 13000);
    ck_assert_uint_eq(first.clocks[0][2], 13000);
    /* the ring starts when rank 0 is done: 13 us; each rank's message 4096 ns + 10 us */
    ck_assert_uint_eq(first.clocks[0][3], 13000 + 14096);
    ck_assert_uint_eq(ms0, 13000 + 14096);
    for (unsigned seed = 2; seed < 300; seed++) {
        run(&s, seed, &again, &ms);
        ck_assert_uint_eq(ms, ms0);
        ck_assert_int_eq(again.nrows, first.nrows);
        for (int r = 0; r < W; r++) {
            ck_assert_int_eq(again.nclocks[r], first.nclocks[r]);
            for (int k = 0; k < first.nclocks[r]; k++)
                ck_assert_uint_eq(again.clocks[r][k], first.clocks[r][k]);
        }
        for (int i = 0; i < first.nrows; i++) ck_assert_str_eq(again.rows[i], first.rows[i]);
    }
}
END_TEST

/* Clocks saturate at INT64_MAX ns instead of wrapping: a run that gets there
 * is not complete, and says why. */
static cs_vclock *two_ranks(const char *net) {
    cs_netmodel m = parsed(net);
    return cs_vclock_new(&m, 2);
}

static void feed(cs_vclock *v, cs_event ev) { cs_vclock_feed(v, &ev); }

static void exits(cs_vclock *v, int rank) {
    feed(v, (cs_event){.type = CS_EV_EXIT, .rank = rank});
}

START_TEST(test_overflow_compute) {
    /* modelled arithmetic of 1e10 operations at 1 a second: 1e19 ns */
    cs_vclock *v = two_ranks("alpha=1us,bandwidth=1GB/s");
    feed(v, (cs_event){.type = CS_EV_COMPUTE, .rank = 0, .ms = 1e13, .begin = true});
    exits(v, 0);
    exits(v, 1);
    ck_assert(cs_vclock_overflowed(v));
    ck_assert(!cs_vclock_complete(v));
    cs_vclock_free(v);
    /* an hour at a time, below the top: complete */
    v = two_ranks("alpha=1us,bandwidth=1GB/s");
    for (int i = 0; i < 1000; i++)
        feed(v, (cs_event){.type = CS_EV_COMPUTE, .rank = 0, .ms = 3600e3, .begin = true});
    exits(v, 0);
    exits(v, 1);
    ck_assert(!cs_vclock_overflowed(v));
    ck_assert(cs_vclock_complete(v));
    ck_assert_uint_eq(cs_vclock_makespan(v), 3600000000000000ULL);
    cs_vclock_free(v);
}
END_TEST

START_TEST(test_overflow_transmission) {
    /* a TiB at 1 B/s: 3.5e4 years on the wire; the receiver waits for it */
    cs_vclock *v = two_ranks("alpha=1us,bandwidth=1B/s");
    uint64_t one = 1;
    feed(v, (cs_event){.type = CS_EV_POST, .rank = 0, .req = 1, .op = CS_OP_ISEND, .peer = 1,
                       .bytes = (size_t)1 << 40, .eager = true});
    feed(v, (cs_event){.type = CS_EV_POST, .rank = 1, .req = 1, .op = CS_OP_IRECV, .peer = 0,
                       .bytes = (size_t)1 << 40});
    feed(v, (cs_event){.type = CS_EV_MATCH, .rank = 1, .req = 1, .peer = 0, .peer_req = 1});
    feed(v, (cs_event){.type = CS_EV_WAIT, .rank = 1, .reqs = &one, .nreqs = 1});
    exits(v, 0);
    exits(v, 1);
    ck_assert(cs_vclock_overflowed(v));
    ck_assert(!cs_vclock_complete(v));
    cs_vclock_free(v);
}
END_TEST

/* The smallest transmission may wait on a rendezvous send to the same rank
 * that an open any-source receive there could take (its time not known
 * until the match says which send it takes); a larger one that shares no
 * link with either is placed meanwhile, so that a rank reading its clock
 * after it gets its answer without waiting for that match (which, in a real
 * run, could itself wait on this rank: a run stuck for no reason). */
START_TEST(test_smallest_safe_first) {
    cs_netmodel m = parsed("alpha=10us,bandwidth=1GB/s"); /* 1000 B: 1 us on the wire */
    cs_vclock *v = cs_vclock_new(&m, 4);
    seen z;
    memset(&z, 0, sizeof z);
    cs_vclock_set_answer(v, on_answer, &z);
    uint64_t one = 1;
    /* rank 3: a receive from any rank, at 0 */
    feed(v, (cs_event){.type = CS_EV_POST, .rank = 3, .req = 1, .op = CS_OP_IRECV,
                       .peer = CS_ANY_SOURCE, .bytes = 1000});
    feed(v, (cs_event){.type = CS_EV_WAIT, .rank = 3, .reqs = &one, .nreqs = 1});
    /* rank 0: a rendezvous send to 3 at 0, which that receive may take */
    feed(v, (cs_event){.type = CS_EV_POST, .rank = 0, .req = 1, .op = CS_OP_SEND, .peer = 3,
                       .bytes = 1000});
    feed(v, (cs_event){.type = CS_EV_WAIT, .rank = 0, .reqs = &one, .nreqs = 1});
    /* rank 1, after 1 us: an eager send to 3 too, the smallest key known */
    feed(v, (cs_event){.type = CS_EV_COMPUTE, .rank = 1, .ms = 0.001, .begin = true});
    feed(v, (cs_event){.type = CS_EV_POST, .rank = 1, .req = 1, .op = CS_OP_SEND, .peer = 3,
                       .bytes = 1000, .eager = true});
    feed(v, (cs_event){.type = CS_EV_WAIT, .rank = 1, .reqs = &one, .nreqs = 1});
    /* rank 2, after 1.5 us: an eager send to 0, then it reads its clock */
    feed(v, (cs_event){.type = CS_EV_COMPUTE, .rank = 2, .ms = 0.0015, .begin = true});
    feed(v, (cs_event){.type = CS_EV_POST, .rank = 2, .req = 1, .op = CS_OP_SEND, .peer = 0,
                       .bytes = 1000, .eager = true});
    feed(v, (cs_event){.type = CS_EV_WAIT, .rank = 2, .reqs = &one, .nreqs = 1});
    feed(v, (cs_event){.type = CS_EV_CLOCK, .rank = 2});
    ck_assert_int_eq(z.nclocks[2], 1); /* answered now, before any match */
    ck_assert_uint_eq(z.clocks[2][0], 2500);
    cs_vclock_free(v);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("netmodel");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, test_none_and_presets);
    tcase_add_test(tc, test_custom);
    tcase_add_test(tc, test_refused);
    tcase_add_test(tc, test_ranges);
    tcase_add_test(tc, test_format_round_trip);
    tcase_add_test(tc, test_costs);
    suite_add_tcase(s, tc);
    tc = tcase_create("timekeeper");
    tcase_add_test(tc, test_any_real_order);
    tcase_add_test(tc, test_smallest_safe_first);
    tcase_add_test(tc, test_overflow_compute);
    tcase_add_test(tc, test_overflow_transmission);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
