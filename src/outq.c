/* outq.c -- an output queue: two streams whose bytes a thread writes out in
 * the order they were printed (outq.h says why).
 *
 * What is printed waits as records (the stream, the length, the bytes) in
 * one buffer; the thread takes the whole buffer at once, swapping it with
 * its own, and writes it record by record while the printers fill the other.
 */
#include "outq.h"
#include "bytebuf.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { HEAD = 1 + sizeof(uint32_t) }; /* a record: its stream, its length */

typedef struct stream {
    struct cs_outq *q;
    int idx; /* 0 out, 1 err */
} stream;


struct cs_outq {
    int fd[2];
    FILE *f[2];
    stream s[2];
    pthread_mutex_t mu;
    pthread_cond_t more; /* a record, or closing */
    pthread_cond_t room; /* the thread wrote what it took */
    cs_bytebuf pending;         /* the printers', under mu */
    size_t last;         /* where pending's last record starts */
    int last_idx;        /* its stream; -1: pending is empty */
    size_t taken;        /* bytes the thread is writing */
    size_t cap;
    bool closing;
    bool failed[2];      /* the thread's: a descriptor that refused */
    pthread_t thread;
};

static void write_all(cs_outq *q, int idx, const char *p, size_t n) {
    while (n > 0 && !q->failed[idx]) {
        ssize_t k = write(q->fd[idx], p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            q->failed[idx] = true; /* a closed pipe: the rest would fail too */
            return;
        }
        p += k;
        n -= (size_t)k;
    }
}

static void *writer(void *arg) {
    cs_outq *q = arg;
    cs_bytebuf mine = {0};
    pthread_mutex_lock(&q->mu);
    for (;;) {
        while (!q->pending.len && !q->closing) pthread_cond_wait(&q->more, &q->mu);
        if (!q->pending.len) break; /* closing, and all written */
        cs_bytebuf b = q->pending;
        q->pending = mine;
        q->pending.len = 0;
        q->last_idx = -1;
        q->taken = b.len;
        pthread_mutex_unlock(&q->mu);
        for (size_t at = 0; at < b.len;) {
            uint32_t n;
            memcpy(&n, b.data + at + 1, sizeof n);
            write_all(q, b.data[at], b.data + at + HEAD, n);
            at += HEAD + n;
        }
        mine = b;
        pthread_mutex_lock(&q->mu);
        q->taken = 0;
        pthread_cond_broadcast(&q->room);
    }
    pthread_mutex_unlock(&q->mu);
    cs_bytebuf_free(&mine);
    return NULL;
}

/* fopencookie's write: queue the bytes, waiting while more than the cap is
 * unwritten (a write larger than the cap goes alone). Bytes that follow
 * their stream's own last record join it. */
static ssize_t stream_write(void *cookie, const char *p, size_t n) {
    stream *s = cookie;
    cs_outq *q = s->q;
    uint32_t len = 0;
    if (n > UINT32_MAX - HEAD) n = UINT32_MAX - HEAD; /* stdio writes the rest next */
    pthread_mutex_lock(&q->mu);
    while (q->pending.len + q->taken > 0 && q->pending.len + q->taken + n > q->cap)
        pthread_cond_wait(&q->room, &q->mu);
    if (q->last_idx == s->idx) memcpy(&len, q->pending.data + q->last + 1, sizeof len);
    bool join = q->last_idx == s->idx && len <= UINT32_MAX - n;
    if (!cs_bytebuf_room(&q->pending, (join ? 0 : HEAD) + n)) {
        pthread_mutex_unlock(&q->mu);
        errno = ENOMEM;
        return -1;
    }
    if (!join) {
        len = 0;
        q->last = q->pending.len;
        q->last_idx = s->idx;
        q->pending.data[q->last] = (char)s->idx;
        q->pending.len += HEAD;
    }
    len += (uint32_t)n;
    memcpy(q->pending.data + q->last + 1, &len, sizeof len);
    memcpy(q->pending.data + q->pending.len, p, n);
    q->pending.len += n;
    pthread_cond_signal(&q->more);
    pthread_mutex_unlock(&q->mu);
    return (ssize_t)n;
}

static void outq_free(cs_outq *q) {
    pthread_cond_destroy(&q->room);
    pthread_cond_destroy(&q->more);
    pthread_mutex_destroy(&q->mu);
    cs_bytebuf_free(&q->pending);
    free(q);
}

cs_outq *cs_outq_open(int out_fd, int err_fd, size_t cap) {
    cs_outq *q = calloc(1, sizeof *q);
    if (!q) return NULL;
    q->fd[0] = out_fd;
    q->fd[1] = err_fd;
    q->cap = cap;
    q->last_idx = -1;
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->more, NULL);
    pthread_cond_init(&q->room, NULL);
    cookie_io_functions_t io = {.write = stream_write};
    for (int i = 0; i < 2; i++) {
        q->s[i] = (stream){q, i};
        if (!(q->f[i] = fopencookie(&q->s[i], "w", io)) ||
            setvbuf(q->f[i], NULL, _IOLBF, BUFSIZ) != 0) {
            for (int j = 0; j <= i; j++)
                if (q->f[j]) fclose(q->f[j]);
            outq_free(q);
            return NULL;
        }
    }
    /* Signals stay with the threads that handle them: the writer takes none. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&q->thread, NULL, writer, q);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        fclose(q->f[0]);
        fclose(q->f[1]);
        outq_free(q);
        return NULL;
    }
    return q;
}

FILE *cs_outq_out(cs_outq *q) { return q->f[0]; }
FILE *cs_outq_err(cs_outq *q) { return q->f[1]; }

cs_outq *cs_outq_std(bool own, FILE **out, FILE **err) {
    if (!own) return NULL;
    cs_outq *q = cs_outq_open(STDOUT_FILENO, STDERR_FILENO, CS_OUTQ_CAP);
    if (!q) return NULL;
    fflush(stdout);
    fflush(stderr);
    *out = cs_outq_out(q);
    *err = cs_outq_err(q);
    return q;
}

void cs_outq_close(cs_outq *q) {
    if (!q) return;
    fclose(q->f[0]); /* each flushes into the queue */
    fclose(q->f[1]);
    pthread_mutex_lock(&q->mu);
    q->closing = true;
    pthread_cond_signal(&q->more);
    pthread_mutex_unlock(&q->mu);
    pthread_join(q->thread, NULL);
    outq_free(q);
}
