#!/bin/sh
# export.sh -- how long `commsim export` takes on a big trace: the 64-rank
# ring of bench/export_ring.lua (192,000 messages, about a million events),
# read by `commsim replay --no-tui` (the loader and the monitor alone) and
# drawn in every format. Wall and CPU seconds, peak memory and the size of
# each picture, with the machine's load. A measurement, not a test.
#   bench/export.sh [TRACE]      (default: made once in $TMPDIR)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${COMMSIM:-$top/src/commsim}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/commsim-export-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trace=${1:-}
if [ -z "$trace" ]; then
    trace=$tmp/ring64.jsonl
    "$bin" run "$top/bench/export_ring.lua" -n 64 --no-tui --trace "$trace" >/dev/null
fi
echo "trace: $trace ($(wc -l <"$trace") events, $(du -h "$trace" | cut -f1))"
measure() { # NAME COMMAND...: one line of figures
    name=$1
    shift
    /usr/bin/time -f "%e %U %M" -o "$tmp/time" "$@" >/dev/null 2>"$tmp/err" || {
        echo "$name: failed"; cat "$tmp/err"; return 0; }
    read -r wall user kb <"$tmp/time"
    printf '%-10s wall %6.2f s  user %6.2f s  peak %5d MiB' "$name" "$wall" "$user" $((kb / 1024))
    [ -f "$tmp/out" ] && printf '  output %s' "$(du -h "$tmp/out" | cut -f1)" && rm -f "$tmp/out"
    echo
}
measure replay "$bin" replay "$trace" --no-tui
for f in perfetto svg mermaid asciicast; do
    measure "$f" "$bin" export "$trace" --format $f --out "$tmp/out"
done
uptime
