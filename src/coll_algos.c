/* coll_algos.c -- the collective algorithms, written on isend/irecv.
 *
 * Every step posts its receives before its sends and waits for all of them, so
 * no algorithm depends on buffering: each one works in rendezvous mode, where
 * a send completes only once its receive is posted. Every rank of a group runs
 * the same deterministic schedule, so the messages between two ranks are sent
 * and received in the same order, which is all MPI matching needs.
 *
 * The schedules are the classic ones (MPICH's, NCCL's ring): see the table of
 * who sends what to whom in docs/collectives.md and lessons/03-collectives.
 */
#include <stdlib.h>
#include <string.h>

#include "coll_internal.h"
#include "world.h"

static int world_of(const cs_coll *c, int gr) { return c->ranks ? c->ranks[gr] : gr; }

int cs_algo_barrier(cs_coll *c);

/* --algo nccl: the engine's own collective instead of a schedule of messages
 * (on the world or a group: the engine keeps a communicator per group).
 * Every member first arrives at a barrier of one-byte messages in the
 * call's context and tag, so the monitor sees who waits for whom exactly as
 * with the visible algorithms (a member that never calls is a deadlock
 * verdict at once, not a kernel waiting forever), and the engine's
 * collective starts only once every member is in it. */
static int native(cs_coll *c, cs_native_coll nc) {
    cs_engine *e = c->r->world->engine;
    c->native = false;
    int rc = cs_algo_barrier(c);
    c->native = true;
    if (rc != CS_OK) return rc;
    nc.op = (int)c->op;
    nc.line = c->line;
    if (c->ranks) nc.ranks = c->ranks, nc.n = c->n, nc.me = c->me, nc.ctx = c->ctx;
    return e->ops->coll(e, c->r, &nc);
}
static int mod(int a, int n) { return ((a % n) + n) % n; }

/* ---- a set of requests posted together and waited for together */

/* Most steps post two requests (a receive and a send): those live in the set
 * itself, so a step allocates nothing of its own; a set is never copied. */
#define RS_INLINE 4
typedef struct reqset {
    cs_request **q; /* inline, or a heap array once more are posted */
    int n, cap;
    cs_request *inline_q[RS_INLINE];
} reqset;

static int rs_post(cs_coll *c, reqset *s, bool send, cs_tensor *t, int peer) {
    int rc;
    if (!s->q) s->q = s->inline_q, s->cap = RS_INLINE;
    if (s->n == s->cap) {
        int cap = s->cap * 2;
        cs_request **q = malloc((size_t)cap * sizeof *q);
        if (!q) return CS_ENOMEM;
        memcpy(q, s->q, (size_t)s->n * sizeof *q);
        if (s->q != s->inline_q) free(s->q);
        s->q = q;
        s->cap = cap;
    }
    cs_request **slot = &s->q[s->n];
    rc = send ? cs_isend_ctx(c->r, t, world_of(c, peer), c->tag, c->ctx, c->line, slot)
              : cs_irecv_ctx(c->r, t, world_of(c, peer), c->tag, c->ctx, c->line, slot);
    if (rc == CS_OK) s->n++;
    return rc;
}

/* Drop the set (the engine keeps its own references to what is in flight). */
static void rs_release(reqset *s) {
    for (int i = 0; i < s->n; i++) cs_request_release(s->q[i]);
    if (s->q != s->inline_q) free(s->q);
    *s = (reqset){0};
}

static int rs_wait(cs_coll *c, reqset *s) {
    int rc = s->n ? cs_wait_all(c->r, s->q, s->n, c->line) : CS_OK;
    rs_release(s);
    return rc;
}

/* Receive into rbuf from `from` while sending sbuf to `to` (either may be -1).
 * With one peer both ways the two requests are marked as an exchange: the
 * peer marks its own the same, and posts its receive from us before its
 * send too, so the peer's message proves that ours will be matched, and an
 * engine may complete our send without waiting for word from the peer (the
 * tcp engine saves the ACK's trip: engine_tcp_conn.c). Only where the call's
 * digest fixes the sizes both ways: not all_to_all, whose pieces may differ
 * per pair and are checked by the messages alone (per_pair). */
static int exchange_as(cs_coll *c, cs_tensor *sbuf, int to, cs_tensor *rbuf, int from,
                       bool per_pair) {
    reqset s = {0};
    int rc = CS_OK;
    c->r->coll_exchange = !per_pair && sbuf && rbuf && from >= 0 && from == to;
    if (rbuf && from >= 0) rc = rs_post(c, &s, false, rbuf, from);
    if (rc == CS_OK && sbuf && to >= 0) rc = rs_post(c, &s, true, sbuf, to);
    c->r->coll_exchange = false;
    if (rc != CS_OK) {
        rs_release(&s);
        return rc;
    }
    return rs_wait(c, &s);
}

static int exchange(cs_coll *c, cs_tensor *sbuf, int to, cs_tensor *rbuf, int from) {
    return exchange_as(c, sbuf, to, rbuf, from, false);
}

/* ---- buffers */

/* Scratch buffers are the runtime's, not the script's: like NCCL's own buffers
 * they are not charged to the rank's memory cap (the tensors they mirror are,
 * and they never exceed a few times those). Charging them would fail a
 * collective halfway, after messages were exchanged, whenever the script's
 * garbage had not yet been collected. */
static cs_tensor *scratch(cs_coll *c, int64_t numel) {
    return cs_tensor_new_on(NULL, c->device, c->dtype, 1, &numel);
}

static cs_tensor *flat_view(cs_tensor *t) {
    int64_t n = cs_tensor_numel(t);
    return cs_tensor_view(t, 1, &n);
}

/* Block i of n of a flat tensor of len elements: [i*len/n, (i+1)*len/n). The
 * blocks differ by at most one element, and may be empty. */
static int64_t block_start(int64_t len, int i, int n) {
    return len / n * i + len % n * i / n; /* len * i / n without the product overflowing */
}

static cs_tensor *block(cs_tensor *flat, int i, int n) {
    int64_t len = cs_tensor_numel(flat);
    int64_t lo = block_start(len, i, n), hi = block_start(len, i + 1, n);
    return cs_tensor_narrow(flat, 0, lo, hi - lo);
}

static void combine(const cs_coll *c, cs_tensor *acc, const cs_tensor *in) {
    cs_redop op = c->op == CS_RED_AVG ? CS_RED_SUM : c->op;
    if (cs_tensor_on_device(acc)) { /* a GPU's tensors: the tensor module's kernels */
        static const cs_binop on_device[CS_RED_NOPS] = {
            [CS_RED_SUM] = CS_ADD, [CS_RED_PRODUCT] = CS_MUL, [CS_RED_MIN] = CS_MINIMUM,
            [CS_RED_MAX] = CS_MAXIMUM}; /* bitwise ones are refused first (collectives.c) */
        cs_tensor_binop_(on_device[op], acc, in, 0);
        return;
    }
    cs_coll_combine(c->dtype, op, cs_tensor_data(acc), cs_tensor_data(in),
                    (size_t)cs_tensor_numel(acc));
}

static void copy_into(cs_tensor *dst, const cs_tensor *src) {
    if (cs_tensor_on_device(dst)) { /* a collective's tensors share the rank's GPU */
        if (cs_tensor_data(dst) != cs_tensor_data(src))
            cs_device_copy(cs_tensor_data(dst), cs_tensor_data(src), cs_tensor_nbytes(src));
        return;
    }
    void *d = cs_tensor_data(dst);
    const void *s = cs_tensor_data(src);
    if (d != s) memmove(d, s, cs_tensor_nbytes(src));
}

void cs_coll_release_all(cs_tensor **ts, int n) {
    for (int i = 0; i < n; i++) {
        cs_tensor_release(ts[i]);
        ts[i] = NULL;
    }
}

int cs_coll_split(cs_tensor *t, int n, cs_tensor **blocks) {
    cs_tensor *flat = flat_view(t);
    if (!flat) return CS_ENOMEM;
    for (int i = 0; i < n; i++)
        if (!(blocks[i] = block(flat, i, n))) {
            cs_coll_release_all(blocks, i);
            cs_tensor_release(flat);
            return CS_ENOMEM;
        }
    cs_tensor_release(flat);
    return CS_OK;
}

/* ---- broadcast: binomial tree or linear */

/* In the binomial tree (ranks relative to the root), rank v receives from v
 * minus its lowest set bit, then sends to v + 2^k for each 2^k below that bit:
 * the number of ranks holding the data doubles every round. */
static int bcast_tree(cs_coll *c, cs_tensor *t, int root) {
    int n = c->n, v = mod(c->me - root, n), mask = 1, rc;
    for (; mask < n; mask <<= 1)
        if (v & mask) {
            if ((rc = exchange(c, NULL, -1, t, mod(v - mask + root, n))) != CS_OK) return rc;
            break;
        }
    reqset s = {0};
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (v + mask < n && (rc = rs_post(c, &s, true, t, mod(v + mask + root, n))) != CS_OK) {
            rs_release(&s);
            return rc;
        }
    return rs_wait(c, &s);
}

static int bcast_linear(cs_coll *c, cs_tensor *t, int root) {
    if (c->me != root) return exchange(c, NULL, -1, t, root);
    reqset s = {0};
    for (int j = 0; j < c->n; j++) {
        int rc = j == root ? CS_OK : rs_post(c, &s, true, t, j);
        if (rc != CS_OK) {
            rs_release(&s);
            return rc;
        }
    }
    return rs_wait(c, &s);
}

int cs_algo_broadcast(cs_coll *c, cs_coll_algo a, cs_tensor *t, int root) {
    if (c->native) return native(c, (cs_native_coll){.kind = CS_NATIVE_BROADCAST, .t = t, .root = root});
    if (c->n == 1) return CS_OK;
    return a == CS_ALGO_LINEAR ? bcast_linear(c, t, root) : bcast_tree(c, t, root);
}

/* ---- reduce: the broadcast tree run backwards, or linear */

static int reduce_tree(cs_coll *c, cs_tensor *acc, int root) {
    int n = c->n, v = mod(c->me - root, n), rc = CS_OK;
    cs_tensor *tmp = NULL;
    for (int mask = 1; mask < n; mask <<= 1) {
        if (v & mask) { /* hand the partial sum to the parent: done */
            rc = exchange(c, acc, mod(v - mask + root, n), NULL, -1);
            break;
        }
        if (v + mask >= n) continue;
        if (!tmp && !(tmp = scratch(c, cs_tensor_numel(acc)))) return CS_ENOMEM;
        if ((rc = exchange(c, NULL, -1, tmp, mod(v + mask + root, n))) != CS_OK) break;
        combine(c, acc, tmp);
    }
    cs_tensor_release(tmp);
    return rc;
}

static int reduce_linear(cs_coll *c, cs_tensor *acc, int root) {
    if (c->me != root) return exchange(c, acc, root, NULL, -1);
    cs_tensor *tmp = scratch(c, cs_tensor_numel(acc));
    int rc = tmp ? CS_OK : CS_ENOMEM;
    for (int j = 0; j < c->n && rc == CS_OK; j++) {
        if (j == root) continue;
        if ((rc = exchange(c, NULL, -1, tmp, j)) == CS_OK) combine(c, acc, tmp);
    }
    cs_tensor_release(tmp);
    return rc;
}

int cs_algo_reduce(cs_coll *c, cs_coll_algo a, cs_tensor *acc, int root) {
    if (c->native) return native(c, (cs_native_coll){.kind = CS_NATIVE_REDUCE, .t = acc, .root = root});
    if (c->n == 1) return CS_OK;
    return a == CS_ALGO_LINEAR ? reduce_linear(c, acc, root) : reduce_tree(c, acc, root);
}

/* ---- all_reduce */

/* Ring: n-1 steps of reduce-scatter (each rank passes one block to its right
 * neighbour and adds the block coming from its left), after which rank i owns
 * the total of block i+1; then n-1 steps of all-gather passing the totals on. */
static int allreduce_ring(cs_coll *c, cs_tensor *t) {
    int n = c->n, me = c->me, right = mod(me + 1, n), left = mod(me - 1, n), rc = CS_OK;
    cs_tensor *flat = flat_view(t), *tmp = NULL;
    if (!flat || !(tmp = scratch(c, cs_tensor_numel(flat) / n + 1))) rc = CS_ENOMEM;
    for (int s = 0; s < n - 1 && rc == CS_OK; s++) {
        cs_tensor *out = block(flat, mod(me - s, n), n), *acc = block(flat, mod(me - s - 1, n), n);
        cs_tensor *in = acc ? cs_tensor_narrow(tmp, 0, 0, cs_tensor_numel(acc)) : NULL;
        if (!out || !acc || !in) rc = CS_ENOMEM;
        else if ((rc = exchange(c, out, right, in, left)) == CS_OK) combine(c, acc, in);
        cs_tensor_release(out), cs_tensor_release(acc), cs_tensor_release(in);
    }
    for (int s = 0; s < n - 1 && rc == CS_OK; s++) {
        cs_tensor *out = block(flat, mod(me + 1 - s, n), n), *in = block(flat, mod(me - s, n), n);
        rc = out && in ? exchange(c, out, right, in, left) : CS_ENOMEM;
        cs_tensor_release(out), cs_tensor_release(in);
    }
    cs_tensor_release(tmp);
    cs_tensor_release(flat);
    return rc;
}

/* A group whose size n is not a power of two is folded onto p ranks (p the
 * largest power of two <= n, rem = n - p), as MPICH does: of the first 2*rem
 * ranks each even one hands its whole tensor to the odd one after it and sits
 * out (virtual rank -1); the p others take virtual ranks 0..p-1 and run the
 * algorithm; at the end each odd one sends the result back to its even
 * partner. tmp receives the handed tensor. */
static int fold_in(cs_coll *c, cs_tensor *t, cs_tensor *tmp, int rem, int *vr) {
    int me = c->me, rc = CS_OK;
    if (me >= 2 * rem) {
        *vr = me - rem;
    } else if (me % 2 == 0) {
        rc = exchange(c, t, me + 1, NULL, -1);
        *vr = -1;
    } else {
        if ((rc = exchange(c, NULL, -1, tmp, me - 1)) == CS_OK) combine(c, t, tmp);
        *vr = me / 2;
    }
    return rc;
}

static int fold_out(cs_coll *c, cs_tensor *t, int rem) {
    int me = c->me;
    if (me >= 2 * rem) return CS_OK;
    return me % 2 == 0 ? exchange(c, NULL, -1, t, me + 1) : exchange(c, t, me - 1, NULL, -1);
}

/* The group rank standing for virtual rank v once the first 2*rem are folded. */
static int folded_rank(int v, int rem) { return v < rem ? v * 2 + 1 : v + rem; }

/* Recursive doubling: in round k = 1, 2, ... a rank exchanges its whole vector
 * with the rank 2^(k-1) away and both add. A non-power-of-two size is folded
 * first (fold_in, fold_out). */
static int allreduce_rd(cs_coll *c, cs_tensor *t) {
    int n = c->n, p = 1, rc = CS_OK;
    while (p * 2 <= n) p *= 2;
    int rem = n - p, vr;
    cs_tensor *tmp = scratch(c, cs_tensor_numel(t));
    if (!tmp) return CS_ENOMEM;
    rc = fold_in(c, t, tmp, rem, &vr);
    for (int mask = 1; vr >= 0 && mask < p && rc == CS_OK; mask <<= 1) {
        int peer = folded_rank(vr ^ mask, rem);
        if ((rc = exchange(c, t, peer, tmp, peer)) == CS_OK) combine(c, t, tmp);
    }
    if (rc == CS_OK) rc = fold_out(c, t, rem);
    cs_tensor_release(tmp);
    return rc;
}

/* Recursive halving (Rabenseifner; MPICH's all_reduce for long vectors): a
 * reduce-scatter by recursive halving, then an all-gather by recursive
 * doubling. With p ranks (a power of two) the tensor is cut into p blocks. In
 * the reduce-scatter a rank exchanges with the rank p/2 away, then p/4, ...,
 * then 1: each time it keeps half of the blocks it is still responsible for
 * (the lower half when it is the lower partner), sends the other half and adds
 * the half it receives. After log2 p steps rank v holds the total of block v.
 * The all-gather runs the steps backwards (distance 1, 2, ..., p/2), each time
 * swapping everything it holds, so every rank ends with every total. Each rank
 * sends 2 log2 p messages and 2(p-1)/p of the tensor, as the ring does, in
 * log2 p instead of p-1 steps.
 * A non-power-of-two size is folded first (fold_in, fold_out). */
static cs_tensor *blocks_span(cs_tensor *flat, int lo, int hi, int n) {
    int64_t len = cs_tensor_numel(flat), a = len * lo / n, b = len * hi / n;
    return cs_tensor_narrow(flat, 0, a, b - a);
}

static int allreduce_rh(cs_coll *c, cs_tensor *t) {
    int n = c->n, p = 1, rc = CS_OK;
    while (p * 2 <= n) p *= 2;
    int rem = n - p, vr;
    cs_tensor *flat = flat_view(t), *tmp = flat ? scratch(c, cs_tensor_numel(flat)) : NULL;
    if (!tmp) {
        cs_tensor_release(flat);
        return CS_ENOMEM;
    }
    rc = fold_in(c, t, tmp, rem, &vr);
    /* reduce-scatter: [lo, hi) are the blocks this rank is still responsible for */
    int lo = 0, hi = p;
    for (int mask = p / 2; vr >= 0 && mask > 0 && rc == CS_OK; mask >>= 1) {
        int mid = lo + mask, peer = folded_rank(vr ^ mask, rem);
        bool upper = vr & mask;
        int klo = upper ? mid : lo, khi = upper ? hi : mid; /* kept */
        int slo = upper ? lo : mid, shi = upper ? mid : hi; /* sent */
        cs_tensor *out = blocks_span(flat, slo, shi, p), *acc = blocks_span(flat, klo, khi, p);
        cs_tensor *in = acc ? cs_tensor_narrow(tmp, 0, 0, cs_tensor_numel(acc)) : NULL;
        if (!out || !acc || !in) rc = CS_ENOMEM;
        else if ((rc = exchange(c, out, peer, in, peer)) == CS_OK) combine(c, acc, in);
        cs_tensor_release(out), cs_tensor_release(acc), cs_tensor_release(in);
        lo = klo, hi = khi;
    }
    /* all-gather: swap everything held with the rank 1, 2, ..., p/2 away */
    for (int mask = 1; vr >= 0 && mask < p && rc == CS_OK; mask <<= 1) {
        int peer = folded_rank(vr ^ mask, rem), plo = lo ^ mask; /* it holds as many blocks */
        cs_tensor *out = blocks_span(flat, lo, hi, p);
        cs_tensor *in = blocks_span(flat, plo, plo + (hi - lo), p);
        rc = out && in ? exchange(c, out, peer, in, peer) : CS_ENOMEM;
        cs_tensor_release(out), cs_tensor_release(in);
        if (plo < lo) lo = plo;
        else hi = plo + (hi - lo);
    }
    if (rc == CS_OK) rc = fold_out(c, t, rem);
    cs_tensor_release(tmp);
    cs_tensor_release(flat);
    return rc;
}

/* Reduce to group rank 0 along the tree, then broadcast from it. Every rank
 * reduces in place: the broadcast overwrites what a non-root rank's tensor
 * held meanwhile, so no copy of the tensor is needed (reduce's non-root ranks,
 * whose tensors must stay as they were, reduce into a copy). */
static int allreduce_rb(cs_coll *c, cs_tensor *t) {
    int rc = reduce_tree(c, t, 0);
    return rc == CS_OK ? bcast_tree(c, t, 0) : rc;
}

int cs_algo_all_reduce(cs_coll *c, cs_coll_algo a, cs_tensor *t) {
    if (c->native) return native(c, (cs_native_coll){.kind = CS_NATIVE_ALL_REDUCE, .t = t});
    if (c->n == 1) return CS_OK;
    switch (a) {
    case CS_ALGO_RECURSIVE_DOUBLING: return allreduce_rd(c, t);
    case CS_ALGO_REDUCE_BROADCAST: return allreduce_rb(c, t);
    case CS_ALGO_RECURSIVE_HALVING: return allreduce_rh(c, t);
    default: return allreduce_ring(c, t);
    }
}

/* ---- all_gather: ring (pass the block you got last step to the right) or direct */

static int allgather_ring(cs_coll *c, cs_tensor **blocks) {
    int n = c->n, me = c->me, rc = CS_OK;
    for (int s = 0; s < n - 1 && rc == CS_OK; s++)
        rc = exchange(c, blocks[mod(me - s, n)], mod(me + 1, n), blocks[mod(me - s - 1, n)],
                      mod(me - 1, n));
    return rc;
}

/* Every rank sends its block to every other at once: n-1 messages in and out. */
static int allgather_direct(cs_coll *c, cs_tensor **blocks) {
    reqset s = {0};
    int rc = CS_OK;
    for (int j = 1; j < c->n && rc == CS_OK; j++)
        rc = rs_post(c, &s, false, blocks[mod(c->me - j, c->n)], mod(c->me - j, c->n));
    for (int j = 1; j < c->n && rc == CS_OK; j++)
        rc = rs_post(c, &s, true, blocks[c->me], mod(c->me + j, c->n));
    if (rc != CS_OK) {
        rs_release(&s);
        return rc;
    }
    return rs_wait(c, &s);
}

int cs_algo_all_gather(cs_coll *c, cs_coll_algo a, cs_tensor **blocks, cs_tensor *in) {
    if (c->native) return native(c, (cs_native_coll){.kind = CS_NATIVE_ALL_GATHER, .t = in, .blocks = blocks});
    copy_into(blocks[c->me], in);
    if (c->n == 1) return CS_OK;
    return a == CS_ALGO_DIRECT ? allgather_direct(c, blocks) : allgather_ring(c, blocks);
}

/* ---- gather and scatter: the root talks to every rank (linear) */

int cs_algo_gather(cs_coll *c, cs_tensor *in, cs_tensor **blocks, int root) {
    if (c->native) return native(c, (cs_native_coll){.kind = CS_NATIVE_GATHER, .t = in, .blocks = blocks, .root = root});
    if (c->me != root) return exchange(c, in, root, NULL, -1);
    copy_into(blocks[root], in);
    reqset s = {0};
    for (int j = 0; j < c->n; j++) {
        int rc = j == root ? CS_OK : rs_post(c, &s, false, blocks[j], j);
        if (rc != CS_OK) {
            rs_release(&s);
            return rc;
        }
    }
    return rs_wait(c, &s);
}

int cs_algo_scatter(cs_coll *c, cs_tensor *out, cs_tensor **blocks, int root) {
    if (c->native) return native(c, (cs_native_coll){.kind = CS_NATIVE_SCATTER, .t = out, .blocks = blocks, .root = root});
    if (c->me != root) return exchange(c, NULL, -1, out, root);
    reqset s = {0};
    for (int j = 0; j < c->n; j++) {
        int rc = j == root ? CS_OK : rs_post(c, &s, true, blocks[j], j);
        if (rc != CS_OK) {
            rs_release(&s);
            return rc;
        }
    }
    copy_into(out, blocks[root]);
    return rs_wait(c, &s);
}

/* ---- reduce_scatter */

/* Ring: the partial sum of block b travels from rank b+1 around the ring to
 * rank b, each rank on the way adding its own block b. */
static int rs_ring(cs_coll *c, cs_tensor *out, cs_tensor **blocks) {
    int n = c->n, me = c->me, rc = CS_OK;
    int64_t k = cs_tensor_numel(out);
    cs_tensor *cur = scratch(c, k), *in = scratch(c, k);
    if (!cur || !in) rc = CS_ENOMEM;
    else copy_into(cur, blocks[mod(me - 1, n)]);
    for (int s = 0; s < n - 1 && rc == CS_OK; s++) {
        if ((rc = exchange(c, cur, mod(me + 1, n), in, mod(me - 1, n))) != CS_OK) break;
        copy_into(cur, blocks[mod(me - s - 2, n)]);
        combine(c, cur, in);
    }
    if (rc == CS_OK) copy_into(out, cur);
    cs_tensor_release(cur);
    cs_tensor_release(in);
    return rc;
}

/* Direct: rank j sends its block i to rank i; each rank adds what it got in
 * group rank order. */
static int rs_direct(cs_coll *c, cs_tensor *out, cs_tensor **blocks) {
    int n = c->n, me = c->me, rc = CS_OK;
    int64_t k = cs_tensor_numel(out);
    cs_tensor **tmp = calloc((size_t)n, sizeof *tmp);
    reqset s = {0};
    if (!tmp) return CS_ENOMEM;
    for (int j = 0; j < n && rc == CS_OK; j++) {
        if (j == me) continue;
        if (!(tmp[j] = scratch(c, k))) rc = CS_ENOMEM;
        else rc = rs_post(c, &s, false, tmp[j], j);
    }
    for (int j = 1; j < n && rc == CS_OK; j++)
        rc = rs_post(c, &s, true, blocks[mod(me + j, n)], mod(me + j, n));
    rc = rc == CS_OK ? rs_wait(c, &s) : (rs_release(&s), rc);
    if (rc == CS_OK) {
        cs_tensor *acc = me == 0 ? blocks[me] : tmp[0];
        cs_tensor *sum = cs_tensor_clone(NULL, acc);
        if (!sum) rc = CS_ENOMEM;
        for (int j = 1; j < n && sum; j++) combine(c, sum, j == me ? blocks[me] : tmp[j]);
        if (sum) copy_into(out, sum);
        cs_tensor_release(sum);
    }
    cs_coll_release_all(tmp, n);
    free(tmp);
    return rc;
}

int cs_algo_reduce_scatter(cs_coll *c, cs_coll_algo a, cs_tensor *out, cs_tensor **blocks) {
    if (c->native) return native(c, (cs_native_coll){.kind = CS_NATIVE_REDUCE_SCATTER, .out = out, .blocks = blocks});
    if (c->n == 1) {
        copy_into(out, blocks[0]);
        return CS_OK;
    }
    return a == CS_ALGO_DIRECT ? rs_direct(c, out, blocks) : rs_ring(c, out, blocks);
}

/* ---- all_to_all: pairwise exchange, step s with the ranks s away */

int cs_algo_all_to_all(cs_coll *c, cs_tensor **outs, cs_tensor **ins) {
    if (c->native) return native(c, (cs_native_coll){.kind = CS_NATIVE_ALL_TO_ALL, .blocks = outs, .blocks2 = ins});
    int n = c->n, me = c->me, rc = CS_OK;
    copy_into(outs[me], ins[me]);
    for (int s = 1; s < n && rc == CS_OK; s++) {
        int to = mod(me + s, n), from = mod(me - s, n);
        rc = exchange_as(c, ins[to], to, outs[from], from, true);
    }
    return rc;
}

/* ---- barrier: dissemination. In round k = 1, 2, ... rank r signals rank
 * r + 2^(k-1) and waits for rank r - 2^(k-1), mod n: ceil(log2 n) rounds. */

int cs_algo_barrier(cs_coll *c) {
    if (c->native) return native(c, (cs_native_coll){.kind = CS_NATIVE_BARRIER});
    int64_t one = 1;
    cs_tensor *tok = cs_tensor_new_on(NULL, c->device, CS_UINT8, 1, &one);
    cs_tensor *got = cs_tensor_new_on(NULL, c->device, CS_UINT8, 1, &one);
    int rc = tok && got ? CS_OK : CS_ENOMEM;
    for (int k = 1; k < c->n && rc == CS_OK; k <<= 1)
        rc = exchange(c, tok, mod(c->me + k, c->n), got, mod(c->me - k, c->n));
    cs_tensor_release(tok);
    cs_tensor_release(got);
    return rc;
}
