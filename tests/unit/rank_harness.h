/* rank_harness.h -- unit tests that run C code on every rank of a thread
 * world: one thread per rank, the monitor watching (and aborting the world on
 * its verdicts, as the launcher does). Shared by check_api and check_coll. */
#ifndef CS_RANK_HARNESS_H
#define CS_RANK_HARNESS_H

#include <stddef.h>

#include "api.h"

typedef void (*rank_fn)(cs_rank *r, void *arg);

/* Run fn(rank, arg) on every rank of a world made from cfg (engine and script
 * names filled in when absent); returns how the run ended. The monitor's
 * verdict (a deadlock, or a collective mismatch) goes to verdict when given. */
cs_end_reason run_ranks(const cs_world_config *cfg, rank_fn fn, void *arg, char *verdict,
                        size_t vlen);

#endif
