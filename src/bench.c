/* bench.c -- commsim bench's plan and runs: the op table, nccl-tests' busbw
 * factors, the size list, and one child process per run (see bench.h).
 *
 * A run is forked rather than run in this process so that its peak RSS is
 * its own (wait4's ru_maxrss covers the run and the rank processes it
 * reaped) and a run that fails or leaks cannot spoil the next.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "collectives.h"
#include "engine.h"
#include "launch.h"
#include "xalloc.h"

static const cs_bench_op ops[] = {
    {"pingpong", true, true, -1},
    {"bw", true, true, -1},
    {"bibw", true, true, -1},
    {"broadcast", false, true, CS_FAM_BROADCAST},
    {"reduce", false, true, CS_FAM_REDUCE},
    {"all_reduce", false, true, CS_FAM_ALL_REDUCE},
    {"all_gather", false, true, CS_FAM_ALL_GATHER},
    {"reduce_scatter", false, true, CS_FAM_REDUCE_SCATTER},
    {"all_to_all", false, true, CS_FAM_ALL_TO_ALL},
    {"gather", false, true, CS_FAM_GATHER},
    {"scatter", false, true, CS_FAM_SCATTER},
    {"barrier", false, false, CS_FAM_BARRIER},
};
#define NOPS (int)(sizeof ops / sizeof ops[0])

const cs_bench_op *cs_bench_op_at(int i) { return i >= 0 && i < NOPS ? &ops[i] : NULL; }

const cs_bench_op *cs_bench_op_find(const char *name) {
    for (int i = 0; i < NOPS; i++)
        if (strcmp(ops[i].name, name) == 0) return &ops[i];
    return NULL;
}

/* nccl-tests' doc/PERFORMANCE.md: the share of the data each rank's link
 * carries, so that busbw compares with the hardware's bandwidth. */
double cs_bench_busbw_factor(const char *op, int n) {
    if (strcmp(op, "all_reduce") == 0) return 2.0 * (n - 1) / n;
    if (strcmp(op, "all_gather") == 0 || strcmp(op, "reduce_scatter") == 0 ||
        strcmp(op, "all_to_all") == 0 || strcmp(op, "gather") == 0 || strcmp(op, "scatter") == 0)
        return (double)(n - 1) / n;
    return 1.0; /* broadcast, reduce, point to point */
}

#define SIZE_MAX_BYTES (1ull << 34) /* 16G */

/* A size: true, or false with why in err (a size too large is one). */
static bool size_parse(const char *s, size_t *out, char *err, size_t errlen) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    int shift = 0;
    if (*s >= '0' && *s <= '9' && end != s) {
        if (*end == 'k' || *end == 'K') shift = 10, end++;
        else if (*end == 'm' || *end == 'M') shift = 20, end++;
        else if (*end == 'g' || *end == 'G') shift = 30, end++;
        if ((*end == 'b' || *end == 'B') && shift == 0) end++;
    }
    if (*s < '0' || *s > '9' || end == s || *end || (!errno && v == 0)) {
        snprintf(err, errlen, "'%s' is not a size (8, 4K, 64M)", s);
        return false;
    }
    if (errno || v > SIZE_MAX_BYTES >> shift) {
        snprintf(err, errlen, "'%s' is more than the largest size, 16G", s);
        return false;
    }
    *out = (size_t)(v << shift);
    return true;
}

bool cs_bench_list_gap(const char *list) {
    size_t len = strlen(list);
    return len && (list[0] == ',' || list[len - 1] == ',' || strstr(list, ",,"));
}

bool cs_bench_sizes_parse(const char *spec, size_t *sizes, int *n, char *err, size_t errlen) {
    char buf[256];
    if (cs_bench_list_gap(spec)) return snprintf(err, errlen, "'%s' has an empty entry", spec), false;
    if (strlen(spec) >= sizeof buf) return snprintf(err, errlen, "too long"), false;
    strcpy(buf, spec);
    *n = 0;
    char *colon = strchr(buf, ':');
    if (colon) {
        *colon = '\0';
        size_t a, b;
        char why[128];
        if (!strchr(colon + 1, ':') &&
            (!size_parse(buf, &a, why, sizeof why) || !size_parse(colon + 1, &b, why, sizeof why))) {
            snprintf(err, errlen, "'%s': %s", spec, why);
            return false;
        }
        if (strchr(colon + 1, ':') || a > b) {
            snprintf(err, errlen, "'%s': want A:B with 0 < A <= B (8:64M), K/M/G suffixes", spec);
            return false;
        }
        for (size_t s = a; s <= b && *n < CS_BENCH_MAX_LIST; s *= 2) sizes[(*n)++] = s;
        return true;
    }
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (*n == CS_BENCH_MAX_LIST) {
            snprintf(err, errlen, "more than %d sizes", CS_BENCH_MAX_LIST);
            return false;
        }
        if (!size_parse(tok, &sizes[*n], err, errlen)) return false;
        (*n)++;
    }
    if (*n == 0) return snprintf(err, errlen, "no sizes"), false;
    return true;
}

/* The algorithm name to pass for op (NULL: the default), or false when the
 * op's family has no such algorithm and the pair is skipped. */
static bool algo_for(const cs_bench_op *op, const char *algo, const char **pass) {
    *pass = NULL;
    if (strcmp(algo, "default") == 0) return true;
    cs_coll_algo a;
    char why[256];
    if (op->family < 0) return false;
    if (!cs_coll_algo_parse((cs_coll_family)op->family, algo, &a, why, sizeof why)) return false;
    *pass = algo;
    return true;
}

bool cs_bench_algo_known(const char *name) {
    cs_coll_algo a;
    char why[256];
    if (strcmp(name, "default") == 0) return true;
    for (int f = 0; f < CS_FAM_N; f++)
        if (cs_coll_algo_parse((cs_coll_family)f, name, &a, why, sizeof why)) return true;
    return false;
}

typedef struct run_spec {
    const char *engine, *mode, *algo_label, *algo;
    const cs_bench_op *op;
    int ranks;
} run_spec;

/* The algo column of a row: the name asked for, or for 'default' what the
 * default picked at that size ("default:recursive_doubling"): the table in
 * coll_choice.c, or the engine's own collectives where it has them. */
static void algo_label(const run_spec *rs, size_t bytes, char *buf, size_t len) {
    if (rs->algo || rs->op->family < 0) {
        snprintf(buf, len, "%s", rs->algo_label);
        return;
    }
    const cs_engine_kind *ek = cs_engine_find(rs->engine);
    cs_coll_algo a = ek && (ek->caps & CS_ENGINE_NATIVE_COLL)
                         ? CS_ALGO_NCCL
                         : cs_coll_pick((cs_coll_family)rs->op->family, bytes, rs->ranks);
    snprintf(buf, len, "default:%s", cs_coll_algo_name(a));
}

/* Keep the last lines of the run's stderr to say why it failed. */
static void tail_of(FILE *f, FILE *err) {
    char buf[2048];
    long end;
    if (fseek(f, 0, SEEK_END) != 0 || (end = ftell(f)) < 0) return;
    long from = end > (long)sizeof buf - 1 ? end - (long)sizeof buf + 1 : 0;
    fseek(f, from, SEEK_SET);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fprintf(err, "%s", buf);
    if (n && buf[n - 1] != '\n') fputc('\n', err);
}

static pid_t start_child(const cs_bench_opts *o, const run_spec *rs, const char *path, int outfd,
                         FILE *errf) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid != 0) return pid;
    dup2(outfd, STDOUT_FILENO);
    dup2(fileno(errf), STDERR_FILENO);
    close(outfd); /* stdout holds the pipe now: EOF comes when the run's processes end */
    double budget = o->iters > 0 ? 600 : 120 + 20.0 * o->nsizes * (o->seconds > 1 ? o->seconds : 1);
    cs_run_opts ro = {.script = path, .nranks = rs->ranks, .engine = rs->engine,
                      .send_mode = rs->mode, .net = o->net, .mem_limit = o->mem_limit,
                      .step_limit = 0,
                      .timeout = budget, .no_recheck = true, .rank = -1,
                      .out = stdout, .err = stderr};
    int status = cs_launch_run(&ro);
    fflush(NULL);
    _exit(status);
}

/* A size as --sizes takes it: 16G, 512K, 8. */
static void size_label(size_t bytes, char *buf, size_t len) {
    static const char unit[] = "GMK";
    for (int i = 0; i < 3; i++) {
        size_t one = (size_t)1 << (10 * (3 - i));
        if (bytes % one == 0) {
            snprintf(buf, len, "%zu%c", bytes / one, unit[i]);
            return;
        }
    }
    snprintf(buf, len, "%zu", bytes);
}

/* One run: fork, collect rank 0's "@bench" lines, wait; print its rows. */
static int run_one(const cs_bench_opts *o, const run_spec *rs, int *nrows) {
    char path[4096];
    const char *dir = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/commsim-bench-XXXXXX.lua", dir && *dir ? dir : "/tmp");
    int fd = mkstemps(path, 4);
    if (fd < 0) {
        fprintf(o->err, "commsim bench: temporary script %s: %s\n", path, strerror(errno));
        return -1;
    }
    char *src = cs_bench_script(rs->op, rs->algo, o->sizes, o->nsizes, o->iters, o->seconds);
    size_t len = strlen(src);
    bool ok = write(fd, src, len) == (ssize_t)len;
    free(src);
    close(fd);
    int p[2];
    FILE *errf = tmpfile();
    if (!ok || !errf || pipe(p) < 0) {
        fprintf(o->err, "commsim bench: cannot set up a run: %s\n", strerror(errno));
        if (errf) fclose(errf);
        unlink(path);
        return -1;
    }
    pid_t pid = start_child(o, rs, path, p[1], errf);
    close(p[1]);
    FILE *in = fdopen(p[0], "r");
    cs_bench_row rows[CS_BENCH_MAX_LIST];
    char labels[CS_BENCH_MAX_LIST][48];
    int n = 0;
    char line[512];
    while (in && fgets(line, sizeof line, in)) {
        unsigned long long bytes;
        long iters, warm;
        double sec;
        const char *at = strstr(line, "@bench "); /* after the "[rank 0] " prefix */
        if (at && n < CS_BENCH_MAX_LIST &&
            sscanf(at, "@bench %llu %ld %ld %lf", &bytes, &iters, &warm, &sec) == 4) {
            double moved = strcmp(rs->op->name, "bibw") == 0 ? 2.0 * bytes : (double)bytes;
            double algbw = sec > 0 ? moved / sec / 1e9 : 0;
            double factor = cs_bench_busbw_factor(rs->op->name, rs->ranks);
            algo_label(rs, (size_t)bytes, labels[n], sizeof labels[n]);
            rows[n] = (cs_bench_row){.engine = rs->engine, .mode = rs->mode, .op = rs->op->name,
                                       .algo = labels[n], .ranks = rs->ranks,
                                       .bytes = (size_t)bytes, .iters = iters, .warmup = warm,
                                       .time_s = sec, .algbw = algbw, .busbw = algbw * factor};
            n++;
        }
    }
    if (in) fclose(in);
    else close(p[0]);
    int st = 0;
    struct rusage ru = {0};
    if (pid < 0 || wait4(pid, &st, 0, &ru) < 0) st = -1;
    unlink(path);
    int status = st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : 128;
    /* The sizes measured before a failure are real measurements (a sweep
     * whose largest size does not fit the memory cap keeps the others). */
    for (int i = 0; i < n; i++) {
        rows[i].rss_mib = (double)ru.ru_maxrss / 1024.0; /* kilobytes on Linux */
        cs_bench_row_print(o, &rows[i], *nrows == 0);
        (*nrows)++;
    }
    fflush(o->out);
    bool failed = status != 0 || n == 0;
    if (failed) {
        char at[96] = "";
        if (n < o->nsizes) {
            char size[32];
            size_label(o->sizes[n], size, sizeof size);
            snprintf(at, sizeof at, " at size %s%s", size, n ? " (the sizes before it are kept)" : "");
        }
        fprintf(o->err, "commsim bench: %s on %s (%s, %s, %d ranks) failed%s with status %d:\n",
                rs->op->name, rs->engine, rs->mode, rs->algo_label, rs->ranks, at, status);
        tail_of(errf, o->err);
    }
    fclose(errf);
    return failed ? -1 : 0;
}

/* The plan, or (dry) only its count of runs. */
static int plan(const cs_bench_opts *o, bool dry, int *failed) {
    int nruns = 0, nrows = 0;
    for (int e = 0; e < o->nengines; e++)
        for (int m = 0; m < o->nmodes; m++)
            for (int k = 0; k < o->nops; k++) {
                const cs_bench_op *op = o->ops[k];
                for (int a = 0; a < o->nalgos; a++) {
                    run_spec rs = {.engine = o->engines[e], .mode = o->modes[m], .op = op,
                                   .algo_label = o->algos[a], .ranks = op->p2p ? 2 : o->nranks};
                    if (op->p2p) { /* no algorithms: once */
                        if (a > 0) break;
                        rs.algo_label = "-";
                    } else if (!algo_for(op, o->algos[a], &rs.algo)) {
                        continue; /* not one of this family's algorithms */
                    }
                    nruns++;
                    if (!dry && run_one(o, &rs, &nrows) < 0) (*failed)++;
                }
            }
    return nruns;
}

int cs_bench_run(const cs_bench_opts *o) {
    int failed = 0;
    /* An empty table with status 0 would read as a measurement. */
    if (plan(o, true, &failed) == 0) {
        fprintf(o->err, "commsim bench: nothing to run: no op of --op has an algorithm of "
                        "--algo (commsim bench --algo help lists them)\n");
        return 1;
    }
    cs_bench_begin(o);
    plan(o, false, &failed);
    cs_bench_end(o, failed);
    return failed ? 1 : 0;
}
