/* errmsg.c -- the prefix of commsim's messages on standard error. */
#include "errmsg.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Written once at start-up, read by any thread afterwards. */
static char prefix[40] = "commsim";

void cs_errmsg_command(const char *cmd) {
    if (cmd) snprintf(prefix, sizeof prefix, "commsim %.31s", cmd);
    else snprintf(prefix, sizeof prefix, "commsim");
}

const char *cs_errmsg_prefix(void) { return prefix; }

/* Whether s holds a byte cs_fput_text would escape (newlines kept). */
static bool has_control(const char *s) {
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p < 0x20 && *p != '\t' && *p != '\n') || *p == 0x7f || (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f))
            return true;
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
    size_t run = 0; /* bytes written as they are, not yet written */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        bool c1 = c == 0xc2 && i + 1 < n && (unsigned char)s[i + 1] >= 0x80 &&
                  (unsigned char)s[i + 1] <= 0x9f;
        if (!c1 && !((c < 0x20 && c != '\t' && !(c == '\n' && keep_nl)) || c == 0x7f)) continue;
        fwrite(s + run, 1, i - run, f);
        if (c1) fprintf(f, "\\u00%02X", (unsigned char)s[++i]);
        else fprintf(f, "\\x%02X", c);
        run = i + 1;
    }
    fwrite(s + run, 1, n - run, f);
}
