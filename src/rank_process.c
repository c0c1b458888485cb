/* rank_process.c -- a rank process: one rank of a run whose ranks are
 * processes (started by the controller, or by hand on another machine).
 *
 * It joins the job over its link to the controller (rank_link.c: HELLO with
 * the token, its rank and the address it listens on; WELCOME with the run's
 * settings and every rank's address), connects the tcp mesh (to every lower
 * rank; every higher rank connects to it), then runs the script on its one
 * rank with its engine, whose loop drives the link: the rank's events go up,
 * its gates ask the controller. At the end it says BYE and stays until the
 * controller ends the job.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <malloc.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "collectives.h"
#include "engine_tcp.h"
#include "launch.h"
#include "rank_link.h"
#include "wire.h"
#include "world.h"

#define CONNECT_SECONDS 30.0  /* to reach the controller: it may start later */
#define MESH_SECONDS 30.0

typedef struct worker {
    const cs_run_opts *o;
    const cs_engine_kind *kind;
    int rank, world;
    char token[CS_WIRE_TOKEN + 1];
    FILE *err;
} worker;

static void tune(int fd) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static int connect_to(uint32_t ip, uint16_t port, double deadline) {
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = ip};
    for (;;) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) return -1;
        if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0) {
            tune(fd);
            return fd;
        }
        int e = errno;
        close(fd);
        if ((e != ECONNREFUSED && e != ENETUNREACH && e != EHOSTUNREACH && e != ETIMEDOUT) ||
            cs_now() > deadline) {
            errno = e;
            return -1;
        }
        usleep(100 * 1000); /* the controller is not listening yet */
    }
}

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
static int accept_peer(worker *wk, int fd, const int *fds) {
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

static int mesh_connect(worker *wk, const cs_welcome *wel, int lfd, int *fds) {
    uint8_t meta[CS_PEER_LEN];
    cs_cur cur = {.p = meta, .len = sizeof meta};
    cs_hello h = {.rank = (uint32_t)wk->rank, .world = (uint32_t)wk->world};
    memcpy(h.token, wk->token, sizeof h.token);
    cs_hello_put(&cur, &h, false);
    double deadline = cs_now() + MESH_SECONDS;
    for (int j = 0; j < wk->rank; j++) {
        fds[j] = connect_to(wel->ip[j], wel->port[j], deadline);
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
        tune(fd);
        fds[peer] = fd;
        missing--;
    }
    return 0;
}

static int worker_setup(worker *wk) {
    const cs_run_opts *o = wk->o;
    if (!wk->kind || !(wk->kind->caps & CS_ENGINE_PROCESSES)) {
        fprintf(wk->err, "commsim run: --worker: the %s engine does not run its ranks as processes\n",
                wk->kind ? wk->kind->name : "chosen");
        return -1;
    }
    const char *tok = o->token ? o->token : getenv("COMMSIM_TOKEN");
    if (!tok || !cs_wire_token_valid(tok)) {
        fprintf(wk->err, "commsim run: rank %d needs the job's token (%d hex digits): --token or "
                         "COMMSIM_TOKEN; the controller prints it\n",
                wk->rank, CS_WIRE_TOKEN);
        return -1;
    }
    memcpy(wk->token, tok, sizeof wk->token);
    if (wk->world < 1 || wk->rank < 0 || wk->rank >= wk->world || wk->world > CS_WIRE_MAX_WORLD) {
        fprintf(wk->err, "commsim run: rank %d is outside a world of %d (--rank, --world)\n",
                wk->rank, wk->world);
        return -1;
    }
    return 0;
}

/* Run the script on this rank over the mesh. */
static int run_rank(worker *wk, const cs_script *s, const cs_welcome *wel, cs_tcp_mesh *mesh) {
    char msg[512];
    cs_bus bus;
    if (cs_bus_init(&bus, wk->world) < 0) return 1;
    bus.t0 = cs_rank_link_clock(wel); /* the controller's run clock */
    cs_world_config cfg = {
        .world = wk->world,
        .mode = {.eager_limit = wel->eager_limit, .rendezvous_only = wel->rendezvous_only},
        .mem_limit = wel->mem_limit, .seed = wel->seed, .engine = wk->kind->name, .script = s->name,
        .engine_arg = mesh, .strict = (wel->flags & CS_WELCOME_STRICT) != 0};
    memcpy(cfg.coll_algo, wel->coll_algo, sizeof cfg.coll_algo);
    cs_world *w = cs_world_new(&cfg, &bus, msg, sizeof msg);
    if (!w) {
        fprintf(wk->err, "commsim: rank %d: %s\n", wk->rank, msg);
        cs_bus_destroy(&bus);
        return 1;
    }
    cs_rank_link *link = mesh->link;
    cs_bus_subscribe(&bus, cs_rank_link_sink(link));
    if (wel->flags & CS_WELCOME_GATED) cs_world_set_gate(w, cs_rank_link_gate, link);
    cs_script_limits lim = {.mem_limit = wel->mem_limit, .step_limit = wel->step_limit};
    cs_script_run(cs_world_rank(w, wk->rank), s, &lim);
    if (w->engine->ops->flush) w->engine->ops->flush(w->engine, true);
    int why = cs_rank_link_finish(link);
    cs_world_free(w);
    cs_bus_destroy(&bus);
    return why == CS_END_DIED ? CS_END_DIED : 0;
}

int cs_launch_rank_process(const cs_run_opts *o) {
    worker wk = {.o = o, .kind = cs_engine_find(o->engine), .rank = o->rank, .world = o->nranks,
                 .err = o->err ? o->err : stderr};
    char msg[512];
    /* Message buffers come and go at the size of the messages: keep freed
     * ones in the heap instead of mapping (and page-faulting) every one anew. */
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    if (worker_setup(&wk) < 0) return 1;
    cs_script s;
    if (cs_script_load(&s, o->script, msg, sizeof msg) < 0) {
        fprintf(wk.err, "commsim: rank %d: %s\n", wk.rank, msg);
        return 1;
    }
    uint32_t mip;
    uint16_t mport;
    if (cs_wire_parse_addr(o->master ? o->master : "127.0.0.1", 29500, &mip, &mport, msg,
                           sizeof msg) < 0) {
        fprintf(wk.err, "commsim run: --master: %s\n", msg);
        cs_script_free(&s);
        return 1;
    }
    int status = 1, lfd = -1;
    int *fds = malloc((size_t)wk.world * sizeof *fds);
    cs_welcome wel = {0};
    cs_rank_link *link = NULL;
    int cfd = connect_to(mip, mport, cs_now() + CONNECT_SECONDS);
    for (int i = 0; fds && i < wk.world; i++) fds[i] = -1;
    if (!fds || cfd < 0) {
        fprintf(wk.err, "commsim: rank %d: cannot reach the controller at %s: %s\n", wk.rank,
                cs_wire_addr_str(mip, mport, msg, sizeof msg), strerror(errno));
        goto out;
    }
    /* Listen where the controller reached us (loopback for a loopback master)
     * unless --bind says otherwise. */
    struct sockaddr_in me;
    socklen_t len = sizeof me;
    uint32_t lip = 0;
    uint16_t lport = 0;
    if (o->bind && cs_wire_parse_addr(o->bind, 0, &lip, &lport, msg, sizeof msg) < 0) {
        fprintf(wk.err, "commsim run: --bind: %s\n", msg);
        goto out;
    }
    if (!o->bind && getsockname(cfd, (struct sockaddr *)&me, &len) == 0) lip = me.sin_addr.s_addr;
    if ((lfd = listen_on(lip, &lport)) < 0) {
        fprintf(wk.err, "commsim: rank %d: cannot listen: %s\n", wk.rank, strerror(errno));
        goto out;
    }
    link = cs_rank_link_new(cfd, wk.rank, wk.world, wk.token, wk.err);
    cfd = -1; /* the link's now */
    if (!link || cs_rank_link_join(link, lip, lport, &wel) < 0 ||
        mesh_connect(&wk, &wel, lfd, fds) < 0)
        goto out;
    close(lfd);
    lfd = -1;
    cs_tcp_mesh mesh = {.world = wk.world, .rank = wk.rank, .fds = fds, .link = link,
                        .max_payload = wel.mem_limit ? wel.mem_limit : UINT64_MAX >> 1};
    fds = NULL; /* the engine owns the mesh's sockets now */
    status = run_rank(&wk, &s, &wel, &mesh);
out:
    if (lfd >= 0) close(lfd);
    if (cfd >= 0) close(cfd);
    cs_rank_link_free(link);
    for (int i = 0; fds && i < wk.world; i++)
        if (fds[i] >= 0) close(fds[i]);
    free(fds);
    free(wel.ip);
    free(wel.port);
    cs_script_free(&s);
    return status;
}

_Static_assert(CS_WIRE_COLL_FAMILIES == CS_COLL_MAX_FAMILIES, "WELCOME carries every family");
_Static_assert(CS_ALGO_N <= CS_WIRE_MAX_ALGO, "algorithm ids fit the wire's bound");
