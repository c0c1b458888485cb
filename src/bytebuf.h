/* bytebuf.h -- a growing run of bytes: data[0, len) in use, cap allocated.
 * Zero-initialised is empty. The trace's lines, the output queue's pending
 * writes and a rank link's frames all gather in one. */
#ifndef CS_BYTEBUF_H
#define CS_BYTEBUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct cs_bytebuf {
    char *data;
    size_t len, cap;
} cs_bytebuf;

/* Room for n more bytes past b->len (b->cap doubles, from 4 KiB); false
 * when out of memory, b unchanged. Inline: encoders ask on every line. */
bool cs_bytebuf_grow(cs_bytebuf *b, size_t n);
static inline bool cs_bytebuf_room(cs_bytebuf *b, size_t n) {
    return b->len + n <= b->cap || cs_bytebuf_grow(b, n);
}
/* Append n bytes; false when out of memory, b unchanged. */
bool cs_bytebuf_append(cs_bytebuf *b, const void *p, size_t n);
/* Free the bytes; b is empty again. */
void cs_bytebuf_free(cs_bytebuf *b);

#endif
