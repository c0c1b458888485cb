/* cli_replay.c -- `commsim replay TRACE`: fold a recorded trace through the
 * monitor and print the report a live run prints, with its exit status. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "replay.h"
#include "report.h"
#include "tui.h"
#include "vclock.h"

static void replay_usage(FILE *f) {
    fputs("usage: commsim replay TRACE [--no-tui] [--end | --at N | --at RANK:LINE]\n"
          "                      [--report text|json] [--net MODEL]\n"
          "\n"
          "Replay a trace written by 'commsim run --trace TRACE': every event goes\n"
          "through the same monitor as in the live run, so the ranks' output, the\n"
          "warnings, the deadlock explanation and the verdict are the same, and the\n"
          "exit status is the recorded run's (0 ok, 2 error, 3 deadlock, 4 timeout\n"
          "or budget, 5 a rank process died, 130 interrupted).\n"
          "\n"
          "A trace cut off in the middle of a line (the run crashed) is replayed up\n"
          "to its last whole event, the report says so, and the status is 1 whatever\n"
          "the events before the cut say. A trace that ends before every rank\n"
          "finished exits with the status its events imply, or 1 when they imply\n"
          "none. A malformed trace is refused with FILE:LINE: reason and status 1.\n"
          "\n"
          "options:\n"
          "      --no-tui   print the plain report (the default without a terminal); on\n"
          "                 a terminal the replay opens in the visualizer: space steps\n"
          "                 forward, b back, ] [ one event, G g end and start, r plays\n"
          "      --end      open the visualizer at the end of the trace, where a failing\n"
          "                 run failed (commsim grade --trace-dir names such replays)\n"
          "      --at N     open the visualizer after event N (counted from 1, as its\n"
          "                 header's 'event N/M' counts)\n"
          "      --at RANK:LINE  open it at RANK's first event on LINE of the script:\n"
          "                 where commsim grade saw a case fail (a forbidden call, a\n"
          "                 pitfall's warning)\n"
          "      --report FORMAT  text (default): the report above; json: the outcome as\n"
          "                 one JSON document on standard output, the same as the live\n"
          "                 run's 'commsim run --report json' (docs/report-format.md)\n"
          "      --net MODEL  time the recorded program under another network model\n"
          "                 (docs/time-model.md); by default the one it was recorded\n"
          "                 with, whose virtual times the replay computes again. The\n"
          "                 trace must have been recorded with a model (run --net)\n"
          "  -h, --help     show this help\n"
          "\n"
          "example:\n"
          "  commsim run lessons/02-point-to-point/deadlock.lua --trace t.jsonl\n"
          "  commsim replay t.jsonl --no-tui\n",
          f);
}

static int replay_file(const char *path, cs_report_format format, const char *net) {
    char err[600];
    cs_replay rp;
    if (cs_replay_open(&rp, path, err, sizeof err) < 0) {
        fprintf(stderr, "commsim replay: %s\n", err);
        return 1;
    }
    cs_vclock *vc;
    char why[300]; /* err keeps where a cut-off trace was cut */
    if (cs_replay_timekeeper(&rp, net, &vc, why, sizeof why) < 0) {
        fprintf(stderr, "commsim replay: %s\n", why);
        cs_replay_free(&rp);
        return 1;
    }
    cs_report rep = {.out = stdout, .err = stderr, .world = rp.world};
    cs_output output = {0};
    /* json: the ranks' output goes into the outcome, as in the live run */
    cs_sink sinks[2] = {format == CS_REPORT_JSON ? cs_output_sink(&output) : cs_report_sink(&rep)};
    if (vc) sinks[1] = cs_vclock_sink(vc); /* computes the virtual times again */
    cs_monitor m;
    if (cs_replay_feed(&rp, rp.n, &m, sinks, vc ? 2 : 1) < 0) {
        fprintf(stderr, "commsim replay: out of memory\n");
        cs_vclock_free(vc);
        cs_replay_free(&rp);
        return 1;
    }
    fflush(stdout);
    if (rp.cut) fprintf(stderr, "commsim replay: %s: replayed the %zu events before it\n", err, rp.n);
    int status = cs_replay_status(&rp, rp.n, &m, why, sizeof why);
    if (why[0]) fprintf(stderr, "commsim replay: %s\n", why);
    cs_outcome o;
    cs_outcome_build(&o, &m, status, &output);
    if (vc) cs_outcome_time_from(&o, vc);
    if (format == CS_REPORT_JSON) {
        char *json = cs_outcome_json(&o);
        fputs(json, stdout);
        free(json);
    } else {
        cs_report_outcome(&rep, &o);
    }
    cs_outcome_free(&o);
    cs_output_free(&output);
    cs_monitor_destroy(&m);
    cs_vclock_free(vc);
    cs_replay_free(&rp);
    return status;
}

int cs_cli_replay(int argc, char **argv) {
    static const struct option longopts[] = {
        {"no-tui", no_argument, NULL, 'T'},
        {"end", no_argument, NULL, 'E'},
        {"at", required_argument, NULL, 'A'},
        {"report", required_argument, NULL, 'R'},
        {"net", required_argument, NULL, 'N'},
        {"help", no_argument, NULL, 'h'},
        {0, 0, 0, 0},
    };
    const char *net = NULL;
    bool tui = true;
    cs_replay_at at = {0};
    const char *where = NULL; /* the place asked for: --end or --at, not both */
    cs_report_format format = CS_REPORT_TEXT;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case 'T': tui = false; break;
        case 'E':
        case 'A':
            if (where && strcmp(where, c == 'E' ? "--end" : "--at")) {
                fprintf(stderr, "commsim replay: --end and --at each say where to open: give one\n");
                return 1;
            }
            where = c == 'E' ? "--end" : "--at";
            if (c == 'E') at = (cs_replay_at){.event = -1};
            else if (!cs_replay_at_parse(optarg, &at)) {
                fprintf(stderr, "commsim replay: --at: '%s' is neither an event number N (from 1) "
                        "nor RANK:LINE\n", optarg);
                return 1;
            }
            break;
        case 'R':
            if (!cs_report_format_parse(optarg, &format)) {
                fprintf(stderr, "commsim replay: --report: unknown format '%s' (text or json)\n",
                        optarg);
                return 1;
            }
            tui = false; /* a report is asked for: no visualizer */
            break;
        case 'N': net = optarg; break;
        case 'h': replay_usage(stdout); return 0;
        default: return cs_cli_bad_option("replay", c, argv);
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, optind == argc ? "commsim replay: which trace? (commsim replay TRACE)\n"
                                       : "commsim replay: one trace at a time\n");
        replay_usage(stderr);
        return 1;
    }
    if (tui && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO)) return cs_tui_replay(argv[optind], &at);
    return replay_file(argv[optind], format, net);
}
