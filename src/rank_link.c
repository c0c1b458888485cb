/* rank_link.c -- a rank process's link to the controller: joining, events up,
 * gates, ABORT/FLUSH/BYE, and leaving when the controller is gone.
 *
 * Output is one byte queue: frames are encoded straight into it and written
 * by whichever thread queues them while the socket takes more, else by the
 * one epoll tells it does again. Events are encoded into a buffer of their
 * own and queued in batches (tick): sending them per message woke the
 * controller, on the same cores, as often as the ranks exchanged messages.
 * A frame that depends on what led up to it (GATE, FLUSHED, BYE) queues the
 * pending events first.
 *
 * Locks: bus -> link (the event sink runs under the bus lock); the end lock
 * is taken alone.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bytebuf.h"
#include "errmsg.h"
#include "heartbeat.h"
#include "rank_link.h"
#include "wire.h"
#include "world.h"
#include "xalloc.h"

#define CONNECT_SECONDS 30.0 /* for the HELLO to leave: the controller may be slow */
#define JOIN_SECONDS 3600.0  /* for every rank to join: hand-started ranks take a while */
#define LOST_GRACE 2.0       /* seconds a rank may take to unwind once the controller is gone */
#define EVENT_BATCH (64 * 1024) /* bytes of events that are sent without waiting */

typedef struct bytes {
    cs_bytebuf b;
    size_t off;           /* unsent bytes are b.data[off, b.len) */
} bytes;

struct cs_rank_link {
    int fd, rank, world;
    char token[CS_WIRE_TOKEN + 1];
    FILE *err;
    cs_world *w;
    pthread_mutex_t lock; /* ev, out, flushed_at, pollout, dead, hb, hb_on */
    bytes ev;             /* encoded events not yet queued */
    bytes out;            /* queued for the socket */
    double flushed_at;
    bool pollout, dead;
    cs_heartbeat hb;      /* the controller's liveness (heartbeat.h) */
    bool hb_on;           /* watched and said since the WELCOME */
    int epfd;             /* the poll set that has the socket, or -1 */
    void *tag;
    pthread_mutex_t rx_lock; /* whoever reads the socket */
    cs_rx rx;
    pthread_mutex_t end_lock;
    pthread_cond_t end_cond;
    bool finishing, ended; /* BYE sent; the controller ended the job */
    int end_reason;
    uint64_t gate_seq, go_seq; /* gates asked for and passed; under end_lock */
    _Atomic double lost_at;    /* when the controller vanished, or 0 */
    pthread_t thread;          /* cs_rank_link_start */
    bool threaded;
    int own_epfd;
    _Atomic int stop;
    void (*drain)(void *); /* cs_rank_link_on_abort */
    void *drain_ud;
};

/* Room for n more bytes at the end of q: where they go, or NULL. */
static uint8_t *bytes_room(bytes *q, size_t n) {
    return cs_bytebuf_room(&q->b, n) ? (uint8_t *)q->b.data + q->b.len : NULL;
}

/* ---- the output queue */

static void arm(cs_rank_link *l, bool out) {
    if (l->pollout == out || l->dead || l->epfd < 0) return;
    struct epoll_event ev = {.events = EPOLLIN | (out ? EPOLLOUT : 0), .data.ptr = l->tag};
    epoll_ctl(l->epfd, EPOLL_CTL_MOD, l->fd, &ev);
    l->pollout = out;
}

/* The connection is gone: nothing more goes out. */
static void kill_locked(cs_rank_link *l) {
    if (l->dead) return;
    l->dead = true;
    if (l->epfd >= 0) epoll_ctl(l->epfd, EPOLL_CTL_DEL, l->fd, NULL);
    shutdown(l->fd, SHUT_RDWR);
    l->out.off = l->out.b.len = 0;
}

/* Write what the socket takes now; the rest waits for epoll. */
static void write_locked(cs_rank_link *l) {
    bytes *q = &l->out;
    while (q->off < q->b.len) {
        ssize_t n = send(l->fd, q->b.data + q->off, q->b.len - q->off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK) kill_locked(l);
            break;
        }
        q->off += (size_t)n;
    }
    if (q->off == q->b.len) q->off = q->b.len = 0;
    arm(l, q->b.len > 0);
}

/* Move the encoded events into the output queue (without a copy when it is
 * empty, as it nearly always is). */
static void events_queue_locked(cs_rank_link *l) {
    bytes *ev = &l->ev, *out = &l->out;
    if (!ev->b.len || l->dead) {
        if (l->dead) ev->b.len = 0;
        return;
    }
    if (out->b.len == 0) {
        bytes t = *out;
        *out = *ev;
        *ev = t;
        ev->off = ev->b.len = 0;
    } else {
        if (!cs_bytebuf_append(&out->b, ev->b.data, ev->b.len)) return; /* kept for the next try */
        ev->b.len = 0;
    }
}

/* Queue a frame of type with meta (after the events emitted so far when
 * asked: the controller must see what led up to a frame before the frame)
 * and write. CS_ENOMEM when it could not be queued. */
static int send_frame(cs_rank_link *l, int type, const void *meta, uint32_t mlen, bool with_events) {
    int rc = CS_OK;
    if (with_events && l->w) cs_bus_drain(l->w->bus); /* those still in the bus's ring too */
    pthread_mutex_lock(&l->lock);
    if (with_events) events_queue_locked(l);
    if (!l->dead) {
        uint8_t *p = bytes_room(&l->out, CS_WIRE_HDR + mlen);
        if (p) {
            cs_wire_hdr_put(p, type, mlen, 0);
            if (mlen) memcpy(p + CS_WIRE_HDR, meta, mlen);
            l->out.b.len += CS_WIRE_HDR + mlen;
        } else {
            rc = CS_ENOMEM;
        }
        if (!l->pollout) write_locked(l);
    }
    pthread_mutex_unlock(&l->lock);
    return rc;
}

/* ---- frames from the controller */

static void end_job(cs_rank_link *l, int reason) {
    pthread_mutex_lock(&l->end_lock);
    if (!l->ended) {
        l->ended = true;
        l->end_reason = reason;
    }
    pthread_cond_broadcast(&l->end_cond);
    pthread_mutex_unlock(&l->end_lock);
}

static bool valid_reason(uint32_t r) {
    return r == CS_END_ERROR || r == CS_END_DEADLOCK || r == CS_END_TIMEOUT ||
           r == CS_END_DIED || r == CS_END_QUIT;
}

static void heard(cs_rank_link *l) {
    pthread_mutex_lock(&l->lock);
    cs_heartbeat_heard(&l->hb, cs_now());
    pthread_mutex_unlock(&l->lock);
}

static int link_frame(void *ud, const cs_frame_hdr *h, cs_cur *meta, void **dst, char *err,
                      size_t errlen) {
    (void)dst;
    cs_rank_link *l = ud;
    if (h->type == CS_FR_ALIVE) {
        uint32_t ms = cs_get_u32(meta);
        pthread_mutex_lock(&l->lock);
        cs_heartbeat_peer(&l->hb, ms, cs_now());
        pthread_mutex_unlock(&l->lock);
        return 0;
    }
    heard(l);
    if (h->type == CS_FR_ABORT) {
        uint32_t why = cs_get_u32(meta);
        if (!valid_reason(why)) {
            snprintf(err, errlen, "ABORT with unknown reason %u", why);
            return -1;
        }
        if (l->drain) l->drain(l->drain_ud);
        cs_world_abort(l->w, (cs_end_reason)why);
        end_job(l, (int)why);
        return 0;
    }
    if (h->type == CS_FR_FLUSH) {
        send_frame(l, CS_FR_FLUSHED, NULL, 0, true);
        return 0;
    }
    if (h->type == CS_FR_CLOCK) { /* the virtual clock the rank asked for */
        cs_world_clock_answer(l->w, l->rank, cs_get_u64(meta));
        return 0;
    }
    if (h->type == CS_FR_GO) {
        uint64_t seq = cs_get_u64(meta);
        pthread_mutex_lock(&l->end_lock);
        bool ok = seq == l->gate_seq && l->go_seq < seq; /* the gate the rank waits at */
        if (ok) l->go_seq = seq;
        pthread_cond_broadcast(&l->end_cond);
        pthread_mutex_unlock(&l->end_lock);
        if (ok) return 0;
        snprintf(err, errlen, "GO for gate %llu, but the rank waits at none", (unsigned long long)seq);
        return -1;
    }
    snprintf(err, errlen, "unexpected %s frame from the controller", cs_frame_name(h->type));
    return -1;
}

static int link_payload(void *ud, char *err, size_t errlen) {
    (void)ud, (void)err, (void)errlen;
    return 0;
}

static const cs_rx_ops link_ops = {link_frame, link_payload};

/* The controller closed the connection: the job is over (after our BYE) or the
 * controller died (before it): then the rank unwinds and the process leaves. */
static void link_closed(cs_rank_link *l, const char *err) {
    pthread_mutex_lock(&l->lock);
    kill_locked(l);
    pthread_mutex_unlock(&l->lock);
    pthread_mutex_lock(&l->end_lock);
    bool finishing = l->finishing;
    pthread_mutex_unlock(&l->end_lock);
    if (!finishing) {
        cs_errf(stderr, "rank %d: lost the controller%s%s; leaving\n", l->rank,
                err ? ": " : "", err ? err : "");
        cs_world_abort(l->w, CS_END_DIED);
        atomic_store(&l->lost_at, cs_now());
    }
    end_job(l, finishing ? CS_END_NONE : CS_END_DIED);
}

/* The controller has said nothing for the heartbeat's limit: it is stopped or
 * frozen with its connection up. The rank leaves as if it had gone, script
 * finished or not: nobody is left to end the job. */
static void link_silent(cs_rank_link *l, double limit) {
    cs_errf(stderr, "rank %d: the controller has sent nothing for %g s (stopped or "
                    "frozen; %s); leaving\n", l->rank, limit, CS_HEARTBEAT_ENV);
    if (l->w) cs_world_abort(l->w, CS_END_DIED);
    atomic_store(&l->lost_at, cs_now());
    end_job(l, CS_END_DIED);
}

/* Say ALIVE when due (queued behind what waits: the controller reads in
 * order). Whether the controller has been silent too long. */
static bool heartbeat_locked(cs_rank_link *l, double now, double *limit) {
    if (!l->hb_on || l->dead) return false;
    if (cs_heartbeat_due(&l->hb, now)) {
        uint8_t *p = bytes_room(&l->out, CS_WIRE_HDR + 4);
        if (p) { /* else the next tick tries again */
            cs_wire_hdr_put(p, CS_FR_ALIVE, 4, 0);
            cs_cur c = {.p = p + CS_WIRE_HDR, .len = 4};
            cs_put_u32(&c, cs_heartbeat_ms(&l->hb));
            l->out.b.len += CS_WIRE_HDR + 4;
            if (!l->pollout) write_locked(l);
        } else {
            l->hb.said = 0;
        }
    }
    *limit = l->hb.limit;
    if (!cs_heartbeat_silent(&l->hb, now)) return false;
    if (cs_heartbeat_unread(l->fd)) { /* it spoke; this side was slow to look */
        cs_heartbeat_heard(&l->hb, now);
        return false;
    }
    kill_locked(l); /* once: the other ticking thread then finds it dead */
    return true;
}

/* ---- driving the socket */

int cs_rank_link_readable(cs_rank_link *l) {
    char err[256];
    /* The other thread is reading it and reads until the socket is empty. */
    if (pthread_mutex_trylock(&l->rx_lock) != 0) return 0;
    int rc = cs_rx_pump(&l->rx, l->fd, &link_ops, l, err, sizeof err);
    pthread_mutex_unlock(&l->rx_lock);
    if (rc == 0) return 0;
    link_closed(l, rc == -1 ? err : NULL);
    return -1;
}

void cs_rank_link_writable(cs_rank_link *l) {
    pthread_mutex_lock(&l->lock);
    if (!l->dead) write_locked(l);
    pthread_mutex_unlock(&l->lock);
}

void cs_rank_link_tick(cs_rank_link *l, double now) {
    double limit;
    /* The events waiting in the bus's ring (a tcp rank that computes: its
     * progress thread's completes) join the queue here, within a tick. */
    if (l->w) cs_bus_poll(l->w->bus, INT_MAX);
    pthread_mutex_lock(&l->lock);
    /* ALIVE before the events: the controller has heard the first one by the
     * time it sees anything this rank did */
    bool silent = heartbeat_locked(l, now, &limit);
    if (!silent && (now - l->flushed_at >= CS_RANK_LINK_TICK_MS * 1e-3 || l->ev.b.len >= EVENT_BATCH)) {
        events_queue_locked(l);
        l->flushed_at = now;
        if (!l->pollout && !l->dead) write_locked(l);
    }
    pthread_mutex_unlock(&l->lock);
    if (silent) link_silent(l, limit);
}

double cs_rank_link_due(cs_rank_link *l, double now) {
    double due = 1.0;
    pthread_mutex_lock(&l->lock);
    if (!l->dead) {
        if (l->ev.b.len) {
            double t = l->flushed_at + CS_RANK_LINK_TICK_MS * 1e-3 - now;
            if (t < due) due = t;
        }
        if (l->hb_on) {
            double said = l->hb.said ? l->hb.said + cs_heartbeat_interval(&l->hb) - now : 0;
            if (said < due) due = said;
            double silent = l->hb.limit > 0 ? l->hb.heard + l->hb.limit - now : due;
            if (silent < due) due = silent;
        }
    }
    pthread_mutex_unlock(&l->lock);
    return due > 0 ? due : 0;
}

void cs_rank_link_watchdog(cs_rank_link *l) {
    double lost = atomic_load(&l->lost_at);
    if (lost && cs_now() - lost > LOST_GRACE) {
        /* the rank is stuck in C code and the controller is gone: leave */
        cs_errf(stderr, "rank %d: the controller is gone; exiting\n", l->rank);
        _exit(CS_END_DIED);
    }
}

int cs_rank_link_watch(cs_rank_link *l, cs_world *w, int epfd, void *tag) {
    l->w = w;
    l->tag = tag;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = tag};
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, l->fd, &ev) < 0) return -1;
    pthread_mutex_lock(&l->lock);
    l->epfd = epfd;
    if (l->out.b.len) arm(l, true);
    pthread_mutex_unlock(&l->lock);
    return 0;
}

void cs_rank_link_on_abort(cs_rank_link *l, void (*drain)(void *ud), void *ud) {
    l->drain = drain;
    l->drain_ud = ud;
}

/* ---- a thread of the link's own, for an engine without a poll loop */

static void *link_main(void *arg) {
    cs_rank_link *l = arg;
    while (!atomic_load(&l->stop)) {
        struct epoll_event evs[4];
        int n = epoll_wait(l->own_epfd, evs, 4, CS_RANK_LINK_TICK_MS);
        for (int i = 0; i < n; i++) {
            if (evs[i].events & EPOLLOUT) cs_rank_link_writable(l);
            if (evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) cs_rank_link_readable(l);
        }
        cs_rank_link_tick(l, cs_now());
        cs_rank_link_watchdog(l);
    }
    return NULL;
}

bool cs_rank_link_driven(cs_rank_link *l) {
    pthread_mutex_lock(&l->lock);
    bool driven = l->epfd >= 0;
    pthread_mutex_unlock(&l->lock);
    return driven;
}

int cs_rank_link_start(cs_rank_link *l, cs_world *w) {
    l->own_epfd = epoll_create1(EPOLL_CLOEXEC);
    if (l->own_epfd < 0) return -1;
    if (cs_rank_link_watch(l, w, l->own_epfd, l) < 0 ||
        pthread_create(&l->thread, NULL, link_main, l) != 0) {
        pthread_mutex_lock(&l->lock);
        l->epfd = -1;
        pthread_mutex_unlock(&l->lock);
        close(l->own_epfd);
        l->own_epfd = -1;
        return -1;
    }
    l->threaded = true;
    return 0;
}

void cs_rank_link_stop(cs_rank_link *l) {
    if (!l->threaded) return;
    atomic_store(&l->stop, 1);
    pthread_join(l->thread, NULL); /* back within a tick */
    l->threaded = false;
    pthread_mutex_lock(&l->lock);
    l->epfd = -1;
    pthread_mutex_unlock(&l->lock);
    close(l->own_epfd);
    l->own_epfd = -1;
}

/* ---- events up */

static void event_emit(void *ud, const cs_event *ev) {
    cs_rank_link *l = ud;
    size_t n = cs_wire_event_len(ev);
    pthread_mutex_lock(&l->lock);
    uint8_t *p = bytes_room(&l->ev, CS_WIRE_HDR + n);
    /* A dropped event would change the controller's verdict without a word:
     * the process ends instead, and the controller reports the rank dead. */
    if (!p) cs_oom("an event for the controller", CS_WIRE_HDR + n);
    cs_wire_hdr_put(p, CS_FR_EVENT, (uint32_t)n, 0);
    cs_cur cur = {.p = p + CS_WIRE_HDR, .len = n};
    cs_wire_event_put(&cur, ev);
    l->ev.b.len += CS_WIRE_HDR + n;
    /* A clock read waits for its answer: what led to it leaves now, not at
     * the next tick. */
    if (ev->type == CS_EV_CLOCK) {
        events_queue_locked(l);
        if (!l->pollout && !l->dead) write_locked(l);
    }
    pthread_mutex_unlock(&l->lock);
}

cs_sink cs_rank_link_sink(cs_rank_link *l) { return (cs_sink){event_emit, l}; }

/* ---- gates of a gated run */

/* Ask for GO: what the rank is about to do, and its tensor as printed for the
 * front end to show (it is the rank's, and the rank stands still until GO). */
static int gate_ask(cs_rank_link *l, cs_rank *r, cs_op op, int line, uint64_t seq) {
    cs_gate_msg g = {.seq = seq, .op = (uint8_t)op, .line = line, .peer = CS_NO_RANK};
    cs_tensor *t = NULL;
    int peer, tag;
    if (cs_rank_gate_op(r, &peer, &tag, &t)) {
        g.peer = peer;
        g.tag = tag;
    }
    char *text = t ? cs_tensor_format(t) : NULL;
    g.text = text;
    g.text_len = text ? strlen(text) : 0;
    size_t n = cs_gate_len(&g);
    uint8_t *meta = malloc(n);
    if (!meta) {
        free(text);
        return CS_ENOMEM;
    }
    cs_cur cur = {.p = meta, .len = n};
    cs_gate_put(&cur, &g);
    free(text);
    int rc = send_frame(l, CS_FR_GATE, meta, (uint32_t)n, true);
    free(meta);
    return rc;
}

int cs_rank_link_gate(void *ud, cs_rank *r, cs_op op, int line) {
    cs_rank_link *l = ud;
    cs_world *w = r->world;
    pthread_mutex_lock(&l->end_lock);
    uint64_t seq = ++l->gate_seq;
    pthread_mutex_unlock(&l->end_lock);
    int rc = gate_ask(l, r, op, line, seq);
    if (rc != CS_OK) return rc;
    /* the rank may stand here long: what its engine holds back leaves now */
    if (w->engine->ops->flush) w->engine->ops->flush(w->engine, false);
    pthread_mutex_lock(&l->end_lock);
    /* GO, ABORT and a lost controller all signal end_cond; the tick is a backstop */
    while (l->go_seq != seq && !l->ended && !cs_world_aborted(w)) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 50 * 1000 * 1000;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&l->end_cond, &l->end_lock, &ts);
    }
    bool go = l->go_seq == seq;
    pthread_mutex_unlock(&l->end_lock);
    return go && !cs_world_aborted(w) ? CS_OK : CS_EABORT;
}

int cs_rank_link_finish(cs_rank_link *l) {
    pthread_mutex_lock(&l->end_lock);
    l->finishing = true;
    pthread_mutex_unlock(&l->end_lock);
    send_frame(l, CS_FR_BYE, NULL, 0, true);
    pthread_mutex_lock(&l->end_lock);
    while (!l->ended) pthread_cond_wait(&l->end_cond, &l->end_lock);
    int why = l->end_reason;
    pthread_mutex_unlock(&l->end_lock);
    return why;
}

/* ---- joining */

/* Read the controller's next frame while joining: ALIVEs are taken in
 * passing (the controller is there, only the others are not yet), silence
 * past the heartbeat's limit ends the wait. 0, or -1 after printing why. */
static int join_read(cs_rank_link *l, double until, cs_frame_hdr *fh, uint8_t **m) {
    char err[256];
    for (;;) {
        double silent_at = l->hb.limit > 0 ? l->hb.heard + l->hb.limit : 0;
        double t = silent_at && silent_at < until ? silent_at : until;
        if (cs_wire_read_frame(l->fd, t, (uint32_t)cs_welcome_len(CS_WIRE_MAX_WORLD), fh, m, err,
                               sizeof err) < 0) {
            if (silent_at && cs_now() >= silent_at)
                cs_errf(l->err, "rank %d: the controller has sent nothing for %g s while "
                                "this rank waited to join (stopped or frozen; %s); leaving\n",
                        l->rank, l->hb.limit, CS_HEARTBEAT_ENV);
            else
                cs_errf(l->err, "rank %d: joining the job failed: %s\n", l->rank, err);
            return -1;
        }
        cs_heartbeat_heard(&l->hb, cs_now());
        if (fh->type != CS_FR_ALIVE) return 0;
        cs_cur in = {.p = *m, .len = fh->meta_len};
        cs_heartbeat_peer(&l->hb, cs_get_u32(&in), cs_now());
        free(*m);
        *m = NULL;
    }
}

int cs_rank_link_join(cs_rank_link *l, uint32_t ip, uint16_t port, cs_welcome *wel) {
    uint8_t meta[CS_HELLO_LEN];
    cs_cur cur = {.p = meta, .len = sizeof meta};
    cs_hello h = {.rank = (uint32_t)l->rank, .world = (uint32_t)l->world, .ip = ip, .port = port};
    memcpy(h.token, l->token, sizeof h.token);
    cs_hello_put(&cur, &h, true);
    if (cs_wire_send(l->fd, CS_FR_HELLO, meta, sizeof meta, cs_now() + CONNECT_SECONDS) < 0) {
        cs_errf(l->err, "rank %d: cannot reach the controller: %s\n", l->rank,
                strerror(errno));
        return -1;
    }
    cs_heartbeat_init(&l->hb, l->hb.limit, cs_now());
    cs_frame_hdr fh;
    uint8_t *m;
    if (join_read(l, cs_now() + JOIN_SECONDS, &fh, &m) < 0) return -1;
    int rc = -1;
    cs_cur in = {.p = m, .len = fh.meta_len};
    if (fh.type == CS_FR_REFUSE) {
        cs_errf(l->err, "rank %d: the controller refused to let it join: %.*s\n",
                l->rank, (int)fh.meta_len, (const char *)m);
    } else if (fh.type == CS_FR_ABORT) {
        cs_errf(l->err, "rank %d: the job ended before it started: %s\n", l->rank,
                cs_end_words((int)cs_get_u32(&in)));
    } else if (fh.type != CS_FR_WELCOME) {
        cs_errf(l->err, "rank %d: the controller answered its HELLO with %s instead of "
                        "WELCOME\n", l->rank, cs_frame_name(fh.type));
    } else if (cs_welcome_get(&in, wel) < 0) {
        cs_errf(l->err, "rank %d: the controller's WELCOME is malformed\n", l->rank);
    } else if (wel->world != (uint32_t)l->world) {
        cs_errf(l->err, "rank %d: the controller's job has %u ranks, not %d (--world)\n",
                l->rank, wel->world, l->world);
        free(wel->ip);
        free(wel->port);
        wel->ip = NULL;
        wel->port = NULL;
    } else {
        rc = 0;
    }
    free(m);
    if (rc == 0) {
        /* From the first tick or set-up poll on, this rank says ALIVE, and
         * the controller judges it from that first one: an engine whose set-up
         * blocks after the join (a GPU library's initialization) is not taken
         * for a frozen rank meanwhile. */
        pthread_mutex_lock(&l->lock);
        double peer = l->hb.peer_limit;
        l->hb_on = true;
        cs_heartbeat_init(&l->hb, l->hb.limit, cs_now());
        l->hb.peer_limit = peer;
        pthread_mutex_unlock(&l->lock);
    }
    return rc;
}

/* ---- set-up after the join, before an engine drives the link */

static int setup_frame(void *ud, const cs_frame_hdr *h, cs_cur *meta, void **dst, char *err,
                       size_t errlen) {
    (void)dst;
    cs_rank_link *l = ud;
    heard(l);
    switch (h->type) {
    case CS_FR_ALIVE: {
        uint32_t ms = cs_get_u32(meta);
        pthread_mutex_lock(&l->lock);
        cs_heartbeat_peer(&l->hb, ms, cs_now());
        pthread_mutex_unlock(&l->lock);
        return 0;
    }
    case CS_FR_FLUSH: /* a rank died: nothing emitted yet, but the controller waits for the word */
        send_frame(l, CS_FR_FLUSHED, NULL, 0, true);
        return 0;
    case CS_FR_ABORT: {
        uint32_t why = cs_get_u32(meta);
        snprintf(err, errlen, "the job ended (%s)", cs_end_words((int)why));
        if (valid_reason(why)) end_job(l, (int)why); /* cs_rank_link_ended says so */
        return -1;
    }
    default:
        snprintf(err, errlen, "unexpected %s frame from the controller", cs_frame_name(h->type));
        return -1;
    }
}

static const cs_rx_ops setup_ops = {setup_frame, link_payload};

double cs_rank_link_interval(cs_rank_link *l) {
    pthread_mutex_lock(&l->lock);
    double t = cs_heartbeat_interval(&l->hb);
    pthread_mutex_unlock(&l->lock);
    return t;
}

int cs_rank_link_setup_poll(cs_rank_link *l, char *err, size_t errlen) {
    int rc = cs_rx_pump(&l->rx, l->fd, &setup_ops, l, err, errlen);
    if (rc > 0 || rc == -2) snprintf(err, errlen, "lost the controller");
    if (rc != 0) return -1;
    double limit;
    pthread_mutex_lock(&l->lock);
    bool silent = heartbeat_locked(l, cs_now(), &limit);
    pthread_mutex_unlock(&l->lock);
    if (silent) {
        snprintf(err, errlen, "the controller has sent nothing for %g s (stopped or frozen; %s)",
                 limit, CS_HEARTBEAT_ENV);
        return -1;
    }
    return 0;
}

bool cs_rank_link_ended(cs_rank_link *l) {
    pthread_mutex_lock(&l->end_lock);
    bool ended = l->ended;
    pthread_mutex_unlock(&l->end_lock);
    return ended;
}

void cs_rank_link_set_heartbeat(cs_rank_link *l, double limit) { l->hb.limit = limit; }

double cs_rank_link_clock(const cs_welcome *wel) {
    char boot[CS_WIRE_BOOT_ID + 1];
    cs_wire_boot_id(boot);
    if (boot[0] && strcmp(boot, wel->boot_id) == 0) return (double)wel->t0_ns * 1e-9;
    return cs_now() - (double)wel->elapsed_us * 1e-6;
}

int cs_rank_link_dial(uint32_t ip, uint16_t port, double deadline) {
    return cs_rank_link_dial_until(ip, port, deadline, NULL, NULL);
}

int cs_rank_link_dial_until(uint32_t ip, uint16_t port, double deadline, bool (*pause)(void *),
                            void *ud) {
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = ip};
    for (;;) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) return -1;
        if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0) {
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            return fd;
        }
        int e = errno;
        close(fd);
        if ((e != ECONNREFUSED && e != ENETUNREACH && e != EHOSTUNREACH && e != ETIMEDOUT) ||
            cs_now() > deadline || (pause ? pause(ud) : (usleep(100 * 1000), false))) {
            errno = e;
            return -1;
        }
        /* not listening yet: try again */
    }
}

/* ---- life cycle */

cs_rank_link *cs_rank_link_new(int fd, int rank, int world, const char *token, FILE *err) {
    cs_rank_link *l = calloc(1, sizeof *l);
    if (!l || cs_rx_init(&l->rx, 0) < 0) {
        free(l);
        close(fd);
        return NULL;
    }
    l->fd = fd;
    l->rank = rank;
    l->world = world;
    snprintf(l->token, sizeof l->token, "%s", token);
    l->err = err;
    l->epfd = l->own_epfd = -1;
    l->hb.limit = CS_HEARTBEAT_DEFAULT;
    pthread_mutex_init(&l->lock, NULL);
    pthread_mutex_init(&l->rx_lock, NULL);
    pthread_mutex_init(&l->end_lock, NULL);
    pthread_cond_init(&l->end_cond, NULL);
    return l;
}

void cs_rank_link_free(cs_rank_link *l) {
    if (!l) return;
    cs_rank_link_stop(l);
    close(l->fd);
    cs_rx_free(&l->rx);
    cs_bytebuf_free(&l->ev.b);
    cs_bytebuf_free(&l->out.b);
    pthread_mutex_destroy(&l->lock);
    pthread_mutex_destroy(&l->rx_lock);
    pthread_mutex_destroy(&l->end_lock);
    pthread_cond_destroy(&l->end_cond);
    free(l);
}

int cs_rank_link_fd(const cs_rank_link *l) { return l->fd; }
