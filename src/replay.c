/* replay.c -- a trace loaded whole, and folded through the monitor.
 *
 * Each event is a deep copy (cs_event_copy) out of the reader's store, so the
 * events outlive the reader and cs_replay_free releases them one by one.
 */
#include "replay.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "trace.h"
#include "vclock.h"

static int push(cs_replay *r, size_t *cap, const cs_event *ev) {
    if (r->n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 256;
        cs_event *p = realloc(r->ev, ncap * sizeof *p);
        if (!p) return -1;
        r->ev = p;
        *cap = ncap;
    }
    if (cs_event_copy(&r->ev[r->n], ev) < 0) return -1;
    r->n++;
    return 0;
}

int cs_replay_load(cs_replay *r, const char *path, char *err, size_t errlen) {
    memset(r, 0, sizeof *r);
    cs_trace_reader *rd = cs_trace_reader_open(path, err, errlen);
    if (!rd) return -1;
    size_t cap = 0;
    int rc;
    cs_event ev;
    while ((rc = cs_trace_read(rd, &ev, err, errlen)) == 1) {
        if (push(r, &cap, &ev) < 0) {
            snprintf(err, errlen, "%s: out of memory", path);
            rc = -1;
            break;
        }
    }
    r->world = cs_trace_reader_world(rd);
    cs_trace_reader_close(rd);
    if (rc < 0) {
        cs_replay_free(r);
        return -1;
    }
    r->cut = rc == CS_TRACE_CUT;
    if (r->n > 0 && r->ev[0].type == CS_EV_RUN) r->source = r->ev[0].source;
    if (r->n > 0 && r->ev[0].text && !(r->script = strdup(r->ev[0].text))) {
        snprintf(err, errlen, "%s: out of memory", path);
        cs_replay_free(r);
        return -1;
    }
    return 0;
}

int cs_replay_open(cs_replay *r, const char *path, char *err, size_t errlen) {
    if (cs_replay_load(r, path, err, errlen) < 0) return -1;
    if (r->n == 0) { /* err says where it was cut */
        size_t n = strlen(err);
        snprintf(err + n, errlen - n, ", inside its run header: nothing to show");
        cs_replay_free(r);
        return -1;
    }
    return 0;
}

void cs_replay_free(cs_replay *r) {
    for (size_t i = 0; i < r->n; i++) cs_event_free(&r->ev[i]);
    free(r->ev);
    free(r->script);
    memset(r, 0, sizeof *r);
}

static bool whole_number(const char *s, long min, long *out) {
    char *end;
    if (*s < '0' || *s > '9') return false;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < min) return false;
    *out = v;
    return true;
}

bool cs_replay_at_parse(const char *s, cs_replay_at *at) {
    const char *colon = strchr(s, ':');
    long rank, line, ev;
    *at = (cs_replay_at){0};
    if (!colon) return whole_number(s, 1, &ev) && (at->event = ev, true);
    char head[32];
    if ((size_t)(colon - s) >= sizeof head) return false;
    memcpy(head, s, (size_t)(colon - s));
    head[colon - s] = 0;
    if (!whole_number(head, 0, &rank) || !whole_number(colon + 1, 1, &line) || rank > INT_MAX ||
        line > INT_MAX)
        return false;
    at->rank = (int)rank, at->line = (int)line;
    return true;
}

size_t cs_replay_at_events(const cs_replay *r, const cs_replay_at *at, bool *found) {
    *found = true;
    if (at->line > 0) {
        for (size_t i = 0; i < r->n; i++)
            if (r->ev[i].rank == at->rank && r->ev[i].line == at->line && r->ev[i].type != CS_EV_RUN)
                return i + 1; /* the event itself folded: the rank stands on that line */
        *found = false;
        return r->n;
    }
    if (at->event < 0) return r->n;
    if ((size_t)at->event > r->n) *found = false;
    return (size_t)at->event < r->n ? (size_t)at->event : r->n;
}

int cs_replay_fold(const cs_replay *r, size_t upto, cs_monitor *m) {
    if (cs_monitor_init(m, r->world) < 0) return -1;
    if (upto > r->n) upto = r->n;
    for (size_t i = 0; i < upto; i++) cs_monitor_fold(m, &r->ev[i]);
    return 0;
}

int cs_replay_feed(const cs_replay *r, size_t upto, cs_monitor *m, const cs_sink *sinks,
                   int nsinks) {
    if (cs_monitor_init(m, r->world) < 0) return -1;
    if (upto > r->n) upto = r->n;
    for (size_t i = 0; i < upto; i++) {
        cs_monitor_fold(m, &r->ev[i]);
        for (int k = 0; k < nsinks; k++) sinks[k].emit(sinks[k].ud, &r->ev[i]);
    }
    return 0;
}

int cs_replay_status(const cs_replay *r, size_t upto, const cs_monitor *m, char *why,
                     size_t whylen) {
    int status = cs_report_status(m), left = 0;
    if (whylen) why[0] = 0;
    for (int k = 0; k < m->world; k++) left += m->ranks[k].state < CS_RS_DONE;
    if (left && !m->deadlocked && !status) {
        char where[64] = "the trace ends";
        if (upto == 1 && r->n > 1) snprintf(where, sizeof where, "the first event ends");
        else if (upto < r->n) snprintf(where, sizeof where, "the first %zu events end", upto);
        snprintf(why, whylen, "%s before the run did: %d rank%s had not finished", where, left,
                 left == 1 ? "" : "s");
        status = 1;
    }
    /* The run went on past the cut: what its events say so far is not its
     * verdict, not even "ok" (a killed run's last events may be all exits). */
    if (r->cut) status = 1;
    return status;
}

/* ---- timing again */

typedef struct retime {
    cs_replay out;
    size_t cap;
    bool failed;
} retime;

static void retime_emit(void *ud, cs_event *ev) {
    retime *t = ud;
    if (!t->failed && push(&t->out, &t->cap, ev) < 0) t->failed = true;
}

int cs_replay_timekeeper(const cs_replay *r, const char *net, cs_vclock **out, char *err,
                         size_t errlen) {
    const char *recorded = r->n && r->ev[0].type == CS_EV_RUN ? r->ev[0].net : NULL;
    cs_netmodel m;
    *out = NULL;
    if (!net && !recorded) return 0;
    if (net && !recorded && strcmp(net, "none") != 0) {
        snprintf(err, errlen, "--net: the trace was recorded without a network model, so its "
                 "waits were not all recorded; record it with 'commsim run --net'");
        return -1;
    }
    if (cs_netmodel_parse(net ? net : recorded, &m, err, errlen) < 0) return -1;
    if (m.on && !(*out = cs_vclock_new(&m, r->world))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

int cs_replay_retime(cs_replay *r, const char *net, char *err, size_t errlen) {
    const char *recorded = r->n && r->ev[0].type == CS_EV_RUN ? r->ev[0].net : NULL;
    cs_netmodel m;
    if (!recorded && (!net || strcmp(net, "none") != 0)) {
        snprintf(err, errlen, "the trace was recorded without a network model, so its waits "
                 "were not all recorded; record it with 'commsim run --net'");
        return -1;
    }
    if (cs_netmodel_parse(net ? net : recorded, &m, err, errlen) < 0) return -1;
    char name[160];
    cs_netmodel_format(&m, name, sizeof name);
    retime t = {.out = {.world = r->world, .cut = r->cut}};
    cs_vclock *v = m.on ? cs_vclock_new(&m, r->world) : NULL;
    if (m.on && !v) t.failed = true;
    if (v) cs_vclock_set_emit(v, retime_emit, &t);
    for (size_t i = 0; i < r->n && !t.failed; i++) {
        cs_event ev = r->ev[i];
        if (ev.type == CS_EV_VTIME) continue;
        if (ev.type == CS_EV_RUN) ev.net = m.on ? name : NULL;
        if (push(&t.out, &t.cap, &ev) < 0) t.failed = true;
        else if (v) cs_vclock_feed(v, &ev);
    }
    cs_vclock_free(v);
    if (t.failed) {
        snprintf(err, errlen, "out of memory timing the trace again");
        cs_replay_free(&t.out);
        return -1;
    }
    t.out.script = r->script;
    t.out.priv = r->priv;
    r->script = NULL;
    r->priv = NULL;
    cs_replay_free(r);
    *r = t.out;
    return 0;
}
