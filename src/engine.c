/* engine.c -- the table of engines: every place that needs an engine looks it
 * up here by name (the CLI, the launchers, the rank process, the world).
 *
 * Each row is defined in its engine's own file (engine_NAME.c), next to the
 * code it describes; this file only lists them. An engine that needs an
 * optional library is listed only when the build found it, e.g.
 *
 *     #ifdef HAVE_NCCL
 *         &cs_engine_nccl,
 *     #endif
 */
#include <string.h>

#include "config.h"
#include "engine.h"

#include <pthread.h>
#include <stdio.h>

#include "world.h"

extern const cs_engine_kind cs_engine_thread;
extern const cs_engine_kind cs_engine_tcp;
#ifdef HAVE_NCCL
extern const cs_engine_kind cs_engine_nccl;
extern const cs_engine_kind cs_engine_nccl_procs;
#endif

static const cs_engine_kind *const engines[] = {
    &cs_engine_thread, /* the first row is the default */
    &cs_engine_tcp,
#ifdef HAVE_NCCL
    &cs_engine_nccl,
    &cs_engine_nccl_procs,
#endif
};

/* Engines that need a library this build may lack, and what to say then. */
static const struct {
    const char *name, *why;
} optional[] = {
    {"nccl", "this build lacks the nccl engine: configure found no CUDA toolkit with NCCL "
             "(./configure --with-cuda=DIR); use --engine thread or --engine tcp"},
    {"nccl-mp", "this build lacks the nccl engine: configure found no CUDA toolkit with NCCL "
                "(./configure --with-cuda=DIR); use --engine tcp"},
};

#define NENGINES ((int)(sizeof engines / sizeof engines[0]))

const cs_engine_kind *cs_engine_at(int i) {
    return i >= 0 && i < NENGINES ? engines[i] : NULL;
}

const cs_engine_kind *cs_engine_find(const char *name) {
    if (!name) return engines[0];
    for (int i = 0; i < NENGINES; i++)
        if (strcmp(engines[i]->name, name) == 0) return engines[i];
    return NULL;
}

const char *cs_engine_missing(const char *name) {
    if (!name || cs_engine_find(name)) return NULL;
    for (size_t i = 0; i < sizeof optional / sizeof optional[0]; i++)
        if (strcmp(optional[i].name, name) == 0) return optional[i].why;
    return NULL;
}

void cs_engine_print_table(FILE *f) {
    fprintf(f, "engines (commsim run --engine NAME):\n");
    for (int i = 0; i < NENGINES; i++)
        fprintf(f, "  %-8s %s%s\n", engines[i]->name, engines[i]->summary,
                i == 0 ? " (the default)" : "");
    fprintf(f, "\n  %-8s %-10s %-7s %-13s %-5s %s\n", "engine", "ranks", "device",
            "native coll.", "tags", "any-source");
    for (int i = 0; i < NENGINES; i++) {
        unsigned c = engines[i]->caps;
#define YN(cap) (c & (cap) ? "yes" : "no")
        fprintf(f, "  %-8s %-10s %-7s %-13s %-5s %s\n", engines[i]->name,
                c & CS_ENGINE_PROCESSES ? "processes" : "threads", YN(CS_ENGINE_DEVICE),
                YN(CS_ENGINE_NATIVE_COLL), YN(CS_ENGINE_TAGS), YN(CS_ENGINE_ANY_SOURCE));
#undef YN
    }
}

void cs_engine_break(cs_engine *e, cs_rank *r, int err, const char *why) {
    static pthread_mutex_t once = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&once);
    if (!atomic_load(&e->broken)) {
        e->broken_err = err;
        snprintf(e->broken_why, sizeof e->broken_why, "%s", why);
        atomic_store(&e->broken, 1);
    }
    pthread_mutex_unlock(&once);
    atomic_fetch_add(&r->futex, 1);
    cs_rank_wake(r);
}
