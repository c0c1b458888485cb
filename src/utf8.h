/* utf8.h -- what a script's text is: Lua strings are bytes, and the places
 * that need Unicode (JSON, a terminal) take only well-formed UTF-8. */
#ifndef CS_UTF8_H
#define CS_UTF8_H

#include <stddef.h>

/* Length of the well-formed UTF-8 sequence at s (n > 0 bytes left), or 0
 * when s does not start one. The same rules as jansson's check: no overlong
 * forms, no surrogates, at most U+10FFFF. */
size_t cs_utf8_seq(const char *s, size_t n);

/* U+FFFD, which stands for each byte that starts no sequence. */
#define CS_UTF8_REPLACEMENT "\xEF\xBF\xBD"

/* A copy of s (malloc'd; NULL when out of memory) with each byte that starts
 * no sequence replaced by U+FFFD: what JSON, which must be Unicode, can hold. */
char *cs_utf8_clean(const char *s);

#endif
