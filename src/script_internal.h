/* script_internal.h -- what the Lua binding's files (script*.c) share:
 * the per-state context, the "this rank must stop" machinery, script lines, and
 * the tensor userdata. Not part of any public interface.
 */
#ifndef CS_SCRIPT_INTERNAL_H
#define CS_SCRIPT_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include <lauxlib.h>
#include <lua.h>

#include "api.h"
#include "script.h"
#include "tensor.h"

/* Registry names of the userdata metatables. They double as __name, which Lua
 * uses in its messages ("tensor expected, got number"). */
#define CS_TENSOR_MT "tensor"
#define CS_WORK_MT "Work"
#define CS_P2POP_MT "P2POp"
#define CS_SIZE_MT "Size"

/* Tensor work is charged to the instruction budget too: one step per this many
 * elements touched, so a script cannot hide a long computation in one call. */
#define CS_ELEMS_PER_STEP 8

/* C work charged in bytes (strings built or scanned by a library function):
 * one step per this many bytes. */
#define CS_BYTES_PER_STEP 16

/* Why a rank is being stopped from inside its own Lua state. Once set it never
 * goes back: the count hook keeps raising the sentinel until the state unwinds,
 * the allocator refuses to grow, and pcall, xpcall, coroutine.resume and the
 * rest of the catching functions raise it again instead of returning it. */
typedef enum {
    CS_DIE_NONE = 0,
    CS_DIE_ABORT,  /* the run is ending: leave silently */
    CS_DIE_MEM,    /* the memory cap */
    CS_DIE_STEPS,  /* the instruction budget */
    CS_DIE_HOST,   /* the machine itself refused an allocation (not the cap) */
    CS_DIE_OUTPUT  /* the output limit: print would go past it */
} cs_die_reason;

/* One per lua_State, reached through the state's extra space (threads created
 * in the state copy it, so coroutines find it too). */
typedef struct cs_script_ctx {
    cs_rank *r;
    cs_budget *budget;
    const cs_script *script;
    uint64_t steps;
    uint64_t step_limit;    /* 0: none */
    uint64_t out_limit;     /* bytes print may write, 0: none */
    uint64_t out_used;
    bool running;           /* the script runs (the sandbox is built): bytes count */
    bool closing;           /* lua_close runs: nothing is refused (its finalizers must run) */
    cs_die_reason dying;
    int die_line;           /* the script line where it happened, 0 if unknown */
    /* The allocator's last refusal. Lua retries a failed allocation once after an
     * emergency collection; if that retry succeeds the refusal is forgotten,
     * otherwise the memory error is final even if a pcall catches it. */
    bool mem_refused;
    bool refused_host;      /* realloc itself failed, not the cap */
    const void *refused_ptr;
    size_t refused_osize, refused_nsize;
    size_t host_bytes;      /* CS_DIE_HOST: the allocation that failed, 0 if unknown */
    char mem_detail[200];   /* CS_DIE_MEM: what the cap refused, when not the heap */
    bool own_error;         /* raising the failure of the rank's own request (a
                             * mismatch): the run's end does not hide it */
    bool other_chunks;      /* load() was called: not every Lua function is the script's */
} cs_script_ctx;

cs_script_ctx *cs_script_ctx_of(lua_State *L);
/* The line of the innermost Lua function on L's stack, 0 if none. */
int cs_script_line(lua_State *L);
/* The same, from a C function of this library called by Lua (skips its frame). */
int cs_script_call_line(lua_State *L);
/* Stop the rank: record why (first reason wins) and raise the sentinel. For
 * CS_DIE_MEM right after a tensor.h call failed with ENOMEM, its message
 * decides: a host allocation failure becomes CS_DIE_HOST, and a tensor that
 * cannot exist ("too large") an ordinary error of the script instead. */
int cs_script_die(lua_State *L, cs_die_reason why);
/* Raise the sentinel again if the rank is already being stopped. Every API entry
 * calls it so a script that caught the sentinel cannot block in a wait. */
void cs_script_check(lua_State *L);
/* Whether cs_script_check would raise, for C work that must first let go of
 * what it holds (false in a state without a rank). */
bool cs_script_stopping(lua_State *L);
/* Add n steps to the budget; stops the rank when it is exceeded. A charge of
 * CS_STEPS_OVERFLOW or more comes from an element count that saturated at
 * INT64_MAX (see script_tensor.c): no such tensor can exist, and the call
 * fails with "tensor too large" instead (an error the script may catch). */
void cs_script_charge(lua_State *L, uint64_t n);
#define CS_STEPS_OVERFLOW ((uint64_t)INT64_MAX / CS_ELEMS_PER_STEP)
/* Add n steps of C work that the sandbox's own wrappers measured (saturating). */
void cs_script_charge_work(lua_State *L, uint64_t n);
/* In a C closure wrapping a standard library function (upvalue 1): call it
 * with the current arguments and return its results. */
int cs_script_call_original(lua_State *L);
/* Wrap the standard library functions that loop in C without allocating so
 * that they charge their work first (script_charge.c). */
void cs_script_charge_libs(lua_State *L);
/* Turn a failing api.h return code into the right Lua outcome (never returns). */
int cs_script_api_error(lua_State *L, int rc);

/* Options tables: the last argument may be a table of named options. Returns
 * true when index idx holds such a table, after checking that each key is one
 * of allowed (NULL-terminated); an unknown key is an error naming it. */
bool cs_script_opts(lua_State *L, int idx, const char *fn, const char *const *allowed);
/* An integer argument (floats with an integral value are accepted). */
lua_Integer cs_script_checkint(lua_State *L, int idx, const char *fn, const char *what);
/* The object of a method of a tname userdata (argument 1), or an error that
 * says to call it with a colon when it is missing (a dot call). */
void *cs_script_checkself(lua_State *L, const char *tname);
/* Raise "bad argument #1 to 'FN' (TNAME expected, got ...): call a method
 * with a colon, V:FN(ARGS), not V.FN(ARGS)": Python's dot call, in Lua. */
int cs_script_colon_error(lua_State *L, const char *fn, const char *tname, const char *v,
                          const char *args);
/* Push a new metatable, registered as name, that scripts can neither read
 * nor replace: getmetatable gives the name. */
void cs_script_sealed_metatable(lua_State *L, const char *name);

/* ---- tensors (script_tensor.c) */
int luaopen_cs_tensor(lua_State *L);
cs_tensor *cs_lua_totensor(lua_State *L, int idx);    /* NULL if not a tensor */
cs_tensor *cs_lua_checktensor(lua_State *L, int idx);
/* The tensor argument of a dist function fn: what names it ("the input";
 * NULL: the one tensor). A Lua list (Python's habit) is told how to make one. */
cs_tensor *cs_lua_argtensor(lua_State *L, int idx, const char *fn, const char *what);
/* A new, empty tensor userdata on the stack top (it owns what is stored in it). */
cs_tensor **cs_lua_newslot(lua_State *L);
/* Raise the error of the tensor.h call that just failed (never returns). */
int cs_lua_tensor_failed(lua_State *L);
/* Store t (a tensor.h call's result) in slot, or raise that call's error; 1. */
int cs_lua_own(lua_State *L, cs_tensor **slot, cs_tensor *t);
/* Charge n elements of tensor work to the rank (negative counts as none). */
void cs_lua_charge_elems(lua_State *L, int64_t n);
cs_budget *cs_lua_budget(lua_State *L);
/* Dead tensors hold budget until their finalizers run, and the Lua collector
 * does not see the bytes they hold: when the budget refuses, collect and retry. */
#define CS_LUA_TRY_NEW(L, var, expr)                           \
    do {                                                       \
        errno = 0;                                             \
        (var) = (expr);                                        \
        if (!(var) && errno == ENOMEM) {                       \
            lua_gc((L), LUA_GCCOLLECT);                        \
            errno = 0;                                         \
            (var) = (expr);                                    \
        }                                                      \
    } while (0)
/* A number argument; what names it in the error ("tensor.full: the value"). */
double cs_lua_checkscalar(lua_State *L, int idx, const char *what);
/* The number at idx stored as d: raises torch's "value cannot be converted
 * to type int32_t without overflow" where an integer dtype cannot hold it. */
void cs_lua_checkholds(lua_State *L, int idx, cs_dtype d);
cs_dtype cs_lua_checkdtype(lua_State *L, int idx, const char *fn);
/* Dims from the arguments first..last: numbers, or one table of numbers. */
int cs_lua_checkdims(lua_State *L, int first, int last, const char *fn, int64_t *shape);
/* t's element at flat index flat = the number at idx. */
void cs_lua_set_elem(lua_State *L, cs_tensor *t, int64_t flat, int idx);

/* ---- the tensor library's factories (script_factory.c) */
extern const luaL_Reg cs_tensor_factories[];

/* ---- device tensors (script_device.c) */
/* Whether idx holds a device name ("cpu", "cuda", "cuda:N"); its number in *dev. */
bool cs_lua_isdevice(lua_State *L, int idx, int *dev);
int cs_lua_checkdevice(lua_State *L, int idx, const char *fn);
/* t on dev: a new reference (t itself when already there), charged to the
 * rank; raises the tensor error ("no CUDA device available: ...") on failure. */
cs_tensor *cs_lua_newtensor_on(lua_State *L, cs_tensor *t, int dev);
/* Move the tensor of the userdata at the stack top to dev (a factory's device option). */
void cs_lua_place(lua_State *L, int dev);
/* t.device */
void cs_lua_push_device(lua_State *L, const cs_tensor *t);
/* t:cuda(), t:cpu(), t:to() */
extern const luaL_Reg cs_tensor_device_methods[];
/* dist.cuda_device_count() */
int cs_lua_cuda_device_count(lua_State *L);

/* ---- pitfall checks (script_access.c) */
/* Wrap the functions of the table at idx that read or write tensors so that
 * the rank hears of each access first. */
void cs_script_guard(lua_State *L, int idx);
/* The tensor at idx (if it is one) is about to be read or written (a
 * cs_access; 0 does nothing). Raises the --strict error. */
void cs_lua_access(lua_State *L, int idx, int how);
/* The same for t[i] alone (an element, or row i): a view is made only when
 * something is in flight. */
void cs_lua_access_index(lua_State *L, cs_tensor *t, int64_t i, int how);

/* ---- dist (script_dist.c) */
int luaopen_cs_dist(lua_State *L);

/* ---- collectives and groups (script_coll.c) */
void cs_script_coll_open(lua_State *L); /* into the dist table on the stack top */
/* get_rank / get_world_size of the group at idx */
int cs_script_group_query(lua_State *L, int idx, bool size);
/* Is the value at idx a collective's work handle? If so it counts as waited on. */
bool cs_script_coll_work_wait(lua_State *L, int idx);

/* script_pattern.c: string.find, match, gmatch and gsub as Lua 5.4's, with
 * their work counted (a step per pattern item tried, per character a
 * repetition tests, per byte compared) and handed to *charge, which may
 * raise, every few thousand steps and at the end of each call. Sets them in
 * the table on the top of the stack. */
typedef void (*cs_pattern_charge)(lua_State *L, uint64_t steps);
void cs_pattern_open(lua_State *L, const cs_pattern_charge *charge);

/* script_hint.c: what the script likely meant, for an error msg (Lua's, at
 * line of s; 0: no line) that a Python habit produces, or NULL. */
const char *cs_script_hint(const cs_script *s, int line, const char *msg);

#endif
