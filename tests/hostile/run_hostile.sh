#!/usr/bin/env bash
# run_hostile.sh -- scripts written as an attacker would write them: sandbox
# escapes, memory and CPU bombs, coroutine tricks, wrong arguments to every
# dist and tensor function, and the reproducers of past memory corruptions.
# A grader runs every student's script, so each must end with the right exit
# status and the exact message, never with a crash or a hang.
#
# One function per case, named case_*; they run in name order. Run a few by
# name: tests/hostile/run_hostile.sh case_view_wrap case_badargs
# A new case: a script in tests/hostile/scripts/ and a function below.
. "$(dirname "$0")/../lib.sh"
dir="$top_srcdir/tests/hostile/scripts"

# hostile NAME STATUS LINE -- ARGS...: run commsim ARGS (no terminal); the
# exit status must be STATUS and one line of its output must be exactly LINE
# ("" for none).
hostile() {
  local name=$1 want=$2 line=$3
  shift 4
  guarded "$bin" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
  local got=$?
  if [ "$got" != "$want" ]; then
    bad "$name" "exit status $got, expected $want"
  elif [ -n "$line" ] && ! grep -qxF -- "$line" "$tmp/out" "$tmp/err"; then
    bad "$name" "no line is exactly: $line"
  else
    ok "$name"
  fi
}

# both NAME STATUS LINE SCRIPT [ARGS...]: hostile on the thread and the tcp
# engine, SCRIPT from the scripts folder.
both() {
  local name=$1 want=$2 line=$3 script=$4
  shift 4
  local engine
  for engine in thread tcp; do
    hostile "$name ($engine)" "$want" "$line" -- run "$dir/$script" --engine "$engine" "$@"
  done
}

# The line the report gives a rank that failed.
failed() { echo "rank ${2:-0} failed: $1"; }

budget="instruction budget exceeded (1000000 steps; --step-limit)"
memory="memory limit exceeded (64 MiB per rank; --mem-limit)"

# ---- memory corruption reproducers

case_all_to_all_overflow() {
  both "all_to_all: own block larger than the output" 2 \
    "$(failed "all_to_all_overflow.lua:3: dist.all_to_all: tensor 0 of the output list has 1 elements, but tensor 0 of the input list has 100000 (a rank's own block must fit)")" \
    all_to_all_overflow.lua -n 1
}

case_view_wrap() {
  both "view: element count wraps" 2 \
    "$(failed "view_wrap.lua:2: shape '[4611686018427387905, 4]' is invalid for input of size 4")" \
    view_wrap.lua -n 1
}

case_reshape_wrap() {
  both "reshape: element count wraps to 0 with -1" 2 \
    "$(failed "reshape_wrap.lua:3: shape '[4611686018427387904, 4611686018427387904, -1]' is invalid for input of size 8")" \
    reshape_wrap.lua -n 1
}

case_overlapping_views() {
  both "isend and irecv on overlapping views" 0 \
    "[rank 0] tensor([0., 1., 0., 1., 2., 3., 4., 5.])" overlap.lua -n 1
  both "overlapping views, eager" 0 \
    "[rank 0] tensor([0., 1., 0., 1., 2., 3., 4., 5.])" overlap.lua -n 1 --send-mode eager
}

case_empty_tensors() {
  both "empty tensors, one with a huge dim" 0 \
    "$(printf '[rank 0] tensor([])\ttensor([])\ttensor([])\ttensor([])\ttensor([])')" \
    empty_tensors.lua -n 1
  both "empty tensors: the mean of none is nan, as in torch" 0 \
    "$(printf '[rank 0] mean of none\tnan\tnan')" empty_tensors.lua -n 1
  both "empty tensors: the last line" 0 \
    "$(printf '[rank 0] torch.Size([0, 1099511627776])\ttorch.Size([0])\tdone')" empty_tensors.lua -n 1
}

# ---- messages

case_dtype_mismatch() {
  # Both sides fail at once, each at its own line, and the report names both
  # whichever raised first (the first one's end of the run does not hide the
  # other's failure): the same lines every time, on both engines.
  local words="dtype mismatch: rank 1 receives int32 [4] (16 bytes) at dtype_mismatch.lua:5, but rank 0 sent float32 [4] (16 bytes) at dtype_mismatch.lua:3; both sides must use the same dtype"
  both "same bytes, other dtype: the receiver's line" 2 "$(failed "dtype_mismatch.lua:5: $words" 1)" \
    dtype_mismatch.lua -n 2
  both "same bytes, other dtype: the sender's line" 2 "$(failed "dtype_mismatch.lua:3: $words" 0)" \
    dtype_mismatch.lua -n 2
  both "same bytes, other dtype: both ranks failed" 2 "ranks: 2 failed" dtype_mismatch.lua -n 2
}

case_size_and_dtype_mismatch() {
  # 16 bytes on both sides, but 2 elements against 4: the element count
  # differs, so it is a size mismatch (and kind size_mismatch), not a dtype one.
  local words="size mismatch: rank 1 receives float64 [2] (16 bytes) at size_and_dtype_mismatch.lua:5, but rank 0 sent float32 [4] (16 bytes) at size_and_dtype_mismatch.lua:3; both sides must use the same number of elements and dtype"
  both "same bytes, other count and dtype: the receiver's line" 2 \
    "$(failed "size_and_dtype_mismatch.lua:5: $words" 1)" size_and_dtype_mismatch.lua -n 2
  both "same bytes, other count and dtype: the sender's line" 2 \
    "$(failed "size_and_dtype_mismatch.lua:3: $words" 0)" size_and_dtype_mismatch.lua -n 2
}

# ---- a NUL in a rank's text (a print, an error) used to cut the text at the
# NUL on its way to the report and the trace. What follows it is kept, the
# NUL written as "\0" (as the grader writes it), on both engines, in the
# trace and in its replay.
case_nul_text() {
  local engine
  both "NUL: a print keeps what follows" 2 '[rank 0] before\0after' nul_text.lua -n 1
  both "NUL: an error keeps what follows" 2 "$(failed 'nul_text.lua:3: err\0tail')" nul_text.lua -n 1
  for engine in thread tcp; do
    guarded "$bin" run "$dir/nul_text.lua" -n 1 --engine $engine --no-tui --trace "$tmp/nul.jsonl" \
      >/dev/null 2>&1 </dev/null
    if grep -qF '"text":"before\\0after"' "$tmp/nul.jsonl" &&
      grep -qF '"text":"nul_text.lua:3: err\\0tail"' "$tmp/nul.jsonl"; then
      ok "NUL: the trace keeps what follows ($engine)"
    else bad_showing "$tmp/nul.jsonl" "NUL: the trace keeps what follows ($engine)"
    fi
    hostile "NUL: the replay keeps what follows ($engine)" 2 "$(failed 'nul_text.lua:3: err\0tail')" \
      -- replay "$tmp/nul.jsonl" --no-tui
  done
}

# ---- an error message longer than 1 KiB was cut at 1023 bytes without a
# word: it is kept whole up to an event's 64 KiB, then cut as a printed line
# is, saying so.
case_long_error() {
  local xs ys
  xs=$(printf 'x%.0s' {1..5000}) ys=$(printf 'y%.0s' {1..65421})
  both "a 5 KiB error message, whole" 2 "$(failed "long_error.lua:2: ${xs}END")" long_error.lua -n 1
  both "a 100 KB error message, cut and said" 2 \
    "$(failed "long_error.lua:3: $ys [commsim: message cut, 34582 more bytes]" 1)" long_error.lua -n 2
}

# ---- control characters a script prints or raises reached the reader's
# terminal as they are (ESC [2J cleared it, ESC ]0; set its title, also
# after the visualizer closed): the plain report and commsim's messages on
# standard error write them as \xHH (a C1 control as \u00HH), tabs kept,
# live and replayed.
case_ctl_text() {
  local engine
  both "control characters: printed" 2 "$(printf '[rank 0] a\tb\\x1B[2Jc\\x07d\\u009Be')" ctl_text.lua -n 1
  both "control characters: raised" 2 "$(failed 'ctl_text.lua:3: x\x1B]0;title\x07y')" ctl_text.lua -n 1
  for engine in thread tcp; do
    guarded "$bin" run "$dir/ctl_text.lua" -n 1 --engine $engine --no-tui --trace "$tmp/ctl.jsonl" \
      >/dev/null 2>&1 </dev/null
    guarded "$bin" replay "$tmp/ctl.jsonl" --no-tui >"$tmp/out" 2>"$tmp/err" </dev/null
    if grep -q $'\033\|\007' "$tmp/out" "$tmp/err"; then bad "control characters: replayed ($engine)" "raw ESC or BEL"
    elif ! grep -qxF '[rank 0] error: ctl_text.lua:3: x\x1B]0;title\x07y' "$tmp/err"; then
      bad "control characters: replayed ($engine)" "no escaped error line"
    else ok "control characters: replayed ($engine)"
    fi
  done
  # the trace's exports: no raw control character in a Mermaid diagram (its
  # notes carry the error's text), nor in the others
  local fmt
  for fmt in mermaid svg perfetto; do
    guarded "$bin" export "$tmp/ctl.jsonl" --format $fmt --out "$tmp/ctl.$fmt" >/dev/null 2>&1 </dev/null
    if [ ! -s "$tmp/ctl.$fmt" ]; then bad "control characters: export $fmt" "nothing written"
    elif grep -q $'\033\|\007' "$tmp/ctl.$fmt"; then bad_showing "$tmp/ctl.$fmt" "control characters: export $fmt" "raw ESC or BEL"
    else ok "control characters: export $fmt"
    fi
  done
  # a byte that starts no UTF-8 sequence (a lone 0x9B is CSI to an 8-bit
  # terminal) is U+FFFD live, as the trace records it and its replay shows it
  printf 'print("a\\155b")\n' >"$tmp/not_utf8.lua"
  for engine in thread tcp; do
    guarded "$bin" run "$tmp/not_utf8.lua" -n 1 --engine $engine --no-tui --trace "$tmp/nu.jsonl" \
      >"$tmp/live" 2>&1 </dev/null
    guarded "$bin" replay "$tmp/nu.jsonl" --no-tui >"$tmp/replayed" 2>&1 </dev/null
    if ! grep -qxF "[rank 0] a$(printf '\357\277\275')b" "$tmp/live"; then
      bad_showing "$tmp/live" "not UTF-8: U+FFFD live ($engine)"
    elif ! cmp -s <(grep '^\[rank' "$tmp/live") <(grep '^\[rank' "$tmp/replayed"); then
      bad_showing "$tmp/replayed" "not UTF-8: the replay prints what the run did ($engine)"
    else ok "not UTF-8: U+FFFD live and replayed ($engine)"
    fi
  done
  # a syntax error quotes the source, raw bytes and all, on standard error
  both "control characters: a syntax error's quote" 2 \
    "commsim run: ctl_syntax.lua:2: unfinished string near '\"\x1B]0;title\x07\x1B[2J'" ctl_syntax.lua -n 1
}

# ---- found by the script fuzzer: finalizers skipped while a rank unwinds
# (a leak that only a sanitizer build sees; three runs, as where the stop
# lands is timing)
case_gc_unwinding() {
  local i
  for i in 1 2 3; do
    both "finalizers run while a stopped rank unwinds (run $i)" 2 \
      "$(failed "gc_unwinding.lua:13: rank 0 fails while rank 1 makes garbage")" gc_unwinding.lua
  done
}

case_setmetatable_tensor() {
  both "setmetatable on a tensor" 2 \
    "$(failed "setmetatable_tensor.lua:3: setmetatable: a tensor's metatable cannot be changed (setmetatable takes a table, got a tensor)")" \
    setmetatable_tensor.lua -n 1
}

# ---- 16: a run that ends by a timeout is a timeout, never a deadlock. On
# tcp the exit of a rank the timeout unwound may reach the monitor before the
# unblock of a rank that waited on it; that exit used to close a "deadlock"
# ("rank 1 has already finished"), and its replay said status 3 where the run
# said 4. The trace is a real one (timeout_exit_first.lua, tcp, --timeout 1)
# with rank 1's last events moved before rank 0's unblock, as they can arrive.
case_timeout_exit_first() {
  hostile "a timeout's exits in any order: replayed as the timeout" 4 \
    "verdict: timeout or budget exceeded (exit status 4)" -- replay "$dir/timeout_exit_first.jsonl" --no-tui
  if grep -q "deadlock" "$tmp/out" "$tmp/err"; then
    bad "a timeout's exits in any order: no deadlock" "the report names one"
  else ok "a timeout's exits in any order: no deadlock"
  fi
  # live, where the bytes take their time (sync_flood.lua's 1 GiB of
  # rendezvous isends, cut by --timeout 4 while rank 1 receives): a timeout
  # (or, on a fast machine, the end) whenever it lands, never a deadlock
  guarded "$bin" run "$dir/sync_flood.lua" --engine tcp --mem-limit 64 --timeout 4 \
    >"$tmp/out" 2>"$tmp/err" </dev/null
  local got=$?
  if [ "$got" != 4 ] && [ "$got" != 0 ]; then
    bad "a timeout mid-transfer (tcp): no deadlock" "exit status $got, expected 4 (or 0)"
  elif grep -q "deadlock" "$tmp/out" "$tmp/err"; then
    bad "a timeout mid-transfer (tcp): no deadlock" "the report names one"
  else ok "a timeout mid-transfer (tcp): no deadlock (status $got)"
  fi
}

# ---- 16: a trace cut mid-event replays with status 1, whatever came before
# the cut: every cut point of runs that end ok, in a deadlock, in an error and
# in a collective mismatch, on both engines, and a cut after a whole trace
case_cut_traces() {
  local L="$top_srcdir/lessons/02-point-to-point" engine name script n k got bad_at
  for engine in thread tcp; do
    for name in chain deadlock order boom; do
      case $name in
        chain) script="$L/chain.lua" ;;
        deadlock) script="$L/deadlock.lua" ;;
        order) script="$top_srcdir/tests/coll/scripts/order.lua" ;;
        boom) script="$dir/error_after_coll.lua" ;;
      esac
      guarded "$bin" run "$script" --engine "$engine" --no-tui --trace "$tmp/c.jsonl" >/dev/null 2>&1 </dev/null
      n=$(wc -l <"$tmp/c.jsonl")
      bad_at=
      for ((k = 1; k <= n + 1; k++)); do
        { head -n $((k - 1)) "$tmp/c.jsonl"; sed -n "${k}p" "$tmp/c.jsonl" | head -c 17
          [ "$k" -le "$n" ] || printf '{"type":"print","ra'; } >"$tmp/cut.jsonl"
        "$bin" replay "$tmp/cut.jsonl" --no-tui >/dev/null 2>&1 </dev/null
        got=$?
        [ "$got" = 1 ] || bad_at="$bad_at $k:$got"
      done
      if [ "$n" -lt 4 ]; then bad "cut traces: $name ($engine)" "a trace of $n lines"
      elif [ -n "$bad_at" ]; then bad "cut traces: $name ($engine)" "cut at line:status$bad_at"
      else ok "cut traces: $name ($engine): status 1 at each of $((n + 1)) cut points"
      fi
    done
  done
}

# ---- wrong arguments: every call fails with its message, the run goes on

case_badargs() {
  local engine
  for engine in thread tcp; do
    guarded "$bin" run "$dir/badargs.lua" -n 1 --engine $engine >"$tmp/out" 2>"$tmp/err" </dev/null
    local got=$?
    if [ "$got" != 0 ]; then
      bad "wrong arguments to every function ($engine)" "exit status $got, expected 0"
    elif ! diff -u "$dir/badargs.expected" "$tmp/out" >"$tmp/diff"; then
      bad_showing "$tmp/diff" "wrong arguments to every function ($engine)" "output differs"
    else
      ok "wrong arguments to every function ($engine)"
    fi
  done
}

# ---- random arguments: 3000 calls of functions and methods per seed;
# whatever each raises, nothing crashes (a status of its own, not 0, 2, 3 or
# 4) and the sanitizers (make check-asan) say nothing. dist.new_group() with
# no argument once crashed the process: each seed finds that within a few
# hundred calls.

case_api_random() {
  local engine seeds seed bad_seeds got
  for engine in thread tcp; do
    seeds=50 bad_seeds=""
    [ $engine = tcp ] && seeds=10 # a process per run
    for seed in $(seq 1 $seeds); do
      { echo "SEED = $seed"; cat "$dir/api_random.lua"; } >"$tmp/api_random.lua"
      guarded "$bin" run "$tmp/api_random.lua" -n 1 --engine $engine --timeout 60 \
        >"$tmp/out" 2>"$tmp/err" </dev/null
      got=$?
      case $got in
      0 | 2 | 3 | 4) grep -q "Sanitizer\|runtime error" "$tmp/err" && bad_seeds+=" $seed(sanitizer)" ;;
      *) bad_seeds+=" $seed(status $got)" ;;
      esac
    done
    if [ -z "$bad_seeds" ]; then ok "random arguments to every function: $seeds seeds ($engine)"
    else bad_showing "$tmp/err" "random arguments to every function ($engine)" "seeds:$bad_seeds"; fi
  done
}

# ---- the sandbox

case_sandbox() {
  local s
  for s in io os package debug; do
    both "sandbox: $s" 2 "$(failed "sandbox_$s.lua:1: attempt to index a nil value (global '$s')")" \
      "sandbox_$s.lua" -n 1
  done
  if [ -e /tmp/commsim-hostile-escaped ]; then
    bad_showing /dev/null "sandbox: os.execute ran nothing" "/tmp/commsim-hostile-escaped exists"
  else
    ok "sandbox: os.execute ran nothing"
  fi
  for s in dofile loadfile; do
    both "sandbox: $s" 2 "$(failed "sandbox_$s.lua:1: attempt to call a nil value (global '$s')")" \
      "sandbox_$s.lua" -n 1
  done
  both "sandbox: string.dump" 2 "$(failed "sandbox_dump.lua:1: attempt to call a nil value (field 'dump')")" \
    sandbox_dump.lua -n 1
  both "sandbox: binary chunks" 2 "$(failed "sandbox_binary.lua:2: attempt to load a binary chunk (mode is 't')")" \
    sandbox_binary.lua -n 1
  both "sandbox: __gc" 2 "$(failed "sandbox_gc.lua:2: setmetatable: __gc metamethods are not available in lesson scripts")" \
    sandbox_gc.lua -n 1
  both "sandbox: the tensor metatable is hidden" 2 \
    "$(failed "sandbox_tensor_mt.lua:4: bad argument #1 to 'rawset' (table expected, got string)")" \
    sandbox_tensor_mt.lua -n 1
}

# ---- a script path that is not a file: a FIFO used to block commsim run
# (and commsim grade) for ever, waiting for a writer, before any timeout ran;
# grade read /dev/zero as a solution until its cases timed out. Refused at
# once, status 1 (a short timeout here: the old hang must fail, not wait).
case_script_paths() {
  local engine got
  mkfifo "$tmp/fifo.lua"
  for engine in thread tcp; do
    timeout -k 5 20 "$bin" run "$tmp/fifo.lua" --engine $engine --no-tui >"$tmp/out" 2>"$tmp/err" </dev/null
    got=$?
    if [ "$got" = 1 ] && grep -qxF "commsim run: cannot read $tmp/fifo.lua: not a regular file" "$tmp/err"
    then ok "script path: a FIFO is refused ($engine)"
    else bad "script path: a FIFO is refused ($engine)" "exit status $got"
    fi
  done
  for f in "$tmp/fifo.lua" /dev/zero; do
    timeout -k 5 20 "$bin" grade "$top_srcdir/lessons/02-point-to-point/exercises/ring" "$f" >"$tmp/out" 2>"$tmp/err" </dev/null
    got=$?
    if [ "$got" = 1 ] && grep -qxF "commsim grade: $f: not a regular file or a folder" "$tmp/err"
    then ok "grade: $f is refused"
    else bad "grade: $f is refused" "exit status $got"
    fi
  done
}

# ---- a script's text: a UTF-8 byte order mark (editors on Windows write
# one) is skipped, as lua does (it was a syntax error at line 1, and it hid
# the header); a precompiled chunk is refused naming the file (the message
# named none).
case_script_text() {
  both "a BOM, then a #! line and the header" 0 "[rank 2] bom	3" bom.lua
  both "a precompiled chunk names its file" 2 \
    "commsim run: precompiled.luac: attempt to load a binary chunk (mode is 't')" precompiled.luac -n 1
  { printf '\357\273\277'; cat "$top_srcdir/tests/grade/ring/reference.lua"; } >"$tmp/bom_ring.lua"
  hostile "grade: a solution with a BOM" 0 "total: 5/5" -- grade "$top_srcdir/lessons/02-point-to-point/exercises/ring" "$tmp/bom_ring.lua"
}

# ---- CPU bombs: the instruction budget ends them (status 4)

case_cpu() {
  both "cpu: infinite loop" 4 "$(failed "cpu_loop.lua:1: $budget")" cpu_loop.lua -n 1 --step-limit 1000000
  both "cpu: pcall swallowing the budget" 4 "$(failed "cpu_pcall.lua:1: $budget")" \
    cpu_pcall.lua -n 1 --step-limit 1000000
  both "cpu: coroutines swallowing the budget" 4 "$(failed "cpu_coroutine.lua:5: $budget")" \
    cpu_coroutine.lua -n 1 --step-limit 1000000
  # CPU the budget does not see: 80000 isends of one tensor in flight, each
  # read checked against all the others, and on tcp each CTS looking its
  # send up among all the others, newest first (the timeout is a backstop
  # only: about 1.5 s a run here, 80 s on tcp before)
  both "cpu: 80000 isends of one tensor in flight" 0 "$(printf '[rank 0] done\t160000')" \
    isend_one_buffer.lua -n 2 --timeout 60
}

# ---- memory bombs: the memory cap ends them (status 4)

case_memory() {
  both "memory: strings" 4 "$(failed "mem_string.lua:3: $memory")" mem_string.lua -n 1 --mem-limit 64
  both "memory: a table" 4 "$(failed "mem_table.lua:2: $memory")" mem_table.lua -n 1 --mem-limit 64
  both "memory: one huge tensor" 4 "$(failed "mem_tensor.lua:1: $memory")" mem_tensor.lua -n 1 --mem-limit 64
  both "memory: many tensors" 4 "$(failed "mem_tensors.lua:3: $memory")" mem_tensors.lua -n 1 --mem-limit 64
}

# ---- coroutines

case_coroutines() {
  both "coroutine: a bomb of coroutines" 4 "$(failed "coroutine_bomb.lua:3: $budget")" \
    coroutine_bomb.lua -n 1 --step-limit 1000000
  both "coroutine: yield across a C call" 2 \
    "$(failed "coroutine_yield_c.lua:5: attempt to yield across a C-call boundary")" coroutine_yield_c.lua -n 1
  both "coroutine: communication inside one" 0 "[rank 1] tensor([0., 0.])" coroutine_dist.lua -n 2
}

# ---- run the cases: all of them, or those named on the command line

cases=("$@")
[ ${#cases[@]} -gt 0 ] || mapfile -t cases < <(declare -F | awk '$3 ~ /^case_/ {print $3}')
for c in "${cases[@]}"; do
  "$c"
done
finish
