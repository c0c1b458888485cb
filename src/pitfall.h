/* pitfall.h -- misuses of a buffer that a non-blocking operation still owns.
 *
 * After dist.isend(t) or dist.irecv(t), t (and every view of its storage that
 * overlaps the bytes sent or received) belongs to the operation until the rank
 * waits on it. Writing to it meanwhile, or reading an irecv's buffer, is a
 * race on a real network: commsim reports it, once per site, as a warning (a
 * warn event), or with --strict as an error. An eager isend copies its data
 * when posted, so its buffer is free at once. See docs/pitfalls.md.
 */
#ifndef CS_PITFALL_H
#define CS_PITFALL_H

#include "api.h"

typedef enum { CS_ACCESS_READ = 1, CS_ACCESS_WRITE = 2 } cs_access;

/* Does the rank have unfinished non-blocking requests? Cheap: the Lua binding
 * asks before every tensor access and skips the check when it says no. */
bool cs_rank_has_inflight(const cs_rank *r);

/* The script is about to read or write t's elements at line. CS_OK, or with
 * --strict CS_EPITFALL with the message (without its position) in
 * cs_rank_errmsg(). */
int cs_rank_access(cs_rank *r, const cs_tensor *t, cs_access how, int line);
/* The entries of the registry that accesses have looked at since the last
 * call: C work the script's instruction budget is charged for (a write to a
 * storage with n requests in flight looks at all n, so n irecvs into one
 * tensor are n^2 / 2 tests). */
uint64_t cs_inflight_take_tests(cs_rank *r);

#endif
