/* rank_harness.c -- see rank_harness.h. */
#include "rank_harness.h"

#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "monitor.h"

typedef struct harness {
    cs_world *w;
    rank_fn fn;
    void *arg;
} harness;

typedef struct rank_arg {
    harness *h;
    int rank;
} rank_arg;

static void on_deadlock(void *ud) { cs_world_abort(ud, CS_END_DEADLOCK); }
static void on_error(void *ud) { cs_world_abort(ud, CS_END_ERROR); }

static void *rank_main(void *p) {
    rank_arg *a = p;
    cs_rank *r = cs_world_rank(a->h->w, a->rank);
    a->h->fn(r, a->h->arg);
    cs_rank_exit(r, cs_world_aborted(a->h->w) ? 1 : 0);
    return NULL;
}

cs_end_reason run_ranks(const cs_world_config *config, rank_fn fn, void *arg, char *verdict,
                        size_t vlen) {
    cs_world_config cfg = *config;
    int n = cfg.world;
    if (!cfg.engine) cfg.engine = "thread";
    if (!cfg.script) cfg.script = "test.c";
    char err[256], mode[64];
    cs_bus bus;
    cs_monitor mon;
    harness h = {.fn = fn, .arg = arg};
    ck_assert_int_eq(cs_bus_init(&bus, n), 0);
    ck_assert_int_eq(cs_monitor_init(&mon, n), 0);
    h.w = cs_world_new(&cfg, &bus, err, sizeof err);
    ck_assert_msg(h.w != NULL, "%s", err);
    mon.bus = &bus;
    mon.on_deadlock = on_deadlock;
    mon.on_error = on_error;
    mon.ud = h.w;
    mon.script = strdup(cfg.script);
    mon.send_mode = strdup(cs_send_mode_format(&cfg.mode, mode, sizeof mode));
    cs_bus_subscribe(&bus, cs_monitor_sink(&mon));
    pthread_t *t = calloc((size_t)n, sizeof *t);
    rank_arg *a = calloc((size_t)n, sizeof *a);
    ck_assert(t && a);
    for (int i = 0; i < n; i++) {
        a[i] = (rank_arg){&h, i};
        ck_assert_int_eq(pthread_create(&t[i], NULL, rank_main, &a[i]), 0);
    }
    for (int i = 0; i < n; i++) pthread_join(t[i], NULL);
    cs_end_reason why = cs_world_end_reason(h.w);
    const char *v = mon.verdict ? mon.verdict : cs_monitor_coll_verdict(&mon);
    if (why == CS_END_DEADLOCK) ck_assert_ptr_nonnull(v);
    if (verdict) snprintf(verdict, vlen, "%s", v ? v : "");
    cs_world_free(h.w);
    cs_monitor_destroy(&mon);
    cs_bus_destroy(&bus);
    free(t);
    free(a);
    return why;
}
