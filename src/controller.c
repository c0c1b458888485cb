/* controller.c -- the controller of a run whose ranks are processes (the tcp
 * engine's): the rendezvous store, the process launcher, and the end of the run.
 *
 * One thread, one epoll loop. The controller listens at the master address;
 * every rank process joins with HELLO (token, rank, its listening address);
 * once all have joined, each gets WELCOME with the run's settings and every
 * rank's address, and the ranks connect as a full mesh among themselves. From
 * then on the controller receives their events on the same connections and
 * feeds them to the bus (monitor, trace, report) exactly as the thread engine's
 * ranks would.
 *
 * Order: each rank's events arrive in order, but a rank's match of a message can
 * arrive before the sender's post of it. Such a match is held back until the
 * post has been delivered, so the monitor always sees a causally possible order
 * (controller_order.c).
 *
 * Joining (HELLO, WELCOME, strangers refused) is controller_join.c.
 *
 * Faults: a rank's connection that closes without BYE is a death; for a rank
 * launched here the process's exit status gives the cause. The controller asks
 * the others to FLUSH their events (so the report says who waited on the dead
 * rank), reports the death, and ABORTs the rest. Children die with the
 * controller (PR_SET_PDEATHSIG) and live in their own process group, which the
 * controller kills if they do not stop in time.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "controller_internal.h"
#include "errmsg.h"
#include "event_schema.h"
#include "outq.h"

void controller_watch(controller *k, int fd, uint64_t tag) {
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = tag};
    epoll_ctl(k->epfd, EPOLL_CTL_ADD, fd, &ev);
}

static void on_deadlock(void *ud) { ((controller *)ud)->deadlock = true; }
static void on_error(void *ud) { ((controller *)ud)->mon_error = true; }
/* The trace passed the file size limit: the loop ends the run within its
 * tick (wait_ms), as the thread launcher does (launch.c, on_trace_fail). */
static void on_trace_fail(void *ud, int code) {
    if (code == EFBIG) atomic_store(&((controller *)ud)->trace_failed, true);
}

/* The timekeeper answers a rank's clock read (under the bus lock, on the
 * controller's thread): a CLOCK frame to that rank. */
static void clock_answer(void *ud, int rank, uint64_t ns) {
    controller *k = ud;
    prank *p = &k->r[rank];
    if (p->state != RK_JOINED) return;
    uint8_t m[8];
    cs_cur c = {.p = m, .len = sizeof m};
    cs_put_u64(&c, ns);
    cs_wire_send(p->fd, CS_FR_CLOCK, m, sizeof m, cs_now() + 1);
}

/* ---- ending the run */

/* Tell rank i the job ends for why: one that still runs unwinds, one that
 * has said BYE learns the job's status, which is its process's too
 * (rank_process.c). */
static void send_abort(controller *k, int i, int why) {
    if (k->r[i].state != RK_JOINED && !(k->r[i].state == RK_BYE && k->welcomed)) return;
    if (!k->welcomed) { /* it waits for WELCOME: tell it why none will come */
        /* One launched here is killed with the others (controller_abort_joining)
         * and the report says why: its own words would only repeat it. */
        if (k->r[i].pid) return;
        char text[CS_WIRE_MAX_TEXT];
        int n = snprintf(text, sizeof text, "the job ended before it started: %s",
                         k->end_text[0] ? k->end_text : cs_end_words(why));
        if (n >= (int)sizeof text) n = (int)sizeof text - 1;
        cs_wire_send(k->r[i].fd, CS_FR_REFUSE, text, (uint32_t)n, cs_now() + 1);
        return;
    }
    uint8_t m[4];
    cs_cur c = {.p = m, .len = sizeof m};
    cs_put_u32(&c, (uint32_t)why);
    cs_wire_send(k->r[i].fd, CS_FR_ABORT, m, sizeof m, cs_now() + 1);
}

/* End the run for why (the first reason wins the status); every rank unwinds. */
void controller_abort(controller *k, int why) {
    if (!k->status) k->status = why;
    if (k->grace_until) return;
    k->grace_until = cs_now() + GRACE_SECONDS;
    for (int i = 0; i < k->world; i++) {
        send_abort(k, i, k->status);
        controller_gate_leave(k, i); /* ABORT releases every gate */
    }
}

/* The timeout came before every rank joined: no script ran, and the line
 * names who is missing (a machine whose rank was never started, a wrong
 * --master), not a run that "did not finish". */
static void missing_ranks(controller *k) {
    char *t = k->c.timeout_text;
    size_t len = sizeof k->c.timeout_text, n = 0;
    int missing = 0, shown = 0;
    for (int i = 0; i < k->world; i++) missing += k->r[i].state == RK_NONE;
    n += (size_t)snprintf(t, len, "timeout: rank%s", missing == 1 ? "" : "s");
    for (int i = 0; i < k->world && n < len; i++) {
        if (k->r[i].state != RK_NONE) continue;
        if (++shown > 8) {
            n += (size_t)snprintf(t + n, len - n, " and %d more", missing - 8);
            break;
        }
        n += (size_t)snprintf(t + n, len - n, "%s %d", shown == 1 ? "" : shown == missing ? " and" : ",", i);
    }
    if (n < len)
        snprintf(t + n, len - n, " had not joined within %g s (--timeout)", k->o->timeout);
}

void controller_timeout(controller *k) {
    if (!k->welcomed && k->joined < k->world) missing_ranks(k);
    cs_control_timeout(&k->c); /* a deadlock (or mismatch) found now is the verdict */
    controller_abort(k, k->deadlock ? CS_END_DEADLOCK : k->mon_error ? CS_END_ERROR : CS_END_TIMEOUT);
    k->deadlock = k->mon_error = false;
}

/* ---- deaths */

/* "rank 1 waited to receive from it and rank 3 waited to send to it" */
static void waiters(controller *k, int dead, char *buf, size_t len) {
    const cs_monitor *m = &k->c.mon;
    size_t n = 0;
    buf[0] = 0;
    for (int i = 0; i < k->world; i++) {
        const cs_mon_rank *mr = &m->ranks[i];
        if (i == dead || mr->state != CS_RS_BLOCKED) continue;
        const char *what = NULL;
        for (int j = 0; j < mr->nwait && !what; j++) {
            const cs_mon_req *q = cs_monitor_find(m, i, mr->wait[j]);
            if (!q || q->done) continue;
            if (cs_op_is_send(q->op) && q->peer == dead) what = "send to it";
            else if (!cs_op_is_send(q->op) && q->peer == dead) what = "receive from it";
            else if (!cs_op_is_send(q->op) && q->peer == CS_ANY_SOURCE) what = "receive from any rank";
        }
        if (!what) continue;
        n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%srank %d waited to %s",
                              n ? " and " : "", i, what);
    }
}

static void report_death(controller *k) {
    int d = k->dead;
    char who[1024], text[1200];
    controller_release_held(k);
    waiters(k, d, who, sizeof who);
    snprintf(text, sizeof text, "rank %d %s (%s)%s%s", d, k->fate, k->cause, who[0] ? " while " : "",
             who);
    snprintf(k->end_text, sizeof k->end_text, "rank %d %s (%s)", d, k->fate, k->cause);
    cs_event ev = {.type = CS_EV_ERROR, .rank = d, .text = text, .status = CS_END_DIED};
    cs_bus_emit(&k->c.bus, &ev);
    k->dead = -1;
    k->fate = NULL;
    k->flush_until = 0;
    controller_abort(k, CS_END_DIED);
}

static void describe_exit(int ws, char *buf, size_t len) {
    if (WIFSIGNALED(ws)) snprintf(buf, len, "signal %d", WTERMSIG(ws));
    else snprintf(buf, len, "exit status %d", WEXITSTATUS(ws));
}

static void reap(controller *k, int i) {
    prank *p = &k->r[i];
    if (p->reaped || !p->pid) return;
    if (waitpid(p->pid, &p->wstatus, 0) == p->pid) p->reaped = true;
    if (p->pidfd >= 0) {
        close(p->pidfd);
        p->pidfd = -1;
    }
}

/* Note how long this process has said nothing to rank p, once that reached
 * the rank's limit: the ALIVEs due were not sent (this process was stopped),
 * and the rank was right to give it up. Asked before each ALIVE, and at a
 * death, whichever comes first after the stop. */
static void unheard(prank *p, double now) {
    double quiet = now - p->hb.said;
    if (p->hb.said > 0 && p->hb.peer_limit > 0 && quiet >= p->hb.peer_limit && quiet > p->unheard)
        p->unheard = quiet;
}

/* Rank i is gone without BYE. */
static void rank_died(controller *k, int i, const char *cause) {
    prank *p = &k->r[i];
    if (p->fd >= 0) {
        close(p->fd);
        p->fd = -1;
    }
    p->state = RK_GONE;
    controller_gate_leave(k, i);
    if (k->status || k->dead >= 0) return; /* the run is already ending: not the cause */
    k->dead = i;
    if (!k->fate) k->fate = "died";
    snprintf(k->cause, sizeof k->cause, "%s", cause);
    /* This process said nothing to it for the rank's limit (stopped by
     * Ctrl-Z or SIGSTOP, say; running, it says ALIVE six times as often): the
     * rank gave the controller up and left, as it should. Not its failure. */
    unheard(p, cs_now());
    if (p->unheard) {
        k->fate = "gave up the controller";
        snprintf(k->cause, sizeof k->cause, "which said nothing to it for %.0f s: stopped or frozen; "
                 "%s=%g", p->unheard, CS_HEARTBEAT_ENV, p->hb.peer_limit);
    }
    if (!k->welcomed) {
        snprintf(k->cause, sizeof k->cause, "%s, before the job started", cause);
        report_death(k);
        return;
    }
    /* Ask the survivors for their last events, so the report knows who waited. */
    for (int j = 0; j < k->world; j++) {
        k->r[j].flushed = k->r[j].state != RK_JOINED;
        if (!k->r[j].flushed) cs_wire_send(k->r[j].fd, CS_FR_FLUSH, NULL, 0, cs_now() + 1);
    }
    k->flush_until = cs_now() + FLUSH_SECONDS;
}

/* The connection of a rank launched here closed: its exit status says why. */
static void rank_closed(controller *k, int i) {
    prank *p = &k->r[i];
    char cause[64] = "connection lost";
    if (p->pid) {
        /* it is exiting: give it a moment, then make sure */
        for (int t = 0; t < 100 && !p->reaped; t++) {
            if (waitpid(p->pid, &p->wstatus, WNOHANG) == p->pid) p->reaped = true;
            else usleep(2000);
        }
        if (!p->reaped) {
            kill(p->pid, SIGKILL);
            reap(k, i);
        } else {
            describe_exit(p->wstatus, cause, sizeof cause);
        }
    }
    rank_died(k, i, cause);
}

/* ---- frames from a joined rank */


static int rank_frame(void *ud, const cs_frame_hdr *h, cs_cur *meta, void **dst, char *err,
                       size_t errlen) {
    (void)dst;
    rank_ud *u = ud;
    controller *k = u->k;
    prank *p = &k->r[u->i];
    switch (h->type) {
    case CS_FR_EVENT: {
        cs_event ev;
        if (cs_wire_event_get(meta, &ev, k->world, &u->s) < 0 || ev.rank != u->i) {
            snprintf(err, errlen, "malformed event");
            return -1;
        }
        /* Its status becomes the run's (and a replay's): only one a run ends with. */
        if (ev.type == CS_EV_ERROR && !cs_ev_error_status_ok(ev.status)) {
            snprintf(err, errlen, "an error event with status %d; an error's is "
                     CS_EV_ERROR_STATUSES, ev.status);
            return -1;
        }
        controller_forward(k, &ev);
        return 0;
    }
    case CS_FR_GATE: return controller_gate_frame(k, u->i, meta, err, errlen);
    case CS_FR_FLUSHED: p->flushed = true; return 0;
    case CS_FR_ALIVE:
        cs_heartbeat_peer(&p->hb, cs_get_u32(meta), cs_now());
        p->alive = true;
        return 0;
    case CS_FR_BYE: p->state = RK_BYE; return 0;
    default:
        snprintf(err, errlen, "unexpected %s frame", cs_frame_name(h->type));
        return -1;
    }
}

int controller_no_payload(void *ud, char *err, size_t errlen) {
    (void)ud;
    snprintf(err, errlen, "unexpected payload");
    return -1;
}

static const cs_rx_ops rank_ops = {rank_frame, controller_no_payload};

static void rank_readable(controller *k, int i) {
    prank *p = &k->r[i];
    if (p->state != RK_JOINED && p->state != RK_BYE) return;
    char err[256];
    k->scratch->k = k;
    k->scratch->i = i;
    int rc = cs_rx_pump(&p->rx, p->fd, &rank_ops, k->scratch, err, sizeof err);
    cs_heartbeat_heard(&p->hb, cs_now()); /* whatever came, it came from a live rank */
    if (rc == 0) return;
    if (p->state == RK_BYE) { /* it left after saying goodbye */
        close(p->fd);
        p->fd = -1;
        p->state = RK_GONE;
        return;
    }
    if (rc == -1) {
        cs_errf(k->err, "rank %d sent a malformed frame (%s): closing its connection\n",
                i, err);
        if (p->pid) kill(p->pid, SIGKILL);
    }
    rank_closed(k, i);
}

/* ---- launching the ranks of this machine */

static int listen_master(controller *k, const char *addr, int default_port) {
    char msg[256];
    if (cs_wire_parse_addr(addr, default_port, &k->ip, &k->port, msg, sizeof msg) < 0) {
        cs_errf(k->err, "--master: %s\n", msg);
        return -1;
    }
    k->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int one = 1;
    setsockopt(k->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(k->port),
                             .sin_addr.s_addr = k->ip};
    int rc = bind(k->lfd, (struct sockaddr *)&sa, sizeof sa);
    if (rc < 0 && errno == EADDRNOTAVAIL) { /* a name of this host that is not an interface */
        sa.sin_addr.s_addr = htonl(INADDR_ANY);
        rc = bind(k->lfd, (struct sockaddr *)&sa, sizeof sa);
    }
    socklen_t len = sizeof sa;
    if (rc < 0 || listen(k->lfd, 1024) < 0 || getsockname(k->lfd, (struct sockaddr *)&sa, &len) < 0) {
        cs_errf(k->err, "cannot listen on %s: %s\n", addr, strerror(errno));
        return -1;
    }
    k->port = ntohs(sa.sin_port);
    /* Listening on every interface (the address given is none of this
     * host's, as behind NAT): the ranks started here dial the loopback, the
     * others are still told the address given. */
    k->told_ip = k->ip != htonl(INADDR_ANY) ? k->ip : htonl(INADDR_LOOPBACK);
    if (sa.sin_addr.s_addr == htonl(INADDR_ANY)) k->ip = htonl(INADDR_LOOPBACK);
    controller_watch(k, k->lfd, TAG(TAG_LISTEN, 0));
    return 0;
}

/* Can a rank of this machine listen on --bind's address? 0, or -1 with why. */
static int bind_usable(const char *addr, char *msg, size_t len) {
    uint32_t ip;
    if (cs_wire_parse_bind(addr, &ip, msg, len) < 0) return -1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = ip};
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        char a[64];
        inet_ntop(AF_INET, &ip, a, sizeof a);
        snprintf(msg, len, "cannot listen on %s: %s", a, strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    close(fd);
    return 0;
}

/* Start rank i as a child: this very binary in worker mode. It dies with the
 * controller (PR_SET_PDEATHSIG) and lives in the ranks' process group. */
static int spawn(controller *k, int i) {
    char rank[16], world[16], master[64];
    snprintf(rank, sizeof rank, "%d", i);
    snprintf(world, sizeof world, "%d", k->world);
    cs_wire_addr_str(k->ip, k->port, master, sizeof master);
    char *argv[] = {k->exe, "run", (char *)k->o->script, "--engine", (char *)k->kind->name, "--worker",
                    "--rank", rank, "--world", world, "--master", master, "--no-tui",
                    k->o->bind ? "--bind" : NULL, (char *)k->o->bind, NULL};
    /* ---- ncclproc: every rank launched here: rank i is this machine's i-th
     * (its GPU, for the nccl engine), whatever the caller's LOCAL_RANK. The
     * environment is built before fork: the child may only exec. */
    extern char **environ;
    char local[32];
    snprintf(local, sizeof local, "LOCAL_RANK=%d", i);
    size_t nenv = 0;
    while (environ[nenv]) nenv++;
    char **envp = k->o->rank < 0 ? malloc((nenv + 2) * sizeof *envp) : NULL;
    if (envp) {
        size_t j = 0;
        for (size_t e = 0; e < nenv; e++)
            if (strncmp(environ[e], "LOCAL_RANK=", 11) != 0) envp[j++] = environ[e];
        envp[j++] = local;
        envp[j] = NULL;
    }
    /* ---- end ncclproc */
    pid_t parent = getpid(), pgid = k->pgid;
    pid_t pid = fork();
    if (pid < 0) {
        cs_errf(k->err, "cannot start rank %d: %s\n", i, strerror(errno));
        free(envp); /* ncclproc */
        return -1;
    }
    if (pid == 0) {
        setpgid(0, pgid);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(127); /* the controller died already */
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        if (k->outw >= 0) { /* the screen is the front end's */
            dup2(k->outw, STDOUT_FILENO);
            dup2(k->outw, STDERR_FILENO);
        }
        if (envp) execve(k->exe, argv, envp); /* ncclproc */
        else execv(k->exe, argv);
        _exit(127);
    }
    free(envp); /* ncclproc */
    if (!k->pgid) k->pgid = pid;
    setpgid(pid, k->pgid);
    prank *p = &k->r[i];
    p->pid = pid;
    p->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (p->pidfd >= 0) controller_watch(k, p->pidfd, TAG(TAG_PIDFD, i));
    return 0;
}

/* A child exited: a death unless it said BYE. */
static void child_exited(controller *k, int i) {
    prank *p = &k->r[i];
    reap(k, i);
    if (p->state == RK_BYE || p->state == RK_GONE) return;
    char cause[64];
    describe_exit(p->wstatus, cause, sizeof cause);
    rank_died(k, i, cause);
}

static void on_signal(controller *k) {
    struct signalfd_siginfo si;
    while (read(k->sigfd, &si, sizeof si) == (ssize_t)sizeof si) controller_abort(k, CS_END_QUIT);
}

/* ---- liveness */

/* Rank i has said nothing for the heartbeat's limit though its connection is
 * up: stopped (SIGSTOP, a debugger) or frozen. It is given up as a death is:
 * the others flush, the report names it, the run ends with status 5. One
 * launched here is killed (a stopped process does not exit on its own). */
static void rank_silent(controller *k, int i) {
    prank *p = &k->r[i];
    char cause[96];
    snprintf(cause, sizeof cause, "nothing from it for %g s: stopped or frozen; %s", k->hb_limit,
             CS_HEARTBEAT_ENV);
    if (p->pid && !p->reaped) {
        kill(p->pid, SIGKILL);
        reap(k, i);
    }
    k->fate = "stopped responding";
    rank_died(k, i, cause);
}

/* Say ALIVE to every rank that listens (joined, or said BYE and waits for
 * the end) when due, and give up a running rank that fell silent. Note when
 * the heartbeat next wants the loop. */
static void heartbeat(controller *k) {
    double now = cs_now(), next = 0;
    for (int i = 0; i < k->world; i++) {
        prank *p = &k->r[i];
        if (p->fd < 0 || (p->state != RK_JOINED && p->state != RK_BYE)) continue;
        unheard(p, now);
        if (cs_heartbeat_due(&p->hb, now)) {
            uint8_t m[4];
            cs_cur c = {.p = m, .len = sizeof m};
            cs_put_u32(&c, cs_heartbeat_ms(&p->hb));
            cs_wire_send(p->fd, CS_FR_ALIVE, m, sizeof m, now + 1);
        }
        double t = p->hb.said + cs_heartbeat_interval(&p->hb);
        /* a rank is judged from its first ALIVE (it then speaks at the
         * interval) while it runs */
        bool judged = p->alive && p->state == RK_JOINED && k->hb_limit > 0 && !k->status &&
                      k->dead < 0;
        if (judged && cs_heartbeat_silent(&p->hb, now) && cs_heartbeat_unread(p->fd))
            cs_heartbeat_heard(&p->hb, now); /* it spoke; the loop was slow to look */
        if (judged && cs_heartbeat_silent(&p->hb, now)) {
            rank_silent(k, i);
            continue;
        }
        if (judged && p->hb.heard + k->hb_limit < t) t = p->hb.heard + k->hb_limit;
        if (!next || t < next) next = t;
    }
    k->hb_next = next;
}

/* ---- the loop */

static bool finished(const controller *k) {
    for (int i = 0; i < k->world; i++)
        if (k->r[i].state == RK_JOINED || (k->r[i].state == RK_NONE && !k->status)) return false;
    return true;
}

static int wait_ms(const controller *k) {
    double now = cs_now(), until = now + 1;
    if (k->deadline && k->deadline < until) until = k->deadline;
    if (k->flush_until && k->flush_until < until) until = k->flush_until;
    if (k->grace_until && k->grace_until < until) until = k->grace_until;
    if (k->gate_retry_at && k->gate_retry_at < until) until = k->gate_retry_at;
    if (k->hb_next && k->hb_next < until) until = k->hb_next;
    return until <= now ? 0 : (int)((until - now) * 1000) + 1;
}

static void dispatch(controller *k, uint64_t tag) {
    int kind = (int)(tag >> 32), i = (int)(uint32_t)tag;
    switch (kind) {
    case TAG_LISTEN: controller_accept(k); break;
    case TAG_SIGNAL: on_signal(k); break;
    case TAG_RANK: rank_readable(k, i); break;
    case TAG_PIDFD: child_exited(k, i); break;
    case TAG_WAKE: controller_woken(k); break;
    case TAG_OUTPUT: controller_output(k); break;
    case TAG_PENDING: controller_pending_readable(k, (uint32_t)i); break;
    default: break;
    }
}

static bool all_flushed(const controller *k) {
    for (int i = 0; i < k->world; i++)
        if (!k->r[i].flushed && k->r[i].state == RK_JOINED) return false;
    return true;
}

static void loop(controller *k) {
    struct epoll_event evs[64];
    while (!finished(k)) {
        int n = epoll_wait(k->epfd, evs, 64, wait_ms(k));
        for (int j = 0; j < n; j++) dispatch(k, evs[j].data.u64);
        if (k->nparked) controller_relay_gates(k);
        else k->gate_retry_at = 0; /* nobody waits for GO */
        double now = cs_now();
        if (k->deadlock) {
            k->deadlock = false;
            controller_abort(k, CS_END_DEADLOCK);
        }
        if (atomic_exchange(&k->trace_failed, false) && !k->status) {
            atomic_store(&k->c.trace_ended, true); /* cs_control_close says why */
            controller_abort(k, CS_END_ERROR);
        }
        if (k->mon_error) {
            k->mon_error = false;
            controller_abort(k, CS_END_ERROR);
        }
        heartbeat(k);
        if (k->dead >= 0 && (all_flushed(k) || now >= k->flush_until)) report_death(k);
        controller_expire_pending(k);
        if (k->deadline && now >= k->deadline && !k->status) controller_timeout(k);
        controller_abort_joining(k);
        if (k->grace_until && now >= k->grace_until && !finished(k)) {
            for (int i = 0; i < k->world; i++) {
                if (k->r[i].state == RK_JOINED) {
                    cs_errf(k->err, "rank %d did not stop within %g s of the end; killing it\n",
                            i, GRACE_SECONDS);
                    k->r[i].state = RK_GONE;
                    /* The end cut it short (as an abort does): so say the
                     * report and the trace, not its last state (blocked). */
                    if (k->c.mon.ranks[i].state < CS_RS_DONE) {
                        cs_event ev = {.type = CS_EV_EXIT, .rank = i, .status = CS_RANK_ABORTED};
                        cs_bus_emit(&k->c.bus, &ev);
                    }
                }
                if (k->r[i].pid) kill(k->r[i].pid, SIGKILL);
            }
        }
    }
}

/* Every rank said BYE or is gone: let the processes go and reap them. */
static void wind_up(controller *k) {
    for (int i = 0; i < k->world; i++) {
        prank *p = &k->r[i];
        if (p->fd >= 0) close(p->fd);
        p->fd = -1;
    }
    double until = cs_now() + GRACE_SECONDS;
    for (int i = 0; i < k->world; i++) {
        prank *p = &k->r[i];
        while (p->pid && !p->reaped) {
            if (waitpid(p->pid, &p->wstatus, WNOHANG) == p->pid) p->reaped = true;
            else if (cs_now() > until) kill(p->pid, SIGKILL);
            else usleep(1000);
        }
        if (p->pidfd >= 0) close(p->pidfd);
        p->pidfd = -1;
    }
    if (k->pgid) kill(-k->pgid, SIGKILL); /* anything a rank left behind */
}

void controller_run(controller *k) {
    loop(k);
    wind_up(k);
    controller_release_held(k);
    atomic_store(&k->done, true);
}

static void controller_free(controller *k) {
    controller_free_pending(k);
    for (int i = 0; k->r && i < k->world; i++) cs_rx_free(&k->r[i].rx);
    controller_order_free(k);
    free(k->r);
    free(k->scratch);
    if (k->lfd >= 0) close(k->lfd);
    if (k->sigfd >= 0) close(k->sigfd);
    if (k->epfd >= 0) close(k->epfd);
    if (k->wakefd >= 0) close(k->wakefd);
    if (k->outfd >= 0) close(k->outfd);
    if (k->outw >= 0) close(k->outw);
}

/* The controller holds a connection per rank, and a pidfd per rank launched
 * here; strangers waiting to prove the token (MAX_PENDING) and its own files
 * (streams, epoll, trace, ...) come on top. Out of descriptors it could not
 * accept the ranks, which would wait in vain: the soft limit goes up as far as
 * the hard one allows (the ranks inherit it: each holds a connection per
 * peer), else the run is refused now. */
static int enough_files(controller *k, bool here) {
    unsigned long need = (unsigned long)k->world * (here ? 2 : 1) + 32;
    unsigned long long limit;
    unsigned long open;
    /* short of MAX_PENDING more, strangers make room (controller_accept) */
    if (cs_wire_files(need, need + MAX_PENDING, &limit, &open) == 0) return 0;
    char also[64] = ""; /* the ones open already, where they make the difference */
    if (need <= limit) snprintf(also, sizeof also, ", and %lu are open already", open);
    cs_errf(k->err, "%d rank%s need about %lu open files in the controller%s, more than this "
            "process may open (ulimit -n: %llu)\n", k->world, k->world == 1 ? "" : "s", need,
            also, limit);
    return -1;
}

static int setup(controller *k, const cs_run_opts *o) {
    k->lfd = k->sigfd = k->wakefd = k->outfd = k->outw = -1;
    k->dead = -1;
    k->epfd = epoll_create1(EPOLL_CLOEXEC);
    k->r = calloc((size_t)k->world, sizeof *k->r);
    k->scratch = malloc(sizeof *k->scratch);
    ssize_t n = readlink("/proc/self/exe", k->exe, sizeof k->exe - 1);
    if (k->epfd < 0 || !k->r || !k->scratch || n <= 0) {
        cs_errf(k->err, "cannot set up the controller: %s\n", strerror(errno));
        return -1;
    }
    k->exe[n] = 0;
    for (int i = 0; i < k->world; i++) k->r[i].fd = k->r[i].pidfd = -1;
    const char *tok = o->token ? o->token : getenv("COMMSIM_TOKEN");
    if (tok && !cs_wire_token_valid(tok)) {
        cs_errf(k->err, "the job token must be %d hex digits (--token, COMMSIM_TOKEN)\n",
                CS_WIRE_TOKEN);
        return -1;
    }
    if (tok) memcpy(k->token, tok, sizeof k->token);
    else if (cs_wire_token_new(k->token) < 0) {
        cs_errf(k->err, "no randomness for the job token: %s\n", strerror(errno));
        return -1;
    }
    bool here = o->rank < 0;
    /* --bind is for the ranks this controller launches, all of this
     * machine: said wrong, it is said once, here, before any of them starts,
     * rather than by every rank as it dies. */
    char msg[256];
    if (o->bind && bind_usable(o->bind, msg, sizeof msg) < 0) {
        cs_errf(k->err, "--bind: %s\n", msg);
        return -1;
    }
    if (enough_files(k, here) < 0) return -1;
    k->log_strangers = o->master || !here;
    if (listen_master(k, o->master ? o->master : "127.0.0.1:0", here ? 0 : 29500) < 0) return -1;
    if (!here && !tok) {
        char a[64];
        cs_wire_addr_str(k->told_ip, k->port, a, sizeof a);
        if (o->ui) /* the front end's footer: short enough for 80 columns */
            snprintf(k->notice, sizeof k->notice, "join: --token %s --master %s", k->token, a);
        else
            cs_errf(k->err, "job token %s: start the other ranks with COMMSIM_TOKEN=%s "
                            "(or --token) and --master %s\n", k->token, k->token, a);
    }
    if (o->catch_signals) {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGTERM);
        /* The terminal went away: end as interrupted (not under the
         * visualizer, which would wait for keys from a terminal that is gone). */
        if (!o->ui && !cs_launch_signal_ignored(SIGHUP)) sigaddset(&set, SIGHUP);
        sigprocmask(SIG_BLOCK, &set, NULL);
        k->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
        if (k->sigfd >= 0) controller_watch(k, k->sigfd, TAG(TAG_SIGNAL, 0));
    }
    if (cs_heartbeat_limit(&k->hb_limit, msg, sizeof msg) < 0) {
        cs_errf(k->err, "%s\n", msg);
        return -1;
    }
    setenv("COMMSIM_TOKEN", k->token, 1); /* the children's proof */
    return 0;
}

void controller_spawn_all(controller *k, const cs_run_opts *o) {
    bool here = o->rank < 0;
    for (int i = here ? 0 : o->rank; i < (here ? k->world : o->rank + 1); i++)
        if (spawn(k, i) < 0) {
            controller_abort(k, 1);
            return;
        }
}

static int launch(const cs_run_opts *o, const cs_engine_kind *kind, const cs_script *s, int world,
                  const cs_send_mode *mode, const char *mode_name, const cs_netmodel *net,
                  FILE *out, FILE *err);

int cs_launch_controller(const cs_run_opts *o, const cs_engine_kind *kind, const cs_script *s,
                         int world, const cs_send_mode *mode, const char *mode_name,
                         const cs_netmodel *net) {
    FILE *out = o->out ? o->out : stdout, *err = o->err ? o->err : stderr;
    /* Headless, this process's own output goes through a queue: a reader
     * that stops reading (a pager) must not stop the loop that keeps the
     * ranks' heartbeat and the timeout (outq.h). */
    cs_outq *q = cs_outq_std(!o->ui && !o->out && !o->err, &out, &err);
    int status = launch(o, kind, s, world, mode, mode_name, net, out, err);
    cs_outq_close(q);
    return status;
}

static int launch(const cs_run_opts *o, const cs_engine_kind *kind, const cs_script *s, int world,
                  const cs_send_mode *mode, const char *mode_name, const cs_netmodel *net,
                  FILE *out, FILE *err) {
    controller k = {.o = o, .kind = kind, .err = err, .world = world, .mode = *mode, .net = *net};
    if (world > CS_WIRE_MAX_WORLD) {
        cs_errf(err, "the %s engine runs at most %d ranks\n", kind->name,
                CS_WIRE_MAX_WORLD);
        return 1;
    }
    if (o->rank >= world) {
        cs_errf(err, "--rank %d is outside a world of %d\n", o->rank, world);
        return 1;
    }
    if (setup(&k, o) < 0 ||
        cs_control_open(&k.c, o, s, world, kind->name, mode_name, net, out, err) < 0) {
        controller_free(&k);
        return 1;
    }
    k.c.mon.on_deadlock = on_deadlock;
    k.c.mon.on_error = on_error;
    k.c.mon.ud = &k;
    if (k.c.tw) cs_trace_on_fail(k.c.tw, on_trace_fail, &k);
    cs_control_clock_answers(&k.c, clock_answer, &k);
    if (o->timeout > 0) k.deadline = cs_now() + o->timeout;
    if (o->ui) {
        controller_run_ui(&k, o, s);
    } else {
        controller_spawn_all(&k, o);
        controller_run(&k);
    }
    k.status = cs_control_close(&k.c, k.status, err);
    cs_control_free(&k.c);
    controller_free(&k);
    return k.status;
}
