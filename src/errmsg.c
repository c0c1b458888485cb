/* errmsg.c -- the prefix of commsim's messages on standard error. */
#include "errmsg.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

/* Written once at start-up, read by any thread afterwards. */
static char prefix[40] = "commsim";

void cs_errmsg_command(const char *cmd) {
    if (cmd) snprintf(prefix, sizeof prefix, "commsim %.31s", cmd);
    else snprintf(prefix, sizeof prefix, "commsim");
}

const char *cs_errmsg_prefix(void) { return prefix; }

/* What cs_fput_text makes of the text at s (n > 0 bytes left): written as
 * it is, a control character, a C1 control (U+0080 to U+009F), or a byte
 * that starts no UTF-8 sequence. *len: the bytes it takes. */
enum { TEXT_PLAIN, TEXT_CONTROL, TEXT_C1, TEXT_NOT_UTF8 };

static int text_unit(const char *s, size_t n, bool keep_nl, size_t *len) {
    unsigned char c = (unsigned char)s[0];
    *len = cs_utf8_seq(s, n);
    if (!*len) return *len = 1, TEXT_NOT_UTF8;
    if (*len == 2 && c == 0xC2 && (unsigned char)s[1] <= 0x9F) return TEXT_C1;
    if ((c < 0x20 && c != '\t' && !(c == '\n' && keep_nl)) || c == 0x7F) return TEXT_CONTROL;
    return TEXT_PLAIN;
}

/* Whether s holds text cs_fput_text would not write as it is (newlines kept). */
static bool has_control(const char *s) {
    size_t n = strlen(s), len;
    for (size_t i = 0; i < n; i += len)
        if (text_unit(s + i, n - i, true, &len) != TEXT_PLAIN) return true;
    return false;
}

void cs_errf(FILE *f, const char *fmt, ...) {
    va_list ap, aq;
    va_start(ap, fmt);
    va_copy(aq, ap);
    /* one write when it fits: ranks' messages do not interleave mid-line */
    char line[2048];
    int n = snprintf(line, sizeof line, "%s: ", prefix);
    int m = vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    if (m >= 0 && (size_t)(n + m) < sizeof line && !has_control(line)) {
        fputs(line, f);
    } else {
        /* long, or holding a script's text (a syntax error quotes its
         * source, a path its name) with control characters: shown, not
         * obeyed, still in one write */
        char *msg = NULL, *out = NULL;
        size_t len = 0;
        FILE *mf = vasprintf(&msg, fmt, aq) < 0 ? NULL : open_memstream(&out, &len);
        if (mf) {
            fprintf(mf, "%s: ", prefix);
            cs_fput_text(mf, msg, strlen(msg), true);
        }
        if (mf && fclose(mf) == 0) fputs(out, f);
        else fputs(line, f);
        free(msg), free(out);
    }
    va_end(aq);
    va_end(ap);
}

void cs_fput_text(FILE *f, const char *s, size_t n, bool keep_nl) {
    size_t run = 0, len; /* s[run..i) is written as it is, not yet written */
    for (size_t i = 0; i < n; i += len) {
        int kind = text_unit(s + i, n - i, keep_nl, &len);
        if (kind == TEXT_PLAIN) continue;
        fwrite(s + run, 1, i - run, f);
        if (kind == TEXT_NOT_UTF8) fputs(CS_UTF8_REPLACEMENT, f);
        else if (kind == TEXT_C1) fprintf(f, "\\u00%02X", (unsigned char)s[i + 1]);
        else fprintf(f, "\\x%02X", (unsigned char)s[i]);
        run = i + len;
    }
    fwrite(s + run, 1, n - run, f);
}
