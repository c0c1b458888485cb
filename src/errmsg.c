/* errmsg.c -- the prefix of commsim's messages on standard error. */
#include "errmsg.h"

#include <stdarg.h>

/* Written once at start-up, read by any thread afterwards. */
static char prefix[40] = "commsim";

void cs_errmsg_command(const char *cmd) {
    if (cmd) snprintf(prefix, sizeof prefix, "commsim %.31s", cmd);
    else snprintf(prefix, sizeof prefix, "commsim");
}

const char *cs_errmsg_prefix(void) { return prefix; }

void cs_errf(FILE *f, const char *fmt, ...) {
    va_list ap, aq;
    va_start(ap, fmt);
    va_copy(aq, ap);
    /* one write when it fits: ranks' messages do not interleave mid-line */
    char line[2048];
    int n = snprintf(line, sizeof line, "%s: ", prefix);
    int m = vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    if (m >= 0 && (size_t)(n + m) < sizeof line) fputs(line, f);
    else fprintf(f, "%s: ", prefix), vfprintf(f, fmt, aq);
    va_end(aq);
    va_end(ap);
}
