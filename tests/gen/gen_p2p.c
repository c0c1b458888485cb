/* gen_p2p.c -- random point-to-point programs with known ground truth, run on
 * the thread engine under every send mode: the monitor must never call a
 * deadlock-free program deadlocked (nor warn about it), and must catch every
 * planted deadlock, naming the planted line.
 *
 * A program is a random sequence of global steps, each a message from rank a
 * to rank b: blocking or not on either side, a receive from any source (with
 * a tag only that message uses), nonblocking requests waited on a few
 * operations later or all at the end. Every rank executes its part of the
 * steps in global order. That is deadlock-free under any send mode: the
 * earliest unfinished step has both sides posted (any earlier wait is for an
 * earlier step), and FIFO matching pairs them. Half of the programs get one
 * planted bug at a random step, with tags of its own; whether it deadlocks
 * depends only on the bug and on whether its sends are eager:
 *   missing send, receive cycle, wrong tag, blocking receive from itself:
 *     always; head-to-head sends, isend-wait cycle, missing receive: unless
 *     the sends are eager (the missing receive then leaves one unreceived
 *     message: exactly one warning).
 *
 * Every run is also recorded and replayed: the replayed model must give the
 * same status and the same deadlock report. An eager run that ends ok is
 * rechecked with rendezvous sends: the summary must say "ok" exactly when the
 * program is deadlock-free under rendezvous, and otherwise name a planted line
 * (one buffering_hazard warning; none for a missing receive, whose message is
 * already reported as never received).
 *
 * A second batch has receives from any source sharing a tag: half ordered
 * by construction (each sender waits for the receiver's go-ahead, sent after
 * its previous receive), half with a planted message race (two unordered
 * senders, two receives from any source): every race must be reported once
 * at its planted receive, and nothing in the ordered programs.
 *
 * Environment: COMMSIM_GEN_PROGRAMS (default 500), COMMSIM_GEN_ANY_PROGRAMS
 * (default 500), COMMSIM_GEN_SEED (default 1).
 *
 * "gen_p2p --print N FILE" only writes program N (seed 1, the same program
 * the test runs as its number N) to FILE and prints its world size and bug:
 * bench/soak.sh draws its programs this way. Prints one line per failure and ends with "N passed, M failed".
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launch.h"
#include "replay.h"
#include "report.h"

/* ---- a tiny deterministic generator */

static uint64_t rng_state;
static uint32_t rnd(uint32_t n) { /* uniform-ish in [0, n) */
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state % n);
}

/* ---- per-rank code */

#define MAX_RANKS 8
#define MAX_LINES 512

typedef struct line {
    char text[160];
    bool planted;
} line;

typedef struct pending {
    int id, val, due; /* due: own statements left before its wait */
    bool recv;
} pending;

typedef struct rank_code {
    line lines[MAX_LINES];
    int n;
    pending pend[MAX_LINES];
    int npend;
} rank_code;

typedef struct program {
    int world;
    rank_code rc[MAX_RANKS];
    int next_id;
} program;

static void emit(rank_code *rc, bool planted, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void emit(rank_code *rc, bool planted, const char *fmt, ...) {
    if (rc->n == MAX_LINES) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rc->lines[rc->n].text, sizeof rc->lines[0].text, fmt, ap);
    va_end(ap);
    rc->lines[rc->n++].planted = planted;
}

static void emit_wait(rank_code *rc, const pending *p) {
    if (p->recv) emit(rc, false, "W[%d]:wait(); assert(B[%d][0] == %d)", p->id, p->id, p->val);
    else emit(rc, false, "W[%d]:wait()", p->id);
}

/* Before each statement of a rank: the waits that are due. */
static void tick(rank_code *rc) {
    for (int i = 0; i < rc->npend;) {
        if (rc->pend[i].due-- <= 0) {
            emit_wait(rc, &rc->pend[i]);
            rc->pend[i] = rc->pend[--rc->npend];
        } else {
            i++;
        }
    }
}

static void defer(rank_code *rc, int id, int val, bool recv) {
    rc->pend[rc->npend++] = (pending){id, val, (int)rnd(4), recv};
}

/* One message of n floats from a to b with value val. */
static void step(program *p, int a, int b, int n, int val) {
    rank_code *s = &p->rc[a], *r = &p->rc[b];
    bool any = rnd(5) == 0;
    int tag = any ? 100 + val : (int)rnd(3), id = ++p->next_id;
    tick(s);
    if (rnd(2)) {
        emit(s, false, "dist.send(tensor.full(%d, %d), %d, {tag = %d})", n, val, b, tag);
    } else {
        emit(s, false, "W[%d] = dist.isend(tensor.full(%d, %d), %d, {tag = %d})", id, n, val, b, tag);
        defer(s, id, val, false);
    }
    tick(r);
    id = ++p->next_id;
    if (any)
        emit(r, false, "do local t = tensor.zeros(%d); assert(dist.recv(t, {tag = %d}) == %d); "
                       "assert(t[0] == %d) end", n, tag, a, val);
    else if (rnd(2))
        emit(r, false, "do local t = tensor.zeros(%d); dist.recv(t, %d, {tag = %d}); "
                       "assert(t[0] == %d) end", n, a, tag, val);
    else {
        emit(r, false, "B[%d] = tensor.zeros(%d); W[%d] = dist.irecv(B[%d], %d, {tag = %d})",
             id, n, id, id, a, tag);
        defer(r, id, val, true);
    }
}

/* ---- planted bugs */

typedef enum {
    BUG_NONE, BUG_MISSING_SEND, BUG_RECV_CYCLE, BUG_WRONG_TAG, BUG_SELF_RECV, BUG_HEAD_TO_HEAD,
    BUG_WAIT_CYCLE, BUG_MISSING_RECV, BUG_COUNT
} bug;

static const char *const bug_names[BUG_COUNT] = {
    "none", "missing send", "receive cycle", "wrong tag", "receive from itself",
    "head-to-head sends", "isend-wait cycle", "missing receive",
};

/* Does the bug deadlock when its sends are (or are not) eager? */
static bool bug_deadlocks(bug k, bool eager) {
    return k != BUG_NONE && (k < BUG_HEAD_TO_HEAD || !eager);
}

static void plant(program *p, bug k, int n) {
    int a = (int)rnd((uint32_t)p->world), b = (a + 1 + (int)rnd((uint32_t)p->world - 1)) % p->world;
    rank_code *ra = &p->rc[a], *rb = &p->rc[b];
    int u = 1000 + p->next_id;
    tick(ra);
    tick(rb);
    switch (k) {
    case BUG_MISSING_SEND:
        emit(rb, true, "dist.recv(tensor.zeros(%d), %d, {tag = %d})", n, a, u);
        break;
    case BUG_RECV_CYCLE: {
        int len = 2 + (int)rnd((uint32_t)p->world - 1);
        for (int i = 0; i < len; i++) {
            int me = (a + i) % p->world, prev = (a + i + len - 1) % p->world;
            if (i) tick(&p->rc[me]);
            emit(&p->rc[me], true, "dist.recv(tensor.zeros(%d), %d, {tag = %d})", n, prev, u);
            emit(&p->rc[me], false, "dist.send(tensor.zeros(%d), %d, {tag = %d})", n,
                 (me + 1) % p->world, u);
        }
        break;
    }
    case BUG_WRONG_TAG:
        emit(ra, true, "dist.send(tensor.zeros(%d), %d, {tag = %d})", n, b, u);
        emit(rb, true, "dist.recv(tensor.zeros(%d), %d, {tag = %d})", n, a, u + 1);
        break;
    case BUG_SELF_RECV:
        emit(ra, true, "dist.recv(tensor.zeros(%d), %d, {tag = %d})", n, a, u);
        break;
    case BUG_HEAD_TO_HEAD:
        emit(ra, true, "dist.send(tensor.zeros(%d), %d, {tag = %d})", n, b, u);
        emit(ra, false, "dist.recv(tensor.zeros(%d), %d, {tag = %d})", n, b, u);
        emit(rb, true, "dist.send(tensor.zeros(%d), %d, {tag = %d})", n, a, u);
        emit(rb, false, "dist.recv(tensor.zeros(%d), %d, {tag = %d})", n, a, u);
        break;
    case BUG_WAIT_CYCLE:
        emit(ra, false, "W[%d] = dist.isend(tensor.zeros(%d), %d, {tag = %d})", u, n, b, u);
        emit(ra, true, "W[%d]:wait()", u);
        emit(ra, false, "dist.recv(tensor.zeros(%d), %d, {tag = %d})", n, b, u + 1);
        emit(rb, false, "W[%d] = dist.isend(tensor.zeros(%d), %d, {tag = %d})", u + 1, n, a, u + 1);
        emit(rb, true, "W[%d]:wait()", u + 1);
        emit(rb, false, "dist.recv(tensor.zeros(%d), %d, {tag = %d})", n, a, u);
        break;
    case BUG_MISSING_RECV:
        emit(ra, true, "dist.send(tensor.zeros(%d), %d, {tag = %d})", n, b, u);
        break;
    default: break;
    }
}

/* ---- a whole program */

static int elems(void) { return 1 + (int)rnd(rnd(4) == 0 ? 40 : 12); } /* 4..160 bytes */

/* The waits still due, all at once at the end. */
static void finish_waits(program *p) {
    for (int r = 0; r < p->world; r++) { /* the rest, all at once */
        rank_code *rc = &p->rc[r];
        if (!rc->npend) continue;
        for (int i = 0; i < rc->npend; i += 6) { /* wait_all, six handles a line */
            char list[128] = "";
            size_t len = 0;
            for (int j = i; j < rc->npend && j < i + 6; j++)
                len += (size_t)snprintf(list + len, sizeof list - len, "%sW[%d]", j > i ? ", " : "",
                                        rc->pend[j].id);
            emit(rc, false, "dist.wait_all({%s})", list);
        }
        for (int i = 0; i < rc->npend; i++)
            if (rc->pend[i].recv) emit(rc, false, "assert(B[%d][0] == %d)", rc->pend[i].id, rc->pend[i].val);
        rc->npend = 0;
    }
}

static void generate(program *p, bug k, int *bug_elems) {
    memset(p, 0, sizeof *p);
    p->world = 2 + (int)rnd(MAX_RANKS - 1);
    int steps = 1 + (int)rnd(24), at = k ? (int)rnd((uint32_t)steps + 1) : -1;
    *bug_elems = elems();
    for (int i = 0; i <= steps; i++) {
        if (i == at) plant(p, k, *bug_elems);
        if (i == steps) break;
        int a = (int)rnd((uint32_t)p->world), b = (a + 1 + (int)rnd((uint32_t)p->world - 1)) % p->world;
        step(p, a, b, elems(), i + 1);
        if (rnd(8) == 0) emit(&p->rc[a], false, "dist.compute(0)");
    }
    finish_waits(p);
}

/* ---- receives from any source: ordered by construction, or a planted race */

/* Rank d receives from any source, with one tag, one message from each of
 * several senders in turn; each sender after the first sends only once it
 * has received d's go-ahead, which d sends after its previous receive: every
 * send happens after the receive before it, so no receive could take another
 * rank's send (no race, whatever the timing). The planted race: two ranks send
 * to d with one tag, unordered, and d receives twice from any source. */
static void any_chain(program *p, int d, int tag) {
    int order[MAX_RANKS], n = 0;
    for (int r = 0; r < p->world; r++)
        if (r != d) order[n++] = r;
    for (int i = n - 1; i > 0; i--) { /* shuffle */
        int j = (int)rnd((uint32_t)i + 1), t = order[i];
        order[i] = order[j], order[j] = t;
    }
    int k = 2 + (int)rnd((uint32_t)n - 1);
    for (int i = 0; i < k && i < n; i++) {
        int s = order[i], val = 10 * tag + i;
        if (i) { /* the go-ahead, received before the send */
            tick(&p->rc[d]);
            emit(&p->rc[d], false, "dist.send(tensor.zeros(1), %d, {tag = %d})", s, tag + 50 + i);
            tick(&p->rc[s]);
            emit(&p->rc[s], false, "dist.recv(tensor.zeros(1), %d, {tag = %d})", d, tag + 50 + i);
        }
        tick(&p->rc[s]);
        if (rnd(2)) {
            emit(&p->rc[s], false, "dist.send(tensor.full(1, %d), %d, {tag = %d})", val, d, tag);
        } else {
            int id = ++p->next_id;
            emit(&p->rc[s], false, "W[%d] = dist.isend(tensor.full(1, %d), %d, {tag = %d})", id,
                 val, d, tag);
            defer(&p->rc[s], id, val, false);
        }
        tick(&p->rc[d]);
        emit(&p->rc[d], false, "do local t = tensor.zeros(1); assert(dist.recv(t, {tag = %d}) == %d); "
                               "assert(t[0] == %d) end", tag, s, val);
    }
}

static void plant_race(program *p, int d) {
    int a = (d + 1 + (int)rnd((uint32_t)p->world - 1)) % p->world, b = a;
    while (b == a || b == d) b = (int)rnd((uint32_t)p->world);
    tick(&p->rc[a]);
    tick(&p->rc[b]);
    tick(&p->rc[d]);
    emit(&p->rc[a], false, "dist.send(tensor.full(1, 1), %d, {tag = 700})", d);
    emit(&p->rc[b], false, "dist.send(tensor.full(1, 2), %d, {tag = 700})", d);
    emit(&p->rc[d], true, "do local t = tensor.zeros(1); local src = dist.recv(t, {tag = 700}); "
                          "assert(t[0] == (src == %d and 1 or 2)) end", a);
    emit(&p->rc[d], false, "do local t = tensor.zeros(1); local src = dist.recv(t, {tag = 700}); "
                           "assert(t[0] == (src == %d and 1 or 2)) end", a);
}

static void generate_any(program *p, bool race) {
    memset(p, 0, sizeof *p);
    p->world = 3 + (int)rnd(MAX_RANKS - 2);
    int steps = (int)rnd(12), chains = 1 + (int)rnd(2), at = race ? (int)rnd((uint32_t)steps + 1) : -1;
    for (int i = 0; i <= steps; i++) {
        if (i == at) plant_race(p, (int)rnd((uint32_t)p->world));
        if (i < chains) any_chain(p, (int)rnd((uint32_t)p->world), 500 + 100 * i);
        if (i == steps) break;
        int a = (int)rnd((uint32_t)p->world), b = (a + 1 + (int)rnd((uint32_t)p->world - 1)) % p->world;
        step(p, a, b, elems(), i + 1);
    }
    finish_waits(p);
}

/* Write the script; planted[] gets the planted lines. */
static int write_script(const program *p, const char *path, int *planted, int max) {
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    int lineno = 1, np = 0;
    fprintf(f, "local W, B = {}, {}\n");
    for (int r = 0; r < p->world; r++) {
        fprintf(f, "%s rank == %d then\n", r ? "elseif" : "if", r), lineno++;
        for (int i = 0; i < p->rc[r].n; i++) {
            fprintf(f, "  %s\n", p->rc[r].lines[i].text), lineno++;
            if (p->rc[r].lines[i].planted && np < max) planted[np++] = lineno;
        }
    }
    fprintf(f, "end\n");
    fclose(f);
    return np;
}

/* ---- running and judging */

static const char *const modes[] = {"rendezvous", "eager", "eager:64"};

static bool is_eager(const char *mode, int n) {
    return strcmp(mode, "eager") == 0 || (strcmp(mode, "eager:64") == 0 && n * 4 <= 64);
}

/* One run in a child process: the launcher may leave with _exit when a rank
 * is slow to unwind (a loaded machine, a sanitizer build), and that must not
 * end the whole test. The report comes back through a file. */
static int run(const char *path, const char *trace, const char *report_path, int world,
               const char *mode, char **report) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        FILE *err = fopen(report_path, "w"), *out = fopen("/dev/null", "w");
        cs_run_opts o = {.script = path, .nranks = world, .send_mode = mode, .trace = trace,
                         .mem_limit = 64u << 20, .step_limit = 10000000, .timeout = 60,
                         .out = out, .err = err};
        int status = cs_launch_run(&o);
        fclose(err);
        fclose(out);
        _exit(status);
    }
    int wst = 0;
    if (pid < 0 || waitpid(pid, &wst, 0) != pid) return -1;
    FILE *f = fopen(report_path, "r");
    size_t len = 0;
    FILE *mem = open_memstream(report, &len);
    for (int c; f && (c = getc(f)) != EOF;) putc(c, mem);
    if (f) fclose(f);
    fclose(mem);
    return WIFEXITED(wst) ? WEXITSTATUS(wst) : 128 + WTERMSIG(wst);
}

static int count_lines(const char *s, const char *what) {
    int n = 0;
    for (const char *p = s; (p = strstr(p, what)); p++) n++;
    return n;
}

/* The report of a planted deadlock names one of the planted lines. */
static bool names_plant(const char *report, const int *planted, int np) {
    for (int i = 0; i < np; i++) {
        char at[64], in[64];
        snprintf(at, sizeof at, "gen.lua:%d)", planted[i]);
        snprintf(in, sizeof in, "gen.lua:%d\n", planted[i]);
        if (strstr(report, at) || strstr(report, in)) return true;
    }
    return false;
}

/* The trace, folded again, tells the same story. */
static bool replay_agrees(const char *trace, int status, const char *report, char *why,
                          size_t len) {
    cs_replay rp;
    cs_monitor m;
    char err[512];
    if (cs_replay_load(&rp, trace, err, sizeof err) < 0) {
        snprintf(why, len, "replay: %.100s", err);
        return false;
    }
    if (cs_replay_fold(&rp, rp.n, &m) < 0) {
        snprintf(why, len, "replay: out of memory");
        cs_replay_free(&rp);
        return false;
    }
    bool ok = false;
    if (cs_report_status(&m) != status)
        snprintf(why, len, "replay status %d, live %d", cs_report_status(&m), status);
    else if (m.deadlocked && !strstr(report, m.verdict))
        snprintf(why, len, "the replayed deadlock report differs");
    else ok = true;
    cs_monitor_destroy(&m);
    cs_replay_free(&rp);
    return ok;
}

/* An eager run that ended ok was run again with rendezvous sends: the
 * summary says whether that deadlocks, and its report names a planted line. */
static bool recheck_agrees(bug k, const char *report, const int *planted, int np, int *warns) {
    const char *said = strstr(report, "with rendezvous sends: ");
    if (!said) return false;
    if (!bug_deadlocks(k, false)) return strncmp(said, "with rendezvous sends: ok\n", 26) == 0;
    if (strncmp(said, "with rendezvous sends: deadlock at gen.lua:", 43) != 0) return false;
    /* the missing receive's deadlock is the message already reported unreceived */
    if (k != BUG_MISSING_RECV) *warns -= count_lines(report, "works only because sends are buffered (see");
    return names_plant(said, planted, np);
}

static bool judge(bug k, const char *mode, int status, const char *report,
                  const int *planted, int np, int bug_elems, char *why, size_t len) {
    bool eager = is_eager(mode, bug_elems), dead = bug_deadlocks(k, eager);
    int warns = count_lines(report, "warning: ");
    bool rechecked = status == 0 && strcmp(mode, "rendezvous") != 0;
    if (rechecked && !recheck_agrees(k, report, planted, np, &warns)) {
        snprintf(why, len, "the rendezvous recheck is wrong or missing");
        return false;
    }
    if (dead && status != 3) snprintf(why, len, "missed deadlock (status %d)", status);
    else if (!dead && status != 0) snprintf(why, len, "false alarm (status %d)", status);
    else if (dead && !names_plant(report, planted, np))
        snprintf(why, len, "the report does not name a planted line");
    else if (!dead && k == BUG_MISSING_RECV && (warns != 1 || !strstr(report, "never received")))
        snprintf(why, len, "expected one 'never received' warning, got %d", warns);
    else if (!dead && k != BUG_MISSING_RECV && warns)
        snprintf(why, len, "false pitfall warning");
    else return true;
    return false;
}

/* The replayed trace finds the same races as the live run. */
static bool replay_races(const char *trace, int live) {
    cs_replay rp;
    cs_monitor m;
    char err[512];
    if (cs_replay_load(&rp, trace, err, sizeof err) < 0) return false;
    if (cs_replay_fold(&rp, rp.n, &m) < 0) {
        cs_replay_free(&rp);
        return false;
    }
    int n = 0;
    for (int i = 0; i < m.npitfalls; i++) n += m.pitfalls[i].kind == CS_PIT_RACE;
    cs_monitor_destroy(&m);
    cs_replay_free(&rp);
    return n == live;
}

/* Programs with receives from any source: half race-free by construction,
 * half with a planted race. Every run must end ok, report the planted race
 * exactly once at its receive and nothing else, and replay the same. */
static int any_batch(uint64_t seed, const char *path, const char *trace, const char *rpath,
                     int *races, int *found, int *false_alarms, int *passed, int *failed) {
    const char *e = getenv("COMMSIM_GEN_ANY_PROGRAMS");
    int programs = e ? atoi(e) : 500;
    static program p;
    for (int i = 0; i < programs; i++) {
        rng_state = (seed + 1000003u + (uint64_t)i) * 0x9e3779b97f4a7c15ULL | 1;
        bool race = i % 2;
        int planted[16];
        generate_any(&p, race);
        int np = write_script(&p, path, planted, 16);
        for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
            char *report = NULL, why[128] = "";
            int status = run(path, trace, rpath, p.world, modes[m], &report);
            const char *rep = report ? report : "";
            int said = count_lines(rep, "message race: "), warns = count_lines(rep, "warning: ");
            char at[64];
            snprintf(at, sizeof at, "gen.lua:%d: message race: ", np ? planted[0] : 0);
            *races += race;
            *found += race && said == 1 && strstr(rep, at);
            *false_alarms += !race && said;
            if (status != 0) snprintf(why, sizeof why, "status %d", status);
            else if (race && (said != 1 || !strstr(rep, at)))
                snprintf(why, sizeof why, "the planted race is not reported once at its line");
            else if (warns != said) snprintf(why, sizeof why, "%d warnings besides races", warns - said);
            else if (!race && said) snprintf(why, sizeof why, "false alarm: a race reported");
            else if (strcmp(modes[m], "rendezvous") && !strstr(rep, "with rendezvous sends: ok\n"))
                snprintf(why, sizeof why, "the rendezvous recheck is not ok");
            else if (!replay_races(trace, said)) snprintf(why, sizeof why, "replay finds other races");
            if (!why[0]) {
                (*passed)++;
            } else {
                (*failed)++;
                printf("FAIL any-source program %d (seed %llu, %d ranks, %s, %s): %s\n", i,
                       (unsigned long long)seed, p.world, race ? "race" : "no race", modes[m], why);
                if (*failed <= 3) {
                    char keep[96];
                    snprintf(keep, sizeof keep, "/tmp/commsim-gen-any-fail-%d.lua", *failed);
                    rename(path, keep);
                    printf("  script kept in %s; report:\n%s\n", keep, rep);
                    write_script(&p, path, planted, 16);
                }
            }
            free(report);
        }
    }
    return programs;
}

/* --print N FILE: write program N of seed 1 and say "WORLD BUG". */
static int print_program(const char *num, const char *path) {
    static program p;
    int i = atoi(num), bug_elems, planted[16];
    rng_state = (1 + (uint64_t)i) * 0x9e3779b97f4a7c15ULL | 1;
    bug k = i % 2 ? (bug)(1 + rnd(BUG_COUNT - 1)) : BUG_NONE;
    generate(&p, k, &bug_elems);
    if (write_script(&p, path, planted, 16) < 0) {
        fprintf(stderr, "gen_p2p: cannot write %s\n", path);
        return 1;
    }
    printf("%d %s\n", p.world, bug_names[k]);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "--print") == 0) return print_program(argv[2], argv[3]);
    if (argc != 1) {
        fprintf(stderr, "usage: gen_p2p [--print N FILE]\n");
        return 1;
    }
    const char *e = getenv("COMMSIM_GEN_PROGRAMS");
    int programs = e ? atoi(e) : 500;
    e = getenv("COMMSIM_GEN_SEED");
    uint64_t seed = e ? strtoull(e, NULL, 10) : 1;
    char dir[] = "/tmp/commsim-gen.XXXXXX", path[64], trace[64], rpath[64];
    if (!mkdtemp(dir)) return 1;
    snprintf(path, sizeof path, "%s/gen.lua", dir);
    snprintf(trace, sizeof trace, "%s/gen.jsonl", dir);
    snprintf(rpath, sizeof rpath, "%s/report.txt", dir);
    int passed = 0, failed = 0, deadlocks = 0;
    static program p;
    for (int i = 0; i < programs; i++) {
        rng_state = (seed + (uint64_t)i) * 0x9e3779b97f4a7c15ULL | 1;
        bug k = i % 2 ? (bug)(1 + rnd(BUG_COUNT - 1)) : BUG_NONE;
        int bug_elems, planted[16];
        generate(&p, k, &bug_elems);
        int np = write_script(&p, path, planted, 16);
        for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
            char *report = NULL, why[128];
            int status = run(path, trace, rpath, p.world, modes[m], &report);
            deadlocks += status == 3;
            if (judge(k, modes[m], status, report ? report : "", planted, np, bug_elems, why,
                      sizeof why) &&
                replay_agrees(trace, status, report ? report : "", why, sizeof why)) {
                passed++;
            } else {
                failed++;
                printf("FAIL program %d (seed %llu, %d ranks, bug: %s, %s): %s\n", i,
                       (unsigned long long)seed, p.world, bug_names[k], modes[m], why);
                if (failed <= 3) {
                    char keep[96];
                    snprintf(keep, sizeof keep, "/tmp/commsim-gen-fail-%d.lua", failed);
                    rename(path, keep);
                    printf("  script kept in %s; report:\n%s\n", keep, report ? report : "");
                    write_script(&p, path, planted, 16);
                }
            }
            free(report);
        }
    }
    int races = 0, found = 0, false_alarms = 0, any_programs = any_batch(seed, path, trace, rpath,
                                                                         &races, &found, &false_alarms,
                                                                         &passed, &failed);
    unlink(path);
    unlink(trace);
    unlink(rpath);
    rmdir(dir);
    printf("%d programs x %zu send modes, %d deadlocks found\n", programs,
           sizeof modes / sizeof modes[0], deadlocks);
    printf("%d any-source programs x %zu send modes: %d runs with a planted race, %d found, "
           "%d false alarms\n", any_programs, sizeof modes / sizeof modes[0], races, found,
           false_alarms);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
