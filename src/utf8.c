/* utf8.c -- recognising well-formed UTF-8 in a script's bytes. */
#include "utf8.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

size_t cs_utf8_seq(const char *str, size_t n) {
    const unsigned char *s = (const unsigned char *)str;
    unsigned c = s[0];
    size_t len;
    uint32_t cp, min;

    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) { len = 2; cp = c & 0x1F; min = 0x80; }
    else if ((c & 0xF0) == 0xE0) { len = 3; cp = c & 0x0F; min = 0x800; }
    else if (c >= 0xF0 && c <= 0xF4) { len = 4; cp = c & 0x07; min = 0x10000; }
    else return 0;
    if (n < len) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return len;
}

char *cs_utf8_clean(const char *s) {
    size_t n = strlen(s), k = 0;
    char *clean = malloc(n * 3 + 1);
    if (!clean) return NULL;
    for (size_t i = 0; i < n;) {
        size_t len = cs_utf8_seq(s + i, n - i);
        if (len) memcpy(clean + k, s + i, len), k += len, i += len;
        else memcpy(clean + k, CS_UTF8_REPLACEMENT, 3), k += 3, i++;
    }
    clean[k] = 0;
    return clean;
}
