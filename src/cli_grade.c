/* cli_grade.c -- `commsim grade EXERCISE SOLUTION|DIR`: options only; the
 * work is in grade_*.c. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "engine.h"
#include "netmodel.h"
#include "grade.h"
#include "xalloc.h"

static void grade_usage(FILE *f) {
    fputs("usage: commsim grade EXERCISE SOLUTION.lua|DIR [options]\n"
          "\n"
          "Grade a solution of an exercise, or a class folder of solutions (one .lua\n"
          "per file, or one subfolder per student). EXERCISE is a folder holding\n"
          "spec.lua, or a NAME under lessons/*/exercises/. Every case runs on every\n"
          "world size, engine and send mode its spec lists, each run in a child\n"
          "process under CPU, memory and wall-time limits. See docs/grading.md.\n"
          "\n"
          "options:\n"
          "      --format F    text (default), json, tap, junit or gradescope\n"
          "                    (Gradescope's results.json); json gives each run's\n"
          "                    modelled time when a case has a network model\n"
          "      --out FILE    write the results there instead of standard output; with\n"
          "                    a class folder, FILE.csv gets the summary too\n"
          "      --csv FILE    the summary, a row per submission (student,score,max,failing)\n"
          "      --jobs N      grade N submissions at once (default: the CPU count)\n"
          "      --engine E    run every case on engine E instead of the spec's\n"
          "      --net MODEL   run every case under this network model (modelled time,\n"
          "                    docs/time-model.md) instead of each script's header's\n"
          "      --trace-dir DIR  keep the trace of each failing case there; the text\n"
          "                    output names the 'commsim replay' command that opens it\n"
          "      --hidden      show why hidden cases failed (an instructor's view)\n"
          "  -h, --help        show this help\n"
          "\n"
          "Exit status: 0 every case passed, 6 some case failed, 1 usage or setup error;\n"
          "killed by a signal (Ctrl-C: 130), it writes no results.\n"
          "\n"
          "example:\n"
          "  commsim grade ring my_ring.lua\n"
          "  commsim grade ring submissions/ --format gradescope --out results.json\n",
          f);
}

/* Can path be written? Asked before a class is graded, not found out
 * after: opened to append (nothing in it lost), and removed again if that
 * made it (a spec error while grading writes no results). */
static bool can_write(const char *path) {
    struct stat st;
    bool existed = stat(path, &st) == 0;
    FILE *f = fopen(path, "a");
    if (!f) return false;
    fclose(f);
    if (!existed) unlink(path);
    return true;
}

int cs_cli_grade(int argc, char **argv) {
    enum { OPT_FORMAT = 256, OPT_OUT, OPT_JOBS, OPT_TRACE_DIR, OPT_HIDDEN, OPT_ENGINE, OPT_CSV,
           OPT_NET };
    static const struct option longs[] = {
        {"format", required_argument, NULL, OPT_FORMAT}, {"out", required_argument, NULL, OPT_OUT},
        {"jobs", required_argument, NULL, OPT_JOBS},     {"trace-dir", required_argument, NULL, OPT_TRACE_DIR},
        {"hidden", no_argument, NULL, OPT_HIDDEN},       {"engine", required_argument, NULL, OPT_ENGINE},
        {"csv", required_argument, NULL, OPT_CSV},       {"help", no_argument, NULL, 'h'},
        {"net", required_argument, NULL, OPT_NET},
        {NULL, 0, NULL, 0}};
    cs_grade_format fmt = CS_GF_TEXT;
    const char *out = NULL, *csv = NULL;
    cs_grade_opts go = {0};
    const char *net = NULL;
    bool show_hidden = false;
    long jobs = sysconf(_SC_NPROCESSORS_ONLN);
    optind = 1;
    opterr = 0; /* one line of our own (cs_cli_bad_option) */
    int c;
    while ((c = getopt_long(argc, argv, ":h", longs, NULL)) != -1) {
        char *end;
        switch (c) {
        case OPT_FORMAT:
            if (!cs_grade_format_parse(optarg, &fmt)) {
                fprintf(stderr, "commsim grade: --format: unknown format '%s'\n", optarg);
                return 1;
            }
            break;
        case OPT_OUT: out = optarg; break;
        case OPT_CSV: csv = optarg; break;
        case OPT_JOBS:
            jobs = strtol(optarg, &end, 10);
            if (*end || jobs < 1 || jobs > 256) {
                fprintf(stderr, "commsim grade: --jobs: expected 1 to 256, got '%s'\n", optarg);
                return 1;
            }
            break;
        case OPT_TRACE_DIR: go.trace_dir = optarg; break;
        case OPT_HIDDEN: show_hidden = true; break;
        case OPT_ENGINE: {
            /* an engine this build lacks: say so once, not as every case's
             * failure (one that cannot run here, nccl without a GPU per
             * rank, is cs_grade_spec_runnable's to say, at each case's world) */
            const cs_engine_kind *k = cs_engine_find(optarg);
            if (!k && !cs_engine_missing(optarg)) {
                fprintf(stderr, "commsim grade: --engine %s: unknown engine (commsim run --engine help "
                        "lists them)\n", optarg);
                return 1;
            }
            if (cs_engine_missing(optarg)) {
                fprintf(stderr, "commsim grade: --engine %s: %s\n", optarg, cs_engine_missing(optarg));
                return 1;
            }
            go.engine = optarg;
            break;
        }
        case OPT_NET: {
            cs_netmodel m;
            if (!cs_cli_net_option("grade", optarg, &m)) return 1;
            net = optarg;
            break;
        }
        case 'h': grade_usage(stdout); return 0;
        default: return cs_cli_bad_option("grade", c, argv);
        }
    }
    if (argc - optind != 2) {
        grade_usage(stderr);
        return 1;
    }
    if (jobs < 1) jobs = 1;
    char err[1024];
    cs_grade_spec spec;
    if (cs_grade_spec_load(&spec, argv[optind], err, sizeof err) < 0) {
        fprintf(stderr, "commsim grade: %s\n", err);
        cs_grade_spec_free(&spec);
        return 1;
    }
    spec.net = net;
    if (cs_grade_spec_runnable(&spec, go.engine, err, sizeof err) < 0) {
        fprintf(stderr, "commsim grade: %s\n", err);
        cs_grade_spec_free(&spec);
        return 1;
    }
    struct stat td;
    /* a file there: the text would name replay commands for traces never kept */
    if (go.trace_dir && ((mkdir(go.trace_dir, 0777) < 0 && access(go.trace_dir, W_OK) < 0) ||
                         stat(go.trace_dir, &td) < 0 || !S_ISDIR(td.st_mode))) {
        fprintf(stderr, "commsim grade: --trace-dir %s: cannot create it as a folder\n", go.trace_dir);
        cs_grade_spec_free(&spec);
        return 1;
    }
    const char *target = argv[optind + 1];
    struct stat st;
    if (stat(target, &st) < 0) {
        fprintf(stderr, "commsim grade: %s: no such file or folder\n", target);
        cs_grade_spec_free(&spec);
        return 1;
    }
    char csvbuf[4200];
    if (S_ISDIR(st.st_mode) && !csv && out) snprintf(csvbuf, sizeof csvbuf, "%s.csv", out), csv = csvbuf;
    const char *unwritable = out && !can_write(out) ? out : csv && !can_write(csv) ? csv : NULL;
    if (unwritable) {
        fprintf(stderr, "commsim grade: %s %s: cannot write it\n", unwritable == out ? "--out" : "--csv", unwritable);
        cs_grade_spec_free(&spec);
        return 1;
    }
    if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
        /* a FIFO would block the read for ever, a device never end it */
        fprintf(stderr, "commsim grade: %s: not a regular file or a folder\n", target);
        cs_grade_spec_free(&spec);
        return 1;
    }
    cs_grade_sub *subs;
    int nsubs;
    bool cls = S_ISDIR(st.st_mode);
    if (cls) {
        if (cs_grade_list_class(target, &subs, &nsubs, err, sizeof err) < 0) {
            fprintf(stderr, "commsim grade: %s\n", err);
            cs_grade_spec_free(&spec);
            return 1;
        }
        cs_grade_class(&spec, &go, subs, nsubs, (int)jobs);
    } else {
        subs = cs_xcalloc(1, sizeof *subs, "grade");
        nsubs = 1;
        cs_grade_sub_single(&subs[0], target);
        cs_grade_submission(&spec, &go, &subs[0]);
    }
    /* The spec's own code failed: nobody's grade means anything. Said once,
     * with the spec's place and the submission that made it fail (to try it
     * on), and no results are written. */
    const cs_grade_result *spec_failed = NULL;
    const char *first = NULL;
    int nfailed = 0;
    for (int i = 0; i < nsubs; i++)
        for (int k = 0; k < subs[i].nresults; k++)
            if (subs[i].results[k].spec_error) {
                if (!spec_failed) spec_failed = &subs[i].results[k], first = subs[i].student;
                nfailed++;
                break;
            }
    if (spec_failed) {
        fprintf(stderr, "commsim grade: %s\n", spec_failed->message);
        if (nsubs > 1)
            fprintf(stderr, "commsim grade: the spec failed grading %s (%d of the %d submissions "
                            "made it fail); no results are written\n", first, nfailed, nsubs);
        for (int j = 0; j < nsubs; j++) cs_grade_sub_free(&subs[j]);
        free(subs);
        cs_grade_spec_free(&spec);
        return 1;
    }
    FILE *f = out ? fopen(out, "w") : stdout;
    if (!f) {
        fprintf(stderr, "commsim grade: --out %s: cannot write it\n", out);
        return 1;
    }
    cs_grade_write(f, fmt, &spec, subs, nsubs, show_hidden);
    /* results that did not all reach their file (a full disk) are a setup
     * error: a course's script must not take them for a grading */
    bool written = !ferror(f);
    written = (out ? fclose(f) : fflush(stdout)) == 0 && written;
    if (!written) fprintf(stderr, "commsim grade: %s: cannot write it\n", out ? out : "standard output");
    if (csv) { /* one solution's too: a row, as in a class's summary */
        FILE *cf = fopen(csv, "w");
        bool ok = cf != NULL;
        if (cf) {
            cs_grade_csv(cf, subs, nsubs);
            ok = !ferror(cf);
            ok = fclose(cf) == 0 && ok;
        }
        if (!ok) fprintf(stderr, "commsim grade: --csv %s: cannot write it\n", csv);
        written = written && ok;
    }
    int status = written ? 0 : 1;
    for (int i = 0; i < nsubs; i++) {
        if (written && subs[i].score < subs[i].max) status = CS_GRADE_FAILED;
        for (int k = 0; k < subs[i].nresults; k++)
            if (written && !subs[i].results[k].pass) status = CS_GRADE_FAILED;
        cs_grade_sub_free(&subs[i]);
    }
    free(subs);
    cs_grade_spec_free(&spec);
    return status;
}
