/* xalloc.h -- allocation that cannot fail quietly.
 *
 * The monitor and the event path must not go on with a model that misses an
 * event: a dropped post or collective would change the verdict without a word.
 * Where an allocation failure has no sensible way back, these end the process
 * with "commsim CMD: out of memory: cannot allocate WHAT (N bytes)" and status 1,
 * as htop's xMalloc and Redis's zmalloc do.
 */
#ifndef CS_XALLOC_H
#define CS_XALLOC_H

#include <stddef.h>

/* Say what could not be allocated and exit with status 1. */
_Noreturn void cs_oom(const char *what, size_t bytes);

void *cs_xmalloc(size_t n, const char *what);
void *cs_xcalloc(size_t count, size_t size, const char *what);
void *cs_xrealloc(void *p, size_t n, const char *what);
char *cs_xstrdup(const char *s, const char *what); /* NULL stays NULL */

/* Tests only: make the n-th allocation from now fail (0: never). */
void cs_xalloc_fail_after(unsigned long n);

#endif
