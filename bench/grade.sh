#!/bin/sh
# grade.sh -- throughput of `commsim grade`: four-rank ring cases per second.
# A class of COPIES copies of the ring reference solution, graded on a spec
# of one four-rank case with rendezvous sends on the thread engine, with
# --jobs (default: the CPU count). A measurement, not a test.
#   bench/grade.sh [COPIES] [JOBS]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
bin=$top/src/commsim
copies=${1:-200}
jobs=${2:-$(nproc)}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/commsim-grade-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/ex" "$tmp/class"
cat >"$tmp/ex/spec.lua" <<'LUA'
return {
    title = "ring, one four-rank case",
    allowed = {"send", "recv", "isend", "irecv"},
    cases = {{name = "four ranks", world = 4, send_modes = {"rendezvous"},
              result = function(rank, world) return {world * (world + 1) / 2} end}},
}
LUA
i=0
while [ $i -lt "$copies" ]; do
    cp "$top/tests/grade/ring/reference.lua" "$tmp/class/s$i.lua"
    i=$((i + 1))
done
start=$(date +%s.%N)
"$bin" grade "$tmp/ex" "$tmp/class" --jobs "$jobs" --csv "$tmp/summary.csv" >/dev/null
end=$(date +%s.%N)
passed=$(grep -c ',1,1,' "$tmp/summary.csv" || true)
echo "$copies four-rank ring cases ($passed passed) with --jobs $jobs on $(nproc) CPUs:" \
     "$(echo "$copies / ($end - $start)" | bc -l | xargs printf '%.1f') cases/s"
