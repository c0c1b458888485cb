/* cli_bench.c -- 'commsim bench': its options and --help. The measuring is
 * bench.c's; this file only turns the command line into a cs_bench_opts. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "bench.h"
#include "collectives.h"
#include "netmodel.h"
#include "cli.h"
#include "engine.h"

static void usage(FILE *f) {
    fputs("usage: commsim bench [options]\n"
          "\n"
          "Measure the engines through the launcher 'commsim run' uses: point-to-point\n"
          "latency and bandwidth over a size sweep, and every collective's time, algbw and\n"
          "busbw as nccl-tests computes them, with each run's peak RSS. Each run is a\n"
          "generated Lua script run headless: visualizer, trace and eager recheck off.\n"
          "Figures, not verdicts: the machine's load is printed beside them.\n"
          "\n"
          "options (lists are comma separated):\n"
          "  --engine LIST     engines to measure, or 'all' (default: all; --engine help)\n"
          "  --send-mode LIST  rendezvous, eager, eager:N (default: rendezvous)\n"
          "  --op LIST         pingpong, bw, bibw, broadcast, reduce, all_reduce,\n"
          "                    all_gather, reduce_scatter, all_to_all, gather, scatter,\n"
          "                    barrier; 'p2p', 'coll' or 'all' (default: all)\n"
          "  --algo LIST       collective algorithms, each run where its family has it;\n"
          "                    'default' is the run's own choice, by size (default:\n"
          "                    default); 'help' lists them and the defaults\n"
          "  --sizes SPEC      A:B doubling from A to B, or a list; K/M/G suffixes, at\n"
          "                    most 16G (default: 8:64M)\n"
          "  -n, --ranks N     ranks for collectives (default 4); point to point uses 2\n"
          "  --iters N         timed iterations per size (warm-up: a tenth)\n"
          "  --time S          else: seconds per size, iterations chosen to fill it\n"
          "                    (default 0.2)\n"
          "  --format F        table (default), csv or json\n"
          "  --mem-limit MIB   memory cap per rank, as run's (default 4096): a size\n"
          "                    whose buffers do not fit fails, after the smaller ones\n"
          "  --calibrate       measure each engine's latency and bandwidth (pingpong over\n"
          "                    --sizes, default 8:4M; engines default thread,tcp), fit\n"
          "                    time = alpha + bytes / bandwidth and print it per engine\n"
          "                    as a --net model: 'ENGINE alpha=...us,bandwidth=...GB/s'\n"
          "  --net MODEL       run under a network model (docs/time-model.md): the\n"
          "                    times are then modelled, the same on every machine\n"
          "                    (and 10 iterations per size unless --iters or --time)\n"
          "  -h, --help        this help\n"
          "\n"
          "time is per iteration on the slowest rank; pingpong's is the half round trip\n"
          "(osu_latency), bw's and bibw's the time per message of a 64-message window\n"
          "(osu_bw, osu_bibw). algbw = bytes / time; busbw = algbw x 2(n-1)/n for\n"
          "all_reduce, (n-1)/n for all_gather, reduce_scatter, all_to_all, gather and\n"
          "scatter, 1 otherwise. See docs/bench.md.\n",
          f);
}

/* Split a comma-separated LIST of opt into v, in place: false, said, when it
 * has no entry, an empty one, or more than v holds. */
static bool split(const char *opt, const char *what, char *s, const char **v, int *n) {
    *n = 0;
    if (cs_bench_list_gap(s)) {
        fprintf(stderr, "commsim bench: %s: '%s' has an empty entry\n", opt, s);
        return false;
    }
    char *orig = strdup(s);
    for (char *save = NULL, *t = strtok_r(s, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (*n == CS_BENCH_MAX_LIST) {
            fprintf(stderr, "commsim bench: %s: more than %d %ss\n", opt, CS_BENCH_MAX_LIST,
                    what);
            free(orig);
            return false;
        }
        v[(*n)++] = t;
    }
    if (*n == 0) fprintf(stderr, "commsim bench: %s: no %s in '%s'\n", opt, what, orig ? orig : "");
    free(orig);
    return *n > 0;
}

static int both_counts(void) {
    fprintf(stderr, "commsim bench: --iters and --time each say how long to measure: give one\n");
    return 1;
}

static int fail(const char *opt, const char *why, const char *what) {
    fprintf(stderr, "commsim bench: %s: %s '%s'\n", opt, why, what);
    return 1;
}

static bool add_op(cs_bench_opts *o, const cs_bench_op *op) {
    for (int i = 0; i < o->nops; i++)
        if (o->ops[i] == op) return true;
    if (o->nops == CS_BENCH_MAX_LIST) return false;
    o->ops[o->nops++] = op;
    return true;
}

static int parse_ops(cs_bench_opts *o, char *spec) {
    const char *v[CS_BENCH_MAX_LIST];
    int n;
    if (!split("--op", "op", spec, v, &n)) return 1;
    for (int i = 0; i < n; i++) {
        bool all = strcmp(v[i], "all") == 0, p2p = strcmp(v[i], "p2p") == 0,
             coll = strcmp(v[i], "coll") == 0;
        if (all || p2p || coll) {
            for (int k = 0; cs_bench_op_at(k); k++) {
                const cs_bench_op *op = cs_bench_op_at(k);
                if (all || op->p2p == p2p) add_op(o, op);
            }
            continue;
        }
        const cs_bench_op *op = cs_bench_op_find(v[i]);
        if (!op) return fail("--op", "unknown op", v[i]);
        add_op(o, op);
    }
    return 0;
}

static int parse_engines(cs_bench_opts *o, char *spec) {
    if (strcmp(spec, "help") == 0) {
        cs_engine_print_table(stdout);
        return -1;
    }
    if (strcmp(spec, "all") == 0) {
        o->nengines = 0;
        char why[512];
        /* every engine this machine can run (no nccl without a GPU) */
        for (int i = 0; cs_engine_at(i) && o->nengines < CS_BENCH_MAX_LIST; i++)
            if (!cs_engine_at(i)->check || cs_engine_at(i)->check(1, why, sizeof why) == 0)
                o->engines[o->nengines++] = cs_engine_at(i)->name;
        return 0;
    }
    if (!split("--engine", "engine", spec, o->engines, &o->nengines)) return 1;
    for (int i = 0; i < o->nengines; i++)
        if (!cs_engine_find(o->engines[i])) {
            fail("--engine", "unknown engine", o->engines[i]);
            cs_engine_print_table(stderr);
            return 1;
        }
    return 0;
}

/* --calibrate: pingpong only, on the host engines unless told, over a sweep
 * that reaches sizes where bandwidth dominates. */
static int calibrate_run(cs_bench_opts *o, bool engines_given) {
    char why[256];
    if (o->nops > 0 || o->nalgos > 1 || strcmp(o->algos[0], "default") != 0 || o->nmodes > 1 ||
        strcmp(o->modes[0], "rendezvous") != 0) {
        fprintf(stderr, "commsim bench: --calibrate measures pingpong with rendezvous sends: "
                        "--op, --algo and --send-mode do not apply\n");
        return 1;
    }
    if (!engines_given) {
        o->engines[0] = "thread", o->engines[1] = "tcp";
        o->nengines = 2;
    }
    if (o->nsizes == 0) cs_bench_sizes_parse("8:4M", o->sizes, &o->nsizes, why, sizeof why);
    return cs_bench_calibrate(o);
}

int cs_cli_bench(int argc, char **argv) {
    enum { OPT_ENGINE = 256, OPT_MODE, OPT_OP, OPT_ALGO, OPT_SIZES, OPT_ITERS, OPT_TIME,
           OPT_FORMAT, OPT_CALIBRATE, OPT_NET, OPT_MEM };
    static const struct option longopts[] = {
        {"engine", required_argument, NULL, OPT_ENGINE},
        {"send-mode", required_argument, NULL, OPT_MODE},
        {"op", required_argument, NULL, OPT_OP},
        {"algo", required_argument, NULL, OPT_ALGO},
        {"sizes", required_argument, NULL, OPT_SIZES},
        {"ranks", required_argument, NULL, 'n'},
        {"iters", required_argument, NULL, OPT_ITERS},
        {"time", required_argument, NULL, OPT_TIME},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"calibrate", no_argument, NULL, OPT_CALIBRATE},
        {"net", required_argument, NULL, OPT_NET},
        {"mem-limit", required_argument, NULL, OPT_MEM},
        {"help", no_argument, NULL, 'h'},
        {0, 0, 0, 0},
    };
    static cs_bench_opts o; /* holds argv's strings: lives as long as the command */
    bool net_on = false, time_given = false, iters_given = false;
    memset(&o, 0, sizeof o);
    o.nranks = 4, o.seconds = 0.2, o.out = stdout, o.err = stderr;
    o.mem_limit = (size_t)4096 << 20;
    o.modes[o.nmodes++] = "rendezvous";
    o.algos[o.nalgos++] = "default";
    bool engines_given = false, calibrate = false;
    char why[256], *end;
    int c, r;
    optind = 1;
    opterr = 0; /* one line of our own (cs_cli_bad_option) */
    while ((c = getopt_long(argc, argv, ":n:h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_ENGINE:
            if ((r = parse_engines(&o, optarg)) != 0) return r < 0 ? 0 : r;
            engines_given = true;
            break;
        case OPT_MODE: {
            if (!split("--send-mode", "mode", optarg, o.modes, &o.nmodes)) return 1;
            cs_send_mode m;
            for (int i = 0; i < o.nmodes; i++)
                if (!cs_send_mode_parse(o.modes[i], &m))
                    return fail("--send-mode", "not rendezvous, eager or eager:N:", o.modes[i]);
            break;
        }
        case OPT_OP:
            if ((r = parse_ops(&o, optarg)) != 0) return r;
            break;
        case OPT_ALGO:
            if (strcmp(optarg, "help") == 0) { /* as commsim run --algo help */
                char list[1024];
                cs_coll_algos_help(list, sizeof list);
                fputs(list, stdout);
                return 0;
            }
            if (!split("--algo", "algorithm", optarg, o.algos, &o.nalgos)) return 1;
            for (int i = 0; i < o.nalgos; i++)
                if (!cs_bench_algo_known(o.algos[i]))
                    return fprintf(stderr, "commsim bench: --algo: no collective has the algorithm "
                                   "'%s' (commsim bench --algo help lists them)\n", o.algos[i]), 1;
            break;
        case OPT_SIZES:
            if (!cs_bench_sizes_parse(optarg, o.sizes, &o.nsizes, why, sizeof why))
                return fprintf(stderr, "commsim bench: --sizes: %s\n", why), 1;
            break;
        case 'n':
            errno = 0;
            o.nranks = (int)strtol(optarg, &end, 10);
            if (errno || *end || o.nranks < 2 || o.nranks > 1024)
                return fail("-n", "want 2 to 1024 ranks, not", optarg);
            break;
        case OPT_ITERS:
            if (time_given) return both_counts();
            iters_given = true;
            errno = 0;
            o.iters = strtol(optarg, &end, 10);
            if (errno || *end || o.iters < 1 || o.iters > 100000000)
                return fail("--iters", "want a positive count, not", optarg);
            break;
        case OPT_TIME:
            if (iters_given) return both_counts();
            errno = 0;
            time_given = true;
            o.seconds = strtod(optarg, &end);
            if (errno || *end || !(o.seconds > 0) || o.seconds > 3600)
                return fail("--time", "want seconds (0 < S <= 3600), not", optarg);
            o.iters = 0;
            break;
        case OPT_FORMAT:
            if (strcmp(optarg, "table") == 0) o.format = CS_BENCH_TABLE;
            else if (strcmp(optarg, "csv") == 0) o.format = CS_BENCH_CSV;
            else if (strcmp(optarg, "json") == 0) o.format = CS_BENCH_JSON;
            else return fail("--format", "want table, csv or json, not", optarg);
            break;
        case OPT_MEM: {
            errno = 0;
            unsigned long long mib = strtoull(optarg, &end, 10);
            if (errno || *end || *optarg < '1' || *optarg > '9' || mib > 1ull << 20)
                return fail("--mem-limit", "want MiB (1 to 1048576), not", optarg);
            o.mem_limit = (size_t)mib << 20;
            break;
        }
        case OPT_CALIBRATE: calibrate = true; break;
        case OPT_NET: {
            cs_netmodel m;
            if (!cs_cli_net_option("bench", optarg, &m)) return 1;
            o.net = optarg;
            net_on = m.on;
            break;
        }
        case 'h': usage(stdout); return 0;
        default: return cs_cli_bad_option("bench", c, argv);
        }
    }
    if (optind != argc) {
        fprintf(stderr, "commsim bench: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return 1;
    }
    /* Modelled times are exact: a few iterations give them, and filling
     * seconds of virtual time would take far longer than that in real time. */
    if (net_on && !o.iters && !time_given) o.iters = 10;
    if (calibrate) return calibrate_run(&o, engines_given);
    if (!engines_given) {
        char all[] = "all";
        parse_engines(&o, all);
    }
    if (o.nops == 0) {
        char all[] = "all";
        parse_ops(&o, all);
    }
    if (o.nsizes == 0) cs_bench_sizes_parse("8:64M", o.sizes, &o.nsizes, why, sizeof why);
    return cs_bench_run(&o);
}
