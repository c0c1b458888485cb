/* engine_tcp_spin.c -- should a waiting tcp rank poll its sockets before it
 * sleeps in epoll, and for how long?
 *
 * Polling pays when the awaited frame comes within the budget: a thread woken
 * from epoll costs more than the whole trip on loopback (on a virtual machine,
 * waking a halted core costs tens of microseconds). A poll that does not pay
 * wastes its budget, and worse, on a busy machine it may keep the very peer we
 * wait for off this core. So a wait polls while recent polls paid (a score: a
 * miss costs what several hits save), and once they stop paying only one wait
 * in TCP_SPIN_PROBE polls, to notice when polling pays again.
 *
 * With more ranks than cores the peer we wait for is often queued behind us
 * on our own core, and a rank that sleeps makes every step of a collective a
 * sleep and a wake-up (tens of microseconds on a VM, more than the step). So
 * an oversubscribed rank yield-polls, as Open MPI does (mpi_yield_when_idle):
 * between two polls it hands the core to whoever else can run (sched_yield),
 * typically a peer, which sends and then waits in its turn; the core goes
 * back and forth between ranks that have work, with no wake-up in between.
 * A wait yield-polls for at most TCP_YIELD_S, under the same score. But a
 * yield hands the core to *any* runnable task: where other work holds the
 * cores (a build, another program that spins) it runs a whole time slice
 * before we get the core back, where a sleeping rank would have been woken
 * ahead of it. A yield that lasts TCP_YIELD_SLICE_S (a peer's step takes tens
 * of microseconds, a slice of other work one or more milliseconds) ends the
 * polling at once and zeroes the score: the ranks sleep as before, and probe
 * one wait in TCP_YIELD_PROBE (a probe may cost a slice). Measured, this is
 * as fast as sleeping on a loaded machine and up to a third faster on a
 * quiet one (docs/bench.md). A rank with a core of its own polls before it
 * announces the block (engine_tcp.c's tcp_poll: a wait that ends while
 * polling emits no block nor unblock), so the monitor sees a deadlock up to
 * a budget later; a yield-polling rank has announced it before.
 */
#include <sched.h>

#include "engine_tcp_internal.h"

void tcp_spin_init(tcp_spin *s, double budget) {
    *s = (tcp_spin){.budget = budget > 0 ? budget : 0, .score = TCP_SPIN_SCORE_MAX};
}

void tcp_spin_init_shared(tcp_spin *s) {
    *s = (tcp_spin){.budget = TCP_YIELD_S, .score = TCP_SPIN_SCORE_MAX, .yield = true};
}

double tcp_spin_budget(tcp_spin *s) {
    if (s->budget <= 0) return 0;
    unsigned probe = s->yield ? TCP_YIELD_PROBE : TCP_SPIN_PROBE;
    if (s->score > 0 || ++s->skips % probe == 0) return s->budget;
    return 0;
}

bool tcp_spin_pause(tcp_spin *s) {
    if (!s->yield) return true;
    double t0 = cs_now();
    sched_yield();
    if (cs_now() - t0 > TCP_YIELD_SLICE_S) s->overran = true;
    return !s->overran;
}

void tcp_spin_learn(tcp_spin *s, double polled, bool paid) {
    /* A yield ran other work for a time slice: whatever came, a wake-up
     * would have brought it sooner, and the next yields would do the same. */
    if (s->overran) {
        s->overran = false;
        s->score = 0;
        return;
    }
    if (polled <= 0) return; /* slept at once: nothing learnt */
    if (paid) s->score = s->score < TCP_SPIN_SCORE_MAX ? s->score + 1 : TCP_SPIN_SCORE_MAX;
    else s->score = s->score > TCP_SPIN_MISS_COST ? s->score - TCP_SPIN_MISS_COST : 0;
}
