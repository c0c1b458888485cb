/* hub.c -- the hub: a store of blobs, a relay of envelopes and the sequencer
 * of transfers for an engine whose ranks are processes (hub.h says what
 * each frame is for).
 *
 * The hub runs on a thread of rank 0's process and never blocks on a rank:
 * its sockets are read whenever they have bytes, and what it sends is queued
 * per connection and written as each socket takes it. A rank's own writes to
 * the hub may therefore block briefly (the hub always reads again), which is
 * what lets the client write from any thread without a queue of its own.
 *
 * Owns: the hub's sockets, its store, its ticket counter; on the client's
 * side the connection, its reader thread and the values it has received.
 */
#include "hub.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "api.h"
#include "errmsg.h"
#include "rank_link.h"
#include "wire.h"

#define MAX_STRANGERS 64 /* connections that have not proven the token yet */

/* ---- the frame's codec */

size_t cs_hub_msg_len(const cs_hub_msg *m) { return CS_HUB_FIXED + m->len; }

void cs_hub_msg_put(cs_cur *c, const cs_hub_msg *m) {
    cs_put_u8(c, m->kind);
    cs_put_u8(c, 0);
    cs_put_u16(c, 0);
    cs_put_u32(c, m->peer);
    cs_put_u32(c, m->peer2);
    cs_put_u32(c, m->key);
    cs_put_u64(c, m->seq);
    cs_put_u64(c, m->sreq);
    cs_put_u64(c, m->rid);
    cs_put_u64(c, m->bytes);
    cs_put_bytes(c, m->data, m->len);
}

int cs_hub_msg_get(cs_cur *c, cs_hub_msg *m, int world) {
    m->kind = cs_get_u8(c);
    uint8_t pad = cs_get_u8(c);
    uint16_t pad2 = cs_get_u16(c);
    m->peer = cs_get_u32(c);
    m->peer2 = cs_get_u32(c);
    m->key = cs_get_u32(c);
    m->seq = cs_get_u64(c);
    m->sreq = cs_get_u64(c);
    m->rid = cs_get_u64(c);
    m->bytes = cs_get_u64(c);
    if (c->bad || c->pos > c->len || pad || pad2) return -1;
    m->len = (uint32_t)(c->len - c->pos);
    m->data = m->len ? cs_get_bytes(c, m->len) : NULL;
    if (m->len > CS_HUB_MAX_DATA || m->kind == 0 || m->kind >= CS_HUB_NKINDS) return -1;
    if (m->peer >= (uint32_t)world || m->peer2 >= (uint32_t)world) return -1;
    switch (m->kind) {
    case CS_HUB_PUT: case CS_HUB_VALUE: return m->len ? 0 : -1;
    case CS_HUB_ENV: return m->len == CS_WIRE_ENVELOPE ? 0 : -1;
    case CS_HUB_REJECT: return 0;
    default: return m->len ? -1 : 0; /* GET, MATCH, TICKET */
    }
}

/* Encode m as a whole frame into a fresh buffer. */
static uint8_t *frame_of(const cs_hub_msg *m, size_t *len) {
    size_t meta = cs_hub_msg_len(m);
    uint8_t *p = malloc(CS_WIRE_HDR + meta);
    if (!p) return NULL;
    cs_wire_hdr_put(p, CS_FR_HUB, (uint32_t)meta, 0);
    cs_cur c = {.p = p + CS_WIRE_HDR, .len = meta};
    cs_hub_msg_put(&c, m);
    *len = CS_WIRE_HDR + meta;
    return p;
}

/* ---- the hub */

typedef struct hconn {
    struct hconn *next;   /* strangers only */
    struct cs_hub *h;
    int fd, rank;         /* rank -1: has not proven the token yet */
    cs_rx rx;
    uint8_t *out;         /* queued bytes out[off, len) */
    size_t off, len, cap;
    bool pollout, dead;
} hconn;

typedef struct entry {
    struct entry *next;
    uint32_t key;
    uint8_t *blob;        /* NULL: asked for, not stored yet */
    uint32_t len;
    uint32_t *waiting;    /* world entries: how many GETs each rank made before it was there */
} entry;

struct cs_hub {
    char token[CS_WIRE_TOKEN + 1];
    int world;
    int lfd, epfd, wakefd;
    uint16_t port;
    hconn **ranks;        /* world entries, NULL until joined and once gone */
    hconn **early;        /* world entries: what waits for a rank yet to join */
    bool *gone;           /* world entries: the rank joined and left */
    hconn *strangers;
    int nstrangers;
    entry *store;
    _Atomic uint64_t seq; /* the last ticket's number */
    pthread_t thread;
    bool started;
    _Atomic double drain_until; /* set by cs_hub_free: serve until all is written, or then */
};

static void conn_arm(hconn *c, bool out) {
    if (c->pollout == out || c->dead) return;
    struct epoll_event ev = {.events = EPOLLIN | (out ? EPOLLOUT : 0), .data.ptr = c};
    epoll_ctl(c->h->epfd, EPOLL_CTL_MOD, c->fd, &ev);
    c->pollout = out;
}

static void conn_write(hconn *c) {
    while (c->off < c->len && !c->dead) {
        ssize_t n = send(c->fd, c->out + c->off, c->len - c->off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) c->off += (size_t)n;
        else if (n < 0 && errno == EINTR) continue;
        else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
        else c->dead = true;
    }
    if (c->off == c->len) c->off = c->len = 0;
    conn_arm(c, c->len > 0);
}

/* Queue m for c and write what the socket takes. A hub out of memory cannot
 * keep its promise of order: the connection goes, and its rank fails. */
static void conn_send(hconn *c, const cs_hub_msg *m) {
    if (!c || c->dead) return;
    size_t meta = cs_hub_msg_len(m), need = CS_WIRE_HDR + meta;
    if (c->len + need > c->cap) {
        size_t cap = c->cap ? c->cap : 4096;
        while (cap < c->len + need) cap *= 2;
        uint8_t *p = realloc(c->out, cap);
        if (!p) {
            c->dead = true;
            return;
        }
        c->out = p;
        c->cap = cap;
    }
    cs_wire_hdr_put(c->out + c->len, CS_FR_HUB, (uint32_t)meta, 0);
    cs_cur cur = {.p = c->out + c->len + CS_WIRE_HDR, .len = meta};
    cs_hub_msg_put(&cur, m);
    c->len += need;
    if (!c->pollout) conn_write(c);
}

/* What goes to rank i: to its connection, or kept for it until it joins (a
 * rank may send to one whose process is still starting); nothing once it left. */
static void rank_send(cs_hub *h, uint32_t i, const cs_hub_msg *m) {
    if (h->ranks[i]) {
        conn_send(h->ranks[i], m);
    } else if (!h->gone[i]) {
        if (!h->early[i] && !(h->early[i] = calloc(1, sizeof *h->early[i]))) return;
        h->early[i]->pollout = true; /* never written: it has no socket */
        conn_send(h->early[i], m);
    }
}

static void conn_close(hconn *c) {
    epoll_ctl(c->h->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    cs_rx_free(&c->rx);
    free(c->out);
    free(c);
}

static entry *entry_of(cs_hub *h, uint32_t key, bool make) {
    for (entry *e = h->store; e; e = e->next)
        if (e->key == key) return e;
    if (!make) return NULL;
    entry *e = calloc(1, sizeof *e);
    if (!e || !(e->waiting = calloc((size_t)h->world, sizeof *e->waiting))) {
        free(e);
        return NULL;
    }
    e->key = key;
    e->next = h->store;
    h->store = e;
    return e;
}

static int on_put(cs_hub *h, const cs_hub_msg *m, char *err, size_t errlen) {
    entry *e = entry_of(h, m->key, true);
    if (!e) {
        snprintf(err, errlen, "the hub is out of memory");
        return -1;
    }
    if (e->blob) { /* the first PUT stands; the same blob again is harmless */
        if (e->len == m->len && memcmp(e->blob, m->data, m->len) == 0) return 0;
        snprintf(err, errlen, "PUT of key %u, which holds another blob", m->key);
        return -1;
    }
    if (!(e->blob = malloc(m->len))) {
        snprintf(err, errlen, "the hub is out of memory");
        return -1;
    }
    memcpy(e->blob, m->data, m->len);
    e->len = m->len;
    cs_hub_msg v = {.kind = CS_HUB_VALUE, .key = m->key, .data = e->blob, .len = e->len};
    for (int i = 0; i < h->world; i++) /* one VALUE per GET */
        for (; e->waiting[i]; e->waiting[i]--) rank_send(h, (uint32_t)i, &v);
    return 0;
}

static int on_get(cs_hub *h, int from, const cs_hub_msg *m, char *err, size_t errlen) {
    entry *e = entry_of(h, m->key, true);
    if (!e) {
        snprintf(err, errlen, "the hub is out of memory");
        return -1;
    }
    if (!e->blob) {
        e->waiting[from]++;
        return 0;
    }
    cs_hub_msg v = {.kind = CS_HUB_VALUE, .key = m->key, .data = e->blob, .len = e->len};
    rank_send(h, (uint32_t)from, &v);
    return 0;
}

/* A frame from a joined rank. */
static int rank_frame(hconn *c, cs_cur *meta, char *err, size_t errlen) {
    cs_hub *h = c->h;
    cs_hub_msg m;
    if (cs_hub_msg_get(meta, &m, h->world) < 0) {
        snprintf(err, errlen, "malformed HUB frame");
        return -1;
    }
    switch (m.kind) {
    case CS_HUB_PUT: return on_put(h, &m, err, errlen);
    case CS_HUB_GET: return on_get(h, c->rank, &m, err, errlen);
    case CS_HUB_ENV: {
        cs_envelope env;
        cs_cur ec = {.p = (uint8_t *)m.data, .len = m.len};
        if (cs_envelope_get(&ec, &env, h->world) < 0 || env.src != c->rank) {
            snprintf(err, errlen, "malformed envelope, or one not from rank %d", c->rank);
            return -1;
        }
        uint32_t to = m.peer;
        m.peer = (uint32_t)c->rank;
        rank_send(h, to, &m);
        return 0;
    }
    case CS_HUB_MATCH: {
        /* One number per transfer, sent to both ends before anything later:
         * every connection carries its tickets in increasing order. */
        cs_hub_msg t = {.kind = CS_HUB_TICKET, .seq = atomic_load(&h->seq) + 1, .peer = m.peer,
                        .peer2 = (uint32_t)c->rank, .sreq = m.sreq, .rid = m.rid, .bytes = m.bytes};
        atomic_store(&h->seq, t.seq);
        rank_send(h, m.peer, &t);
        if (m.peer != (uint32_t)c->rank) conn_send(c, &t);
        return 0;
    }
    case CS_HUB_REJECT: {
        uint32_t to = m.peer;
        m.peer = (uint32_t)c->rank;
        rank_send(h, to, &m);
        return 0;
    }
    default:
        snprintf(err, errlen, "a rank sent the hub's own %u", m.kind);
        return -1;
    }
}

/* The first frame of a connection: PEER with the token and a rank not yet in. */
static int stranger_frame(hconn *c, const cs_frame_hdr *fh, cs_cur *meta, char *err, size_t errlen) {
    cs_hub *h = c->h;
    cs_hello p;
    if (fh->type != CS_FR_PEER || cs_hello_get(meta, &p, false) < 0) {
        snprintf(err, errlen, "expected PEER, got %s", cs_frame_name(fh->type));
        return -1;
    }
    if (!cs_wire_token_eq(p.token, h->token)) {
        snprintf(err, errlen, "wrong job token");
        return -1;
    }
    if (p.world != (uint32_t)h->world || h->ranks[p.rank] || h->gone[p.rank]) {
        snprintf(err, errlen, "rank %u of %u: not a rank this hub waits for", p.rank, p.world);
        return -1;
    }
    c->rank = (int)p.rank;
    h->ranks[p.rank] = c;
    hconn *e = h->early[p.rank];
    if (e) { /* what waited for it goes first */
        c->out = e->out, c->len = e->len, c->cap = e->cap;
        free(e);
        h->early[p.rank] = NULL;
        conn_write(c);
    }
    hconn **pp = &h->strangers;
    while (*pp != c) pp = &(*pp)->next;
    *pp = c->next;
    c->next = NULL;
    h->nstrangers--;
    return 0;
}

static int hub_frame(void *ud, const cs_frame_hdr *fh, cs_cur *meta, void **dst, char *err,
                     size_t errlen) {
    (void)dst;
    hconn *c = ud;
    if (c->rank < 0) return stranger_frame(c, fh, meta, err, errlen);
    if (fh->type != CS_FR_HUB) {
        snprintf(err, errlen, "unexpected %s frame", cs_frame_name(fh->type));
        return -1;
    }
    return rank_frame(c, meta, err, errlen);
}

static int hub_payload(void *ud, char *err, size_t errlen) {
    (void)ud;
    snprintf(err, errlen, "unexpected payload");
    return -1;
}

static const cs_rx_ops hub_ops = {hub_frame, hub_payload};

static void drop(cs_hub *h, hconn *c, const char *why) {
    if (c->rank < 0) {
        if (why) cs_errf(stderr, "the hub closed a connection: %s\n", why);
        hconn **pp = &h->strangers;
        while (*pp && *pp != c) pp = &(*pp)->next;
        if (*pp) *pp = c->next;
        h->nstrangers--;
    } else {
        if (why) cs_errf(stderr, "the hub closed rank %d's connection: %s\n", c->rank, why);
        h->ranks[c->rank] = NULL;
        h->gone[c->rank] = true;
    }
    conn_close(c);
}

static void accept_one(cs_hub *h) {
    int fd = accept4(h->lfd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0) return;
    hconn *c = calloc(1, sizeof *c);
    if (!c || cs_rx_init(&c->rx, 0) < 0) {
        free(c);
        close(fd);
        return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    c->h = h;
    c->fd = fd;
    c->rank = -1;
    c->next = h->strangers;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
    if (epoll_ctl(h->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
        cs_rx_free(&c->rx);
        free(c);
        close(fd);
        return;
    }
    h->strangers = c;
    /* a flood of strangers loses its oldest, never a rank */
    if (++h->nstrangers > MAX_STRANGERS) {
        hconn *old = h->strangers;
        while (old->next) old = old->next;
        drop(h, old, "too many connections waiting to prove the job token");
    }
}

/* Everything queued for the ranks has been written. */
static bool flushed(const cs_hub *h) {
    for (int i = 0; i < h->world; i++)
        if (h->ranks[i] && !h->ranks[i]->dead && h->ranks[i]->len) return false;
    return true;
}

static void *hub_main(void *arg) {
    cs_hub *h = arg;
    for (;;) {
        double until = atomic_load(&h->drain_until);
        if (until > 0 && (flushed(h) || cs_now() > until)) break;
        struct epoll_event evs[16];
        int n = epoll_wait(h->epfd, evs, 16, 100);
        bool accept = false;
        for (int i = 0; i < n; i++) {
            void *p = evs[i].data.ptr;
            if (p == h) { /* after the others: an accept may drop a stranger of this batch */
                accept = true;
                continue;
            }
            if (p == &h->wakefd) continue;
            hconn *c = p;
            if (evs[i].events & EPOLLOUT) conn_write(c);
            char err[256] = "";
            int rc = 0;
            if (!c->dead && (evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)))
                rc = cs_rx_pump(&c->rx, c->fd, &hub_ops, c, err, sizeof err);
            /* a rank that leaves closes between frames (rc 1): not worth a word */
            if (rc != 0 || c->dead) drop(h, c, rc == -1 ? err : NULL);
        }
        if (accept) accept_one(h);
    }
    return NULL;
}

cs_hub *cs_hub_new(const char *token, int world, uint32_t ip, char *err, size_t errlen) {
    cs_hub *h = calloc(1, sizeof *h);
    if (!h || !(h->ranks = calloc((size_t)world, sizeof *h->ranks)) ||
        !(h->early = calloc((size_t)world, sizeof *h->early)) ||
        !(h->gone = calloc((size_t)world, sizeof *h->gone))) {
        if (h) free(h->ranks), free(h->early);
        free(h);
        snprintf(err, errlen, "out of memory for the hub");
        return NULL;
    }
    snprintf(h->token, sizeof h->token, "%s", token);
    h->world = world;
    h->wakefd = -1;
    h->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0); /* accept never blocks */
    h->epfd = epoll_create1(EPOLL_CLOEXEC);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = ip};
    socklen_t len = sizeof sa;
    int one = 1;
    if (h->lfd >= 0) setsockopt(h->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (h->lfd < 0 || h->epfd < 0 || bind(h->lfd, (struct sockaddr *)&sa, sizeof sa) < 0 ||
        listen(h->lfd, 128) < 0 || getsockname(h->lfd, (struct sockaddr *)&sa, &len) < 0 ||
        (h->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
        snprintf(err, errlen, "cannot listen for the hub's connections: %s", strerror(errno));
        cs_hub_free(h);
        return NULL;
    }
    h->port = ntohs(sa.sin_port);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = h};
    struct epoll_event wake = {.events = EPOLLIN, .data.ptr = &h->wakefd};
    if (epoll_ctl(h->epfd, EPOLL_CTL_ADD, h->lfd, &ev) < 0 ||
        epoll_ctl(h->epfd, EPOLL_CTL_ADD, h->wakefd, &wake) < 0) {
        snprintf(err, errlen, "cannot watch the hub's socket: %s", strerror(errno));
        cs_hub_free(h);
        return NULL;
    }
    return h;
}

uint16_t cs_hub_port(const cs_hub *h) { return h->port; }
uint64_t cs_hub_tickets(cs_hub *h) { return atomic_load(&h->seq); }

int cs_hub_start(cs_hub *h) {
    if (pthread_create(&h->thread, NULL, hub_main, h) != 0) return -1;
    h->started = true;
    return 0;
}

void cs_hub_free(cs_hub *h) {
    if (!h) return;
    if (h->started) {
        /* What the hub still has for a rank (a ticket of a transfer that a
         * rank's script never waited for) leaves first, briefly: a rank that
         * got one half of a transfer and not the other would wait for it. */
        atomic_store(&h->drain_until, cs_now() + 2.0);
        uint64_t one = 1;
        if (write(h->wakefd, &one, sizeof one) < 0) { /* the loop's timeout wakes it anyway */ }
        pthread_join(h->thread, NULL);
        h->started = false;
    }
    for (int i = 0; h->ranks && i < h->world; i++) {
        if (h->ranks[i]) conn_close(h->ranks[i]);
        if (h->early[i]) free(h->early[i]->out), free(h->early[i]);
    }
    for (hconn *c = h->strangers, *next; c; c = next) {
        next = c->next;
        conn_close(c);
    }
    for (entry *e = h->store, *next; e; e = next) {
        next = e->next;
        free(e->blob);
        free(e->waiting);
        free(e);
    }
    if (h->lfd >= 0) close(h->lfd);
    if (h->epfd >= 0) close(h->epfd);
    if (h->wakefd >= 0) close(h->wakefd);
    free(h->ranks);
    free(h->early);
    free(h->gone);
    free(h);
}

/* ---- the client */

typedef struct kept { /* a frame for the handler, or a value for a GET */
    struct kept *next;
    cs_hub_msg m;
    uint8_t data[];
} kept;

struct cs_hub_client {
    int fd, rank, world;
    pthread_mutex_t wlock;  /* writers */
    pthread_mutex_t lock;   /* below */
    pthread_cond_t cond;
    cs_hub_fn fn;
    void *ud;
    kept *held, **held_tail; /* frames before the handler */
    kept *values;
    bool lost;
    char why[256];
    cs_rx rx;
    pthread_t thread;
    _Atomic int stop;
};

static kept *keep(const cs_hub_msg *m) {
    kept *k = malloc(sizeof *k + m->len);
    if (!k) return NULL;
    k->next = NULL;
    k->m = *m;
    if (m->len) memcpy(k->data, m->data, m->len);
    k->m.data = m->len ? k->data : NULL;
    return k;
}

static int client_frame(void *ud, const cs_frame_hdr *fh, cs_cur *meta, void **dst, char *err,
                        size_t errlen) {
    (void)dst;
    cs_hub_client *c = ud;
    cs_hub_msg m;
    if (fh->type != CS_FR_HUB || cs_hub_msg_get(meta, &m, c->world) < 0 ||
        (m.kind != CS_HUB_VALUE && m.kind != CS_HUB_ENV && m.kind != CS_HUB_TICKET &&
         m.kind != CS_HUB_REJECT)) {
        snprintf(err, errlen, "malformed %s frame from the hub", cs_frame_name(fh->type));
        return -1;
    }
    pthread_mutex_lock(&c->lock);
    if (m.kind == CS_HUB_VALUE || !c->fn || c->held) {
        kept *k = keep(&m);
        if (!k) {
            pthread_mutex_unlock(&c->lock);
            snprintf(err, errlen, "out of memory for a frame from the hub");
            return -1;
        }
        if (m.kind == CS_HUB_VALUE) {
            k->next = c->values;
            c->values = k;
            pthread_cond_broadcast(&c->cond);
        } else {
            *c->held_tail = k;
            c->held_tail = &k->next;
        }
        pthread_mutex_unlock(&c->lock);
        return 0;
    }
    cs_hub_fn fn = c->fn;
    void *fud = c->ud;
    pthread_mutex_unlock(&c->lock);
    fn(fud, &m, NULL);
    return 0;
}

static const cs_rx_ops client_ops = {client_frame, hub_payload};

/* The frames kept before the handler, in order (the reader's thread only). */
static void deliver_held(cs_hub_client *c) {
    pthread_mutex_lock(&c->lock);
    kept *k = c->fn ? c->held : NULL;
    if (k) {
        c->held = NULL;
        c->held_tail = &c->held;
    }
    cs_hub_fn fn = c->fn;
    void *ud = c->ud;
    pthread_mutex_unlock(&c->lock);
    while (k) {
        kept *next = k->next;
        fn(ud, &k->m, NULL);
        free(k);
        k = next;
    }
}

static void *client_main(void *arg) {
    cs_hub_client *c = arg;
    char err[200] = ""; /* fits c->why after "lost the hub: " */
    int rc = 0;
    while (!atomic_load(&c->stop) && rc == 0) {
        deliver_held(c);
        struct pollfd p = {.fd = c->fd, .events = POLLIN};
        if (poll(&p, 1, 20) <= 0) continue;
        rc = cs_rx_pump(&c->rx, c->fd, &client_ops, c, err, sizeof err);
    }
    deliver_held(c);
    if (atomic_load(&c->stop)) return NULL;
    pthread_mutex_lock(&c->lock);
    c->lost = true;
    snprintf(c->why, sizeof c->why, "lost the hub%s%s", rc == 1 ? "" : ": ", rc == 1 ? "" : err);
    cs_hub_fn fn = c->fn;
    void *ud = c->ud;
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
    if (fn) fn(ud, NULL, c->why);
    return NULL;
}

cs_hub_client *cs_hub_dial(uint32_t ip, uint16_t port, const char *token, int rank, int world,
                           double deadline, char *err, size_t errlen) {
    cs_hub_client *c = calloc(1, sizeof *c);
    if (!c || cs_rx_init(&c->rx, 0) < 0) {
        free(c);
        snprintf(err, errlen, "out of memory for the hub's connection");
        return NULL;
    }
    c->rank = rank;
    c->world = world;
    c->held_tail = &c->held;
    pthread_mutex_init(&c->wlock, NULL);
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->cond, NULL);
    c->fd = cs_rank_link_dial(ip, port, deadline);
    uint8_t meta[CS_PEER_LEN];
    cs_cur cur = {.p = meta, .len = sizeof meta};
    cs_hello hello = {.rank = (uint32_t)rank, .world = (uint32_t)world};
    memcpy(hello.token, token, CS_WIRE_TOKEN);
    cs_hello_put(&cur, &hello, false);
    if (c->fd < 0 || cs_wire_send(c->fd, CS_FR_PEER, meta, sizeof meta, deadline) < 0) {
        char a[64];
        snprintf(err, errlen, "cannot reach the hub at %s: %s",
                 cs_wire_addr_str(ip, port, a, sizeof a), strerror(errno));
        if (c->fd >= 0) close(c->fd);
        cs_rx_free(&c->rx);
        free(c);
        return NULL;
    }
    if (pthread_create(&c->thread, NULL, client_main, c) != 0) {
        snprintf(err, errlen, "cannot start the hub's reader: %s", strerror(errno));
        close(c->fd);
        cs_rx_free(&c->rx);
        free(c);
        return NULL;
    }
    return c;
}

void cs_hub_client_on(cs_hub_client *c, cs_hub_fn fn, void *ud) {
    pthread_mutex_lock(&c->lock);
    c->fn = fn;
    c->ud = ud;
    bool lost = c->lost;
    pthread_mutex_unlock(&c->lock);
    if (lost) fn(ud, NULL, c->why); /* the reader has ended: say it here */
}

int cs_hub_send(cs_hub_client *c, const cs_hub_msg *m) {
    size_t len;
    uint8_t *f = frame_of(m, &len);
    if (!f) return -1;
    pthread_mutex_lock(&c->wlock);
    /* the hub always reads on: a write that does not end is a hub that is gone */
    int rc = cs_wire_write_all(c->fd, f, len, cs_now() + 60.0);
    pthread_mutex_unlock(&c->wlock);
    free(f);
    return rc;
}

int cs_hub_put(cs_hub_client *c, uint32_t key, const void *blob, size_t len) {
    if (!len || len > CS_HUB_MAX_DATA) return -1;
    cs_hub_msg m = {.kind = CS_HUB_PUT, .key = key, .data = blob, .len = (uint32_t)len};
    return cs_hub_send(c, &m);
}

long cs_hub_get(cs_hub_client *c, uint32_t key, void *buf, size_t cap, double deadline,
                bool (*stop)(void *), void *ud, char *err, size_t errlen) {
    cs_hub_msg m = {.kind = CS_HUB_GET, .key = key};
    if (cs_hub_send(c, &m) < 0) {
        snprintf(err, errlen, "lost the hub");
        return -1;
    }
    long got = -1;
    pthread_mutex_lock(&c->lock);
    for (;;) {
        kept **pp = &c->values;
        while (*pp && (*pp)->m.key != key) pp = &(*pp)->next;
        if (*pp) {
            kept *k = *pp;
            *pp = k->next;
            if (k->m.len <= cap) {
                memcpy(buf, k->m.data, k->m.len);
                got = (long)k->m.len;
            } else {
                snprintf(err, errlen, "the hub's value for key %u has %u bytes (expected at most %zu)",
                         key, k->m.len, cap);
            }
            free(k);
            break;
        }
        if (c->lost) {
            snprintf(err, errlen, "%s", c->why);
            break;
        }
        if ((stop && stop(ud)) || cs_now() > deadline) {
            snprintf(err, errlen, stop && stop(ud) ? "the run ended" : "no value for key %u in time", key);
            break;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 20 * 1000 * 1000;
        if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&c->cond, &c->lock, &ts);
    }
    pthread_mutex_unlock(&c->lock);
    return got;
}

void cs_hub_client_free(cs_hub_client *c) {
    if (!c) return;
    atomic_store(&c->stop, 1);
    shutdown(c->fd, SHUT_RDWR);
    pthread_join(c->thread, NULL);
    close(c->fd);
    cs_rx_free(&c->rx);
    for (kept *k = c->held, *n; k; k = n) {
        n = k->next;
        free(k);
    }
    for (kept *k = c->values, *n; k; k = n) {
        n = k->next;
        free(k);
    }
    pthread_mutex_destroy(&c->wlock);
    pthread_mutex_destroy(&c->lock);
    pthread_cond_destroy(&c->cond);
    free(c);
}
