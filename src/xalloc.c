/* xalloc.c -- allocation that cannot fail quietly (see xalloc.h). */
#include "errmsg.h"
#include "xalloc.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Atomic unsigned long fail_countdown;

void cs_xalloc_fail_after(unsigned long n) { atomic_store(&fail_countdown, n); }

/* The injected failure of the tests: true once, on the n-th call. */
static int injected(void) {
    unsigned long n = atomic_load(&fail_countdown);
    while (n && !atomic_compare_exchange_weak(&fail_countdown, &n, n - 1)) {}
    return n == 1;
}

_Noreturn void cs_oom(const char *what, size_t bytes) {
    /* stderr is unbuffered: the line is out before exit runs the handlers
     * (the visualizer's restores the terminal). */
    cs_errf(stderr,
            "out of memory: cannot allocate %s (%zu bytes); the run cannot go on\n",
            what ? what : "memory", bytes);
    exit(1);
}

void *cs_xmalloc(size_t n, const char *what) {
    void *p = injected() ? NULL : malloc(n ? n : 1);
    if (!p) cs_oom(what, n);
    return p;
}

void *cs_xcalloc(size_t count, size_t size, const char *what) {
    void *p = injected() ? NULL : calloc(count ? count : 1, size ? size : 1);
    if (!p) cs_oom(what, count * size);
    return p;
}

void *cs_xrealloc(void *p, size_t n, const char *what) {
    void *q = injected() ? NULL : realloc(p, n ? n : 1);
    if (!q) cs_oom(what, n);
    return q;
}

char *cs_xstrdup(const char *s, const char *what) {
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *d = cs_xmalloc(n, what);
    memcpy(d, s, n);
    return d;
}
