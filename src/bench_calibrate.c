/* bench_calibrate.c -- 'commsim bench --calibrate': measure each engine's
 * latency and bandwidth on this machine and print them as a --net model.
 *
 * A calibration is an ordinary bench of the pingpong op (the half round trip
 * of each size, rendezvous sends, 2 ranks) run through cs_bench_run with its
 * CSV captured in memory, so it measures exactly what 'commsim bench --op
 * pingpong' measures; then a straight line time = alpha + bytes / bandwidth
 * is fitted to the points. The fit is least squares on the relative error
 * (each point weighted by 1/time^2): a plain fit would let the largest sizes
 * decide alone and could leave alpha negative, while the point of the model
 * is to be right within a factor across the sweep, small messages included.
 * It owns nothing but its own buffers.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "xalloc.h"

bool cs_bench_fit(const double *bytes, const double *secs, int n, cs_bench_fit_result *fit) {
    memset(fit, 0, sizeof *fit);
    /* Weighted normal equations of t = a + b x with weights 1/t^2. */
    double sw = 0, sx = 0, sxx = 0, st = 0, sxt = 0;
    int used = 0;
    for (int i = 0; i < n; i++) {
        if (!(secs[i] > 0) || !isfinite(secs[i]) || !(bytes[i] >= 0)) continue;
        double w = 1.0 / (secs[i] * secs[i]);
        sw += w, sx += w * bytes[i], sxx += w * bytes[i] * bytes[i];
        st += w * secs[i], sxt += w * bytes[i] * secs[i];
        used++;
    }
    double det = sw * sxx - sx * sx;
    if (used < 2 || !(det > 0)) return false; /* one size, or all the same size */
    double a = (st * sxx - sx * sxt) / det, b = (sw * sxt - sx * st) / det;
    if (a < 0) { /* the line through the origin that fits best instead */
        a = 0;
        b = sxt / sxx;
    }
    if (!(b > 0) || !isfinite(b)) return false; /* time does not grow with size */
    fit->alpha_s = a;
    fit->bandwidth = 1.0 / b;
    double sq = 0;
    for (int i = 0; i < n; i++) {
        if (!(secs[i] > 0) || !isfinite(secs[i]) || !(bytes[i] >= 0)) continue;
        double e = fabs(a + b * bytes[i] - secs[i]) / secs[i];
        sq += e * e;
        if (e > fit->max_err) fit->max_err = e;
    }
    fit->rms_err = sqrt(sq / used);
    fit->points = used;
    return true;
}

/* x with three significant digits in fixed notation (no exponent: the --net
 * parser reads plain decimals). */
static void sig3(char *buf, size_t len, double x) {
    char r[32];
    snprintf(r, sizeof r, "%.3g", x); /* rounded first: 0.99999 has 2 decimals, as 1.00 */
    x = strtod(r, NULL);
    int decimals = 0;
    if (x > 0 && x < 100) decimals = 2 - (int)floor(log10(x));
    if (decimals > 9) decimals = 9;
    snprintf(buf, len, "%.*f", decimals, x);
}

void cs_bench_net_string(const cs_bench_fit_result *fit, char *buf, size_t len) {
    static const struct { double scale; const char *unit; } rates[] = {
        {1e9, "GB/s"}, {1e6, "MB/s"}, {1e3, "KB/s"}, {1, "B/s"},
    };
    char a[32], bw[32];
    /* --net wants some latency (at least 1ns): a message always takes time */
    if (fit->alpha_s < 0.5e-9) snprintf(a, sizeof a, "0.001");
    else sig3(a, sizeof a, fit->alpha_s * 1e6);
    int k = 0;
    /* the unit the value rounds into: 999.9999 MB/s prints as 1.00GB/s */
    while (k < 3 && fit->bandwidth < rates[k].scale * 0.9995) k++;
    sig3(bw, sizeof bw, fit->bandwidth / rates[k].scale);
    snprintf(buf, len, "alpha=%sus,bandwidth=%s%s", a, bw, rates[k].unit);
}

typedef struct calib {
    const char *engine;
    double bytes[CS_BENCH_MAX_LIST], secs[CS_BENCH_MAX_LIST];
    int n;
    bool ok;
    cs_bench_fit_result fit;
    char net[96];
} calib;

/* The index of column name in a CSV header line, or -1. */
static int column(const char *header, const char *name) {
    size_t n = strlen(name);
    int i = 0;
    for (const char *p = header; p && *p && *p != '\n'; i++) {
        if (strncmp(p, name, n) == 0 && (p[n] == ',' || p[n] == '\n' || p[n] == '\0')) return i;
        p = strchr(p, ',');
        if (p) p++;
    }
    return -1;
}

/* Field k of a CSV line (no quoted commas in the bench's rows) as a number. */
static bool field(const char *line, int k, double *out) {
    for (int i = 0; i < k && line; i++) line = strchr(line, ',') ? strchr(line, ',') + 1 : NULL;
    if (!line) return false;
    char *end;
    *out = strtod(line, &end);
    return end != line;
}

/* Read the bench's CSV rows: each one's bytes and time_us, found by the
 * header's names. */
static void read_rows(const char *csv, calib *c) {
    int kb = column(csv, "bytes"), kt = column(csv, "time_us");
    const char *line = strchr(csv, '\n');
    if (kb < 0 || kt < 0) return;
    while (line && *++line && c->n < CS_BENCH_MAX_LIST) {
        double bytes, us;
        if (field(line, kb, &bytes) && field(line, kt, &us)) {
            c->bytes[c->n] = bytes;
            c->secs[c->n] = us * 1e-6;
            c->n++;
        }
        line = strchr(line, '\n');
    }
}

/* Run the pingpong sweep of one engine; false when the bench failed. */
static bool measure(const cs_bench_opts *o, calib *c) {
    static cs_bench_opts one; /* large: not on the stack */
    one = *o;
    one.engines[0] = c->engine, one.nengines = 1;
    one.modes[0] = "rendezvous", one.nmodes = 1;
    one.ops[0] = cs_bench_op_find("pingpong"), one.nops = 1;
    one.algos[0] = "default", one.nalgos = 1;
    one.format = CS_BENCH_CSV;
    char *csv = NULL;
    size_t len = 0;
    one.out = open_memstream(&csv, &len);
    if (!one.out) {
        fprintf(o->err, "commsim bench --calibrate: %s\n", strerror(errno));
        return false;
    }
    int rc = cs_bench_run(&one);
    fclose(one.out);
    if (rc == 0 && csv) read_rows(csv, c);
    free(csv);
    return rc == 0 && c->n > 0;
}

static void header(const cs_bench_opts *o) {
    char when[32];
    time_t t = time(NULL);
    struct tm tm;
    double l[3];
    gmtime_r(&t, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (getloadavg(l, 3) != 3) l[0] = l[1] = l[2] = -1;
    fprintf(o->out, "# commsim bench --calibrate, %s: %ld cores, load average %.2f %.2f %.2f\n",
            when, sysconf(_SC_NPROCESSORS_ONLN), l[0], l[1], l[2]);
    fprintf(o->out, "# pingpong half round trips (rendezvous, 2 ranks), %d sizes from %zu to %zu "
                    "bytes;\n# fitted: time = alpha + bytes / bandwidth, least squares on the "
                    "relative error\n",
            o->nsizes, o->sizes[0], o->sizes[o->nsizes - 1]);
    if (o->net && strcmp(o->net, "none") != 0)
        fprintf(o->out, "# the times are modelled (--net %s): the fit gives that model back\n",
                o->net);
}

static void print_table(const cs_bench_opts *o, const calib *c) {
    FILE *f = o->out;
    if (!c->ok) {
        fprintf(f, "# %s: no fit (see stderr)\n", c->engine);
        return;
    }
    fprintf(f, "# %s: %10s %12s %12s %7s\n", c->engine, "bytes", "measured_us", "model_us",
            "error");
    for (int i = 0; i < c->n; i++) {
        double model = c->fit.alpha_s + c->bytes[i] / c->fit.bandwidth;
        double err = 100 * (model - c->secs[i]) / c->secs[i];
        if (fabs(err) < 0.05) err = 0; /* no "-0.0%" */
        fprintf(f, "# %*s  %10.0f %12.2f %12.2f %+6.1f%%\n", (int)strlen(c->engine), "",
                c->bytes[i], c->secs[i] * 1e6, model * 1e6, err);
    }
    fprintf(f, "# %s: alpha %.3f us, bandwidth %.4g GB/s; error rms %.1f%%, max %.1f%%\n",
            c->engine, c->fit.alpha_s * 1e6, c->fit.bandwidth / 1e9, 100 * c->fit.rms_err,
            100 * c->fit.max_err);
}

static void print_rows(const cs_bench_opts *o, const calib *cs, int n) {
    FILE *f = o->out;
    switch (o->format) {
    case CS_BENCH_TABLE:
        header(o);
        for (int i = 0; i < n; i++) print_table(o, &cs[i]);
        for (int i = 0; i < n; i++)
            if (cs[i].ok) fprintf(f, "%s %s\n", cs[i].engine, cs[i].net);
        break;
    case CS_BENCH_CSV:
        fputs("engine,alpha_us,bandwidth_gbps,net,sizes,rms_err,max_err\n", f);
        for (int i = 0; i < n; i++)
            if (cs[i].ok)
                fprintf(f, "%s,%.6g,%.6g,\"%s\",%d,%.4f,%.4f\n", cs[i].engine, /* the model has a comma */
                        cs[i].fit.alpha_s * 1e6, cs[i].fit.bandwidth / 1e9, cs[i].net,
                        cs[i].fit.points, cs[i].fit.rms_err, cs[i].fit.max_err);
        break;
    case CS_BENCH_JSON: {
        int failed = 0;
        fputs("{\"tool\": \"commsim bench --calibrate\", \"op\": \"pingpong\", \"engines\": [", f);
        for (int i = 0, first = 1; i < n; i++) {
            if (!cs[i].ok) {
                failed++;
                continue;
            }
            fprintf(f, "%s\n  {\"engine\": \"%s\", \"alpha_us\": %.6g, \"bandwidth_gbps\": %.6g, "
                       "\"net\": \"%s\", \"rms_err\": %.4f, \"max_err\": %.4f, \"points\": [",
                    first ? "" : ",", cs[i].engine, cs[i].fit.alpha_s * 1e6,
                    cs[i].fit.bandwidth / 1e9, cs[i].net, cs[i].fit.rms_err, cs[i].fit.max_err);
            for (int k = 0; k < cs[i].n; k++)
                fprintf(f, "%s{\"bytes\": %.0f, \"time_us\": %.4f}", k ? ", " : "",
                        cs[i].bytes[k], cs[i].secs[k] * 1e6);
            fputs("]}", f);
            first = 0;
        }
        fprintf(f, "\n ], \"failed\": %d}\n", failed);
        break;
    }
    }
    fflush(f);
}

int cs_bench_calibrate(const cs_bench_opts *o) {
    calib *cs = cs_xcalloc((size_t)o->nengines, sizeof *cs, "the calibration");
    int failed = 0;
    for (int e = 0; e < o->nengines; e++) {
        calib *c = &cs[e];
        c->engine = o->engines[e];
        if (!measure(o, c)) {
            fprintf(o->err, "commsim bench --calibrate: the %s engine's pingpong failed\n",
                    c->engine);
        } else if (!cs_bench_fit(c->bytes, c->secs, c->n, &c->fit)) {
            fprintf(o->err, "commsim bench --calibrate: %s: no line fits (%d sizes; the time "
                            "must grow with the size: give at least two sizes far apart)\n",
                    c->engine, c->n);
        } else {
            c->ok = true;
            cs_bench_net_string(&c->fit, c->net, sizeof c->net);
        }
        if (!c->ok) failed++;
    }
    print_rows(o, cs, o->nengines);
    free(cs);
    return failed ? 1 : 0;
}
