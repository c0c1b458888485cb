/* grade.h -- `commsim grade`: exercise specs, cases run in child processes
 * with OS limits, default rules and check functions, and the result formats.
 *
 * An exercise is a folder holding spec.lua; the spec returns a table of
 * cases. Each case runs once per world size, engine and send mode (a
 * "variant"), every variant in its own forked child under setrlimit, through
 * the same run path as `commsim run`. A case scores its points only when
 * every variant passes. See docs/grading.md.
 */
#ifndef CS_GRADE_H
#define CS_GRADE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "outcome.h"

#define CS_GRADE_MAX_LIST 16

/* Exit status of `commsim grade` when some case failed (0: all passed). */
#define CS_GRADE_FAILED 6

/* The kind of a variant whose spec code failed (raised an error, looped,
 * returned a shape result() may not): the spec's error, not the solution's. */
#define CS_GRADE_SPEC_ERROR "spec_error"

typedef struct cs_grade_param {
    char *name;
    double value;
} cs_grade_param;

typedef struct cs_grade_case {
    char *name;
    double points;
    bool hidden;
    bool expect_deadlock;
    int worlds[CS_GRADE_MAX_LIST], nworlds;
    char *engines[CS_GRADE_MAX_LIST];
    int nengines;
    char *modes[CS_GRADE_MAX_LIST];
    int nmodes;
    cs_grade_param params[CS_GRADE_MAX_LIST];
    int nparams;
    char *net;       /* the case's network model (--net spelling), or NULL: real time */
    char *tag;       /* the case in trace file names: unique in the spec (cs_grade_tags) */
    int check_ref;   /* registry ref of check(run), or LUA_NOREF */
    int expect_ref;  /* registry ref of expect(rank, world, params), or LUA_NOREF */
} cs_grade_case;

typedef struct cs_grade_spec {
    char *dir, *name, *title;
    cs_grade_case *cases;
    int ncases;
    char *required[CS_GRADE_MAX_LIST], *forbidden[CS_GRADE_MAX_LIST], *allowed[CS_GRADE_MAX_LIST];
    int nrequired, nforbidden, nallowed;
    double timeout;          /* wall seconds per run */
    unsigned long long steps; /* Lua instructions per rank */
    size_t memory;           /* bytes per rank */
    size_t output;           /* bytes printed per rank */
    const char *net;         /* --net: every run's network model, or NULL (each script's header) */
    void *L;                 /* the spec's lua_State: check and expect functions */
} cs_grade_spec;

/* Find EXERCISE (a folder with spec.lua, or a NAME under lessons/NN-x/exercises/)
 * and load its spec in a sandbox. 0, or -1 with the reason in err. */
int cs_grade_spec_load(cs_grade_spec *s, const char *exercise, char *err, size_t errlen);
void cs_grade_spec_free(cs_grade_spec *s);
/* Can every case run here on its engines (engine, when not NULL, instead),
 * at its largest world? An engine this build lacks, or nccl without a GPU
 * per rank, is the grader's setup error, not every student's failing case:
 * 0, or -1 with the reason in err. */
int cs_grade_spec_runnable(const cs_grade_spec *s, const char *engine, char *err, size_t errlen);

/* Where a case failed, as `commsim replay --at RANK:LINE` opens it: the
 * rank's call (a forbidden operation) or warning (a pitfall) on that line of
 * the solution. line 0: no one call failed it (a deadlock, an error, a
 * wrong value): the replay opens at the end. Rank and line, not the event's
 * number: the ranks' interleaving, so the numbering, varies between runs. */
typedef struct cs_grade_where {
    int rank, line;
} cs_grade_where;

/* A variant's modelled time, when it ran under a network model (the case's
 * net, --net, or the solution's header): the figures of its run's --report
 * json "time" (docs/report-format.md). */
typedef struct cs_grade_time {
    int world;
    char *engine, *mode;
    cs_outcome_time t;  /* t.net NULL: no model (never in a result's list) */
} cs_grade_time;

/* The result of one case for one submission. */
typedef struct cs_grade_result {
    char *name;
    double score, max;
    bool pass, hidden;
    bool spec_error; /* the spec's code failed: message says how, and no one is graded */
    bool unrun;      /* no solution to run: message says why, and nothing of the case */
    char *message;   /* why it failed (student's terms), or NULL */
    char *trace;     /* the failing variant's trace under --trace-dir, or NULL */
    cs_grade_where at; /* where in the trace it failed */
    cs_grade_time *times; /* each variant run under a model, in the order run */
    int ntimes;
} cs_grade_result;

typedef struct cs_grade_sub {
    char *student;   /* the file or folder name */
    char *tag;       /* the student in trace file names: unique in the class (cs_grade_tags) */
    char *path;      /* the solution script, or NULL when there is none */
    char *missing;   /* why there is no solution to run (every case fails with it), or NULL */
    cs_grade_result *results;
    int nresults;
    double score, max;
} cs_grade_sub;

typedef struct cs_grade_opts {
    const char *engine;     /* override the spec's engines, or NULL */
    const char *trace_dir;  /* failing variants keep their trace here, or NULL */
} cs_grade_opts;

/* Names made safe for a file name ([A-Za-z0-9._]) and unique: names that
 * come out alike get _2, _3, ... in the order given. A malloc'd array of
 * n malloc'd strings. */
char **cs_grade_tags(const char *const *names, int n);

/* One solution given alone: sub named as a class folder names its file
 * (less .lua), so that its results, traces and CSV row read alike. */
void cs_grade_sub_single(cs_grade_sub *sub, const char *path);

/* Grade one solution: every case, every variant in a child. Fills sub
 * (student, tag and path set). */
void cs_grade_submission(const cs_grade_spec *s, const cs_grade_opts *o, cs_grade_sub *sub);
void cs_grade_sub_free(cs_grade_sub *sub);

/* Run one variant in a forked child; returns true when it passed, else the
 * reason (malloc'd) in *why and where it failed in *at. kind_out receives
 * the outcome kind name; time (if not NULL) the modelled time (time->t.net
 * NULL without a model; free with cs_grade_time_free). */
bool cs_grade_variant(const cs_grade_spec *s, const cs_grade_case *c, const char *path,
                      int world, const char *engine, const char *mode, const char *trace,
                      char **why, cs_grade_where *at, char kind_out[32], cs_grade_time *time);
void cs_grade_time_free(cs_grade_time *t);

/* What a student sees of a failing case's trace: the source it recorded is
 * the solution wrapped for the run, and its output holds the grader's result
 * lines. cs_grade_unwrap gives the solution's own text (malloc'd, the same
 * line numbers), or NULL when src is no wrapped solution; cs_grade_marked
 * says whether a printed line is one of the grader's. */
char *cs_grade_unwrap(const char *src);
bool cs_grade_marked(const char *line);

/* The judge, in the child after the run: trace is the run's trace. Returns
 * true when the run passes, else the reason in *why and where in *at; the
 * modelled time, recomputed from the trace as a replay does, in *time. */
bool cs_grade_judge(const cs_grade_spec *s, const cs_grade_case *c, const char *trace,
                    int world, char **why, cs_grade_where *at, char kind_out[32],
                    cs_outcome_time *time);

/* ---- formats */
typedef enum {
    CS_GF_TEXT = 0, CS_GF_JSON, CS_GF_TAP, CS_GF_JUNIT, CS_GF_GRADESCOPE
} cs_grade_format;

bool cs_grade_format_parse(const char *s, cs_grade_format *f);
void cs_grade_write(FILE *f, cs_grade_format fmt, const cs_grade_spec *s, const cs_grade_sub *subs,
                    int nsubs, bool show_hidden);
void cs_grade_csv(FILE *f, const cs_grade_sub *subs, int nsubs);

/* A class folder: the submissions in dir, sorted by name (one .lua per file,
 * or a subfolder with one .lua, solution.lua preferred). A submission without
 * a solution it may read (an empty subfolder, a broken link, a link out of
 * dir) is listed with its reason in missing. -1 with the reason in err when
 * dir cannot be read or holds no submission at all. */
int cs_grade_list_class(const char *dir, cs_grade_sub **subs, int *nsubs, char *err, size_t errlen);
/* Grade every submission with up to jobs children at once, in order of name. */
void cs_grade_class(const cs_grade_spec *s, const cs_grade_opts *o, cs_grade_sub *subs, int nsubs,
                    int jobs);

#endif
