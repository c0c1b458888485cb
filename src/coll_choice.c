/* coll_choice.c -- which algorithm a collective call runs: each family's
 * algorithms and their names, the default by size and group size (picks, the
 * one table of defaults), --algo and {algo = ...} parsing, and the lists
 * --help, --algo help and the errors print. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "coll_internal.h"

/* Each family's algorithms, in the order --help lists them. */
static const struct {
    const char *name;
    cs_coll_algo algos[4];
} families[CS_FAM_N] = {
    [CS_FAM_BROADCAST] = {"broadcast", {CS_ALGO_TREE, CS_ALGO_LINEAR}},
    [CS_FAM_REDUCE] = {"reduce", {CS_ALGO_TREE, CS_ALGO_LINEAR}},
    [CS_FAM_ALL_REDUCE] = {"all_reduce",
                           {CS_ALGO_RING, CS_ALGO_RECURSIVE_DOUBLING, CS_ALGO_REDUCE_BROADCAST,
                            CS_ALGO_RECURSIVE_HALVING}},
    [CS_FAM_ALL_GATHER] = {"all_gather", {CS_ALGO_RING, CS_ALGO_DIRECT}},
    [CS_FAM_GATHER] = {"gather", {CS_ALGO_LINEAR}},
    [CS_FAM_SCATTER] = {"scatter", {CS_ALGO_LINEAR}},
    [CS_FAM_REDUCE_SCATTER] = {"reduce_scatter", {CS_ALGO_RING, CS_ALGO_DIRECT}},
    [CS_FAM_ALL_TO_ALL] = {"all_to_all", {CS_ALGO_DIRECT}},
    [CS_FAM_BARRIER] = {"barrier", {CS_ALGO_DISSEMINATION}},
};

static const char *const algo_names[CS_ALGO_N] = {
    [CS_ALGO_DEFAULT] = "default", [CS_ALGO_RING] = "ring",
    [CS_ALGO_RECURSIVE_DOUBLING] = "recursive_doubling",
    [CS_ALGO_REDUCE_BROADCAST] = "reduce_broadcast", [CS_ALGO_TREE] = "tree",
    [CS_ALGO_LINEAR] = "linear", [CS_ALGO_DIRECT] = "direct",
    [CS_ALGO_DISSEMINATION] = "dissemination",
    [CS_ALGO_RECURSIVE_HALVING] = "recursive_halving",
    [CS_ALGO_NCCL] = "nccl",
};

const char *cs_coll_algo_name(cs_coll_algo a) { return (unsigned)a < CS_ALGO_N ? algo_names[a] : "?"; }

const char *cs_coll_family_name(cs_coll_family f) {
    return (unsigned)f < CS_FAM_N ? families[f].name : "?";
}

/* The default: what a call runs when neither it nor --algo names an
 * algorithm. Read top to bottom, the first row of the family that the call
 * fits is taken, as Open MPI's tuned decision functions and NCCL's tuning
 * choose by size. Small calls are latency-bound: every step is a message each
 * rank waits for, so the fewest steps win; large ones are bandwidth-bound,
 * where the ring sends the least per rank. bytes is the whole buffer
 * (nccl-tests' size: the n blocks of an all_gather or reduce_scatter). The
 * thresholds come from `commsim bench --algo ...` on both engines
 * (docs/collectives.md gives the measurements); they depend on the size and
 * the group size only, never on the engine, so that every engine runs the
 * same messages and prints the same thing. */
static const struct pick {
    cs_coll_family f;
    int from_ranks, to_ranks; /* group sizes the row covers; to_ranks 0: no limit */
    size_t upto;              /* bytes, inclusive; SIZE_MAX: any size */
    cs_coll_algo algo;
} picks[] = {
    {CS_FAM_BROADCAST, 1, 0, SIZE_MAX, CS_ALGO_TREE},
    {CS_FAM_REDUCE, 1, 0, SIZE_MAX, CS_ALGO_TREE},
    /* log2 n steps (+2 folding a non-power of two) instead of 2(n-1): the
     * ring's steps cost more than its bytes save below the line, which moves
     * up as the ring grows longer */
    {CS_FAM_ALL_REDUCE, 16, 0, (size_t)128 << 10, CS_ALGO_RECURSIVE_DOUBLING},
    {CS_FAM_ALL_REDUCE, 1, 0, (size_t)32 << 10, CS_ALGO_RECURSIVE_DOUBLING},
    {CS_FAM_ALL_REDUCE, 1, 0, SIZE_MAX, CS_ALGO_RING},
    /* one step of n-1 messages each way instead of n-1 steps: fine while
     * the group is small enough for every rank to have them all in flight */
    {CS_FAM_ALL_GATHER, 1, 8, (size_t)16 << 10, CS_ALGO_DIRECT},
    {CS_FAM_ALL_GATHER, 1, 0, SIZE_MAX, CS_ALGO_RING},
    {CS_FAM_GATHER, 1, 0, SIZE_MAX, CS_ALGO_LINEAR},
    {CS_FAM_SCATTER, 1, 0, SIZE_MAX, CS_ALGO_LINEAR},
    {CS_FAM_REDUCE_SCATTER, 1, 8, (size_t)16 << 10, CS_ALGO_DIRECT},
    {CS_FAM_REDUCE_SCATTER, 1, 0, SIZE_MAX, CS_ALGO_RING},
    {CS_FAM_ALL_TO_ALL, 1, 0, SIZE_MAX, CS_ALGO_DIRECT},
    {CS_FAM_BARRIER, 1, 0, SIZE_MAX, CS_ALGO_DISSEMINATION},
};
#define NPICKS (int)(sizeof picks / sizeof picks[0])

cs_coll_algo cs_coll_pick(cs_coll_family f, size_t bytes, int n) {
    for (int i = 0; i < NPICKS; i++)
        if (picks[i].f == f && n >= picks[i].from_ranks &&
            (!picks[i].to_ranks || n <= picks[i].to_ranks) && bytes <= picks[i].upto)
            return picks[i].algo;
    return families[f].algos[0]; /* not reached: every family ends with any size */
}

bool cs_coll_algo_allowed(cs_coll_family f, cs_coll_algo a) {
    if (a == CS_ALGO_NCCL) return true; /* every family; the run's engine decides (begin) */
    for (int i = 0; i < 4 && families[f].algos[i]; i++)
        if (families[f].algos[i] == a) return true;
    return false;
}

/* "16 KiB", "512 B" */
static void size_str(size_t b, char *buf, size_t len) {
    if (b >= (1u << 20) && b % (1u << 20) == 0) snprintf(buf, len, "%zu MiB", b >> 20);
    else if (b >= (1u << 10) && b % (1u << 10) == 0) snprintf(buf, len, "%zu KiB", b >> 10);
    else snprintf(buf, len, "%zu B", b);
}

/* The family's default in words: "tree", "direct up to 16 KiB on up to 8
 * ranks, else ring", or "recursive_doubling up to 32 KiB (128 KiB from 16
 * ranks), else ring": each algorithm's rows starting at one rank, then in
 * brackets those of the same algorithm for larger groups. Returns whether it
 * depends on the size. */
static bool default_str(cs_coll_family f, char *buf, size_t len) {
    size_t o = 0;
    int rows = 0;
    buf[0] = '\0';
    for (int i = 0; i < NPICKS && o < len; i++) {
        if (picks[i].f != f || picks[i].from_ranks > 1) continue;
        const char *name = algo_names[picks[i].algo];
        if (picks[i].upto == SIZE_MAX && !picks[i].to_ranks) {
            o += (size_t)snprintf(buf + o, len - o, "%s%s", rows ? ", else " : "", name);
            break;
        }
        char sz[32];
        size_str(picks[i].upto, sz, sizeof sz);
        o += (size_t)snprintf(buf + o, len - o, "%s%s up to %s", rows ? ", " : "", name, sz);
        if (picks[i].to_ranks && o < len)
            o += (size_t)snprintf(buf + o, len - o, " on up to %d ranks", picks[i].to_ranks);
        for (int j = 0; j < NPICKS && o < len; j++)
            if (picks[j].f == f && picks[j].from_ranks > 1 && picks[j].algo == picks[i].algo) {
                size_str(picks[j].upto, sz, sizeof sz);
                o += (size_t)snprintf(buf + o, len - o, " (%s from %d ranks)", sz, picks[j].from_ranks);
            }
        rows++;
    }
    return rows > 0;
}

/* "tree (default), linear", or "ring, recursive_doubling, reduce_broadcast,
 * recursive_halving; default: recursive_doubling up to 32 KiB (128 KiB from 16
 * ranks), else ring"
 * (sep between the list and the default) */
void cs_coll_algos_list(cs_coll_family f, char *buf, size_t len, const char *sep) {
    char def[160];
    bool sized = default_str(f, def, sizeof def);
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < 4 && families[f].algos[i] && o < len; i++)
        o += (size_t)snprintf(buf + o, len - o, "%s%s%s", i ? ", " : "",
                              algo_names[families[f].algos[i]],
                              !sized && strcmp(def, algo_names[families[f].algos[i]]) == 0
                                  ? " (default)" : "");
    if (sized && o < len) snprintf(buf + o, len - o, "%sdefault: %s", sep, def);
}

bool cs_coll_algo_parse(cs_coll_family f, const char *s, cs_coll_algo *out, char *err,
                        size_t errlen) {
    for (int a = 1; a < CS_ALGO_N; a++)
        if (strcmp(s, algo_names[a]) == 0 && cs_coll_algo_allowed(f, (cs_coll_algo)a)) {
            *out = (cs_coll_algo)a;
            return true;
        }
    char list[256];
    cs_coll_algos_list(f, list, sizeof list, "; ");
    snprintf(err, errlen, "unknown %s algorithm '%s' (available: %s)", families[f].name, s, list);
    return false;
}

bool cs_coll_algos_parse(const char *spec, unsigned char *algos, char *err, size_t errlen) {
    char item[128];
    for (const char *p = spec; *p;) {
        size_t n = strcspn(p, ",");
        snprintf(item, sizeof item, "%.*s", (int)(n < sizeof item - 1 ? n : sizeof item - 1), p);
        p += n + (p[n] == ',');
        char *eq = strchr(item, '=');
        if (!eq) {
            snprintf(err, errlen, "'%s' is not COLLECTIVE=ALGORITHM", item);
            return false;
        }
        *eq = '\0';
        int f = 0;
        while (f < CS_FAM_N && strcmp(item, families[f].name) != 0) f++;
        if (f == CS_FAM_N) {
            snprintf(err, errlen, "unknown collective '%s' (all_reduce, broadcast, reduce, "
                                  "all_gather, reduce_scatter, all_to_all, gather, scatter, barrier)",
                     item);
            return false;
        }
        cs_coll_algo a;
        if (!cs_coll_algo_parse((cs_coll_family)f, eq + 1, &a, err, errlen)) return false;
        algos[f] = (unsigned char)a;
    }
    return true;
}

void cs_coll_algos_help(char *buf, size_t len) {
    size_t o = 0;
    buf[0] = '\0';
    for (int f = 0; f < CS_FAM_N && o < len; f++) {
        char list[256];
        cs_coll_algos_list((cs_coll_family)f, list, sizeof list, "\n                        ");
        o += (size_t)snprintf(buf + o, len - o, "        %-15s %s\n",
                              families[f].name, list);
    }
}
