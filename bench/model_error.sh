#!/usr/bin/env bash
# model_error.sh -- how well the alpha-beta model (--net) predicts the tcp
# engine on this machine: calibrate the model (commsim bench --calibrate),
# measure pingpong and all_reduce (ring, recursive doubling, tree) across
# sizes on the tcp engine, run the very same bench under the calibrated
# model, and print modelled against measured for every row, then each op's
# median and largest error. A measurement, never a test: see docs/bench.md.
#
#   bench/model_error.sh                      # TIME=0.2 s per size, SIZES=8:4M, RANKS=4
#   TIME=0.5 SIZES=8:16M RANKS=8 bench/model_error.sh
#   NET=alpha=40us,bandwidth=2GB/s bench/model_error.sh   # skip the calibration
set -eu
here=$(cd "$(dirname "$0")" && pwd)
bin=${COMMSIM:-$here/../src/commsim}
TIME=${TIME:-0.2}
SIZES=${SIZES:-8:4M}
RANKS=${RANKS:-4}
command -v python3 >/dev/null || { echo "model_error.sh: needs python3" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "# model_error.sh: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -z "${NET:-}" ]; then
    "$bin" bench --calibrate --engine tcp --sizes "$SIZES" --time "$TIME" >"$work/calib"
    grep '^#.*alpha .* us, bandwidth' "$work/calib" || true
    NET=$(awk '!/^#/ && $1 == "tcp" {print $2}' "$work/calib")
    [ -n "$NET" ] || { cat "$work/calib" >&2; echo "model_error.sh: calibration failed" >&2; exit 1; }
fi
echo "# model: --net $NET; tcp engine, $RANKS ranks for all_reduce, sizes $SIZES, $TIME s per size"

plan=(--engine tcp --op pingpong,all_reduce --algo ring,recursive_doubling,reduce_broadcast
      --sizes "$SIZES" -n "$RANKS" --format csv)
"$bin" bench "${plan[@]}" --time "$TIME" >"$work/measured.csv"
"$bin" bench "${plan[@]}" --iters 1 --net "$NET" >"$work/modelled.csv"
echo "# load at the end $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$work/measured.csv" "$work/modelled.csv" <<'PY'
import csv, statistics, sys
key = lambda r: (r["op"], r["algo"], int(r["bytes"]))
meas = {key(r): float(r["time_us"]) for r in csv.DictReader(open(sys.argv[1]))}
model = {key(r): float(r["time_us"]) for r in csv.DictReader(open(sys.argv[2]))}
errs = {}
print(f"{'op':<11} {'algo':<19} {'bytes':>9} {'measured_us':>12} {'modelled_us':>12} {'error':>8}")
for k in sorted(meas, key=lambda k: (k[0] != "pingpong", k)):
    if k not in model:
        continue
    e = model[k] / meas[k] - 1
    errs.setdefault(k[0] if k[0] == "pingpong" else f"{k[0]} {k[1]}", []).append(e)
    print(f"{k[0]:<11} {k[1]:<19} {k[2]:>9} {meas[k]:>12.2f} {model[k]:>12.2f} {100 * e:>+7.1f}%")
print()
print(f"{'op':<31} {'sizes':>5} {'median |error|':>15} {'max |error|':>12}")
for name, es in errs.items():
    a = [abs(e) for e in es]
    print(f"{name:<31} {len(a):>5} {100 * statistics.median(a):>14.1f}% {100 * max(a):>11.1f}%")
allabs = [abs(e) for es in errs.values() for e in es]
print(f"{'all':<31} {len(allabs):>5} {100 * statistics.median(allabs):>14.1f}% {100 * max(allabs):>11.1f}%")
PY
