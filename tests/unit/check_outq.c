/* check_outq.c -- the output queue (src/outq.c): both streams reach their
 * descriptors in the order printed, whole; a printer waits past the cap of
 * unwritten bytes and goes on once the reader takes them; closing writes
 * everything; a descriptor that refuses drops its bytes without stopping the
 * other stream. */
#include <check.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "outq.h"
#include "run_suite.h"

/* A thread reading a descriptor to its end. */
typedef struct reader {
    int fd;
    char *s;
    size_t len;
    pthread_t t;
} reader;

static void *read_all(void *arg) {
    reader *r = arg;
    size_t cap = 1 << 16;
    ssize_t k;
    r->s = malloc(cap);
    while (r->s && (k = read(r->fd, r->s + r->len, cap - r->len)) > 0)
        if ((r->len += (size_t)k) == cap) r->s = realloc(r->s, cap *= 2);
    return NULL;
}

static void reader_start(reader *r, int fd) {
    memset(r, 0, sizeof *r);
    r->fd = fd;
    ck_assert_int_eq(pthread_create(&r->t, NULL, read_all, r), 0);
}

static void reader_join(reader *r) {
    pthread_join(r->t, NULL);
    close(r->fd);
    ck_assert_ptr_nonnull(r->s);
}

/* Lines to out and err, alternating, into one pipe: the order printed. */
START_TEST(test_order_across_streams) {
    int p[2];
    reader r;
    ck_assert_int_eq(pipe(p), 0);
    cs_outq *q = cs_outq_open(p[1], p[1], 1 << 20);
    ck_assert_ptr_nonnull(q);
    reader_start(&r, p[0]);
    for (int i = 0; i < 5000; i++) {
        fprintf(cs_outq_out(q), "out %d\n", i);
        fprintf(cs_outq_err(q), "err %d\n", i);
    }
    fputs("no newline at the end", cs_outq_out(q)); /* closing flushes it */
    cs_outq_close(q);
    close(p[1]);
    reader_join(&r);
    char *at = r.s, *end = r.s + r.len;
    for (int i = 0; i < 5000; i++) {
        char want[64];
        int n = snprintf(want, sizeof want, "out %d\nerr %d\n", i, i);
        ck_assert_msg(at + n <= end && memcmp(at, want, (size_t)n) == 0,
                      "pair %d is not where it was printed", i);
        at += n;
    }
    ck_assert_uint_eq((size_t)(end - at), strlen("no newline at the end"));
    ck_assert(memcmp(at, "no newline at the end", (size_t)(end - at)) == 0);
    free(r.s);
}
END_TEST

typedef struct printer {
    cs_outq *q;
    atomic_int done; /* lines printed so far */
} printer;

enum { LINES = 2000, LINE = 128, CAP = 64 * LINE };

static void *print_lines(void *arg) {
    printer *pr = arg;
    for (int i = 0; i < LINES; i++) {
        fprintf(cs_outq_out(pr->q), "%0127d\n", i);
        atomic_store(&pr->done, i + 1);
    }
    return NULL;
}

/* Nobody reads the pipe: the printer goes on until the pipe and the cap are
 * full, then waits (it never gets further than that, however long it is
 * given); once a reader reads, it finishes and every line arrives. */
START_TEST(test_cap_holds_the_printer) {
    int p[2];
    reader r;
    pthread_t t;
    ck_assert_int_eq(pipe(p), 0);
    ck_assert_int_ge(fcntl(p[1], F_SETPIPE_SZ, 4096), 4096);
    int pipe_bytes = fcntl(p[1], F_GETPIPE_SZ);
    printer pr = {.q = cs_outq_open(p[1], STDERR_FILENO, CAP)};
    ck_assert_ptr_nonnull(pr.q);
    ck_assert_int_eq(pthread_create(&t, NULL, print_lines, &pr), 0);
    int seen = -1, now;
    while ((now = atomic_load(&pr.done)) != seen) { /* until it stops moving */
        seen = now;
        usleep(300 * 1000);
    }
    /* the pipe, the cap, the line the writer holds and the stream's buffer */
    ck_assert_int_lt(seen, LINES);
    ck_assert_int_le(seen * LINE, pipe_bytes + CAP + LINE + BUFSIZ);
    reader_start(&r, p[0]);
    pthread_join(t, NULL);
    cs_outq_close(pr.q);
    close(p[1]);
    reader_join(&r);
    ck_assert_uint_eq(r.len, (size_t)LINES * LINE);
    for (int i = 0; i < LINES; i++) {
        char want[LINE + 1];
        snprintf(want, sizeof want, "%0127d\n", i);
        ck_assert(memcmp(r.s + (size_t)i * LINE, want, LINE) == 0);
    }
    free(r.s);
}
END_TEST

/* A closed pipe on out: its bytes go nowhere, err's still arrive, and
 * closing does not hang. */
START_TEST(test_refusing_descriptor) {
    int p[2], e[2];
    reader r;
    ck_assert_int_eq(pipe(p), 0);
    ck_assert_int_eq(pipe(e), 0);
    close(p[0]); /* EPIPE (SIGPIPE ignored below) */
    cs_outq *q = cs_outq_open(p[1], e[1], 1 << 16);
    ck_assert_ptr_nonnull(q);
    reader_start(&r, e[0]);
    for (int i = 0; i < 3000; i++) {
        fprintf(cs_outq_out(q), "%0127d\n", i);
        if (i % 100 == 0) fprintf(cs_outq_err(q), "err %d\n", i);
    }
    cs_outq_close(q);
    close(p[1]);
    close(e[1]);
    reader_join(&r);
    ck_assert(r.len > 0 && memcmp(r.s, "err 0\n", 6) == 0);
    ck_assert(strstr(r.s, "err 2900\n") != NULL);
    free(r.s);
}
END_TEST

static Suite *outq_suite(void) {
    Suite *s = suite_create("outq");
    TCase *tc = tcase_create("queue");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_order_across_streams);
    tcase_add_test(tc, test_cap_holds_the_printer);
    tcase_add_test(tc, test_refusing_descriptor);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    signal(SIGPIPE, SIG_IGN);
    return run_suite(outq_suite());
}
