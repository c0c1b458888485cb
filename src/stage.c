/* stage.c -- host copies of device tensors for the engines that move host
 * memory only (see stage.h).
 */
#include "stage.h"

#include <stdio.h>
#include <stdlib.h>

#include "world.h"

bool cs_stage_wanted(int device, unsigned caps) {
    return device != CS_DEVICE_CPU && !(caps & CS_ENGINE_DEVICE);
}

bool cs_stage_needed(const cs_rank *r, const cs_tensor *t) {
    if (!t || !cs_tensor_on_device(t)) return false; /* the common case: no lookup */
    const cs_engine_kind *k = cs_engine_find(r->world->engine_name);
    return cs_stage_wanted(cs_tensor_device(t), k ? k->caps : 0);
}

static int device_error(cs_rank *r, const char *what) {
    snprintf(r->errmsg, sizeof r->errmsg, "staging a device tensor through host memory (%s): %s",
             what, cs_tensor_errmsg());
    return CS_ETRANSPORT;
}

/* A contiguous host tensor with t's dtype and shape, holding t's values when fill. */
static cs_tensor *host_copy(cs_rank *r, cs_tensor *t, bool fill) {
    cs_tensor *h = fill ? cs_tensor_to_device(NULL, t, CS_DEVICE_CPU)
                        : cs_tensor_new(NULL, t->dtype, t->ndim, t->shape);
    if (!h) device_error(r, fill ? "to the host" : "allocating");
    return h;
}

/* ---- point to point */

int cs_stage_post(cs_rank *r, cs_request *q, bool send) {
    if (!cs_stage_needed(r, q->buf)) return CS_OK;
    q->stage = host_copy(r, q->buf, send);
    return q->stage ? CS_OK : CS_ETRANSPORT;
}

void *cs_request_payload(const cs_request *q) {
    return cs_tensor_data(q->stage ? q->stage : q->buf);
}

int cs_stage_done(cs_rank *r, cs_request *q) {
    if (!q->stage || cs_op_is_send(q->op) || q->staged_back) return CS_OK;
    if (atomic_load(&q->state) != CS_REQ_DONE) return CS_OK;
    if (cs_tensor_copy_bytes(q->buf, q->stage) < 0) return device_error(r, "to the device");
    q->staged_back = true; /* a failure is tried again, and reported, by the next wait */
    return CS_OK;
}

/* ---- collectives */

static int add(cs_rank *r, cs_stage_set *s, cs_tensor **t, bool output) {
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 8;
        void *v = realloc(s->v, (size_t)cap * sizeof *s->v);
        if (!v) {
            snprintf(r->errmsg, sizeof r->errmsg, "out of memory staging device tensors");
            return CS_ENOMEM;
        }
        s->v = v, s->cap = cap;
    }
    /* filled even for an output: a rank that writes only part of it (or none)
     * must not copy stale host bytes back over the device's */
    cs_tensor *h = host_copy(r, *t, true);
    if (!h) return CS_ETRANSPORT;
    s->v[s->n++] = (struct cs_staged){*t, h, output};
    *t = h;
    return CS_OK;
}

int cs_stage_tensor(cs_rank *r, cs_stage_set *s, cs_tensor **t, bool output) {
    return cs_stage_needed(r, *t) ? add(r, s, t, output) : CS_OK;
}

int cs_stage_list(cs_rank *r, cs_stage_set *s, cs_tensor ***ts, int n, bool output) {
    bool any = false;
    for (int i = 0; i < n && !any; i++) any = cs_stage_needed(r, (*ts)[i]);
    if (!any) return CS_OK;
    if (s->nlists == (int)(sizeof s->lists / sizeof s->lists[0])) {
        snprintf(r->errmsg, sizeof r->errmsg, "too many tensor lists to stage in one call");
        return CS_EARG;
    }
    cs_tensor **copy = malloc((size_t)n * sizeof *copy);
    if (!copy) {
        snprintf(r->errmsg, sizeof r->errmsg, "out of memory staging device tensors");
        return CS_ENOMEM;
    }
    s->lists[s->nlists++] = copy;
    for (int i = 0; i < n; i++) {
        copy[i] = (*ts)[i];
        int rc = cs_stage_tensor(r, s, &copy[i], output);
        if (rc != CS_OK) return rc;
    }
    *ts = copy;
    return CS_OK;
}

int cs_stage_end(cs_rank *r, cs_stage_set *s, int rc) {
    for (int i = 0; i < s->n; i++) {
        struct cs_staged *e = &s->v[i];
        if (rc == CS_OK && e->output && cs_tensor_copy_(e->dev, e->host) < 0)
            rc = device_error(r, "to the device");
        cs_tensor_release(e->host);
    }
    for (int i = 0; i < s->nlists; i++) free(s->lists[i]);
    free(s->v);
    *s = (cs_stage_set){0};
    return rc;
}
