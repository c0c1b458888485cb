/* deferred.c -- the report's two streams as cookie FILEs that append to one
 * list of chunks, so that output and warnings keep their order when printed
 * after the screen closes. */
#include "deferred.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

typedef struct chunk {
    struct chunk *next;
    bool err;
    size_t len;
    char text[];
} chunk;

typedef struct stream {
    struct cs_deferred *d;
    bool err;
} stream;

struct cs_deferred {
    FILE *out, *err;       /* the real streams */
    FILE *fout, *ferr;     /* the report writes here */
    stream sout, serr;
    chunk *head, **tail;
    bool released;
    cs_report rep;
};

static ssize_t cookie_write(void *c, const char *buf, size_t len) {
    stream *s = c;
    cs_deferred *d = s->d;
    if (d->released) {
        FILE *f = s->err ? d->err : d->out;
        size_t n = fwrite(buf, 1, len, f);
        fflush(f);
        return (ssize_t)n;
    }
    chunk *k = malloc(sizeof *k + len);
    if (!k) return -1;
    *k = (chunk){.err = s->err, .len = len};
    memcpy(k->text, buf, len);
    *d->tail = k;
    d->tail = &k->next;
    return (ssize_t)len;
}

static FILE *open_stream(stream *s) {
    FILE *f = fopencookie(s, "w", (cookie_io_functions_t){.write = cookie_write});
    if (f) setvbuf(f, NULL, _IONBF, 0); /* every write in order, as it happens */
    return f;
}

cs_deferred *cs_deferred_new(int world, FILE *out, FILE *err) {
    cs_deferred *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->out = out, d->err = err;
    d->sout = (stream){d, false}, d->serr = (stream){d, true};
    d->tail = &d->head;
    d->fout = open_stream(&d->sout);
    d->ferr = open_stream(&d->serr);
    if (!d->fout || !d->ferr) {
        cs_deferred_free(d);
        return NULL;
    }
    d->rep = (cs_report){.out = d->fout, .err = d->ferr, .world = world};
    return d;
}

void cs_deferred_free(cs_deferred *d) {
    if (!d) return;
    if (d->fout) fclose(d->fout);
    if (d->ferr) fclose(d->ferr);
    for (chunk *k = d->head, *next; k; k = next) next = k->next, free(k);
    free(d);
}

cs_sink cs_deferred_sink(cs_deferred *d) { return cs_report_sink(&d->rep); }

void cs_deferred_release(cs_deferred *d) {
    if (!d || d->released) return;
    for (chunk *k = d->head, *next; k; k = next) {
        next = k->next;
        FILE *f = k->err ? d->err : d->out;
        fwrite(k->text, 1, k->len, f);
        fflush(f);
        free(k);
    }
    d->head = NULL;
    d->tail = &d->head;
    d->released = true;
}
