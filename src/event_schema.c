/* event_schema.c -- the deep copy the event schema drives.
 * The table itself is in event_schema.h. */
#include "event_schema.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ---- the deep copy */

static void *dup_of(const void *p, size_t n, bool *ok) {
    void *d;
    if (!p || !n) return NULL;
    if (!(d = malloc(n))) *ok = false;
    else memcpy(d, p, n);
    return d;
}

int cs_event_copy(cs_event *dst, const cs_event *src) {
    bool ok = true;

    /* Every row runs even after a failure, so no pointer into src is left
     * behind for cs_event_free to release. */
    *dst = *src;
    for (int i = 0; i < CS_F_NFIELDS; i++) {
        const cs_field *f = &cs_fields[i];
        if (f->alias) continue;
        switch (f->kind) {
        case CS_FK_STR: {
            const char *s = CS_CFIELD(src, f, char *);
            CS_FIELD(dst, f, const char *) = s ? dup_of(s, strlen(s) + 1, &ok) : NULL;
            break;
        }
        case CS_FK_REQS:
            dst->nreqs = src->reqs && src->nreqs > 0 ? src->nreqs : 0;
            dst->reqs = dup_of(src->reqs, (size_t)dst->nreqs * sizeof *src->reqs, &ok);
            break;
        case CS_FK_GROUP:
            dst->ngroup = src->group && src->ngroup > 0 ? src->ngroup : 0;
            dst->group = dup_of(src->group, (size_t)dst->ngroup * sizeof *src->group, &ok);
            break;
        default: break; /* values: copied with the struct */
        }
    }
    if (!ok) {
        cs_event_free(dst);
        return -1;
    }
    return 0;
}

void cs_event_free(cs_event *ev) {
    if (!ev) return;
    for (int i = 0; i < CS_F_NFIELDS; i++) {
        const cs_field *f = &cs_fields[i];
        if (f->kind != CS_FK_STR || f->alias) continue;
        free((char *)CS_CFIELD(ev, f, char *));
        CS_FIELD(ev, f, const char *) = NULL;
    }
    free((uint64_t *)ev->reqs); /* the one CS_FK_REQS and CS_FK_GROUP members */
    free((int *)ev->group);
    ev->reqs = NULL, ev->group = NULL;
    ev->nreqs = ev->ngroup = 0;
}
