/* report.h -- the plain-text report of a headless run: the ranks' output as it
 * happens, then a summary and the verdict. Replay prints the same report. */
#ifndef CS_REPORT_H
#define CS_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "monitor.h"
#include "outcome.h"

/* What a run prints at its end: the plain report, or the outcome as JSON. */
typedef enum { CS_REPORT_TEXT = 0, CS_REPORT_JSON } cs_report_format;

/* "text" or "json"; false for anything else. */
bool cs_report_format_parse(const char *s, cs_report_format *out);

typedef struct cs_report {
    FILE *out;   /* the ranks' printed output */
    FILE *err;   /* errors, warnings and the verdict */
    int world;
} cs_report;

/* A sink that prints print events ("[rank 2] text", each line tagged), warnings
 * and errors as they happen. */
cs_sink cs_report_sink(cs_report *rep);

/* The closing summary of an outcome: messages, bytes, how each rank ended,
 * the verdict. */
void cs_report_outcome(cs_report *rep, const cs_outcome *o);

/* The exit status that a monitor's final model implies (for replay). */
int cs_report_status(const cs_monitor *m);

#endif
