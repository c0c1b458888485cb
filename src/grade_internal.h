/* grade_internal.h -- what the grade modules share and nothing else reads. */
#ifndef CS_GRADE_INTERNAL_H
#define CS_GRADE_INTERNAL_H

/* Marks the epilogue's lines among a rank's printed output. */
#define CS_GRADE_MARK "\x1e" "cs-result "

#include <stdbool.h>
#include <stdio.h>

#include "grade.h"

/* A variant's modelled time as one line, "T\tWORLD\tENGINE\tMODE\tCOMPLETE\t
 * MAKESPAN\tRANKS\tNET\n" (RANKS: "END,COMPUTE,COMM,WAIT" per rank joined by
 * ';', "-" when the times are not known): the run's child sends it after its
 * verdict, and a class worker saves it after its case's line. */
void cs_grade_time_write(FILE *f, const cs_grade_time *t);
/* Parse such a line (modified; without its newline) into *t (malloc'd
 * strings); false when it is not one. */
bool cs_grade_time_read(char *line, cs_grade_time *t);

/* Where variants make their private folders (default /tmp): a class
 * makes them under its own, so that a worker that dies leaves nothing. */
void cs_grade_tmp_root(const char *dir);

/* Catch SIGTERM, SIGINT and SIGHUP with h, unless ignored (they stay
 * ignored), saving their three dispositions in prev; uncatch puts them back (a
 * child forked while they are caught calls it first). */
struct sigaction;
void cs_grade_catch(void (*h)(int), struct sigaction *prev);
void cs_grade_uncatch(const struct sigaction *prev);

/* A probe run's trace (every rank's error caught, cs_grade_variant): the
 * lowest rank that raised, with its message in *text (malloc'd), or -1.
 * token: the probe's, in its marked lines. */
int cs_grade_raiser(const char *trace, const char *token, char **text);

/* A file's whole content, NUL-terminated (malloc'd; its length in *len), or
 * NULL when it cannot be opened. */
char *cs_grade_read_all(const char *path, size_t *len);

/* Call into the spec's Lua state as lua_pcall does, with the spec's
 * instruction budget: any error (a loop too) is the spec's, as a message. */
struct lua_State;
int cs_grade_spec_pcall(struct lua_State *L, int nargs, int nresults);

#endif
