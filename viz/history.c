/* history.c -- the diagram's rows, output and warnings, bounded and counted. */
#include "history.h"

#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "recheck.h"
#include "xalloc.h"

#define DEFAULT_CELLS (4u << 20) /* rows x ranks bytes of diagram state */

int cs_history_init(cs_history *h, int world, size_t cap) {
    memset(h, 0, sizeof *h);
    size_t w = (size_t)(world > 0 ? world : 1);
    if (!cap) {
        cap = DEFAULT_CELLS / w;
        if (cap > 4096) cap = 4096;
        if (cap < 64) cap = 64;
    }
    h->world = (int)w;
    h->cap = cap;
    h->rows = calloc(cap, sizeof *h->rows);
    h->st = calloc(cap * w, 1);
    h->cur = calloc(w, 1);
    h->pend = calloc(w, 1);
    h->last = calloc(w, sizeof *h->last);
    h->out = calloc(w, sizeof *h->out);
    h->calls = calloc(w, sizeof *h->calls);
    h->ncalls = calloc(w, sizeof *h->ncalls);
    if (!h->rows || !h->st || !h->cur || !h->pend || !h->last || !h->out || !h->calls ||
        !h->ncalls) {
        cs_history_free(h);
        return -1;
    }
    return 0;
}

void cs_history_free(cs_history *h) {
    for (int k = 0; h->out && k < h->world; k++) {
        for (size_t i = 0; i < h->out[k].cap; i++) free(h->out[k].line[i]);
        free(h->out[k].line);
    }
    for (int i = 0; i < CS_HIST_WARN_KEEP; i++) free(h->warn[i]);
    free(h->rows);
    free(h->st);
    free(h->cur);
    free(h->pend);
    free(h->last);
    free(h->out);
    free(h->frozen);
    for (int k = 0; h->calls && k < h->world; k++) free(h->calls[k]);
    for (int i = 0; i < 64; i++) free(h->band[i].msg), free(h->band[i].sent);
    free(h->calls);
    free(h->ncalls);
    free(h->spans);
    free(h->vclock);
    memset(h, 0, sizeof *h);
}

size_t cs_history_nspans(const cs_history *h) { return h->nspans; }

const cs_hspan *cs_history_span(const cs_history *h, size_t i) {
    return i < h->nspans ? &h->spans[(h->span_head + i) % CS_HIST_SPANS] : NULL;
}

uint64_t cs_history_vclock(const cs_history *h, int k) {
    return h->vclock && k >= 0 && k < h->world ? h->vclock[k] : 0;
}

/* A vtime event: a wait, a compute, a message (its send's row) or an exit. */
static void add_vtime(cs_history *h, const cs_event *ev) {
    static const struct { const char *what; cs_hv_kind kind; } kinds[] = {
        {"wait", CS_HV_WAIT}, {"compute", CS_HV_COMPUTE}, {"send", CS_HV_MSG}, {"exit", CS_HV_EXIT}};
    int kind = -1;
    for (size_t i = 0; ev->text && i < sizeof kinds / sizeof kinds[0]; i++)
        if (!strcmp(ev->text, kinds[i].what)) kind = (int)kinds[i].kind;
    if (kind < 0 || ev->vrank < 0 || ev->vrank >= h->world) return;
    if (!h->spans && (!(h->spans = calloc(CS_HIST_SPANS, sizeof *h->spans)) ||
                      !(h->vclock = calloc((size_t)h->world, sizeof *h->vclock)))) {
        free(h->spans);
        h->spans = NULL;
        h->spans_dropped++; /* shown on the screen: nothing leaves silently */
        return;
    }
    cs_hspan sp = {.kind = (uint8_t)kind, .rank = ev->vrank, .peer = ev->peer, .bytes = ev->bytes,
                   .from = kind == CS_HV_MSG ? ev->vt_start : ev->vt,
                   .to = kind == CS_HV_MSG ? ev->vt_arrive : kind == CS_HV_EXIT ? ev->vt : ev->vt_done};
    if (h->nspans == CS_HIST_SPANS) {
        h->span_head = (h->span_head + 1) % CS_HIST_SPANS;
        h->nspans--;
        h->spans_dropped++;
    }
    h->spans[(h->span_head + h->nspans++) % CS_HIST_SPANS] = sp;
    if ((kind == CS_HV_WAIT || kind == CS_HV_COMPUTE) && sp.to > h->vclock[sp.rank])
        h->vclock[sp.rank] = sp.to;
    if (sp.to > h->vmax) h->vmax = sp.to;
}

static size_t slot(const cs_history *h, size_t i) { return (h->head + i) % h->cap; }

const cs_hrow *cs_history_row(const cs_history *h, size_t i) {
    return i < h->n ? &h->rows[slot(h, i)] : NULL;
}

uint8_t cs_history_state(const cs_history *h, size_t i, int k) {
    if (i >= h->n || k < 0 || k >= h->world) return CS_HS_NONE;
    return h->st[slot(h, i) * (size_t)h->world + (size_t)k];
}

/* A blocked stretch must show even if it began and ended between two rows. */
static int rank_of_state(uint8_t s) {
    static const int weight[] = {[CS_HS_NONE] = 0, [CS_HS_RUN] = 1, [CS_HS_COMPUTE] = 2,
                                 [CS_HS_COLL] = 3, [CS_HS_BLOCKED] = 4, [CS_HS_DONE] = 5,
                                 [CS_HS_FAILED] = 6};
    return weight[s & 0x7F];
}

static void set_state(cs_history *h, int k, uint8_t s) {
    h->cur[k] = s;
    if (rank_of_state(s) > rank_of_state(h->pend[k])) h->pend[k] = s;
}

/* Append a row; the oldest leaves (and is counted) when the ring is full. */
static cs_hrow *new_row(cs_history *h, cs_hrow_kind kind, int mark) {
    if (h->n == h->cap) {
        const cs_hrow *old = &h->rows[h->head];
        h->dropped_rows++;
        if (old->kind == CS_HROW_MSG) h->dropped_msgs += old->count;
        h->head = (h->head + 1) % h->cap;
        h->n--;
    }
    size_t s = slot(h, h->n++);
    uint8_t *st = &h->st[s * (size_t)h->world];
    memcpy(st, h->pend, (size_t)h->world);
    memcpy(h->pend, h->cur, (size_t)h->world);
    if (mark >= 0 && mark < h->world) st[mark] |= CS_HS_MARK;
    cs_hrow *r = &h->rows[s];
    *r = (cs_hrow){.kind = kind, .from = mark, .to = -1, .t = h->t};
    return r;
}

static cs_hrow *last_row(cs_history *h) {
    return h->n ? &h->rows[slot(h, h->n - 1)] : NULL;
}

static uint8_t *last_states(cs_history *h) {
    return &h->st[slot(h, h->n - 1) * (size_t)h->world];
}

/* The band of call `call` on context ctx (entry or exit), or NULL when it
 * was never opened or has left the diagram. */
static cs_hrow *find_band(cs_history *h, int ctx, uint32_t call, bool begin, uint8_t **st,
                          struct cs_hband **entry) {
    unsigned kept = h->nband < 64 ? h->nband : 64;
    for (unsigned j = 1; j <= kept; j++) {
        struct cs_hband *b = &h->band[(h->nband - j) % 64];
        if (b->ctx != ctx || b->call != call || b->begin != begin) continue;
        if (entry) *entry = b;
        if (b->row < h->dropped_rows) return NULL;
        size_t s = slot(h, (size_t)(b->row - h->dropped_rows));
        if (st) *st = &h->st[s * (size_t)h->world];
        return &h->rows[s];
    }
    return NULL;
}

/* An internal message of a band, numbered by its sender's count in the call:
 * step k of the algorithm's schedule. */
static void record_band_msg(cs_history *h, struct cs_hband *e, const cs_event *ev) {
    int from = ev->peer;
    if (from < 0 || from >= h->world || e->nmsg >= CS_HIST_BAND_MSGS) return;
    if (!e->msg) e->msg = malloc(CS_HIST_BAND_MSGS * sizeof *e->msg);
    if (!e->sent) e->sent = calloc((size_t)h->world, sizeof *e->sent);
    if (!e->msg || !e->sent) return;
    e->msg[e->nmsg++] = (struct cs_hcmsg){from, ev->rank, e->sent[from]++, ev->bytes};
}

static void add_match(cs_history *h, const cs_event *ev) {
    cs_hrow *r = last_row(h);
    if (ev->ctx != 0) { /* a collective's own traffic: counted in its call's band */
        h->coll_msgs++;
        struct cs_hband *e = NULL;
        cs_hrow *b = find_band(h, ev->ctx, (uint32_t)ev->tag, true, NULL, &e);
        if (b) b->count++;
        if (b && e) record_band_msg(h, e, ev);
        return;
    }
    h->messages++;
    if (r && r->kind == CS_HROW_MSG && r->from == ev->peer && r->to == ev->rank &&
        r->bytes == ev->bytes && r->tag == ev->tag) {
        r->count++;
        return;
    }
    r = new_row(h, CS_HROW_MSG, -1);
    r->from = ev->peer;
    r->to = ev->rank;
    r->bytes = ev->bytes;
    r->tag = ev->tag;
    r->count = 1;
    uint8_t *st = last_states(h);
    if (ev->peer >= 0 && ev->peer < h->world) st[ev->peer] |= CS_HS_MARK;
    st[ev->rank] |= CS_HS_MARK;
}

/* The number of rank k's call on context ctx: its entries so far (an exit
 * belongs to the latest entry). Every rank of a group numbers its calls the
 * same way, which is how the collective tags its messages. */
static uint32_t call_number(cs_history *h, int k, int ctx, bool begin) {
    if (ctx < 0) ctx = 0;
    if (ctx >= h->ncalls[k]) {
        int n = ctx + 8;
        uint32_t *c = realloc(h->calls[k], (size_t)n * sizeof *c);
        if (!c) return 0;
        memset(c + h->ncalls[k], 0, (size_t)(n - h->ncalls[k]) * sizeof *c);
        h->calls[k] = c;
        h->ncalls[k] = n;
    }
    uint32_t *c = &h->calls[k][ctx];
    if (begin) return (*c)++ & 0x7fffffffu;
    return (*c ? *c - 1 : 0) & 0x7fffffffu;
}

/* Ranks entering (or leaving) the same call share a band. */
static void add_coll(cs_history *h, const cs_event *ev) {
    set_state(h, ev->rank, ev->begin ? CS_HS_COLL : CS_HS_RUN);
    const char *name = ev->text ? ev->text : "collective";
    uint32_t call = call_number(h, ev->rank, ev->ctx, ev->begin);
    uint8_t *st;
    if (find_band(h, ev->ctx, call, ev->begin, &st, NULL)) {
        st[ev->rank] = (uint8_t)(h->cur[ev->rank] | CS_HS_MARK);
        return;
    }
    cs_hrow *r = new_row(h, CS_HROW_COLL, ev->rank);
    r->begin = ev->begin;
    r->bytes = ev->bytes;
    r->tag = ev->ctx;
    r->call = call;
    strncpy(r->name, name, sizeof r->name - 1);
    if (ev->algo) strncpy(r->algo, ev->algo, sizeof r->algo - 1);
    struct cs_hband *b = &h->band[h->nband++ % 64];
    free(b->msg);
    free(b->sent);
    *b = (struct cs_hband){.ctx = ev->ctx, .call = call, .begin = ev->begin,
                           .row = h->dropped_rows + h->n - 1};
}

/* Forget a rank's oldest kept line. */
static void drop_output(cs_hout *o) {
    char **line = &o->line[o->first % CS_HIST_OUT_KEEP];
    if (*line) o->bytes -= strlen(*line);
    free(*line);
    *line = NULL;
    o->first++;
}

static void add_output(cs_history *h, int k, const char *text) {
    cs_hout *o = &h->out[k];
    const char *p = text ? text : "";
    for (;;) { /* one kept line per printed line; a final newline adds none */
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (o->total < CS_HIST_OUT_KEEP && o->total >= o->cap) {
            /* most ranks print a few lines: the ring grows as they come */
            size_t cap = o->cap ? o->cap * 2 : 16;
            if (cap > CS_HIST_OUT_KEEP) cap = CS_HIST_OUT_KEEP;
            o->line = cs_xrealloc(o->line, cap * sizeof *o->line, "a rank's output lines");
            memset(o->line + o->cap, 0, (cap - o->cap) * sizeof *o->line);
            o->cap = cap;
        }
        if (o->total - o->first == CS_HIST_OUT_KEEP) drop_output(o);
        char *copy = strndup(p, len);
        o->line[o->total % CS_HIST_OUT_KEEP] = copy;
        o->bytes += copy ? strlen(copy) : 0;
        o->total++;
        /* bounded in bytes too: a script printing long lines must not make
         * the visualizer hold its whole output, uncharged to any rank */
        while (o->bytes > CS_HIST_OUT_BYTES && o->total - o->first > 1) drop_output(o);
        if (!nl || !nl[1]) break;
        p = nl + 1;
    }
}

static void add_warn(cs_history *h, const cs_event *ev) {
    char **w = &h->warn[h->nwarn % CS_HIST_WARN_KEEP];
    free(*w);
    *w = strdup(ev->text ? ev->text : "warning");
    h->nwarn++;
    new_row(h, CS_HROW_WARN, ev->rank);
}

static void freeze(cs_history *h) {
    if (!h->mon || h->frozen || h->mon->world != h->world) return;
    h->frozen = calloc((size_t)h->world, sizeof *h->frozen);
    for (int k = 0; h->frozen && k < h->world; k++)
        cs_viz_describe(h->mon, h, NULL, k, h->ascii, &h->frozen[k]);
    h->ncycle = cs_viz_cycle(h->mon, h->cycle, CS_HIST_CYCLE_KEEP);
}

void cs_history_add(cs_history *h, const cs_event *ev) {
    h->nevents++;
    if (ev->t > h->t) h->t = ev->t;
    if (ev->type == CS_EV_DEADLOCK) {
        /* every blocked rank's bar up to the verdict, then the verdict below */
        new_row(h, CS_HROW_STATES, -1);
        new_row(h, CS_HROW_DEADLOCK, -1);
        freeze(h);
        return;
    }
    if (ev->type == CS_EV_VTIME) {
        add_vtime(h, ev);
        return;
    }
    /* a rank's first event: every rank runs its script (a tcp run's ranks
     * start together once all have joined), so one with none yet computes */
    if (ev->rank >= 0) h->started = true;
    if (ev->rank < 0 || ev->rank >= h->world) return;
    int k = ev->rank;
    if (h->cur[k] == CS_HS_NONE) set_state(h, k, CS_HS_RUN);
    switch (ev->type) {
    case CS_EV_POST:
        h->last[k] = (cs_hpost){true, ev->op, ev->peer, ev->tag, ev->line, ev->bytes};
        break;
    case CS_EV_MATCH: add_match(h, ev); break;
    case CS_EV_BLOCK: set_state(h, k, CS_HS_BLOCKED); break;
    case CS_EV_UNBLOCK: set_state(h, k, CS_HS_RUN); break;
    case CS_EV_COMPUTE: set_state(h, k, ev->begin ? CS_HS_COMPUTE : CS_HS_RUN); break;
    case CS_EV_COLL: add_coll(h, ev); break;
    case CS_EV_PRINT: add_output(h, k, ev->text); break;
    case CS_EV_WARN: /* the recheck's line is no warning: the alerts show it on its own */
        if (!ev->text || strncmp(ev->text, CS_RECHECK_PREFIX, strlen(CS_RECHECK_PREFIX)) != 0)
            add_warn(h, ev);
        break;
    /* After a deadlock the ranks only unwind: the diagram ends at the verdict. */
    case CS_EV_ERROR:
        set_state(h, k, CS_HS_FAILED);
        if (!h->frozen) new_row(h, CS_HROW_ERROR, k);
        break;
    case CS_EV_EXIT:
        if (h->cur[k] != CS_HS_FAILED) {
            set_state(h, k, ev->status == 0 ? CS_HS_DONE : CS_HS_FAILED);
            if (!h->frozen) new_row(h, CS_HROW_EXIT, k)->count = (uint64_t)ev->status;
        }
        break;
    default: break;
    }
}

static void history_emit(void *ud, const cs_event *ev) { cs_history_add(ud, ev); }

cs_sink cs_history_sink(cs_history *h) { return (cs_sink){history_emit, h}; }

size_t cs_history_nout(const cs_history *h, int k) {
    if (k < 0 || k >= h->world) return 0;
    return (size_t)(h->out[k].total - h->out[k].first);
}

const char *cs_history_out(const cs_history *h, int k, size_t i) {
    if (i >= cs_history_nout(h, k)) return NULL;
    return h->out[k].line[(h->out[k].first + i) % CS_HIST_OUT_KEEP];
}

size_t cs_history_nwarn(const cs_history *h) {
    return h->nwarn < CS_HIST_WARN_KEEP ? (size_t)h->nwarn : CS_HIST_WARN_KEEP;
}

const char *cs_history_warn(const cs_history *h, size_t i) {
    size_t n = cs_history_nwarn(h);
    if (i >= n) return NULL;
    return h->warn[(h->nwarn - n + i) % CS_HIST_WARN_KEEP];
}

const struct cs_hband *cs_history_band(const cs_history *h, size_t i) {
    for (int j = 0; j < 64; j++) {
        const struct cs_hband *b = &h->band[j];
        if (b->begin && b->msg && b->row == h->dropped_rows + i) return b;
    }
    return NULL;
}

size_t cs_history_last_band(const cs_history *h) {
    unsigned kept = h->nband < 64 ? h->nband : 64;
    for (unsigned j = 1; j <= kept; j++) {
        const struct cs_hband *b = &h->band[(h->nband - j) % 64];
        if (b->begin && b->msg && b->row >= h->dropped_rows) return (size_t)(b->row - h->dropped_rows);
    }
    return SIZE_MAX;
}
