/* outcome.c -- the structured outcome: its names, its assembly from the
 * monitor's final model, and its JSON form (docs/report-format.md). */
#include "outcome.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "monitor.h"
#include "recheck.h"
#include "utf8.h"
#include "xalloc.h"
#include "vclock.h"

/* ---- names: the contract of the JSON form */

static const char *const kind_names[CS_OUT_NKINDS] = {
    [CS_OUT_OK] = "ok",
    [CS_OUT_DEADLOCK_SENDS] = "deadlock_sends",
    [CS_OUT_DEADLOCK_EAGER_LIMIT] = "deadlock_eager_limit",
    [CS_OUT_DEADLOCK_RECVS] = "deadlock_recvs",
    [CS_OUT_DEADLOCK_CYCLE] = "deadlock_cycle",
    [CS_OUT_DEADLOCK_TAG] = "deadlock_tag",
    [CS_OUT_DEADLOCK_SELF] = "deadlock_self",
    [CS_OUT_DEADLOCK_FINISHED] = "deadlock_finished_peer",
    [CS_OUT_DEADLOCK_FAILED] = "deadlock_failed_peer",
    [CS_OUT_DEADLOCK_ANY_SOURCE] = "deadlock_any_source",
    [CS_OUT_DEADLOCK_COLLECTIVE] = "deadlock_collective",
    [CS_OUT_DEADLOCK_BUFFERED] = "deadlock_buffered",
    [CS_OUT_COLL_MISMATCH] = "collective_mismatch",
    [CS_OUT_GROUP_MISMATCH] = "group_mismatch",
    [CS_OUT_SIZE_MISMATCH] = "size_mismatch",
    [CS_OUT_SCRIPT_ERROR] = "script_error",
    [CS_OUT_STRICT] = "strict",
    [CS_OUT_TIMEOUT] = "timeout",
    [CS_OUT_BUDGET] = "budget",
    [CS_OUT_RANK_DIED] = "rank_died",
    [CS_OUT_INTERRUPTED] = "interrupted",
    [CS_OUT_INCOMPLETE] = "incomplete",
};

const char *cs_outcome_kind_name(cs_outcome_kind k) {
    return (unsigned)k < CS_OUT_NKINDS ? kind_names[k] : "?";
}

bool cs_outcome_kind_parse(const char *s, cs_outcome_kind *out) {
    for (int k = 0; k < CS_OUT_NKINDS; k++)
        if (s && strcmp(s, kind_names[k]) == 0) {
            *out = (cs_outcome_kind)k;
            return true;
        }
    return false;
}

const char *cs_outcome_word(int status) {
    switch (status) {
    case 0: return "ok";
    case CS_END_ERROR: return "error";
    case CS_END_DEADLOCK: return "deadlock";
    case CS_END_TIMEOUT: return "timeout or budget exceeded";
    case CS_END_DIED: return "a rank died";
    case CS_END_QUIT: return "quit";
    default: return "failed";
    }
}

/* ---- pitfalls: the kind, from the warn event's field (else, in a trace
 * written before it had one, recognised from the text), and the second site */

static const struct {
    cs_pitfall_kind kind;
    const char *name;
    const char *marker; /* a phrase only this kind's text has */
} pitfall_table[] = {
    /* the more specific first: the first marker found decides */
    {CS_PIT_COLL_NEVER_WAITED, "collective_never_waited", "(async_op) called here was never waited on"},
    {CS_PIT_COLL_WRITE, "write_while_collective", "writes to a tensor (or a view of it) that the async "},
    {CS_PIT_COLL_READ, "read_while_collective", "reads a tensor (or a view of it) that the async "},
    {CS_PIT_BUFFERING, "buffering_hazard", "works only because sends are buffered"},
    {CS_PIT_RACE, "message_race", "message race: "},
    {CS_PIT_WRITE_SENDING, "write_while_sending",
     "writes to a tensor (or a view of it) that the isend"},
    {CS_PIT_WRITE_RECEIVING, "write_while_receiving",
     "writes to a tensor (or a view of it) that the irecv"},
    {CS_PIT_READ_RECEIVING, "read_while_receiving",
     "reads a tensor (or a view of it) that the irecv"},
    {CS_PIT_NEVER_WAITED, "never_waited", "was never waited on"},
    {CS_PIT_SELF_SEND, "self_send", "dist.send to rank"},
    {CS_PIT_SELF_RECV, "self_recv", "dist.recv from rank"},
    {CS_PIT_UNRECEIVED, "unreceived", "never received: the run ended first"},
    {CS_PIT_OTHER, "other", NULL},
};

const char *cs_pitfall_kind_name(cs_pitfall_kind k) {
    for (size_t i = 0; i < sizeof pitfall_table / sizeof *pitfall_table; i++)
        if (pitfall_table[i].kind == k) return pitfall_table[i].name;
    return "?";
}

/* The number after the last ':' of the "FILE:LINE" that follows marker. */
static int line_after(const char *text, const char *marker) {
    const char *p = strstr(text, marker);
    if (!p) return 0;
    p += strlen(marker);
    const char *end = p + strcspn(p, " :,)");
    while (*end == ':' && end[1] >= '0' && end[1] <= '9') {
        int line = atoi(end + 1);
        const char *next = end + 1 + strspn(end + 1, "0123456789");
        if (*next != ':') return line;
        end = next;
    }
    return 0;
}

static int number_after(const char *text, const char *marker, int none) {
    const char *p = strstr(text, marker);
    return p ? atoi(p + strlen(marker)) : none;
}

void cs_pitfall_of(cs_pitfall *p, int rank, int line, const char *text, const char *kind) {
    const char *t = text ? text : "";
    *p = (cs_pitfall){.kind = CS_PIT_OTHER, .rank = rank, .line = line, .peer = CS_NO_RANK,
                      .tag = -1, .text = (char *)text};
    if (kind) { /* a name this reader does not know (a newer writer's) is "other" */
        for (size_t i = 0; pitfall_table[i].marker; i++)
            if (strcmp(kind, pitfall_table[i].name) == 0) p->kind = pitfall_table[i].kind;
    } else {
        for (size_t i = 0; pitfall_table[i].marker; i++)
            if (strstr(t, pitfall_table[i].marker)) {
                p->kind = pitfall_table[i].kind;
                break;
            }
    }
    switch (p->kind) {
    case CS_PIT_WRITE_SENDING:
        p->peer = number_after(t, "still sending: rank ", CS_NO_RANK);
        /* fall through */
    case CS_PIT_WRITE_RECEIVING:
    case CS_PIT_READ_RECEIVING: p->other_line = line_after(t, "posted at "); break;
    case CS_PIT_SELF_SEND: p->peer = number_after(t, "dist.send to rank ", CS_NO_RANK); break;
    case CS_PIT_SELF_RECV: p->peer = number_after(t, "dist.recv from rank ", CS_NO_RANK); break;
    case CS_PIT_COLL_WRITE:
    case CS_PIT_COLL_READ: p->other_line = line_after(t, "called at "); break;
    case CS_PIT_RACE:
        p->peer = number_after(t, "the send from rank ", CS_NO_RANK);
        const char *at = strstr(t, "the send from rank ");
        p->other_line = at && (at = strstr(at, " at ")) ? line_after(at, " at ") : 0;
        break;
    case CS_PIT_UNRECEIVED:
        p->peer = number_after(t, "sent here to rank ", CS_NO_RANK);
        p->tag = number_after(t, "(tag ", -1);
        break;
    default: break;
    }
}

bool cs_pitfall_same(const cs_pitfall *a, const cs_pitfall *b) {
    if (a->kind != b->kind || a->line != b->line || a->other_line != b->other_line ||
        a->peer != b->peer || a->tag != b->tag)
        return false;
    /* A text of no known kind has no sites to compare: its words decide. So
     * do they for a request never waited on, whose words name its operation:
     * an isend and an irecv posted at one line are two pitfalls. */
    if (a->kind != CS_PIT_OTHER && a->kind != CS_PIT_NEVER_WAITED) return true;
    return strcmp(a->text ? a->text : "", b->text ? b->text : "") == 0;
}

void cs_verdict_free(cs_verdict *v) {
    free(v->text);
    free(v->headline);
    free(v->why);
    free(v->note);
    free(v->fix);
    free(v->ops);
    memset(v, 0, sizeof *v);
}

/* ---- the ranks' output */

static void output_emit(void *ud, const cs_event *ev) {
    cs_output *out = ud;
    if (ev->type != CS_EV_PRINT || ev->rank < 0) return;
    /* One entry per line, as the report tags them. */
    const char *line = ev->text ? ev->text : "";
    do {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        if (out->n == out->cap) {
            out->cap = out->cap ? out->cap * 2 : 64;
            out->v = cs_xrealloc(out->v, out->cap * sizeof *out->v, "the ranks' output");
        }
        char *text = cs_xmalloc(len + 1, "a line of output");
        memcpy(text, line, len);
        text[len] = 0;
        out->v[out->n++] = (cs_outcome_line){ev->rank, text};
        line = nl ? nl + 1 : NULL;
    } while (line && *line);
}

cs_sink cs_output_sink(cs_output *out) { return (cs_sink){output_emit, out}; }

void cs_output_free(cs_output *out) {
    for (size_t i = 0; i < out->n; i++) free(out->v[i].text);
    free(out->v);
    memset(out, 0, sizeof *out);
}

/* ---- assembly */

static void copy_verdict(cs_verdict *dst, const cs_verdict *src) {
    *dst = (cs_verdict){.kind = src->kind, .nops = src->nops};
    dst->text = cs_xstrdup(src->text, "the verdict");
    dst->headline = cs_xstrdup(src->headline, "the verdict");
    dst->why = cs_xstrdup(src->why, "the verdict");
    dst->note = cs_xstrdup(src->note, "the verdict");
    dst->fix = cs_xstrdup(src->fix, "the verdict");
    if (src->nops) {
        dst->ops = cs_xmalloc((size_t)src->nops * sizeof *dst->ops, "the verdict's operations");
        memcpy(dst->ops, src->ops, (size_t)src->nops * sizeof *dst->ops);
    }
}

/* The line an error names: "x.lua:6: ..." (the script's own position). */
static int error_line(const char *script, const char *text) {
    if (!script || !text) return 0;
    size_t n = strlen(script);
    if (strncmp(text, script, n) != 0 || text[n] != ':') return 0;
    return atoi(text + n + 1);
}

/* The kind of a run that no verdict of the monitor ended: its worst failed
 * rank, or the reason the run itself ended. */
static cs_outcome_kind failure_kind(const cs_monitor *m, int status, const char **text) {
    const cs_mon_rank *worst = NULL;
    for (int k = 0; k < m->world; k++) {
        const cs_mon_rank *r = &m->ranks[k];
        if (r->state == CS_RS_FAILED && r->status && (!worst || r->status > worst->status))
            worst = r;
    }
    if (worst && worst->status == status) {
        *text = worst->error;
        const char *e = worst->error ? worst->error : "";
        switch (worst->status) {
        case CS_END_TIMEOUT: return CS_OUT_BUDGET;
        case CS_END_DIED: return CS_OUT_RANK_DIED;
        case CS_END_QUIT: return CS_OUT_INTERRUPTED;
        default:
            /* report-format.md: size_mismatch covers another size or dtype */
            if (strstr(e, "size mismatch: ") || strstr(e, "dtype mismatch: "))
                return CS_OUT_SIZE_MISMATCH;
            if (strstr(e, "(--strict)")) return CS_OUT_STRICT;
            return CS_OUT_SCRIPT_ERROR;
        }
    }
    *text = m->run_error;
    switch (status) {
    case 0: return CS_OUT_OK;
    case CS_END_TIMEOUT: return CS_OUT_TIMEOUT;
    case CS_END_QUIT: return CS_OUT_INTERRUPTED;
    case CS_END_DIED: return CS_OUT_RANK_DIED;
    case CS_END_ERROR:
        return m->run_error && strncmp(m->run_error, "--strict", 8) == 0 ? CS_OUT_STRICT
                                                                        : CS_OUT_SCRIPT_ERROR;
    default: return CS_OUT_INCOMPLETE;
    }
}

void cs_outcome_build(cs_outcome *o, const cs_monitor *m, int status, const cs_output *output) {
    memset(o, 0, sizeof *o);
    o->version = CS_OUTCOME_VERSION;
    o->status = status;
    o->word = cs_outcome_word(status);
    o->script = cs_xstrdup(m->script, "the outcome");
    o->engine = cs_xstrdup(m->engine, "the outcome");
    o->send_mode = cs_xstrdup(m->send_mode, "the outcome");
    o->world = m->world;
    o->output = output;
    o->messages = m->messages;
    o->bytes = m->bytes;
    o->collectives = cs_monitor_coll_calls(m);
    o->unreceived = m->unmatched;
    o->run_error = cs_xstrdup(m->run_error, "the outcome");

    const cs_verdict *coll = cs_monitor_coll_mismatch(m);
    if (m->deadlocked && m->deadlock.kind != CS_OUT_OK) {
        copy_verdict(&o->verdict, &m->deadlock);
        if (coll) { /* both, in the order the report prints them */
            size_t a = strlen(o->verdict.text), b = strlen(coll->text);
            o->verdict.text = cs_xrealloc(o->verdict.text, a + b + 1, "the verdict");
            memcpy(o->verdict.text + a, coll->text, b + 1);
        }
    } else if (coll) {
        copy_verdict(&o->verdict, coll);
    }
    if (m->recheck) { /* the rendezvous recheck: its line, and its deadlock if any */
        const char *nl = strchr(m->recheck, '\n');
        size_t n = nl ? (size_t)(nl - m->recheck) : strlen(m->recheck);
        o->recheck = cs_xmalloc(n + 1, "the outcome");
        memcpy(o->recheck, m->recheck, n);
        o->recheck[n] = 0;
        cs_recheck_verdict(m->recheck, m->send_mode, &o->recheck_verdict);
        /* --strict made it the run's verdict */
        if (status == CS_END_DEADLOCK && o->verdict.kind == CS_OUT_OK &&
            o->recheck_verdict.kind != CS_OUT_OK)
            copy_verdict(&o->verdict, &o->recheck_verdict);
    }
    const char *text = NULL;
    o->kind = o->verdict.kind != CS_OUT_OK ? o->verdict.kind : failure_kind(m, status, &text);
    o->explanation =
        cs_xstrdup(o->verdict.kind != CS_OUT_OK ? o->verdict.why : text, "the outcome");
    o->fix = cs_xstrdup(o->verdict.fix, "the outcome");

    o->ranks = cs_xcalloc((size_t)(m->world > 0 ? m->world : 1), sizeof *o->ranks, "the outcome");
    for (int k = 0; k < m->world; k++) {
        const cs_mon_rank *r = &m->ranks[k];
        cs_outcome_rank *orank = &o->ranks[k];
        orank->state = (int)r->state;
        orank->deadlocked = r->in_deadlock;
        orank->status = r->status;
        orank->line = r->line;
        orank->error = cs_xstrdup(r->error, "the outcome");
        orank->error_line = error_line(m->script, r->error);
        orank->waiters = cs_xstrdup(r->waiters, "the outcome");
        orank->stop = cs_monitor_stop_text(m, k, &orank->stop_line);
        orank->stop_waiting = cs_monitor_stopped_waiting(m, k);
    }
    o->npitfalls = m->npitfalls;
    if (m->npitfalls) {
        o->pitfalls = cs_xmalloc((size_t)m->npitfalls * sizeof *o->pitfalls, "the outcome");
        for (int i = 0; i < m->npitfalls; i++) {
            o->pitfalls[i] = m->pitfalls[i];
            o->pitfalls[i].text = cs_xstrdup(m->pitfalls[i].text, "the outcome");
        }
    }
}

void cs_outcome_time_from(cs_outcome *o, const cs_vclock *v) {
    char buf[160];
    cs_outcome_time *t = &o->time;
    t->net = cs_xstrdup(cs_netmodel_format(cs_vclock_model(v), buf, sizeof buf), "the report");
    t->complete = cs_vclock_complete(v);
    t->overflow = cs_vclock_overflowed(v);
    if (!t->complete) return;
    t->makespan_ns = cs_vclock_makespan(v);
    t->ranks = cs_xcalloc((size_t)o->world, sizeof *t->ranks, "the report");
    for (int k = 0; k < o->world; k++) {
        const cs_vclock_rank *r = cs_vclock_rank_info(v, k);
        if (r) t->ranks[k] = (cs_outcome_time_rank){r->end_ns, r->compute_ns, r->comm_ns, r->wait_ns};
    }
}

void cs_outcome_free(cs_outcome *o) {
    free(o->time.net);
    free(o->time.ranks);
    free(o->script);
    free(o->engine);
    free(o->send_mode);
    free(o->run_error);
    free(o->explanation);
    free(o->fix);
    cs_verdict_free(&o->verdict);
    free(o->recheck);
    cs_verdict_free(&o->recheck_verdict);
    for (int k = 0; o->ranks && k < o->world; k++) {
        free(o->ranks[k].error);
        free(o->ranks[k].waiters);
        free(o->ranks[k].stop);
    }
    free(o->ranks);
    for (int i = 0; i < o->npitfalls; i++) free(o->pitfalls[i].text);
    free(o->pitfalls);
    memset(o, 0, sizeof *o);
}

/* ---- JSON */

/* A JSON string of s; bytes that are not UTF-8 (a script may print any)
 * become U+FFFD, since JSON text must be Unicode. NULL is null. */
static json_t *str_or_null(const char *s) {
    if (!s) return json_null();
    json_t *j = json_string(s);
    if (j) return j;
    char *clean = cs_utf8_clean(s);
    if (!clean) cs_oom("a JSON string", strlen(s) * 3 + 1);
    j = json_string(clean);
    free(clean);
    return j ? j : json_null();
}

static json_t *rank_or_null(int r) { return r >= 0 ? json_integer(r) : json_null(); }

/* A peer: a rank, "any" for any source, null for none. */
static json_t *peer_json(int peer) {
    if (peer == CS_ANY_SOURCE) return json_string("any");
    return rank_or_null(peer);
}

static json_t *site_json(const char *script, int line) {
    if (line <= 0) return json_null();
    return json_pack("{s:o, s:i}", "file", str_or_null(script), "line", line);
}

static json_t *op_json(const cs_outcome *o, const cs_outcome_op *op) {
    json_t *j = json_pack("{s:i, s:o, s:o, s:o, s:o}", "rank", op->rank, "op",
                          str_or_null(op->op), "peer", peer_json(op->peer), "site", site_json(o->script, op->line),
                          "wait_site", site_json(o->script, op->wait_line));
    if (op->tag >= 0) json_object_set_new(j, "tag", json_integer(op->tag));
    else json_object_set_new(j, "tag", json_null());
    json_object_set_new(j, "bytes", json_integer((json_int_t)op->bytes));
    json_object_set_new(j, "dtype", json_string(cs_dtype_name(op->dtype)));
    if (op->ndim >= 0) {
        json_t *shape = json_array();
        for (int d = 0; d < op->ndim; d++) json_array_append_new(shape, json_integer(op->shape[d]));
        json_object_set_new(j, "shape", shape);
    } else {
        json_object_set_new(j, "shape", json_null());
    }
    if (op->ndim < 0) { /* a collective */
        json_object_set_new(j, "count", json_integer((json_int_t)op->count));
        json_object_set_new(j, "reduce_op",
                            op->reduce_op[0] ? json_string(op->reduce_op) : json_null());
    }
    json_object_set_new(j, "missing", json_boolean(op->missing));
    return j;
}

static json_t *pitfall_json(const cs_outcome *o, const cs_pitfall *p) {
    json_t *j = json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:o}", "kind",
                          cs_pitfall_kind_name(p->kind), "rank", rank_or_null(p->rank), "site",
                          site_json(o->script, p->line), "other_site",
                          site_json(o->script, p->other_line), "peer", rank_or_null(p->peer),
                          "tag", p->tag >= 0 ? json_integer(p->tag) : json_null(), "text",
                          str_or_null(p->text));
    return j;
}

static json_t *rank_json(const cs_outcome *o, int k) {
    const cs_outcome_rank *r = &o->ranks[k];
    const char *state = r->deadlocked && r->state == CS_RS_ABORTED
                            ? "deadlocked"
                            : cs_rank_state_name((cs_rank_state)r->state);
    return json_pack("{s:i, s:s, s:i, s:o, s:o, s:o, s:o, s:o, s:o}", "rank", k, "state", state,
                     "status", r->status, "line", r->line > 0 ? json_integer(r->line) : json_null(),
                     "error", str_or_null(r->error), "error_site",
                     site_json(o->script, r->error_line), "waiters", str_or_null(r->waiters),
                     "stop", str_or_null(r->stop), "stop_site", site_json(o->script, r->stop_line));
}

/* null without a model; the makespan and ranks null when the run did not
 * end normally */
static json_t *time_json(const cs_outcome *o) {
    const cs_outcome_time *t = &o->time;
    if (!t->net) return json_null();
    json_t *ranks = json_null();
    if (t->complete) {
        ranks = json_array();
        for (int k = 0; k < o->world; k++) {
            const cs_outcome_time_rank *r = &t->ranks[k];
            json_array_append_new(ranks, json_pack("{s:i, s:I, s:I, s:I, s:I}", "rank", k,
                                                    "end_ns", (json_int_t)r->end_ns, "compute_ns",
                                                    (json_int_t)r->compute_ns, "comm_ns",
                                                    (json_int_t)r->comm_ns, "wait_ns",
                                                    (json_int_t)r->wait_ns));
        }
    }
    return json_pack("{s:s, s:b, s:b, s:o, s:o}", "net", t->net, "complete", t->complete,
                     "overflow", t->overflow, "makespan_ns", t->complete ? json_integer((json_int_t)t->makespan_ns) : json_null(),
                     "ranks", ranks);
}

char *cs_outcome_json(const cs_outcome *o) {
    json_t *doc = json_object();
    json_object_set_new(doc, "version", json_integer(o->version));
    json_object_set_new(doc, "status", json_integer(o->status));
    json_object_set_new(doc, "kind", json_string(cs_outcome_kind_name(o->kind)));
    json_object_set_new(doc, "verdict", json_string(o->word));
    json_object_set_new(doc, "script", str_or_null(o->script));
    json_object_set_new(doc, "engine", str_or_null(o->engine));
    json_object_set_new(doc, "send_mode", str_or_null(o->send_mode));
    json_object_set_new(doc, "world", json_integer(o->world));
    json_object_set_new(doc, "headline", str_or_null(o->verdict.headline));
    json_object_set_new(doc, "explanation", str_or_null(o->explanation));
    json_object_set_new(doc, "note", str_or_null(o->verdict.note));
    json_object_set_new(doc, "fix", str_or_null(o->fix));
    json_object_set_new(doc, "report", str_or_null(o->verdict.text));
    json_object_set_new(doc, "run_error", str_or_null(o->run_error));
    json_object_set_new(doc, "recheck", str_or_null(o->recheck));
    json_t *ops = json_array();
    for (int i = 0; i < o->verdict.nops; i++)
        json_array_append_new(ops, op_json(o, &o->verdict.ops[i]));
    json_object_set_new(doc, "operations", ops);
    json_t *pits = json_array();
    for (int i = 0; i < o->npitfalls; i++)
        json_array_append_new(pits, pitfall_json(o, &o->pitfalls[i]));
    json_object_set_new(doc, "pitfalls", pits);
    json_object_set_new(doc, "counts",
                        json_pack("{s:I, s:I, s:I, s:I}", "messages", (json_int_t)o->messages,
                                  "bytes", (json_int_t)o->bytes, "collectives",
                                  (json_int_t)o->collectives, "unreceived",
                                  (json_int_t)o->unreceived));
    json_t *ranks = json_array();
    for (int k = 0; k < o->world; k++) json_array_append_new(ranks, rank_json(o, k));
    json_object_set_new(doc, "ranks", ranks);
    json_t *out = json_array();
    for (size_t i = 0; o->output && i < o->output->n; i++)
        json_array_append_new(out, json_pack("{s:i, s:o}", "rank", o->output->v[i].rank, "text",
                                             str_or_null(o->output->v[i].text)));
    json_object_set_new(doc, "output", out);
    json_object_set_new(doc, "time", time_json(o));
    char *s = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(doc);
    if (!s) cs_oom("the JSON report", 0);
    size_t n = strlen(s);
    char *line = cs_xrealloc(s, n + 2, "the JSON report");
    line[n] = '\n';
    line[n + 1] = 0;
    return line;
}

json_t *cs_outcome_time_json(const cs_outcome_time *t, int world) {
    cs_outcome o = {.world = world, .time = *t};
    return time_json(&o);
}
