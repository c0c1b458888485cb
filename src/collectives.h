/* collectives.h -- collectives and process groups, written on the point-to-point
 * layer of api.h so that every engine runs them and every internal message is
 * an ordinary post/match/complete the visualizer draws.
 *
 * A group's internal traffic uses the group's own context (1 for the world,
 * 2, 3, ... for dist.new_group in creation order), so it never matches a user
 * receive (context 0) or another group's traffic; the tag of every internal
 * message is the number of the collective on that group (0, 1, 2, ...), so two
 * successive collectives never mix either. Each call emits a `coll` event on
 * entry and on leaving, carrying what the ranks must agree on (name, root,
 * count, dtype, reduce op) and the algorithm; the monitor compares them.
 *
 * Calls are synchronous: an async_op call runs its algorithm to completion
 * before returning (as every operation of one NCCL stream runs in issue order),
 * and its work handle is complete at once. See docs/collectives.md.
 *
 * Errors are those of api.h: CS_EARG with a message in cs_rank_errmsg() naming
 * the function ("dist.all_gather: ..."), CS_EABORT when the run ends.
 */
#ifndef CS_COLLECTIVES_H
#define CS_COLLECTIVES_H

#include <stdbool.h>

#include "api.h"

typedef enum {
    CS_RED_SUM = 0, CS_RED_AVG, CS_RED_PRODUCT, CS_RED_MIN, CS_RED_MAX,
    CS_RED_BAND, CS_RED_BOR, CS_RED_BXOR, CS_RED_NOPS
} cs_redop;

const char *cs_redop_name(cs_redop op); /* "SUM", ... as in ReduceOp */
bool cs_redop_parse(const char *s, cs_redop *out);

/* Which collective; its family decides the algorithms it can use. */
typedef enum {
    CS_COLL_BROADCAST = 0, CS_COLL_REDUCE, CS_COLL_ALL_REDUCE, CS_COLL_ALL_GATHER,
    CS_COLL_ALL_GATHER_INTO_TENSOR, CS_COLL_GATHER, CS_COLL_SCATTER, CS_COLL_REDUCE_SCATTER,
    CS_COLL_REDUCE_SCATTER_TENSOR, CS_COLL_ALL_TO_ALL, CS_COLL_ALL_TO_ALL_SINGLE, CS_COLL_BARRIER,
    CS_COLL_NKINDS
} cs_coll_kind;

/* The names --algo takes: one per family (all_gather_into_tensor belongs to
 * all_gather, reduce_scatter_tensor to reduce_scatter, all_to_all_single to
 * all_to_all). */
typedef enum {
    CS_FAM_BROADCAST = 0, CS_FAM_REDUCE, CS_FAM_ALL_REDUCE, CS_FAM_ALL_GATHER, CS_FAM_GATHER,
    CS_FAM_SCATTER, CS_FAM_REDUCE_SCATTER, CS_FAM_ALL_TO_ALL, CS_FAM_BARRIER, CS_FAM_N
} cs_coll_family;

typedef enum {
    CS_ALGO_DEFAULT = 0, CS_ALGO_RING, CS_ALGO_RECURSIVE_DOUBLING, CS_ALGO_REDUCE_BROADCAST,
    CS_ALGO_TREE, CS_ALGO_LINEAR, CS_ALGO_DIRECT, CS_ALGO_DISSEMINATION, CS_ALGO_RECURSIVE_HALVING,
    CS_ALGO_NCCL, /* the engine's own (NCCL's), on an engine with native collectives */
    CS_ALGO_N
} cs_coll_algo;

const char *cs_coll_name(cs_coll_kind k);           /* "all_reduce", ... */
cs_coll_family cs_coll_family_of(cs_coll_kind k);
const char *cs_coll_family_name(cs_coll_family f); /* the name --algo takes */
const char *cs_coll_algo_name(cs_coll_algo a);      /* "ring", ... */
/* The default of family f for a call of `bytes` (the whole buffer, as
 * nccl-tests counts it) on a group of n ranks: the table in coll_choice.c,
 * which docs/collectives.md shows. */
cs_coll_algo cs_coll_pick(cs_coll_family f, size_t bytes, int n);
/* Is algo one of family f's? */
bool cs_coll_algo_allowed(cs_coll_family f, cs_coll_algo a);
/* Parse algo name s for family f; on failure write a message listing the
 * family's algorithms. */
bool cs_coll_algo_parse(cs_coll_family f, const char *s, cs_coll_algo *out, char *err,
                        size_t errlen);
/* "all_reduce=ring,broadcast=tree" into algos[family] (entries not named are
 * left alone). Returns false with a message naming the bad entry. */
bool cs_coll_algos_parse(const char *spec, unsigned char *algos, char *err, size_t errlen);
/* One line per family, "  broadcast       tree (default), linear"; a family
 * whose default depends on the size lists its algorithms, then the default
 * on a line of its own. */
void cs_coll_algos_help(char *buf, size_t len);

/* ---- groups. Every rank of the world creates every group, in the same order
 * (as torch requires), members or not; the creation order gives the context. */
typedef struct cs_group {
    int ctx;        /* context of its internal traffic */
    int size;
    int rank;       /* this rank's rank in the group; -1 when not a member */
    int *ranks;     /* group rank -> world rank; NULL for the world (identity) */
    unsigned seq;   /* collectives this rank has called on the group */
} cs_group;

#define CS_WORLD_CTX 1

/* A new group of the given world ranks, in that order (group rank i is
 * ranks[i]). CS_EARG for an empty list, a rank outside the world or a
 * repeated rank; CS_ENOMEM. Free with cs_group_free. */
int cs_group_new(cs_rank *r, const int *ranks, int n, cs_group **out);
void cs_group_free(cs_group *g);
/* The group rank of world rank wr, -1 if it is not a member. */
int cs_group_rank_of(const cs_group *g, int wr);

/* ---- a call: what every collective takes besides its buffers */
typedef struct cs_coll_call {
    cs_group *group;     /* NULL: the world (the rank's own world group is used) */
    cs_coll_algo algo;   /* CS_ALGO_DEFAULT: the run's choice (--algo), else the default */
    cs_redop op;         /* reducing collectives */
    int root;            /* world rank: broadcast/scatter src, reduce/gather dst */
    int line;
} cs_coll_call;

/* Tensors must be contiguous. Lists (all_gather, gather, scatter,
 * reduce_scatter, all_to_all) hold group-size tensors in group rank order; a
 * list that is not needed on this rank (gather and scatter off the root) may
 * be NULL with n 0. */
int cs_broadcast(cs_rank *r, cs_tensor *t, const cs_coll_call *c);
int cs_reduce(cs_rank *r, cs_tensor *t, const cs_coll_call *c);
int cs_all_reduce(cs_rank *r, cs_tensor *t, const cs_coll_call *c);
int cs_all_gather(cs_rank *r, cs_tensor **out, int nout, cs_tensor *in, const cs_coll_call *c);
int cs_all_gather_into_tensor(cs_rank *r, cs_tensor *out, cs_tensor *in, const cs_coll_call *c);
int cs_gather(cs_rank *r, cs_tensor *in, cs_tensor **list, int n, const cs_coll_call *c);
int cs_scatter(cs_rank *r, cs_tensor *out, cs_tensor **list, int n, const cs_coll_call *c);
int cs_reduce_scatter(cs_rank *r, cs_tensor *out, cs_tensor **in, int nin, const cs_coll_call *c);
int cs_reduce_scatter_tensor(cs_rank *r, cs_tensor *out, cs_tensor *in, const cs_coll_call *c);
int cs_all_to_all(cs_rank *r, cs_tensor **out, int nout, cs_tensor **in, int nin,
                  const cs_coll_call *c);
int cs_all_to_all_single(cs_rank *r, cs_tensor *out, cs_tensor *in, const cs_coll_call *c);
int cs_barrier(cs_rank *r, const cs_coll_call *c);

/* acc[i] = acc[i] op in[i] for n elements of dtype d (op not AVG: AVG is a
 * SUM followed by cs_coll_divide). Exposed for the tests' reference. */
void cs_coll_combine(cs_dtype d, cs_redop op, void *acc, const void *in, size_t n);

#endif
