/* msgbuf.c -- buffers for message bytes that wait (see msgbuf.h). Owns the cache
 * of large free buffers: a short list under one mutex, taken and given back
 * once per message, never held across a copy. */
#include "msgbuf.h"

#include <pthread.h>
#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>

/* Buffers smaller than this are plain mallocs (the allocator's own free lists
 * serve them well); larger ones are cached, up to CACHE_MAX bytes in all. */
#define CACHE_FROM (64u << 10)
#define CACHE_MAX (64u << 20)
#define CACHE_SLOTS 32

/* Each buffer is preceded by its capacity; the header keeps malloc's alignment. */
typedef struct {
    alignas(max_align_t) size_t cap;
} header;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static header *slot[CACHE_SLOTS];
static int nslots;
static size_t cached; /* bytes in slot[] */

void *cs_msgbuf_alloc(size_t n) {
    header *h = NULL;
    int best = -1;

    if (n >= CACHE_FROM) {
        /* the smallest cached buffer that holds n without wasting half of it */
        pthread_mutex_lock(&lock);
        for (int i = 0; i < nslots; i++)
            if (slot[i]->cap >= n && slot[i]->cap / 2 <= n &&
                (best < 0 || slot[i]->cap < slot[best]->cap))
                best = i;
        if (best >= 0) {
            h = slot[best];
            slot[best] = slot[--nslots];
            cached -= h->cap;
        }
        pthread_mutex_unlock(&lock);
    }
    if (!h) {
        if (n > SIZE_MAX - sizeof *h) return NULL;
        if (!(h = malloc(sizeof *h + n))) return NULL;
        h->cap = n;
    }
    return h + 1;
}

void cs_msgbuf_free(void *p) {
    header *h;

    if (!p) return;
    h = (header *)p - 1;
    if (h->cap >= CACHE_FROM) {
        pthread_mutex_lock(&lock);
        if (nslots < CACHE_SLOTS && cached + h->cap <= CACHE_MAX) {
            slot[nslots++] = h;
            cached += h->cap;
            h = NULL;
        }
        pthread_mutex_unlock(&lock);
    }
    free(h);
}
