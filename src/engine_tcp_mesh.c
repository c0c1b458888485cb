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

#define MESH_SECONDS 30.0

/* Listen on ip (network order), any port: the address goes into HELLO. */
static int listen_on(uint32_t ip, uint16_t *port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = ip};
    socklen_t len = sizeof sa;
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 128) < 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) < 0) {
        if (fd >= 0) close(fd);
        return -1;
    }
    *port = ntohs(sa.sin_port);
    return fd;
}

/* A connection on our listener: a higher rank proving the token, or a stranger
 * (closed and logged, the job carries on). Returns the peer's rank or -1. */
static int accept_peer(const cs_rank_setup *wk, int fd, const int *fds) {
    char err[256];
    cs_frame_hdr fh;
    uint8_t *m = NULL;
    cs_hello h;
    int peer = -1;
    if (cs_wire_read_frame(fd, cs_now() + 5, CS_PEER_LEN, &fh, &m, err, sizeof err) < 0) {
        /* err says it */
    } else {
        cs_cur in = {.p = m, .len = fh.meta_len};
        if (fh.type != CS_FR_PEER || cs_hello_get(&in, &h, false) < 0)
            snprintf(err, sizeof err, "malformed %s frame", cs_frame_name(fh.type));
        else if (!cs_wire_token_eq(h.token, wk->token))
            snprintf(err, sizeof err, "wrong job token");
        else if (h.world != (uint32_t)wk->world || (int)h.rank <= wk->rank || fds[h.rank] >= 0)
            snprintf(err, sizeof err, "unexpected rank %u of %u", h.rank, h.world);
        else
            peer = (int)h.rank;
    }
    free(m);
    if (peer < 0) {
        struct sockaddr_in sa;
        socklen_t len = sizeof sa;
        char addr[64] = "?";
        if (getpeername(fd, (struct sockaddr *)&sa, &len) == 0)
            cs_wire_addr_str(sa.sin_addr.s_addr, ntohs(sa.sin_port), addr, sizeof addr);
        fprintf(wk->err, "commsim: rank %d: closed a connection from %s: %s\n", wk->rank, addr, err);
    }
    return peer;
}

static int mesh_connect(const cs_rank_setup *wk, const cs_welcome *wel, int lfd, int *fds) {
    uint8_t meta[CS_PEER_LEN];
    cs_cur cur = {.p = meta, .len = sizeof meta};
    cs_hello h = {.rank = (uint32_t)wk->rank, .world = (uint32_t)wk->world};
    memcpy(h.token, wk->token, sizeof h.token);
    cs_hello_put(&cur, &h, false);
    double deadline = cs_now() + MESH_SECONDS;
    for (int j = 0; j < wk->rank; j++) {
        fds[j] = cs_rank_link_dial(wel->ip[j], wel->port[j], deadline);
        if (fds[j] < 0 || cs_wire_send(fds[j], CS_FR_PEER, meta, sizeof meta, deadline) < 0) {
            char a[64];
            fprintf(wk->err, "commsim: rank %d: cannot connect to rank %d at %s: %s\n", wk->rank, j,
                    cs_wire_addr_str(wel->ip[j], wel->port[j], a, sizeof a), strerror(errno));
            return -1;
        }
    }
    int missing = wk->world - 1 - wk->rank;
    while (missing > 0) {
        struct pollfd p = {.fd = lfd, .events = POLLIN};
        int left = (int)((deadline - cs_now()) * 1000);
        if (left <= 0 || poll(&p, 1, left) < 0) {
            if (errno == EINTR) continue;
            fprintf(wk->err, "commsim: rank %d: %d higher rank%s never connected\n", wk->rank,
                    missing, missing == 1 ? "" : "s");
            return -1;
        }
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) continue;
        int peer = accept_peer(wk, fd, fds);
        if (peer < 0) {
            close(fd);
            continue;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        fds[peer] = fd;
        missing--;
    }
    return 0;
}

void *tcp_rank_setup(const cs_rank_setup *s) {
    int *fds = malloc((size_t)s->world * sizeof *fds);
    cs_tcp_mesh *m = calloc(1, sizeof *m);
    if (!fds || !m) {
        fprintf(s->err, "commsim: rank %d: out of memory joining the job\n", s->rank);
        goto fail;
    }
    for (int i = 0; i < s->world; i++) fds[i] = -1;
    uint16_t port = 0;
    int lfd = listen_on(s->ip, &port);
    if (lfd < 0) {
        fprintf(s->err, "commsim: rank %d: cannot listen: %s\n", s->rank, strerror(errno));
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
