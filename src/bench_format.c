/* bench_format.c -- commsim bench's output: an aligned table with a header
 * saying how the runs were made, CSV (one header line, then rows), or one
 * JSON document. Rows are printed as their runs end, so a long sweep shows
 * progress; JSON keeps that by writing its array element by element. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

static void load(double l[3]) {
    if (getloadavg(l, 3) != 3) l[0] = l[1] = l[2] = -1;
}

static void stamp(char *buf, size_t len) {
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* JSON strings here are names from tables and the command line: escape the
 * two characters that could break the document, drop control characters. */
static void jstr(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', f);
        if ((unsigned char)*s >= 0x20) fputc(*s, f);
    }
    fputc('"', f);
}

static void jlist(FILE *f, const char *const *v, int n) {
    fputc('[', f);
    for (int i = 0; i < n; i++) {
        if (i) fputs(", ", f);
        jstr(f, v[i]);
    }
    fputc(']', f);
}

void cs_bench_begin(const cs_bench_opts *o) {
    FILE *f = o->out;
    double l[3];
    char when[32];
    load(l);
    stamp(when, sizeof when);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    switch (o->format) {
    case CS_BENCH_TABLE:
        fprintf(f, "# commsim bench, %s: %ld cores, load average %.2f %.2f %.2f\n", when, cores,
                l[0], l[1], l[2]);
        fputs("# each run is 'commsim run' of a generated script, headless: visualizer off, trace "
              "off,\n# eager recheck off, step limit off; the monitor checks every run as usual\n",
              f);
        fprintf(f, "# memory cap %zu MiB per rank (--mem-limit)\n", o->mem_limit >> 20);
        if (o->iters > 0) fprintf(f, "# %ld iterations per size (warm-up: a tenth)\n", o->iters);
        else fprintf(f, "# iterations chosen by time: %.3g s per size, after doubling warm-up "
                        "rounds\n", o->seconds);
        fputs("# time: per iteration, slowest rank (pingpong: half round trip; bw, bibw: per "
              "message)\n# GB/s = 1e9 bytes/s; busbw = algbw x nccl-tests' factor; rss: the run's "
              "peak\n# algo default:NAME: what the default picked at that size and rank count\n",
              f);
        fprintf(f, "%-7s %-10s %-14s %-26s %5s %10s %8s %6s %12s %10s %10s %8s\n", "engine",
                "mode", "op", "algo", "ranks", "bytes", "iters", "warmup", "time_us",
                "algbw_GB/s", "busbw_GB/s", "rss_MiB");
        break;
    case CS_BENCH_CSV:
        fputs("engine,mode,op,algo,ranks,bytes,iters,warmup,time_us,algbw_gbps,busbw_gbps,"
              "rss_mib\n", f);
        break;
    case CS_BENCH_JSON: {
        const char *opn[CS_BENCH_MAX_LIST];
        for (int i = 0; i < o->nops; i++) opn[i] = o->ops[i]->name;
        fprintf(f, "{\"header\": {\"tool\": \"commsim bench\", \"date\": \"%s\", \"cores\": %ld, "
                   "\"loadavg\": [%.2f, %.2f, %.2f],\n",
                when, cores, l[0], l[1], l[2]);
        fputs("  \"visualizer\": false, \"trace\": false, \"recheck\": false, \"monitor\": true,\n"
              "  \"engines\": ",
              f);
        jlist(f, o->engines, o->nengines);
        fputs(", \"send_modes\": ", f);
        jlist(f, o->modes, o->nmodes);
        fputs(", \"ops\": ", f);
        jlist(f, opn, o->nops);
        fputs(", \"algos\": ", f);
        jlist(f, o->algos, o->nalgos);
        fprintf(f, ",\n  \"ranks\": %d, \"iters\": %ld, \"seconds_per_size\": %.6g, "
                   "\"mem_limit_mib\": %zu},\n \"rows\": [",
                o->nranks, o->iters, o->iters > 0 ? 0.0 : o->seconds, o->mem_limit >> 20);
        break;
    }
    }
}

void cs_bench_row_print(const cs_bench_opts *o, const cs_bench_row *r, bool first) {
    FILE *f = o->out;
    double us = r->time_s * 1e6;
    switch (o->format) {
    case CS_BENCH_TABLE:
        fprintf(f, "%-7s %-10s %-14s %-26s %5d %10zu %8ld %6ld %12.2f %10.4g %10.4g %8.1f\n",
                r->engine, r->mode, r->op, r->algo, r->ranks, r->bytes, r->iters, r->warmup, us,
                r->algbw, r->busbw, r->rss_mib);
        break;
    case CS_BENCH_CSV:
        fprintf(f, "%s,%s,%s,%s,%d,%zu,%ld,%ld,%.4f,%.6g,%.6g,%.1f\n", r->engine, r->mode, r->op,
                r->algo, r->ranks, r->bytes, r->iters, r->warmup, us, r->algbw, r->busbw,
                r->rss_mib);
        break;
    case CS_BENCH_JSON:
        fputs(first ? "\n  {" : ",\n  {", f);
        fputs("\"engine\": ", f), jstr(f, r->engine);
        fputs(", \"mode\": ", f), jstr(f, r->mode);
        fputs(", \"op\": ", f), jstr(f, r->op);
        fputs(", \"algo\": ", f), jstr(f, r->algo);
        fprintf(f, ", \"ranks\": %d, \"bytes\": %zu, \"iters\": %ld, \"warmup\": %ld, "
                   "\"time_us\": %.4f, \"algbw_gbps\": %.6g, \"busbw_gbps\": %.6g, "
                   "\"rss_mib\": %.1f}",
                r->ranks, r->bytes, r->iters, r->warmup, isfinite(us) ? us : 0,
                isfinite(r->algbw) ? r->algbw : 0, isfinite(r->busbw) ? r->busbw : 0, r->rss_mib);
        break;
    }
}

void cs_bench_end(const cs_bench_opts *o, int failed) {
    FILE *f = o->out;
    double l[3];
    load(l);
    switch (o->format) {
    case CS_BENCH_TABLE:
        fprintf(f, "# load average at the end %.2f %.2f %.2f%s\n", l[0], l[1], l[2],
                failed ? "; some runs failed (see stderr)" : "");
        break;
    case CS_BENCH_CSV: break;
    case CS_BENCH_JSON:
        fprintf(f, "\n ],\n \"failed\": %d, \"loadavg_end\": [%.2f, %.2f, %.2f]}\n", failed, l[0],
                l[1], l[2]);
        break;
    }
    fflush(f);
}
