/* trace_writer.c -- the trace writer: a bus sink that stages events and a
 * thread that turns them into lines and writes them. See trace.h; the lines
 * themselves are trace_line.c's (and trace.c's general path).
 *
 * The sink runs under the bus lock, which every rank takes for every event:
 * with more ranks than cores, whatever the sink does there, every other rank
 * waits for, and a rank descheduled while it holds the lock stalls them all.
 * So the sink does the least it can: it copies the fields the event's line
 * needs into the next slot of a staging ring (one cache line) and returns.
 * An event the ring cannot hold (one with strings: the header, a print, a
 * warning; a wait on more than two requests; a value wider than a slot's) is
 * encoded there into a line of its own, which its slot carries.
 *
 * The writer thread takes what was staged about every millisecond, encodes it
 * in order into a buffer that stays in the cache, and writes it in chunks of
 * whole lines; so ranks never wait on write(2) or on encoding, and a busy run
 * writes in large batches. The file holds whole lines up to the last chunk
 * written: a killed run leaves a trace that replays up to there (and at most
 * one cut line after a write error). A writer that finds nothing for a while
 * sleeps until the sink has something (the wake-up is sent from the bus's
 * after hook, once the bus lock is released).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "trace.h"

#include "event_schema.h"
#include "trace_line.h"

/* A staged event: what its line needs, in one cache line (the sink writes
 * it on one core and the writer reads it on another, and each line costs a
 * transfer), or the line itself (SLOT_LINE). A type carries at most one of a
 * shape, a peer's request and a list of requests (fits_init), so they share
 * x; an event whose values do not fit these widths goes the general way
 * (fits). */
#define SLOT_WORDS 2
typedef struct slot {
    uint8_t type, op, ndim, flags; /* SLOT_* */
    uint8_t dtype, nreqs;
    int32_t rank, peer, tag, ctx, line, status;
    uint32_t seq, req;
    double t;
    uint64_t bytes;                /* SLOT_LINE: the line's length */
    union {
        int32_t shape[SLOT_WORDS];
        uint32_t reqs[SLOT_WORDS];
        uint64_t peer_req;
        char *line;                /* SLOT_LINE: malloc'ed, the writer frees it */
    } x;
} __attribute__((aligned(64))) slot;

enum { SLOT_EAGER = 1, SLOT_ANY = 2, SLOT_LINE = 4 };

_Static_assert(sizeof(slot) == 64, "a staged event is one cache line");

/* Slots: a power of two, several milliseconds of the busiest run's events.
 * A sink that finds the ring full (a disk slower than the ranks) waits. */
#define STAGE 8192u

/* The writer thread's rhythm: it takes what was staged every TRACE_GATHER_NS
 * (sooner when the ring is half full, or on a flush), writes chunks of about
 * TRACE_CHUNK bytes, and after IDLE_POLLS empty looks it sleeps until woken. */
#define TRACE_GATHER_NS 1000000L
#define TRACE_CHUNK (256u << 10)
#define IDLE_POLLS 20

struct cs_trace_writer {
    int fd;
    char *path;
    slot *ring;
    /* the sink's, under the bus lock */
    bool seen_run;
    cs_bytebuf sink_tmp, sink_line;
    /* The ring's two counters, each on a cache line of its own: staged is
     * written by the sink, encoded by the writer thread (slots below it are
     * free again). */
    _Alignas(64) _Atomic uint64_t staged;
    _Alignas(64) _Atomic uint64_t encoded;
    _Alignas(64) _Atomic bool asleep; /* the writer waits without a timeout */
    _Atomic bool wake;                /* a sink asked for the writer (trace_after) */
    _Atomic bool stopped;             /* after a write error: nothing more is written */
    /* the writer thread's */
    cs_bytebuf out, enc_tmp;
    /* under mu */
    _Alignas(64) pthread_mutex_t mu;
    pthread_cond_t more;   /* staged, a flush, or closing */
    pthread_cond_t room;   /* a batch was written */
    pthread_t thread;
    uint64_t written;      /* slots written (or dropped after an error), ever */
    int flushing;          /* callers of cs_trace_flush waiting */
    bool closing;
    int err;               /* errno of the first error; 0 when none */
    char errmsg[512];
    void (*on_fail)(void *ud, int code); /* told of a write error (cs_trace_on_fail) */
    void *on_fail_ud;
};

/* The first error is the one worth reporting. Under mu. */
static void writer_error(cs_trace_writer *w, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void writer_error(cs_trace_writer *w, int code, const char *fmt, ...) {
    va_list ap;
    if (w->err) return;
    w->err = code ? code : EIO;
    va_start(ap, fmt);
    vsnprintf(w->errmsg, sizeof w->errmsg, fmt, ap);
    va_end(ap);
}

static const char *type_name(cs_event_type t) {
    const char *s = cs_event_type_name(t);
    return s ? s : "?";
}

/* ---- encoding */

/* Fewest significant digits that read back as exactly v: traces stay exact
 * (replay sees the very same times) without printing 0.10000000000000001. */
static int shortest_digits(double v) {
    char buf[40];
    int p = 15;

    snprintf(buf, sizeof buf, "%.*g", p, v);
    if (strtod(buf, NULL) != v) {
        snprintf(buf, sizeof buf, "%.*g", 16, v);
        return strtod(buf, NULL) == v ? 16 : 17;
    }
    for (p = 1; p < 15; p++) {
        snprintf(buf, sizeof buf, "%.*g", p, v);
        if (strtod(buf, NULL) == v) break;
    }
    return p;
}

/* Why an event has no line. */
enum { ENC_OK, ENC_NOMEM, ENC_CANNOT_NOMEM, ENC_CANNOT };

/* The general path: the event as a jansson object, dumped compact at the
 * time's shortest precision, appended to out (tmp: a buffer to dump into). */
static int encode_general(const cs_event *ev, cs_bytebuf *tmp, cs_bytebuf *out) {
    json_t *o;
    size_t n, flags;
    int prec;

    if (!(o = cs_event_to_json(ev))) return ENC_CANNOT_NOMEM;
    prec = shortest_digits(isfinite(ev->t) ? ev->t : 0.0);
    if (ev->type == CS_EV_COMPUTE && isfinite(ev->ms) && shortest_digits(ev->ms) > prec)
        prec = shortest_digits(ev->ms);
    flags = JSON_COMPACT | JSON_REAL_PRECISION(prec);
    n = json_dumpb(o, tmp->data, tmp->cap, flags);
    if (n + 1 > tmp->cap) { /* + 1: the newline; tmp->len stays 0 */
        if (!cs_bytebuf_room(tmp, n + 1)) {
            json_decref(o);
            return ENC_NOMEM;
        }
        n = json_dumpb(o, tmp->data, tmp->cap, flags);
    }
    json_decref(o);
    if (n == 0 || n + 1 > tmp->cap) return ENC_CANNOT;
    tmp->data[n] = '\n';
    return cs_bytebuf_append(out, tmp->data, n + 1) ? ENC_OK : ENC_NOMEM;
}

/* ev's line appended to out: the fast encoder, else the general path. */
static int encode(const cs_event *ev, cs_bytebuf *tmp, cs_bytebuf *out) {
    int r = cs_trace_line(ev, out);
    return r > 0 ? ENC_OK : r < 0 ? ENC_NOMEM : encode_general(ev, tmp, out);
}

/* Under mu. */
static void report(cs_trace_writer *w, int why, const cs_event *ev) {
    if (why == ENC_NOMEM) writer_error(w, ENOMEM, "%s: out of memory", w->path);
    else
        writer_error(w, why == ENC_CANNOT ? EINVAL : ENOMEM, "%s: cannot encode a %s event",
                     w->path, type_name(ev->type));
}


/* ---- the ring */

/* Which types a slot holds: those whose every field (event_schema.h) is one
 * the slot carries, with at most one of those x holds; and which one that is.
 * Computed once from the schema, so that a field added to a type later sends
 * it the general way instead of going missing. */
enum { X_NONE, X_SHAPE, X_REQS, X_PEER_REQ };
static bool type_fits[CS_EV_NTYPES];
static uint8_t type_x[CS_EV_NTYPES];
static pthread_once_t fits_once = PTHREAD_ONCE_INIT;

static void fits_init(void) {
    const uint64_t carried =
        CS_FIELD_BIT(CS_F_REQ) | CS_FIELD_BIT(CS_F_OP) | CS_FIELD_BIT(CS_F_PEER) |
        CS_FIELD_BIT(CS_F_TAG) | CS_FIELD_BIT(CS_F_CTX) | CS_FIELD_BIT(CS_F_BYTES) |
        CS_FIELD_BIT(CS_F_DTYPE) | CS_FIELD_BIT(CS_F_SHAPE) | CS_FIELD_BIT(CS_F_PEER_REQ) |
        CS_FIELD_BIT(CS_F_REQS) | CS_FIELD_BIT(CS_F_ANY) | CS_FIELD_BIT(CS_F_EAGER) |
        CS_FIELD_BIT(CS_F_LINE) | CS_FIELD_BIT(CS_F_STATUS);
    for (int t = 0; t < CS_EV_NTYPES; t++) {
        uint64_t f = cs_event_kinds[t].need | cs_event_kinds[t].opt;
        int in_x = 0;
        if (f & CS_FIELD_BIT(CS_F_SHAPE)) in_x++, type_x[t] = X_SHAPE;
        if (f & CS_FIELD_BIT(CS_F_REQS)) in_x++, type_x[t] = X_REQS;
        if (f & CS_FIELD_BIT(CS_F_PEER_REQ)) in_x++, type_x[t] = X_PEER_REQ;
        type_fits[t] = t != CS_EV_RUN && (f & ~carried) == 0 && in_x <= 1;
    }
}

/* Does a slot hold ev's line? Its type's fields, each within the slot's width. */
static bool fits(const cs_event *ev) {
    if ((unsigned)ev->type >= CS_EV_NTYPES || !type_fits[ev->type]) return false;
    if (ev->seq > UINT32_MAX || ev->req > UINT32_MAX || (unsigned)ev->op > UINT8_MAX ||
        (unsigned)ev->dtype > UINT8_MAX)
        return false;
    switch (type_x[ev->type]) {
    case X_SHAPE:
        if (ev->ndim < 0 || ev->ndim > SLOT_WORDS) return false;
        for (int i = 0; i < ev->ndim; i++)
            if (ev->shape[i] < INT32_MIN || ev->shape[i] > INT32_MAX) return false;
        return true;
    case X_REQS:
        if (!ev->reqs) return true; /* written as [] */
        if (ev->nreqs < 0 || ev->nreqs > SLOT_WORDS) return false;
        for (int i = 0; i < ev->nreqs; i++)
            if (ev->reqs[i] > UINT32_MAX) return false;
        return true;
    default: return true;
    }
}

static void to_slot(slot *s, const cs_event *ev) {
    s->type = (uint8_t)ev->type;
    s->op = (uint8_t)ev->op;
    s->flags = (ev->eager ? SLOT_EAGER : 0) | (ev->any ? SLOT_ANY : 0);
    s->dtype = (uint8_t)ev->dtype;
    s->rank = ev->rank;
    s->peer = ev->peer;
    s->tag = ev->tag;
    s->ctx = ev->ctx;
    s->line = ev->line;
    s->status = ev->status;
    s->seq = (uint32_t)ev->seq;
    s->req = (uint32_t)ev->req;
    s->t = ev->t;
    s->bytes = ev->bytes;
    s->ndim = s->nreqs = 0;
    switch (type_x[ev->type]) {
    case X_SHAPE:
        s->ndim = (uint8_t)ev->ndim;
        for (int i = 0; i < ev->ndim; i++) s->x.shape[i] = (int32_t)ev->shape[i];
        break;
    case X_REQS:
        if (ev->reqs) s->nreqs = (uint8_t)ev->nreqs;
        for (int i = 0; i < s->nreqs; i++) s->x.reqs[i] = (uint32_t)ev->reqs[i];
        break;
    case X_PEER_REQ: s->x.peer_req = ev->peer_req; break;
    }
}

/* ev: zeroed once; the fields a slot carries are all set here (reqs: room
 * for SLOT_WORDS, which ev->reqs points to). */
static void from_slot(cs_event *ev, uint64_t *reqs, const slot *s) {
    ev->type = (cs_event_type)s->type;
    ev->op = (cs_op)s->op;
    ev->ndim = s->ndim;
    ev->eager = (s->flags & SLOT_EAGER) != 0;
    ev->any = (s->flags & SLOT_ANY) != 0;
    ev->rank = s->rank;
    ev->peer = s->peer;
    ev->tag = s->tag;
    ev->ctx = s->ctx;
    ev->line = s->line;
    ev->status = s->status;
    ev->dtype = (cs_dtype)s->dtype;
    ev->seq = s->seq;
    ev->req = s->req;
    ev->bytes = (size_t)s->bytes;
    ev->t = s->t;
    ev->nreqs = s->nreqs;
    ev->reqs = reqs;
    ev->peer_req = type_x[s->type] == X_PEER_REQ ? s->x.peer_req : 0;
    for (int i = 0; i < s->nreqs; i++) reqs[i] = s->x.reqs[i];
    for (int i = 0; i < s->ndim; i++) ev->shape[i] = s->x.shape[i];
}

/* ---- the writer thread */

/* write(2) all of buf: one call per chunk in practice, so a crash cuts at
 * most the chunk being written. */
static int write_all(int fd, const char *buf, size_t n) {
    while (n > 0) {
        ssize_t k = write(fd, buf, n);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return -1;
        buf += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Write out and empty it; after the first error, only empty it. */
static void write_out(cs_trace_writer *w) {
    if (w->out.len && !atomic_load_explicit(&w->stopped, memory_order_relaxed) &&
        write_all(w->fd, w->out.data, w->out.len) < 0) {
        int code = errno;
        /* a later line after a partial one would be garbage */
        atomic_store_explicit(&w->stopped, true, memory_order_relaxed);
        pthread_mutex_lock(&w->mu);
        writer_error(w, code, "%s: %s", w->path, strerror(code));
        void (*fn)(void *, int) = w->on_fail;
        void *ud = w->on_fail_ud;
        pthread_mutex_unlock(&w->mu);
        if (fn) fn(ud, code);
    }
    w->out.len = 0;
}

/* Encode and write slots k..end, in order, freeing each chunk's slots once it
 * is written. Without mu. */
static void write_slots(cs_trace_writer *w, uint64_t k, uint64_t end) {
    static const cs_event zero;
    cs_event ev = zero;
    uint64_t reqs[SLOT_WORDS];
    for (; k < end; k++) {
        slot *s = &w->ring[k & (STAGE - 1)];
        bool stopped = atomic_load_explicit(&w->stopped, memory_order_relaxed);
        if (s->flags & SLOT_LINE) {
            if (!stopped && !cs_bytebuf_append(&w->out, s->x.line, (size_t)s->bytes)) {
                pthread_mutex_lock(&w->mu);
                writer_error(w, ENOMEM, "%s: out of memory", w->path);
                pthread_mutex_unlock(&w->mu);
            }
            free(s->x.line);
        } else if (!stopped) {
            int why;
            from_slot(&ev, reqs, s);
            if ((why = encode(&ev, &w->enc_tmp, &w->out)) != ENC_OK) {
                pthread_mutex_lock(&w->mu);
                report(w, why, &ev);
                pthread_mutex_unlock(&w->mu);
            }
        }
        if (w->out.len >= TRACE_CHUNK) {
            write_out(w);
            atomic_store_explicit(&w->encoded, k + 1, memory_order_release);
        }
    }
    write_out(w);
    atomic_store_explicit(&w->encoded, end, memory_order_release);
}

static void wait_ns(cs_trace_writer *w, long ns) {
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_nsec += ns;
    if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
    pthread_cond_timedwait(&w->more, &w->mu, &until);
}

/* Write what is staged, in batches, until closing with nothing left. */
static void *writer_main(void *arg) {
    cs_trace_writer *w = arg;
    int idle = 0;

    pthread_mutex_lock(&w->mu);
    for (;;) {
        uint64_t k = atomic_load_explicit(&w->encoded, memory_order_relaxed);
        uint64_t end = atomic_load(&w->staged);
        if (k == end) {
            if (w->closing) break;
            if (w->flushing) pthread_cond_broadcast(&w->room);
            if (idle++ < IDLE_POLLS) {
                wait_ns(w, TRACE_GATHER_NS);
                continue;
            }
            /* Asleep: the sink sees the flag (or we see its slot) and has
             * us woken (both sides are sequentially consistent). */
            atomic_store(&w->asleep, true);
            if (atomic_load(&w->staged) == k && !w->closing && !w->flushing)
                pthread_cond_wait(&w->more, &w->mu);
            atomic_store(&w->asleep, false);
            idle = 0;
            continue;
        }
        idle = 0;
        pthread_mutex_unlock(&w->mu);
        write_slots(w, k, end);
        pthread_mutex_lock(&w->mu);
        w->written = end;
        pthread_cond_broadcast(&w->room);
        /* gather the next batch, unless someone waits for this one */
        if (!w->closing && !w->flushing &&
            atomic_load(&w->staged) - end < STAGE / 4)
            wait_ns(w, TRACE_GATHER_NS);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

cs_trace_writer *cs_trace_open(const char *path, char *err, size_t errlen) {
    cs_trace_writer *w = NULL;
    pthread_condattr_t ca;
    sigset_t all, old;
    void *mem = NULL, *ring = NULL;
    int rc;

    if (posix_memalign(&mem, 64, sizeof *w) == 0) w = memset(mem, 0, sizeof *w);
    if (!w || !(w->path = strdup(path)) || posix_memalign(&ring, 64, STAGE * sizeof(slot))) {
        if (w) free(w->path);
        free(w);
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    w->ring = ring;
    pthread_once(&fits_once, fits_init); /* here, not per event under the bus lock */
    atomic_init(&w->staged, 0);
    atomic_init(&w->encoded, 0);
    atomic_init(&w->asleep, false);
    atomic_init(&w->wake, false);
    atomic_init(&w->stopped, false);
    w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (w->fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        free(w->ring);
        free(w->path);
        free(w);
        return NULL;
    }
    pthread_mutex_init(&w->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&w->more, &ca);
    pthread_condattr_destroy(&ca);
    pthread_cond_init(&w->room, NULL);
    /* Signals stay with the threads that handle them (the run's signal
     * thread): the writer takes none. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = pthread_create(&w->thread, NULL, writer_main, w);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        snprintf(err, errlen, "%s: cannot start the trace writer: %s", path, strerror(rc));
        pthread_cond_destroy(&w->room);
        pthread_cond_destroy(&w->more);
        pthread_mutex_destroy(&w->mu);
        close(w->fd);
        free(w->ring);
        free(w->path);
        free(w);
        return NULL;
    }
    return w;
}

/* ---- the sink */

static void sink_error(cs_trace_writer *w, int why, const cs_event *ev, const char *what) {
    pthread_mutex_lock(&w->mu);
    if (what) writer_error(w, EINVAL, "%s: %s", w->path, what);
    else report(w, why, ev);
    pthread_mutex_unlock(&w->mu);
}

static void trace_emit(void *ud, const cs_event *ev) {
    cs_trace_writer *w = ud;
    uint64_t k;
    slot *s;

    if (!w || atomic_load_explicit(&w->stopped, memory_order_relaxed)) return;
    if (!w->seen_run && ev->type != CS_EV_RUN) {
        char what[96];
        snprintf(what, sizeof what, "%s event before the run header, not written",
                 type_name(ev->type));
        sink_error(w, 0, ev, what);
        return;
    }
    if (w->seen_run && ev->type == CS_EV_RUN) {
        sink_error(w, 0, ev, "second run header, not written");
        return;
    }
    k = atomic_load_explicit(&w->staged, memory_order_relaxed);
    if (k - atomic_load_explicit(&w->encoded, memory_order_acquire) >= STAGE) {
        /* a disk slower than the ranks: hold them here rather than queue
         * without bound */
        pthread_mutex_lock(&w->mu);
        while (k - atomic_load_explicit(&w->encoded, memory_order_acquire) >= STAGE) {
            pthread_cond_signal(&w->more);
            pthread_cond_wait(&w->room, &w->mu);
        }
        pthread_mutex_unlock(&w->mu);
    }
    s = &w->ring[k & (STAGE - 1)];
    if (fits(ev)) {
        to_slot(s, ev);
    } else {
        int why;
        w->sink_line.len = 0;
        if ((why = encode(ev, &w->sink_tmp, &w->sink_line)) != ENC_OK) {
            sink_error(w, why, ev, NULL);
            return;
        }
        if (!(s->x.line = malloc(w->sink_line.len))) {
            sink_error(w, ENC_NOMEM, ev, NULL);
            return;
        }
        memcpy(s->x.line, w->sink_line.data, w->sink_line.len);
        s->bytes = w->sink_line.len;
        s->flags = SLOT_LINE;
    }
    if (ev->type == CS_EV_RUN) w->seen_run = true;
    atomic_store(&w->staged, k + 1);
    /* the next event's slot, fetched before it comes: the writer thread,
     * likely on the other core, read it last (a prefetch for writing where
     * the target has one; baseline x86-64 has only the read prefetch, and
     * prefetchw measured no different: docs/bench.md) */
    __builtin_prefetch(&w->ring[(k + 1) & (STAGE - 1)], 1, 3);
    if (atomic_load(&w->asleep) || k + 1 - atomic_load_explicit(&w->encoded, memory_order_relaxed) == STAGE / 2)
        atomic_store_explicit(&w->wake, true, memory_order_relaxed);
}

/* The bus's after hook (cs_bus_after): the wake-up a sink asked for, sent
 * outside the bus lock (it is a system call). */
static void trace_after(void *ud) {
    cs_trace_writer *w = ud;
    if (atomic_load_explicit(&w->wake, memory_order_relaxed) && atomic_exchange(&w->wake, false)) {
        pthread_mutex_lock(&w->mu);
        pthread_cond_signal(&w->more);
        pthread_mutex_unlock(&w->mu);
    }
}

cs_sink cs_trace_sink(cs_trace_writer *w) {
    return (cs_sink){.emit = trace_emit, .ud = w};
}

void cs_trace_on_fail(cs_trace_writer *w, void (*fn)(void *ud, int code), void *ud) {
    pthread_mutex_lock(&w->mu);
    w->on_fail = fn;
    w->on_fail_ud = ud;
    pthread_mutex_unlock(&w->mu);
}

void cs_trace_subscribe(cs_trace_writer *w, cs_bus *bus) {
    cs_bus_subscribe(bus, cs_trace_sink(w));
    cs_bus_after(bus, trace_after, w);
}

int cs_trace_flush(cs_trace_writer *w) {
    int code;

    if (!w) return 0;
    pthread_mutex_lock(&w->mu);
    uint64_t target = atomic_load(&w->staged);
    w->flushing++;
    pthread_cond_signal(&w->more);
    while (w->written < target) pthread_cond_wait(&w->room, &w->mu);
    w->flushing--;
    code = w->err;
    pthread_mutex_unlock(&w->mu);
    if (code) {
        errno = code;
        return -1;
    }
    return 0;
}

const char *cs_trace_error(const cs_trace_writer *w) {
    cs_trace_writer *m = (cs_trace_writer *)w; /* the lock only: the error is read */
    const char *msg;
    if (!w) return NULL;
    pthread_mutex_lock(&m->mu);
    msg = w->err ? w->errmsg : NULL;
    pthread_mutex_unlock(&m->mu);
    return msg;
}

int cs_trace_close(cs_trace_writer *w) {
    int code;

    if (!w) return 0;
    pthread_mutex_lock(&w->mu);
    w->closing = true;
    pthread_cond_signal(&w->more);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL); /* it writes what is left first */
    if (close(w->fd) < 0 && errno != EINTR)
        writer_error(w, errno, "%s: %s", w->path, strerror(errno));
    code = w->err;
    pthread_cond_destroy(&w->room);
    pthread_cond_destroy(&w->more);
    pthread_mutex_destroy(&w->mu);
    free(w->ring);
    cs_bytebuf_free(&w->out);
    cs_bytebuf_free(&w->enc_tmp);
    cs_bytebuf_free(&w->sink_tmp);
    cs_bytebuf_free(&w->sink_line);
    free(w->path);
    free(w);
    if (code) {
        errno = code;
        return -1;
    }
    return 0;
}
