/* script.h -- running a lesson script on a rank: one sandboxed lua_State per
 * rank with a memory cap (its own allocator, charged to the rank's budget) and an
 * instruction budget (a count hook). See docs/lesson-api.md.
 */
#ifndef CS_SCRIPT_H
#define CS_SCRIPT_H

#include <stddef.h>
#include <stdint.h>

#include "api.h"

/* A script loaded once and shared, read-only, by every rank. */
typedef struct cs_script {
    char *path;    /* as given */
    char *name;    /* basename, used in messages: "chain.lua:12: ..." */
    char *source;
    size_t len;
} cs_script;

/* A script file of more bytes is refused ("larger than 16 MiB"). */
#define CS_SCRIPT_MAX_BYTES ((long)16 << 20)

int cs_script_load(cs_script *s, const char *path, char *err, size_t errlen);
/* A script from memory (tests, generated programs): name is used in messages. */
int cs_script_from_string(cs_script *s, const char *name, const char *src);
void cs_script_free(cs_script *s);
/* Compile s without running it: 0, or -1 with the syntax error ("x.lua:3:
 * ...") in err. The launcher checks once, so that no rank reports it again. */
int cs_script_check_syntax(const cs_script *s, char *err, size_t errlen);

typedef struct cs_script_limits {
    size_t mem_limit;    /* bytes per rank, Lua heap and tensors together; 0 = none */
    uint64_t step_limit; /* Lua VM instructions per rank; 0 = none */
    uint64_t out_limit;  /* bytes a rank may print; 0 = none */
} cs_script_limits;

#define CS_DEFAULT_MEM_LIMIT ((size_t)256 << 20)
#define CS_DEFAULT_STEP_LIMIT ((uint64_t)500000000)

/* The exit status of a rank that unwound because the run was aborted (another
 * rank failed, deadlock, timeout, quit): nothing to report. */
#define CS_RANK_ABORTED 1

/* Run s on rank r to completion. Returns the rank's exit status: 0 when the
 * script returned, otherwise the cs_end_reason that ended it (having called
 * cs_rank_fail for errors and budgets). Always calls cs_rank_exit. */
int cs_script_run(cs_rank *r, const cs_script *s, const cs_script_limits *lim);

#endif
