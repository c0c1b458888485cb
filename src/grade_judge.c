/* grade_judge.c -- in the child, after the run: fold the trace into the
 * structured outcome, gather what a check sees (each rank's `result`, printed
 * lines, op counts, messages, pitfalls, status, kind), apply the default rules
 * and the spec's checks. Nothing here reads report text. */
#include <lauxlib.h>
#include <lua.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "grade.h"
#include "grade_internal.h"
#include "monitor.h"
#include "outcome.h"
#include "replay.h"
#include "report.h"
#include "vclock.h"
#include "xalloc.h"

typedef struct rank_result {
    int type; /* 0 none, 1 number, 2 tensor, 3 list */
    char other[16];
    int64_t shape[8];
    int ndim;
    double *v;
    size_t n, cap;
} rank_result;

typedef struct run_data {
    int world;
    cs_outcome o;
    cs_output out;
    cs_replay rp;
    rank_result *res;
} run_data;

static void push_num(rank_result *r, double v) {
    if (r->n == r->cap) r->v = cs_xrealloc(r->v, (r->cap = r->cap ? r->cap * 2 : 64) * sizeof *r->v, "grade");
    r->v[r->n++] = v;
}

static void parse_result(rank_result *r, const char *line) {
    char *end;
    if (strncmp(line, "num ", 4) == 0) r->type = 1, r->n = 0, push_num(r, strtod(line + 4, NULL));
    else if (strncmp(line, "shape", 5) == 0) {
        r->type = 2, r->n = 0, r->ndim = 0;
        for (const char *p = line + 5; r->ndim < 8; p = end) {
            long long d = strtoll(p, &end, 10);
            if (end == p) break;
            r->shape[r->ndim++] = d;
        }
    } else if (strncmp(line, "data ", 5) == 0 || strncmp(line, "list ", 5) == 0) {
        if (line[0] == 'l') r->type = 3, r->n = 0;
        for (const char *p = line + 5;; p = end) {
            double d = strtod(p, &end);
            if (end == p) break;
            push_num(r, d);
        }
    } else if (strncmp(line, "none ", 5) == 0) r->type = 0, snprintf(r->other, sizeof r->other, "%s", line + 5);
}

static bool is_mark(const char *t) { return strncmp(t, CS_GRADE_MARK, strlen(CS_GRADE_MARK)) == 0; }

/* A rank's result as Lua sees it in check: a number, a nested table, or nil. */
static void push_tensor(lua_State *L, const rank_result *r, int d, size_t *at) {
    if (d == r->ndim) {
        lua_pushnumber(L, *at < r->n ? r->v[(*at)++] : 0);
        return;
    }
    lua_createtable(L, (int)r->shape[d], 0);
    for (int64_t i = 0; i < r->shape[d]; i++) {
        push_tensor(L, r, d + 1, at);
        lua_rawseti(L, -2, i + 1);
    }
}

static void push_result(lua_State *L, const rank_result *r) {
    size_t at = 0;
    if (r->type == 1) lua_pushnumber(L, r->v[0]);
    else if (r->type == 2 && r->ndim > 0) push_tensor(L, r, 0, &at);
    else if (r->type == 2) lua_pushnumber(L, r->n ? r->v[0] : 0);
    else if (r->type == 3) {
        lua_createtable(L, (int)r->n, 0);
        for (size_t i = 0; i < r->n; i++) lua_pushnumber(L, r->v[i]), lua_rawseti(L, -2, (int)i + 1);
    } else lua_pushnil(L);
}

static void set_count(lua_State *L, int t, int rank, const char *op) {
    lua_geti(L, t, rank);
    lua_getfield(L, -1, op);
    lua_Integer n = lua_tointeger(L, -1);
    lua_pop(L, 1);
    lua_pushinteger(L, n + 1);
    lua_setfield(L, -2, op);
    lua_pop(L, 1);
}

static int by_rank_seq(const void *a, const void *b) {
    const cs_event *x = *(const cs_event *const *)a, *y = *(const cs_event *const *)b;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The run table given to check(run); ranks are 0-based keys. */
static void push_run(lua_State *L, const run_data *d, const cs_grade_case *c) {
    lua_newtable(L);
    int t = lua_gettop(L);
    lua_pushinteger(L, d->world), lua_setfield(L, t, "world");
    lua_pushstring(L, d->o.word), lua_setfield(L, t, "status");
    lua_pushstring(L, cs_outcome_kind_name(d->o.kind)), lua_setfield(L, t, "kind");
    lua_newtable(L);
    for (int i = 0; i < c->nparams; i++) lua_pushnumber(L, c->params[i].value), lua_setfield(L, -2, c->params[i].name);
    lua_setfield(L, t, "params");
    lua_newtable(L);
    for (int k = 0; k < d->world; k++) push_result(L, &d->res[k]), lua_seti(L, -2, k);
    lua_setfield(L, t, "result");
    lua_newtable(L);
    int pr = lua_gettop(L);
    for (int k = 0; k < d->world; k++) lua_newtable(L), lua_seti(L, pr, k);
    for (size_t i = 0; i < d->out.n; i++) {
        const cs_outcome_line *l = &d->out.v[i];
        if (l->rank < 0 || l->rank >= d->world || is_mark(l->text)) continue;
        lua_geti(L, pr, l->rank);
        lua_pushstring(L, l->text);
        lua_seti(L, -2, (lua_Integer)luaL_len(L, -2) + 1);
        lua_pop(L, 1);
    }
    lua_setfield(L, t, "printed");
    lua_newtable(L);
    int ops = lua_gettop(L);
    for (int k = 0; k < d->world; k++) lua_newtable(L), lua_seti(L, ops, k);
    lua_newtable(L);
    int msgs = lua_gettop(L), nm = 0;
    /* by sender, then in the sender's order: the ranks' interleaving varies */
    const cs_event **ev = cs_xcalloc(d->rp.n + 1, sizeof *ev, "grade");
    for (size_t i = 0; i < d->rp.n; i++) ev[i] = &d->rp.ev[i];
    qsort(ev, d->rp.n, sizeof *ev, by_rank_seq);
    for (size_t i = 0; i < d->rp.n; i++) {
        const cs_event *e = ev[i];
        if (e->rank < 0 || e->rank >= d->world) continue;
        if (e->type == CS_EV_POST && e->ctx == 0) {
            set_count(L, ops, e->rank, cs_op_name(e->op));
            if (!cs_op_is_send(e->op)) continue;
            int64_t elems = 1;
            for (int k = 0; k < e->ndim; k++) elems *= e->shape[k];
            lua_createtable(L, 0, 5);
            lua_pushinteger(L, e->rank), lua_setfield(L, -2, "src");
            lua_pushinteger(L, e->peer), lua_setfield(L, -2, "dst");
            lua_pushinteger(L, e->tag), lua_setfield(L, -2, "tag");
            lua_pushinteger(L, (lua_Integer)e->bytes), lua_setfield(L, -2, "bytes");
            lua_pushinteger(L, elems), lua_setfield(L, -2, "elements");
            lua_rawseti(L, msgs, ++nm);
        } else if (e->type == CS_EV_COLL && e->begin && e->text) {
            set_count(L, ops, e->rank, e->text);
        }
    }
    free(ev);
    lua_pushvalue(L, ops), lua_setfield(L, t, "ops");
    lua_pushvalue(L, msgs), lua_setfield(L, t, "messages");
    lua_settop(L, t);
    lua_newtable(L);
    for (int i = 0; i < d->o.npitfalls; i++) {
        const cs_pitfall *p = &d->o.pitfalls[i];
        lua_createtable(L, 0, 4);
        lua_pushstring(L, cs_pitfall_kind_name(p->kind)), lua_setfield(L, -2, "kind");
        lua_pushstring(L, p->text), lua_setfield(L, -2, "text");
        lua_pushinteger(L, p->rank), lua_setfield(L, -2, "rank");
        lua_pushinteger(L, p->line), lua_setfield(L, -2, "line");
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, t, "pitfalls");
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...) {
    va_list ap, aq;
    va_start(ap, f);
    va_copy(aq, ap);
    int n = vsnprintf(NULL, 0, f, ap);
    va_end(ap);
    char *s = cs_xmalloc((size_t)n + 1, "grade");
    vsnprintf(s, (size_t)n + 1, f, aq);
    va_end(aq);
    return s;
}

static bool listed(char *const *v, int n, const char *op) {
    for (int i = 0; i < n; i++)
        if (strcmp(v[i], op) == 0) return true;
    return false;
}

/* Forbidden and required operations, from the events. *at: the forbidden
 * call. */
static char *check_ops(const cs_grade_spec *s, const run_data *d, cs_grade_where *at) {
    const cs_event *bad = NULL;
    for (size_t i = 0; i < d->rp.n; i++) {
        const cs_event *e = &d->rp.ev[i];
        const char *op = e->type == CS_EV_POST && e->ctx == 0 ? cs_op_name(e->op)
                       : e->type == CS_EV_COLL && e->begin ? e->text : NULL;
        if (!op) continue;
        if (listed(s->forbidden, s->nforbidden, op) || (s->nallowed && !listed(s->allowed, s->nallowed, op)))
            /* the lowest rank, then line: the ranks' interleaving varies */
            if (!bad || e->rank < bad->rank || (e->rank == bad->rank && e->line < bad->line))
                bad = e;
    }
    if (bad) {
        const char *op = bad->type == CS_EV_POST ? cs_op_name(bad->op) : bad->text;
        *at = (cs_grade_where){bad->rank, bad->line};
        return fmt("rank %d calls dist.%s on line %d: this exercise does not allow it", bad->rank, op, bad->line);
    }
    for (int k = 0; k < s->nrequired; k++) {
        bool seen = false;
        for (size_t i = 0; i < d->rp.n && !seen; i++) {
            const cs_event *e = &d->rp.ev[i];
            const char *op = e->type == CS_EV_POST && e->ctx == 0 ? cs_op_name(e->op)
                           : e->type == CS_EV_COLL && e->begin ? e->text : NULL;
            seen = op && strcmp(op, s->required[k]) == 0;
        }
        if (!seen) return fmt("the solution never calls dist.%s: this exercise requires it", s->required[k]);
    }
    return NULL;
}

/* ---- calls into the spec: each in a protected C function, so that whatever
 * the spec's code does (raise, loop, return any shape, run out of memory)
 * ends as a message, the spec's error, never a panic in the judge. */

typedef struct spec_call {
    const cs_grade_case *c;
    const run_data *d;
    int rank;
    bool any;       /* result() said nil: anything goes */
    double *want;   /* result()'s values */
    size_t n, cap;
    bool pass;      /* check()'s verdict */
    char *why;      /* check()'s message */
    bool built;     /* check()'s run table was made: an error after is the spec's */
} spec_call;

static void push_params(lua_State *L, const cs_grade_case *c) {
    lua_createtable(L, 0, c->nparams);
    for (int i = 0; i < c->nparams; i++) lua_pushnumber(L, c->params[i].value), lua_setfield(L, -2, c->params[i].name);
}

static void want_push(spec_call *j, double v) {
    if (j->n == j->cap) j->want = cs_xrealloc(j->want, (j->cap = j->cap ? j->cap * 2 : 16) * sizeof *j->want, "grade");
    j->want[j->n++] = v;
}

/* Protected: result(rank, world, params) as a number, a flat list of
 * numbers or nil (what docs/grading.md promises); any other shape is the
 * spec's error. */
static int expected_k(lua_State *L) {
    spec_call *j = lua_touserdata(L, 1);
    lua_rawgeti(L, LUA_REGISTRYINDEX, j->c->expect_ref);
    lua_pushinteger(L, j->rank);
    lua_pushinteger(L, j->d->world);
    push_params(L, j->c);
    lua_call(L, 3, 1);
    int ty = lua_type(L, -1);
    j->n = 0, j->any = ty == LUA_TNIL;
    if (ty == LUA_TNUMBER) want_push(j, lua_tonumber(L, -1));
    else if (ty == LUA_TTABLE) {
        lua_Integer n = luaL_len(L, -1);
        for (lua_Integer i = 1; i <= n; i++) {
            if (lua_geti(L, -1, i) != LUA_TNUMBER)
                return luaL_error(L, "result[%I] is a %s: expected a number, a flat list of numbers, or nil", i,
                                  luaL_typename(L, -1));
            want_push(j, lua_tonumber(L, -1));
            lua_pop(L, 1);
        }
    } else if (ty != LUA_TNIL)
        return luaL_error(L, "returned a %s: expected a number, a flat list of numbers, or nil", luaL_typename(L, -1));
    for (size_t i = 0; i < j->n; i++)
        if (isnan(j->want[i])) return luaL_error(L, "result[%d] is nan, which equals nothing", (int)i + 1);
    return 0;
}

/* Protected: check(run). */
static int check_k(lua_State *L) {
    spec_call *j = lua_touserdata(L, 1);
    lua_rawgeti(L, LUA_REGISTRYINDEX, j->c->check_ref);
    push_run(L, j->d, j->c);
    j->built = true;
    lua_call(L, 1, 2);
    j->pass = lua_toboolean(L, -2);
    if (!j->pass) j->why = fmt("%s", lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "check failed");
    return 0;
}

/* Run f on j; NULL, or the spec's error (what, then Lua's message). */
static char *spec_call_run(lua_State *L, lua_CFunction f, spec_call *j, const char *what) {
    lua_pushcfunction(L, f);
    lua_pushlightuserdata(L, j);
    if (cs_grade_spec_pcall(L, 1, 0) == LUA_OK) return NULL;
    char *e = fmt("%s: %s", what, lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "raised an error");
    lua_pop(L, 1);
    return e;
}

/* expected = result(rank, world, params): the first value that differs
 * (*spec_err: the spec's own error instead). */
static char *check_expect(lua_State *L, const cs_grade_case *c, const run_data *d, char **spec_err) {
    spec_call j = {.c = c, .d = d};
    for (int k = 0; k < d->world; k++) {
        char what[64];
        snprintf(what, sizeof what, "result(%d, %d)", k, d->world);
        j.rank = k;
        if ((*spec_err = spec_call_run(L, expected_k, &j, what))) return NULL;
        const rank_result *r = &d->res[k];
        if (j.any) continue;
        if (r->type == 0)
            return fmt("rank %d: result is %s, expected %s", k, r->other[0] ? r->other : "nil",
                       j.n == 1 ? "a number" : "a tensor");
        for (size_t i = 0; i < j.n && i < r->n; i++)
            if (!(r->v[i] == j.want[i] || fabs(r->v[i] - j.want[i]) <= 1e-6 * fmax(1, fabs(j.want[i]))))
                return fmt("rank %d: result[%zu] is %.17g, expected %.17g", k, i, r->v[i], j.want[i]);
        if (r->n != j.n) return fmt("rank %d: result has %zu elements, expected %zu", k, r->n, j.n);
    }
    return NULL;
}

static char *check_fn(lua_State *L, const cs_grade_case *c, const run_data *d, char **spec_err) {
    spec_call j = {.c = c, .d = d};
    if ((*spec_err = spec_call_run(L, check_k, &j, "check(run)")) && !j.built) {
        /* the run's own data did not fit (a tensor result of shape
         * {1e8, 0} is 1e8 tables): the solution's doing, not the spec's */
        free(*spec_err), *spec_err = NULL;
        return fmt("the run's results are too large to grade: check(run) cannot be given them");
    }
    return j.why;
}

static char *verdict_text(const cs_outcome *o) {
    if (o->explanation && o->fix) return fmt("%s: %s\nfix: %s", o->word, o->explanation, o->fix);
    if (o->explanation) return fmt("%s: %s", o->word, o->explanation);
    if (o->verdict.text) return fmt("%s", o->verdict.text);
    for (int k = 0; k < o->world; k++)
        if (o->ranks[k].error) return fmt("%s: %s", o->word, o->ranks[k].error);
    return fmt("the run ended: %s", o->word);
}

/* The lowest rank whose warning reported p (which rank warned first varies
 * between runs); line 0 when no rank's warning did (the monitor found it
 * at the end). */
static cs_grade_where pitfall_site(const cs_replay *rp, const cs_pitfall *p) {
    cs_grade_where w = {0, 0};
    for (size_t i = 0; i < rp->n; i++) {
        const cs_event *e = &rp->ev[i];
        if (e->type == CS_EV_WARN && e->rank >= 0 && e->line > 0 && e->text && strcmp(e->text, p->text) == 0 &&
            (!w.line || e->rank < w.rank))
            w = (cs_grade_where){e->rank, e->line};
    }
    return w;
}

/* A probe's trace: every rank's error was caught and printed as a marked
 * line (grade_run.c), so the lowest rank that raised is a function of the
 * program, not of which rank won the race to end the run. That rank, and
 * its message in *text (malloc'd; newlines restored), or -1. */
int cs_grade_raiser(const char *trace, const char *token, char **text) {
    cs_replay rp;
    char err[600], mark[128];
    snprintf(mark, sizeof mark, "%serror %s ", CS_GRADE_MARK, token);
    *text = NULL;
    if (cs_replay_load(&rp, trace, err, sizeof err) < 0) return -1;
    const cs_event *low = NULL;
    for (size_t i = 0; i < rp.n; i++) {
        const cs_event *e = &rp.ev[i];
        if (e->type == CS_EV_PRINT && e->rank >= 0 && e->text && strncmp(e->text, mark, strlen(mark)) == 0 &&
            (!low || e->rank < low->rank))
            low = e;
    }
    int rank = low ? low->rank : -1;
    if (low) {
        *text = fmt("%s", low->text + strlen(mark));
        for (char *p = *text; *p; p++)
            if (*p == '\x1f') *p = '\n';
    }
    cs_replay_free(&rp);
    return rank;
}

bool cs_grade_judge(const cs_grade_spec *s, const cs_grade_case *c, const char *trace, int world,
                    char **why, cs_grade_where *at, char kind_out[32], cs_outcome_time *time) {
    char err[600];
    run_data d = {.world = world};
    *why = NULL, *at = (cs_grade_where){0, 0}, *time = (cs_outcome_time){0};
    if (cs_replay_load(&d.rp, trace, err, sizeof err) < 0) {
        *why = fmt("the run left no usable trace: %s", err);
        return false;
    }
    if (d.rp.cut) { /* the run died while writing: what it did after is lost */
        snprintf(kind_out, 32, "killed");
        *why = fmt("the run stopped in the middle of writing its trace (%s)", err);
        return false;
    }
    cs_monitor m;
    cs_vclock *vc;
    cs_sink sinks[2] = {cs_output_sink(&d.out)};
    int model = cs_replay_timekeeper(&d.rp, NULL, &vc, err, sizeof err);
    if (vc) sinks[1] = cs_vclock_sink(vc);
    if (model < 0 || cs_replay_feed(&d.rp, d.rp.n, &m, sinks, vc ? 2 : 1) < 0) {
        *why = fmt("%s", model < 0 ? err : "out of memory");
        return false;
    }
    /* A run stopped from outside (a sanitizer's abort, an exit from a
     * library) leaves whole lines that end before its ranks did: replay's
     * rule says so, and such a run is never judged as if it had ended. */
    char ending[200];
    int status = cs_replay_status(&d.rp, d.rp.n, &m, ending, sizeof ending);
    if (ending[0]) {
        snprintf(kind_out, 32, "killed");
        *why = fmt("killed: the run stopped before it ended: %s", ending);
        return false;
    }
    cs_outcome_build(&d.o, &m, status, &d.out);
    if (vc) cs_outcome_time_from(&d.o, vc), *time = d.o.time;
    snprintf(kind_out, 32, "%s", cs_outcome_kind_name(d.o.kind));
    d.res = cs_xcalloc((size_t)world, sizeof *d.res, "grade");
    for (size_t i = 0; i < d.out.n; i++)
        if (d.out.v[i].rank >= 0 && d.out.v[i].rank < world && is_mark(d.out.v[i].text))
            parse_result(&d.res[d.out.v[i].rank], d.out.v[i].text + strlen(CS_GRADE_MARK));
    lua_State *L = s->L;
    if (c->expect_deadlock) {
        if (!cs_outcome_kind_is_deadlock(d.o.kind))
            *why = fmt("expected a deadlock; the run ended: %s", d.o.word);
    } else if (status != 0 || d.o.kind != CS_OUT_OK) {
        *why = verdict_text(&d.o);
    } else if (d.o.npitfalls > 0) {
        /* which rank reports a shared pitfall first varies between runs: pick
         * by site and text, so the message does not */
        const cs_pitfall *p = &d.o.pitfalls[0];
        for (int i = 1; i < d.o.npitfalls; i++) {
            const cs_pitfall *q = &d.o.pitfalls[i];
            if (q->line < p->line || (q->line == p->line && strcmp(q->text, p->text) < 0)) p = q;
        }
        *why = fmt("pitfall: %s", p->text);
        *at = pitfall_site(&d.rp, p);
    }
    if (!*why) *why = check_ops(s, &d, at);
    char *spec_err = NULL;
    if (!*why && !c->expect_deadlock && c->expect_ref != LUA_NOREF) *why = check_expect(L, c, &d, &spec_err);
    if (!*why && !spec_err && c->check_ref != LUA_NOREF) *why = check_fn(L, c, &d, &spec_err);
    if (spec_err) { /* the spec's fault, not the solution's */
        snprintf(kind_out, 32, "%s", CS_GRADE_SPEC_ERROR);
        *why = spec_err, *at = (cs_grade_where){0, 0};
    }
    return *why == NULL; /* the child exits: nothing to free */
}
