#!/usr/bin/env bash
# run_lessons.sh -- golden tests of the lesson scripts.
#
# Runs every lessons/NN-*/*.lua with `commsim run SCRIPT --no-tui`, plus the
# variants listed below (other -n, other send modes), on every engine (thread
# and tcp; ENGINES="thread" narrows it), and checks for each, against the same
# expected files whatever the engine:
#   - the exit status: the header's `--- expect:` (ok 0, error 2, deadlock 3,
#     timeout 4), or the status a variant states;
#   - stdout against tests/lessons/expected/CHAPTER/NAME[.VARIANT].out and
#     stderr (the report) against the matching .err file, after normalising;
#   - a few lines that must appear whatever the golden files say (the
#     intent of the lesson, so that a careless regeneration cannot bless a
#     wrong report).
#
# Normalising: ranks print live, so lines of different ranks interleave in
# no fixed order. Lines tagged "[rank N]" are sorted by N (numerically, so
# rank 10 follows rank 9), each rank's own lines keeping their order;
# untagged lines (the report) follow, in order. Timings are masked in the
# report; lesson output itself must not contain any, except in the scripts
# listed in `timed` below (timing exercises), whose printed durations are
# masked as the report's are. Scripts whose header names a network model
# (`--- net:`) run in modelled time: their output and their report's times
# are exact and compared unmasked; their `real` variants (`--net none`) are
# compared with every number masked. The engine's name in the
# report's header line ("--- NAME: N ranks, ENGINE engine, ...", after any
# warnings) reads "thread" whatever the engine: the rest of the
# report must not differ.
#
# Environment: top_srcdir, top_builddir (set by `make check`; default: the
# tree this script is in). REGEN=1 rewrites the expected files from the
# current output instead of comparing (statuses and required lines are still
# checked): read every changed file before committing it.
#
# Exit status: 0 all passed, 1 a failure, 77 (skip) when src/commsim is missing.

. "$(dirname "$0")/../lib.sh"
lessons=$top_srcdir/lessons
expected=$top_srcdir/tests/lessons/expected
regen=${REGEN:-0}

# A failed case shows the differences in full (and stderr, when the status
# was wrong): they are what regenerating would write.
evidence() { cat "$tmp/diffs"; }

# Sort "[rank N]" lines by N, stably; untagged lines go last, in order.
sort_by_rank() {
    awk '{
        k = 1000000000
        if (match($0, /^\[rank [0-9]+\]/)) k = substr($0, 7, RLENGTH - 7) + 0
        printf "%d\t%d\t%s\n", k, NR, $0
    }' | sort -t "$(printf '\t')" -k1,1n -k2,2n | cut -f3-
}

# Durations: "0.25 s", "12 ms", "3µs".
mask_times() {
    sed -E -e 's/[0-9]+(\.[0-9]+)? ?(ns|us|µs|ms|s|sec|seconds)\b/<time>/g'
}

# Scripts that print wall-clock times on purpose (they vary from run to run).
declare -A timed=(
    ["02-point-to-point/timing.lua"]=1
)

# Real-time runs of the modelled scripts of chapter 04 (variants named
# real*, run with --net none) print measured numbers: every number is masked
# and runs of spaces squeezed, so that only the shape of the output counts.
mask_numbers() {
    sed -E -e 's/-?[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?/<n>/g' -e 's/-?(inf|nan)/<n>/g' -e 's/ +/ /g'
}

# normalise_out REL [VARIANT]
normalise_out() {
    if [ "${2#real}" != "${2:-}" ]; then
        sort_by_rank | mask_numbers
    elif [ -n "${timed[$1]:-}" ]; then
        sort_by_rank | mask_times
    else
        sort_by_rank
    fi
}

# The report: the same sort, then mask durations and the engine's name. A
# run in modelled time (NORMALISE_MODELLED=1: the script's header names a
# network model and the run keeps it) keeps its durations: they are virtual,
# exact, and the same on every engine.
normalise_err() {
    if [ "${NORMALISE_MODELLED:-0}" = 1 ]; then sort_by_rank; else sort_by_rank | mask_times; fi |
        sed -E -e 's/^(--- [^ ]+: [0-9]+ ranks?), tcp engine, /\1, thread engine, /'
}

status_of() {
    case $1 in
        ok) echo 0 ;;
        error) echo 2 ;;
        deadlock) echo 3 ;;
        timeout) echo 4 ;;
        *) echo "" ;;
    esac
}

header_expect() {
    sed -n -E 's/^--- expect:[[:space:]]*([a-z]+).*/\1/p' "$1" | head -n 1
}

# compare KIND EXPECTED_FILE ACTUAL_FILE: 0 when equal (or regenerated)
compare() {
    local kind=$1 want=$2 got=$3
    if [ "$regen" = 1 ]; then
        mkdir -p "$(dirname "$want")"
        if [ ! -f "$want" ] || ! cmp -s "$want" "$got"; then
            cp "$got" "$want"
            echo "# regenerated ${want#"$top_srcdir"/}"
        fi
        return 0
    fi
    if [ ! -f "$want" ]; then
        echo "# missing ${want#"$top_srcdir"/}; the $kind was:"
        sed 's/^/#   /' "$got"
        echo "# (REGEN=1 $0 writes it: check it before committing)"
        return 1
    fi
    if ! cmp -s "$want" "$got"; then
        echo "# $kind differs from ${want#"$top_srcdir"/}:"
        diff -u --label "expected $kind" --label "actual $kind" "$want" "$got" | sed 's/^/#   /'
        return 1
    fi
    return 0
}

# run_case REL VARIANT STATUS ARGS [out:TEXT | err:TEXT ...]
#   REL      script path under lessons/, e.g. 02-point-to-point/chain.lua
#   VARIANT  "" for the plain run, else a suffix of the expected files
#   STATUS   expected exit status, "" to take it from the header
#   ARGS     extra arguments for `commsim run` (split on spaces)
#   TEXT     a fixed string that must appear in stdout (out:) or stderr (err:)
run_case() {
    local rel=$1 variant=$2 want_status=$3 args=$4
    shift 4
    local script=$lessons/$rel
    local base=${rel%.lua}${variant:+.$variant}
    local desc="$rel${args:+ $args} [$engine]"
    local why=() status

    if [ -z "$want_status" ]; then
        local exp
        exp=$(header_expect "$script")
        want_status=$(status_of "${exp:-ok}")
        if [ -z "$want_status" ]; then
            : >"$tmp/diffs"
            bad "$desc" "unknown '--- expect: $exp' in $rel"
            return
        fi
    fi

    local out=$tmp/out err=$tmp/err
    # shellcheck disable=SC2086  # ARGS is a list of words
    guarded "$bin" run "$script" --no-tui --engine "$engine" $args >"$out" 2>"$err" </dev/null
    status=$?
    normalise_out "$rel" "$variant" <"$out" >"$out.n"
    local modelled=0
    if grep -qE '^--- net:' "$script" && [ "${variant#real}" = "$variant" ]; then modelled=1; fi
    NORMALISE_MODELLED=$modelled normalise_err <"$err" >"$err.n"

    if [ "$status" != "$want_status" ]; then
        why+=("exit status $status, expected $want_status")
    fi
    local need text file
    for need in "$@"; do
        text=${need#*:}
        case $need in
            out:*) file=$out.n ;;
            *) file=$err.n ;;
        esac
        if ! grep -qF -- "$text" "$file"; then
            why+=("${need%%:*} lacks: $text")
        fi
    done
    local diffs=$tmp/diffs
    : >"$diffs"
    compare stdout "$expected/$base.out" "$out.n" >>"$diffs" || why+=("stdout differs")
    compare report "$expected/$base.err" "$err.n" >>"$diffs" || why+=("report differs")

    if [ ${#why[@]} -eq 0 ]; then
        ok "$desc"
        [ "$regen" = 1 ] && cat "$diffs"
    else
        local msg=${why[0]} i
        for ((i = 1; i < ${#why[@]}; i++)); do msg+="; ${why[i]}"; done
        if [ "$status" != "$want_status" ]; then
            echo "# stderr was:"
            sed 's/^/#   /' "$err"
        fi >>"$diffs"
        bad "$desc" "$msg"
    fi
    return 0
}

# Lines that state what each lesson is about (checked on its plain run).
declare -A required=(
    ["02-point-to-point/chain.lua"]="out:[rank 3] end:   tensor([21., 22., 23., 24.])"
    ["02-point-to-point/deadlock.lua"]="err:rank 0 is blocked in send to rank 1|err:rank 1 is blocked in send to rank 0"
    ["02-point-to-point/eager_limit.lua"]="out:done: received 256 values|err:--send-mode eager:1024|err:up to 1024 bytes|err:4096 bytes"
    ["02-point-to-point/pitfalls.lua"]="err:rank 0 is blocked in recv from rank 1|err:rank 1 has already finished"
    ["01-first-program/hello.lua"]="out:[rank 3] all_gather: the ranks are 0, 1, 2, 3|out:[rank 3] all_reduce: their sum is 6"
    ["03-collectives/all_reduce.lua"]="out:[rank 3] sum:    tensor([ 6., 60.,  4.])|out:[rank 0] bor:    tensor([15])"
    ["03-collectives/ring_allreduce.lua"]="out:[rank 0] built-in ring:  tensor([10., 20., 30., 40.])|out:[rank 3] same: true"
    ["02-point-to-point/isend_reuse.lua"]="err:isend_reuse.lua:18: writes to a tensor (or a view of it) that the isend posted at isend_reuse.lua:19 is still sending|err:warnings: 1 pitfall"
    ["02-point-to-point/forgot_wait.lua"]="err:forgot_wait.lua:13: the isend posted here was never waited on|err:forgot_wait.lua:20: reads a tensor (or a view of it) that the irecv posted at forgot_wait.lua:19|err:warnings: 2 pitfalls"
    ["02-point-to-point/forgot_wait_fixed.lua"]="out:[rank 1] after wait(): tensor([7., 8., 9.]), first value 7"
    ["02-point-to-point/isend_reuse_fixed.lua"]="out:[rank 1] tag 12: tensor([4., 5., 6.])"
    ["02-point-to-point/chain_ring.lua"]="out:[rank 0] after a full circle: tensor([31., 32., 33., 34.])"
    ["02-point-to-point/ring_pipeline.lua"]="out:[rank 0] back at rank 0: tensor([15, 10])"
    ["02-point-to-point/timing.lua"]="out:[rank 1] blocking:    <time>|out:[rank 1] non-blocking: <time>"
    ["06-collectives-in-training/broadcast_weights.lua"]="out:[rank 3] after bcast: weight sum 15, bias tensor([0., 0.])|out:[rank 0] every replica holds rank 0's weights: true"
    ["06-collectives-in-training/ddp_all_reduce.lua"]="out:[rank 2] average:           tensor([-48., -48., -64.])|out:[rank 3] weights after one step: tensor([3., 3., 4.])"
    ["06-collectives-in-training/bucketing.lua"]="out:[rank 0] same gradients either way: true|err:collectives: 7"
    ["06-collectives-in-training/metric_reduce.lua"]="out:[rank 0] total: 31 correct of 46 samples"
    ["06-collectives-in-training/sync_batchnorm.lua"]="out:[rank 3] global channel 0: mean 8, variance 21"
    ["06-collectives-in-training/zero_sharding.lua"]="out:[rank 1] after reduce_scatter: averaged gradient of my shard tensor([2., 3.])|out:[rank 2] after all_gather: all weights tensor([10., 19., 28., 37., 46., 55., 64., 73.])"
    ["06-collectives-in-training/gather_scatter.lua"]="out:[rank 3] my shard: tensor([10., 11., 12.])|out:[rank 0]   loss of rank 3: 365"
    ["06-collectives-in-training/moe_all_to_all.lua"]="out:[rank 0] results in token order: 201 402 303 304"
    ["06-collectives-in-training/recursive_halving.lua"]="out:[rank 3] same: true|out:[rank 0] recursive_halving:  tensor([10., 10., 10.])|err:messages: 16, bytes: 192"
    ["04-performance/pingpong.lua"]="out:[rank 0]        4 B: one way 10.004 us, 0.0004 GB/s|out:[rank 0]  4194304 B: one way 4204.304 us, 0.9976 GB/s"
    ["04-performance/alpha_beta.lua"]="out:[rank 0] fit: alpha = 10.000 us, bandwidth = 1.0000 GB/s"
    ["04-performance/chunking.lua"]="out:[rank 3] k = 16 chunks of   65536 B: 1359.648 us (formula 1359.648 us)|out:[rank 3] k =  1 chunks of 1048576 B: 3175.728 us (formula 3175.728 us)"
    ["04-performance/allreduce_algos.lua"]="out:ring beats recursive doubling above n = 80000 bytes|out:[rank 0]     16384  84.576 (84.576)        105.536 (105.536)      52.768 (52.768)        recursive_doubling|out:[rank 0]    131072  256.608 (256.608)      564.288 (564.288)      282.144 (282.144)      ring"
    ["04-performance/pipeline.lua"]="out:...12345678hhggffeeddccbbaa......|out:...1aa2bb3cc4dd5ee6ff7gg8hh......|out:[rank 0] gpipe makespan 33.100 ms, bubble 0.2749 (formula (p - 1) / (m + p - 1) = 0.2727)"
    ["05-gpu/device_tensors.lua"]="out:[rank 1] y on rank 1: tensor([ 1.,  3.,  5.,  7.,  9., 11.])|out:[rank 0] after 10 round trips: tensor([0., 1., 2., 3.])"
    ["05-gpu/p2p_nccl.lua"]="out:[rank 1] tag 3: tensor([3., 3.]), tag 7: tensor([7., 7.])|out:[rank 1] from any source: tensor([42.]) sent by rank 0|out:[rank 0] exchanged: I sent tensor([10., 10., 10.]), I got tensor([20., 20., 20.])"
    ["05-gpu/pipeline.lua"]="out:[rank 0] one micro-batch: grad w0 = tensor([ 7., 14., 42., 56.])|out:[rank 1] 4 micro-batches: errors -3, -4, -5, -6; grad w1 = tensor([-50., -36.,   0., -36.])|out:[rank 0] 4 micro-batches: grad w0 = tensor([-50., -18.,   0., -36.])"
    ["03-collectives/mismatch.lua"]="err:why: ranks 0, 1, 2 entered all_reduce(SUM, float32, 4 elements) at mismatch.lua:16|err:rank 3 did not call it: it has finished"
)

all_cases() {
    # Every lesson script, as its header says.
    shopt -s nullglob
    for script in "$lessons"/[0-9]*/*.lua; do
        rel=${script#"$lessons"/}
        IFS='|' read -r -a needs <<<"${required[$rel]:-}"
        run_case "$rel" "" "" "" "${needs[@]}"
    done

    # A README's listing of a script ("## NAME.lua" then a lua block) is the
    # script's code: its lines without the blank and comment-only ones.
    for readme in "$lessons"/[0-9]*/README.md; do
        chdir=$(dirname "$readme")
        for name in $(sed -n -E 's/^## ([A-Za-z0-9_]+\.lua).*/\1/p' "$readme"); do
            [ -f "$chdir/$name" ] || continue
            listing=$(awk -v n="$name" '$0 ~ "^## " n {h=1; next} h && /^```lua/ {c=1; next}
                      c && /^```/ {exit} c' "$readme" | grep -vE '^[[:space:]]*(--.*)?$')
            code=$(grep -vE '^[[:space:]]*(--.*)?$' "$chdir/$name")
            if [ "$listing" = "$code" ]; then ok "${chdir##*/}/README.md: the listing of $name is the file"
            else bad "${chdir##*/}/README.md: the listing of $name is the file"
                 diff <(echo "$code") <(echo "$listing") | sed 's/^/#   /'; fi
        done
    done

    # Variants.
    p2p=02-point-to-point
    # Buffered sends break the cycle: the same program finishes.
    run_case $p2p/deadlock.lua eager 0 "--send-mode eager" \
        "out:[rank 0] received tensor([2., 2., 2., 2.]) from rank 1" \
        "out:[rank 1] received tensor([1., 1., 1., 1.]) from rank 0"
    # The deadlock demo takes any world size: the cycle grows with it.
    run_case $p2p/deadlock.lua n4 3 "-n 4" \
        "err:rank 3 is blocked in send to rank 0" "err:rank 0 is blocked in send to rank 1"
    # Every size fits under a 4096-byte limit (the limit is inclusive).
    run_case $p2p/eager_limit.lua eager4096 0 "--send-mode eager:4096" \
        "out:done: received 1024 values"
    # Without any buffering the first exchange already deadlocks.
    run_case $p2p/eager_limit.lua rendezvous 3 "--send-mode rendezvous" \
        "err:rendezvous"
    # The parity rule works for even and odd ring sizes.
    for r in 2 3 4 8; do
        run_case $p2p/ring.lua n$r 0 "-n $r" \
            "out:sum of all ranks: tensor([$((r * (r - 1) / 2)).,"
    done
    # No middle rank: the end equals the start; 14 middle ranks: +140.
    run_case $p2p/chain.lua n2 0 "-n 2" "out:[rank 1] end:   tensor([1., 2., 3., 4.])"
    run_case $p2p/chain.lua n16 0 "-n 16" "out:[rank 15] end:   tensor([141., 142., 143., 144.])"
    # The ring exercise's prediction, start + 10 * (n - 1), for other sizes.
    run_case $p2p/chain_ring.lua n2 0 "-n 2" "out:after a full circle: tensor([11., 12., 13., 14.])"
    run_case $p2p/chain_ring.lua n7 0 "-n 7" "out:after a full circle: tensor([61., 62., 63., 64.])"
    # Every rank adds once: 2^n - 1 and n (n + 1) / 2.
    run_case $p2p/ring_pipeline.lua n2 0 "-n 2" "out:[rank 0] back at rank 0: tensor([3, 3])"
    run_case $p2p/ring_pipeline.lua n8 0 "-n 8" "out:[rank 0] back at rank 0: tensor([255,  36])"
    # Recursive halving by hand on 2 and 8 ranks: 2 log2 n messages per rank.
    ch6=06-collectives-in-training
    run_case $ch6/recursive_halving.lua n2 0 "-n 2" "out:[rank 1] same: true" "err:messages: 4,"
    run_case $ch6/recursive_halving.lua n8 0 "-n 8" "out:[rank 7] same: true" "err:messages: 48,"
    # Chapter 04 under --net none: real time on this engine, numbers masked.
    ch4=04-performance
    run_case $ch4/pingpong.lua real 0 "--net none" "out:[rank <n>] <n> B: one way <n> us, <n> GB/s"
    run_case $ch4/alpha_beta.lua real 0 "--net none" "out:[rank <n>] fit: alpha = <n> us, bandwidth = <n> GB/s"
    # Two ranks: nothing to overlap, every chunk adds alpha; eight ranks: the
    # crossover moves to 8.8 alpha / beta.
    run_case $ch4/chunking.lua n2 0 "-n 2" \
        "out:[rank 1] k = 64 chunks of   16384 B: 1688.576 us (formula 1688.576 us)" \
        "out:[rank 1] one hop: nothing to overlap"
    run_case $ch4/allreduce_algos.lua n8 0 "-n 8" \
        "out:ring beats recursive doubling above n = 88000 bytes (8.8 alpha / beta)"
}

for engine in ${ENGINES:-thread tcp}; do
    all_cases
done

# Collectives: every all_reduce algorithm on a non-power-of-two world, the
# ring by hand on odd sizes, a broadcast along the linear algorithm.
coll=03-collectives
for algo in ring recursive_doubling reduce_broadcast recursive_halving; do
    run_case $coll/all_reduce.lua n3.$algo 0 "-n 3 --algo all_reduce=$algo" \
        "out:[rank 2] sum:    tensor([ 3., 30.,  3.])"
done
for r in 3 5; do
    run_case $coll/ring_allreduce.lua n$r 0 "-n $r" "out:[rank $((r - 1))] same: true"
done
run_case $coll/broadcast.lua linear 0 "--algo broadcast=linear" \
    "out:[rank 3] after:  tensor([1., 2., 3.])"

# Bucketing: the messages of each all_reduce line, counted in the trace (the
# report counts the script's own messages only). Ring, 4 ranks: 6 per rank
# and call; six calls on line 23, one on line 37.
engine=thread
bucket_trace=$tmp/bucketing.jsonl
guarded "$bin" run "$lessons/06-collectives-in-training/bucketing.lua" --no-tui \
    --trace "$bucket_trace" >/dev/null 2>&1 </dev/null
sends_on() { grep -E '"op": *"isend"' "$bucket_trace" | grep -cE "\"ctx\": *1,.*\"line\": *$1[,}]"; }
if [ "$(sends_on 23)" = 144 ] && [ "$(sends_on 37)" = 24 ]; then
    ok "06-collectives-in-training/bucketing.lua: 144 messages unbucketed, 24 bucketed"
else
    : >"$tmp/diffs"
    bad "06-collectives-in-training/bucketing.lua: message counts" \
        "line 23: $(sends_on 23) isends (want 144), line 37: $(sends_on 37) (want 24)"
fi

finish
