#!/usr/bin/env bash
# run_checker.sh -- the checker's reach beyond deadlocks: collectives only
# some ranks call (every send mode and engine), message races on receives
# from any source, async collectives' work handles, and programs that work
# only because sends are buffered (the rendezvous recheck). Each case states
# the exit status and a line of the report; replay must equal the live run.
. "$(dirname "$0")/../lib.sh"
dir="$top_srcdir/tests/checker/scripts"

# ---- a collective only some ranks call: a deadlock whatever the send mode
for mode in rendezvous eager eager:1024; do
  for engine in thread tcp; do
    expect "partial reduce, $mode, $engine" 3 "rank 0 did not call it: it has finished" \
      -- run "$dir/partial_reduce.lua" --send-mode "$mode" --engine "$engine"
    expect "partial reduce names the call, $mode, $engine" 3 \
      "rank 1 entered reduce(root 0, SUM, float32, 4 elements) at partial_reduce.lua:5" \
      -- run "$dir/partial_reduce.lua" --send-mode "$mode" --engine "$engine" --strict
  done
  expect "partial broadcast, $mode" 3 "rank 2 did not call it: it has finished" \
    -- run "$dir/partial_bcast.lua" --send-mode "$mode"
done
expect "partial reduce: the collective's message is left unreceived" 3 '"unreceived": 1' \
  -- run "$dir/partial_reduce.lua" --send-mode eager --report json
expect "partial reduce: json kind" 3 '"kind": "deadlock_collective"' \
  -- run "$dir/partial_reduce.lua" --send-mode eager --report json
replay_same "partial reduce, eager" "$dir/partial_reduce.lua" --send-mode eager

# ---- a collective mismatch waits for the members that have not called it:
# the words name each rank's call, or where a rank is instead, whichever
# came first (several runs each), and the call is not counted without them
for engine in thread tcp; do
  for mode in rendezvous eager; do
    for i in 1 2 3; do
      expect "mismatch, a rank finished, $mode, $engine, run $i" 2 \
        "rank 2 has not called it: it has finished" \
        -- run "$dir/mismatch_finished.lua" --send-mode "$mode" --engine "$engine"
      count_lines "mismatch, a rank finished: both calls, $mode, $engine, run $i" 2 \
        "calls all_reduce(SUM, float32, "
      count_lines "mismatch, a rank finished: not counted, $mode, $engine, run $i" 0 "collectives:"
      expect "mismatch, a rank blocked first, $mode, $engine, run $i" 2 \
        "rank 2 has not called it: it is blocked at mismatch_blocked.lua:8" \
        -- run "$dir/mismatch_blocked.lua" --send-mode "$mode" --engine "$engine"
    done
  done
  expect "mismatch, a rank runs on: the timeout tells it, $engine" 2 \
    "rank 2 has not called it: it is still running (the run timed out)" \
    -- run "$dir/mismatch_running.lua" --engine "$engine" --timeout 2 --step-limit 0
  count_lines "mismatch, a rank runs on: an error, not a timeout, $engine" 0 "timeout:"
done
expect "mismatch, a rank finished: json" 2 '"kind": "collective_mismatch"' \
  -- run "$dir/mismatch_finished.lua" --report json
count_lines "mismatch, a rank finished: json, where it is" 1 "rank 2 has not called it: it has finished"
count_lines "mismatch, a rank finished: json, the missing member" 1 '"missing": true'
replay_same "mismatch, a rank finished" "$dir/mismatch_finished.lua" --engine tcp
replay_same "mismatch, a rank blocked first" "$dir/mismatch_blocked.lua"

# ---- message races: a receive from any source whose match depends on timing
race="race.lua:6: message race: this receive from any source could match the send from rank 1 at race.lua:10 or the send from rank 2 at race.lua:12; which arrives first depends on timing"
for mode in rendezvous eager; do
  for engine in thread tcp; do
    expect "race: two unordered senders, $mode, $engine" 0 "$race" \
      -- run "$dir/race.lua" --send-mode "$mode" --engine "$engine" --no-recheck
    count_lines "race: once per receive site, $mode, $engine" 1 "message race"
    expect "race-free: ordered by a message, $mode, $engine" 0 "" \
      -- run "$dir/race_free.lua" --send-mode "$mode" --engine "$engine" --no-recheck
    count_lines "race-free: no warning, $mode, $engine" 0 "warning"
  done
done
# an irecv from any source stays open until its wait: a send that a post
# between the two caused (rank 0's send to rank 1, then rank 1's send) could
# still be the one it takes, whichever it took this time (several runs each)
race_ir="race_irecv.lua:5: message race: this receive from any source could match the send from rank 1 at race_irecv.lua:11 or the send from rank 2 at race_irecv.lua:13; which arrives first depends on timing"
for mode in rendezvous eager; do
  for engine in thread tcp; do
    for i in 1 2 3; do
      expect "race: irecv, a send, then its wait, $mode, $engine, run $i" 0 "$race_ir" \
        -- run "$dir/race_irecv.lua" --send-mode "$mode" --engine "$engine" --no-recheck
    done
    for i in 1 2 3; do # ... and waited on (wait, is_completed) before that send: no race
      expect "race-free: irecv waited on first, $mode, $engine, run $i" 0 "" \
        -- run "$dir/race_irecv_free.lua" --send-mode "$mode" --engine "$engine" --no-recheck
      count_lines "race-free: irecv waited on first, no warning, $mode, $engine, run $i" 0 "warning"
    done
  done
done
# a race that leaves a send with no receive: the send/send deadlock's fix is
# the race; waiting on the isend before the go-ahead orders it: no race, and
# the deadlock is the sends' own (on tcp, the completion of a rendezvous send
# used to reach the monitor before its match and lose that order)
race_fix="fix: a message race: rank 0's receive from any source (race_sends.lua:5) took rank 2's message and left rank 1's send (race_sends.lua:11) waiting for a receive that rank 0 has not posted. Name the source on line 5 (receive from rank 1 there)"
# (the thread engine matches in post order, so there it always deadlocks; on
# tcp the other order may win the race and end ok: the race is named either way)
for engine in thread tcp; do
  for i in 1 2 3; do
    guarded "$bin" run "$dir/race_sends.lua" --engine "$engine" --no-recheck \
      >"$tmp/out" 2>"$tmp/err" </dev/null
    got=$?
    if { [ "$got" = 3 ] && grep -qF -- "$race_fix" "$tmp/err"; } ||
       { [ "$got" = 0 ] && [ "$engine" = tcp ]; }; then
      ok "race: an isend not waited on orders nothing, $engine, run $i"
    else bad "race: an isend not waited on orders nothing, $engine, run $i" "status $got"; show "$tmp/err"; fi
    count_lines "race: an isend not waited on: the race, $engine, run $i" 1 \
      "race_sends.lua:5: message race: this receive from any source could match the send from rank 1 at race_sends.lua:11 or the send from rank 2 at race_sends.lua:14"
    expect "race-free: an isend waited on orders, $engine, run $i" 3 \
      "fix: reorder so that one side receives first" \
      -- run "$dir/race_sends_free.lua" --engine "$engine" --no-recheck
    count_lines "race-free: an isend waited on, no warning, $engine, run $i" 0 "warning"
  done
done
replay_same "race: an isend not waited on" "$dir/race_sends.lua" --engine tcp --no-recheck
expect "race: irecv, json" 0 '"text": "race_irecv.lua:5: message race' -- run "$dir/race_irecv.lua" --report json
replay_same "race: irecv" "$dir/race_irecv.lua" --engine tcp
replay_same "race-free: irecv" "$dir/race_irecv_free.lua" --send-mode eager
# the other order deadlocks (rank 1's send is never received): the race is
# named whichever order the run took, the send told at its post
race_dl="race_deadlock.lua:10: message race: this receive from any source could match the send from rank 1 at race_deadlock.lua:14 or the send from rank 2 at race_deadlock.lua:14"
for mode in rendezvous eager; do
  for engine in thread tcp; do
    guarded "$bin" run "$dir/race_deadlock.lua" --send-mode "$mode" --engine "$engine" --no-recheck \
      >"$tmp/out" 2>"$tmp/err" </dev/null
    got=$?
    if { [ "$got" = 0 ] || [ "$got" = 3 ]; } && grep -qF -- "$race_dl" "$tmp/out" "$tmp/err"; then
      ok "race, or deadlock: the race named either way, $mode, $engine"
    else bad "race, or deadlock: the race named either way, $mode, $engine" "status $got"; show "$tmp/err"; fi
  done
done
replay_same "race or deadlock" "$dir/race_deadlock.lua"
# a deadlock the race caused: its fix names the race (naming the source), not
# a wrong source on the receive that waits (the thread engine's eager sends
# arrive in post order, so this one always deadlocks)
chain_fix="fix: a message race: rank 0's receive from any source (race_chain.lua:10) took rank 2's message, which the receive from rank 2 (race_chain.lua:11) needed, and left rank 1's send (race_chain.lua:17) with no receive. Name the source on line 10"
expect "a deadlock a race caused: the fix names the race" 3 "$chain_fix" \
  -- run "$dir/race_chain.lua" --send-mode eager --no-recheck
replay_same "a deadlock a race caused" "$dir/race_chain.lua" --send-mode eager --no-recheck
for engine in thread tcp; do # either order of the race: the fix names it whenever it deadlocks
  guarded "$bin" run "$dir/race_deadlock.lua" --engine "$engine" --no-recheck >"$tmp/out" 2>"$tmp/err" </dev/null
  got=$?
  if [ "$got" = 0 ] || { [ "$got" = 3 ] && grep -qF "fix: a message race: rank 0's receive from any source (race_deadlock.lua:10)" "$tmp/out" "$tmp/err"; }; then
    ok "race, or deadlock: a deadlock's fix names the race, $engine"
  else bad "race, or deadlock: a deadlock's fix names the race, $engine" "status $got"; show "$tmp/err"; fi
done
expect "race: an error with --strict" 2 "--strict: 1 pitfall found" -- run "$dir/race.lua" --strict
expect "race: json kind" 0 '"kind": "message_race"' -- run "$dir/race.lua" --report json
replay_same "race" "$dir/race.lua"
# on tcp the race warning is the controller's, between the rank's own events
replay_same "race, tcp" "$dir/race.lua" --engine tcp
replay_same "race, --strict" "$dir/race.lua" --strict
replay_same "race-free" "$dir/race_free.lua" --send-mode eager

# ---- async collectives: the work handle owns the tensors until its wait,
# even though the collective ran inside the call
a="$dir/async_coll.lua"
for engine in thread tcp; do
  expect "async collective: read before the wait, $engine" 0 \
    "[rank 1] warning: async_coll.lua:5: reads a tensor (or a view of it) that the async all_reduce called at async_coll.lua:4 still writes into" \
    -- run "$a" --engine "$engine"
  count_lines "async collective: write before the wait, once per rank, $engine" 2 \
    "warning: async_coll.lua:6: writes to a tensor (or a view of it) that the async all_reduce called at async_coll.lua:4 still uses"
  count_lines "async collective: never waited on, $engine" 2 \
    "warning: async_coll.lua:10: the broadcast (async_op) called here was never waited on"
  count_lines "async collective: nothing after wait, wait_all or is_completed, $engine" 6 "warning:"
done
# Both ranks read before their wait: the first error stops the other rank
# wherever it is (docs/pitfalls.md), so which rank fails is the first to
# read, and only the words are checked here ...
expect "async collective: --strict fails the rank at the read" 2 \
  "failed: async_coll.lua:5: reads a tensor (or a view of it) that the async all_reduce called at async_coll.lua:4" \
  -- run "$a" --strict
# ... and the whole output where one rank reads and the other never ends by
# itself: the same, byte for byte, on both engines and in replay.
as="$dir/async_coll_strict.lua"
cat >"$tmp/strict.want" <<'END'
[rank 1] error: async_coll_strict.lua:5: reads a tensor (or a view of it) that the async all_reduce called at async_coll_strict.lua:4 still writes into: it may hold the old values or part of the result. Call wait() on the work handle before reading it (--strict)
messages: 0, bytes: 0
collectives: 1
ranks: 1 failed, 1 aborted
rank 1 failed: async_coll_strict.lua:5: reads a tensor (or a view of it) that the async all_reduce called at async_coll_strict.lua:4 still writes into: it may hold the old values or part of the result. Call wait() on the work handle before reading it (--strict)
verdict: error (exit status 2)
END
for engine in thread tcp; do
  expect "async collective: --strict, status ($engine)" 2 "" -- run "$as" --strict --engine "$engine"
  if [ ! -s "$tmp/out" ] &&
     [ "$(sed -n 2p "$tmp/err")" = "--- async_coll_strict.lua: 2 ranks, $engine engine, rendezvous sends" ] &&
     sed 2d "$tmp/err" | cmp -s - "$tmp/strict.want"; then
    ok "async collective: --strict, the whole output ($engine)"
  else
    sed 2d "$tmp/err" | diff "$tmp/strict.want" - | head -20
    bad "async collective: --strict, the whole output ($engine)"
  fi
done
replay_same "async collective, --strict" "$as" --strict
expect "async collective: json kinds" 0 '"kind": "collective_never_waited"' -- run "$a" --report json
count_lines "async collective: json write kind (one pitfall for both ranks)" 1 '"kind": "write_while_collective"'
replay_same "async collectives" "$a"

# ---- a collective reads its inputs and writes its outputs: a buffer that an
# isend, an irecv or an async collective still owns is touched as by a send
# or a receive of the script's
cb="$dir/coll_buffers.lua"
for engine in thread tcp; do
  expect "collective on a buffer in flight: writes an isend's, $engine" 0 \
    "[rank 0] warning: coll_buffers.lua:8: writes to a tensor (or a view of it) that the isend posted at coll_buffers.lua:5 is still sending" \
    -- run "$cb" --engine "$engine"
  count_lines "collective on a buffer in flight: the root reads an irecv's, $engine" 1 \
    "[rank 0] warning: coll_buffers.lua:13: reads a tensor (or a view of it) that the irecv posted at coll_buffers.lua:11"
  count_lines "collective on a buffer in flight: the other writes it, $engine" 1 \
    "[rank 1] warning: coll_buffers.lua:13: writes to a tensor (or a view of it) that the irecv posted at coll_buffers.lua:11"
  count_lines "collective on a buffer in flight: reads an async collective's output, $engine" 2 \
    "warning: coll_buffers.lua:16: reads a tensor (or a view of it) that the async all_reduce called at coll_buffers.lua:15"
  count_lines "collective on a buffer in flight: reading what an isend sends is fine, $engine" 6 "warning:"
done
expect "collective on a buffer in flight: an eager isend owns nothing" 0 "" \
  -- run "$cb" --send-mode eager --no-recheck
count_lines "collective on a buffer in flight: eager, no warning at the isend's" 0 "coll_buffers.lua:8:"
expect "collective on a buffer in flight: --strict" 2 \
  "failed: coll_buffers.lua:8: writes to a tensor (or a view of it) that the isend posted at coll_buffers.lua:5" \
  -- run "$cb" --strict
replay_same "collective on a buffer in flight" "$cb"

# ---- an isend and its irecv, neither waited on: the handles are the
# pitfalls, not a missing receive, on either engine
for engine in thread tcp; do
  expect "unwaited pair: never waited, $engine" 0 \
    "[rank 1] warning: unwaited_pair.lua:9: the irecv posted here was never waited on" \
    -- run "$dir/unwaited_pair.lua" --engine "$engine"
  count_lines "unwaited pair: its message had a receive, $engine" 0 "never received"
done

# an isend and an irecv at one line are two pitfalls, not one: the summary,
# the json and the replay count both
for engine in thread tcp; do
  expect "unwaited at one line: two pitfalls, $engine" 0 "warnings: 2 pitfalls" \
    -- run "$dir/unwaited_one_line.lua" --engine "$engine"
done
expect "unwaited at one line: json" 0 '"text": "unwaited_one_line.lua:4: the irecv posted here was never waited on' \
  -- run "$dir/unwaited_one_line.lua" --report json
count_lines "unwaited at one line: json, both" 2 '"kind": "never_waited"'
replay_same "unwaited at one line" "$dir/unwaited_one_line.lua"

# ---- a receive from the wrong rank: the stray message is named also when
# it is an eager send, done once buffered
for engine in thread tcp; do
  expect "wrong source, eager, $engine" 3 \
    "fix: wrong source: rank 0 receives from rank 1 (pitfalls.lua:20), but the message for rank 0 comes from rank 2 (pitfalls.lua:26)" \
    -- run "$top_srcdir/lessons/02-point-to-point/pitfalls.lua" --send-mode eager --engine "$engine"
done

# ---- tags: the right tags in opposite orders are not "use the same tag";
# a finished sender has no later send, so there it is
for engine in thread tcp; do
  expect "tag order: the fix names the order, $engine" 3 \
    "If both tags are meant (rank 0 sends tag 2 later, or rank 1 receives tag 1 later), the ranks use them in different orders" \
    -- run "$dir/tag_order.lua" --engine "$engine"
done
expect "tag order: with eager sends, the recheck says so" 0 "the ranks use them in different orders" \
  -- run "$dir/tag_order.lua" --send-mode eager
expect "tag mismatch, the sender finished: the same tag" 3 \
  "fix: use the same tag on both sides (the default tag is 0)." \
  -- run "$top_srcdir/tests/cli/report/tag.lua" --send-mode eager
count_lines "tag mismatch, the sender finished: no word of order" 0 "If both tags are meant"

# a receive from any source names no rank, and under eager sends, the
# senders finished, their messages on other tags are still the cause
for mode in rendezvous eager; do
  for engine in thread tcp; do
    expect "tag, any source, $mode, $engine" 3 \
      "why: tag mismatch: rank 1 sends to rank 0 with tag 1 (tag_any.lua:7), but rank 0 receives from any rank with tag 3 (tag_any.lua:5)" \
      -- run "$dir/tag_any.lua" --send-mode "$mode" --engine "$engine"
  done
done
expect "tag, any source: json kind" 3 '"kind": "deadlock_tag"' \
  -- run "$dir/tag_any.lua" --send-mode eager --report json
replay_same "tag, any source, eager" "$dir/tag_any.lua" --send-mode eager

# ... and a send to the wrong rank is named under every send mode: eager,
# the sender has finished and only the receive waits
for mode in rendezvous eager; do
  for engine in thread tcp; do
    expect "wrong destination, $mode, $engine" 3 \
      "fix: wrong destination: rank 0 sends to rank 2 (wrong_dest.lua:5), but rank 1 is the one waiting for a message from rank 0 (wrong_dest.lua:7)" \
      -- run "$dir/wrong_dest.lua" --send-mode "$mode" --engine "$engine"
  done
done
replay_same "wrong destination, eager" "$dir/wrong_dest.lua" --send-mode eager

# ---- two deadlocks apart: the ranks off the explained cycle do not wait on it
for engine in thread tcp; do
  expect "two cycles apart, $engine" 3 \
    "The other blocked ranks are stuck apart from this cycle, on each other" \
    -- run "$dir/two_cycles.lua" --engine "$engine"
  count_lines "two cycles apart: not said to wait on the cycle, $engine" 0 "wait on ranks of this cycle"
done
cat >"$tmp/into_cycle.lua" <<'END'
local t = tensor.zeros(2)
if rank < 2 then dist.send(t, 1 - rank) else dist.recv(t, 0) end
END
expect "a rank waiting on a cycle" 3 "The other blocked ranks wait on ranks of this cycle." \
  -- run "$tmp/into_cycle.lua" -n 3

# ---- groups created in different orders: the note once, and the fix for it
for engine in thread tcp; do
  expect "group order, $engine" 3 \
    "fix: call dist.new_group for every group in the same order on every rank" \
    -- run "$dir/group_order.lua" --engine "$engine"
  count_lines "group order: one note for both groups, $engine" 1 "note: a missing rank waits inside a collective"
done

# a rank that skips a group's creation: both sides named, the side of the
# lowest rank as the one the others "know", whoever called first (several
# runs each); and two groups' explanations in the order of their creation
for engine in thread tcp; do
  for mode in rendezvous eager; do
    for i in 1 2 3; do
      expect "group skipped, $mode, $engine, run $i" 2 \
        "collective mismatch: rank 2 calls all_reduce at group_skip.lua:8 on the group of ranks [1, 2], which ranks 0, 1 know as the group of ranks [0, 1]" \
        -- run "$dir/group_skip.lua" --send-mode "$mode" --engine "$engine"
      expect "group order, the first explanation, $mode, $engine, run $i" 3 "" \
        -- run "$dir/group_order.lua" --send-mode "$mode" --engine "$engine"
      if [ "$(grep -m1 '^why:' "$tmp/err")" = "why: rank 0 entered all_reduce(SUM, float32, 2 elements) at group_order.lua:11, collective call #1 on the group of ranks [0, 1], and waits inside it for ranks that never called it:" ]; then
        ok "group order: rank 0's group explained first, $mode, $engine, run $i"
      else bad "group order: rank 0's group explained first, $mode, $engine, run $i"; grep '^why:' "$tmp/err"; fi
    done
  done
done
expect "group skipped: json, both sides" 2 '"kind": "group_mismatch"' -- run "$dir/group_skip.lua" --report json
count_lines "group skipped: json, both calls" 2 '"op": "all_reduce"'
replay_same "group skipped" "$dir/group_skip.lua" --engine tcp

# ---- t[i] touches element or row i only, both ways
for engine in thread tcp; do
  expect "t[i]: a write inside the isend, $engine" 0 \
    "[rank 0] warning: index_views.lua:12: writes to a tensor (or a view of it) that the isend posted at index_views.lua:7" \
    -- run "$dir/index_views.lua" --engine "$engine"
  count_lines "t[i]: writes outside a send are fine, $engine" 2 "[rank 0] warning:"
  count_lines "t[i]: v[1] inside the narrow, $engine" 1 "index_views.lua:13: writes"
  count_lines "t[i]: v[2] read inside the irecv, $engine" 1 "index_views.lua:20: reads"
  count_lines "t[i]: a row copied from the irecv's row, $engine" 1 "index_views.lua:21: reads"
  count_lines "t[i]: reads outside the irecv are fine, $engine" 2 "[rank 1] warning:"
done

# ---- buffering hazards: the rendezvous recheck of an eager run that ends ok
L="$top_srcdir/lessons/02-point-to-point"
expect "recheck: works only because sends are buffered" 0 \
  "with rendezvous sends: deadlock at deadlock.lua:19 — this program works only because sends are buffered" \
  -- run "$L/deadlock.lua" --send-mode eager
count_lines "recheck: a warning (buffering_hazard)" 1 "[rank 0] warning: deadlock.lua:19: with rendezvous sends this program deadlocks here"
expect "recheck: --strict makes it a deadlock" 3 "note: eager buffering hid this deadlock" \
  -- run "$L/deadlock.lua" --send-mode eager --strict
count_lines "recheck: --strict gives the rendezvous explanation" 1 "why: every blocked rank is sending and none is receiving"
expect "recheck: --strict, kind" 3 '"kind": "deadlock_buffered"' \
  -- run "$L/deadlock.lua" --send-mode eager --strict --report json
expect "recheck: eager:N, tcp engine" 3 "note: eager buffering hid this deadlock" \
  -- run "$L/eager_limit.lua" --send-mode eager:4096 --strict --engine tcp
expect "recheck: a program that needs no buffering" 0 "with rendezvous sends: ok" \
  -- run "$L/chain.lua" --send-mode eager --strict
expect "recheck: --no-recheck" 0 "" -- run "$L/deadlock.lua" --send-mode eager --no-recheck
count_lines "recheck: --no-recheck says nothing" 0 "rendezvous sends"
expect "recheck: not after a rendezvous run" 0 "" -- run "$L/chain.lua"
count_lines "recheck: rendezvous runs are not rechecked" 0 "with rendezvous sends"
expect "recheck: unreceived messages are one finding" 2 "--strict: 1 pitfall found" \
  -- run "$top_srcdir/tests/replay/scripts/unreceived.lua" --send-mode eager --strict
expect "recheck: a recheck that cannot tell says so" 0 \
  "with rendezvous sends: not checked: the recheck ended with status 4" \
  -- run "$dir/spin.lua" --send-mode eager --timeout 1
replay_same "recheck, deadlock" "$L/deadlock.lua" --send-mode eager
replay_same "recheck, deadlock, --strict" "$L/deadlock.lua" --send-mode eager --strict
replay_same "recheck, ok" "$L/chain.lua" --send-mode eager

finish
