/* grade_run.c -- one variant of a case (a world size, an engine, a send mode)
 * run in a forked child under OS limits, through the same run path as
 * `commsim run`. The child writes the solution wrapped between a prologue (the
 * case's parameters as globals) and an epilogue (each rank's final `result`,
 * printed as marked lines), runs it headless with a trace in a private
 * folder, judges the trace and writes one verdict line back over a pipe. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "grade.h"
#include "grade_internal.h"
#include "launch.h"
#include "script.h"
#include "wire.h"
#include "xalloc.h"

/* The epilogue prints with the print captured before the solution ran, so a
 * solution that replaces print cannot hide or forge its result; it calls no
 * global the solution could replace or remove either (the error would be at
 * a line the solution does not have), and indexes no userdata but a tensor
 * (a P2POp raises when indexed): a Work is a result of type userdata. The
 * solution is the body of a function, so a `return` at its top level leaves
 * only that function and the epilogue still prints, after any line the
 * solution forged.
 * Tensors go out as "shape" then "data" lines of at most 1024 numbers (a
 * print event holds 64 KiB). The prologue shares the parameters' line and
 * the epilogue follows the solution's last: line numbers stay its own. */
static const char prologue[] =
    "local __cs_p, __cs_t, __cs_f, __cs_c, __cs_n, __cs_m, __cs_is = print, type, string.format, "
    "table.concat, tonumber, math.min, tensor.is_tensor; "
    "(function(...) ";
static const char epilogue[] =
    "\nend)(...); do local r = result; local M = '" CS_GRADE_MARK "'\n"
    "if __cs_t(r) == 'number' then __cs_p(M .. 'num ' .. __cs_f('%.17g', r))\n"
    "elseif __cs_is(r) then\n"
    "  local s = {} for i = 1, #r.shape do s[i] = __cs_f('%d', r.shape[i]) end\n"
    "  __cs_p(M .. 'shape ' .. __cs_c(s, ' '))\n"
    "  local flat = r:reshape(r:numel())\n"
    "  local n = flat:numel(); local i = 0\n"
    "  while i < n do local b = {} for k = i, __cs_m(n, i + 1024) - 1 do b[#b + 1] = "
    "__cs_f('%.17g', flat[k]) end __cs_p(M .. 'data ' .. __cs_c(b, ' ')) i = i + 1024 end\n"
    "elseif __cs_t(r) == 'table' then local b = {} for i = 1, #r do b[i] = __cs_f('%.17g', "
    "__cs_n(r[i]) or 0/0) end __cs_p(M .. 'list ' .. __cs_c(b, ' '))\n"
    "else __cs_p(M .. 'none ' .. __cs_t(r)) end end\n";

/* A probe, run only after a solution's error: the solution in a function
 * called under pcall, so that a rank's error is printed as a marked line
 * instead of ending every rank. Which ranks raise is then the program's
 * doing, not the race of which rank ended the run first. A message keeps
 * what follows a NUL ("\0") and its lines (\x1f). Line numbers stay the
 * solution's own. The mark carries a random token (the %s) that the
 * solution cannot read, so a line it prints itself is never taken for the
 * probe's: it would name the rank and the message of its choosing. */
static const char probe_prologue[] =
    "local __cs_p, __cs_t, __cs_s, __cs_g = print, type, tostring, string.gsub; "
    "local __cs_ok, __cs_e = pcall(function(...) ";
static const char probe_epilogue[] =
    "\nend, ...) if not __cs_ok then local e = __cs_t(__cs_e) == 'number' and __cs_s(__cs_e) or __cs_e\n"
    "__cs_p('" CS_GRADE_MARK "error %s ' .. (__cs_t(e) == 'string' and "
    "__cs_g(e, '[\\0\\n]', {['\\0'] = '\\\\0', ['\\n'] = '\\31'}) or '')) end\n";

/* The solution with the case's parameters set and the epilogue after (or,
 * for a probe, given its token, inside the probe's pcall). The buffer is sized from each
 * assignment's real length: a parameter's name may be as long as the spec
 * likes. Its length in *n: a solution may hold a NUL, which ends no string
 * here (written up to it, the run got a solution cut short, unwrapped: its
 * own result lines stood and its syntax error was never seen). */
static char *wrap(const cs_grade_case *c, const char *src, size_t len, const char *token, size_t *n) {
    bool probe = token != NULL;
    char probe_epi[sizeof probe_epilogue + CS_WIRE_TOKEN];
    if (probe) snprintf(probe_epi, sizeof probe_epi, probe_epilogue, token);
    const char *pro = probe ? probe_prologue : prologue, *epi = probe ? probe_epi : epilogue;
    size_t cap = len + strlen(pro) + strlen(epi) + 1;
    for (int i = 0; i < c->nparams; i++)
        cap += (size_t)snprintf(NULL, 0, "%s = %.17g; ", c->params[i].name, c->params[i].value);
    char *out = cs_xmalloc(cap, "grade script"), *p = out;
    for (int i = 0; i < c->nparams; i++)
        p += snprintf(p, cap - (size_t)(p - out), "%s = %.17g; ", c->params[i].name, c->params[i].value);
    if (len >= 3 && memcmp(src, "\xEF\xBB\xBF", 3) == 0) src += 3, len -= 3; /* a UTF-8 BOM */
    if (len && src[0] == '#') { /* a "#!" line: drop it, keep its newline */
        const char *nl = memchr(src, '\n', len);
        len -= nl ? (size_t)(nl - src) : len;
        src = nl ? nl : src;
    }
    /* The wrapper is text: a solution that is not a chunk of its own could
     * close the function itself ("end)(...)") and shadow the epilogue's
     * print. One that does not parse alone runs unwrapped: its syntax error
     * is the run's (after a ";", so that a binary chunk's is one too, with
     * the file's name and line). */
    cs_script alone = {.name = "solution", .source = (char *)src, .len = len};
    char err[8];
    bool chunk = cs_script_check_syntax(&alone, err, sizeof err) == 0;
    p += snprintf(p, cap - (size_t)(p - out), "%s", chunk ? pro : ";");
    memcpy(p, src, len), p += len;
    memcpy(p, chunk ? epi : "", chunk ? strlen(epi) + 1 : 1);
    *n = (size_t)(p - out) + (chunk ? strlen(epi) : 0);
    return out;
}

char *cs_grade_unwrap(const char *src) {
    const char *nl = strchr(src, '\n'), *p = strstr(src, prologue);
    size_t len = strlen(src), elen = sizeof epilogue - 1;
    if (!p || (nl && p > nl)) return NULL; /* the prologue ends the parameters' line */
    p += sizeof prologue - 1;
    if (len - (size_t)(p - src) < elen || strcmp(src + len - elen, epilogue) != 0) return NULL;
    return strndup(p, len - elen - (size_t)(p - src));
}

bool cs_grade_marked(const char *line) {
    return line && strncmp(line, CS_GRADE_MARK, strlen(CS_GRADE_MARK)) == 0;
}

char *cs_grade_read_all(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t n = 0, cap = 0, r;
    char chunk[8192];
    while ((r = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (n + r + 1 > cap) buf = cs_xrealloc(buf, cap = (n + r + 1) * 2, "grade read");
        memcpy(buf + n, chunk, r), n += r;
    }
    fclose(f);
    if (!buf) buf = cs_xmalloc(1, "grade read");
    buf[n] = 0;
    *len = n;
    return buf;
}

static void copy_file(const char *from, const char *to) {
    size_t len;
    char *buf = cs_grade_read_all(from, &len);
    FILE *f = buf ? fopen(to, "w") : NULL;
    if (f) fwrite(buf, 1, len, f), fclose(f);
    free(buf);
}

/* ---- root: the run as an unprivileged user */

/* RLIMIT_NPROC does not bind root, and root may write anywhere: a grader run
 * as root (a container's autograder) runs each solution as the user nobody,
 * when nobody can run this program at all (a tcp rank process execs it). */
typedef struct unpriv {
    bool drop;
    uid_t uid;
    gid_t gid;
} unpriv;

static unpriv unprivileged(void) {
    static unpriv u;
    static bool known;
    if (known) return u;
    known = true;
    if (geteuid() != 0) return u;
    struct passwd *pw = getpwnam("nobody");
    u.uid = pw ? pw->pw_uid : 65534;
    u.gid = pw ? pw->pw_gid : 65534;
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return u;
    exe[n] = 0;
    /* can nobody execute it? ask as nobody, in a child */
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0)
        _exit(setgroups(0, NULL) == 0 && setgid(u.gid) == 0 && setuid(u.uid) == 0 &&
                      access(exe, X_OK) == 0 ? 0 : 1);
    int st;
    while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    u.drop = pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
    return u;
}

/* In the run's process: become u's user for good. False if that failed. */
static bool drop_to(const unpriv *u) {
    return setgroups(0, NULL) == 0 && setgid(u->gid) == 0 && setuid(u->uid) == 0 &&
           setuid(0) != 0; /* and cannot come back */
}

static void limit(int res, rlim_t v) {
    struct rlimit rl = {v, v};
    setrlimit(res, &rl);
}

static char *dupf(const char *fmt, const char *a) {
    size_t n = strlen(fmt) + (a ? strlen(a) : 0) + 1;
    char *s = cs_xmalloc(n, "grade");
    snprintf(s, n, fmt, a ? a : "");
    return s;
}

/* A run's trace is a file of at most this many bytes (RLIMIT_FSIZE): a loop
 * of sends writes events as fast as the ranks go, gigabytes before the time
 * limit, and the judge reads the whole trace into memory. */
#define TRACE_MAX ((rlim_t)256 << 20)

/* Did the run's trace reach TRACE_MAX? Its writer (a thread that blocks
 * signals) then failed with EFBIG rather than die of SIGXFSZ, and that
 * ended the run: the trace is cut, whatever else the run says. */
static bool trace_full(const char *trace) {
    struct stat st;
    return stat(trace, &st) == 0 && (rlim_t)st.st_size >= TRACE_MAX;
}

/* Why a run, or the child judging it, ended on signal sig (malloc'd). */
static char *killed_why(int sig) {
    if (sig == SIGXCPU) return dupf("%s", "killed: the CPU time limit was exceeded");
    if (sig == SIGXFSZ)
        return dupf("%s", "killed: the run's trace passed 256 MiB (too many events, such as a loop of sends)");
    if (sig == SIGALRM) return dupf("%s", "killed: the wall time limit was exceeded");
    if (sig == SIGKILL) return dupf("%s", "killed: out of memory or time");
    return dupf("killed: the run crashed (%s)", strsignal(sig));
}

#define TRACE_FILE "trace.jsonl"

/* ---- leftovers: a grader killed (SIGTERM, Ctrl-C) or a worker that dies
 * must leave no run behind and no private folder in /tmp. The variant's
 * child and its run are a process group of their own; the caller makes the
 * private folder and removes it, whatever became of the child. */

static char tmp_root[4096] = "/tmp";

void cs_grade_tmp_root(const char *dir) { snprintf(tmp_root, sizeof tmp_root, "%s", dir); }

/* What a signal handler needs to undo, set while a variant runs. */
static volatile pid_t live_pid;
static char live_dir[4200], live_script[4300], live_trace[4300];

/* Remove the private folder: the run's files, then the folder (any name
 * the solution's run could have left is one of these two). */
static void remove_dir(void) {
    unlink(live_trace), unlink(live_script), rmdir(live_dir);
}

/* Catch SIGTERM, SIGINT and SIGHUP with h, their dispositions before in
 * prev: one that is ignored stays so (nohup's SIGHUP, a background job's
 * SIGINT), or a grader started under nohup would die when its terminal
 * hangs up. */
void cs_grade_catch(void (*h)(int), struct sigaction *prev) {
    static const int sigs[3] = {SIGTERM, SIGINT, SIGHUP};
    struct sigaction sa = {.sa_handler = h};
    for (int i = 0; i < 3; i++) {
        sigaction(sigs[i], NULL, &prev[i]);
        if (prev[i].sa_handler != SIG_IGN) sigaction(sigs[i], &sa, NULL);
    }
}

void cs_grade_uncatch(const struct sigaction *prev) {
    sigaction(SIGTERM, &prev[0], NULL), sigaction(SIGINT, &prev[1], NULL), sigaction(SIGHUP, &prev[2], NULL);
}

/* The dispositions on_signal replaced: a handler there (the chapter
 * browser's, which then closes its screen and ends as interrupted) is called
 * in place of dying at once with the terminal left raw. */
static struct sigaction caught_prev[3];

static void on_signal(int sig) {
    if (live_pid > 0) kill(-live_pid, SIGKILL), remove_dir();
    const struct sigaction *p = &caught_prev[sig == SIGTERM ? 0 : sig == SIGINT ? 1 : 2];
    if (!(p->sa_flags & SA_SIGINFO) && p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN) {
        p->sa_handler(sig);
        return;
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void die_with_parent(void) {
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
}

static bool write_script(const char *script, const char *text, size_t len) {
    FILE *sf = fopen(script, "w");
    if (!sf) return false;
    bool ok = fwrite(text, 1, len, sf) == len;
    return fclose(sf) == 0 && ok;
}

/* Run o in a grandchild: a run whose rank will not stop leaves with _exit
 * after closing its trace, and the judging must still happen. Its pid
 * (-1: none) and wait status in *st. */
static pid_t run_once(const cs_grade_spec *s, const cs_run_opts *o, int fd, const unpriv *u, int *st) {
    fflush(NULL);
    pid_t run = fork();
    if (run == 0) {
        close(fd); /* the verdict is the judge's to write */
        die_with_parent();
        if (u->drop && !drop_to(u)) _exit(70);
        limit(RLIMIT_FSIZE, TRACE_MAX); /* the only file it writes */
        signal(SIGXFSZ, SIG_DFL);
        /* Its messages go to the report's streams (/dev/null); what a rank
         * process or a last-gasp "out of memory" writes to fd 2 must not
         * reach the grader's own stderr either. */
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) dup2(null, 1), dup2(null, 2), close(null);
        alarm((unsigned)s->timeout + 5);
        _exit(cs_launch_run(o) & 0x7f);
    }
    while (run > 0 && waitpid(run, st, 0) < 0 && errno == EINTR) {}
    return run;
}

/* why, "error: MESSAGE", with the rank that raised it: "error: rank 1:
 * MESSAGE". The run that failed ended at its first error, on whichever
 * rank got there first; a probe (the solution under pcall, so no error
 * ends the run) finds the lowest rank that raises, the same every time.
 * Its message too, when it has the solution's position (a NUL in it kept
 * as "\0"); else the run's. A syntax error is every rank's: no rank. */
static char *name_raiser(const cs_grade_spec *s, const cs_grade_case *c, const cs_run_opts *o,
                         const char *src, size_t len, int fd, const unpriv *u, char *why) {
    const char *base = strrchr(o->script, '/');
    base = base ? base + 1 : o->script;
    char token[CS_WIRE_TOKEN + 1] = "", err[64];
    if (cs_wire_token_new(token) < 0) return why; /* no randomness: the run's own message */
    size_t plen;
    char *probe = wrap(c, src, len, token, &plen);
    cs_script sc = {.path = (char *)o->script, .name = (char *)base, .source = probe, .len = plen};
    int st = 0;
    alarm((unsigned)s->timeout + 10); /* the probe's own time, as the run's */
    if (!why || strncmp(why, "error: ", 7) != 0 || cs_script_check_syntax(&sc, err, sizeof err) < 0 ||
        !write_script(o->script, probe, plen) || run_once(s, o, fd, u, &st) < 0 || WIFSIGNALED(st)) {
        free(probe);
        return why;
    }
    free(probe);
    char *text = NULL;
    int rank = cs_grade_raiser(o->trace, token, &text);
    if (rank >= 0) {
        size_t n = strlen(base);
        bool placed = text && strncmp(text, base, n) == 0 && text[n] == ':' && text[n + 1] >= '0' &&
                      text[n + 1] <= '9';
        const char *m = placed ? text : why + 7;
        size_t cap = strlen(m) + 48;
        char *named = cs_xmalloc(cap, "grade");
        snprintf(named, cap, "error: rank %d: %s", rank, m);
        free(why), why = named;
    }
    free(text);
    return why;
}

/* The child: never returns. */
static _Noreturn void child(const cs_grade_spec *s, const cs_grade_case *c, const char *path,
                            int world, const char *engine, const char *mode, const char *keep,
                            int fd, const unpriv *u, const char *dir) {
    FILE *w = fdopen(fd, "w");
    if (!w) _exit(70);
    /* CPU time and address space bound the whole child; the wall time is the
     * run's own timeout, and an alarm behind it in case the run wedges. */
    unsigned cpu = (unsigned)(s->timeout * 2) + 2;
    limit(RLIMIT_CPU, cpu);
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
    /* (A sanitizer build reserves terabytes of shadow address space up front:
     * there the Lua memory cap alone bounds the run.) */
    limit(RLIMIT_AS, (rlim_t)s->memory * (rlim_t)(world + 2) + ((rlim_t)1 << 30));
#endif
    limit(RLIMIT_CORE, 0);
    /* No fork bombs: RLIMIT_NPROC counts every task of the user, threads
     * included, and Linux has no cheap count of those; the system's task
     * count bounds it, and the run needs a few tasks per rank (a tcp rank is
     * a process with threads). The kernel does not apply it to root: there
     * the run drops to nobody first (unprivileged above). */
    FILE *la = fopen("/proc/loadavg", "r");
    long running, tasks;
    if (la && fscanf(la, "%*s %*s %*s %ld/%ld", &running, &tasks) == 2)
        limit(RLIMIT_NPROC, (rlim_t)(tasks + 4 * world + 16));
    if (la) fclose(la);
    alarm((unsigned)s->timeout + 10);
    /* A solution is read whole: one of gigabytes (a sparse file) is refused
     * first, as the run would refuse it, before it takes the memory. */
    size_t len, wlen = 0;
    struct stat sst;
    char *src = stat(path, &sst) == 0 && sst.st_size > CS_SCRIPT_MAX_BYTES ? (errno = EFBIG, NULL)
                                                                           : cs_grade_read_all(path, &len);
    char *wrapped = src ? wrap(c, src, len, NULL, &wlen) : NULL;
    if (!src || wlen > CS_SCRIPT_MAX_BYTES) {
        fprintf(w, "F\t\t0:0\tcannot read the solution: %s\n",
                src ? "larger than 16 MiB with the grader's lines around it"
                : errno == EFBIG ? "larger than 16 MiB" : strerror(errno));
        fclose(w);
        _exit(0);
    }
    const char *base = strrchr(path, '/');
    char script[8500], trace[8500];
    /* the solution's own name, so that messages say "ring.lua:7:" */
    snprintf(script, sizeof script, "%s/%s", dir, base ? base + 1 : path);
    snprintf(trace, sizeof trace, "%s/%s", dir, TRACE_FILE);
    if (!write_script(script, wrapped, wlen)) _exit(70);
    /* the unprivileged run writes its trace here */
    if (u->drop && chown(dir, u->uid, u->gid) < 0) _exit(70);
    FILE *devnull = fopen("/dev/null", "w");
    cs_run_opts o = {.script = script, .nranks = world, .engine = engine, .send_mode = mode,
                     .net = s->net ? s->net : c->net, .mem_limit = s->memory, .step_limit = s->steps,
                     .out_limit = s->output, .timeout = s->timeout,
                     .trace = trace, .rank = -1, .out = devnull, .err = devnull,
                     .report = CS_REPORT_JSON,
                     /* the grader runs every send mode the case lists itself */
                     .no_recheck = true};
    int st = 0;
    pid_t run = run_once(s, &o, fd, u, &st);
    char *why = NULL, kind[32] = "";
    cs_grade_where at = {0, 0};
    cs_grade_time time = {world, (char *)engine, (char *)mode, {0}};
    bool pass = false;
    /* A run killed before it ended left a trace that stops anywhere: it
     * may look like a run that ended well, so it is never judged. */
    if (run < 0) why = dupf("cannot grade: %s", strerror(errno));
    else if (trace_full(trace)) snprintf(kind, sizeof kind, "killed"), why = killed_why(SIGXFSZ);
    else if (WIFSIGNALED(st)) snprintf(kind, sizeof kind, "killed"), why = killed_why(WTERMSIG(st));
    else pass = cs_grade_judge(s, c, trace, world, &why, &at, kind, &time.t);
    if (!pass && keep && rename(trace, keep) < 0) copy_file(trace, keep); /* another filesystem */
    if (!pass && keep && u->drop && chown(keep, geteuid(), getegid()) < 0) {} /* the grader's, as the rest */
    unlink(trace);
    if (!pass && strcmp(kind, "script_error") == 0) why = name_raiser(s, c, &o, src, len, fd, u, why);
    unlink(trace), unlink(script);
    fprintf(w, "%c\t%s\t%d:%d\t", pass ? 'P' : 'F', kind, at.rank, at.line);
    for (const char *p = why ? why : ""; *p; p++) fputc(*p == '\n' ? '\x1f' : *p, w);
    fputc('\n', w);
    if (time.t.net) cs_grade_time_write(w, &time);
    fclose(w);
    _exit(0);
}

/* ---- a variant's modelled time, as a line */

void cs_grade_time_write(FILE *f, const cs_grade_time *t) {
    const cs_outcome_time *o = &t->t;
    fprintf(f, "T\t%d\t%s\t%s\t%d\t%llu\t", t->world, t->engine, t->mode, o->complete,
            (unsigned long long)o->makespan_ns);
    for (int k = 0; o->complete && k < t->world; k++) {
        const cs_outcome_time_rank *r = &o->ranks[k];
        fprintf(f, "%s%llu,%llu,%llu,%llu", k ? ";" : "", (unsigned long long)r->end_ns,
                (unsigned long long)r->compute_ns, (unsigned long long)r->comm_ns,
                (unsigned long long)r->wait_ns);
    }
    fprintf(f, "%s\t%s\n", o->complete ? "" : "-", o->net);
}

bool cs_grade_time_read(char *line, cs_grade_time *t) {
    char *f[8];
    *t = (cs_grade_time){0};
    for (int i = 0; i < 8; i++) {
        f[i] = line;
        line = i < 7 ? strchr(line, '\t') : NULL;
        if (i < 7 && !line) return false;
        if (line) *line++ = 0;
    }
    int world = atoi(f[1]);
    if (strcmp(f[0], "T") != 0 || world < 1 || !*f[7]) return false;
    cs_outcome_time o = {.complete = f[4][0] == '1', .makespan_ns = strtoull(f[5], NULL, 10)};
    if (o.complete) {
        o.ranks = cs_xcalloc((size_t)world, sizeof *o.ranks, "grade");
        char *p = f[6];
        for (int k = 0; k < world; k++) {
            cs_outcome_time_rank *r = &o.ranks[k];
            unsigned long long v[4];
            int n = 0;
            if (sscanf(p, "%llu,%llu,%llu,%llu%n", &v[0], &v[1], &v[2], &v[3], &n) != 4 ||
                (p[n] != (k + 1 < world ? ';' : 0))) {
                free(o.ranks);
                return false;
            }
            *r = (cs_outcome_time_rank){v[0], v[1], v[2], v[3]};
            p += n + (k + 1 < world);
        }
    }
    o.net = cs_xstrdup(f[7], "grade");
    *t = (cs_grade_time){world, cs_xstrdup(f[2], "grade"), cs_xstrdup(f[3], "grade"), o};
    return true;
}

void cs_grade_time_free(cs_grade_time *t) {
    free(t->engine), free(t->mode), free(t->t.net), free(t->t.ranks);
    *t = (cs_grade_time){0};
}

bool cs_grade_variant(const cs_grade_spec *s, const cs_grade_case *c, const char *path, int world,
                      const char *engine, const char *mode, const char *trace, char **why,
                      cs_grade_where *at, char kind_out[32], cs_grade_time *time) {
    int p[2];
    *why = NULL, *at = (cs_grade_where){0, 0}, kind_out[0] = 0;
    if (time) *time = (cs_grade_time){0};
    fflush(NULL);
    /* close-on-exec: a rank process the run execs must not hold the pipe open */
    unpriv u = unprivileged();
    snprintf(live_dir, sizeof live_dir, "%s/commsim-grade.XXXXXX", tmp_root);
    if (!mkdtemp(live_dir)) return *why = dupf("cannot grade: %s", strerror(errno)), false;
    const char *base = strrchr(path, '/');
    snprintf(live_script, sizeof live_script, "%s/%s", live_dir, base ? base + 1 : path);
    snprintf(live_trace, sizeof live_trace, "%s/%s", live_dir, TRACE_FILE);
    if (pipe2(p, O_CLOEXEC) < 0) {
        remove_dir();
        return *why = dupf("cannot grade: %s", strerror(errno)), false;
    }
    /* blocked until live_pid is set: a signal in between must not miss the child */
    sigset_t term, old;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM), sigaddset(&term, SIGINT), sigaddset(&term, SIGHUP);
    sigprocmask(SIG_BLOCK, &term, &old);
    struct sigaction prev[3];
    cs_grade_catch(on_signal, prev);
    memcpy(caught_prev, prev, sizeof caught_prev); /* still blocked: on_signal cannot run yet */
    pid_t pid = fork();
    if (pid < 0) {
        cs_grade_uncatch(prev);
        sigprocmask(SIG_SETMASK, &old, NULL);
        close(p[0]), close(p[1]);
        remove_dir();
        return *why = dupf("cannot grade: %s", strerror(errno)), false;
    }
    if (pid == 0) {
        close(p[0]);
        setpgid(0, 0); /* its rank processes go with it */
        cs_grade_uncatch(prev);
        sigprocmask(SIG_SETMASK, &old, NULL);
        die_with_parent();
        child(s, c, path, world, engine, mode, trace, p[1], &u, live_dir);
    }
    setpgid(pid, pid); /* also here: the handler may kill the group before the child ran */
    live_pid = pid;
    sigprocmask(SIG_SETMASK, &old, NULL);
    close(p[1]);
    size_t len = 0, cap = 256;
    char *buf = cs_xmalloc(cap, "grade"), chunk[4096];
    ssize_t r;
    while ((r = read(p[0], chunk, sizeof chunk)) != 0) {
        if (r < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (len + (size_t)r + 1 > cap) buf = cs_xrealloc(buf, cap = (len + (size_t)r + 1) * 2, "grade");
        memcpy(buf + len, chunk, (size_t)r), len += (size_t)r;
    }
    buf[len] = 0;
    close(p[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    kill(-pid, SIGKILL); /* anything the run left behind */
    sigprocmask(SIG_BLOCK, &term, &old);
    live_pid = 0;
    remove_dir();
    cs_grade_uncatch(prev);
    sigprocmask(SIG_SETMASK, &old, NULL);
    bool pass = false;
    if (len >= 2 && (buf[0] == 'P' || buf[0] == 'F') && buf[1] == '\t') {
        pass = buf[0] == 'P';
        char *k = buf + 2, *m = strchr(k, '\t');
        if (m) {
            *m++ = 0;
            snprintf(kind_out, 32, "%s", k);
            if (sscanf(m, "%d:%d", &at->rank, &at->line) != 2 || at->rank < 0 || at->line < 0)
                *at = (cs_grade_where){0, 0};
            char *tab = strchr(m, '\t');
            m = tab ? tab + 1 : m + strlen(m);
            char *nl = strchr(m, '\n');
            if (nl) {
                *nl++ = 0;
                char *end = strchr(nl, '\n'); /* the time line, when the run had a model */
                if (end) *end = 0;
                if (time && end) cs_grade_time_read(nl, time);
            }
            for (char *q = m; *q; q++)
                if (*q == '\x1f') *q = '\n';
            if (*m) *why = dupf("%s", m);
        }
    } else if (WIFSIGNALED(st)) {
        snprintf(kind_out, 32, "killed");
        *why = killed_why(WTERMSIG(st));
    } else {
        snprintf(kind_out, 32, "crashed");
        char m[96];
        snprintf(m, sizeof m, "the run ended without a verdict (status %d)", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
        *why = dupf("%s", m);
    }
    free(buf);
    return pass;
}
