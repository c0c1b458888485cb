/* learn.c -- chapters on disk and the browser's frame. */
#include "learn.h"

#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "header.h"
#include "render.h"
#include "screen.h"

/* The chapter and script lists: 32 columns, and on a wide window up to 48,
 * so that titles a projector has room for are not cut. */
static int left_w(const cs_grid *g) {
    int w = g->w * 3 / 10;
    return w < 32 ? 32 : w > 48 ? 48 : w;
}

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0, k;
    char *s = malloc(cap);
    while (s && (k = fread(s + n, 1, cap - n - 1, f)) > 0) {
        n += k;
        if (n + 1 == cap) {
            char *t = realloc(s, cap *= 2);
            if (!t) free(s);
            s = t;
        }
    }
    fclose(f);
    if (s) s[n] = 0;
    if (len) *len = n;
    return s;
}

static char *join(const char *a, const char *b) {
    size_t n = strlen(a) + strlen(b) + 2;
    char *s = malloc(n);
    if (s) snprintf(s, n, "%s/%s", a, b);
    return s;
}

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entries of dir for which keep() holds, sorted. */
static char **list_dir(const char *dir, bool (*keep)(const char *dir, const char *name), int *n) {
    DIR *d = opendir(dir);
    *n = 0;
    if (!d) return NULL;
    char **v = NULL;
    int cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!keep(dir, e->d_name)) continue;
        if (*n == cap) {
            char **t = realloc(v, (size_t)(cap = cap ? cap * 2 : 16) * sizeof *v);
            if (!t) break;
            v = t;
        }
        v[(*n)++] = strdup(e->d_name);
    }
    closedir(d);
    if (*n) qsort(v, (size_t)*n, sizeof *v, by_name);
    return v;
}

static bool is_chapter(const char *dir, const char *name) {
    (void)dir;
    return isdigit((unsigned char)name[0]) && isdigit((unsigned char)name[1]) && name[2] == '-';
}

static bool is_script(const char *dir, const char *name) {
    (void)dir;
    size_t n = strlen(name);
    return n > 4 && strcmp(name + n - 4, ".lua") == 0 && name[0] != '.';
}

static char *first_heading(const char *md, const char *fallback) {
    for (const char *p = md; p && *p;) {
        if (p[0] == '#') {
            while (*p == '#' || *p == ' ') p++;
            return strndup(p, strcspn(p, "\n"));
        }
        p = strchr(p, '\n');
        if (p) p++;
    }
    return strdup(fallback);
}

/* ---- teaching order: where the README names each script */

static bool name_char(char ch) {
    return isalnum((unsigned char)ch) || ch == '_' || ch == '-';
}

/* Does line [p, end) name file as a word of its own ("all_reduce.lua" is not
 * "reduce.lua")? */
static bool line_names(const char *p, const char *end, const char *file) {
    size_t n = strlen(file);
    for (const char *q = p; q + n <= end; q++)
        if (memcmp(q, file, n) == 0 && (q == p || !name_char(q[-1])) &&
            (q + n == end || !name_char(q[n])))
            return true;
    return false;
}

int cs_learn_script_place(const char *readme, const char *file) {
    bool fenced = false;
    int place = 0;
    for (const char *p = readme; p && *p; place++) {
        const char *end = strchr(p, '\n');
        if (!end) end = p + strlen(p);
        const char *s = p;
        while (s < end && *s == ' ') s++;
        if (end - s >= 3 && strncmp(s, "```", 3) == 0) fenced = !fenced;
        else if (!fenced && (*s == '#' || *s == '|') && line_names(s, end, file)) return place;
        p = *end ? end + 1 : end;
    }
    return -1;
}

typedef struct placed {
    char *name;
    int place; /* INT_MAX: not named, after the named ones */
} placed;

static int by_place(const void *a, const void *b) {
    const placed *x = a, *y = b;
    if (x->place != y->place) return x->place < y->place ? -1 : 1;
    return strcmp(x->name, y->name);
}

void cs_learn_order_scripts(char **names, int n, const char *readme) {
    placed *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    if (!v) return; /* keep the alphabetical order */
    for (int i = 0; i < n; i++) {
        int at = readme ? cs_learn_script_place(readme, names[i]) : -1;
        v[i] = (placed){names[i], at < 0 ? INT_MAX : at};
    }
    qsort(v, (size_t)n, sizeof *v, by_place);
    for (int i = 0; i < n; i++) names[i] = v[i].name;
    free(v);
}

static void load_lessons(cs_chapter *c) {
    int n;
    char **names = list_dir(c->dir, is_script, &n);
    cs_learn_order_scripts(names, n, c->readme);
    c->lesson = calloc((size_t)(n ? n : 1), sizeof *c->lesson);
    for (int i = 0; c->lesson && i < n; i++) {
        cs_lesson *l = &c->lesson[c->nlessons++];
        l->file = names[i];
        l->path = join(c->dir, names[i]);
        size_t len;
        char *src = l->path ? slurp(l->path, &len) : NULL;
        cs_header h;
        char err[256];
        if (src && cs_header_parse(names[i], src, len, &h, err, sizeof err) == 0 && h.title[0])
            l->title = strdup(h.title);
        else l->title = strdup("");
        free(src);
    }
    if (!c->lesson)
        for (int i = 0; i < n; i++) free(names[i]);
    free(names);
}

static bool is_exercise(const char *dir, const char *name) {
    if (name[0] == '.') return false;
    char *sub = join(dir, name), *spec = sub ? join(sub, "spec.lua") : NULL;
    bool ok = spec && access(spec, R_OK) == 0;
    free(spec);
    free(sub);
    return ok;
}

static void load_exercises(cs_chapter *c) {
    char *dir = join(c->dir, "exercises");
    int n = 0;
    char **names = dir ? list_dir(dir, is_exercise, &n) : NULL;
    c->ex = n ? calloc((size_t)n, sizeof *c->ex) : NULL;
    for (int i = 0; i < n; i++) {
        if (!c->ex) {
            free(names[i]);
            continue;
        }
        cs_exercise *e = &c->ex[c->nex++];
        e->name = names[i];
        e->dir = join(dir, names[i]);
        char *readme = e->dir ? join(e->dir, "README.md") : NULL;
        e->readme = readme ? slurp(readme, NULL) : NULL;
        free(readme);
        if (!e->readme) e->readme = strdup("(this exercise has no README.md)");
    }
    free(names);
    free(dir);
}

int cs_book_load(cs_book *b, const char *dir, char *err, size_t errlen) {
    memset(b, 0, sizeof *b);
    int n;
    char **names = list_dir(dir, is_chapter, &n);
    if (!n) {
        snprintf(err, errlen, "no chapters (NN-name directories) in %s", dir);
        free(names);
        return -1;
    }
    b->ch = calloc((size_t)n, sizeof *b->ch);
    for (int i = 0; b->ch && i < n; i++) {
        cs_chapter *c = &b->ch[b->n++];
        c->slug = names[i];
        c->dir = join(dir, names[i]);
        char *readme = c->dir ? join(c->dir, "README.md") : NULL;
        c->readme = readme ? slurp(readme, NULL) : NULL;
        free(readme);
        if (!c->readme) c->readme = strdup("(this chapter has no README.md)");
        c->title = first_heading(c->readme, c->slug);
        load_lessons(c);
        load_exercises(c);
    }
    free(names);
    return b->ch ? 0 : -1;
}

void cs_book_free(cs_book *b) {
    for (int i = 0; i < b->n; i++) {
        cs_chapter *c = &b->ch[i];
        for (int k = 0; k < c->nlessons; k++) {
            free(c->lesson[k].path);
            free(c->lesson[k].file);
            free(c->lesson[k].title);
        }
        free(c->lesson);
        for (int k = 0; k < c->nex; k++) {
            free(c->ex[k].name);
            free(c->ex[k].dir);
            free(c->ex[k].readme);
        }
        free(c->ex);
        free(c->dir);
        free(c->slug);
        free(c->title);
        free(c->readme);
    }
    free(b->ch);
    memset(b, 0, sizeof *b);
}

int cs_book_find(const cs_book *b, const char *arg) {
    char *end;
    long num = strtol(arg, &end, 10);
    for (int i = 0; i < b->n; i++) {
        const char *slug = b->ch[i].slug, *dash = strchr(slug, '-');
        if (strcmp(arg, slug) == 0 || (dash && strcmp(arg, dash + 1) == 0)) return i;
        if (*arg && !*end && atol(slug) == num) return i;
        /* a path to the chapter: lessons/02-point-to-point/ */
        const char *base = strstr(arg, slug);
        if (base && (base[strlen(slug)] == 0 || strcmp(base + strlen(slug), "/") == 0)) return i;
    }
    return -1;
}

/* ---- the browser */

void cs_learn_init(cs_learn *l, const cs_book *b, int chapter) {
    memset(l, 0, sizeof *l);
    l->book = b;
    l->work = ".";
    l->chapter = chapter >= 0 && chapter < b->n ? chapter : 0;
    l->on_lessons = chapter >= 0;
    l->md_chapter = -1;
    l->grade.chapter = -1;
}

static void grade_free(cs_learn_grade *g) {
    for (int i = 0; i < g->nfail; i++) free(g->fail_case[i]), free(g->fail_trace[i]);
    free(g->fail_case);
    free(g->fail_trace);
    free(g->fail_at);
    free(g->text);
    memset(g, 0, sizeof *g);
    g->chapter = -1;
}

void cs_learn_free(cs_learn *l) {
    cs_md_free(&l->md);
    grade_free(&l->grade);
}

static int nitems(const cs_learn *l) {
    const cs_chapter *c = &l->book->ch[l->chapter];
    return c->nlessons + c->nex;
}

const cs_exercise *cs_learn_exercise(const cs_learn *l) {
    const cs_chapter *c = &l->book->ch[l->chapter];
    int k = l->lesson - c->nlessons;
    return l->on_lessons && k >= 0 && k < c->nex ? &c->ex[k] : NULL;
}

bool cs_learn_student_file(const cs_learn *l, const cs_exercise *e, char *buf, size_t len) {
    snprintf(buf, len, "%s/%s.lua", l->work, e->name);
    return access(buf, R_OK) == 0;
}

void cs_learn_set_grade(cs_learn *l, char *text, char **fail_case, char **fail_trace, cs_replay_at *fail_at,
                        int nfail) {
    grade_free(&l->grade);
    const cs_exercise *e = cs_learn_exercise(l);
    l->grade = (cs_learn_grade){.chapter = e ? l->chapter : -1,
                                .ex = e ? l->lesson - l->book->ch[l->chapter].nlessons : 0,
                                .text = text, .fail_case = fail_case, .fail_trace = fail_trace,
                                .fail_at = fail_at, .nfail = nfail};
    l->show_grade = e != NULL;
    l->scroll = 0;
    l->md_chapter = -1; /* a new text, for the same exercise and width */
}

/* Is the selected exercise the one graded last? */
static bool graded_here(const cs_learn *l) {
    return cs_learn_exercise(l) && l->grade.chapter == l->chapter &&
           l->grade.ex == l->lesson - l->book->ch[l->chapter].nlessons;
}

static void clamp_lesson(cs_learn *l) {
    int n = nitems(l);
    if (l->lesson >= n) l->lesson = n - 1;
    if (l->lesson < 0) l->lesson = 0;
}

static void move(cs_learn *l, int d) {
    if (l->on_lessons) {
        int was = l->lesson;
        l->lesson += d;
        clamp_lesson(l);
        if (l->lesson != was) l->show_grade = graded_here(l), l->scroll = 0;
        return;
    }
    int c = l->chapter + d;
    if (c < 0 || c >= l->book->n) return;
    l->chapter = c;
    l->lesson = 0;
    l->scroll = 0;
}

/* The keys of a selected exercise; NONE when key is not one of them. */
static cs_learn_action exercise_key(cs_learn *l, const cs_exercise *e, int key) {
    char path[PATH_MAX];
    bool have = cs_learn_student_file(l, e, path, sizeof path);
    switch (key) {
    case CS_KEY_ENTER: /* the statement, again */
        l->show_grade = false;
        l->scroll = 0;
        return CS_LEARN_NONE;
    case 'g':
        if (have) return CS_LEARN_GRADE;
        snprintf(l->message, sizeof l->message, "no %.120s yet: c copies the starter there", path);
        return CS_LEARN_NONE;
    case 'c':
        if (!have) return CS_LEARN_STARTER;
        snprintf(l->message, sizeof l->message, "%.120s exists: edit it, then g grades it", path);
        return CS_LEARN_NONE;
    case 'v': case 'n':
        if (!graded_here(l) || !l->grade.nfail) {
            snprintf(l->message, sizeof l->message,
                     graded_here(l) ? "no failing case to show (a hidden one shows pass or fail only)"
                                    : "g grades your file first");
            return CS_LEARN_NONE;
        }
        l->show_grade = true;
        if (key == 'n') {
            l->grade.sel = (l->grade.sel + 1) % l->grade.nfail;
            return CS_LEARN_NONE;
        }
        return CS_LEARN_FAILURE;
    default: return CS_LEARN_NONE;
    }
}

cs_learn_action cs_learn_key(cs_learn *l, int key) {
    if (key == CS_KEY_RESIZE) return CS_LEARN_NONE; /* not the user's: the message stays */
    if (key == 3) return CS_LEARN_INTERRUPT;
    if (l->help) { /* any key closes it, but those that scroll it */
        int top = l->help_top;
        switch (key) {
        case CS_KEY_UP: case 'k': case CS_KEY_WHEEL_UP: top--; break;
        case CS_KEY_DOWN: case 'j': case CS_KEY_WHEEL_DOWN: top++; break;
        case CS_KEY_PGUP: top -= 5; break;
        case CS_KEY_PGDN: top += 5; break;
        case CS_KEY_HOME: top = 0; break;
        case CS_KEY_END: top = l->help_max; break;
        default:
            l->help = false;
            return key == 'q' ? CS_LEARN_QUIT : CS_LEARN_NONE;
        }
        if (l->help_max > 0) l->help_top = top < 0 ? 0 : top > l->help_max ? l->help_max : top;
        else l->help = false; /* it fits: the arrows close it, as any key */
        return CS_LEARN_NONE;
    }
    l->message[0] = 0;
    int page = l->text_h > 2 ? l->text_h - 1 : 10; /* a page, keeping one line */
    const cs_exercise *e = cs_learn_exercise(l);
    if (e && (key == 'g' || key == 'c' || key == 'v' || key == 'n' || key == CS_KEY_ENTER))
        return exercise_key(l, e, key);
    const cs_chapter *c = &l->book->ch[l->chapter];
    switch (key) {
    case 'q': case 'Q': return CS_LEARN_QUIT;
    case CS_KEY_UP: case 'k': move(l, -1); break;
    case CS_KEY_DOWN: case 'j': move(l, 1); break;
    case CS_KEY_TAB: case CS_KEY_BTAB: l->on_lessons = !l->on_lessons; l->scroll = 0; break;
    case CS_KEY_RIGHT: l->on_lessons = true; break;
    case CS_KEY_LEFT: case CS_KEY_ESC: case CS_KEY_BACKSPACE: l->on_lessons = false; l->scroll = 0; break;
    case CS_KEY_PGDN: case ' ': case CS_KEY_WHEEL_DOWN: l->scroll += key == CS_KEY_WHEEL_DOWN ? 3 : page; break;
    case CS_KEY_PGUP: case 'b': case CS_KEY_WHEEL_UP:
        l->scroll -= key == CS_KEY_WHEEL_UP ? 3 : page;
        if (l->scroll < 0) l->scroll = 0;
        break;
    case CS_KEY_HOME: l->scroll = 0; break;
    case '?': l->help = true, l->help_top = 0; break;
    case 'e': /* the chapter's exercises */
        if (!c->nex) {
            snprintf(l->message, sizeof l->message, "this chapter has no exercises");
            break;
        }
        l->on_lessons = true;
        l->lesson = c->nlessons;
        l->show_grade = graded_here(l);
        l->scroll = 0;
        break;
    case 'g': case 'c': case 'v': case 'n':
        snprintf(l->message, sizeof l->message,
                 c->nex ? "select an exercise first (e goes to them)" : "this chapter has no exercises");
        break;
    case CS_KEY_ENTER:
        if (!l->on_lessons) {
            l->on_lessons = true;
            break;
        }
        if (c->nlessons > 0) return CS_LEARN_RUN;
        snprintf(l->message, sizeof l->message, "this chapter has no scripts");
        break;
    default: break;
    }
    return CS_LEARN_NONE;
}

/* A heading row of the left pane. */
static void rule(cs_grid *g, int y, const char *title, bool ascii) {
    cs_grid_fill(g, 0, y, left_w(g), 1, ascii ? '-' : 0x2500, CS_C_DEFAULT, CS_A_DIM);
    cs_grid_put(g, 1, y, left_w(g) - 2, title, CS_C_DEFAULT, CS_A_BOLD);
}

static void draw_list(cs_learn *l, cs_grid *g, int y, int h, bool ascii) {
    const cs_book *b = l->book;
    int lw = left_w(g);
    rule(g, y, " chapters ", ascii);
    int row = y + 1, split = y + 1 + (b->n < h / 2 ? b->n : h / 2);
    for (int i = 0; i < b->n && row < split; i++, row++) {
        bool sel = i == l->chapter;
        int attr = sel ? (l->on_lessons ? CS_A_BOLD : CS_A_REVERSE) : 0;
        cs_grid_fill(g, 0, row, lw, 1, ' ', CS_C_DEFAULT, attr);
        cs_viz_put_cut(g, 1, row, lw - 2, b->ch[i].title, CS_C_DEFAULT, attr, ascii);
    }
    const cs_chapter *c = &b->ch[l->chapter];
    rule(g, split, " scripts (enter runs) ", ascii);
    /* Rows of the list: a script takes two (name, title), the exercises'
     * heading one, an exercise one. The list scrolls to keep the selection
     * in view. */
    int room = y + h - split - 1, rows_before = 0, sel_rows = 2;
    for (int i = 0; i < l->lesson && i < nitems(l); i++)
        rows_before += i < c->nlessons ? 2 : 1 + (i == c->nlessons);
    if (l->lesson >= c->nlessons) rows_before += l->lesson == c->nlessons, sel_rows = 1;
    int skip = rows_before + sel_rows > room ? rows_before + sel_rows - room : 0;
    int r = split + 1 - skip, bottom = y + h;
    for (int i = 0; i < nitems(l); i++) {
        bool sel = i == l->lesson && l->on_lessons;
        int attr = sel ? CS_A_REVERSE : 0;
        if (i < c->nlessons) {
            if (r >= split + 1 && r < bottom) {
                cs_grid_fill(g, 0, r, lw, 1, ' ', CS_C_DEFAULT, attr);
                cs_viz_put_cut(g, 1, r, lw - 2, c->lesson[i].file, CS_C_GREEN, attr | CS_A_BOLD, ascii);
            }
            if (r + 1 >= split + 1 && r + 1 < bottom)
                cs_viz_put_cut(g, 3, r + 1, lw - 4, c->lesson[i].title, CS_C_DEFAULT, CS_A_DIM, ascii);
            r += 2;
            continue;
        }
        const cs_exercise *e = &c->ex[i - c->nlessons];
        if (i == c->nlessons) {
            if (r >= split + 1 && r < bottom) rule(g, r, " exercises (g grades) ", ascii);
            r++;
        }
        if (r >= split + 1 && r < bottom) {
            cs_grid_fill(g, 0, r, lw, 1, ' ', CS_C_DEFAULT, attr);
            cs_viz_put_cut(g, 1, r, lw - 2, e->name, CS_C_CYAN, attr | CS_A_BOLD, ascii);
        }
        r++;
    }
}

static const char learn_help[] =
    "up/down   select a chapter, a script or an exercise\n"
    "tab       switch between chapters and scripts\n"
    "enter     run the selected script in the visualizer, paused\n"
    "          (space steps, r runs, q comes back here);\n"
    "          on an exercise: its statement again\n"
    "e         the chapter's exercises\n"
    "c         copy the exercise's starter to your file\n"
    "g         grade your file; v opens a failing case where it\n"
    "          failed, n selects the next failing case\n"
    "PgUp/PgDn scroll the text (also space and b)\n"
    "?         this help (any key closes it)\n"
    "q         quit";

/* ---- the text pane: the chapter, an exercise's statement, or a grading */

static int add_line(cs_md *d, const char *s, size_t n, int fg, int attr) {
    if (d->n == d->cap) {
        int cap = d->cap ? d->cap * 2 : 32;
        cs_md_line *v = realloc(d->line, (size_t)cap * sizeof *v);
        if (!v) return -1;
        d->line = v, d->cap = cap;
    }
    char *t = strndup(s, n);
    if (!t) return -1;
    d->line[d->n++] = (cs_md_line){t, fg, attr};
    return 0;
}


/* The grader's text, as it prints it, wrapped at width: a wrapped line keeps
 * its indent. Passed cases green, failed ones red, the selected failing
 * case's heading reversed. */
static int layout_grade(cs_md *d, const cs_learn_grade *gr, int width, bool ascii) {
    memset(d, 0, sizeof *d);
    d->ascii = ascii;
    const char *sel = gr->nfail ? gr->fail_case[gr->sel] : NULL;
    for (const char *p = gr->text; *p;) {
        size_t n = strcspn(p, "\n");
        size_t ind = strspn(p, " ");
        int fg = 0, attr = 0;
        if (ind == 2 && strncmp(p + 2, "\u2713", 3) == 0) fg = CS_C_GREEN;
        else if (ind == 2 && strncmp(p + 2, "\u2717", 3) == 0) fg = CS_C_RED, attr = CS_A_BOLD;
        else if (ind == 0 && n && p[n - 1] == ':') {
            attr = CS_A_BOLD;
            if (sel && strlen(sel) == n - 1 && strncmp(p, sel, n - 1) == 0) attr |= CS_A_REVERSE;
        } else if (ind == 0 && strncmp(p, "total:", 6) == 0) attr = CS_A_BOLD;
        /* wrap at spaces; a word longer than the line is cut */
        size_t at = 0;
        bool first = true;
        do {
            size_t pad = first ? 0 : ind + 2;
            int room = width - (int)pad;
            if (room < 10) room = 10;
            size_t end = at, brk = 0;
            while (end < n && cs_utf8_cols(p + at, end - at + 1) <= room) {
                if (p[end] == ' ' && end > at) brk = end;
                end++;
            }
            if (end < n && brk > at) end = brk;
            char buf[1024];
            int k = snprintf(buf, sizeof buf, "%*s%.*s", (int)pad, "", (int)(end - at), p + at);
            if (first && fg && ascii && strlen(buf) > 5) { /* the grader's mark, as the diagram's */
                buf[2] = fg == CS_C_GREEN ? 'v' : 'X';
                memmove(buf + 3, buf + 5, strlen(buf + 5) + 1);
                k = (int)strlen(buf);
            }
            if (add_line(d, buf, k < (int)sizeof buf ? (size_t)k : sizeof buf - 1, fg, attr) < 0)
                return -1;
            at = end;
            while (at < n && p[at] == ' ') at++;
            first = false;
        } while (at < n);
        p += n + (p[n] == '\n');
    }
    return 0;
}

/* An exercise's statement, and where the student's file is. */
static char *statement(const cs_learn *l, const cs_exercise *e) {
    char path[PATH_MAX];
    bool have = cs_learn_student_file(l, e, path, sizeof path);
    const char *tail = have ? "\n\nYour file: `%s`. Edit it, then **g** grades it.\n"
                            : "\n\nYour file will be `%s`: **c** copies the starter there.\n";
    size_t n = strlen(e->readme) + strlen(tail) + strlen(path) + 1;
    char *s = malloc(n);
    if (s) snprintf(s, n, "%s", e->readme), snprintf(s + strlen(s), n - strlen(s), tail, path);
    return s;
}

/* Lay out what the text pane shows, unless md holds it already. */
static void layout_text(cs_learn *l, int tw, bool ascii) {
    const cs_chapter *c = &l->book->ch[l->chapter];
    const cs_exercise *e = cs_learn_exercise(l);
    char path[PATH_MAX];
    /* 0: the chapter; 1 and 2: the statement (without, with the student's
     * file); 3: the grading (the selection is part of it) */
    int kind = !e ? 0 : l->show_grade && graded_here(l) ? 3 + l->grade.sel
                                                        : 1 + cs_learn_student_file(l, e, path, sizeof path);
    int item = e ? l->lesson : -1;
    if (l->md_chapter == l->chapter && l->md_item == item && l->md_width == tw && l->md_kind == kind)
        return;
    cs_md_free(&l->md);
    if (kind >= 3) layout_grade(&l->md, &l->grade, tw, ascii);
    else if (kind) {
        char *text = statement(l, e);
        if (text) cs_md_layout(&l->md, text, tw, ascii);
        free(text);
    } else cs_md_layout(&l->md, c->readme, tw, ascii);
    l->md_chapter = l->chapter, l->md_item = item, l->md_width = tw, l->md_kind = kind;
}

static const char *footer(const cs_learn *l) {
    if (!cs_learn_exercise(l))
        return "up/down select  tab chapters/scripts  enter run  e exercises";
    if (graded_here(l) && l->grade.nfail)
        return l->grade.nfail > 1 ? "v see the failure  n next failing  g grade again  enter text"
                                  : "v see the failure  g grade again  enter statement";
    return "g grade your file  c copy the starter  enter statement";
}

void cs_learn_render(cs_learn *l, cs_grid *g, bool ascii) {
    cs_grid_clear(g);
    if (cs_viz_too_small(g, NULL)) return; /* the lists alone take 33 columns or more */
    const cs_chapter *c = &l->book->ch[l->chapter];
    /* a message the footer would cut (an error the student must read whole)
     * takes a row from the panes */
    int rows = l->message[0] ? cs_viz_footer_rows(g, l->message) : 1;
    int lw = left_w(g), tx = lw + 1, tw = g->w - tx - 1, h = g->h - 1 - rows;
    layout_text(l, tw, ascii);
    if (l->scroll > l->md.n - h) l->scroll = l->md.n - h > 0 ? l->md.n - h : 0;
    l->text_h = h;
    cs_grid_fill(g, 0, 0, g->w, 1, ' ', CS_C_DEFAULT, CS_A_REVERSE);
    const cs_exercise *e = cs_learn_exercise(l);
    cs_grid_printf(g, 0, 0, g->w, CS_C_DEFAULT, CS_A_REVERSE | CS_A_BOLD, " commsim learn  %s%s%s",
                   c->slug, e ? "  exercise " : "", e ? e->name : "");
    if (l->md.n > h) { /* right-aligned at its own length: "lines 157-178/666" whole */
        char at[64];
        int n = snprintf(at, sizeof at, " lines %d-%d/%d ", l->scroll + 1,
                         l->scroll + h < l->md.n ? l->scroll + h : l->md.n, l->md.n);
        cs_grid_put(g, g->w - n, 0, n, at, CS_C_DEFAULT, CS_A_REVERSE);
    }
    draw_list(l, g, 1, h, ascii);
    for (int y = 1; y < g->h - 1; y++) cs_grid_putc(g, lw, y, ascii ? '|' : 0x2502, 0, CS_A_DIM);
    cs_md_draw(&l->md, g, tx, 1, tw, h, l->scroll);
    if (l->message[0]) cs_viz_footer_long(g, l->message, CS_C_YELLOW, CS_A_BOLD, ascii);
    else cs_viz_footer(g, footer(l), CS_C_DEFAULT, 0, ascii);
    if (l->help) {
        l->help_max = cs_viz_box_max_top(g->w, g->h, learn_help);
        cs_viz_box(g, ascii, "keys", learn_help, l->help_top);
    }
}
