/* engine_tcp_mesh.c -- the tcp engine's set-up in a rank process: listen
 * for the peers, join the job with that address (the controller publishes
 * every rank's in WELCOME), then connect the full mesh: to every lower rank,
 * while every higher rank connects here, each proving the job token (PEER).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "engine_tcp_internal.h"
#include "errmsg.h"

/* A backstop only: a peer that dies before connecting is reported by the
 * controller, whose ABORT (or close) ends the wait at once. */
#define MESH_SECONDS 3600.0

/* Listen on ip (network order), any port: the address goes into HELLO. The
 * backlog has room for every higher rank: they all dial at once, while this
 * rank is still dialling its lower ones (a full backlog drops their SYNs,
 * which the kernel resends only after a second or more). The kernel caps it
 * at net.core.somaxconn. */
static int listen_on(uint32_t ip, int backlog, uint16_t *port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = ip};
    socklen_t len = sizeof sa;
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, backlog) < 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) < 0) {
        if (fd >= 0) close(fd);
        return -1;
    }
    *port = ntohs(sa.sin_port);
    return fd;
}

/* Connections on our listener are served together, so that strangers can
 * neither stall nor fail the join: a frame that is not a PEER with the job
 * token closes one at once. A rank connects to its lower peers before it
 * accepts, so by then every higher rank may be waiting in the backlog with
 * its PEER already sent: each accepted connection is read at once, and the
 * table holds every higher rank still missing and up to MAX_STRANGERS more;
 * only when that is full does its oldest go (a flood). None is closed for
 * being slow (a peer on a loaded machine may be; no run may depend on
 * timing): silent ones go when the mesh is complete. A stranger is never
 * blamed on a rank, nor logged: this port was told only to the job's ranks,
 * so a stranger here is another run's stale connection (the kernel reuses
 * ports) or a scan, and a run's output must not depend on other runs. */
#define MAX_STRANGERS 64
#define PEER_FRAME (CS_WIRE_HDR + CS_PEER_LEN)

typedef struct pending {
    int fd;
    size_t got;
    uint8_t buf[PEER_FRAME];
} pending;

static void drop(pending *p) {
    close(p->fd);
    p->fd = -1;
}

/* Read what p has sent: 0 while incomplete, the peer's rank once it proved
 * itself, -1 once dropped. */
static int peer_read(const cs_rank_setup *wk, pending *p, const int *fds) {
    char err[256];
    ssize_t n = read(p->fd, p->buf + p->got, PEER_FRAME - p->got);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return 0;
    if (n <= 0) {
        drop(p);
        return -1;
    }
    size_t was = p->got;
    p->got += (size_t)n;
    cs_frame_hdr fh;
    if (was < CS_WIRE_HDR && p->got >= CS_WIRE_HDR && /* the header: judged at once */
        (cs_wire_hdr_get(p->buf, 0, &fh, err, sizeof err) < 0 || fh.type != CS_FR_PEER ||
         fh.meta_len != CS_PEER_LEN)) {
        drop(p);
        return -1;
    }
    if (p->got < PEER_FRAME) return 0;
    cs_hello h;
    cs_cur in = {.p = p->buf + CS_WIRE_HDR, .len = CS_PEER_LEN};
    if (cs_hello_get(&in, &h, false) == 0 && cs_wire_token_eq(h.token, wk->token) &&
        h.world == (uint32_t)wk->world && (int)h.rank > wk->rank && fds[h.rank] < 0)
        return (int)h.rank;
    drop(p);
    return -1;
}

/* Read p; once it proves itself a peer, its connection is that peer's. */
static void settle(const cs_rank_setup *wk, pending *p, int *fds, int *missing) {
    int peer = peer_read(wk, p, fds);
    if (peer > 0) {
        int one = 1;
        setsockopt(p->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        fds[peer] = p->fd;
        p->fd = -1;
        (*missing)--;
    }
}

/* Keep the connections still pending, in arrival order. */
static int compact(pending *pend, int np) {
    int k = 0;
    for (int i = 0; i < np; i++)
        if (pend[i].fd >= 0) pend[k++] = pend[i];
    return k;
}

/* Accept until every higher rank has proved itself (or the deadline). */
static int accept_peers(const cs_rank_setup *wk, int lfd, int *fds, double deadline) {
    int link = cs_rank_link_fd(wk->link);
    int np = 0, missing = wk->world - 1 - wk->rank, cap = missing + MAX_STRANGERS;
    pending *pend = malloc((size_t)cap * sizeof *pend);
    struct pollfd *pfd = malloc((size_t)(cap + 2) * sizeof *pfd);
    if (!pend || !pfd) {
        free(pend);
        free(pfd);
        cs_errf(wk->err, "rank %d: out of memory joining the job\n", wk->rank);
        return -1;
    }
    while (missing > 0) {
        double now = cs_now();
        if (now >= deadline) break;
        pfd[0] = (struct pollfd){.fd = lfd, .events = POLLIN};
        for (int i = 0; i < np; i++) pfd[i + 1] = (struct pollfd){.fd = pend[i].fd, .events = POLLIN};
        pfd[np + 1] = (struct pollfd){.fd = link, .events = POLLIN};
        /* the link's heartbeat goes on meanwhile: wake for it too */
        double until = now + cs_rank_link_interval(wk->link);
        if (until > deadline) until = deadline;
        int ms = (int)((until - now) * 1000) + 1;
        if (poll(pfd, (nfds_t)np + 2, ms) < 0 && errno != EINTR) break;
        char why[256];
        if (cs_rank_link_setup_poll(wk->link, why, sizeof why) < 0) { /* ABORT, or no controller */
            for (int i = 0; i < np; i++) close(pend[i].fd);
            free(pend);
            free(pfd);
            if (!cs_rank_link_ended(wk->link)) /* an ABORT: the report says why */
                cs_errf(wk->err, "rank %d: %s while it waited for %d higher rank%s to connect\n",
                        wk->rank, why, missing, missing == 1 ? "" : "s");
            return -1;
        }
        for (int i = 0; i < np; i++)
            if (pfd[i + 1].revents) settle(wk, &pend[i], fds, &missing);
        np = compact(pend, np);
        if (!(pfd[0].revents & POLLIN)) continue;
        for (;;) {
            int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
            if (fd < 0) break;
            if (np == cap) { /* a flood: the oldest goes */
                drop(&pend[0]);
                memmove(pend, pend + 1, (size_t)--np * sizeof *pend);
            }
            pend[np] = (pending){.fd = fd};
            settle(wk, &pend[np], fds, &missing); /* its PEER may be here already */
            if (pend[np].fd >= 0) np++;
        }
    }
    for (int i = 0; i < np; i++) close(pend[i].fd);
    free(pend);
    free(pfd);
    if (missing > 0) {
        cs_errf(wk->err, "rank %d: %d higher rank%s never connected\n", wk->rank, missing,
                missing == 1 ? "" : "s");
        return -1;
    }
    return 0;
}

/* Watch the link for up to s seconds: true once the controller ended the
 * job (or is gone, which ends it too). */
static bool job_over_within(const cs_rank_setup *wk, double s) {
    double until = cs_now() + s;
    char why[256];
    for (;;) {
        if (cs_rank_link_setup_poll(wk->link, why, sizeof why) < 0) return true;
        double now = cs_now();
        if (now >= until) return false;
        struct pollfd pfd = {.fd = cs_rank_link_fd(wk->link), .events = POLLIN};
        double step = cs_rank_link_interval(wk->link);
        if (now + step > until) step = until - now;
        poll(&pfd, 1, (int)(step * 1000) + 1);
    }
}

/* Between two dials of a lower peer that does not listen yet: watch the
 * link, since a peer whose script already failed has left, and the
 * controller's ABORT ends the wait. */
static bool peer_pause(void *wk) { return job_over_within(wk, 0.1); }

/* How long a rank that lost a lower peer while connecting waits for the
 * controller's word: a peer process that left has failed or died, and the
 * controller ends the job for that at once. */
#define PEER_LOST_SECONDS 10.0

static int mesh_connect(const cs_rank_setup *wk, const cs_welcome *wel, int lfd, int *fds) {
    uint8_t meta[CS_PEER_LEN];
    cs_cur cur = {.p = meta, .len = sizeof meta};
    cs_hello h = {.rank = (uint32_t)wk->rank, .world = (uint32_t)wk->world};
    memcpy(h.token, wk->token, sizeof h.token);
    cs_hello_put(&cur, &h, false);
    double deadline = cs_now() + MESH_SECONDS;
    for (int j = 0; j < wk->rank; j++) {
        fds[j] = cs_rank_link_dial_until(wel->ip[j], wel->port[j], deadline, peer_pause,
                                         (void *)wk);
        if (fds[j] < 0 || cs_wire_send(fds[j], CS_FR_PEER, meta, sizeof meta, deadline) < 0) {
            int e = errno;
            /* The job ended (the peer's script failed, say): a consequence,
             * not this rank's failure; the report gives the cause. */
            if (!cs_rank_link_ended(wk->link)) job_over_within(wk, PEER_LOST_SECONDS);
            if (cs_rank_link_ended(wk->link)) return -1;
            char a[64];
            cs_errf(wk->err, "rank %d: cannot connect to rank %d at %s: %s\n", wk->rank, j,
                    cs_wire_addr_str(wel->ip[j], wel->port[j], a, sizeof a), strerror(e));
            return -1;
        }
    }
    return accept_peers(wk, lfd, fds, deadline);
}

void *tcp_rank_setup(const cs_rank_setup *s) {
    int *fds = malloc((size_t)s->world * sizeof *fds);
    cs_tcp_mesh *m = calloc(1, sizeof *m);
    if (!fds || !m) {
        cs_errf(s->err, "rank %d: out of memory joining the job\n", s->rank);
        goto fail;
    }
    for (int i = 0; i < s->world; i++) fds[i] = -1;
    uint16_t port = 0;
    int lfd = listen_on(s->listen_any ? htonl(INADDR_ANY) : s->ip, s->world > 128 ? s->world : 128, &port);
    if (lfd < 0) {
        char a[INET_ADDRSTRLEN] = "?";
        int e = errno;
        inet_ntop(AF_INET, &s->ip, a, sizeof a);
        cs_errf(s->err, "rank %d: cannot listen on %s for its peers: %s\n", s->rank, a,
                strerror(e));
        goto fail;
    }
    int rc = cs_rank_link_join(s->link, s->ip, port, s->wel);
    if (rc == 0) rc = mesh_connect(s, s->wel, lfd, fds);
    close(lfd);
    if (rc < 0) goto fail;
    *m = (cs_tcp_mesh){.world = s->world, .rank = s->rank, .fds = fds, .link = s->link,
                       .max_payload = s->wel->mem_limit ? s->wel->mem_limit : UINT64_MAX >> 1};
    return m;
fail:
    for (int i = 0; fds && i < s->world; i++)
        if (fds[i] >= 0) close(fds[i]);
    free(fds);
    free(m);
    return NULL;
}
