/* monitor_internal.h -- what monitor.c and explain.c share: a growable string
 * and the model queries the explanations need. Not a public interface. */
#ifndef CS_MONITOR_INTERNAL_H
#define CS_MONITOR_INTERNAL_H

#include "monitor.h"

typedef struct cs_sbuf {
    char *s;
    size_t len, cap;
} cs_sbuf;

void cs_sb_printf(cs_sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The script's name for "file:line" (or "line" when unknown). */
const char *cs_mon_script(const cs_monitor *m);
/* The pending request id of rank k, or NULL. */
cs_mon_req *cs_mon_lookup(const cs_monitor *m, int k, uint64_t id);
/* Could unmatched send s pair with unmatched receive r? */
bool cs_mon_fits(const cs_mon_req *s, const cs_mon_req *r);
/* "in send to rank 1 (tag 0, float32 [4], 16 bytes) at x.lua:5" */
void cs_mon_describe_req(cs_sbuf *b, const cs_monitor *m, const cs_mon_req *q, int wait_line);

/* explain.c: the deadlock found (its ranks marked in_deadlock) as a verdict:
 * its kind, the operations the ranks wait in, why, fix and the report text. */
void cs_mon_deadlock_verdict(const cs_monitor *m, cs_verdict *v);
/* explain.c: append op to v's operations. */
void cs_verdict_add_op(cs_verdict *v, const cs_outcome_op *op);
/* explain.c: compose v->text from headline, body (the ranks' lines), why, note
 * and fix, as the report prints it. */
void cs_verdict_compose(cs_verdict *v, const char *body);
/* explain.c: who waits on rank `failed` (report lines), or NULL when nobody. */
char *cs_mon_failed_waiters(const cs_monitor *m, int failed);
/* explain.c: the run ended cleanly: call warn(ud, rank, line, text) for each
 * site where sent messages were never received. */
void cs_mon_leftovers(const cs_monitor *m, void (*warn)(void *ud, int rank, int line,
                                                        const char *text), void *ud);

#endif
