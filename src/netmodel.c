/* netmodel.c -- parsing and formatting --net models, and their costs.
 *
 * Figures are integers (nanoseconds, bytes per second, operations per
 * second) so that modelled times are exact: a closed form such as
 * 2 (alpha + n beta) comes out to the nanosecond on every machine. */
#include "netmodel.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Line rates are per direction; latencies are one-way small-message times of
 * the order the sources give. docs/time-model.md cites each. */
const cs_netmodel_preset cs_netmodel_presets[] = {
    {"nvlink", "alpha=1us,bandwidth=300GB/s",
     "NVLink 3 (A100): 12 links x 25 GB/s each way; about 1 us a hop"},
    {"pcie", "alpha=2us,bandwidth=31.5GB/s",
     "PCIe 4.0 x16: 16 GT/s x 16 lanes, 128b/130b; about 2 us"},
    {"infiniband", "alpha=5us,bandwidth=25GB/s",
     "InfiniBand HDR: 200 Gb/s; about 5 us with the software stack"},
    {"ethernet-10g", "alpha=25us,bandwidth=1.25GB/s",
     "10 Gigabit Ethernet: 10 Gb/s; about 25 us through kernel TCP"},
    {"ethernet-1g", "alpha=50us,bandwidth=125MB/s",
     "Gigabit Ethernet: 1 Gb/s; about 50 us through kernel TCP"},
};
const int cs_netmodel_npresets = (int)(sizeof cs_netmodel_presets / sizeof cs_netmodel_presets[0]);

typedef struct unit {
    const char *suffix;
    double scale;
} unit;

static const unit time_units[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}, {NULL, 0}};
static const unit rate_units[] = {{"B/s", 1},   {"KB/s", 1e3}, {"MB/s", 1e6},
                                  {"GB/s", 1e9}, {"TB/s", 1e12}, {NULL, 0}};
static const unit count_units[] = {{"", 1},     {"K", 1e3},  {"M", 1e6},  {"G", 1e9},
                                   {"T", 1e12}, {"P", 1e15}, {NULL, 0}};

/* What a key takes, in its base unit (ns, B/s, operations per second). The
 * minimums are what the model needs (a message takes some time in flight,
 * docs/time-model.md says why; a byte takes some time on the wire); the
 * maximums are far beyond any real machine (alpha: an hour,
 * the longest dist.compute) and keep every figure well inside 64 bits. */
typedef struct range {
    const char *key;
    const unit *units;
    double min, max;
    const char *text; /* min and max as the user writes them */
    const char *hint; /* after the range, or "" */
} range;

static const range alpha_range = {"alpha", time_units, 1, 3600e9, "1ns and at most 3600s", ""};
static const range bandwidth_range = {"bandwidth", rate_units, 1, 1e15,
                                      "1B/s and at most 1000TB/s", ""};
static const range flops_range = {"flops", count_units, 1, 1e18, "1 and at most 1000P",
                                  " (leave flops out for arithmetic that takes no time)"};

/* A decimal number followed by one of the key's units (exactly), within its
 * range: the value in the base unit, rounded to the nearest integer. */
static int number(const range *k, const char *v, size_t n, uint64_t *out, char *err,
                  size_t errlen) {
    char buf[64];
    if (n == 0 || n >= sizeof buf) goto bad;
    memcpy(buf, v, n);
    buf[n] = '\0';
    if (!((buf[0] >= '0' && buf[0] <= '9') || buf[0] == '.')) goto bad;
    errno = 0;
    char *end;
    double x = strtod(buf, &end);
    /* strtod also reads hexadecimal ("0x10"): decimal digits only */
    if (errno || end == buf || strspn(buf, "0123456789.eE+-") != (size_t)(end - buf)) goto bad;
    for (const unit *u = k->units; u->suffix; u++) {
        if (strcmp(end, u->suffix) != 0) continue;
        double y = x * u->scale;
        if (!(y >= k->min && y <= k->max)) {
            snprintf(err, errlen, "--net: %s=%.*s is out of range: %s must be at least %s%s",
                     k->key, (int)n, v, k->key, k->text, k->hint);
            return -1;
        }
        *out = (uint64_t)llround(y);
        return 0;
    }
bad:;
    char list[96] = "";
    for (const unit *u = k->units; u->suffix; u++)
        if (u->suffix[0]) snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
                                   list[0] ? ", " : "", u->suffix);
    snprintf(err, errlen, "--net: %s=%.*s: expected a decimal number%s%s", k->key, (int)n, v,
             k->units == count_units ? " (optionally with K, M, G, T or P)" : " with a unit: ",
             k->units == count_units ? "" : list);
    return -1;
}

static int parse_custom(const char *s, cs_netmodel *m, char *err, size_t errlen) {
    bool have_alpha = false, have_bw = false, have_flops = false;
    const char *p = s;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        if (!eq) {
            snprintf(err, errlen, "--net: '%.*s' is not key=value (the keys: alpha, bandwidth, "
                     "flops)", (int)len, p);
            return -1;
        }
        size_t klen = (size_t)(eq - p), vlen = len - klen - 1;
        const char *v = eq + 1;
        int rc;
        bool *seen;
        if (klen == 5 && !strncmp(p, "alpha", 5)) {
            seen = &have_alpha;
            rc = number(&alpha_range, v, vlen, &m->alpha_ns, err, errlen);
        } else if (klen == 9 && !strncmp(p, "bandwidth", 9)) {
            seen = &have_bw;
            rc = number(&bandwidth_range, v, vlen, &m->bandwidth, err, errlen);
        } else if (klen == 5 && !strncmp(p, "flops", 5)) {
            seen = &have_flops;
            rc = number(&flops_range, v, vlen, &m->flops, err, errlen);
        } else {
            snprintf(err, errlen, "--net: unknown key '%.*s' (the keys: alpha, bandwidth, flops)",
                     (int)klen, p);
            return -1;
        }
        if (rc < 0) return -1;
        if (*seen) {
            snprintf(err, errlen, "--net: %.*s given twice", (int)klen, p);
            return -1;
        }
        *seen = true;
        p = comma ? comma + 1 : p + len;
        if (comma && !*p) {
            snprintf(err, errlen, "--net: a trailing comma in '%s'", s);
            return -1;
        }
    }
    if (!have_alpha || !have_bw) {
        snprintf(err, errlen, "--net: '%s' needs both alpha=TIME and bandwidth=RATE "
                 "(e.g. alpha=5us,bandwidth=10GB/s)", s);
        return -1;
    }
    /* number() kept alpha >= 1ns: without latency two ranks could exchange
     * messages in no time, and the clocks could not be ordered without
     * waiting for every rank (docs/time-model.md). */
    return 0;
}

int cs_netmodel_parse(const char *s, cs_netmodel *m, char *err, size_t errlen) {
    cs_netmodel tmp = {0};
    if (!s || !*s) {
        snprintf(err, errlen, "--net: empty model (none, a preset, or alpha=..,bandwidth=..)");
        return -1;
    }
    if (!strcmp(s, "none")) {
        snprintf(tmp.name, sizeof tmp.name, "none");
        *m = tmp;
        return 0;
    }
    for (int i = 0; i < cs_netmodel_npresets; i++) {
        if (strcmp(s, cs_netmodel_presets[i].name) != 0) continue;
        if (parse_custom(cs_netmodel_presets[i].spec, &tmp, err, errlen) < 0) return -1;
        snprintf(tmp.name, sizeof tmp.name, "%s", cs_netmodel_presets[i].name);
        tmp.on = true;
        *m = tmp;
        return 0;
    }
    if (!strchr(s, '=')) {
        char names[160] = "";
        for (int i = 0; i < cs_netmodel_npresets; i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), ", %s",
                     cs_netmodel_presets[i].name);
        snprintf(err, errlen, "--net: unknown model '%s' (none%s, or alpha=TIME,bandwidth=RATE"
                 "[,flops=N])", s, names);
        return -1;
    }
    if (parse_custom(s, &tmp, err, errlen) < 0) return -1;
    snprintf(tmp.name, sizeof tmp.name, "custom");
    tmp.on = true;
    *m = tmp;
    return 0;
}

/* ns as the shortest exact decimal in the largest unit keeping it >= 1. */
const char *cs_vt_format(uint64_t ns, char *buf, size_t len) {
    static const struct { const char *u; uint64_t per; } units[] = {
        {"s", 1000000000ULL}, {"ms", 1000000ULL}, {"us", 1000ULL}, {"ns", 1ULL}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        uint64_t per = units[i].per;
        if (ns < per && per > 1) continue;
        uint64_t whole = ns / per, frac = ns % per;
        if (!frac) {
            snprintf(buf, len, "%llu %s", (unsigned long long)whole, units[i].u);
            return buf;
        }
        int digits = 0;
        for (uint64_t p = per; p > 1; p /= 10) digits++;
        while (frac % 10 == 0) frac /= 10, digits--;
        snprintf(buf, len, "%llu.%0*llu %s", (unsigned long long)whole, digits,
                 (unsigned long long)frac, units[i].u);
        return buf;
    }
    snprintf(buf, len, "0 ns");
    return buf;
}

/* A figure as the parser reads it back, in the largest unit that divides it. */
static void figure(char *buf, size_t len, uint64_t v, const unit *units) {
    const unit *best = units;
    for (const unit *u = units; u->suffix; u++) {
        uint64_t s = (uint64_t)u->scale;
        if (v >= s && v % s == 0) best = u;
    }
    snprintf(buf, len, "%llu%s", (unsigned long long)(v / (uint64_t)best->scale), best->suffix);
}

const char *cs_netmodel_format(const cs_netmodel *m, char *buf, size_t len) {
    if (!m->on) {
        snprintf(buf, len, "none");
        return buf;
    }
    if (strcmp(m->name, "custom") != 0 && m->name[0]) {
        snprintf(buf, len, "%s", m->name);
        return buf;
    }
    char a[32], b[32], f[32] = "";
    figure(a, sizeof a, m->alpha_ns, time_units);
    figure(b, sizeof b, m->bandwidth, rate_units);
    if (m->flops) figure(f, sizeof f, m->flops, count_units);
    snprintf(buf, len, "alpha=%s,bandwidth=%s%s%s", a, b, m->flops ? ",flops=" : "", f);
    return buf;
}

/* ceil(n * 1e9 / rate) without overflow for any size_t n. */
static uint64_t ceil_div_ns(uint64_t n, uint64_t rate) {
    if (!rate || !n) return 0;
    unsigned __int128 num = (unsigned __int128)n * 1000000000u;
    unsigned __int128 q = (num + rate - 1) / rate;
    return q > (unsigned __int128)INT64_MAX ? (uint64_t)INT64_MAX : (uint64_t)q;
}

uint64_t cs_netmodel_xfer_ns(const cs_netmodel *m, size_t bytes) {
    return ceil_div_ns(bytes, m->bandwidth);
}

uint64_t cs_netmodel_flops_ns(const cs_netmodel *m, uint64_t n) {
    return ceil_div_ns(n, m->flops);
}
