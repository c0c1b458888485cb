/* controller_ui.c -- a front end (the visualizer) driving the controller.
 *
 * The front end needs the main thread (its screen, its keys), so the
 * controller's loop moves to a thread of its own. The two share the bus (whose
 * lock guards the monitor), the gates (which have their own lock) and a few
 * atomics; the front end's requests (quit, a timeout) and the gates' changes
 * reach the loop through an eventfd.
 *
 * Gates across processes: in a gated run every rank sends GATE before each
 * operation and waits for GO. The controller parks it in the gates as a rank
 * of another process (cs_gates_arrive) and asks whether it may go whenever
 * something changed: a frame arrived, the user stepped or resumed, a paced
 * slot came due. ABORT releases every gate, as it releases every wait.
 *
 * The screen: while it is the front end's, what the controller and the ranks
 * would write to the terminal is kept (err in memory, the ranks' stdout and
 * stderr through a pipe) and written out once the screen is closed.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "errmsg.h"
#include "gates.h"
#include "controller_internal.h"

/* ---- the job, as the front end sees it (its thread) */

static bool job_finished(void *ud) { return atomic_load(&((controller *)ud)->done); }

static void job_settle(void *ud) { cs_control_settle(&((controller *)ud)->c); }

static bool job_started(void *ud) { return atomic_load(&((controller *)ud)->welcomed); }

static cs_end_reason job_end_reason(void *ud) {
    int st = atomic_load(&((controller *)ud)->status);
    return st == 1 ? CS_END_ERROR : (cs_end_reason)st; /* 1: the controller's own failure */
}

static void wake(controller *k) {
    uint64_t one = 1;
    if (write(k->wakefd, &one, sizeof one) < 0) { /* full: a wake-up is pending anyway */ }
}

static void job_abort(void *ud, cs_end_reason why) {
    controller *k = ud;
    int none = 0;
    if (why == CS_END_QUIT) cs_control_ui_quit(&k->c);
    atomic_compare_exchange_strong(&k->ui_abort, &none, (int)why);
    wake(k);
}

static void gates_changed(void *ud) { wake(ud); }

static void job_set_gates(void *ud, cs_gates *g) {
    controller *k = ud;
    k->gates = g;
    cs_gates_on_change(g, gates_changed, k);
}

/* ---- in the controller's loop */

void controller_woken(controller *k) {
    uint64_t v;
    if (read(k->wakefd, &v, sizeof v) < 0) { /* drained already */ }
    int why = atomic_exchange(&k->ui_abort, 0);
    if (why == CS_END_TIMEOUT && !k->status) controller_timeout(k);
    else if (why) controller_abort(k, why);
}

int controller_gate_frame(controller *k, int i, cs_cur *meta, char *err, size_t errlen) {
    prank *p = &k->r[i];
    cs_gate_msg g;
    const char *bad = !k->gates ? "a GATE frame in a run without gates"
                      : p->gate_seq ? "a GATE frame while waiting at a gate"
                      : cs_gate_get(meta, &g, k->world) < 0 ? "a malformed GATE frame" : NULL;
    if (bad) {
        snprintf(err, errlen, "%s", bad);
        return -1;
    }
    if (k->status) return 0; /* the run is ending: its ABORT releases the rank */
    char *text = g.text_len ? strndup(g.text, g.text_len) : NULL;
    p->gate_seq = g.seq;
    k->nparked++;
    cs_gates_arrive(k->gates, i, (cs_gates_park){true, (cs_op)g.op, g.peer, g.tag, g.line}, text);
    return 0;
}

void controller_relay_gates(controller *k) {
    double now = cs_now(), soonest = 0;
    for (int i = 0; i < k->world && k->nparked; i++) {
        prank *p = &k->r[i];
        double retry = -1;
        if (!p->gate_seq) continue;
        if (!cs_gates_try_pass(k->gates, i, &retry)) {
            if (retry >= 0 && (!soonest || now + retry < soonest)) soonest = now + retry;
            continue;
        }
        uint8_t m[8];
        cs_cur c = {.p = m, .len = sizeof m};
        cs_put_u64(&c, p->gate_seq);
        p->gate_seq = 0;
        k->nparked--;
        if (p->state == RK_JOINED) cs_wire_send(p->fd, CS_FR_GO, m, sizeof m, now + 1);
    }
    k->gate_retry_at = soonest;
}

void controller_gate_leave(controller *k, int i) {
    if (!k->gates) return;
    if (k->r[i].gate_seq) k->nparked--;
    k->r[i].gate_seq = 0;
    cs_gates_leave(k->gates, i);
}

/* ---- the terminal, kept from the screen */

void controller_output(controller *k) {
    char buf[4096];
    ssize_t n;
    while ((n = read(k->outfd, buf, sizeof buf)) > 0) fwrite(buf, 1, (size_t)n, k->err);
    if (n == 0) { /* every writer is gone: stop watching */
        epoll_ctl(k->epfd, EPOLL_CTL_DEL, k->outfd, NULL);
        close(k->outfd);
        k->outfd = -1;
    }
}

static void capture_start(controller *k) {
    int fds[2];
    FILE *mem = open_memstream(&k->captured, &k->ncaptured);
    if (!mem) return;
    if (pipe2(fds, O_CLOEXEC) < 0) {
        fclose(mem);
        free(k->captured);
        k->captured = NULL;
        return;
    }
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    k->outfd = fds[0];
    k->outw = fds[1];
    controller_watch(k, k->outfd, TAG(TAG_OUTPUT, 0));
    k->real_err = k->err;
    k->err = mem;
}

static void capture_end(controller *k) {
    if (!k->real_err) return;
    if (k->outfd >= 0) controller_output(k);
    fclose(k->err);
    k->err = k->real_err;
    k->real_err = NULL;
    if (k->ncaptured) fwrite(k->captured, 1, k->ncaptured, k->err);
    free(k->captured);
    k->captured = NULL;
}

/* ---- the run */

static void *controller_main(void *arg) {
    controller_run(arg);
    return NULL;
}

void controller_run_ui(controller *k, const cs_run_opts *o, const cs_script *s) {
    const cs_frontend *ui = o->ui;
    cs_job job = {.world = k->world, .bus = &k->c.bus, .mon = &k->c.mon, .script = s,
                  .notice = k->notice[0] ? k->notice : NULL, .finished = job_finished,
                  .end_reason = job_end_reason, .abort = job_abort, .set_gates = job_set_gates,
                  .settle = job_settle, .started = job_started, .ud = k};
    k->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (k->wakefd < 0 || ui->attach(ui->ud, &job) < 0) {
        cs_errf(k->err, "cannot start the visualizer\n");
        controller_abort(k, CS_END_ERROR);
        atomic_store(&k->done, true);
        return;
    }
    controller_watch(k, k->wakefd, TAG(TAG_WAKE, 0));
    capture_start(k);
    controller_spawn_all(k, o);
    if (k->outw >= 0) close(k->outw); /* the children have theirs */
    k->outw = -1;
    pthread_t t;
    if (pthread_create(&t, NULL, controller_main, k) != 0) {
        cs_errf(k->err, "cannot start the controller's thread\n");
        controller_abort(k, CS_END_ERROR);
        controller_run(k);
        ui->loop(ui->ud); /* shows the failed run; closes its screen */
    } else {
        ui->loop(ui->ud);
        pthread_join(t, NULL);
    }
    capture_end(k);
}
