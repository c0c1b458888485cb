/* coll_internal.h -- what collectives.c (arguments, events, groups),
 * coll_choice.c (which algorithm) and coll_algos.c (the algorithms) share.
 * Not a public interface. */
#ifndef CS_COLL_INTERNAL_H
#define CS_COLL_INTERNAL_H

#include "collectives.h"
#include "engine.h"

/* One collective call as the algorithms see it: group ranks everywhere; the
 * world rank of group rank i is world_of(c, i). */
typedef struct cs_coll {
    cs_rank *r;
    const int *ranks; /* group rank -> world rank; NULL: identity */
    int n, me;        /* group size, this rank's group rank */
    int ctx, tag, line;
    cs_redop op;
    cs_dtype dtype;
    bool native;      /* run by the engine's own collectives (--algo nccl): AVG included */
    int device;       /* where scratch tensors live: CS_DEVICE_CPU, or the rank's GPU
                       * (CS_DEVICE_CURRENT) on an engine that moves device tensors only */
} cs_coll;

/* Algorithms. Tensors are contiguous and of c->dtype; blocks are n tensors in
 * group rank order. Reductions leave AVG's division to the caller. */
int cs_algo_broadcast(cs_coll *c, cs_coll_algo a, cs_tensor *t, int root);
/* acc holds this rank's contribution; on the root it ends with the result,
 * elsewhere it is scratch. */
int cs_algo_reduce(cs_coll *c, cs_coll_algo a, cs_tensor *acc, int root);
int cs_algo_all_reduce(cs_coll *c, cs_coll_algo a, cs_tensor *t);
int cs_algo_all_gather(cs_coll *c, cs_coll_algo a, cs_tensor **blocks, cs_tensor *in);
int cs_algo_gather(cs_coll *c, cs_tensor *in, cs_tensor **blocks, int root);
int cs_algo_scatter(cs_coll *c, cs_tensor *out, cs_tensor **blocks, int root);
int cs_algo_reduce_scatter(cs_coll *c, cs_coll_algo a, cs_tensor *out, cs_tensor **blocks);
int cs_algo_all_to_all(cs_coll *c, cs_tensor **outs, cs_tensor **ins);
int cs_algo_barrier(cs_coll *c);

/* Family f's algorithms and its default (coll_choice.c): "tree (default),
 * linear", or the list, then sep, then "default: ... up to 32 KiB, else ring". */
void cs_coll_algos_list(cs_coll_family f, char *buf, size_t len, const char *sep);

/* The n equal blocks of a contiguous tensor of n * k elements, as 1-D views
 * (blocks[] must hold n). Returns CS_OK or CS_ENOMEM. */
int cs_coll_split(cs_tensor *t, int n, cs_tensor **blocks);
void cs_coll_release_all(cs_tensor **ts, int n);

#endif
