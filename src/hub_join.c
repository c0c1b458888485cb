/* hub_join.c -- a rank process joining a job whose ranks meet at the hub
 * (the nccl engine's nccl-mp): the part of its set-up that knows no CUDA.
 *
 * Rank 0 starts the hub where the controller reached its process and joins
 * the job with the hub's address; the others join with none. The WELCOME
 * gives every rank rank 0's address, so every rank connects to the hub,
 * rank 0 puts the job's blob there (NCCL's unique ids, made by the caller)
 * and every rank gets it. While a rank waits, it keeps watching its link:
 * an ABORT or the controller's loss ends the wait.
 */
#include "hub_join.h"

#include <stdio.h>
#include <string.h>

#include "api.h"
#include "rank_link.h"
#include "wire.h"

#define HUB_DIAL_SECONDS 60.0

typedef struct watch {
    cs_rank_link *link;
    char why[256];
} watch;

static bool link_over(void *ud) {
    watch *w = ud;
    return cs_rank_link_setup_poll(w->link, w->why, sizeof w->why) < 0;
}

int cs_hub_join(const cs_rank_setup *s, uint32_t key, cs_hub_blob_fn make, void *ud, void *blob,
                size_t len, cs_hub **hub, cs_hub_client **hc, char *err, size_t errlen) {
    *hub = NULL;
    *hc = NULL;
    err[0] = 0;
    uint16_t port = 0;
    if (s->rank == 0) {
        if (!(*hub = cs_hub_new(s->token, s->world, s->ip, err, errlen))) return -1;
        if (cs_hub_start(*hub) < 0) {
            snprintf(err, errlen, "cannot start the hub's thread");
            goto fail;
        }
        port = cs_hub_port(*hub);
    }
    if (cs_rank_link_join(s->link, s->rank == 0 ? s->ip : 0, port, s->wel) < 0) {
        err[0] = 0; /* the join said why */
        goto fail;
    }
    if (!s->wel->port[0]) {
        snprintf(err, errlen, "the WELCOME has no address for rank 0's hub (is rank 0 an nccl-mp rank?)");
        goto fail;
    }
    if (!(*hc = cs_hub_dial(s->wel->ip[0], s->wel->port[0], s->token, s->rank, s->world,
                            cs_now() + HUB_DIAL_SECONDS, err, errlen)))
        goto fail;
    if (s->rank == 0) {
        if (make(ud, blob, len, err, errlen) < 0) goto fail;
        if (cs_hub_put(*hc, key, blob, len) < 0) {
            snprintf(err, errlen, "lost the hub");
            goto fail;
        }
    }
    watch w = {.link = s->link};
    long got = cs_hub_get(*hc, key, blob, len, cs_now() + 1e9, link_over, &w, err, errlen);
    if (got != (long)len) {
        if (got >= 0) snprintf(err, errlen, "the job's blob has %ld bytes, not %zu", got, len);
        else if (w.why[0]) snprintf(err, errlen, "%s", w.why);
        goto fail;
    }
    return 0;
fail:
    cs_hub_client_free(*hc);
    cs_hub_free(*hub);
    *hc = NULL;
    *hub = NULL;
    return -1;
}
