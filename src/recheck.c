/* recheck.c -- the rendezvous recheck (recheck.h): run the script again with
 * rendezvous sends, read its outcome through the JSON contract (the same
 * document --report json prints), and say what it means for the first run. */
#include "recheck.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch.h"
#include "monitor_internal.h"
#include "xalloc.h"

bool cs_recheck_wanted(const cs_run_opts *o, const char *mode_name) {
    return !o->no_recheck && !o->worker && mode_name && strncmp(mode_name, "eager", 5) == 0;
}

void cs_recheck_free(cs_recheck *r) {
    free(r->block);
    memset(r, 0, sizeof *r);
}

/* Was the send of rank at line already reported as never received? */
static bool reported_unreceived(const cs_monitor *mon, int rank, int line) {
    for (int i = 0; i < mon->npitfalls; i++)
        if (mon->pitfalls[i].kind == CS_PIT_UNRECEIVED && mon->pitfalls[i].rank == rank &&
            mon->pitfalls[i].line == line)
            return true;
    return false;
}

/* The deadlock's operations: where it is (the first send that waits: a send
 * is what buffering hid; else the first operation), and whether it is the
 * message the first run already reported as never received: a send there
 * blocks with rendezvous sends, and the rest of the deadlock follows from it. */
static void read_ops(cs_recheck *r, json_t *doc, const cs_monitor *mon) {
    json_t *ops = json_object_get(doc, "operations"), *op;
    size_t i;
    bool have_send = false;
    json_array_foreach(ops, i, op) {
        json_t *site = json_object_get(op, "wait_site"); /* where the rank hangs */
        if (!json_is_object(site)) site = json_object_get(op, "site");
        int rank = (int)json_integer_value(json_object_get(op, "rank"));
        int line = (int)json_integer_value(json_object_get(site, "line"));
        int posted = (int)json_integer_value(json_object_get(json_object_get(op, "site"), "line"));
        const char *name = json_string_value(json_object_get(op, "op"));
        bool send = name && (strcmp(name, "send") == 0 || strcmp(name, "isend") == 0);
        if (line <= 0 || json_is_true(json_object_get(op, "missing"))) continue;
        if (send && reported_unreceived(mon, rank, posted)) {
            r->covered = true;
            r->rank = rank, r->line = line, have_send = true;
        }
        if (!r->line || (send && !have_send)) {
            r->rank = rank, r->line = line;
            have_send = send;
        }
    }
}

void cs_recheck_run(cs_recheck *r, const cs_run_opts *o, int world, const cs_monitor *mon) {
    memset(r, 0, sizeof *r);
    char *json = NULL, *noise = NULL;
    size_t jlen = 0, nlen = 0;
    FILE *out = open_memstream(&json, &jlen), *err = open_memstream(&noise, &nlen);
    if (!out || !err) cs_oom("the rendezvous recheck", 0);
    cs_run_opts ro = {.script = o->script, .nranks = world, .engine = "thread",
                      .send_mode = "rendezvous", .mem_limit = o->mem_limit,
                      .step_limit = o->step_limit, .out_limit = o->out_limit, .timeout = o->timeout > 0 ? o->timeout : 60,
                      .seed = o->seed, .catch_signals = o->catch_signals, .rank = -1,
                      .no_recheck = true, .report = CS_REPORT_JSON, .out = out, .err = err};
    memcpy(ro.coll_algo, o->coll_algo, sizeof ro.coll_algo);
    int status = cs_launch_run(&ro);
    fclose(out);
    fclose(err);
    free(noise);
    json_t *doc = json ? json_loads(json, 0, NULL) : NULL;
    free(json);
    const char *report = json_string_value(json_object_get(doc, "report"));
    char *line = NULL;
    size_t llen = 0;
    FILE *f = open_memstream(&line, &llen);
    if (!f) cs_oom("the rendezvous recheck", 0);
    if (status == 0 && doc) {
        r->ran = true;
        fprintf(f, CS_RECHECK_PREFIX "ok");
    } else if (status == CS_END_DEADLOCK && doc && report) {
        r->ran = r->deadlock = true;
        read_ops(r, doc, mon);
        const char *script = json_string_value(json_object_get(doc, "script"));
        fprintf(f, CS_RECHECK_PREFIX "deadlock at %s:%d \xe2\x80\x94 this program works only "
                   "because sends are buffered\n%s", script ? script : "line", r->line, report);
    } else {
        fprintf(f, CS_RECHECK_PREFIX "not checked: the recheck ended with status %d", status);
    }
    fclose(f);
    r->block = line;
    json_decref(doc);
}

/* ---- the --strict verdict, read back from the block (live and in replay) */

/* Append src[0, n) to *dst, after sep when *dst has text. */
static void append(char **dst, const char *src, size_t n, char sep) {
    size_t have = *dst ? strlen(*dst) : 0;
    *dst = cs_xrealloc(*dst, have + n + 2, "the recheck's verdict");
    if (*dst && have) (*dst)[have++] = sep;
    memcpy(*dst + have, src, n);
    (*dst)[have + n] = 0;
}

bool cs_recheck_verdict(const char *block, const char *send_mode, cs_verdict *v) {
    memset(v, 0, sizeof *v);
    const char *p = block ? strchr(block, '\n') : NULL;
    if (!p || !p[1]) return false;
    char *body = NULL, **part = NULL;
    for (p++; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        if (!v->headline) append(&v->headline, p, n, '\n');
        else if (strncmp(p, "why: ", 5) == 0) append(part = &v->why, p + 5, n - 5, '\n');
        else if (strncmp(p, "note: ", 6) == 0) append(part = &v->note, p + 6, n - 6, '\n');
        else if (strncmp(p, "fix: ", 5) == 0) append(part = &v->fix, p + 5, n - 5, '\n');
        else if (part) append(part, p, n, '\n'); /* a why of several lines (collectives) */
        else append(&body, p, n, '\n');
        p = nl ? nl + 1 : p + n;
    }
    char hid[400];
    snprintf(hid, sizeof hid, "eager buffering hid this deadlock: with --send-mode %s the run "
             "completed because its sends were buffered; with rendezvous sends (the recheck: the "
             "same script, world, limits and seed) it deadlocks as shown.",
             send_mode ? send_mode : "eager");
    append(&v->note, hid, strlen(hid), ' ');
    v->kind = CS_OUT_DEADLOCK_BUFFERED;
    if (body) append(&body, "", 0, '\n'); /* the ranks' lines end in a newline */
    cs_verdict_compose(v, body);
    free(body);
    return true;
}
