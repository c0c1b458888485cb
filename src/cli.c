/* cli.c -- `commsim run`: options (getopt_long), defaults, help. */
#include <errno.h>
#include <stdbool.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "collectives.h"
#include "engine.h"
#include "launch.h"
#include "netmodel.h"
#include "lessons.h"
#include "tui.h"
#include "script.h"

static void run_usage(FILE *f) {
    char algos[1024];
    cs_coll_algos_help(algos, sizeof algos);
    fprintf(f,
            "usage: commsim run SCRIPT [options]\n"
            "\n"
            "Run a lesson script (Lua 5.4) on N ranks. Each rank's printed output is\n"
            "tagged with its rank; at the end a summary gives the messages, the bytes and\n"
            "the verdict (ok, error, deadlock, timeout).\n"
            "\n"
            "options:\n"
            "  -n, --ranks N          number of ranks (default: the script's '--- world:'\n"
            "                         header, else 2; at most 4096)\n"
            "      --engine NAME      thread (default): every rank a thread of this process;\n"
            "                         tcp: every rank a process, messages over TCP sockets;\n"
            "                         nccl (built with CUDA and NCCL): a GPU per rank;\n"
            "                         nccl-mp: the same, every rank a process (--engine\n"
            "                         nccl with --master or --rank is nccl-mp);\n"
            "                         --engine help lists the engines and what they can do\n"
            "      --send-mode MODE   rendezvous (default; a send completes once its receive\n"
            "                         is posted), eager (sends complete once buffered), or\n"
            "                         eager:N (eager up to N bytes, rendezvous above; N may\n"
            "                         end in K or M). Default: the script's header.\n"
            "      --net MODEL        modelled time (docs/time-model.md): none (default: real\n"
            "                         time), nvlink, pcie, infiniband, ethernet-10g,\n"
            "                         ethernet-1g, or alpha=5us,bandwidth=10GB/s[,flops=1G];\n"
            "                         dist.time() then gives each rank's virtual clock and\n"
            "                         the summary the makespan. Default: the script's header.\n"
            "      --tui              show the run in the visualizer (the default when standard\n"
            "                         input and output are a terminal)\n"
            "      --no-tui           print the plain report (the default without a terminal)\n"
            "      --step             start the visualizer paused: space steps every rank,\n"
            "                         s the selected one, r runs\n"
            "      --speed OPS        operations per second in the visualizer (default 10;\n"
            "                         0 = full speed; at most 1e9); + and - change it\n"
            "                         while running\n"
            "      --trace FILE       write every event as JSON Lines to FILE\n"
            "      --export FMT:FILE  after the run, draw its trace as FMT (svg, mermaid,\n"
            "                         perfetto, asciicast) into FILE; repeatable\n"
            "      --report FORMAT    text (default): the ranks' output as it happens and a\n"
            "                         summary; json: the outcome as one JSON document on\n"
            "                         standard output (docs/report-format.md)\n"
            "      --timeout S        end the run after S seconds with status 4 (default 60;\n"
            "                         0 = none; at most 1e9; in the visualizer: none\n"
            "                         unless given)\n"
            "      --mem-limit MIB    memory cap per rank, Lua heap and tensors (default %zu;\n"
            "                         0 = none; at most 1048576)\n"
            "      --step-limit N     Lua instructions per rank (default %llu; 0 = none)\n"
            "      --seed N           seed of tensor.randn (default 0)\n"
            "      --strict           pitfalls (a buffer touched while an isend/irecv owns\n"
            "                         it, a request never waited on, a message never\n"
            "                         received, ...) are errors (status 2), not warnings;\n"
            "                         a program that works only because its sends were\n"
            "                         buffered (eager) is a deadlock (status 3)\n"
            "      --no-recheck       after an eager run that ends ok, do not run it again\n"
            "                         with rendezvous sends (default: rerun it headless on\n"
            "                         the thread engine; the summary says what it found)\n"
            "      --algo C=A[,C=A]   the algorithm of collective C for this run, e.g.\n"
            "                         --algo all_reduce=ring,broadcast=tree (a call's\n"
            "                         {algo = ...} still wins). The choices (--algo help\n"
            "                         prints them alone):\n"
            "%s"
            "  -h, --help             show this help\n"
            "\n"
            "tcp and nccl engines on several machines (torchrun's variables work too:\n"
            "MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE; LOCAL_RANK picks nccl's GPU):\n"
            "      --master HOST[:PORT]  the controller's address (default port 29500); rank 0's\n"
            "                         machine hosts it, with the report\n"
            "      --rank R           this machine's rank; 0 starts the controller and prints\n"
            "                         the job token the other ranks need\n"
            "      --world N          number of ranks in the job (same as -n)\n"
            "      --token HEX        the job token (or COMMSIM_TOKEN)\n"
            "      --bind ADDR        the address this rank listens on for its peers, on\n"
            "                         any free port (default: the one that reaches the\n"
            "                         master); with -n, every rank launched here\n"
            "  COMMSIM_HEARTBEAT=S    seconds a silent (stopped, frozen) rank or controller\n"
            "                         is waited for before it is given up (default 30; 0: never)\n"
            "\n"
            "In the visualizer: space steps, r runs or pauses, ? shows every key, q quits\n"
            "(status 130 if the run had not ended, else the run's status).\n"
            "\n"
            "examples:\n"
            "  commsim run lessons/02-point-to-point/chain.lua -n 4\n"
            "  commsim run lessons/02-point-to-point/ring.lua -n 4 --engine tcp\n"
            "  commsim run ring.lua --engine tcp --master lab1 --rank 0 --world 2   (on lab1)\n"
            "  COMMSIM_TOKEN=... commsim run ring.lua --engine tcp --master lab1 --rank 1 --world 2\n",
            CS_DEFAULT_MEM_LIMIT >> 20, (unsigned long long)CS_DEFAULT_STEP_LIMIT, algos);
}

static int parse_u64(const char *opt, const char *s, unsigned long long max, unsigned long long *out) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (!*s || *s == '-' || *end || errno || v > max) {
        fprintf(stderr, "commsim run: %s: '%s' is not a whole number up to %llu\n", opt, s, max);
        return -1;
    }
    *out = v;
    return 0;
}

/* A world size (-n, --world, WORLD_SIZE): 1 to 4096, said when not. */
static int parse_ranks(const char *opt, const char *s, unsigned long long *out) {
    if (parse_u64(opt, s, 4096, out) < 0) return -1;
    if (*out < 1) {
        fprintf(stderr, "commsim run: %s: need at least 1 rank\n", opt);
        return -1;
    }
    return 0;
}

/* The largest --timeout or --speed: some 31 years, or a billion operations a
 * second, is "no limit" already (0 says it plainly), and it keeps a deadline
 * of now + S exact to well under a millisecond. */
#define NUMBER_MAX 1e9
#define NUMBER_MAX_TEXT "1e9"

static int parse_number(const char *opt, const char *s, double *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || !(v >= 0) || v > NUMBER_MAX) {
        fprintf(stderr, "commsim run: %s: '%s' is not a number from 0 to " NUMBER_MAX_TEXT "\n", opt,
                s);
        return -1;
    }
    *out = v;
    return 0;
}

enum { OPT_ENGINE = 256, OPT_SEND_MODE, OPT_TUI, OPT_NO_TUI, OPT_TRACE, OPT_TIMEOUT,
       OPT_MEM, OPT_STEPS, OPT_SEED, OPT_STRICT, OPT_NO_RECHECK, OPT_ALGO, OPT_MASTER, OPT_RANK, OPT_WORLD,
       OPT_TOKEN, OPT_BIND, OPT_WORKER, OPT_STEP, OPT_SPEED, OPT_REPORT,
       OPT_EXPORT, OPT_NET };

/* torchrun's environment, for an engine whose ranks are processes: flags win over it. */
static int process_environment(cs_run_opts *o, bool have_world, char *master, size_t len) {
    unsigned long long v;
    const char *addr = getenv("MASTER_ADDR"), *port = getenv("MASTER_PORT");
    const char *rank = getenv("RANK"), *world = getenv("WORLD_SIZE");
    if (!o->master && addr && *addr) {
        snprintf(master, len, "%s%s%s", addr, port && *port ? ":" : "", port ? port : "");
        o->master = master;
    }
    if (o->rank < 0 && rank && *rank) {
        if (parse_u64("RANK", rank, 4095, &v) < 0) return -1;
        o->rank = (int)v;
    }
    if (!have_world && world && *world) {
        if (parse_ranks("WORLD_SIZE", world, &v) < 0) return -1;
        o->nranks = (int)v;
    }
    if (o->rank > 0 && !o->worker) o->by_hand = true;
    if (o->rank > 0) o->worker = true;
    if (o->worker && (o->rank < 0 || o->nranks < 1)) {
        fprintf(stderr, "commsim run: a rank process needs --rank and --world (or RANK and "
                        "WORLD_SIZE)\n");
        return -1;
    }
    return 0;
}

bool cs_cli_net_option(const char *cmd, const char *arg, cs_netmodel *m) {
    char msg[256];
    if (cs_netmodel_parse(arg, m, msg, sizeof msg) == 0) return true;
    fprintf(stderr, "commsim %s: %s\n", cmd, msg);
    return false;
}

int cs_cli_bad_option(const char *cmd, int c, char **argv) {
    /* getopt leaves optopt 0 for an unknown long option, the option's value
     * (a letter or a code above 255) for one missing its value or given one
     * it takes none of; a long option is then the last argument it read. */
    const char *last = optind > 0 ? argv[optind - 1] : "";
    bool lng = strncmp(last, "--", 2) == 0 &&
               (c == ':' || optopt == 0 || optopt > 255 || strchr(last, '='));
    char opt[80];
    if (lng) snprintf(opt, sizeof opt, "%.*s", (int)strcspn(last, "="), last);
    else snprintf(opt, sizeof opt, "-%c", optopt > 0 && optopt < 128 ? optopt : '?');
    if (c == ':') fprintf(stderr, "commsim %s: option '%s' needs a value", cmd, opt);
    else if (lng && optopt) fprintf(stderr, "commsim %s: option '%s' takes no value", cmd, opt);
    else fprintf(stderr, "commsim %s: unknown option '%s'", cmd, opt);
    fprintf(stderr, " (commsim %s --help lists them)\n", cmd);
    return 1;
}

static int run_tui(cs_run_opts *o, const cs_tui_opts *to) {
    char why[256];
    if (!cs_tui_usable(why, sizeof why)) {
        fprintf(stderr, "commsim run: --tui: %s\n", why);
        return 1;
    }
    cs_tui *t = cs_tui_new(to);
    if (!t) return 1;
    cs_frontend fe = cs_tui_frontend(t);
    o->ui = &fe;
    int status = cs_launch_run(o);
    o->ui = NULL; /* fe ends with this call: leave no pointer to it behind */
    cs_tui_free(t);
    return status;
}

int cs_cli_run(int argc, char **argv) {
    static const struct option longopts[] = {
        {"ranks", required_argument, NULL, 'n'},
        {"engine", required_argument, NULL, OPT_ENGINE},
        {"send-mode", required_argument, NULL, OPT_SEND_MODE},
        {"net", required_argument, NULL, OPT_NET},
        {"tui", no_argument, NULL, OPT_TUI},
        {"no-tui", no_argument, NULL, OPT_NO_TUI},
        {"step", no_argument, NULL, OPT_STEP},
        {"speed", required_argument, NULL, OPT_SPEED},
        {"trace", required_argument, NULL, OPT_TRACE},
        {"export", required_argument, NULL, OPT_EXPORT},
        {"report", required_argument, NULL, OPT_REPORT},
        {"timeout", required_argument, NULL, OPT_TIMEOUT},
        {"mem-limit", required_argument, NULL, OPT_MEM},
        {"step-limit", required_argument, NULL, OPT_STEPS},
        {"seed", required_argument, NULL, OPT_SEED},
        {"strict", no_argument, NULL, OPT_STRICT},
        {"no-recheck", no_argument, NULL, OPT_NO_RECHECK},
        {"algo", required_argument, NULL, OPT_ALGO},
        {"master", required_argument, NULL, OPT_MASTER},
        {"rank", required_argument, NULL, OPT_RANK},
        {"world", required_argument, NULL, OPT_WORLD},
        {"token", required_argument, NULL, OPT_TOKEN},
        {"bind", required_argument, NULL, OPT_BIND},
        {"worker", no_argument, NULL, OPT_WORKER},
        {"help", no_argument, NULL, 'h'},
        {0, 0, 0, 0},
    };
    cs_run_opts o = {.mem_limit = CS_DEFAULT_MEM_LIMIT, .step_limit = CS_DEFAULT_STEP_LIMIT,
                     .timeout = 60, .catch_signals = true, .rank = -1};
    char master[300];
    cs_tui_opts to = {.speed = 10, .print_after = true};
    bool timeout_given = false;
    int tui = -1; /* -1: decide by the terminal */
    const char *exports[8];
    int nexport = 0;
    unsigned long long v;
    int c;
    optind = 1;
    opterr = 0; /* one line of our own instead */
    /* '+' is not used: options may follow the script, as in "run chain.lua -n 4". */
    while ((c = getopt_long(argc, argv, ":n:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'n':
            if (parse_ranks("-n", optarg, &v) < 0) return 1;
            o.nranks = (int)v;
            break;
        case OPT_ENGINE:
            if (strcmp(optarg, "help") == 0) {
                cs_engine_print_table(stdout);
                return 0;
            }
            if (cs_engine_missing(optarg)) {
                fprintf(stderr, "commsim run: --engine %s: %s\n", optarg, cs_engine_missing(optarg));
                return 1;
            }
            if (!cs_engine_find(optarg)) {
                fprintf(stderr, "commsim run: --engine: unknown engine '%s'\n", optarg);
                cs_engine_print_table(stderr);
                return 1;
            }
            o.engine = optarg;
            break;
        case OPT_SEND_MODE: o.send_mode = optarg; break;
        case OPT_NET: {
            cs_netmodel m;
            if (!cs_cli_net_option("run", optarg, &m)) return 1;
            o.net = optarg;
            break;
        }
        case OPT_TUI: tui = 1; break;
        case OPT_NO_TUI: tui = 0; break;
        case OPT_STEP: to.paused = true; break;
        case OPT_SPEED:
            if (parse_number("--speed", optarg, &to.speed) < 0) return 1;
            break;
        case OPT_TRACE: o.trace = optarg; break;
        case OPT_EXPORT:
            if (nexport == 8) {
                fprintf(stderr, "commsim run: --export: at most 8\n");
                return 1;
            }
            if (cs_cli_export_check(optarg) != 0) return 1; /* before running, not after */
            exports[nexport++] = optarg;
            break;
        case OPT_REPORT:
            if (!cs_report_format_parse(optarg, &o.report)) {
                fprintf(stderr, "commsim run: --report: unknown format '%s' (text or json)\n", optarg);
                return 1;
            }
            break;
        case OPT_TIMEOUT:
            if (parse_number("--timeout", optarg, &o.timeout) < 0) return 1;
            timeout_given = true;
            break;
        case OPT_MEM:
            if (parse_u64("--mem-limit", optarg, 1ull << 20, &v) < 0) return 1;
            o.mem_limit = (size_t)v << 20;
            break;
        case OPT_STEPS:
            if (parse_u64("--step-limit", optarg, ~0ull, &v) < 0) return 1;
            o.step_limit = v;
            break;
        case OPT_SEED:
            if (parse_u64("--seed", optarg, ~0ull, &v) < 0) return 1;
            o.seed = v;
            break;
        case OPT_STRICT: o.strict = true; break;
        case OPT_NO_RECHECK: o.no_recheck = true; break;
        case OPT_ALGO: {
            char why[1024];
            if (strcmp(optarg, "help") == 0) { /* each family's algorithms and its default */
                cs_coll_algos_help(why, sizeof why);
                fputs(why, stdout);
                return 0;
            }
            if (!cs_coll_algos_parse(optarg, o.coll_algo, why, sizeof why)) {
                fprintf(stderr, "commsim run: --algo: %s\n", why);
                return 1;
            }
            break;
        }
        case OPT_MASTER: o.master = optarg; break;
        case OPT_RANK:
            if (parse_u64("--rank", optarg, 4095, &v) < 0) return 1;
            o.rank = (int)v;
            break;
        case OPT_WORLD:
            if (parse_ranks("--world", optarg, &v) < 0) return 1;
            o.nranks = (int)v;
            break;
        case OPT_TOKEN: o.token = optarg; break;
        case OPT_BIND: o.bind = optarg; break;
        case OPT_WORKER: o.worker = true; break;
        case 'h': run_usage(stdout); return 0;
        default: return cs_cli_bad_option("run", c, argv);
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, optind == argc ? "commsim run: which script? (commsim run SCRIPT)\n"
                                       : "commsim run: one script at a time\n");
        run_usage(stderr);
        return 1;
    }
    char lesson[4096];
    o.script = cs_lessons_script(argv[optind], lesson, sizeof lesson); /* "chain": a lesson */
    /* An engine whose ranks are threads unless the run spans processes
     * (nccl): a master or a rank, given or torchrun's, picks its twin. */
    const char *twin = cs_engine_find(o.engine)->as_processes;
    if (twin && (o.master || o.rank >= 0 || o.worker || (getenv("MASTER_ADDR") && getenv("RANK"))))
        o.engine = twin;
    bool processes = cs_engine_find(o.engine)->caps & CS_ENGINE_PROCESSES;
    /* Options of a job spread over processes mean nothing where every rank is
     * a thread of this one: whoever gave them meant --engine tcp. */
    const char *spread = o.master ? "--master" : o.rank >= 0 ? "--rank" : o.token ? "--token"
                       : o.bind   ? "--bind"   : NULL;
    if (!processes && spread) {
        fprintf(stderr, "commsim run: %s: the %s engine runs every rank in this process; "
                        "a job over several processes or machines needs --engine tcp\n",
                spread, cs_engine_find(o.engine)->name);
        return 1;
    }
    if (processes && process_environment(&o, o.nranks > 0, master, sizeof master) < 0) return 1;
    /* The visualizer is the default where a user is watching; a rank process
     * started by hand is not where the run is watched (rank 0's side is). There
     * the user ends the run: a default timeout would cut a paused lesson short. */
    if (o.worker && tui > 0) {
        fprintf(stderr, "commsim run: --tui: the visualizer runs on rank 0's side (the controller), "
                        "not in rank %d's process\n", o.rank);
        return 1;
    }
    /* A reader that stops reading (commsim run ... | head) must not kill the
     * run half way: its trace would end before the run did. The output
     * nobody reads is dropped; the run, its trace and its status go on. */
    signal(SIGPIPE, SIG_IGN);
    bool want = !o.worker && (tui > 0 || (tui < 0 && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO)));
    if (to.paused && !want && !o.worker) { /* stepping is done with the visualizer's keys */
        fprintf(stderr, tui == 0 ? "commsim run: --step steps the run in the visualizer, and --no-tui "
                                   "turns it off\n"
                                 : "commsim run: --step steps the run in the visualizer, which needs a "
                                   "terminal (or --tui)\n");
        return 1;
    }
    /* --export draws the run's trace afterwards: a temporary one when none is asked for */
    char tmp[] = "/tmp/commsim-export-XXXXXX";
    if (nexport && !o.trace && !o.worker) { /* a rank process draws nothing: rank 0's side does */
        int fd = mkstemp(tmp);
        if (fd < 0) {
            fprintf(stderr, "commsim run: --export: cannot create a temporary trace\n");
            return 1;
        }
        close(fd);
        o.trace = tmp;
    }
    int status;
    if (!want) {
        status = cs_launch_run(&o);
    } else {
        if (!timeout_given) o.timeout = 0;
        to.timeout = o.timeout;
        status = run_tui(&o, &to);
    }
    for (int i = 0; !o.worker && i < nexport; i++)
        if (cs_cli_export_spec(exports[i], o.trace) != 0 && status == 0) status = 1;
    if (o.trace == tmp) unlink(tmp);
    return status;
}
