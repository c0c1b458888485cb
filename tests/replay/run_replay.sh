#!/usr/bin/env bash
# run_replay.sh -- replay equals live, and the verdicts and pitfalls on real
# scripts. For every lesson and every script here: run it with --trace, replay
# the trace, and require the same standard output, the same report (byte for
# byte: the trace keeps the order the live report printed in) and the same exit
# status. Then: what each verdict and pitfall says, --strict, and broken traces.
. "$(dirname "$0")/../lib.sh"
dir="$top_srcdir/tests/replay/scripts"
cli="$top_srcdir/tests/cli/scripts"

# ---- replay = live
for script in "$top_srcdir"/lessons/[0-9]*/*.lua; do replay_same "${script#"$top_srcdir"/}" "$script"; done
replay_same "deadlock.lua eager" "$top_srcdir/lessons/02-point-to-point/deadlock.lua" --send-mode eager
replay_same "eager_limit.lua rendezvous" "$top_srcdir/lessons/02-point-to-point/eager_limit.lua" --send-mode rendezvous
for script in "$dir"/*.lua; do replay_same "${script##*/}" "$script"; done
replay_same "unreceived.lua eager" "$dir/unreceived.lua" --send-mode eager
replay_same "--strict" "$dir/pitfalls_all.lua" --strict
replay_same "--strict at the end of the run" "$dir/unreceived.lua" --send-mode eager --strict
replay_same "script error" "$cli/error.lua"
replay_same "instruction budget" "$cli/loop.lua" --step-limit 1000000
replay_same "timeout" "$cli/sleeper.lua" --timeout 1
replay_same "deadlock found at the timeout" "$dir/partial.lua" --timeout 1

# ---- verdicts on real scripts
L="$top_srcdir/lessons/02-point-to-point"
expect "both send first: cycle of sends"     3 "why: every blocked rank is sending and none is receiving" -- run "$L/deadlock.lua"
expect "eager:N names the limit"             3 "sends of up to 1024 bytes are buffered" -- run "$L/eager_limit.lua"
expect "waiting on a finished rank"          3 "rank 1 has already finished (its last operation: the send to rank 0 at pitfalls.lua:26) and sent nothing more" -- run "$L/pitfalls.lua"
expect "mixed cycle through isend and wait"  3 "wait on each other in a cycle" -- run "$dir/wait_cycle.lua"
expect "mixed cycle names the wait's line"   3 "waiting (wait_cycle.lua:6) for the isend posted at line 5 to rank 1" -- run "$dir/wait_cycle.lua"
expect "a deadlock while another rank runs on: found at the timeout"   3 "rank 2 is still running, but can release none of them" -- run "$dir/partial.lua" --timeout 1
expect "any source after every sender ended" 3 "rank 0 waits to receive from any rank, but every other rank has already finished" -- run "$dir/any_orphan.lua"
expect "receive from itself: deadlock"       3 "rank 1 receives from itself (self_recv.lua:5)" -- run "$dir/self_recv.lua"
expect "receive from itself: warned at once" 3 "self_recv.lua:5: dist.recv from rank 1, the rank itself, waits forever" -- run "$dir/self_recv.lua"
expect "receive from itself after an isend"  0 "[rank 0] tensor([1., 1.])" -- run "$dir/self_ok.lua"
count_lines "... is no pitfall"                   0 "warning"
expect "waiting on a rank that failed"       2 "rank 0 was waiting on it: irecv from rank 1 (tag 0, 8 bytes) posted at failed_peer.lua:5" -- run "$dir/failed_peer.lua"
expect "receive from outside the world"      2 "source 5 is outside the world" -- run "$dir/outside.lua"

# ---- pitfalls on real scripts: each once per site, both lines named
expect "pitfalls are warnings"               0 "warnings: 5 pitfalls (see above)" -- run "$dir/pitfalls_all.lua"
count_lines "write to an isend buffer, once per site" 1 "pitfalls_all.lua:9: writes to a tensor (or a view of it) that the isend posted at pitfalls_all.lua:8 is still sending"
count_lines "write to a view of an isend buffer"  1 "pitfalls_all.lua:11: writes to a tensor (or a view of it) that the isend posted at pitfalls_all.lua:8"
count_lines "read an irecv buffer before its wait" 1 "pitfalls_all.lua:22: reads a tensor (or a view of it) that the irecv posted at pitfalls_all.lua:21"
count_lines "write an irecv buffer before its wait" 1 "pitfalls_all.lua:23: writes to a tensor (or a view of it) that the irecv posted at pitfalls_all.lua:21"
count_lines "a request never waited on"           1 "pitfalls_all.lua:17: the isend posted here was never waited on"
count_lines "no warning after the wait (line 14)" 0 "pitfalls_all.lua:14:"
expect "messages never received"            0 "unreceived.lua:4: 3 messages sent here to rank 1 (tag 7, 24 bytes in all) were never received" -- run "$dir/unreceived.lua" --send-mode eager
expect "--strict: the pitfall fails the rank" 2 "rank 0 failed: eager_write.lua:6: writes to a tensor (or a view of it) that the isend posted at eager_write.lua:5 is still sending: rank 1 may receive the old values or the new ones. Call wait() on the isend's work handle before changing the tensor (--strict)" -- run "$dir/eager_write.lua" --strict
expect "--strict reaches tcp rank processes" 2 "rank 0 failed: eager_write.lua:6: writes to a tensor (or a view of it) that the isend posted at eager_write.lua:5 is still sending: rank 1 may receive the old values or the new ones. Call wait() on the isend's work handle before changing the tensor (--strict)" -- run "$dir/eager_write.lua" --strict --engine tcp
expect "a rendezvous isend: writing is a pitfall" 0 "eager_write.lua:6: writes to a tensor" -- run "$dir/eager_write.lua"
expect "--strict: never received is an error" 2 "--strict: 1 pitfall found (see the warnings above)" -- run "$dir/unreceived.lua" --send-mode eager --strict
expect "--strict: never waited is an error"  2 "never_waited.lua:3: the irecv posted here was never waited on" -- run "$dir/never_waited.lua" --strict
expect "eager isend: writing after it is fine" 0 "" -- run "$dir/eager_write.lua" --send-mode eager
count_lines "... no warning"                      0 "warning"
expect "the lessons have no pitfalls"        0 "" -- run "$L/async.lua"
count_lines "... async.lua is clean"              0 "warning"

# ---- replay: usage, broken and cut traces
expect "replay --help"                       0 "usage: commsim replay TRACE" -- replay --help
expect "help replay"                         0 "--no-tui" -- help replay
expect "replay without a trace"              1 "which trace?" -- replay
# --at N or RANK:LINE: where the visualizer opens; anything else is refused.
expect "replay --help names --at"            0 "--at RANK:LINE" -- replay --help
for bad_at in 0 -2 x 1: :3 0:0 1:2:3; do
  expect "replay --at $bad_at refused"         1 "commsim replay: --at: '$bad_at' is neither an event number" \
    -- replay "$tmp/none.jsonl" --at "$bad_at"
done
"$bin" run "$top_srcdir/lessons/02-point-to-point/deadlock.lua" --trace "$tmp/at.jsonl" >/dev/null 2>&1
expect "replay --at without a terminal: the plain report" 3 "deadlock" -- replay "$tmp/at.jsonl" --at 0:7
# the usage's [--end | --at N]: two places to open at are refused, in either order
expect "replay --end --at: refused"          1 "--end and --at each say where to open" \
  -- replay "$tmp/at.jsonl" --end --at 0:7
expect "replay --at --end: refused"          1 "--end and --at each say where to open" \
  -- replay "$tmp/at.jsonl" --at 3 --end
expect "replay a missing file"               1 "$tmp/nope.jsonl" -- replay "$tmp/nope.jsonl"
"$bin" run "$L/chain.lua" -n 4 --trace "$tmp/c.jsonl" >/dev/null 2>&1
sed '3s/.*/{"type":"bogus"}/' "$tmp/c.jsonl" >"$tmp/bad.jsonl"
expect "malformed line: FILE:LINE: reason"   1 "$tmp/bad.jsonl:3: " -- replay "$tmp/bad.jsonl"
printf 'not json\n' >"$tmp/junk.jsonl"
expect "not a trace at all"                  1 "$tmp/junk.jsonl:1: not JSON" -- replay "$tmp/junk.jsonl"
n=$(wc -l <"$tmp/c.jsonl")
{ head -n $((n - 1)) "$tmp/c.jsonl"; tail -n 1 "$tmp/c.jsonl" | head -c 20; } >"$tmp/cut.jsonl"
expect "cut trace: replayed up to the cut"   1 "$tmp/cut.jsonl:$n: trace cut off mid-event: replayed the $((n - 1)) events before it" -- replay "$tmp/cut.jsonl"
expect "cut trace: says the run did not end" 1 "the trace ends before the run did: 1 rank had not finished" -- replay "$tmp/cut.jsonl"
# cut inside its run header: nothing to show, and no empty report or picture
head -c 60 "$tmp/c.jsonl" >"$tmp/hcut.jsonl"
expect "cut in its header: nothing to show" 1 "$tmp/hcut.jsonl:1: trace cut off mid-event, inside its run header: nothing to show" \
  -- replay "$tmp/hcut.jsonl" --no-tui
grep -q -e "--- run:" -e "verdict" "$tmp/out" && bad "cut in its header: no report" || ok "cut in its header: no report"
expect "cut in its header: no picture either" 1 "inside its run header: nothing to show" -- export "$tmp/hcut.jsonl" -f mermaid
grep -q sequenceDiagram "$tmp/out" && bad "cut in its header: no empty diagram" || ok "cut in its header: no empty diagram"
"$bin" run "$L/deadlock.lua" --trace "$tmp/d.jsonl" >/dev/null 2>&1
k=$(grep -n '"type":"deadlock"' "$tmp/d.jsonl" | cut -d: -f1)
{ head -n $((k - 1)) "$tmp/d.jsonl"; sed -n "${k}p" "$tmp/d.jsonl" | head -c 30; } >"$tmp/dcut.jsonl"
# The monitor still explains what the events show, but a cut trace is never
# a verdict: status 1, even when every rank's exit came before the cut.
expect "cut deadlock trace: the monitor still finds it" 1 "why: every blocked rank is sending" -- replay "$tmp/dcut.jsonl"
{ cat "$tmp/c.jsonl"; printf '{"type":"print","ra'; } >"$tmp/exitcut.jsonl"
expect "cut after every exit: not ok"        1 "verdict: failed (exit status 1)" -- replay "$tmp/exitcut.jsonl"
# the header's modes: the trace's fault, not a --net the user did not pass
sed '1s/"send_mode":"[^"]*"/"send_mode":"telepathy"/' "$tmp/c.jsonl" >"$tmp/sm.jsonl"
expect "an unknown send mode in the header: FILE:1" 1 "$tmp/sm.jsonl:1: field \"send_mode\": unknown mode \"telepathy\"" -- replay "$tmp/sm.jsonl"
"$bin" run "$L/pingpong.lua" --net ethernet-1g --trace "$tmp/n.jsonl" >/dev/null 2>&1
sed '1s/"net":"[^"]*"/"net":"warp-drive"/' "$tmp/n.jsonl" >"$tmp/warp.jsonl"
expect "an unknown model in the header: FILE:1" 1 "$tmp/warp.jsonl:1: field \"net\": unknown model 'warp-drive'" -- replay "$tmp/warp.jsonl"
# an error's status is the run's exit status: only one a run ends with
for st in 99 -1 0; do
  { head -n 1 "$tmp/c.jsonl"
    echo "{\"type\":\"error\",\"rank\":-1,\"seq\":0,\"t\":0.1,\"status\":$st,\"text\":\"weird\"}"; } >"$tmp/st.jsonl"
  expect "an error of status $st: FILE:LINE, status 1" 1 "$tmp/st.jsonl:2: field \"status\" out of range: $st" -- replay "$tmp/st.jsonl"
done

# ---- a killed run: its trace holds whole events up to the kill and replays
# (the writer thread writes whole lines in batches; nothing is half written
# unless the disk fails). Killed with SIGKILL, so nothing is flushed at exit.
cat >"$tmp/forever.lua" <<'LUA'
local t = tensor.ones(4)
while true do
    if rank == 0 then dist.send(t, 1) else dist.recv(t, 0) end
end
LUA
# lines_over FILE N: FILE has more than N lines
lines_over() { [ "$(wc -l <"$1" 2>/dev/null || echo 0)" -gt "$2" ]; }
for engine in thread tcp; do
    rm -f "$tmp/k.jsonl"
    setsid "$bin" run "$tmp/forever.lua" --no-tui --step-limit 0 --timeout 60 --engine $engine \
        --trace "$tmp/k.jsonl" >/dev/null 2>&1 &
    kpid=$!
    wait_until 10 lines_over "$tmp/k.jsonl" 2000
    kill -KILL -- -"$kpid" 2>/dev/null
    wait "$kpid" 2>/dev/null
    if [ "$(wc -l <"$tmp/k.jsonl")" -le 2000 ]; then
        bad_showing "$tmp/k.jsonl" "killed $engine run: the trace grew while it ran"
        continue
    fi
    expect "killed $engine run: replays up to the kill" 1 \
        "the trace ends before the run did: 2 ranks had not finished" -- replay "$tmp/k.jsonl" --no-tui
    count_lines "... with no broken line" 0 "not JSON"
done

# ---- the run header records the script's text (replay shows the source from
# anywhere; the TUI suite checks the screen): byte for byte, and absent for a
# script too long to record
if command -v python3 >/dev/null; then
  "$bin" run "$L/chain.lua" --no-tui --trace "$tmp/src.jsonl" >/dev/null 2>&1
  python3 - "$tmp/src.jsonl" "$L/chain.lua" <<'PY' && ok "header: the script's text, byte for byte" || bad_showing "$tmp/src.jsonl" "header source"
import json, sys
h = json.loads(open(sys.argv[1]).readline())
assert h["type"] == "run" and h["source"] == open(sys.argv[2]).read()
PY
  { echo 'print("big")'; for i in $(seq 1 3000); do echo "-- padding line $i: a script longer than the header records ......"; done; } >"$tmp/big.lua"
  "$bin" run "$tmp/big.lua" -n 1 --no-tui --trace "$tmp/big.jsonl" >/dev/null 2>&1
  python3 - "$tmp/big.jsonl" <<'PY' && ok "header: a script over 128 KiB is not recorded" || bad_showing "$tmp/big.jsonl" "header big source"
import json, sys
h = json.loads(open(sys.argv[1]).readline())
assert h["type"] == "run" and "source" not in h and h["script"] == "big.lua"
PY
  expect "a trace without the source still replays" 0 "[rank 0] big" -- replay "$tmp/big.jsonl" --no-tui
else
  skip "header source" "no python3"
fi

finish
