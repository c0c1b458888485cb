#!/usr/bin/env bash
# bench/run.sh -- measure the engines. Figures, not pass/fail: report them
# with the command that made them, and the machine's load (uptime) beside them.
#   bench/run.sh [pingpong|allreduce|all] [extra commsim run options]
# pingpong: point-to-point latency and bandwidth on the thread and tcp engines,
#   and raw TCP on loopback in the same run (bench/raw_tcp: two processes,
#   blocking send/recv, the same sizes and counts), the tcp engine's yardstick
#   (the default);
# allreduce: all_reduce time, algbw and busbw per algorithm, 1 KiB to 64 MiB.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=src/commsim
[ -x "$bin" ] || { echo "build first: ./setup" >&2; exit 1; }
what=pingpong
case ${1:-} in pingpong|allreduce|all) what=$1; shift ;; esac
if [ "$what" != allreduce ]; then
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
fi
if [ "$what" != pingpong ]; then
    echo "== thread engine, rendezvous, $(nproc) cores"
    "$bin" run bench/allreduce.lua --no-tui --step-limit 0 --timeout 1800 --mem-limit 1024 "$@" 2>/dev/null
fi
uptime
