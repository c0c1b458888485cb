/* tui_learn.c -- `commsim learn`: the chapter browser's loop. A script runs
 * in the visualizer on the same screen, paused at its start; when the user
 * leaves it, the browser comes back with the run's outcome in its footer.
 * An exercise's file is graded here as `commsim grade` grades it, and a
 * failing case's trace replays on the same screen. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grade.h"
#include "learn.h"
#include "screen.h"
#include "script.h"
#include "tui.h"

static const char *outcome(int status) {
    switch (status) {
    case 0: return "ok";
    case CS_END_ERROR: return "a script error";
    case CS_END_DEADLOCK: return "deadlock";
    case CS_END_TIMEOUT: return "timeout or budget exceeded";
    case CS_END_QUIT: return "left before the end";
    default: return "could not run";
    }
}

/* The first line the launcher wrote (a setup error: syntax, header). */
static void first_line(FILE *f, char *buf, size_t len) {
    buf[0] = 0;
    rewind(f);
    if (fgets(buf, (int)len, f)) buf[strcspn(buf, "\n")] = 0;
}

/* The visualizer as the run's front end, noting whether it opened: a script
 * that fails before (a syntax error) has only its message to show. */
typedef struct {
    cs_frontend fe;
    bool opened;
} lesson_ui;

static int lesson_attach(void *ud, const cs_job *job) {
    lesson_ui *u = ud;
    u->opened = true;
    return u->fe.attach(u->fe.ud, job);
}

static void lesson_loop(void *ud) {
    lesson_ui *u = ud;
    u->fe.loop(u->fe.ud);
}

static void run_lesson(cs_learn *l) {
    const cs_lesson *ls = &l->book->ch[l->chapter].lesson[l->lesson];
    FILE *sink = tmpfile(); /* the plain summary must not scribble on the screen */
    cs_tui_opts to = {.paused = true, .speed = 10};
    cs_tui *t = cs_tui_new(&to);
    if (!t || !sink) {
        snprintf(l->message, sizeof l->message, "out of memory");
        if (sink) fclose(sink);
        cs_tui_free(t);
        return;
    }
    lesson_ui u = {.fe = cs_tui_frontend(t)};
    cs_frontend fe = {.attach = lesson_attach, .loop = lesson_loop, .ud = &u};
    cs_run_opts o = {.script = ls->path, .mem_limit = CS_DEFAULT_MEM_LIMIT,
                     .step_limit = CS_DEFAULT_STEP_LIMIT, .out = sink, .err = sink, .ui = &fe};
    int status = cs_launch_run(&o);
    cs_tui_free(t);
    char why[160];
    first_line(sink, why, sizeof why);
    fclose(sink);
    if ((status == 1 || !u.opened) && why[0])
        snprintf(l->message, sizeof l->message, "%s", why);
    else
        snprintf(l->message, sizeof l->message, "%s ended: %s (status %d). enter runs it again",
                 ls->file, outcome(status), status);
}

/* ---- exercises */

/* The browser's own folder for the traces of failing cases, made on the first
 * grading and removed when the browser closes. */
static char trace_dir[PATH_MAX];
static bool have_trace_dir;

static void remove_traces(void) {
    if (!have_trace_dir) return;
    DIR *d = opendir(trace_dir);
    struct dirent *e;
    char p[PATH_MAX];
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.' && snprintf(p, sizeof p, "%s/%s", trace_dir, e->d_name) < (int)sizeof p)
            unlink(p);
    if (d) closedir(d);
    rmdir(trace_dir);
    have_trace_dir = false;
}

static void copy_starter(cs_learn *l) {
    const cs_exercise *e = cs_learn_exercise(l);
    char from[PATH_MAX], to[PATH_MAX];
    cs_learn_student_file(l, e, to, sizeof to);
    snprintf(from, sizeof from, "%s/starter.lua", e->dir);
    FILE *in = fopen(from, "rb");
    int why = in ? 0 : errno; /* the student needs the reason: no such folder, no permission */
    /* O_EXCL: a student's own file is never overwritten */
    int fd = in ? open(to, O_WRONLY | O_CREAT | O_EXCL, 0644) : -1;
    if (in && fd < 0) why = errno;
    FILE *out = fd >= 0 ? fdopen(fd, "wb") : NULL;
    char buf[8192];
    size_t n;
    bool ok = in && out;
    while (ok && (n = fread(buf, 1, sizeof buf, in)) > 0)
        if (!(ok = fwrite(buf, 1, n, out) == n)) why = errno;
    if (out && fclose(out) != 0 && ok) ok = false, why = errno;
    if (!out && fd >= 0) close(fd);
    if (in) fclose(in);
    if (ok) snprintf(l->message, sizeof l->message, "copied the starter to %.120s: edit it, then g grades it", to);
    else if (!in) snprintf(l->message, sizeof l->message, "cannot read the starter %.120s: %s", from, strerror(why));
    else snprintf(l->message, sizeof l->message, "cannot write %.120s: %s", to, why ? strerror(why) : "error");
}

/* Grade the student's file for the selected exercise, as `commsim grade
 * NAME FILE --trace-dir` does; keep the text result and the failing
 * (visible) cases' traces. */
static void grade(cs_learn *l, cs_grid *g) {
    const cs_exercise *e = cs_learn_exercise(l);
    char path[PATH_MAX], err[1024];
    cs_learn_student_file(l, e, path, sizeof path);
    snprintf(l->message, sizeof l->message, "grading %.120s ...", path);
    cs_learn_render(l, g, cs_screen_ascii());
    cs_screen_show(g);
    cs_grade_spec spec;
    if (cs_grade_spec_load(&spec, e->dir, err, sizeof err) < 0) {
        snprintf(l->message, sizeof l->message, "%.190s", err);
        cs_grade_spec_free(&spec);
        return;
    }
    if (!have_trace_dir) { /* in $TMPDIR, as mktemp(1) makes its files */
        const char *tmp = getenv("TMPDIR");
        snprintf(trace_dir, sizeof trace_dir, "%s/commsim-learn.XXXXXX", tmp && *tmp ? tmp : "/tmp");
        have_trace_dir = mkdtemp(trace_dir) != NULL;
    }
    cs_grade_opts go = {.trace_dir = have_trace_dir ? trace_dir : NULL};
    cs_grade_sub sub;
    cs_grade_sub_single(&sub, path); /* named, and its traces, as 'commsim grade' names them */
    /* The runs are in child processes writing nowhere, but whatever a child
     * might say on the terminal would scribble on the screen. */
    fflush(NULL);
    int saved[2] = {dup(1), dup(2)}, null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, 1), dup2(null, 2), close(null);
    cs_grade_submission(&spec, &go, &sub);
    fflush(NULL);
    for (int i = 0; i < 2; i++)
        if (saved[i] >= 0) dup2(saved[i], i + 1), close(saved[i]);
    /* The text as the grader prints it, less the replay commands: v opens
     * those traces here. */
    char **traces = calloc((size_t)sub.nresults + 1, sizeof *traces);
    char **fail_case = calloc((size_t)sub.nresults + 1, sizeof *fail_case);
    char **fail_trace = calloc((size_t)sub.nresults + 1, sizeof *fail_trace);
    cs_replay_at *fail_at = calloc((size_t)sub.nresults + 1, sizeof *fail_at);
    int nfail = 0;
    for (int i = 0; traces && fail_case && fail_trace && fail_at && i < sub.nresults; i++) {
        cs_grade_result *r = &sub.results[i];
        traces[i] = r->trace, r->trace = NULL;
        if (!r->pass && !r->hidden && traces[i]) {
            fail_case[nfail] = strdup(r->name);
            fail_trace[nfail] = strdup(traces[i]);
            fail_at[nfail] = (cs_replay_at){.rank = r->at.rank, .line = r->at.line};
            nfail += fail_case[nfail] && fail_trace[nfail];
        }
    }
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f) {
        cs_grade_write(f, CS_GF_TEXT, &spec, &sub, 1, false);
        fclose(f);
    }
    for (int i = 0; traces && i < sub.nresults; i++) sub.results[i].trace = traces[i];
    if (text && traces && fail_case && fail_trace && fail_at) {
        cs_learn_set_grade(l, text, fail_case, fail_trace, fail_at, nfail);
        const char *file = strrchr(path, '/'); /* the student's file, as they named it */
        int k = snprintf(l->message, sizeof l->message, "%s: %g/%g", file ? file + 1 : path,
                         sub.score, sub.max);
        if (nfail && k > 0 && k < (int)sizeof l->message)
            snprintf(l->message + k, sizeof l->message - (size_t)k, "  v shows where '%.60s' failed",
                     fail_case[0]);
    } else {
        snprintf(l->message, sizeof l->message, "out of memory");
        free(text), free(fail_case), free(fail_trace), free(fail_at);
    }
    free(traces);
    cs_grade_sub_free(&sub);
    cs_grade_spec_free(&spec);
}

static void show_failure(cs_learn *l) {
    const char *name = l->grade.fail_case[l->grade.sel], *trace = l->grade.fail_trace[l->grade.sel];
    cs_replay_at end = {.event = -1};
    cs_tui_replay(trace, l->grade.fail_at && l->grade.fail_at[l->grade.sel].line > 0
                             ? &l->grade.fail_at[l->grade.sel] : &end);
    snprintf(l->message, sizeof l->message, "back from '%.100s'", name);
}

int cs_learn_print(const char *lessons_dir, bool given, const char *chapter, const char *work) {
    cs_book book;
    char err[512];
    if (cs_book_load(&book, lessons_dir, err, sizeof err) < 0) {
        fprintf(stderr, "commsim learn: %s\n", err);
        return 1;
    }
    int ch = chapter ? cs_book_find(&book, chapter) : -1;
    if (chapter && ch < 0) {
        fprintf(stderr, "commsim learn: no chapter '%s'; the chapters are:\n", chapter);
        for (int i = 0; i < book.n; i++) fprintf(stderr, "  %s\n", book.ch[i].slug);
        cs_book_free(&book);
        return 1;
    }
    if (ch < 0) {
        printf("chapters (commsim learn N --no-tui prints one):\n");
        int w = 22; /* the titles in one column, past the longest name */
        for (int i = 0; i < book.n; i++)
            if ((int)strlen(book.ch[i].slug) > w) w = (int)strlen(book.ch[i].slug);
        for (int i = 0; i < book.n; i++)
            printf("  %-*s %s\n", w, book.ch[i].slug, book.ch[i].title);
    } else {
        const cs_chapter *c = &book.ch[ch];
        fputs(c->readme, stdout);
        if (c->readme[0] && c->readme[strlen(c->readme) - 1] != '\n') putchar('\n');
        /* the folder as found: the chapter's name alone finds only the default lessons */
        printf("\nscripts (commsim run %s/FILE runs one):\n", c->dir);
        for (int i = 0; i < c->nlessons; i++)
            printf("  %-22s %s\n", c->lesson[i].file, c->lesson[i].title);
        /* 'grade NAME' finds the default lessons' only: --lessons' by their folder */
        if (c->nex && !given)
            printf("\nexercises (commsim grade NAME %s/NAME.lua grades yours):\n", work);
        else if (c->nex)
            printf("\nexercises (commsim grade %s/exercises/NAME %s/NAME.lua grades yours):\n",
                   c->dir, work);
        for (int i = 0; i < c->nex; i++) printf("  %-22s %s\n", c->ex[i].name, c->ex[i].dir);
    }
    cs_book_free(&book);
    return 0;
}

int cs_tui_learn(const char *lessons_dir, const char *chapter, const char *work) {
    cs_book book;
    char err[512];
    if (cs_book_load(&book, lessons_dir, err, sizeof err) < 0) {
        fprintf(stderr, "commsim learn: %s\n", err);
        return 1;
    }
    int ch = -1;
    if (chapter && (ch = cs_book_find(&book, chapter)) < 0) {
        fprintf(stderr, "commsim learn: no chapter '%s'; the chapters are:\n", chapter);
        for (int i = 0; i < book.n; i++) fprintf(stderr, "  %s\n", book.ch[i].slug);
        cs_book_free(&book);
        return 1;
    }
    if (!cs_screen_open(err, sizeof err)) {
        fprintf(stderr, "commsim learn: %s\n", err);
        cs_book_free(&book);
        return 1;
    }
    cs_learn l;
    cs_learn_init(&l, &book, ch);
    l.work = work;
    cs_grid g = {0};
    int status = 0;
    for (;;) {
        int w, h, x, y;
        cs_screen_size(&w, &h);
        if ((g.w != w || g.h != h) && (cs_grid_free(&g), cs_grid_init(&g, w, h) < 0)) break;
        cs_learn_render(&l, &g, cs_screen_ascii());
        cs_screen_show(&g);
        int key = cs_screen_key(200, &x, &y);
        if (key == CS_KEY_NONE) continue;
        cs_learn_action a = cs_learn_key(&l, key);
        if (a == CS_LEARN_QUIT) break;
        if (a == CS_LEARN_INTERRUPT) {
            status = 130; /* as for any interrupted command */
            break;
        }
        if (a == CS_LEARN_RUN) run_lesson(&l);
        if (a == CS_LEARN_STARTER) copy_starter(&l);
        if (a == CS_LEARN_GRADE) grade(&l, &g);
        if (a == CS_LEARN_FAILURE) show_failure(&l);
    }
    remove_traces();
    cs_grid_free(&g);
    cs_learn_free(&l);
    cs_screen_close();
    cs_book_free(&book);
    return status;
}
