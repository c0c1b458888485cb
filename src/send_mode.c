/* send_mode.c -- the send modes (--send-mode, a script's `--- send-mode:`):
 * rendezvous, eager, and eager up to N bytes; parsing, printing, and which
 * sends of a mode are buffered. */
#include "api.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool cs_send_mode_parse(const char *s, cs_send_mode *out) {
    if (strcmp(s, "rendezvous") == 0) {
        *out = (cs_send_mode){.eager_limit = 0, .rendezvous_only = true};
        return true;
    }
    if (strcmp(s, "eager") == 0) {
        *out = (cs_send_mode){.eager_limit = SIZE_MAX};
        return true;
    }
    if (strncmp(s, "eager:", 6) == 0) {
        const char *num = s + 6;
        char *end;
        errno = 0;
        unsigned long long n = strtoull(num, &end, 10);
        if (*num < '0' || *num > '9' || errno || end == num) return false;
        int shift = 0;
        if (*end == 'k' || *end == 'K') shift = 10, end++;
        else if (*end == 'm' || *end == 'M') shift = 20, end++;
        if (*end || n > (SIZE_MAX >> shift)) return false; /* a limit that wraps is no limit */
        n <<= shift;
        *out = (cs_send_mode){.eager_limit = (size_t)n};
        return true;
    }
    return false;
}

const char *cs_send_mode_format(const cs_send_mode *m, char *buf, size_t len) {
    if (m->rendezvous_only) snprintf(buf, len, "rendezvous");
    else if (m->eager_limit == SIZE_MAX) snprintf(buf, len, "eager");
    else snprintf(buf, len, "eager:%zu", m->eager_limit);
    return buf;
}

bool cs_send_mode_is_eager(const cs_send_mode *m, size_t bytes) {
    return !m->rendezvous_only && bytes <= m->eager_limit;
}
