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
# report; lesson output itself must not contain any. The engine's name in the
# report's first line reads "thread" whatever the engine: the rest of the
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

normalise_out() {
    sort_by_rank
}

# The report: the same sort, then mask durations ("0.25 s", "12 ms", "3µs")
# and the engine's name.
normalise_err() {
    sort_by_rank | sed -E -e 's/[0-9]+(\.[0-9]+)? ?(ns|us|µs|ms|s|sec|seconds)\b/<time>/g' \
        -e '1s/, tcp engine, /, thread engine, /'
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
    normalise_out <"$out" >"$out.n"
    normalise_err <"$err" >"$err.n"

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

    # Variants.
    p2p=02-point-to-point
    # Buffered sends break the cycle: the same program finishes.
    run_case $p2p/deadlock.lua eager 0 "--send-mode eager" \
        "out:[rank 0] received tensor([2., 2., 2., 2.]) from rank 1" \
        "out:[rank 1] received tensor([1., 1., 1., 1.]) from rank 0"
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
}

for engine in ${ENGINES:-thread tcp}; do
    all_cases
done

# Collectives: every all_reduce algorithm on a non-power-of-two world, the
# ring by hand on odd sizes, a broadcast along the linear algorithm.
coll=03-collectives
for algo in ring recursive_doubling reduce_broadcast; do
    run_case $coll/all_reduce.lua n3.$algo 0 "-n 3 --algo all_reduce=$algo" \
        "out:[rank 2] sum:    tensor([ 3., 30.,  3.])"
done
for r in 3 5; do
    run_case $coll/ring_allreduce.lua n$r 0 "-n $r" "out:[rank $((r - 1))] same: true"
done
run_case $coll/broadcast.lua linear 0 "--algo broadcast=linear" \
    "out:[rank 3] after:  tensor([1., 2., 3.])"

finish
