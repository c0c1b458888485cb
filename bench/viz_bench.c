/* viz_bench.c -- how fast the visualizer draws, and whether it keeps up.
 *
 *   bench/viz_bench render   frame time with 64 ranks and 10,000 events
 *   bench/viz_bench live     a 64-rank ring at full speed, with a renderer
 *                            drawing a frame every 40 ms under the bus lock
 *                            (the TUI's work, without a terminal), against
 *                            the same run without it
 * Figures, not pass/fail.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "history.h"
#include "gates.h"
#include "launch.h"
#include "monitor.h"
#include "render.h"
#include "script.h"

static void emit(cs_bus *b, cs_event ev) { cs_bus_emit(b, &ev); }

static int bench_render(void) {
    enum { WORLD = 64, EVENTS = 10000 };
    cs_bus bus;
    cs_monitor mon;
    cs_history hist;
    cs_bus_init(&bus, WORLD);
    cs_monitor_init(&mon, WORLD);
    cs_history_init(&hist, WORLD, 0);
    cs_bus_subscribe(&bus, cs_monitor_sink(&mon));
    cs_bus_subscribe(&bus, cs_history_sink(&hist));
    emit(&bus, (cs_event){.type = CS_EV_RUN, .rank = -1, .world = WORLD, .engine = "thread",
                          .send_mode = "rendezvous", .text = "ring.lua"});
    uint64_t id[WORLD] = {0};
    size_t n = 1;
    for (int i = 0; n < EVENTS; i++) { /* a ring: rank s sends to s+1; 5 events a message */
        int s = i % WORLD, r = (s + 1) % WORLD;
        uint64_t sq = ++id[s], rq = ++id[r];
        emit(&bus, (cs_event){.type = CS_EV_POST, .rank = s, .req = sq, .op = CS_OP_SEND,
                              .peer = r, .bytes = 64, .line = 9});
        emit(&bus, (cs_event){.type = CS_EV_POST, .rank = r, .req = rq, .op = CS_OP_RECV,
                              .peer = s, .bytes = 64, .line = 10});
        emit(&bus, (cs_event){.type = CS_EV_MATCH, .rank = r, .req = rq, .peer = s,
                              .peer_req = sq, .bytes = 64});
        emit(&bus, (cs_event){.type = CS_EV_COMPLETE, .rank = r, .req = rq});
        emit(&bus, (cs_event){.type = CS_EV_COMPLETE, .rank = s, .req = sq});
        n += 5;
    }
    static const char *src[] = {"-- ring", "local right = (rank + 1) % world_size"};
    const int sizes[][2] = {{80, 24}, {100, 30}, {200, 60}};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        cs_grid g;
        cs_grid_init(&g, sizes[k][0], sizes[k][1]);
        cs_viz_view v = {.mon = &mon, .hist = &hist, .script = "ring.lua", .src = src, .nsrc = 2,
                         .status = "running", .speed = 0, .selected = 30};
        int frames = 300;
        double worst = 0, t0 = cs_now();
        for (int f = 0; f < frames; f++) {
            double a = cs_now();
            v.selected = f % WORLD;
            cs_viz_render(&g, &v);
            double d = cs_now() - a;
            if (d > worst) worst = d;
        }
        double mean = (cs_now() - t0) / frames;
        printf("render %dx%d, %d ranks, %zu events (%llu msgs, %zu diagram rows): "
               "mean %.3f ms, worst %.3f ms per frame\n",
               sizes[k][0], sizes[k][1], WORLD, n, (unsigned long long)hist.messages, hist.n,
               mean * 1e3, worst * 1e3);
        cs_grid_free(&g);
    }
    /* key p: a rank's whole kept output (2000 lines of 128 bytes, past the
     * 256 KiB bound) on the whole screen, followed at its end and scrolled
     * to its middle */
    char line[129];
    memset(line, 'x', 128);
    for (int i = 0; i < 128; i += 8) line[i] = ' ';
    line[128] = 0;
    for (int i = 0; i < 2000; i++)
        emit(&bus, (cs_event){.type = CS_EV_PRINT, .rank = 7, .text = line});
    for (int mid = 0; mid < 2; mid++) {
        cs_grid g;
        cs_grid_init(&g, 200, 60);
        cs_viz_view v = {.mon = &mon, .hist = &hist, .script = "ring.lua", .src = src, .nsrc = 2,
                         .status = "running", .speed = 0, .selected = 7,
                         .full = CS_FULL_OUTPUT, .full_top = mid ? 1000 : 1 << 20};
        int frames = 100;
        double t0 = cs_now();
        for (int f = 0; f < frames; f++) cs_viz_render(&g, &v);
        printf("render 200x60, key p, %zu kept lines of rank 7 %s: mean %.3f ms per frame\n",
               cs_history_nout(&hist, 7), mid ? "scrolled to the middle" : "at the end",
               (cs_now() - t0) / frames * 1e3);
        cs_grid_free(&g);
    }
    cs_history_free(&hist);
    cs_monitor_destroy(&mon);
    cs_bus_destroy(&bus);
    return 0;
}

/* A front end that does what the TUI does each frame, minus the terminal. */
typedef struct headless {
    const cs_job *job;
    cs_bus *bus;
    cs_monitor *mon;
    cs_history hist;
    cs_gates *ctl;
    int frames;
    double render_s;
    uint64_t hist_msgs, mon_msgs;
} headless;

static int hl_attach(void *ud, const cs_job *job) {
    headless *h = ud;
    h->job = job;
    h->bus = job->bus;
    h->mon = job->mon;
    if (cs_history_init(&h->hist, job->world, 0) < 0) return -1;
    cs_bus_subscribe(h->bus, cs_history_sink(&h->hist));
    /* the gates the TUI installs, open at full speed */
    if (!(h->ctl = cs_gates_new(job->world, false, 0))) return -1;
    job->set_gates(job->ud, h->ctl);
    return 0;
}

static void hl_loop(void *ud) {
    headless *h = ud;
    cs_grid g;
    cs_grid_init(&g, 200, 60);
    for (;;) {
        /* a frame every 40 ms, and one as soon as the run ends */
        bool done = false;
        for (double next = cs_now() + 0.040; !done && cs_now() < next;) {
            struct timespec ms = {0, 1000 * 1000};
            nanosleep(&ms, NULL);
            done = h->job->finished(h->job->ud) || h->job->end_reason(h->job->ud);
        }
        double a = cs_now();
        cs_bus_lock(h->bus);
        cs_viz_view v = {.mon = h->mon, .hist = &h->hist, .script = "ring", .status = "running",
                         .now = cs_now() - h->bus->t0};
        cs_viz_render(&g, &v);
        h->hist_msgs = h->hist.messages;
        h->mon_msgs = h->mon->messages;
        cs_bus_unlock(h->bus);
        h->render_s += cs_now() - a;
        h->frames++;
        if (done) break;
    }
    cs_grid_free(&g);
}

static double run_ring(const char *script, const cs_frontend *fe) {
    FILE *null = fopen("/dev/null", "w");
    cs_run_opts o = {.script = script, .nranks = 64, .mem_limit = CS_DEFAULT_MEM_LIMIT,
                     .step_limit = 0, .out = null, .err = null, .ui = fe};
    double t0 = cs_now();
    int st = cs_launch_run(&o);
    double t = cs_now() - t0;
    fclose(null);
    if (st != 0) fprintf(stderr, "viz_bench: the ring ended with status %d\n", st);
    return t;
}

static int bench_live(const char *script) {
    double plain = run_ring(script, NULL);
    headless h = {0};
    cs_frontend fe = {hl_attach, hl_loop, &h};
    double viz = run_ring(script, &fe);
    printf("64-rank ring (%s), thread engine, full speed:\n", script);
    printf("  plain report:          %.3f s\n", plain);
    printf("  with gates and a 25 fps renderer: %.3f s, %d frames, mean %.3f ms a frame under the bus lock\n",
           viz, h.frames, h.frames ? h.render_s / h.frames * 1e3 : 0);
    printf("  messages: monitor %llu, history %llu (%llu diagram rows kept, %llu older rows "
           "counted, %llu events)\n",
           (unsigned long long)h.mon_msgs, (unsigned long long)h.hist_msgs,
           (unsigned long long)h.hist.n, (unsigned long long)h.hist.dropped_rows,
           (unsigned long long)h.hist.nevents);
    cs_history_free(&h.hist);
    cs_gates_free(h.ctl);
    return h.mon_msgs == h.hist_msgs ? 0 : 1;
}

int main(int argc, char **argv) {
    const char *what = argc > 1 ? argv[1] : "render";
    if (!strcmp(what, "render")) return bench_render();
    if (!strcmp(what, "live")) return bench_live(argc > 2 ? argv[2] : "bench/ring_rounds.lua");
    fprintf(stderr, "usage: viz_bench render | live [SCRIPT]\n");
    return 1;
}
