#!/usr/bin/env bash
# bench/compare.sh -- commsim bench beside its yardsticks, interleaved: raw TCP
# on loopback (bench/raw_tcp, built by make) and Open MPI (bench/mpi_bench.c,
# built here with mpicc when Open MPI is installed; skipped, and said so,
# otherwise). Each repetition runs every contender once, in turn, so a load
# change hits them alike; the figures are medians with min-max, and the load
# average is recorded at each repetition. Figures, not verdicts: the machine
# is shared; compare only within one run of this script.
#
#   bench/compare.sh            REPS=5 repetitions, TIME=0.3 s per commsim figure
#   REPS=7 TIME=0.5 bench/compare.sh
#   MPICC=none bench/compare.sh  without Open MPI (as where it is not installed)
#   BASE=/tmp/old/commsim bench/compare.sh
#                               a second commsim (an older build) measured
#                               beside this one, interleaved: before/after
#   ROUNDS=300 bench/compare.sh  rounds of the 64-rank ring (default 1000)
#
# Figures: 8 B half round trip (osu_latency), 4 MiB bandwidth (osu_bw's
# window; raw_tcp streams blocking sends, then again with a polling receiver), all_reduce of 1 KiB float32 on 4
# ranks (time per call, slowest rank). Open MPI runs oversubscribed, with its
# shared-memory transport (btl vader) and with tcp (btl tcp). Then commsim's
# own costs: 4 MiB bandwidth with eager sends, and the wall time of a 64-rank
# ring (bench/ring_rounds.lua) with and without --trace, per engine, beside
# Open MPI tcp running the same rounds (mpi_bench ring: the whole mpirun, and
# the rounds alone), with the peak RSS of the bandwidth runs and of a
# 256-rank ring (lessons' ring.lua).
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${REPS:-5}
secs=${TIME:-0.3}
bin=${COMMSIM:-src/commsim}
raw=bench/raw_tcp
[ -x "$bin" ] && [ -x "$raw" ] || { echo "build first: ./setup (make builds src/commsim and bench/raw_tcp)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "compare.sh needs python3 for the statistics" >&2; exit 1; }
[ "$reps" -ge 5 ] 2>/dev/null || { echo "REPS: at least 5 repetitions" >&2; exit 1; }
rounds=${ROUNDS:-1000}
base=${BASE:-}
[ -z "$base" ] || [ -x "$base" ] || { echo "BASE: $base is not an executable" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/commsim-compare.XXXXXX")
trap 'rm -rf "$work"' EXIT
results=$work/results.tsv
: >"$results"

mpi=
mpicc=${MPICC:-mpicc}   # MPICC=none leaves Open MPI out
mpi_note="Open MPI: not installed (no $mpicc/mpirun): its rows are skipped"
[ "$mpicc" = none ] && mpi_note="Open MPI: left out (MPICC=none)"
if [ "$mpicc" != none ] && command -v "$mpicc" >/dev/null && command -v mpirun >/dev/null; then
    if "$mpicc" -O2 -o "$work/mpi_bench" bench/mpi_bench.c 2>"$work/mpicc.err"; then
        mpi=$work/mpi_bench
        mpi_note="Open MPI: $(mpirun --version 2>/dev/null | head -1), built with mpicc, oversubscribed"
    else
        mpi_note="Open MPI: $mpicc failed ($(head -1 "$work/mpicc.err")): skipped"
    fi
fi
root=()
[ "$(id -u)" = 0 ] && root=(--allow-run-as-root)

# record FIGURE CONTENDER VALUE
record() { [ -n "$3" ] && printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$results"; return 0; }

# commsim ENGINE OP SIZE RANKS [MODE]: time_us (column 9), or algbw for bw
# (column 10); with BIN set, that commsim instead of this tree's. The peak
# RSS (column 12) goes to $work/rss.
commsim() {
    local col=9 line
    [ "$2" = bw ] && col=10
    line=$("${BIN:-$bin}" bench --engine "$1" --op "$2" --sizes "$3" -n "$4" --time "$secs" \
        --send-mode "${5:-rendezvous}" --format csv 2>/dev/null | sed -n 2p)
    echo "$line" | cut -d, -f12 >"$work/rss"
    echo "$line" | cut -d, -f$col
}

# contenders: this tree's commsim, and BASE's when given
builds() { echo "$bin"; [ -z "$base" ] || echo "$base"; }
# label BIN: "commsim" or "commsim (before)"
label() { if [ "$1" = "$bin" ]; then echo commsim; else echo "commsim (before)"; fi; }

# wall BIN ENGINE [ARGS...]: seconds for the 64-rank ring (to the
# microsecond: time's %e has only hundredths, and the thread engine's rounds
# last a tenth of a second), and its peak RSS to $work/rss
sed "s/^local rounds = .*/local rounds = $rounds/" bench/ring_rounds.lua >"$work/rounds.lua"
wall() {
    local b=$1 e=$2 t0 t1
    shift 2
    t0=$EPOCHREALTIME
    /usr/bin/env time -f '%M' -o "$work/time" "$b" run "$work/rounds.lua" --no-tui \
        --step-limit 0 --timeout 600 --engine "$e" "$@" >/dev/null 2>&1 || return 0
    t1=$EPOCHREALTIME
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f\n", b - a }'
    awk '{ printf "%.1f\n", $1 / 1024 }' "$work/time" >"$work/rss"
}

# mpi BTL NP OP BYTES ITERS: the value after the size
mpi_run() {
    timeout 120 mpirun "${root[@]}" --oversubscribe -np "$2" --mca btl "self,$1" "$mpi" "$3" "$4" "$5" 2>/dev/null |
        awk '{ print $3 }'
}

loads=()
for rep in $(seq 1 "$reps"); do
    loads+=("$(cut -d' ' -f1 /proc/loadavg)")
    echo "repetition $rep of $reps (load ${loads[-1]})" >&2
    for b in $(builds); do
        l=$(label "$b")
        record lat8 "$l thread" "$(BIN=$b commsim thread pingpong 8 2)"
        record lat8 "$l tcp" "$(BIN=$b commsim tcp pingpong 8 2)"
    done
    "$raw" 20000 10 50 >"$work/raw.out"
    record lat8 "raw TCP" "$(awk '/8 B:/ { print $(NF-1) }' "$work/raw.out")"
    record lat8 "raw TCP, polling" "$(awk '/polling, 8 B/ { print $(NF-1) }' "$work/raw.out")"
    if [ -n "$mpi" ]; then
        record lat8 "Open MPI shm" "$(mpi_run vader 2 pingpong 8 20000)"
        record lat8 "Open MPI tcp" "$(mpi_run tcp 2 pingpong 8 20000)"
    fi
    for b in $(builds); do
        l=$(label "$b")
        for e in thread tcp; do
            record bw4m "$l $e" "$(BIN=$b commsim $e bw 4M 2)"
            record rss "$l $e, bw 4 MiB" "$(cat "$work/rss")"
            record bw4me "$l $e" "$(BIN=$b commsim $e bw 4M 2 eager)"
            record rss "$l $e, bw 4 MiB eager" "$(cat "$work/rss")"
        done
    done
    record bw4m "raw TCP" "$(awk '/4 MiB:/ { print $(NF-1) }' "$work/raw.out")"
    record bw4m "raw TCP, polling" "$(awk '/polling, 4 MiB/ { print $(NF-1) }' "$work/raw.out")"
    if [ -n "$mpi" ]; then
        record bw4m "Open MPI shm" "$(mpi_run vader 2 bw 4194304 10)"
        record bw4m "Open MPI tcp" "$(mpi_run tcp 2 bw 4194304 10)"
    fi
    for b in $(builds); do
        l=$(label "$b")
        record ar1k "$l thread" "$(BIN=$b commsim thread all_reduce 1K 4)"
        record ar1k "$l tcp" "$(BIN=$b commsim tcp all_reduce 1K 4)"
    done
    if [ -n "$mpi" ]; then
        record ar1k "Open MPI shm" "$(mpi_run vader 4 all_reduce 1024 2000)"
        record ar1k "Open MPI tcp" "$(mpi_run tcp 4 all_reduce 1024 2000)"
    fi
    for b in $(builds); do
        l=$(label "$b")
        for e in thread tcp; do
            # each traced run writes a fresh file: truncating the last one's
            # is the file system's work, not the trace's
            rm -f "$work/t.jsonl"
            u=$(wall "$b" $e)
            t=$(wall "$b" $e --trace "$work/t.jsonl")
            record ring64 "$l $e" "$u"
            record ring64t "$l $e" "$t"
            [ -n "$u" ] && [ -n "$t" ] &&
                record traceratio "$l $e" "$(awk -v u="$u" -v t="$t" 'BEGIN { printf "%.4f\n", t / u }')"
        done
        rm -f "$work/t.jsonl"
        /usr/bin/env time -f '%M' -o "$work/time" "$b" run lessons/02-point-to-point/ring.lua -n 256 \
            --no-tui >/dev/null 2>&1 &&
            record rss "$l thread, 256-rank ring" "$(awk '{ printf "%.1f\n", $1 / 1024 }' "$work/time")"
    done
    if [ -n "$mpi" ]; then
        # the same rounds (64 B, as ring_rounds.lua's 16 floats): the whole
        # mpirun's wall time as commsim's, and the rounds alone as it prints
        /usr/bin/env time -f '%e' -o "$work/time" timeout 600 mpirun "${root[@]}" --oversubscribe \
            -np 64 --mca btl self,tcp "$mpi" ring 64 "$rounds" >"$work/mpi_ring" 2>/dev/null &&
            record ring64 "Open MPI tcp" "$(cat "$work/time")" &&
            record ring64 "Open MPI tcp, rounds only" "$(awk '{ print $3 }' "$work/mpi_ring")"
    fi
done
loads+=("$(cut -d' ' -f1 /proc/loadavg)")

python3 - "$results" "$reps" "$(nproc)" "$mpi_note" "$rounds" "${loads[@]}" <<'PY'
import statistics, sys
path, reps, cores, note, rounds, loads = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6:]
data = {}
for line in open(path):
    fig, who, v = line.rstrip("\n").split("\t")
    data.setdefault(fig, {}).setdefault(who, []).append(float(v))
figs = [("lat8", "8 B half round trip", "us", True),
        ("bw4m", "4 MiB bandwidth", "GB/s", False),
        ("ar1k", "all_reduce 1 KiB, 4 ranks", "us", True),
        ("bw4me", "4 MiB bandwidth, eager sends", "GB/s", False),
        ("ring64", f"64-rank ring, {rounds} rounds", "s", True),
        ("ring64t", f"64-rank ring, {rounds} rounds, --trace", "s", True),
        ("rss", "peak RSS", "MiB", True)]
ls = sorted(float(x) for x in loads)
print(f"{reps} interleaved repetitions, {cores} cores, load average (1 min) "
      f"{statistics.median(ls):.2f} median, {ls[0]:.2f}-{ls[-1]:.2f}; {note}")
print()
print("| figure | contender | median | min-max | runs |")
print("|---|---|---|---|---|")
med = {}
for key, name, unit, _ in figs:
    for who, v in data.get(key, {}).items():
        m = statistics.median(v)
        med[key, who] = m
        print(f"| {name} | {who} | {m:.3g} {unit} | {min(v):.3g}-{max(v):.3g} | {len(v)} |")
print()
print("ratios of medians, commsim / reference (time: above 1 is slower; bandwidth: below 1 is slower)")
print()
print("| figure | commsim | reference | ratio |")
print("|---|---|---|---|")
for key, name, unit, _ in figs:
    mine = [w for w in data.get(key, {}) if w.startswith("commsim")]
    refs = [w for w in data.get(key, {}) if not w.startswith("commsim")]
    for a in mine:
        for b in refs:
            if med[key, b] > 0:
                print(f"| {name} | {a} | {b} | {med[key, a] / med[key, b]:.2f}x |")
# commsim against itself: what --trace costs, what eager sends keep of
# rendezvous bandwidth, and this build against BASE's
print()
print("| figure | ratio | value |")
print("|---|---|---|")
builds = sorted({w.rsplit(" ", 1)[0] for (k, w) in med if k == "ring64"})
for bl in builds:
    for e in ("thread", "tcp"):
        w = f"{bl} {e}"
        if med.get(("ring64", w)) and ("ring64t", w) in med:
            print(f"| --trace cost, {w} | traced / untraced time | {med['ring64t', w] / med['ring64', w]:.2f}x |")
        r = data.get("traceratio", {}).get(w)
        if r:
            print(f"| --trace cost, {w} | traced / untraced, each repetition's pair: median (min-max) | "
                  f"{statistics.median(r):.2f}x ({min(r):.2f}-{max(r):.2f}) |")
        if med.get(("bw4m", w)) and ("bw4me", w) in med:
            print(f"| eager 4 MiB, {w} | eager / rendezvous bandwidth | {100 * med['bw4me', w] / med['bw4m', w]:.0f} % |")
for key, name, unit, small in figs:
    for (k, w), m in sorted(med.items()):
        if k != key or not w.startswith("commsim (before)"):
            continue
        now = "commsim" + w[len("commsim (before)"):]
        if (key, now) in med and m > 0:
            print(f"| {name}, {now[8:]} | after / before | {med[key, now] / m:.2f}x |")
PY
