/* controller_join.c -- ranks joining the controller: a connection proves the
 * job token with HELLO (until then it is a stranger, refused with a reason
 * and logged where the address was given out), each rank joins once, and
 * when all have, WELCOME tells every rank the run's settings and the others'
 * addresses. Before that nobody runs a script, so an abort only sends
 * everyone home. See controller.c for the rest of the controller's life.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "controller_internal.h"
#include "errmsg.h"

static void pending_close(controller *k, pconn *pc, const char *why, bool refuse) {
    if (why) {
        if (k->log_strangers) cs_errf(k->err, "refused a connection from %s: %s\n", pc->addr, why);
        if (refuse) cs_wire_send(pc->fd, CS_FR_REFUSE, why, (uint32_t)strlen(why), cs_now() + 0.2);
    }
    epoll_ctl(k->epfd, EPOLL_CTL_DEL, pc->fd, NULL);
    close(pc->fd);
    pconn **pp = &k->pending;
    while (*pp != pc) pp = &(*pp)->next;
    *pp = pc->next;
    cs_rx_free(&pc->rx);
    free(pc);
}

static int hello_frame(void *ud, const cs_frame_hdr *h, cs_cur *meta, void **dst, char *err,
                       size_t errlen) {
    (void)dst;
    pconn *pc = ud;
    if (pc->rank >= 0 || h->type != CS_FR_HELLO || cs_hello_get(meta, &pc->hello, true) < 0) {
        snprintf(err, errlen, "expected HELLO, got a malformed %s frame", cs_frame_name(h->type));
        return -1;
    }
    pc->rank = (int)pc->hello.rank;
    return 0;
}

static const cs_rx_ops hello_ops = {hello_frame, controller_no_payload};

static void send_welcome(controller *k) {
    size_t len = cs_welcome_len((uint32_t)k->world);
    uint8_t *m = malloc(len);
    cs_welcome w = {.world = (uint32_t)k->world, .eager_limit = k->mode.eager_limit,
                    .rendezvous_only = k->mode.rendezvous_only, .seed = k->o->seed,
                    .flags = (k->o->strict ? CS_WELCOME_STRICT : 0) | (k->gates ? CS_WELCOME_GATED : 0),
                    .mem_limit = k->o->mem_limit, .step_limit = k->o->step_limit,
                    .out_limit = k->o->out_limit,
                    .elapsed_us = (uint64_t)((cs_now() - k->c.bus.t0) * 1e6)};
    memcpy(w.coll_algo, k->o->coll_algo, sizeof w.coll_algo);
    if (k->net.on) {
        w.flags |= CS_WELCOME_NET;
        w.alpha_ns = k->net.alpha_ns;
        w.bandwidth = k->net.bandwidth;
        w.flops = k->net.flops;
    }
    w.t0_ns = (uint64_t)(k->c.bus.t0 * 1e9);
    cs_wire_boot_id(w.boot_id);
    w.ip = malloc((size_t)k->world * sizeof *w.ip);
    w.port = malloc((size_t)k->world * sizeof *w.port);
    if (!m || !w.ip || !w.port) {
        cs_errf(k->err, "out of memory\n");
        controller_abort(k, 1);
    } else {
        for (int i = 0; i < k->world; i++) {
            w.ip[i] = k->r[i].ip;
            w.port[i] = k->r[i].port;
        }
        cs_cur c = {.p = m, .len = len};
        cs_welcome_put(&c, &w);
        for (int i = 0; i < k->world; i++)
            cs_wire_send(k->r[i].fd, CS_FR_WELCOME, m, (uint32_t)len, cs_now() + 2);
        k->welcomed = true;
        /* --timeout bounds the run, not the start of its processes: the
         * script's time starts now (a loaded machine may take long to join). */
        if (k->o->timeout > 0) k->deadline = cs_now() + k->o->timeout;
    }
    free(m);
    free(w.ip);
    free(w.port);
}

static void admit(controller *k, pconn *pc) {
    const cs_hello *h = &pc->hello;
    const char *why = NULL;
    char size[96]; /* said to a rank started by hand: which --world the job has */
    snprintf(size, sizeof size, "wrong world size: the job has %d rank%s, not %u", k->world,
             k->world == 1 ? "" : "s", h->world);
    if (!cs_wire_token_eq(h->token, k->token)) why = "wrong job token";
    else if (h->world != (uint32_t)k->world) why = size;
    else if (k->r[h->rank].state != RK_NONE || k->welcomed) why = "that rank has already joined";
    if (why) {
        pending_close(k, pc, why, true);
        return;
    }
    prank *p = &k->r[h->rank];
    if (cs_rx_init(&p->rx, 0) < 0) {
        pending_close(k, pc, "out of memory", true);
        return;
    }
    p->fd = pc->fd;
    p->ip = h->ip;
    p->port = h->port;
    p->state = RK_JOINED;
    cs_heartbeat_init(&p->hb, k->hb_limit, cs_now());
    pc->fd = -1;
    epoll_ctl(k->epfd, EPOLL_CTL_DEL, p->fd, NULL);
    controller_watch(k, p->fd, TAG(TAG_RANK, h->rank));
    pconn **pp = &k->pending;
    while (*pp != pc) pp = &(*pp)->next;
    *pp = pc->next;
    cs_rx_free(&pc->rx);
    free(pc);
    if (++k->joined == k->world && !k->status) send_welcome(k);
}

static void pending_readable(controller *k, pconn *pc) {
    char err[256];
    int rc = cs_rx_pump(&pc->rx, pc->fd, &hello_ops, pc, err, sizeof err);
    if (pc->rank >= 0) admit(k, pc);
    else if (rc > 0 || rc == -2) pending_close(k, pc, "closed before proving the job token", false);
    else if (rc < 0) pending_close(k, pc, err, false);
}

void controller_accept(controller *k) {
    struct sockaddr_in sa;
    socklen_t len = sizeof sa;
    int fd = accept4(k->lfd, (struct sockaddr *)&sa, &len, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0 && (errno == EMFILE || errno == ENFILE) && k->pending) {
        /* Out of descriptors with connections still unproven: the oldest
         * makes room, as past MAX_PENDING; the next turn accepts. */
        int e = errno;
        pconn *old = k->pending;
        while (old->next) old = old->next;
        pending_close(k, old, strerror(e), false);
        return;
    }
    if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
        /* The connection stays queued and the listener readable: stop
         * watching it (no spin) and end a job that can no longer gather. */
        epoll_ctl(k->epfd, EPOLL_CTL_DEL, k->lfd, NULL);
        cs_errf(k->err, "cannot accept a connection: %s%s\n", strerror(errno),
                k->welcomed ? "" : "; the ranks cannot join (ulimit -n)");
        if (!k->welcomed) controller_abort(k, 1);
        return;
    }
    if (fd < 0) return;
    pconn *pc = calloc(1, sizeof *pc);
    if (!pc || cs_rx_init(&pc->rx, 0) < 0) {
        free(pc);
        close(fd);
        return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    pc->fd = fd;
    pc->rank = -1;
    cs_wire_addr_str(sa.sin_addr.s_addr, ntohs(sa.sin_port), pc->addr, sizeof pc->addr);
    pc->next = k->pending;
    k->pending = pc;
    pc->id = ++k->next_pending;
    controller_watch(k, fd, TAG(TAG_PENDING, pc->id));
}

void controller_pending_readable(controller *k, uint32_t id) {
    for (pconn *pc = k->pending; pc; pc = pc->next)
        if (pc->id == id) {
            pending_readable(k, pc);
            return;
        }
}

/* A connection that has not proven the token is never closed for being slow
 * (a rank on a loaded machine may take seconds between connect and HELLO, and
 * no run may depend on timing), only when MAX_PENDING others wait after it:
 * a flood of strangers then loses its oldest, and costs nobody a timeout. */
void controller_expire_pending(controller *k) {
    int n = 0;
    for (pconn *pc = k->pending, *next; pc; pc = next) { /* newest first */
        next = pc->next;
        if (++n > MAX_PENDING)
            pending_close(k, pc, "too many connections waiting to prove the job token", false);
    }
}

/* Before WELCOME nobody runs a script: an abort just sends everyone home. */
void controller_abort_joining(controller *k) {
    if (k->welcomed || !k->status) return;
    /* The launched ones first: a closed connection would have them say so. */
    if (k->pgid) kill(-k->pgid, SIGKILL);
    for (int i = 0; i < k->world; i++) {
        prank *p = &k->r[i];
        if (p->fd >= 0) close(p->fd);
        p->fd = -1;
        p->state = RK_GONE;
    }
}

void controller_free_pending(controller *k) {
    for (pconn *pc = k->pending; pc;) {
        pconn *next = pc->next;
        close(pc->fd);
        cs_rx_free(&pc->rx);
        free(pc);
        pc = next;
    }
    k->pending = NULL;
}
