/* deferred.h -- the plain report of a run the visualizer shows, held while
 * the screen is open and printed when it closes: every rank's output, every
 * warning and error, in the order they happened, exactly as --no-tui prints
 * them. After the release the report goes straight through. */
#ifndef CS_DEFERRED_H
#define CS_DEFERRED_H

#include <stdio.h>

#include "events.h"

typedef struct cs_deferred cs_deferred;

cs_deferred *cs_deferred_new(int world, FILE *out, FILE *err);
void cs_deferred_free(cs_deferred *d);
cs_sink cs_deferred_sink(cs_deferred *d);
/* Print what was held and pass the rest through. Call with the sink's bus
 * locked (or no rank running). */
void cs_deferred_release(cs_deferred *d);

#endif
