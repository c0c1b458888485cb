/* gates.c -- pause, step and speed, as the gate every rank passes.
 *
 * One mutex guards everything. Ranks of this process sleep at their gates on
 * one condition variable with a short timeout, so an abort is noticed within a
 * tick even if nobody calls cs_gates_wake; ranks of other processes are
 * parked slots the controller asks about (cs_gates_try_pass). Pacing is a shared schedule: each operation reserves the
 * next free slot 1/speed seconds after the previous one, so "10 ops/s" means
 * ten operations a second over all ranks, whoever is fastest.
 */
#include "gates.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TICK 0.05 /* seconds a gate sleeps before looking at the world again */

typedef struct gate_slot {
    bool parked;
    cs_op op;
    int peer, tag, line;
    cs_tensor *tensor;  /* borrowed from the parked rank of this process */
    char *text;         /* or a remote rank's tensor as printed, owned */
    unsigned credit;    /* gates it may pass while paused */
    double at;          /* its reserved time when paced; 0: none */
} gate_slot;

struct cs_gates {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool paused;
    double speed, next;
    uint64_t steps;
    int n;
    gate_slot *s;
    void (*on_change)(void *ud);
    void *change_ud;
};

cs_gates *cs_gates_new(int nranks, bool paused, double speed) {
    cs_gates *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->n = nranks > 0 ? nranks : 1;
    c->s = calloc((size_t)c->n, sizeof *c->s);
    if (!c->s) {
        free(c);
        return NULL;
    }
    c->paused = paused;
    c->speed = speed > 0 ? speed : 0;
    pthread_mutex_init(&c->mu, NULL);
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&c->cv, &a);
    pthread_condattr_destroy(&a);
    return c;
}

void cs_gates_free(cs_gates *c) {
    if (!c) return;
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
    for (int k = 0; k < c->n; k++) free(c->s[k].text);
    free(c->s);
    free(c);
}

static void sleep_for(cs_gates *c, double seconds) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double when = (double)ts.tv_sec + ts.tv_nsec * 1e-9 + (seconds < TICK ? seconds : TICK);
    ts.tv_sec = (time_t)when;
    ts.tv_nsec = (long)((when - (double)ts.tv_sec) * 1e9);
    pthread_cond_timedwait(&c->cv, &c->mu, &ts);
}

/* May the rank go now? Paused: only on a step credit. Paced: at its slot. */
static bool may_pass(cs_gates *c, gate_slot *s) {
    if (c->paused) {
        if (!s->credit) return false;
        s->credit--;
        return true;
    }
    if (c->speed <= 0) return true;
    double now = cs_now();
    if (s->at == 0) {
        s->at = c->next > now ? c->next : now;
        c->next = s->at + 1.0 / c->speed;
    }
    return now >= s->at;
}

void cs_gates_on_change(cs_gates *c, void (*fn)(void *ud), void *ud) {
    pthread_mutex_lock(&c->mu);
    c->on_change = fn;
    c->change_ud = ud;
    pthread_mutex_unlock(&c->mu);
}

/* Something that may let a parked rank go happened (c->mu held). */
static void changed(cs_gates *c) {
    pthread_cond_broadcast(&c->cv);
    if (c->on_change) c->on_change(c->change_ud);
}

/* The rank leaves its gate (c->mu held). */
static void unpark(gate_slot *s) {
    s->parked = false;
    s->tensor = NULL;
    free(s->text);
    s->text = NULL;
    s->at = 0;
}

int cs_gates_pass(void *ud, cs_rank *r, cs_op op, int line) {
    cs_gates *c = ud;
    cs_world *w = cs_rank_world(r);
    gate_slot *s = &c->s[cs_rank_id(r)];
    int rc = CS_OK;
    pthread_mutex_lock(&c->mu);
    s->op = op;
    s->line = line;
    if (!cs_rank_gate_op(r, &s->peer, &s->tag, &s->tensor)) {
        s->peer = CS_NO_RANK;
        s->tag = 0;
        s->tensor = NULL;
    }
    for (;;) {
        if (cs_world_aborted(w)) {
            rc = CS_EABORT;
            break;
        }
        if (may_pass(c, s)) break;
        s->parked = true;
        sleep_for(c, s->at > 0 ? s->at - cs_now() : TICK);
    }
    unpark(s);
    if (rc == CS_OK) c->steps++;
    pthread_mutex_unlock(&c->mu);
    return rc;
}

void cs_gates_set_paused(cs_gates *c, bool paused) {
    pthread_mutex_lock(&c->mu);
    c->paused = paused;
    if (!paused) {
        /* steps granted while paused do not carry into the run */
        for (int k = 0; k < c->n; k++) c->s[k].credit = 0;
        c->next = 0;
    }
    changed(c);
    pthread_mutex_unlock(&c->mu);
}

bool cs_gates_paused(cs_gates *c) {
    pthread_mutex_lock(&c->mu);
    bool p = c->paused;
    pthread_mutex_unlock(&c->mu);
    return p;
}

void cs_gates_set_speed(cs_gates *c, double ops_per_s) {
    pthread_mutex_lock(&c->mu);
    c->speed = ops_per_s > 0 ? ops_per_s : 0;
    c->next = 0;
    for (int k = 0; k < c->n; k++) c->s[k].at = 0; /* re-reserve at the new pace */
    changed(c);
    pthread_mutex_unlock(&c->mu);
}

double cs_gates_speed(cs_gates *c) {
    pthread_mutex_lock(&c->mu);
    double v = c->speed;
    pthread_mutex_unlock(&c->mu);
    return v;
}

void cs_gates_step(cs_gates *c, int k) {
    if (k < 0 || k >= c->n) return;
    pthread_mutex_lock(&c->mu);
    c->s[k].credit++;
    changed(c);
    pthread_mutex_unlock(&c->mu);
}

void cs_gates_drop_steps(cs_gates *c, int k) {
    if (k < 0 || k >= c->n) return;
    pthread_mutex_lock(&c->mu);
    c->s[k].credit = 0;
    pthread_mutex_unlock(&c->mu);
}

uint64_t cs_gates_steps(cs_gates *c) {
    pthread_mutex_lock(&c->mu);
    uint64_t n = c->steps;
    pthread_mutex_unlock(&c->mu);
    return n;
}

cs_gates_park cs_gates_parked(cs_gates *c, int k) {
    cs_gates_park p = {0};
    if (k < 0 || k >= c->n) return p;
    pthread_mutex_lock(&c->mu);
    const gate_slot *s = &c->s[k];
    p = (cs_gates_park){s->parked, s->op, s->peer, s->tag, s->line};
    pthread_mutex_unlock(&c->mu);
    return p;
}

char *cs_gates_tensor_text(cs_gates *c, int k) {
    if (k < 0 || k >= c->n) return NULL;
    char *text = NULL;
    pthread_mutex_lock(&c->mu);
    /* The parked rank cannot leave its gate (and touch the tensor) without this lock. */
    const gate_slot *s = &c->s[k];
    if (s->parked && s->tensor) text = cs_tensor_format(s->tensor);
    else if (s->parked && s->text) text = strdup(s->text);
    pthread_mutex_unlock(&c->mu);
    return text;
}

void cs_gates_wake(cs_gates *c) {
    pthread_mutex_lock(&c->mu);
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

/* ---- ranks of other processes */

void cs_gates_arrive(cs_gates *c, int k, cs_gates_park p, char *tensor_text) {
    if (k < 0 || k >= c->n) {
        free(tensor_text);
        return;
    }
    pthread_mutex_lock(&c->mu);
    gate_slot *s = &c->s[k];
    unpark(s);
    s->parked = true;
    s->op = p.op;
    s->peer = p.peer;
    s->tag = p.tag;
    s->line = p.line;
    s->text = tensor_text;
    pthread_mutex_unlock(&c->mu);
}

bool cs_gates_try_pass(cs_gates *c, int k, double *retry) {
    if (k < 0 || k >= c->n) return false;
    pthread_mutex_lock(&c->mu);
    gate_slot *s = &c->s[k];
    bool go = s->parked && may_pass(c, s);
    if (go) {
        unpark(s);
        c->steps++;
    } else if (retry) {
        /* paced: at its slot; paused: when something changes (-1) */
        double left = s->at - cs_now();
        *retry = c->paused || s->at <= 0 ? -1 : left > 0 ? left : 0;
    }
    pthread_mutex_unlock(&c->mu);
    return go;
}

void cs_gates_leave(cs_gates *c, int k) {
    if (k < 0 || k >= c->n) return;
    pthread_mutex_lock(&c->mu);
    unpark(&c->s[k]);
    c->s[k].credit = 0;
    pthread_mutex_unlock(&c->mu);
}
