/* cli_export.c -- `commsim export TRACE --format F`: the options of the
 * command only; the drawing is export.c and its one file per format. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "export.h"

static void export_usage(FILE *f) {
    fputs("usage: commsim export TRACE --format svg|mermaid|perfetto|asciicast [--out FILE]\n"
          "       [--from N --to N] [--width COLS --height ROWS] [--theme light|dark]\n"
          "       [--speed OPS] [--net MODEL] [--time virtual|real]\n"
          "\n"
          "Draw a trace written by 'commsim run --trace TRACE' as a picture: the\n"
          "events go through the same monitor as 'commsim replay', so the verdict\n"
          "and the pitfalls drawn are the ones the report gives. A malformed trace\n"
          "is refused with FILE:LINE: reason and status 1, as replay refuses it.\n"
          "\n"
          "formats:\n",
          f);
    cs_export_print_formats(f);
    fputs("\n"
          "options:\n"
          "  -f, --format F   the picture's format (above)\n"
          "  -o, --out FILE   write it to FILE (default: standard output)\n"
          "      --from N     draw from the trace's N-th event (0: the first)...\n"
          "      --to N       ...up to, not including, its N-th (default: the end);\n"
          "                   the verdict is the one of the events up to N\n"
          "      --width N    asciicast: terminal columns (default 100); svg: the most\n"
          "                   diagram columns drawn before older ones are left out (120)\n"
          "      --height N   asciicast: terminal rows (default 30)\n"
          "      --theme T    svg: light (default) or dark\n"
          "      --speed S    asciicast: S operations per second, at most 1e6 (default:\n"
          "                   the events' own times)\n"
          "      --net MODEL  time a trace recorded with 'run --net' again under MODEL\n"
          "                   before drawing it (docs/time-model.md)\n"
          "      --time T     svg, perfetto, asciicast, for a trace with a network model:\n"
          "                   virtual (the default: modelled time, to scale) or real\n"
          "                   (the event order and recorded times, as without one)\n"
          "  -h, --help       show this help\n"
          "\n"
          "Run-time pictures: 'commsim run SCRIPT --export FORMAT:FILE' (repeatable)\n"
          "writes them after the run. docs/export.md says how to open each format.\n"
          "\n"
          "example:\n"
          "  commsim run lessons/02-point-to-point/deadlock.lua --trace t.jsonl\n"
          "  commsim export t.jsonl --format svg --out deadlock.svg\n",
          f);
}

static int number(const char *opt, const char *s, long long min, long long max, long long *out) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || errno || v < min || v > max) {
        fprintf(stderr, "commsim export: %s: '%s' is not a number from %lld to %lld\n", opt, s, min,
                max);
        return -1;
    }
    *out = v;
    return 0;
}

/* The options only some formats read, each a bit of "given" (the enum below,
 * in this order). An option the
 * format does not read is refused, not dropped: a user who asked for a dark
 * asciicast would otherwise get a light one and no word of it. */
static const struct {
    const char *opt, *formats;
} only[] = {
    {"--width", " svg asciicast "}, {"--height", " asciicast "}, {"--theme", " svg "},
    {"--speed", " asciicast "},     {"--time", " svg perfetto asciicast "},
};
enum { ONLY_WIDTH = 1, ONLY_HEIGHT = 2, ONLY_THEME = 4, ONLY_SPEED = 8, ONLY_TIME = 16 };

/* 0, or 1 said on stderr. */
static int options_apply(const char *format, unsigned given) {
    char f[40];
    snprintf(f, sizeof f, " %s ", format);
    for (size_t k = 0; k < sizeof only / sizeof only[0]; k++)
        if (given & (1u << k) && !strstr(only[k].formats, f)) {
            fprintf(stderr, "commsim export: %s: %s does not use it (only%.*s)\n", only[k].opt,
                    format, (int)strlen(only[k].formats) - 1, only[k].formats);
            return 1;
        }
    return 0;
}

int cs_cli_export(int argc, char **argv) {
    static const struct option longopts[] = {
        {"format", required_argument, NULL, 'f'}, {"out", required_argument, NULL, 'o'},
        {"from", required_argument, NULL, 'F'},   {"to", required_argument, NULL, 'T'},
        {"width", required_argument, NULL, 'W'},  {"height", required_argument, NULL, 'H'},
        {"theme", required_argument, NULL, 'm'},  {"speed", required_argument, NULL, 's'},
        {"net", required_argument, NULL, 'N'},    {"time", required_argument, NULL, 'V'},
        {"help", no_argument, NULL, 'h'},
        {0, 0, 0, 0},
    };
    cs_export_opts o = {.from = -1, .to = -1};
    unsigned given = 0;
    long long v;
    int c;
    optind = 1;
    opterr = 0; /* one line of our own (cs_cli_bad_option) */
    while ((c = getopt_long(argc, argv, ":f:o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'f': o.format = optarg; break;
        case 'o': o.out = optarg; break;
        case 'F': if (number("--from", optarg, 0, 1LL << 50, &o.from) < 0) return 1; break;
        case 'T': if (number("--to", optarg, 1, 1LL << 50, &o.to) < 0) return 1; break;
        case 'W':
            given |= ONLY_WIDTH;
            if (number("--width", optarg, 20, 1000, &v) < 0) return 1;
            o.width = (int)v;
            break;
        case 'H':
            given |= ONLY_HEIGHT;
            if (number("--height", optarg, 10, 1000, &v) < 0) return 1;
            o.height = (int)v;
            break;
        case 'm':
            given |= ONLY_THEME;
            if (strcmp(optarg, "dark") && strcmp(optarg, "light")) {
                fprintf(stderr, "commsim export: --theme: light or dark, not '%s'\n", optarg);
                return 1;
            }
            o.dark = strcmp(optarg, "dark") == 0;
            break;
        case 's': {
            given |= ONLY_SPEED;
            char *end;
            o.speed = strtod(optarg, &end);
            if (!*optarg || *end || !(o.speed > 0) || o.speed > 1e6) {
                fprintf(stderr, "commsim export: --speed: '%s' is not a number above 0, at most 1e6\n",
                        optarg);
                return 1;
            }
            break;
        }
        case 'N': o.net = optarg; break;
        case 'V':
            given |= ONLY_TIME;
            if (strcmp(optarg, "virtual") && strcmp(optarg, "real")) {
                fprintf(stderr, "commsim export: --time: virtual or real, not '%s'\n", optarg);
                return 1;
            }
            o.real_time = strcmp(optarg, "real") == 0;
            o.virtual_time = !o.real_time;
            break;
        case 'h': export_usage(stdout); return 0;
        default: return cs_cli_bad_option("export", c, argv);
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, optind == argc ? "commsim export: which trace? (commsim export TRACE)\n"
                                       : "commsim export: one trace at a time\n");
        export_usage(stderr);
        return 1;
    }
    if (o.from >= 0 && o.to >= 0 && o.from >= o.to) { /* nothing to draw */
        fprintf(stderr, "commsim export: --from %lld is not before --to %lld\n", o.from, o.to);
        return 1;
    }
    if (!o.format) {
        fprintf(stderr, "commsim export: which format? (--format svg|mermaid|perfetto|asciicast)\n");
        return 1;
    }
    if (cs_export_find(o.format) && options_apply(o.format, given)) return 1;
    return cs_export_file(argv[optind], &o);
}

/* FORMAT:FILE into fmt and *file, the format one we draw. 0, or 1 with the
 * reason on stderr. */
static int split_spec(const char *spec, char *fmt, size_t len, const char **file) {
    const char *colon = strchr(spec, ':');
    size_t n = colon ? (size_t)(colon - spec) : 0;
    if (!colon || !n || n >= len || !colon[1]) {
        fprintf(stderr, "commsim run: --export: FORMAT:FILE, not '%s'\n", spec);
        return 1;
    }
    memcpy(fmt, spec, n);
    fmt[n] = 0;
    if (!cs_export_find(fmt)) {
        fprintf(stderr, "commsim run: --export: unknown format '%s'; one of:\n", fmt);
        cs_export_print_formats(stderr);
        return 1;
    }
    *file = colon + 1;
    return 0;
}

int cs_cli_export_check(const char *spec) {
    char fmt[32];
    const char *file;
    return split_spec(spec, fmt, sizeof fmt, &file);
}

int cs_cli_export_spec(const char *spec, const char *trace) {
    char fmt[32];
    const char *file;
    if (split_spec(spec, fmt, sizeof fmt, &file)) return 1;
    cs_export_opts o = {.format = fmt, .out = file, .from = -1, .to = -1};
    return cs_export_file(trace, &o);
}
