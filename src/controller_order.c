/* controller_order.c -- the controller hands the ranks' events to the bus in
 * an order that could have happened.
 *
 * Each rank's events arrive in order on its own connection, but the ranks'
 * streams race each other: a receiver's match of a message can arrive before
 * the sender's post of it. The monitor, the trace and a replay must never see
 * a match of a request not yet posted, so such an event is held back, with
 * every later event of its rank, until the post it refers to has been
 * delivered. Likewise a rendezvous send completes only after its match: its
 * completion is held until the receiver's match of it has been delivered (the
 * race detector learns at the completion what the match told the sender). In
 * a ping-pong half the events are held (each rank's batch comes on its own
 * tick), so a held event is a struct copy into a reused node, not a malloc
 * and a deep copy.
 */
#include <stdlib.h>
#include <string.h>

#include "controller_internal.h"
#include "errmsg.h"
#include "event_schema.h"
#include "xalloc.h"

#define SPARE_MAX 4096 /* released held events kept for reuse */

static void held_free(held *h) {
    if (h->owned) cs_event_free(&h->ev);
    free(h);
}

/* Done with h: kept for the next event held back (holding is common). */
static void held_release(controller *k, held *h) {
    if (k->nspare >= SPARE_MAX) {
        held_free(h);
        return;
    }
    if (h->owned) cs_event_free(&h->ev);
    h->owned = false;
    h->next = k->spare;
    k->spare = h;
    k->nspare++;
}

/* Whether ev points at nothing but a few request ids (no string, no group):
 * h then holds all of it. The schema is constant: the loop folds. */
static bool event_flat(const cs_event *ev, const held *h) {
    _Pragma("GCC unroll 64")
    for (int i = 0; i < CS_F_NFIELDS; i++) {
        const cs_field *f = &cs_fields[i];
        if (f->kind == CS_FK_STR && !f->alias && CS_CFIELD(ev, f, char *)) return false;
    }
    return !ev->group && (!ev->reqs || (ev->nreqs >= 0 && (size_t)ev->nreqs <= sizeof h->reqs / sizeof h->reqs[0]));
}

/* A rendezvous send's entry once matched: it stays, marked, until the entries
 * before it are gone or the list is compacted, so that a match costs no move
 * of the entries after it (sends are matched in any order, mostly the
 * oldest first). Request ids are below 2^63. */
#define RDV_MATCHED (UINT64_C(1) << 63)

/* Where id is, or would go, in p's rendezvous sends. */
static size_t rdv_at(const prank *p, uint64_t id) {
    size_t lo = p->rdv_head, hi = p->nrdv;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((p->rdv[mid] & ~RDV_MATCHED) < id) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static bool rdv_has(const prank *p, uint64_t id) {
    size_t i = rdv_at(p, id);
    return i < p->nrdv && p->rdv[i] == id;
}

/* Drop the matched entries: from the front at once, elsewhere once they are
 * most of the list (each entry is moved a bounded number of times). */
static void rdv_trim(prank *p) {
    while (p->rdv_head < p->nrdv && (p->rdv[p->rdv_head] & RDV_MATCHED)) p->rdv_head++;
    if (p->rdv_head == p->nrdv) {
        p->rdv_head = p->nrdv = 0;
        return;
    }
    if (p->nrdv - p->rdv_head <= 2 * p->rdv_live + 16) return;
    size_t n = 0;
    for (size_t i = p->rdv_head; i < p->nrdv; i++)
        if (!(p->rdv[i] & RDV_MATCHED)) p->rdv[n++] = p->rdv[i];
    p->rdv_head = 0;
    p->nrdv = n;
}

static bool deliverable(const controller *k, const cs_event *ev) {
    if (ev->type == CS_EV_COMPLETE)
        return !cs_op_is_send(ev->op) || !rdv_has(&k->r[ev->rank], ev->req);
    return ev->type != CS_EV_MATCH || ev->peer < 0 || ev->peer >= k->world ||
           ev->peer_req <= k->r[ev->peer].posted_max;
}

/* Note a rendezvous send posted, or its match: the list of the ones whose
 * completion must wait. Posts come in ascending ids: appended. */
static void track_rdv(controller *k, const cs_event *ev) {
    if (ev->type == CS_EV_POST && cs_op_is_send(ev->op) && !ev->eager) {
        prank *p = &k->r[ev->rank];
        if (ev->req & RDV_MATCHED) return; /* no rank gets that far */
        if (p->nrdv > p->rdv_head && (p->rdv[p->nrdv - 1] & ~RDV_MATCHED) >= ev->req)
            return; /* not ascending: never held */
        if (p->nrdv == p->rdv_cap) {
            if (p->rdv_head > 0 && p->rdv_head >= p->rdv_cap / 2) { /* half of it free at the front */
                memmove(p->rdv, p->rdv + p->rdv_head, (p->nrdv - p->rdv_head) * sizeof *p->rdv);
                p->nrdv -= p->rdv_head;
                p->rdv_head = 0;
            } else {
                p->rdv_cap = p->rdv_cap ? p->rdv_cap * 2 : 16;
                p->rdv = cs_xrealloc(p->rdv, p->rdv_cap * sizeof *p->rdv, "a rank's rendezvous sends");
            }
        }
        p->rdv[p->nrdv++] = ev->req;
        p->rdv_live++;
    } else if (ev->type == CS_EV_MATCH && ev->peer >= 0 && ev->peer < k->world) {
        prank *p = &k->r[ev->peer];
        size_t i = rdv_at(p, ev->peer_req);
        if (i < p->nrdv && p->rdv[i] == ev->peer_req) {
            p->rdv[i] |= RDV_MATCHED;
            p->rdv_live--;
            rdv_trim(p);
        }
    }
}

static void deliver(controller *k, const cs_event *ev) {
    prank *p = &k->r[ev->rank];
    if (ev->type == CS_EV_POST && ev->req > p->posted_max) p->posted_max = ev->req;
    track_rdv(k, ev);
    cs_bus_forward(&k->c.bus, ev);
    if (ev->type == CS_EV_ERROR && ev->status > 0) controller_abort(k, ev->status);
}

/* Deliver held events whose posts have arrived (all of them when force). */
static void release_held(controller *k, bool force) {
    bool progress = true;
    while (k->nheld && progress) {
        progress = false;
        for (int i = 0; i < k->world; i++) {
            prank *p = &k->r[i];
            while (p->hh && (force || deliverable(k, &p->hh->ev))) {
                held *h = p->hh;
                p->hh = h->next;
                if (!p->hh) p->ht = NULL;
                k->nheld--;
                deliver(k, &h->ev);
                held_release(k, h);
                progress = true;
            }
        }
    }
}

void controller_forward(controller *k, const cs_event *ev) {
    prank *p = &k->r[ev->rank];
    if (!p->hh && deliverable(k, ev)) {
        deliver(k, ev);
        if (k->nheld && (ev->type == CS_EV_POST || ev->type == CS_EV_MATCH)) release_held(k, false);
        return;
    }
    held *h = k->spare;
    if (h) {
        k->spare = h->next;
        k->nspare--;
    } else {
        h = cs_xcalloc(1, sizeof *h, "an event held back for its post");
    }
    h->next = NULL;
    if (event_flat(ev, h)) {
        h->ev = *ev;
        h->owned = false;
        if (ev->reqs) {
            memcpy(h->reqs, ev->reqs, (size_t)ev->nreqs * sizeof *ev->reqs);
            h->ev.reqs = h->reqs;
        }
    } else {
        if (cs_event_copy(&h->ev, ev) < 0) cs_oom("an event held back for its post", sizeof *h);
        h->owned = true;
    }
    if (p->ht) p->ht->next = h;
    else p->hh = h;
    p->ht = h;
    k->nheld++;
}

void controller_release_held(controller *k) { release_held(k, true); }

void controller_order_free(controller *k) {
    for (int i = 0; k->r && i < k->world; i++) {
        free(k->r[i].rdv);
        k->r[i].rdv = NULL;
        k->r[i].nrdv = k->r[i].rdv_cap = k->r[i].rdv_head = k->r[i].rdv_live = 0;
    }
    for (int i = 0; k->r && i < k->world; i++)
        for (held *h = k->r[i].hh; h;) {
            held *next = h->next;
            held_free(h);
            h = next;
        }
    while (k->spare) {
        held *h = k->spare;
        k->spare = h->next;
        free(h);
    }
}
