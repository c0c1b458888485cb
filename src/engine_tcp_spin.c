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
 */
#include "engine_tcp_internal.h"

void tcp_spin_init(tcp_spin *s, double budget) {
    *s = (tcp_spin){.budget = budget > 0 ? budget : 0, .score = TCP_SPIN_SCORE_MAX};
}

double tcp_spin_budget(tcp_spin *s) {
    if (s->budget <= 0) return 0;
    if (s->score > 0 || ++s->skips % TCP_SPIN_PROBE == 0) return s->budget;
    return 0;
}

void tcp_spin_learn(tcp_spin *s, double polled, bool paid) {
    if (polled <= 0) return; /* slept at once: nothing learnt */
    if (paid) s->score = s->score < TCP_SPIN_SCORE_MAX ? s->score + 1 : TCP_SPIN_SCORE_MAX;
    else s->score = s->score > TCP_SPIN_MISS_COST ? s->score - TCP_SPIN_MISS_COST : 0;
}
