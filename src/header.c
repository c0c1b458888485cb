/* header.c -- the "--- key: value" lines at the top of a lesson script.
 *
 * The header is the leading block of comment lines (blank lines and a "#!"
 * first line allowed); it ends at the first line of code. Within it, lines of
 * the form "--- key: value" are entries. Known keys: title, world, send-mode,
 * net, expect. Unknown keys are ignored (lessons may carry notes for other tools),
 * but one within two typing slips of a known key (wrld, send_mode) is most
 * likely that key misspelt, and is named in a warning; a malformed value of a
 * known key is an error naming the line.
 *
 * For world, send-mode, net and expect the value is one word; what follows may only
 * be a remark in parentheses or after "--":  "--- expect: ok   (or: deadlock)".
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api.h"
#include "netmodel.h"
#include "header.h"

#define CS_HEADER_MAX_WORLD 4096

typedef struct line_ctx {
    const char *name;
    int lineno;
    char *err;
    size_t errlen;
} line_ctx;

static int header_fail(const line_ctx *lc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int header_fail(const line_ctx *lc, const char *fmt, ...) {
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (lc->err && lc->errlen) snprintf(lc->err, lc->errlen, "%s:%d: %s", lc->name, lc->lineno, what);
    return -1;
}

static const char *skip_space(const char *p, const char *end) {
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    return p;
}

static const char *trim_end(const char *p, const char *end) {
    while (end > p && isspace((unsigned char)end[-1])) end--;
    return end;
}

/* The single word of a value into out; the rest may only be a remark. */
static int one_word(const line_ctx *lc, const char *key, const char *v, const char *end, char *out,
                    size_t outlen) {
    const char *w = v;
    while (w < end && !isspace((unsigned char)*w)) w++;
    if (w == v) return header_fail(lc, "%s: missing value", key);
    const char *rest = skip_space(w, end);
    if (rest < end && *rest != '(' && !(end - rest >= 2 && rest[0] == '-' && rest[1] == '-'))
        return header_fail(lc, "%s: expected one value, got '%.*s'", key, (int)(end - v), v);
    if ((size_t)(w - v) >= outlen)
        return header_fail(lc, "%s: value too long: '%.*s'", key, (int)(w - v), v);
    memcpy(out, v, (size_t)(w - v));
    out[w - v] = '\0';
    return 0;
}

static int parse_world(const line_ctx *lc, const char *word, int *world) {
    char *endp;
    errno = 0;
    long n = strtol(word, &endp, 10);
    if (*word == '\0' || *endp != '\0' || errno || !isdigit((unsigned char)*word) || n < 1 ||
        n > CS_HEADER_MAX_WORLD)
        return header_fail(lc, "world: expected a number of ranks from 1 to %d, got '%s'",
                           CS_HEADER_MAX_WORLD, word);
    *world = (int)n;
    return 0;
}

static int parse_expect(const line_ctx *lc, const char *word) {
    static const char *const known[] = {"ok", "deadlock", "error", "timeout", NULL};
    for (const char *const *k = known; *k; k++)
        if (strcmp(*k, word) == 0) return 0;
    return header_fail(lc, "expect: unknown value '%s' (ok, deadlock, error or timeout)", word);
}

/* Edits (insert, delete, replace, swap two neighbours) from a to b, up to 3. */
static int slips(const char *a, const char *b) {
    size_t n = strlen(a), m = strlen(b);
    if (n > 31 || m > 31 || (n > m ? n - m : m - n) > 2) return 3;
    int d[32][32];
    for (size_t i = 0; i <= n; i++) d[i][0] = (int)i;
    for (size_t j = 0; j <= m; j++) d[0][j] = (int)j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            int c = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
            int v = d[i - 1][j - 1] + c;
            if (d[i - 1][j] + 1 < v) v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[n][m] < 3 ? d[n][m] : 3;
}

/* An unknown key: a known one misspelt? Up to two slips from a key of four
 * letters or more, one from net (nett). */
static void near_miss(const line_ctx *lc, const char *key, cs_header *h) {
    static const char *const known[] = {"title", "world", "send-mode", "net", "expect"};
    if (h->warning[0]) return;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        int d = slips(key, known[i]);
        if (d <= (strlen(known[i]) >= 4 ? 2 : 1)) {
            snprintf(h->warning, sizeof h->warning,
                     "%s:%d: unknown header key '%s', ignored (did you mean '%s'?)", lc->name,
                     lc->lineno, key, known[i]);
            return;
        }
    }
}

/* One "--- key: value" entry (p..end is the text after "---"). */
static int parse_entry(const line_ctx *lc, const char *p, const char *end, cs_header *h) {
    p = skip_space(p, end);
    const char *colon = memchr(p, ':', (size_t)(end - p));
    if (!colon) return 0; /* prose, a separator: not an entry */
    const char *kend = trim_end(p, colon);
    char key[32];
    if (kend == p || (size_t)(kend - p) >= sizeof key) return 0;
    for (const char *c = p; c < kend; c++)
        if (!isalnum((unsigned char)*c) && *c != '-' && *c != '_') return 0;
    memcpy(key, p, (size_t)(kend - p));
    key[kend - p] = '\0';
    const char *v = skip_space(colon + 1, end);
    end = trim_end(v, end);

    char word[64];
    if (strcasecmp(key, "title") == 0) {
        size_t n = (size_t)(end - v) < sizeof h->title ? (size_t)(end - v) : sizeof h->title - 1;
        memcpy(h->title, v, n);
        h->title[n] = '\0';
    } else if (strcasecmp(key, "world") == 0) {
        if (one_word(lc, "world", v, end, word, sizeof word) < 0) return -1;
        return parse_world(lc, word, &h->world);
    } else if (strcasecmp(key, "send-mode") == 0) {
        cs_send_mode m;
        if (one_word(lc, "send-mode", v, end, word, sizeof word) < 0) return -1;
        if (!cs_send_mode_parse(word, &m))
            return header_fail(lc, "send-mode: expected rendezvous, eager or eager:BYTES, got '%s'",
                               word);
        snprintf(h->send_mode, sizeof h->send_mode, "%s", word);
    } else if (strcasecmp(key, "net") == 0) {
        char model[128], msg[256];
        cs_netmodel m;
        if (one_word(lc, "net", v, end, model, sizeof model) < 0) return -1;
        if (cs_netmodel_parse(model, &m, msg, sizeof msg) < 0)
            return header_fail(lc, "net: %s", msg + strlen("--net: "));
        snprintf(h->net, sizeof h->net, "%s", model);
    } else if (strcasecmp(key, "expect") == 0) {
        if (one_word(lc, "expect", v, end, word, sizeof word) < 0) return -1;
        if (parse_expect(lc, word) < 0) return -1;
        snprintf(h->expect, sizeof h->expect, "%s", word);
    } else
        near_miss(lc, key, h);
    return 0;
}

int cs_header_parse(const char *name, const char *src, size_t len, cs_header *h, char *err,
                    size_t errlen) {
    memset(h, 0, sizeof *h);
    if (err && errlen) err[0] = '\0';
    line_ctx lc = {.name = name ? name : "script", .err = err, .errlen = errlen};
    const char *p = src, *end = src + len;
    for (lc.lineno = 1; p < end; lc.lineno++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *eol = nl ? nl : end;
        const char *s = skip_space(p, eol);
        bool blank = trim_end(s, eol) == s;
        bool shebang = lc.lineno == 1 && eol - p >= 2 && p[0] == '#' && p[1] == '!';
        bool comment = eol - s >= 2 && s[0] == '-' && s[1] == '-';
        if (!blank && !shebang && !comment) break; /* the first line of code */
        if (comment && eol - s >= 3 && s[2] == '-' && parse_entry(&lc, s + 3, eol, h) < 0)
            return -1;
        p = nl ? nl + 1 : end;
    }
    return 0;
}
