/* device.c -- what every build of the device module shares: device names
 * ("cpu", "cuda:1") and the per-thread error message. The runtime half is
 * device_cuda.c or device_none.c (see device.h).
 */
#include "device.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local char errbuf[256];

void cs_device_fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errbuf, sizeof errbuf, fmt, ap);
    va_end(ap);
}

const char *cs_device_errmsg(void) {
    return errbuf;
}

const char *cs_device_name(int dev, char *buf, size_t len) {
    if (dev == CS_DEVICE_CPU) snprintf(buf, len, "cpu");
    else if (dev == CS_DEVICE_CURRENT) snprintf(buf, len, "cuda");
    else snprintf(buf, len, "cuda:%d", dev);
    return buf;
}

bool cs_device_parse(const char *s, int *out) {
    if (!s) return false;
    if (strcmp(s, "cpu") == 0) {
        *out = CS_DEVICE_CPU;
        return true;
    }
    if (strncmp(s, "cuda", 4) != 0) return false;
    if (s[4] == '\0') {
        *out = CS_DEVICE_CURRENT;
        return true;
    }
    if (s[4] != ':' || s[5] < '0' || s[5] > '9') return false;
    char *end;
    long v = strtol(s + 5, &end, 10);
    if (*end || v > 1023) return false; /* no machine has more; keeps it an int */
    *out = (int)v;
    return true;
}
