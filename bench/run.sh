#!/usr/bin/env bash
# bench/run.sh -- measure point-to-point latency and bandwidth on the thread
# and tcp engines, and raw TCP on loopback in the same run (bench/raw_tcp: two
# processes, blocking send/recv, the same sizes and counts) as the yardstick of
# the tcp engine. Figures, not pass/fail: report them with the command that
# made them, and the machine's load (uptime) beside them.
#   bench/run.sh [extra commsim run options]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=src/commsim
[ -x "$bin" ] || { echo "build first: ./setup" >&2; exit 1; }
echo "== thread engine, rendezvous, $(nproc) cores"
"$bin" run bench/pingpong.lua --no-tui --step-limit 0 --timeout 600 "$@" 2>/dev/null
echo "== thread engine, eager"
"$bin" run bench/pingpong.lua --no-tui --step-limit 0 --timeout 600 --send-mode eager "$@" 2>/dev/null
echo "== tcp engine, rendezvous"
"$bin" run bench/pingpong.lua --no-tui --step-limit 0 --timeout 600 --engine tcp "$@" 2>/dev/null
echo "== tcp engine, eager"
"$bin" run bench/pingpong.lua --no-tui --step-limit 0 --timeout 600 --engine tcp --send-mode eager "$@" 2>/dev/null
echo "== raw TCP on loopback (bench/raw_tcp)"
bench/raw_tcp
uptime
