#!/usr/bin/env bash
# run_budgets.sh -- a rank's instruction budget and memory cap hold whatever
# the script does: catching the budget error (pcall, xpcall handlers, __close,
# coroutines, load readers), looping in C (patterns, table.concat), buffering
# messages nobody receives, catching a memory error on its last line; and the
# errors say what really happened. A trace that cannot be written fails the
# run. Each case runs with --timeout 0 where the budget alone must stop it
# (guarded by timeout(1)); none asserts a timing.
. "$(dirname "$0")/../lib.sh"
dir="$top_srcdir/tests/hostile/scripts"

# no_straggler NAME: the last run left no rank behind (thread engine: the
# process would say so and exit without it; tcp: a rank process would remain).
no_straggler() {
  if grep -qF "did not stop within" "$tmp/err"; then
    bad "$1" "a rank was left running"
  elif pgrep -f -- "$tmp/" >/dev/null; then
    bad "$1" "a rank process is still running"
  else
    ok "$1"
  fi
}

# budget NAME SCRIPT ENGINE: the instruction budget ($steps, default 1000000)
# ends the run. The script runs from $tmp so that its rank processes are known.
budget() {
  local name=$1 script=$2 engine=$3 limit=${steps:-1000000}
  cp "$dir/$script" "$tmp/$script"
  expect "$name ($engine)" 4 "$script" -- run "$tmp/$script" --no-tui --engine "$engine" \
    --timeout 0 --step-limit "$limit"
  if ! grep -qF "instruction budget exceeded ($limit steps" "$tmp/err"; then
    bad "$name ($engine): the verdict" "no 'instruction budget exceeded'"
  else
    no_straggler "$name ($engine): nothing left running"
  fi
}

# The sanitizer commsim was built with, if any: one case cannot run under TSan.
san=
if nm "$bin" 2>/dev/null | grep -q __tsan_init; then san=thread; fi

# ---- item 3: nothing catches the budget error
for engine in thread tcp; do
  budget "xpcall handler loops after the budget error" budget_xpcall.lua $engine
  budget "pcall in a loop"                  budget_pcall_loop.lua $engine
  budget "xpcall handler called again"      budget_handler_error.lua $engine
  budget "coroutines: resume, wrap, __close" budget_coroutine.lua $engine
  budget "a wrapped coroutine's __close loops" budget_wrap_close.lua $engine
  budget "__close handlers during unwinding" budget_close.lua $engine
  if [ "$san" = thread ]; then
    # TSan's shadow stack outgrows its own limit (a CHECK at 65536 frames)
    # over the thousands of longjmps of a budget error raised in finalizers.
    skip "__gc refused, loop still ends ($engine)" "ThreadSanitizer build: its shadow stack" \
      "overflows on thousands of longjmps out of finalizers (plain and ASan builds run it)"
  else
    budget "__gc refused, loop still ends"    budget_gc.lua $engine
  fi
  budget "gsub callback and load reader"    budget_gsub_callback.lua $engine
done

# ---- item 4: work done in C is charged
budget "gsub over 1 MiB in a loop"          budget_gsub.lua thread
budget "table.concat in a loop"             budget_concat.lua thread
steps=4000000 budget "plain find in a loop" budget_find.lua thread
budget "a pattern that backtracks"          budget_backtrack.lua thread
budget "a pattern that backtracks"          budget_backtrack.lua tcp
steps=20000000 budget "collectgarbage() of a large heap in a loop" budget_collect.lua thread
steps=20000000 budget "irecvs into one tensor: the pitfall scans" budget_irecv_one.lua thread
steps=20000000 budget "irecvs into one tensor: the pitfall scans" budget_irecv_one.lua tcp
budget "gsub over 1 MiB in a loop"          budget_gsub.lua tcp

# A matrix product is charged before it starts, and 3000x3000 takes minutes:
# with no budget the run's timeout stops it as it goes (it looks every
# million multiply-adds), at its line, where it was one uninterruptible call
# ("where it was is not known").
cp "$dir/budget_matmul.lua" "$tmp/budget_matmul.lua"
for engine in thread tcp; do
  expect "a long matrix product stops at the timeout ($engine)" 4 \
    "rank 0 was running at budget_matmul.lua:4" \
    -- run "$tmp/budget_matmul.lua" --no-tui --engine $engine --step-limit 0 --timeout 1
  no_straggler "a long matrix product stops at the timeout: nothing left running ($engine)"
done

# ---- item 5: buffered eager messages count against the sender's cap
expect "3000 eager isends of 1 MiB: the cap" 4 \
  "budget_eager.lua:8: memory limit exceeded (64 MiB per rank; --mem-limit): no room to buffer an eager send" \
  -- run "$dir/budget_eager.lua" --no-tui --mem-limit 64 --timeout 0
expect "eager buffers go back once received" 0 "[rank 0] done" \
  -- run "$dir/budget_eager_received.lua" --no-tui --mem-limit 64 --timeout 0

# ---- item 6: a caught memory error still fails the rank
for engine in thread tcp; do
  expect "pcall'd memory error on the last line ($engine)" 4 \
    "budget_pcall_memory.lua:3: memory limit exceeded (64 MiB per rank; --mem-limit)" \
    -- run "$dir/budget_pcall_memory.lua" --no-tui --mem-limit 64 --engine $engine
  if grep -qF "not enough memory" "$tmp/out"; then
    bad "pcall'd memory error: the script never sees it ($engine)" "it printed the caught error"
  else
    ok "pcall'd memory error: the script never sees it ($engine)"
  fi
done

# ---- item 7: say what happened
for engine in thread tcp; do
  expect "tensor whose element count overflows ($engine)" 2 \
    "budget_tensor_overflow.lua:3: tensor too large: its element count overflows 64 bits" \
    -- run "$dir/budget_tensor_overflow.lua" --no-tui --engine $engine
  # 2^40 elements (4 TiB): more memory than the cap, and more steps than the
  # budget; the memory is what the line asked for, and what it is told
  expect "tensor far larger than the cap: memory, not steps ($engine)" 4 \
    "budget_tensor_huge.lua:3: memory limit exceeded (256 MiB per rank; --mem-limit)" \
    -- run "$dir/budget_tensor_huge.lua" --no-tui --engine $engine
done
# The machine refuses what the cap allows: a virtual memory limit of ~1 GB and a
# cap of 8 GiB. Sanitizer builds reserve more address space than that: skip.
if bash -c 'ulimit -v 1000000 && "$0" run "$1" -n 1 --no-tui; exit $?' "$bin" \
     "$top_srcdir/tests/cli/scripts/hello_all.lua" >/dev/null 2>&1; then
  for what in string tensor; do
    want="host allocation failed: "
    [ $what = string ] && want="budget_host_string.lua:3: host allocation failed: 1500 MiB"
    [ $what = tensor ] && want="budget_host_tensor.lua:3: host allocation failed: 4 GiB"
    (ulimit -v 1000000
     guarded "$bin" run "$dir/budget_host_$what.lua" --no-tui --mem-limit 8192 >"$tmp/out" 2>"$tmp/err")
    got=$?
    if [ $got != 4 ]; then bad "host allocation failure: a $what" "exit status $got, expected 4"
    elif ! grep -qF "$want" "$tmp/err"; then bad "host allocation failure: a $what" "output lacks: $want"
    else ok "host allocation failure: a $what"; fi
  done
else
  skip "host allocation failure" "commsim does not start under ulimit -v 1000000 here"
fi

# ---- item 15: a trace that cannot be written fails the run
if [ -w /dev/full ]; then
  for engine in thread tcp; do
    expect "--trace /dev/full fails the run ($engine)" 1 "the trace could not be written" \
      -- run "$top_srcdir/tests/cli/scripts/hello_all.lua" --no-tui --engine $engine --trace /dev/full
  done
  expect "--trace /dev/full keeps a worse status" 2 "error.lua:6:" \
    -- run "$top_srcdir/tests/cli/scripts/error.lua" --no-tui --trace /dev/full
  # a verdict of the monitor's, not a rank's error: the same
  expect "--trace /dev/full keeps a collective mismatch's status" 2 "mismatch" \
    -- run "$top_srcdir/tests/checker/scripts/mismatch_blocked.lua" --no-tui --trace /dev/full
else
  skip "--trace /dev/full" "no writable /dev/full"
fi

# A run that never ends fills the file size limit (a grader's trace cap): it
# ends then with that error, not at its --timeout (status 4), and the trace
# holds every byte up to the cut, which replays.
for engine in thread tcp; do
  name="a trace past the file size limit ends the run ($engine)"
  (ulimit -f 1024
   guarded "$bin" run "$dir/spin_all.lua" -n 2 --no-tui --engine $engine --timeout 600 \
     --trace "$tmp/cut.jsonl" >"$tmp/out" 2>"$tmp/err")
  got=$?
  if ! grep -qF "the trace could not be written: $tmp/cut.jsonl: File too large" "$tmp/out" "$tmp/err"; then
    bad "$name" "exit status $got, output lacks the trace's error"
    continue
  fi
  guarded "$bin" replay "$tmp/cut.jsonl" --no-tui >"$tmp/out" 2>"$tmp/err"
  replayed=$?
  # The limit cuts the file at 1 MiB: mid-line, unless a line happens to end
  # right there (about one run in a hundred), when replay reads whole lines
  # that end before the run did.
  size=$(wc -c <"$tmp/cut.jsonl")
  if [ "$(tail -c 1 "$tmp/cut.jsonl" | od -An -tx1 | tr -d ' ')" = 0a ]; then
    want="the trace ends before the run did"
  else
    want="trace cut off mid-event: replayed the"
  fi
  if [ $got != 1 ]; then bad "$name" "exit status $got, expected 1"
  elif [ "$size" != 1048576 ]; then bad "$name" "the trace holds $size bytes, not the 1 MiB up to the cut"
  elif [ $replayed != 1 ] || ! grep -qF "$want" "$tmp/err"; then
    bad "$name" "the cut trace does not replay up to the cut (status $replayed, expected: $want)"
  else ok "$name"; fi
done

finish
