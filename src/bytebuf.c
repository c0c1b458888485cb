/* bytebuf.c -- a growing run of bytes (see bytebuf.h). */
#include "bytebuf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

bool cs_bytebuf_grow(cs_bytebuf *b, size_t n) {
    if (b->len + n <= b->cap) return true;
    if (n > SIZE_MAX / 2 - b->len) return false; /* the doubling below would overflow */
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n) cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) return false;
    b->data = p;
    b->cap = cap;
    return true;
}

bool cs_bytebuf_append(cs_bytebuf *b, const void *p, size_t n) {
    if (n == 0) return true; /* an empty buffer's data is NULL: no memcpy */
    if (!cs_bytebuf_room(b, n)) return false;
    memcpy(b->data + b->len, p, n);
    b->len += n;
    return true;
}

void cs_bytebuf_free(cs_bytebuf *b) {
    free(b->data);
    memset(b, 0, sizeof *b);
}
