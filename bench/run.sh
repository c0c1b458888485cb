#!/usr/bin/env bash
# bench/run.sh -- measure point-to-point latency and bandwidth on the thread
# engine. Figures, not pass/fail: report them with the command that made them.
#   bench/run.sh [extra commsim run options]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=src/commsim
[ -x "$bin" ] || { echo "build first: ./setup" >&2; exit 1; }
echo "== thread engine, rendezvous, $(nproc) cores"
"$bin" run bench/pingpong.lua --no-tui --step-limit 0 --timeout 600 "$@" 2>/dev/null
echo "== thread engine, eager"
"$bin" run bench/pingpong.lua --no-tui --step-limit 0 --timeout 600 --send-mode eager "$@" 2>/dev/null
echo "== visualizer: frame render time, and a 64-rank ring at full speed with the TUI's work"
make -s bench/viz_bench >/dev/null
bench/viz_bench render
bench/viz_bench live
