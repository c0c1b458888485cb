/* report.c -- plain-text output for headless runs and replays. */
#include "report.h"
#include "netmodel.h"

#include <string.h>

#include "api.h"
#include "errmsg.h"
#include "recheck.h"

/* A script's text (printed, raised, or in a verdict) may hold any byte: the
 * report shows its control characters instead of letting them drive the
 * reader's terminal. */
static void put_text(FILE *f, const char *s, bool keep_nl) { cs_fput_text(f, s, strlen(s), keep_nl); }

static void tagged(FILE *f, int rank, const char *prefix, const char *text) {
    const char *line = text ? text : "";
    do {
        const char *nl = strchr(line, '\n');
        int len = nl ? (int)(nl - line) : (int)strlen(line);
        fprintf(f, "[rank %d] %s", rank, prefix);
        cs_fput_text(f, line, (size_t)len, false);
        fputc('\n', f);
        line = nl ? nl + 1 : NULL;
    } while (line && *line);
}

static void report_emit(void *ud, const cs_event *ev) {
    cs_report *rep = ud;
    if (ev->rank < 0 && ev->type == CS_EV_WARN && ev->text &&
        strncmp(ev->text, CS_RECHECK_PREFIX, strlen(CS_RECHECK_PREFIX)) == 0)
        return; /* the rendezvous recheck: the summary prints it */
    if (ev->rank < 0 && ev->type == CS_EV_WARN) {
        cs_errf(rep->err, "warning: %s\n", ev->text ? ev->text : "");
        return;
    }
    switch (ev->type) {
    case CS_EV_PRINT:
        tagged(rep->out, ev->rank, "", ev->text);
        fflush(rep->out);
        break;
    case CS_EV_WARN:
        tagged(rep->err, ev->rank, "warning: ", ev->text);
        break;
    case CS_EV_ERROR:
        fflush(rep->out);
        /* An error of no rank is a verdict of the monitor (a collective
         * mismatch) or the run's own end (a timeout, an interrupt, --strict):
         * the summary prints it. */
        if (ev->rank >= 0) tagged(rep->err, ev->rank, "error: ", ev->text);
        break;
    default: break;
    }
}

cs_sink cs_report_sink(cs_report *rep) { return (cs_sink){report_emit, rep}; }

bool cs_report_format_parse(const char *s, cs_report_format *out) {
    if (strcmp(s, "text") == 0) *out = CS_REPORT_TEXT;
    else if (strcmp(s, "json") == 0) *out = CS_REPORT_JSON;
    else return false;
    return true;
}

int cs_report_status(const cs_monitor *m) {
    if (m->deadlocked) return CS_END_DEADLOCK;
    if (cs_monitor_coll_verdict(m)) return CS_END_ERROR;
    /* Ranks that fail together: the first failure the events hold decides,
     * so that a live run (cs_control_close) and its replay agree. */
    return m->fail_status ? m->fail_status : m->run_status;
}

/* With a model: the makespan, and per rank its end and where its time went. */
static void report_time(FILE *f, const cs_outcome *o) {
    const cs_outcome_time *t = &o->time;
    char a[32], b[32], c[32], d[32];
    if (!t->net) return;
    if (t->overflow) {
        fprintf(f, "time (%s): not known, a rank's virtual clock passed the largest time "
                "(2^63 ns, some 292 years)\n", t->net);
        return;
    }
    if (!t->complete) {
        fprintf(f, "time (%s): not known, the run did not end normally\n", t->net);
        return;
    }
    fprintf(f, "time (%s): makespan %s\n", t->net, cs_vt_format(t->makespan_ns, a, sizeof a));
    for (int k = 0; k < o->world; k++) {
        const cs_outcome_time_rank *r = &t->ranks[k];
        fprintf(f, "  rank %d: ends at %s; compute %s, communication %s, waiting %s\n", k,
                cs_vt_format(r->end_ns, a, sizeof a), cs_vt_format(r->compute_ns, b, sizeof b),
                cs_vt_format(r->comm_ns, c, sizeof c), cs_vt_format(r->wait_ns, d, sizeof d));
    }
}

/* The run ended on its own (a timeout, an interrupt, a quit): where it found
 * the ranks it stopped, the first CS_STOPS_SHOWN of them. */
static void report_stops(FILE *f, const cs_outcome *o) {
    int shown = 0, more = 0;
    for (int k = 0; k < o->world; k++) {
        const cs_outcome_rank *r = &o->ranks[k];
        if (r->state != CS_RS_ABORTED || r->deadlocked) continue;
        if (shown == CS_STOPS_SHOWN) {
            more++;
            continue;
        }
        shown++;
        if (!r->stop) {
            fprintf(f, "  rank %d did not stop in time: where it was is not known\n", k);
            continue;
        }
        fprintf(f, "  rank %d was ", k);
        put_text(f, r->stop, false);
        fputc('\n', f);
    }
    if (more) fprintf(f, "  ... and %d more rank%s (--report json lists them all)\n", more,
                      more == 1 ? "" : "s");
}

void cs_report_outcome(cs_report *rep, const cs_outcome *o) {
    FILE *f = rep->err;
    /* Ranks of a deadlock are stopped afterwards: "deadlocked" says why. */
    int counts[CS_RS_ABORTED + 1] = {0}, deadlocked = 0;
    for (int k = 0; k < o->world; k++) {
        const cs_outcome_rank *r = &o->ranks[k];
        if (r->state == CS_RS_ABORTED && r->deadlocked) deadlocked++;
        else if (r->state >= CS_RS_IDLE && r->state <= CS_RS_ABORTED) counts[r->state]++;
    }
    fflush(rep->out);
    fputs("--- ", f);
    put_text(f, o->script ? o->script : "run", false);
    fprintf(f, ": %d rank%s, %s engine, %s sends\n", o->world, o->world == 1 ? "" : "s",
            o->engine ? o->engine : "?",
            o->send_mode ? o->send_mode : "?");
    fprintf(f, "messages: %llu, bytes: %llu\n", (unsigned long long)o->messages,
            (unsigned long long)o->bytes);
    if (o->collectives) fprintf(f, "collectives: %llu\n", (unsigned long long)o->collectives);
    fprintf(f, "ranks:");
    const char *sep = " ";
    for (int s = CS_RS_IDLE; s <= CS_RS_ABORTED; s++) {
        if (s == CS_RS_ABORTED && deadlocked) {
            fprintf(f, "%s%d deadlocked", sep, deadlocked);
            sep = ", ";
        }
        if (!counts[s]) continue;
        fprintf(f, "%s%d %s", sep, counts[s], cs_rank_state_name((cs_rank_state)s));
        sep = ", ";
    }
    fprintf(f, "\n");
    report_time(f, o);
    if (o->npitfalls)
        fprintf(f, "warnings: %d pitfall%s (see above)\n", o->npitfalls,
                o->npitfalls == 1 ? "" : "s");
    if (o->recheck) {
        put_text(f, o->recheck, false), fputc('\n', f);
        const cs_verdict *r = &o->recheck_verdict; /* with --strict it is the verdict below */
        if (r->kind != CS_OUT_OK && o->kind != CS_OUT_DEADLOCK_BUFFERED) put_text(f, r->text, true);
    }
    if (o->verdict.text) put_text(f, o->verdict.text, true);
    if (o->run_error) {
        put_text(f, o->run_error, false), fputc('\n', f);
        report_stops(f, o);
    }
    for (int k = 0; k < o->world; k++) {
        const cs_outcome_rank *r = &o->ranks[k];
        if (r->state != CS_RS_FAILED || !r->error) continue;
        fprintf(f, "rank %d failed: ", k);
        put_text(f, r->error, false), fputc('\n', f);
        if (r->waiters) put_text(f, r->waiters, true);
    }
    fprintf(f, "verdict: %s (exit status %d)\n", o->word, o->status);
    fflush(f);
}
