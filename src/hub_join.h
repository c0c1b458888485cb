/* hub_join.h -- a rank process's set-up through the hub (hub_join.c). */
#ifndef CS_HUB_JOIN_H
#define CS_HUB_JOIN_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "hub.h"

/* Rank 0's maker of the job's blob: 0, or -1 with why in err. */
typedef int (*cs_hub_blob_fn)(void *ud, void *blob, size_t len, char *err, size_t errlen);

/* Join the job over s->link, meeting at rank 0's hub: rank 0 starts it (in
 * *hub) and joins with its address, every rank connects to it (*hc) and
 * gets the len bytes under key into blob, which rank 0 made with make.
 * 0, or -1 with why in err ("" when the join printed it already); then
 * nothing is left running. */
int cs_hub_join(const cs_rank_setup *s, uint32_t key, cs_hub_blob_fn make, void *ud, void *blob,
                size_t len, cs_hub **hub, cs_hub_client **hc, char *err, size_t errlen);

#endif
