/* model.c -- the visualizer's view of the world model. */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"

void cs_viz_bytes(size_t bytes, char *buf, size_t len) {
    if (bytes < 1024) snprintf(buf, len, "%zu B", bytes);
    else if (bytes < 1024 * 1024) snprintf(buf, len, "%.3g KiB", (double)bytes / 1024);
    else if (bytes < (size_t)1 << 30) snprintf(buf, len, "%.3g MiB", (double)bytes / (1 << 20));
    else snprintf(buf, len, "%.3g GiB", (double)bytes / (1 << 30));
}

void cs_viz_op_text(cs_op op, int peer, int tag, size_t bytes, bool ascii, char *buf, size_t len) {
    bool send = cs_op_is_send(op);
    const char *arrow = send ? (ascii ? "->" : "→") : (ascii ? "<-" : "←");
    char who[16], size[24] = "";
    if (peer == CS_ANY_SOURCE) snprintf(who, sizeof who, "any");
    else snprintf(who, sizeof who, "%d", peer);
    if (bytes) {
        char b[16];
        cs_viz_bytes(bytes, b, sizeof b);
        snprintf(size, sizeof size, " %s", b);
    }
    snprintf(buf, len, "%s %s %s tag %d%s", cs_op_name(op), arrow, who, tag, size);
}

/* The first unfinished request a blocked rank sleeps on. */
static const cs_mon_req *first_wait(const cs_monitor *m, int k) {
    const cs_mon_rank *r = &m->ranks[k];
    for (int i = 0; i < r->nwait; i++) {
        const cs_mon_req *q = cs_monitor_find(m, k, r->wait[i]);
        if (q && !q->done) return q;
    }
    return NULL;
}

/* A failed rank's word: "error", or for a rank process that died, its death
 * as the error names it ("rank 2 died (signal 9) while ..." gives "died
 * (signal 9)"). */
static void died(const cs_mon_rank *r, char *buf, size_t len) {
    const char *e = r->error, *p = e ? strstr(e, " died") : NULL;
    if (r->status != CS_END_DIED || !p) {
        snprintf(buf, len, r->status == CS_END_DIED ? "died" : "error");
        return;
    }
    p++;
    const char *close = strchr(p, ')');
    int n = close && p[4] == ' ' && p[5] == '(' ? (int)(close - p + 1) : 4;
    snprintf(buf, len, "%.*s", n, p);
}

void cs_viz_describe(const cs_monitor *m, const cs_history *h, const cs_viz_gate *gate, int k,
                     bool ascii, cs_viz_rank *out) {
    const cs_mon_rank *r = &m->ranks[k];
    memset(out, 0, sizeof *out);
    out->state = r->state == CS_RS_IDLE && h && h->started ? CS_RS_RUNNING : r->state;
    out->line = r->state >= CS_RS_DONE && r->end_line ? r->end_line : r->line;
    out->since = r->since;
    const cs_mon_req *q = r->state == CS_RS_BLOCKED ? first_wait(m, k) : NULL;
    if (q) {
        char op[40];
        cs_viz_op_text(q->op, q->peer, q->tag, q->bytes, ascii, op, sizeof op);
        bool nb = q->op == CS_OP_ISEND || q->op == CS_OP_IRECV;
        snprintf(out->op, sizeof out->op, "%s%s", nb ? "wait " : "", op);
        out->line = r->wait_line ? r->wait_line : q->line;
        return;
    }
    if (gate && gate->parked && r->state < CS_RS_DONE) {
        out->parked = true;
        cs_viz_op_text(gate->op, gate->peer, gate->tag, 0, ascii, out->op, sizeof out->op);
        out->line = gate->line;
        return;
    }
    if (r->state == CS_RS_FAILED) {
        died(r, out->op, sizeof out->op);
        return;
    }
    const cs_hpost *p = h && k < h->world ? &h->last[k] : NULL;
    if (p && p->valid && r->state < CS_RS_DONE) {
        cs_viz_op_text(p->op, p->peer, p->tag, p->bytes, ascii, out->op, sizeof out->op);
        out->line = p->line;
    }
}

int cs_viz_waits_on(const cs_monitor *m, int k, int *peers, int max) {
    const cs_mon_rank *r = &m->ranks[k];
    int n = 0;
    if (r->state != CS_RS_BLOCKED) return 0;
    for (int i = 0; i < r->nwait && n < max; i++) {
        const cs_mon_req *q = cs_monitor_find(m, k, r->wait[i]);
        if (!q || q->done || q->peer < 0 || q->peer >= m->world) continue;
        bool seen = false;
        for (int j = 0; j < n; j++) seen |= peers[j] == q->peer;
        if (!seen) peers[n++] = q->peer;
    }
    return n;
}

/* Walk first edges from each blocked rank; a walk that comes back on itself
 * has found a cycle. Every rank is visited once over all walks. */
int cs_viz_cycle(const cs_monitor *m, int *cycle, int max) {
    int n = m->world, found = 0;
    int *mark = calloc((size_t)n, sizeof *mark); /* 0 unseen, else walk number */
    int *pos = calloc((size_t)n, sizeof *pos);
    if (!mark || !pos) goto out;
    for (int s = 0; s < n && !found; s++) {
        if (mark[s] || m->ranks[s].state != CS_RS_BLOCKED) continue;
        int k = s, len = 0;
        while (k >= 0 && !mark[k] && m->ranks[k].state == CS_RS_BLOCKED) {
            mark[k] = s + 1;
            pos[k] = len++;
            int next;
            k = cs_viz_waits_on(m, k, &next, 1) ? next : -1;
        }
        if (k < 0 || mark[k] != s + 1) continue;
        /* k is on the cycle: follow it round once more to list it */
        int first = k;
        do {
            if (found < max) cycle[found] = k;
            found++;
            int next;
            cs_viz_waits_on(m, k, &next, 1);
            k = next;
        } while (k != first);
    }
out:
    free(mark);
    free(pos);
    return found;
}

static int msg_cmp(const void *a, const void *b) {
    const cs_viz_msg *x = a, *y = b;
    int kx = x->from >= 0 ? x->from : 0, ky = y->from >= 0 ? y->from : 0;
    if (kx != ky) return kx < ky ? -1 : 1;
    return (x->line > y->line) - (x->line < y->line);
}

static const char *req_state(const cs_mon_req *q) {
    if (!cs_op_is_send(q->op)) return q->matched ? NULL : "recv posted";
    if (q->matched) return q->done ? NULL : "matched";
    return q->done ? "buffered" : "posted";
}

size_t cs_viz_inflight(const cs_monitor *m, cs_viz_msg *out, size_t max) {
    size_t n = 0;
    for (int k = 0; k < m->world; k++) {
        const cs_mon_reqtab *t = &m->ranks[k].reqs;
        for (size_t i = 0; i < t->cap; i++) {
            const cs_mon_req *q = t->slot[i];
            const char *st = q && q->ctx == 0 ? req_state(q) : NULL;
            if (!st) continue;
            if (n < max) {
                bool send = cs_op_is_send(q->op);
                out[n] = (cs_viz_msg){.from = send ? k : q->peer, .to = send ? q->peer : k,
                                      .tag = q->tag, .line = q->line, .bytes = q->bytes,
                                      .state = st};
            }
            n++;
        }
    }
    qsort(out, n < max ? n : max, sizeof *out, msg_cmp);
    return n;
}
