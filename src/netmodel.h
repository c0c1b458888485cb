/* netmodel.h -- the network model of modelled time (--net): none, a preset,
 * or alpha=..,bandwidth=..[,flops=..]. Pure: parsing, formatting and the
 * cost of one transmission. The clocks that use it are in vclock.[ch];
 * docs/time-model.md states the model and the presets' sources. */
#ifndef CS_NETMODEL_H
#define CS_NETMODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cs_netmodel {
    bool on;             /* false: "none", real time as without a model */
    uint64_t alpha_ns;   /* latency of a message in flight, nanoseconds */
    uint64_t bandwidth;  /* bytes per second of one link direction (> 0) */
    uint64_t flops;      /* floating-point operations per second; 0: arithmetic is free */
    char name[32];       /* the preset's name, "custom", or "none" */
} cs_netmodel;

/* One preset: its name, figures and where they come from (help, docs). */
typedef struct cs_netmodel_preset {
    const char *name;
    const char *spec;    /* as --net would spell it: "alpha=..,bandwidth=.." */
    const char *what;    /* one line: the hardware and the source of the figures */
} cs_netmodel_preset;

extern const cs_netmodel_preset cs_netmodel_presets[];
extern const int cs_netmodel_npresets;

/* Parse a --net value or a header's net: "none", a preset name, or
 * "alpha=5us,bandwidth=10GB/s[,flops=1e12]". 0, or -1 with a message in err. */
int cs_netmodel_parse(const char *s, cs_netmodel *m, char *err, size_t errlen);
/* The model as --net would take it back: "none", the preset's name, or its
 * alpha=..,bandwidth=..[,flops=..] spelling. */
const char *cs_netmodel_format(const cs_netmodel *m, char *buf, size_t len);
/* B/bandwidth in whole nanoseconds, rounded up (so a non-empty message never
 * takes no time). */
uint64_t cs_netmodel_xfer_ns(const cs_netmodel *m, size_t bytes);
/* The time n floating-point operations take, nanoseconds rounded up; 0 when
 * the model sets no rate. */
uint64_t cs_netmodel_flops_ns(const cs_netmodel *m, uint64_t n);
/* "12.345 us" style: the shortest exact decimal of ns in the largest unit
 * that keeps it at least 1 (ns, us, ms, s). */
const char *cs_vt_format(uint64_t ns, char *buf, size_t len);

#endif
