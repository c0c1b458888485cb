/* grid.c -- the cell grid and the little UTF-8 it needs. */
#include "grid.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

int cs_grid_init(cs_grid *g, int w, int h) {
    g->w = w > 0 ? w : 1;
    g->h = h > 0 ? h : 1;
    g->cells = malloc((size_t)g->w * (size_t)g->h * sizeof *g->cells);
    if (!g->cells) return -1;
    cs_grid_clear(g);
    return 0;
}

void cs_grid_free(cs_grid *g) {
    free(g->cells);
    g->cells = NULL;
    g->w = g->h = 0;
}

void cs_grid_clear(cs_grid *g) {
    for (int i = 0; i < g->w * g->h; i++) g->cells[i] = (cs_cell){' ', CS_C_DEFAULT, 0};
}

cs_cell *cs_grid_at(cs_grid *g, int x, int y) {
    if (x < 0 || y < 0 || x >= g->w || y >= g->h) return NULL;
    return &g->cells[(size_t)y * (size_t)g->w + (size_t)x];
}

/* Writing over half of a double-width character blanks its other half, so
 * that no cell is left claiming a neighbour it no longer has. */
void cs_grid_putc(cs_grid *g, int x, int y, uint32_t ch, int fg, int attr) {
    cs_cell *c = cs_grid_at(g, x, y), *next = cs_grid_at(g, x + 1, y), *prev;
    if (!c) return;
    if (c->ch == CS_CELL_CONT && ch != CS_CELL_CONT && (prev = cs_grid_at(g, x - 1, y)))
        prev->ch = ' ';
    if (next && next->ch == CS_CELL_CONT) next->ch = ' ';
    *c = (cs_cell){ch, (uint8_t)fg, (uint8_t)attr};
}

int cs_utf8_decode(const char *s, uint32_t *cp) {
    const unsigned char *u = (const unsigned char *)s;
    int n = u[0] < 0x80 ? 1 : (u[0] >> 5) == 6 ? 2 : (u[0] >> 4) == 14 ? 3 : (u[0] >> 3) == 30 ? 4 : 0;
    if (n == 0) { *cp = 0xFFFD; return 1; }
    uint32_t c = n == 1 ? u[0] : u[0] & (0x7F >> n);
    for (int i = 1; i < n; i++) {
        if ((u[i] & 0xC0) != 0x80) { *cp = 0xFFFD; return 1; }
        c = c << 6 | (u[i] & 0x3F);
    }
    *cp = c;
    return n;
}

int cs_utf8_encode(uint32_t cp, char *out) {
    if (cp < 0x80) { out[0] = (char)cp; return 1; }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

int cs_cp_width(uint32_t cp) {
    if (cp < 0x7F) return 1;
    int w = wcwidth((wchar_t)cp);
    return w < 0 ? 1 : w;
}

int cs_utf8_cols(const char *s, size_t n) {
    int w = 0;
    uint32_t cp;
    for (size_t i = 0; i < n && s[i];) {
        i += (size_t)cs_utf8_decode(s + i, &cp);
        w += cs_cp_width(cp);
    }
    return w;
}

int cs_utf8_width(const char *s) { return cs_utf8_cols(s, strlen(s)); }

int cs_grid_put(cs_grid *g, int x, int y, int maxw, const char *s, int fg, int attr) {
    int n = 0;
    uint32_t cp;
    while (*s && n < maxw && x + n < g->w) {
        s += cs_utf8_decode(s, &cp);
        if (cp == '\t') cp = ' ';
        /* C1 controls act on a terminal too (U+009B is CSI), and the line
         * separators end a line for a reader of the asciicast */
        if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0) || cp == 0x2028 || cp == 0x2029) cp = '?';
        int cw = cs_cp_width(cp);
        if (cw == 0) continue;
        if (cw == 2) {
            if (n + 2 > maxw || x + n + 2 > g->w) break; /* half a character is none */
            cs_grid_putc(g, x + n++, y, cp, fg, attr);
            cp = CS_CELL_CONT;
        }
        cs_grid_putc(g, x + n++, y, cp, fg, attr);
    }
    return n;
}

int cs_grid_printf(cs_grid *g, int x, int y, int maxw, int fg, int attr, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return cs_grid_put(g, x, y, maxw, buf, fg, attr);
}

void cs_grid_fill(cs_grid *g, int x, int y, int w, int h, uint32_t ch, int fg, int attr) {
    for (int j = y; j < y + h; j++)
        for (int i = x; i < x + w; i++) cs_grid_putc(g, i, j, ch, fg, attr);
}

char *cs_grid_row(const cs_grid *g, int y, char *buf, size_t len) {
    size_t n = 0;
    for (int x = 0; y >= 0 && y < g->h && x < g->w; x++) {
        char u[4];
        uint32_t ch = g->cells[(size_t)y * (size_t)g->w + (size_t)x].ch;
        if (ch == CS_CELL_CONT) continue; /* drawn by the cell before */
        int k = cs_utf8_encode(ch, u);
        if (n + (size_t)k + 1 > len) break;
        memcpy(buf + n, u, (size_t)k);
        n += (size_t)k;
    }
    if (len) buf[n] = 0;
    return buf;
}

char *cs_grid_text(const cs_grid *g) {
    size_t cap = (size_t)g->h * ((size_t)g->w * 4 + 1) + 1, n = 0;
    char *out = malloc(cap);
    if (!out) return NULL;
    for (int y = 0; y < g->h; y++) {
        cs_grid_row(g, y, out + n, cap - n);
        size_t k = strlen(out + n);
        while (k && out[n + k - 1] == ' ') k--;
        n += k;
        out[n++] = '\n';
    }
    out[n] = 0;
    return out;
}
