/* stage.h -- device tensors on engines that move host memory only (thread,
 * tcp): their bytes go through a host copy, as Gloo stages CUDA tensors.
 *
 * This is the one place that decides and does it. A point-to-point request
 * whose tensor lives on a device gets a host "stage" when it is posted (a
 * send's holds the tensor's bytes at that moment); the engines read and write
 * cs_request_payload(), which is the stage when there is one; a receive's
 * stage is copied to the device when its owner sees it complete (wait,
 * wait_all, is_completed). A collective stages each device tensor it is
 * given on entry and copies the outputs back when it succeeds. An engine with
 * CS_ENGINE_DEVICE (nccl) takes device tensors as they are: nothing here
 * happens on it. Host tensors cost one test.
 *
 * Errors: CS_ETRANSPORT with the device's message in the rank's errmsg.
 */
#ifndef CS_STAGE_H
#define CS_STAGE_H

#include <stdbool.h>

#include "api.h"

/* t lives on a device that r's engine cannot reach. */
bool cs_stage_needed(const cs_rank *r, const cs_tensor *t);
/* The rule itself: bytes on device (CS_DEVICE_CPU: the host) on an engine
 * with capabilities caps (engine.h's CS_ENGINE_*). */
bool cs_stage_wanted(int device, unsigned caps);

/* ---- point to point (api.c) */
/* q was just made for r: give it a stage if its tensor needs one (for a send,
 * filled from the device now). */
int cs_stage_post(cs_rank *r, cs_request *q, bool send);
/* Where the engines read or write q's bytes. */
void *cs_request_payload(const cs_request *q);
/* q is seen complete by its owner: a staged receive's bytes go to the device
 * (once). */
int cs_stage_done(cs_rank *r, cs_request *q);

/* ---- collectives (collectives.c): a set of staged tensors for one call */
typedef struct cs_stage_set {
    int n, cap;
    struct cs_staged { cs_tensor *dev, *host; bool output; } *v;
    cs_tensor **lists[4]; /* host arrays handed out by cs_stage_list */
    int nlists;
} cs_stage_set;

/* Replace *t by a host copy when it needs one; output: copy it back at the end. */
int cs_stage_tensor(cs_rank *r, cs_stage_set *s, cs_tensor **t, bool output);
/* The same for a list of n tensors: *ts becomes a new array of host tensors
 * (the caller's array is left alone) when any of them needs staging. */
int cs_stage_list(cs_rank *r, cs_stage_set *s, cs_tensor ***ts, int n, bool output);
/* End of the call: when rc is CS_OK copy the outputs back to their devices;
 * free everything. Returns rc, or the copy's error. */
int cs_stage_end(cs_rank *r, cs_stage_set *s, int rc);

#endif
