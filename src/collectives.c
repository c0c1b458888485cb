/* collectives.c -- the collective API: names, groups, argument checks, coll
 * events, and the reduction kernels. Which algorithm a call runs is
 * coll_choice.c's; the algorithms themselves are in coll_algos.c. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_internal.h"
#include "stage.h"
#include "world.h"

/* ---- names */

static const char *const redop_names[CS_RED_NOPS] = {"SUM", "AVG", "PRODUCT", "MIN",
                                                     "MAX", "BAND", "BOR", "BXOR"};

const char *cs_redop_name(cs_redop op) { return (unsigned)op < CS_RED_NOPS ? redop_names[op] : "?"; }

bool cs_redop_parse(const char *s, cs_redop *out) {
    for (int i = 0; i < CS_RED_NOPS; i++)
        if (strcmp(s, redop_names[i]) == 0) {
            *out = (cs_redop)i;
            return true;
        }
    return false;
}

static const struct {
    const char *name;
    cs_coll_family family;
} kinds[CS_COLL_NKINDS] = {
    [CS_COLL_BROADCAST] = {"broadcast", CS_FAM_BROADCAST},
    [CS_COLL_REDUCE] = {"reduce", CS_FAM_REDUCE},
    [CS_COLL_ALL_REDUCE] = {"all_reduce", CS_FAM_ALL_REDUCE},
    [CS_COLL_ALL_GATHER] = {"all_gather", CS_FAM_ALL_GATHER},
    [CS_COLL_ALL_GATHER_INTO_TENSOR] = {"all_gather_into_tensor", CS_FAM_ALL_GATHER},
    [CS_COLL_GATHER] = {"gather", CS_FAM_GATHER},
    [CS_COLL_SCATTER] = {"scatter", CS_FAM_SCATTER},
    [CS_COLL_REDUCE_SCATTER] = {"reduce_scatter", CS_FAM_REDUCE_SCATTER},
    [CS_COLL_REDUCE_SCATTER_TENSOR] = {"reduce_scatter_tensor", CS_FAM_REDUCE_SCATTER},
    [CS_COLL_ALL_TO_ALL] = {"all_to_all", CS_FAM_ALL_TO_ALL},
    [CS_COLL_ALL_TO_ALL_SINGLE] = {"all_to_all_single", CS_FAM_ALL_TO_ALL},
    [CS_COLL_BARRIER] = {"barrier", CS_FAM_BARRIER},
};

const char *cs_coll_name(cs_coll_kind k) { return (unsigned)k < CS_COLL_NKINDS ? kinds[k].name : "?"; }
cs_coll_family cs_coll_family_of(cs_coll_kind k) { return kinds[k].family; }

/* ---- groups */

int cs_group_new(cs_rank *r, const int *ranks, int n, cs_group **out) {
    int world = cs_rank_world_size(r);
    if (n < 1) return snprintf(r->errmsg, sizeof r->errmsg, "dist.new_group: the list of ranks is empty"), CS_EARG;
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= world) {
            snprintf(r->errmsg, sizeof r->errmsg,
                     "dist.new_group: rank %d is outside the world (ranks 0 to %d)", ranks[i], world - 1);
            return CS_EARG;
        }
        for (int j = 0; j < i; j++)
            if (ranks[j] == ranks[i]) {
                snprintf(r->errmsg, sizeof r->errmsg, "dist.new_group: rank %d is listed twice",
                         ranks[i]);
                return CS_EARG;
            }
    }
    cs_group *g = calloc(1, sizeof *g);
    int *copy = malloc((size_t)n * sizeof *copy);
    if (!g || !copy) {
        free(g);
        free(copy);
        return CS_ENOMEM;
    }
    memcpy(copy, ranks, (size_t)n * sizeof *copy);
    /* Contexts 0 (user) and 1 (world) are taken; every rank counts the same way. */
    *g = (cs_group){.ctx = CS_WORLD_CTX + 1 + r->ngroups++, .size = n, .ranks = copy};
    g->rank = cs_group_rank_of(g, r->rank);
    *out = g;
    return CS_OK;
}

void cs_group_free(cs_group *g) {
    if (!g) return;
    free(g->ranks);
    free(g);
}

int cs_group_rank_of(const cs_group *g, int wr) {
    if (!g->ranks) return wr >= 0 && wr < g->size ? wr : -1;
    for (int i = 0; i < g->size; i++)
        if (g->ranks[i] == wr) return i;
    return -1;
}

/* ---- the reduction kernels */

/* One function per element type, its buffers restrict: acc and in never
 * overlap (in is a received block or another tensor). Blocks of a fixed
 * length are what the compiler turns into vector instructions at -O2; the
 * rest goes one by one. Each element is combined on its own either way, so
 * the results are those of a plain loop, bit for bit. */
#define COMBINE_BLOCK 16
#define COMBINE_EACH(T, EXPR)                                                   \
    do {                                                                        \
        for (; n >= COMBINE_BLOCK; n -= COMBINE_BLOCK, a += COMBINE_BLOCK, b += COMBINE_BLOCK) \
            for (int i = 0; i < COMBINE_BLOCK; i++) a[i] = (T)(EXPR);           \
        for (size_t i = 0; i < n; i++) a[i] = (T)(EXPR);                        \
    } while (0)

#define COMBINE_ARITH(T)                                                        \
    switch (op) {                                                               \
    case CS_RED_PRODUCT: COMBINE_EACH(T, a[i] * b[i]); break;                   \
    case CS_RED_MIN: COMBINE_EACH(T, b[i] < a[i] ? b[i] : a[i]); break;         \
    case CS_RED_MAX: COMBINE_EACH(T, b[i] > a[i] ? b[i] : a[i]); break;         \
    default: COMBINE_EACH(T, a[i] + b[i]); break;                               \
    }

#define COMBINE_INT(T)                                                          \
    switch (op) {                                                               \
    case CS_RED_BAND: COMBINE_EACH(T, a[i] & b[i]); break;                      \
    case CS_RED_BOR: COMBINE_EACH(T, a[i] | b[i]); break;                       \
    case CS_RED_BXOR: COMBINE_EACH(T, a[i] ^ b[i]); break;                      \
    default: COMBINE_ARITH(T)                                                   \
    }

#define COMBINE_FN(NAME, T, KIND)                                               \
    static void NAME(cs_redop op, T *restrict a, const T *restrict b, size_t n) { \
        KIND(T)                                                                 \
    }

COMBINE_FN(combine_f32, float, COMBINE_ARITH)
COMBINE_FN(combine_f64, double, COMBINE_ARITH)
COMBINE_FN(combine_u32, uint32_t, COMBINE_ARITH)
COMBINE_FN(combine_i32, int32_t, COMBINE_INT)
COMBINE_FN(combine_u64, uint64_t, COMBINE_ARITH)
COMBINE_FN(combine_i64, int64_t, COMBINE_INT)
COMBINE_FN(combine_u8, uint8_t, COMBINE_INT)

/* Integer sums and products wrap as torch's do: compute them unsigned. */
void cs_coll_combine(cs_dtype d, cs_redop op, void *acc, const void *in, size_t n) {
    bool wraps = op == CS_RED_SUM || op == CS_RED_PRODUCT;
    switch (d) {
    case CS_FLOAT32: combine_f32(op, acc, in, n); break;
    case CS_FLOAT64: combine_f64(op, acc, in, n); break;
    case CS_INT32: wraps ? combine_u32(op, acc, in, n) : combine_i32(op, acc, in, n); break;
    case CS_INT64: wraps ? combine_u64(op, acc, in, n) : combine_i64(op, acc, in, n); break;
    case CS_UINT8: combine_u8(op, acc, in, n); break;
    default: break;
    }
}

static void divide(cs_tensor *t, int n) {
    if (cs_tensor_on_device(t)) {
        cs_tensor_binop_(CS_DIV, t, NULL, (double)n);
        return;
    }
    size_t k = (size_t)cs_tensor_numel(t);
    if (t->dtype == CS_FLOAT32)
        for (float *p = cs_tensor_data(t); k--; p++) *p /= (float)n;
    else if (t->dtype == CS_FLOAT64)
        for (double *p = cs_tensor_data(t); k--; p++) *p /= (double)n;
}

/* ---- argument checks: each returns CS_EARG with the message in r->errmsg */

static int fail(cs_rank *r, cs_coll_kind k, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(cs_rank *r, cs_coll_kind k, const char *fmt, ...) {
    int o = snprintf(r->errmsg, sizeof r->errmsg, "dist.%s: ", kinds[k].name);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->errmsg + o, sizeof r->errmsg - (size_t)o, fmt, ap);
    va_end(ap);
    return CS_EARG;
}

/* A call being set up: the resolved group, algorithm and its event. */
typedef struct call {
    cs_coll_kind kind;
    cs_coll c;
    cs_coll_algo algo;
    unsigned *seq;
    int root;       /* world rank, -1 */
    size_t count, bytes;
    bool reduces;
    const int *group;
    int ngroup;
} call;

static void group_str(const cs_coll *c, char *buf, size_t len) {
    if (!c->ranks) {
        snprintf(buf, len, "the world");
        return;
    }
    size_t o = (size_t)snprintf(buf, len, "ranks [");
    for (int i = 0; i < c->n && o < len; i++)
        o += (size_t)snprintf(buf + o, len - o, i ? ", %d" : "%d", c->ranks[i]);
    if (o < len) snprintf(buf + o, len - o, "]");
}

static int check_tensor(cs_rank *r, cs_coll_kind k, const cs_tensor *t, const char *what) {
    if (!t) return fail(r, k, "expected a tensor for %s", what);
    if (!cs_tensor_is_contiguous(t))
        return fail(r, k, "%s must be contiguous (use t:contiguous())", what);
    return CS_OK;
}

/* all_to_all has no in-place form: a block received early would overwrite
 * one still to be sent (NCCL refuses to define it either), so an output
 * that shares memory with an input is an argument error rather than a
 * silently wrong result. The tensors are contiguous: each is the span
 * [offset, offset + numel) of its storage. Sorting the spans by storage and
 * start finds an overlapping pair in n log n (lists have one per rank). */
typedef struct span {
    const cs_storage *st;
    int64_t lo, hi;
    int idx;
    bool out;
} span;

static int span_cmp(const void *a, const void *b) {
    const span *x = a, *y = b;
    if (x->st != y->st) return (uintptr_t)x->st < (uintptr_t)y->st ? -1 : 1;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int check_no_alias(cs_rank *r, cs_coll_kind kind, cs_tensor *const *out, int nout,
                          cs_tensor *const *in, int nin, bool lists) {
    span *v = malloc(sizeof *v * (size_t)(nout + nin));
    if (!v) return CS_ENOMEM;
    int n = 0;
    for (int i = 0; i < nout + nin; i++) {
        const cs_tensor *t = i < nout ? out[i] : in[i - nout];
        if (cs_tensor_numel(t) > 0)
            v[n++] = (span){t->st, t->offset, t->offset + cs_tensor_numel(t),
                            i < nout ? i : i - nout, i < nout};
    }
    qsort(v, (size_t)n, sizeof *v, span_cmp);
    int rc = CS_OK;
    const span *far[2] = {NULL, NULL}; /* the input and the output reaching furthest */
    for (int i = 0; i < n && rc == CS_OK; i++) {
        if (i && v[i].st != v[i - 1].st) far[0] = far[1] = NULL;
        const span *o = far[!v[i].out];
        if (o && o->hi > v[i].lo) {
            const span *a = v[i].out ? &v[i] : o, *b = v[i].out ? o : &v[i];
            if (lists)
                rc = fail(r, kind, "tensor %d of the output list shares memory with tensor %d of "
                          "the input list: all-to-all has no in-place form (give it another "
                          "output)", a->idx, b->idx);
            else
                rc = fail(r, kind, "the output shares memory with the input: all-to-all has no "
                          "in-place form (give it another output)");
        }
        if (!far[v[i].out] || v[i].hi > far[v[i].out]->hi) far[v[i].out] = &v[i];
    }
    free(v);
    return rc;
}

/* Resolve group, algorithm and root; check the reduce op against dtype. */
static int begin(cs_rank *r, call *k, const cs_coll_call *cc, cs_dtype d, bool rooted) {
    cs_group *g = cc->group;
    cs_coll *c = &k->c;
    *c = (cs_coll){.r = r, .line = cc->line, .op = cc->op, .dtype = d};
    if (g) {
        c->ranks = g->ranks, c->n = g->size, c->me = g->rank, c->ctx = g->ctx, k->seq = &g->seq;
        k->group = g->ranks, k->ngroup = g->size;
    } else {
        c->n = cs_rank_world_size(r), c->me = r->rank, c->ctx = CS_WORLD_CTX;
        k->seq = &r->world_coll_seq;
    }
    char gs[160]; /* the group in words, written only for an error (every call passes here) */
    if (c->me < 0) {
        group_str(c, gs, sizeof gs);
        return fail(r, k->kind, "rank %d is not a member of the group (%s)", r->rank, gs);
    }
    cs_coll_family f = kinds[k->kind].family;
    k->algo = cc->algo ? cc->algo : (cs_coll_algo)r->world->cfg.coll_algo[f];
    /* An engine with collectives of its own runs them unless --algo names a
     * visible one, on the world and on groups alike (docs/engines.md). */
    bool native = r->world->engine->ops->coll != NULL;
    const cs_engine_kind *ek = cs_engine_find(r->world->engine_name);
    c->device = ek && (ek->caps & CS_ENGINE_DEVICE_ONLY) ? CS_DEVICE_CURRENT : CS_DEVICE_CPU;
    if (!k->algo && native) k->algo = CS_ALGO_NCCL;
    if (k->algo == CS_ALGO_NCCL && !native)
        return fail(r, k->kind, "the 'nccl' algorithm is NCCL's own and runs on --engine nccl only "
                                "(this run uses the %s engine)", r->world->engine_name);
    c->native = k->algo == CS_ALGO_NCCL;
    /* CS_ALGO_DEFAULT left here is picked by size once the call's size is known (enter) */
    if (k->algo && !c->native && !cs_coll_algo_allowed(f, k->algo)) {
        char list[256];
        cs_coll_algos_list(f, list, sizeof list, "; ");
        return fail(r, k->kind, "'%s' is not a %s algorithm (available: %s)",
                    cs_coll_algo_name(k->algo), cs_coll_family_name(f), list);
    }
    k->root = -1;
    if (rooted) {
        int world = cs_rank_world_size(r);
        if (cc->root < 0 || cc->root >= world)
            return fail(r, k->kind, "root %d is outside the world (ranks 0 to %d)", cc->root, world - 1);
        int gr = g ? cs_group_rank_of(g, cc->root) : cc->root;
        if (gr < 0) {
            group_str(c, gs, sizeof gs);
            return fail(r, k->kind, "root %d is not a member of the group (%s)", cc->root, gs);
        }
        k->root = cc->root;
    }
    if (!k->reduces) return CS_OK;
    if ((unsigned)cc->op >= CS_RED_NOPS) return fail(r, k->kind, "unknown reduce op %d", (int)cc->op);
    bool isint = !cs_dtype_is_float(d);
    if (cc->op >= CS_RED_BAND && !isint)
        return fail(r, k->kind, "ReduceOp.%s needs an integer dtype (the tensor is %s)",
                    cs_redop_name(cc->op), cs_dtype_name(d));
    /* torch's NCCL backend has no bitwise reductions, whatever the algorithm */
    if (cc->op >= CS_RED_BAND && ek && (ek->caps & CS_ENGINE_DEVICE_ONLY))
        return fail(r, k->kind, "Cannot use ReduceOp.%s with NCCL", cs_redop_name(cc->op));
    if (cc->op == CS_RED_AVG && isint)
        return fail(r, k->kind, "ReduceOp.AVG needs a floating-point dtype (the tensor is %s)",
                    cs_dtype_name(d));
    return CS_OK;
}

/* The tensors of a list: n of them (the group size), each contiguous, of dtype
 * d and numel elements (numel < 0: any size), as ref ("the input") is. */
static int check_list(cs_rank *r, call *k, cs_tensor **ts, int n, const char *what, cs_dtype d,
                      int64_t numel, const char *ref) {
    if (!ts || n != k->c.n)
        return fail(r, k->kind, "%s has %d tensor%s, but the group has %d rank%s (one per rank)",
                    what, ts ? n : 0, (ts ? n : 0) == 1 ? "" : "s", k->c.n, k->c.n == 1 ? "" : "s");
    for (int i = 0; i < n; i++) {
        char name[64];
        snprintf(name, sizeof name, "tensor %d of %s", i, what);
        int rc = check_tensor(r, k->kind, ts[i], name);
        if (rc != CS_OK) return rc;
        if (ts[i]->dtype != d)
            return fail(r, k->kind, "%s is %s, but %s is %s", name,
                        cs_dtype_name(ts[i]->dtype), ref, cs_dtype_name(d));
        if (numel >= 0 && cs_tensor_numel(ts[i]) != numel)
            return fail(r, k->kind, "%s has %lld elements, but %s has %lld", name,
                        (long long)cs_tensor_numel(ts[i]), ref, (long long)numel);
    }
    return CS_OK;
}

static void emit(call *k, bool enter) {
    cs_rank *r = k->c.r;
    cs_event ev = {.type = CS_EV_COLL, .rank = r->rank, .text = kinds[k->kind].name,
                   .begin = enter, .peer = k->root, .ctx = k->c.ctx, .bytes = k->bytes,
                   .dtype = k->c.dtype, .line = k->c.line, .count = k->count,
                   .algo = cs_coll_algo_name(k->algo),
                   .reduce_op = k->reduces ? cs_redop_name(k->c.op) : NULL,
                   .group = k->group, .ngroup = k->ngroup};
    cs_bus_emit(r->world->bus, &ev);
}

/* The call's digest, stamped on its internal messages (match.h): what the
 * monitor compares between the ranks' n-th calls (monitor_coll.c's same_call:
 * name, root, dtype, reduce op, count except all_to_all's), so two calls that
 * disagree never exchange a message, and their ending is the monitor's
 * collective mismatch on every engine rather than whichever internal message
 * happened to pair first. 16 bits, never 0. */
static uint16_t call_sig(const call *k) {
    uint64_t v[5] = {(uint64_t)k->kind, (uint64_t)(int64_t)k->root, (uint64_t)k->c.dtype,
                     k->reduces ? (uint64_t)k->c.op + 1 : 0,
                     k->kind == CS_COLL_ALL_TO_ALL ? 0 : (uint64_t)k->count};
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (int i = 0; i < 5; i++)
        for (int b = 0; b < 64; b += 8) h = (h ^ ((v[i] >> b) & 0xff)) * 1099511628211ull;
    return (uint16_t)(1 + (h ^ (h >> 32)) % 65535);
}

/* Checks passed: pick the default by size, take the call's tag and announce
 * the entry. The size is the whole buffer (picks): n blocks of count elements
 * for all_gather and reduce_scatter, whose count is one block. */
static void enter(call *k) {
    if (!k->algo) {
        cs_coll_family f = kinds[k->kind].family;
        size_t bytes = k->count * cs_dtype_size(k->c.dtype);
        if (f == CS_FAM_ALL_GATHER || f == CS_FAM_REDUCE_SCATTER) bytes *= (size_t)k->c.n;
        k->algo = cs_coll_pick(f, bytes, k->c.n);
    }
    k->c.tag = (int)(*k->seq & 0x7fffffffu);
    (*k->seq)++;
    k->c.r->coll_sig = call_sig(k);
    emit(k, true);
}

static int leave(call *k, int rc) {
    k->c.r->coll_sig = 0;
    if (rc == CS_OK) emit(k, false);
    return rc;
}

static int group_root(const call *k) {
    if (k->root < 0 || !k->c.ranks) return k->root;
    for (int i = 0; i < k->c.n; i++)
        if (k->c.ranks[i] == k->root) return i;
    return -1;
}

/* ---- the operations */

static int host_broadcast(cs_rank *r, cs_tensor *t, const cs_coll_call *cc) {
    call k = {.kind = CS_COLL_BROADCAST};
    int rc = check_tensor(r, k.kind, t, "the tensor");
    if (rc == CS_OK) rc = begin(r, &k, cc, t->dtype, true);
    if (rc != CS_OK) return rc;
    k.count = (size_t)cs_tensor_numel(t), k.bytes = cs_tensor_nbytes(t);
    enter(&k);
    return leave(&k, cs_algo_broadcast(&k.c, k.algo, t, group_root(&k)));
}

static int host_reduce(cs_rank *r, cs_tensor *t, const cs_coll_call *cc) {
    call k = {.kind = CS_COLL_REDUCE, .reduces = true};
    int rc = check_tensor(r, k.kind, t, "the tensor");
    if (rc == CS_OK) rc = begin(r, &k, cc, t->dtype, true);
    if (rc != CS_OK) return rc;
    k.count = (size_t)cs_tensor_numel(t), k.bytes = cs_tensor_nbytes(t);
    int root = group_root(&k);
    /* Only the root's tensor changes: the others reduce into a copy. */
    cs_tensor *acc = k.c.me == root ? cs_tensor_retain(t) : cs_tensor_clone(NULL, t); /* scratch: see coll_algos.c */
    if (!acc) return CS_ENOMEM;
    enter(&k);
    rc = cs_algo_reduce(&k.c, k.algo, acc, root);
    if (rc == CS_OK && k.c.me == root && cc->op == CS_RED_AVG && !k.c.native) divide(t, k.c.n);
    cs_tensor_release(acc);
    return leave(&k, rc);
}

static int host_all_reduce(cs_rank *r, cs_tensor *t, const cs_coll_call *cc) {
    call k = {.kind = CS_COLL_ALL_REDUCE, .reduces = true};
    int rc = check_tensor(r, k.kind, t, "the tensor");
    if (rc == CS_OK) rc = begin(r, &k, cc, t->dtype, false);
    if (rc != CS_OK) return rc;
    k.count = (size_t)cs_tensor_numel(t), k.bytes = cs_tensor_nbytes(t);
    enter(&k);
    rc = cs_algo_all_reduce(&k.c, k.algo, t);
    if (rc == CS_OK && cc->op == CS_RED_AVG && !k.c.native) divide(t, k.c.n);
    return leave(&k, rc);
}

static int host_all_gather(cs_rank *r, cs_tensor **out, int nout, cs_tensor *in, const cs_coll_call *cc) {
    call k = {.kind = CS_COLL_ALL_GATHER};
    int rc = check_tensor(r, k.kind, in, "the input");
    if (rc == CS_OK) rc = begin(r, &k, cc, in->dtype, false);
    if (rc == CS_OK) rc = check_list(r, &k, out, nout, "the output list", in->dtype, cs_tensor_numel(in),
                                         "the input");
    if (rc != CS_OK) return rc;
    k.count = (size_t)cs_tensor_numel(in), k.bytes = cs_tensor_nbytes(in);
    enter(&k);
    return leave(&k, cs_algo_all_gather(&k.c, k.algo, out, in));
}

/* The tensor variants: the big tensor split in group-size blocks. */
static int run_split(call *k, cs_tensor *big, cs_tensor *small) {
    cs_tensor **blocks = calloc((size_t)k->c.n, sizeof *blocks);
    int rc = blocks ? cs_coll_split(big, k->c.n, blocks) : CS_ENOMEM;
    if (rc != CS_OK) {
        free(blocks);
        return rc;
    }
    enter(k);
    if (k->kind == CS_COLL_ALL_GATHER_INTO_TENSOR) {
        rc = cs_algo_all_gather(&k->c, k->algo, blocks, small);
    } else {
        rc = cs_algo_reduce_scatter(&k->c, k->algo, small, blocks);
        if (rc == CS_OK && k->c.op == CS_RED_AVG && !k->c.native) divide(small, k->c.n);
    }
    cs_coll_release_all(blocks, k->c.n);
    free(blocks);
    return leave(k, rc);
}

/* The tensor variants' checks: big holds group-size times small's elements,
 * both of one dtype. */
static int pair_call(cs_rank *r, call *k, const cs_coll_call *cc, cs_tensor *big, cs_tensor *small,
                     const char *bname, const char *sname) {
    int rc = check_tensor(r, k->kind, big, bname);
    if (rc == CS_OK) rc = check_tensor(r, k->kind, small, sname);
    if (rc == CS_OK) rc = begin(r, k, cc, small->dtype, false);
    if (rc != CS_OK) return rc;
    if (big->dtype != small->dtype)
        return fail(r, k->kind, "%s is %s, but %s is %s", bname, cs_dtype_name(big->dtype), sname,
                    cs_dtype_name(small->dtype));
    int64_t want;
    if (__builtin_mul_overflow((int64_t)k->c.n, cs_tensor_numel(small), &want) ||
        cs_tensor_numel(big) != want)
        return fail(r, k->kind, "%s has %lld elements, but must have %d x %lld (group size x %s)",
                    bname, (long long)cs_tensor_numel(big), k->c.n,
                    (long long)cs_tensor_numel(small), sname);
    k->count = (size_t)cs_tensor_numel(small);
    return CS_OK;
}

static int host_all_gather_into_tensor(cs_rank *r, cs_tensor *out, cs_tensor *in, const cs_coll_call *cc) {
    call k = {.kind = CS_COLL_ALL_GATHER_INTO_TENSOR};
    int rc = pair_call(r, &k, cc, out, in, "the output", "the input");
    if (rc != CS_OK) return rc;
    k.bytes = cs_tensor_nbytes(in);
    return run_split(&k, out, in);
}

static int host_reduce_scatter_tensor(cs_rank *r, cs_tensor *out, cs_tensor *in, const cs_coll_call *cc) {
    call k = {.kind = CS_COLL_REDUCE_SCATTER_TENSOR, .reduces = true};
    int rc = pair_call(r, &k, cc, in, out, "the input", "the output");
    if (rc != CS_OK) return rc;
    k.bytes = cs_tensor_nbytes(in);
    return run_split(&k, in, out);
}

static int host_gather(cs_rank *r, cs_tensor *in, cs_tensor **list, int n, const cs_coll_call *cc) {
    call k = {.kind = CS_COLL_GATHER};
    int rc = check_tensor(r, k.kind, in, "the input");
    if (rc == CS_OK) rc = begin(r, &k, cc, in->dtype, true);
    bool root = rc == CS_OK && k.c.me == group_root(&k);
    if (root) rc = check_list(r, &k, list, n, "the gather list", in->dtype, cs_tensor_numel(in),
                         "the input");
    else if (rc == CS_OK && n > 0) /* torch refuses it too: the list would be ignored */
        rc = fail(r, k.kind, "the gather list must be nil on every rank but the destination "
                  "(rank %d), as in torch", k.root);
    if (rc != CS_OK) return rc;
    k.count = (size_t)cs_tensor_numel(in), k.bytes = cs_tensor_nbytes(in);
    enter(&k);
    return leave(&k, cs_algo_gather(&k.c, in, root ? list : NULL, group_root(&k)));
}

static int host_scatter(cs_rank *r, cs_tensor *out, cs_tensor **list, int n, const cs_coll_call *cc) {
    call k = {.kind = CS_COLL_SCATTER};
    int rc = check_tensor(r, k.kind, out, "the output");
    if (rc == CS_OK) rc = begin(r, &k, cc, out->dtype, true);
    bool root = rc == CS_OK && k.c.me == group_root(&k);
    if (root) rc = check_list(r, &k, list, n, "the scatter list", out->dtype, cs_tensor_numel(out),
                         "the output");
    else if (rc == CS_OK && n > 0) /* torch refuses it too: the list would be ignored */
        rc = fail(r, k.kind, "the scatter list must be nil on every rank but the source "
                  "(rank %d), as in torch", k.root);
    if (rc != CS_OK) return rc;
    k.count = (size_t)cs_tensor_numel(out), k.bytes = cs_tensor_nbytes(out);
    enter(&k);
    return leave(&k, cs_algo_scatter(&k.c, out, root ? list : NULL, group_root(&k)));
}

static int host_reduce_scatter(cs_rank *r, cs_tensor *out, cs_tensor **in, int nin, const cs_coll_call *cc) {
    call k = {.kind = CS_COLL_REDUCE_SCATTER, .reduces = true};
    int rc = check_tensor(r, k.kind, out, "the output");
    if (rc == CS_OK) rc = begin(r, &k, cc, out->dtype, false);
    if (rc == CS_OK) rc = check_list(r, &k, in, nin, "the input list", out->dtype, cs_tensor_numel(out),
                                         "the output");
    if (rc != CS_OK) return rc;
    k.count = (size_t)cs_tensor_numel(out), k.bytes = cs_tensor_nbytes(out) * (size_t)nin;
    enter(&k);
    rc = cs_algo_reduce_scatter(&k.c, k.algo, out, in);
    if (rc == CS_OK && cc->op == CS_RED_AVG && !k.c.native) divide(out, k.c.n);
    return leave(&k, rc);
}

static int host_all_to_all(cs_rank *r, cs_tensor **out, int nout, cs_tensor **in, int nin,
                          const cs_coll_call *cc) {
    call k = {.kind = CS_COLL_ALL_TO_ALL};
    if (!in || nin < 1) return fail(r, k.kind, "the input list is empty");
    int rc = check_tensor(r, k.kind, in[0], "tensor 0 of the input list");
    if (rc == CS_OK) rc = begin(r, &k, cc, in[0]->dtype, false);
    if (rc == CS_OK) rc = check_list(r, &k, in, nin, "the input list", in[0]->dtype, -1,
                                         "tensor 0 of the input list");
    if (rc == CS_OK) rc = check_list(r, &k, out, nout, "the output list", in[0]->dtype, -1,
                                         "the input list");
    if (rc != CS_OK) return rc;
    /* Sizes may differ between pairs: what two ranks agree on is checked by
     * their messages (a receive of the wrong size is an error), but a rank's
     * own block is copied in place, so that pair is checked here. */
    int me = k.c.me;
    if (cs_tensor_numel(out[me]) != cs_tensor_numel(in[me]))
        return fail(r, k.kind, "tensor %d of the output list has %lld elements, but tensor %d of "
                    "the input list has %lld (a rank's own block must fit)", me,
                    (long long)cs_tensor_numel(out[me]), me, (long long)cs_tensor_numel(in[me]));
    if ((rc = check_no_alias(r, k.kind, out, nout, in, nin, true)) != CS_OK) return rc;
    for (int i = 0; i < nin; i++) k.bytes += cs_tensor_nbytes(in[i]);
    k.count = 0;
    enter(&k);
    return leave(&k, cs_algo_all_to_all(&k.c, out, in));
}

static int host_all_to_all_single(cs_rank *r, cs_tensor *out, cs_tensor *in, const cs_coll_call *cc) {
    call k = {.kind = CS_COLL_ALL_TO_ALL_SINGLE};
    int rc = check_tensor(r, k.kind, out, "the output");
    if (rc == CS_OK) rc = check_tensor(r, k.kind, in, "the input");
    if (rc == CS_OK) rc = begin(r, &k, cc, in->dtype, false);
    if (rc != CS_OK) return rc;
    int64_t n = cs_tensor_numel(in);
    if (out->dtype != in->dtype)
        return fail(r, k.kind, "the output is %s, but the input is %s", cs_dtype_name(out->dtype),
                    cs_dtype_name(in->dtype));
    if (cs_tensor_numel(out) != n || n % k.c.n)
        return fail(r, k.kind, "the input and output must have the same number of elements, "
                               "divisible by the group size %d (input %lld, output %lld)",
                    k.c.n, (long long)n, (long long)cs_tensor_numel(out));
    if ((rc = check_no_alias(r, k.kind, &out, 1, &in, 1, false)) != CS_OK) return rc;
    k.count = (size_t)n, k.bytes = cs_tensor_nbytes(in);
    cs_tensor **b = calloc((size_t)k.c.n * 2, sizeof *b);
    if (!b) return CS_ENOMEM;
    rc = cs_coll_split(out, k.c.n, b);
    if (rc == CS_OK && (rc = cs_coll_split(in, k.c.n, b + k.c.n)) != CS_OK)
        cs_coll_release_all(b, k.c.n);
    if (rc == CS_OK) {
        enter(&k);
        rc = leave(&k, cs_algo_all_to_all(&k.c, b, b + k.c.n));
        cs_coll_release_all(b, 2 * k.c.n);
    }
    free(b);
    return rc;
}

int cs_barrier(cs_rank *r, const cs_coll_call *cc) {
    call k = {.kind = CS_COLL_BARRIER};
    int rc = begin(r, &k, cc, CS_UINT8, false);
    if (rc != CS_OK) return rc;
    enter(&k);
    return leave(&k, cs_algo_barrier(&k.c));
}

/* ---- the public calls: device tensors on an engine that moves host memory
 * go through host copies (stage.h), outputs come back when the call succeeds */

int cs_broadcast(cs_rank *r, cs_tensor *t, const cs_coll_call *c) {
    cs_stage_set s = {0};
    int rc = cs_stage_tensor(r, &s, &t, true);
    return cs_stage_end(r, &s, rc == CS_OK ? host_broadcast(r, t, c) : rc);
}

int cs_reduce(cs_rank *r, cs_tensor *t, const cs_coll_call *c) {
    cs_stage_set s = {0};
    int rc = cs_stage_tensor(r, &s, &t, true);
    return cs_stage_end(r, &s, rc == CS_OK ? host_reduce(r, t, c) : rc);
}

int cs_all_reduce(cs_rank *r, cs_tensor *t, const cs_coll_call *c) {
    cs_stage_set s = {0};
    int rc = cs_stage_tensor(r, &s, &t, true);
    return cs_stage_end(r, &s, rc == CS_OK ? host_all_reduce(r, t, c) : rc);
}

int cs_all_gather(cs_rank *r, cs_tensor **out, int nout, cs_tensor *in, const cs_coll_call *c) {
    cs_stage_set s = {0};
    int rc = cs_stage_list(r, &s, &out, nout, true);
    if (rc == CS_OK) rc = cs_stage_tensor(r, &s, &in, false);
    return cs_stage_end(r, &s, rc == CS_OK ? host_all_gather(r, out, nout, in, c) : rc);
}

int cs_all_gather_into_tensor(cs_rank *r, cs_tensor *out, cs_tensor *in, const cs_coll_call *c) {
    cs_stage_set s = {0};
    int rc = cs_stage_tensor(r, &s, &out, true);
    if (rc == CS_OK) rc = cs_stage_tensor(r, &s, &in, false);
    return cs_stage_end(r, &s, rc == CS_OK ? host_all_gather_into_tensor(r, out, in, c) : rc);
}

int cs_reduce_scatter_tensor(cs_rank *r, cs_tensor *out, cs_tensor *in, const cs_coll_call *c) {
    cs_stage_set s = {0};
    int rc = cs_stage_tensor(r, &s, &out, true);
    if (rc == CS_OK) rc = cs_stage_tensor(r, &s, &in, false);
    return cs_stage_end(r, &s, rc == CS_OK ? host_reduce_scatter_tensor(r, out, in, c) : rc);
}

int cs_gather(cs_rank *r, cs_tensor *in, cs_tensor **list, int n, const cs_coll_call *c) {
    cs_stage_set s = {0};
    int rc = cs_stage_tensor(r, &s, &in, false);
    if (rc == CS_OK) rc = cs_stage_list(r, &s, &list, n, true);
    return cs_stage_end(r, &s, rc == CS_OK ? host_gather(r, in, list, n, c) : rc);
}

int cs_scatter(cs_rank *r, cs_tensor *out, cs_tensor **list, int n, const cs_coll_call *c) {
    cs_stage_set s = {0};
    int rc = cs_stage_tensor(r, &s, &out, true);
    if (rc == CS_OK) rc = cs_stage_list(r, &s, &list, n, false);
    return cs_stage_end(r, &s, rc == CS_OK ? host_scatter(r, out, list, n, c) : rc);
}

int cs_reduce_scatter(cs_rank *r, cs_tensor *out, cs_tensor **in, int nin, const cs_coll_call *c) {
    cs_stage_set s = {0};
    int rc = cs_stage_tensor(r, &s, &out, true);
    if (rc == CS_OK) rc = cs_stage_list(r, &s, &in, nin, false);
    return cs_stage_end(r, &s, rc == CS_OK ? host_reduce_scatter(r, out, in, nin, c) : rc);
}

int cs_all_to_all(cs_rank *r, cs_tensor **out, int nout, cs_tensor **in, int nin,
                  const cs_coll_call *c) {
    cs_stage_set s = {0};
    int rc = cs_stage_list(r, &s, &out, nout, true);
    if (rc == CS_OK) rc = cs_stage_list(r, &s, &in, nin, false);
    return cs_stage_end(r, &s, rc == CS_OK ? host_all_to_all(r, out, nout, in, nin, c) : rc);
}

int cs_all_to_all_single(cs_rank *r, cs_tensor *out, cs_tensor *in, const cs_coll_call *c) {
    cs_stage_set s = {0};
    int rc = cs_stage_tensor(r, &s, &out, true);
    if (rc == CS_OK) rc = cs_stage_tensor(r, &s, &in, false);
    return cs_stage_end(r, &s, rc == CS_OK ? host_all_to_all_single(r, out, in, c) : rc);
}
