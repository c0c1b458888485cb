/* markdown.c -- enough Markdown for the chapters: a line-oriented pass that
 * collects blocks (heading, paragraph, list item, quote, code) and wraps them. */
#include "markdown.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sbuf {
    char *s;
    size_t n, cap;
} sbuf;

static int sb_add(sbuf *b, const char *s, size_t n) {
    if (b->n + n + 1 > b->cap) {
        size_t cap = (b->n + n + 1) * 2;
        char *p = realloc(b->s, cap);
        if (!p) return -1;
        b->s = p;
        b->cap = cap;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = 0;
    return 0;
}

static int push(cs_md *d, const char *text, size_t len, int fg, int attr) {
    if (d->n == d->cap) {
        int cap = d->cap ? d->cap * 2 : 64;
        cs_md_line *l = realloc(d->line, (size_t)cap * sizeof *l);
        if (!l) return -1;
        d->line = l;
        d->cap = cap;
    }
    char *t = strndup(text, len);
    if (!t) return -1;
    d->line[d->n++] = (cs_md_line){t, fg, attr};
    return 0;
}

static bool blank_at(const char *s, size_t n, size_t i) { return i >= n || s[i] == ' '; }

/* Drop the inline marks: `code`, **bold**, __bold__, *emphasis*; keep the
 * text. A single * is a mark only where it opens a word or closes one (not
 * in "2 * 3" or "a*b"); a single _ never is (all_reduce). */
static void strip_inline(sbuf *out, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '`') continue;
        if ((s[i] == '*' || s[i] == '_') && i + 1 < n && s[i + 1] == s[i]) {
            i++;
            continue;
        }
        if (s[i] == '*') {
            bool opens = (i == 0 || s[i - 1] == ' ' || s[i - 1] == '(') && !blank_at(s, n, i + 1);
            bool closes = i > 0 && s[i - 1] != ' ' && (blank_at(s, n, i + 1) || strchr(".,;:)!?", s[i + 1]));
            if (opens || closes) continue;
        }
        sb_add(out, s + i, 1);
    }
}

/* Wrap text (one block, spaces collapsed) into lines: first line prefixed by
 * first, later ones by an indent of the same width. */
static int wrap_block(cs_md *d, const char *text, const char *first, int width, int fg, int attr) {
    int pw = cs_utf8_width(first);
    int avail = width - pw > 10 ? width - pw : 10;
    sbuf line = {0};
    const char *p = text;
    bool at_first = true;
    while (*p) {
        while (*p == ' ') p++;
        if (!*p) break;
        sb_add(&line, "", 0);
        line.n = 0;
        if (at_first) sb_add(&line, first, strlen(first));
        else for (int i = 0; i < pw; i++) sb_add(&line, " ", 1);
        int cols = 0;
        const char *start = p, *cut = NULL;
        while (*p) {
            if (*p == ' ') cut = p;
            uint32_t cp;
            int k = cs_utf8_decode(p, &cp), cw = cs_cp_width(cp);
            if (cols + cw > avail && p > start) break;
            cols += cw;
            p += k;
        }
        if (*p && cut && cut > start) p = cut; /* break at the last space */
        sb_add(&line, start, (size_t)(p - start));
        if (push(d, line.s, line.n, fg, attr) < 0) {
            free(line.s);
            return -1;
        }
        at_first = false;
    }
    if (at_first && push(d, first, strlen(first), fg, attr) < 0) {
        free(line.s);
        return -1;
    }
    free(line.s);
    return 0;
}

/* A list item: "- x", "* x", "+ x" or "12. x". ind: its indent; text: where
 * its text starts; marker: the number and its dot, or empty for a bullet. */
static bool is_item(const char *s, size_t n, size_t *ind, size_t *text, size_t *marker) {
    size_t i = 0;
    while (i < n && s[i] == ' ') i++;
    *ind = i;
    if (i + 1 < n && (s[i] == '-' || s[i] == '*' || s[i] == '+') && s[i + 1] == ' ') {
        *text = i + 2;
        *marker = 0;
        return true;
    }
    size_t j = i;
    while (j < n && isdigit((unsigned char)s[j])) j++;
    if (j > i && j + 1 < n && (s[j] == '.' || s[j] == ')') && s[j + 1] == ' ') {
        *text = j + 2;
        *marker = j + 1 - i;
        return true;
    }
    return false;
}

typedef enum { B_NONE, B_PARA, B_ITEM, B_QUOTE } block;

typedef struct md_state {
    cs_md *d;
    int width;
    bool ascii;
    block kind;
    sbuf text;
    char prefix[32];
} md_state;

static int flush(md_state *st) {
    int rc = 0;
    if (st->kind != B_NONE && st->text.n) {
        int fg = st->kind == B_QUOTE ? CS_C_DEFAULT : CS_C_DEFAULT;
        int attr = st->kind == B_QUOTE ? CS_A_DIM : 0;
        rc = wrap_block(st->d, st->text.s, st->prefix, st->width, fg, attr);
    }
    st->kind = B_NONE;
    st->text.n = 0;
    if (st->text.s) st->text.s[0] = 0;
    return rc;
}

static void add_text(md_state *st, const char *s, size_t n) {
    while (n && (*s == ' ' || *s == '\t')) s++, n--; /* a continuation's indent */
    if (st->text.n) sb_add(&st->text, " ", 1);
    strip_inline(&st->text, s, n);
}

static int heading(md_state *st, const char *s, size_t n) {
    size_t lvl = 0;
    while (lvl < n && s[lvl] == '#') lvl++;
    size_t i = lvl;
    while (i < n && s[i] == ' ') i++;
    sbuf t = {0};
    strip_inline(&t, s + i, n - i);
    int rc = st->d->n && push(st->d, "", 0, 0, 0) < 0 ? -1 : 0;
    if (!rc) rc = wrap_block(st->d, t.s ? t.s : "", "", st->width, lvl <= 1 ? CS_C_CYAN : CS_C_YELLOW,
                             CS_A_BOLD | (lvl <= 1 ? CS_A_UNDERLINE : 0));
    free(t.s);
    return rc;
}

/* ---- tables: columns aligned, the |---| row a rule, the header bold; too
 * wide for the pane, each row's cells joined by " | " and wrapped */

#define MAX_COLS 16

typedef struct trow {
    char *cell[MAX_COLS];
    int n;
    bool rule;
} trow;

static void split_row(trow *r, const char *p, size_t n) {
    size_t i = p[0] == '|' ? 1 : 0;
    if (n > i && p[n - 1] == '|') n--;
    r->n = 0;
    r->rule = true;
    while (i <= n && r->n < MAX_COLS) {
        size_t j = i;
        while (j < n && p[j] != '|') j++;
        size_t a = i, b = j;
        while (a < b && p[a] == ' ') a++;
        while (b > a && p[b - 1] == ' ') b--;
        sbuf t = {0};
        strip_inline(&t, p + a, b - a);
        r->cell[r->n++] = t.s ? t.s : strdup("");
        for (size_t k = a; k < b; k++) r->rule &= p[k] == '-' || p[k] == ':';
        if (a == b) r->rule = false;
        i = j + 1;
    }
}

static int table(md_state *st, const char *p, size_t len) {
    trow *rows = NULL;
    int nr = 0, w[MAX_COLS] = {0}, ncol = 0, rc = 0;
    for (const char *q = p; q < p + len;) {
        const char *nl = memchr(q, '\n', (size_t)(p + len - q));
        size_t n = nl ? (size_t)(nl - q) : (size_t)(p + len - q);
        if (n && q[n - 1] == '\r') n--;
        trow *grown = realloc(rows, (size_t)(nr + 1) * sizeof *rows);
        if (!grown) { rc = -1; break; }
        rows = grown;
        split_row(&rows[nr], q, n);
        if (!rows[nr].rule)
            for (int c = 0; c < rows[nr].n; c++) {
                int cw = cs_utf8_width(rows[nr].cell[c]);
                if (cw > w[c]) w[c] = cw;
            }
        if (rows[nr].n > ncol) ncol = rows[nr].n;
        nr++;
        q = nl ? nl + 1 : p + len;
    }
    int total = 0;
    for (int c = 0; c < ncol; c++) total += w[c] + (c ? 2 : 0);
    bool header = nr > 1 && rows[1].rule;
    for (int i = 0; i < nr && !rc; i++) {
        sbuf t = {0};
        if (rows[i].rule && total <= st->width) {
            for (int k = 0; k < total; k++) sb_add(&t, st->ascii ? "-" : "─", st->ascii ? 1 : 3);
            rc = push(st->d, t.s, t.n, CS_C_DEFAULT, CS_A_DIM);
        } else if (!rows[i].rule) {
            for (int c = 0; c < rows[i].n; c++) {
                if (total > st->width) {
                    if (c) sb_add(&t, " | ", 3);
                    sb_add(&t, rows[i].cell[c], strlen(rows[i].cell[c]));
                    continue;
                }
                if (c) sb_add(&t, "  ", 2);
                sb_add(&t, rows[i].cell[c], strlen(rows[i].cell[c]));
                for (int k = cs_utf8_width(rows[i].cell[c]); k < w[c] && c + 1 < rows[i].n; k++)
                    sb_add(&t, " ", 1);
            }
            int attr = header && i == 0 ? CS_A_BOLD : 0;
            if (total > st->width)
                rc = wrap_block(st->d, t.s ? t.s : "", "", st->width, CS_C_DEFAULT, attr);
            else rc = push(st->d, t.s ? t.s : "", t.n, CS_C_DEFAULT, attr);
        }
        free(t.s);
    }
    for (int i = 0; i < nr; i++)
        for (int c = 0; c < rows[i].n; c++) free(rows[i].cell[c]);
    free(rows);
    return rc;
}

/* Without UTF-8 the screen draws what it cannot show as '?': the chapters'
 * formulas (t = α + n β) would read "? + n ?". Their symbols get ASCII
 * spellings; anything else is left to the screen. */
static const char *const spelled[][2] = {
    {"\u03b1", "alpha"}, {"\u03b2", "beta"}, {"\u03b3", "gamma"}, {"\u0394", "delta"},
    {"\u00b5", "u"},     {"\u03bc", "u"},    {"\u2212", "-"},     {"\u2013", "-"},
    {"\u2014", "--"},    {"\u00b7", "*"},    {"\u00d7", "x"},     {"\u00bd", "1/2"},
    {"\u221a", "sqrt"},  {"\u2248", "~"},    {"\u2264", "<="},    {"\u2265", ">="},
    {"\u2192", "->"},    {"\u2190", "<-"},   {"\u2026", "..."},   {"\u2018", "'"},
    {"\u2019", "'"},     {"\u201c", "\""},   {"\u201d", "\""},    {"\u2022", "*"},
    {"\u2713", "v"},     {"\u2717", "X"},
};

static char *ascii_spelling(const char *md) {
    sbuf t = {0};
    int rc = sb_add(&t, "", 0); /* an empty text is "" too */
    for (const char *p = md; *p && rc == 0;) {
        size_t k = 0;
        if ((unsigned char)*p >= 0x80)
            for (size_t i = 0; i < sizeof spelled / sizeof spelled[0] && !k; i++)
                if (strncmp(p, spelled[i][0], strlen(spelled[i][0])) == 0) {
                    k = strlen(spelled[i][0]);
                    rc = sb_add(&t, spelled[i][1], strlen(spelled[i][1]));
                }
        if (!k) rc = sb_add(&t, p, k = 1);
        p += k;
    }
    if (rc) free(t.s);
    return rc ? NULL : t.s;
}

static int layout(cs_md *out, const char *md, int width, bool ascii) {
    memset(out, 0, sizeof *out);
    md_state st = {.d = out, .width = width > 20 ? width : 20, .ascii = ascii};
    out->ascii = ascii;
    bool code = false;
    int rc = 0;
    for (const char *p = md; *p && rc == 0;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        if (n && p[n - 1] == '\r') n--;
        size_t ind, at, marker;
        if (n >= 3 && strncmp(p, "```", 3) == 0) {
            rc = flush(&st);
            code = !code;
        } else if (code) {
            sbuf t = {0};
            sb_add(&t, "  ", 2);
            sb_add(&t, p, n);
            rc = push(out, t.s, t.n, CS_C_GREEN, 0);
            free(t.s);
        } else if (n == 0) {
            rc = flush(&st);
            if (!rc && out->n && out->line[out->n - 1].text[0]) rc = push(out, "", 0, 0, 0);
        } else if (p[0] == '#') {
            rc = flush(&st);
            if (!rc) rc = heading(&st, p, n);
        } else if (p[0] == '|') { /* a table: its lines together */
            const char *end = p;
            while (*end == '|') {
                const char *e = strchr(end, '\n');
                end = e ? e + 1 : end + strlen(end);
            }
            rc = flush(&st);
            if (!rc) rc = table(&st, p, (size_t)(end - p));
            p = end;
            continue;
        } else if (p[0] == '>') {
            if (st.kind != B_QUOTE) {
                rc = flush(&st);
                st.kind = B_QUOTE;
                strcpy(st.prefix, ascii ? "| " : "│ ");
            }
            add_text(&st, p + 1, n - 1);
        } else if (is_item(p, n, &ind, &at, &marker)) {
            rc = flush(&st);
            st.kind = B_ITEM;
            if (marker) snprintf(st.prefix, sizeof st.prefix, "%*s%.*s ", (int)(ind > 8 ? 8 : ind), "", (int)marker, p + ind);
            else snprintf(st.prefix, sizeof st.prefix, "%*s%s ", (int)(ind > 8 ? 8 : ind), "", ascii ? "*" : "•");
            add_text(&st, p + at, n - at);
        } else {
            if (st.kind == B_NONE) {
                st.kind = B_PARA;
                st.prefix[0] = 0;
            }
            add_text(&st, p, n);
        }
        p = nl ? nl + 1 : p + n;
    }
    if (!rc) rc = flush(&st);
    free(st.text.s);
    if (rc) cs_md_free(out);
    return rc;
}

int cs_md_layout(cs_md *out, const char *md, int width, bool ascii) {
    if (ascii) {
        char *spelled_md = ascii_spelling(md);
        memset(out, 0, sizeof *out);
        if (!spelled_md) return -1;
        int rc = layout(out, spelled_md, width, ascii);
        free(spelled_md);
        return rc;
    }
    return layout(out, md, width, ascii);
}

void cs_md_free(cs_md *d) {
    for (int i = 0; i < d->n; i++) free(d->line[i].text);
    free(d->line);
    memset(d, 0, sizeof *d);
}

void cs_md_draw(const cs_md *d, cs_grid *g, int x, int y, int w, int h, int top) {
    for (int i = 0; i < h && top + i < d->n; i++) {
        if (top + i < 0) continue;
        const cs_md_line *l = &d->line[top + i];
        cs_grid_put(g, x, y + i, w, l->text, l->fg, l->attr);
        if (w > 1 && cs_utf8_width(l->text) > w)
            cs_grid_putc(g, x + w - 1, y + i, d->ascii ? '>' : 0x2026, CS_C_YELLOW, CS_A_BOLD);
    }
}
