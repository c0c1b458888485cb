/* msgbuf.h -- message buffers: where a message's bytes wait for their receive.
 *
 * An eager send that finds no receive, a tcp message read before its receive
 * is posted, a frame that waits in a send queue: each needs its bytes copied
 * aside. A fresh multi-megabyte malloc per message is a fresh mmap whose every
 * page faults in on the copy (for 4 MiB messages, most of the time spent);
 * large buffers are kept here for the next message instead.
 */
#ifndef CS_MSGBUF_H
#define CS_MSGBUF_H

#include <stddef.h>

/* At least n bytes (n may be 0), or NULL when out of memory. */
void *cs_msgbuf_alloc(size_t n);
/* Give p back (NULL-safe); a large one is kept for a later cs_msgbuf_alloc. */
void cs_msgbuf_free(void *p);

#endif
