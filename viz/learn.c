/* learn.c -- chapters on disk and the browser's frame. */
#include "learn.h"

#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "header.h"
#include "screen.h"

#define LEFT_W 32 /* the chapter and script lists */

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
    l->chapter = chapter >= 0 && chapter < b->n ? chapter : 0;
    l->on_lessons = chapter >= 0;
    l->md_chapter = -1;
}

void cs_learn_free(cs_learn *l) { cs_md_free(&l->md); }

static void clamp_lesson(cs_learn *l) {
    int n = l->book->ch[l->chapter].nlessons;
    if (l->lesson >= n) l->lesson = n - 1;
    if (l->lesson < 0) l->lesson = 0;
}

static void move(cs_learn *l, int d) {
    if (l->on_lessons) {
        l->lesson += d;
        clamp_lesson(l);
        return;
    }
    int c = l->chapter + d;
    if (c < 0 || c >= l->book->n) return;
    l->chapter = c;
    l->lesson = 0;
    l->scroll = 0;
}

cs_learn_action cs_learn_key(cs_learn *l, int key) {
    if (l->help) {
        l->help = false;
        return key == 'q' ? CS_LEARN_QUIT : CS_LEARN_NONE;
    }
    l->message[0] = 0;
    int page = l->text_h > 2 ? l->text_h - 1 : 10; /* a page, keeping one line */
    switch (key) {
    case 'q': case 'Q': case 3: return CS_LEARN_QUIT;
    case CS_KEY_UP: case 'k': move(l, -1); break;
    case CS_KEY_DOWN: case 'j': move(l, 1); break;
    case CS_KEY_TAB: case CS_KEY_BTAB: l->on_lessons = !l->on_lessons; break;
    case CS_KEY_RIGHT: l->on_lessons = true; break;
    case CS_KEY_LEFT: case CS_KEY_ESC: case CS_KEY_BACKSPACE: l->on_lessons = false; break;
    case CS_KEY_PGDN: case ' ': case CS_KEY_WHEEL_DOWN: l->scroll += key == CS_KEY_WHEEL_DOWN ? 3 : page; break;
    case CS_KEY_PGUP: case 'b': case CS_KEY_WHEEL_UP:
        l->scroll -= key == CS_KEY_WHEEL_UP ? 3 : page;
        if (l->scroll < 0) l->scroll = 0;
        break;
    case CS_KEY_HOME: l->scroll = 0; break;
    case '?': l->help = true; break;
    case CS_KEY_ENTER:
        if (!l->on_lessons) {
            l->on_lessons = true;
            break;
        }
        if (l->book->ch[l->chapter].nlessons > 0) return CS_LEARN_RUN;
        snprintf(l->message, sizeof l->message, "this chapter has no scripts");
        break;
    default: break;
    }
    return CS_LEARN_NONE;
}

static void draw_list(cs_learn *l, cs_grid *g, int y, int h, bool ascii) {
    const cs_book *b = l->book;
    cs_grid_fill(g, 0, y, LEFT_W, 1, ascii ? '-' : 0x2500, CS_C_DEFAULT, CS_A_DIM);
    cs_grid_put(g, 1, y, LEFT_W - 2, " chapters ", CS_C_DEFAULT, CS_A_BOLD);
    int row = y + 1, split = y + 1 + (b->n < h / 2 ? b->n : h / 2);
    for (int i = 0; i < b->n && row < split; i++, row++) {
        bool sel = i == l->chapter;
        int attr = sel ? (l->on_lessons ? CS_A_BOLD : CS_A_REVERSE) : 0;
        cs_grid_fill(g, 0, row, LEFT_W, 1, ' ', CS_C_DEFAULT, attr);
        cs_grid_put(g, 1, row, LEFT_W - 2, b->ch[i].title, CS_C_DEFAULT, attr);
    }
    const cs_chapter *c = &b->ch[l->chapter];
    cs_grid_fill(g, 0, split, LEFT_W, 1, ascii ? '-' : 0x2500, CS_C_DEFAULT, CS_A_DIM);
    cs_grid_put(g, 1, split, LEFT_W - 2, " scripts (enter runs) ", CS_C_DEFAULT, CS_A_BOLD);
    int room = y + h - split - 1, per = 2;
    int first = l->lesson * per >= room ? l->lesson - room / per + 1 : 0;
    for (int i = first, r = split + 1; i < c->nlessons && r + 1 < y + h + 1; i++, r += per) {
        bool sel = i == l->lesson;
        int attr = sel && l->on_lessons ? CS_A_REVERSE : 0;
        cs_grid_fill(g, 0, r, LEFT_W, 1, ' ', CS_C_DEFAULT, attr);
        cs_grid_put(g, 1, r, LEFT_W - 2, c->lesson[i].file, CS_C_GREEN, attr | CS_A_BOLD);
        cs_grid_put(g, 3, r + 1, LEFT_W - 4, c->lesson[i].title, CS_C_DEFAULT, CS_A_DIM);
    }
}

static const char learn_help[] =
    "up/down   select a chapter or a script\n"
    "tab       switch between chapters and scripts\n"
    "enter     run the selected script in the visualizer, paused at its start\n"
    "          (space steps, r runs, q comes back here)\n"
    "PgUp/PgDn scroll the chapter's text (also space and b)\n"
    "q         quit";

void cs_learn_render(cs_learn *l, cs_grid *g, bool ascii) {
    cs_grid_clear(g);
    const cs_chapter *c = &l->book->ch[l->chapter];
    int tx = LEFT_W + 1, tw = g->w - tx - 1, h = g->h - 2;
    if (l->md_chapter != l->chapter || l->md_width != tw) {
        cs_md_free(&l->md);
        cs_md_layout(&l->md, c->readme, tw, ascii);
        l->md_chapter = l->chapter;
        l->md_width = tw;
    }
    if (l->scroll > l->md.n - h) l->scroll = l->md.n - h > 0 ? l->md.n - h : 0;
    l->text_h = h;
    cs_grid_fill(g, 0, 0, g->w, 1, ' ', CS_C_DEFAULT, CS_A_REVERSE);
    cs_grid_printf(g, 0, 0, g->w, CS_C_DEFAULT, CS_A_REVERSE | CS_A_BOLD, " commsim learn  %s",
                   c->slug);
    if (l->md.n > h)
        cs_grid_printf(g, g->w - 16, 0, 16, CS_C_DEFAULT, CS_A_REVERSE, " lines %d-%d/%d ",
                       l->scroll + 1, l->scroll + h < l->md.n ? l->scroll + h : l->md.n, l->md.n);
    draw_list(l, g, 1, h, ascii);
    for (int y = 1; y < g->h - 1; y++) cs_grid_putc(g, LEFT_W, y, ascii ? '|' : 0x2502, 0, CS_A_DIM);
    cs_md_draw(&l->md, g, tx, 1, tw, h, l->scroll);
    int y = g->h - 1;
    if (l->message[0]) cs_grid_put(g, 1, y, g->w - 2, l->message, CS_C_YELLOW, CS_A_BOLD);
    else cs_grid_put(g, 1, y, g->w - 2,
                     "up/down select  tab chapters/scripts  enter run  PgUp/PgDn text  ? help  q quit",
                     CS_C_DEFAULT, 0);
    if (l->help) {
        int w = g->w - 8 < 76 ? g->w - 8 : 76, bx = (g->w - w) / 2, by = 4;
        cs_grid_fill(g, bx, by, w, 9, ' ', CS_C_DEFAULT, CS_A_REVERSE);
        cs_grid_put(g, bx + 2, by, w - 4, " keys ", CS_C_CYAN, CS_A_REVERSE | CS_A_BOLD);
        int row = by + 2;
        for (const char *p = learn_help; *p; row++) {
            size_t n = strcspn(p, "\n");
            char line[128];
            snprintf(line, sizeof line, "%.*s", (int)n, p);
            cs_grid_put(g, bx + 2, row, w - 4, line, CS_C_DEFAULT, CS_A_REVERSE);
            p += n + (p[n] == '\n');
        }
    }
}
