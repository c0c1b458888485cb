#!/usr/bin/env bash
# run_cli.sh -- commsim as a user runs it: exit statuses, error messages with
# file and line, hostile scripts, limits, many ranks, the trace file.
. "$(dirname "$0")/../lib.sh"
dir="$top_srcdir/tests/cli/scripts"

# ---- usage
expect "no arguments is a usage error"      1 "usage: commsim" --
expect "unknown command"                    1 "unknown command 'bogus'" -- bogus
# --step is the visualizer's: without one it is refused, not silently run to the end
expect "--step with --no-tui: refused"       1 "--step steps the run in the visualizer, and --no-tui" \
  -- run "$top_srcdir/lessons/02-point-to-point/chain.lua" --step --no-tui
expect "--step without a terminal: refused"  1 "which needs a terminal (or --tui)" \
  -- run "$top_srcdir/lessons/02-point-to-point/chain.lua" --step
# One prefix: what the shared runtime says names the command too, as the
# command's own option errors do ("commsim run:", never a bare "commsim:").
printf -- '--- net: bogus\nprint(1)\n' >"$tmp/badnet.lua"
expect "a header error says commsim run:"   1 "commsim run: badnet.lua:1: net: unknown model 'bogus'" -- run "$tmp/badnet.lua"
expect "a trace it cannot open says commsim run:" 1 "commsim run: $tmp/no/such/dir/t.jsonl: " \
  -- run "$top_srcdir/lessons/02-point-to-point/chain.lua" --trace "$tmp/no/such/dir/t.jsonl"
for args in "run $tmp/badnet.lua" "run $top_srcdir/lessons/02-point-to-point/chain.lua --trace $tmp/no/such/dir/t.jsonl" \
            "run $dir/syntax.lua -n 3 --engine tcp"; do
  "$bin" $args >/dev/null 2>"$tmp/err" </dev/null
  if grep -q '^commsim:' "$tmp/err"; then bad "no bare 'commsim:' prefix: $args" "$(grep '^commsim:' "$tmp/err" | head -1)"
  else ok "no bare 'commsim:' prefix: $args"; fi
done
expect "no command known: commsim:"        1 "commsim: unknown command 'bogus'" -- bogus
expect "run --help"                         0 "usage: commsim run SCRIPT" -- run --help
expect "help run"                           0 "--send-mode MODE" -- help run
# The command table (src/commands.c) prints every list and error.
expect "help lists every command"           0 "  learn [CHAPTER]  browse the chapters" -- help
expect "--help is help"                     0 "  replay TRACE     replay a trace" -- --help
expect "help learn"                         0 "usage: commsim learn [CHAPTER]" -- help learn
expect "help version"                       0 "usage: commsim version" -- help version
# A usage line that lists the options lists every one the help describes.
for cmd in replay export learn; do
  "$bin" $cmd --help >"$tmp/help" 2>&1
  usage=$(sed -n '1,/^$/p' "$tmp/help")
  missing=
  for o in $(sed '1,/^$/d' "$tmp/help" | grep -oE '^ +(-[a-zA-Z], )?--[a-z-]+' | grep -oE -- '--[a-z-]+' | sort -u); do
    [ "$o" = --help ] || grep -qF -- "$o" <<<"$usage" || missing="$missing $o"
  done
  if [ -z "$missing" ]; then ok "$cmd --help: its usage lines list every option"
  else bad "$cmd --help: its usage lines list every option" "missing:$missing"; fi
done
expect "replay --help: the usage names --at RANK:LINE" 0 "[--end | --at N | --at RANK:LINE]" -- replay --help
expect "replay --help: a died rank's status, 5"    0 "5 a rank process died" -- replay --help
expect "help: every exit status, 130 and grade's 6" 0 "130 interrupted; commsim grade: 6 some case failed" -- help
expect "help of an unknown command"         1 "commsim help: unknown command 'bogus'" -- help bogus
expect "version"                            0 "commsim 0." -- version
expect "--version"                          0 "commsim 0." -- --version
# An unknown option: one line that names it and points to --help, in the
# same "commsim COMMAND:" form as every other usage error.
expect "unknown option: named"              1 "commsim run: unknown option '--bogus' (commsim run --help lists them)" -- run --bogus
if [ "$(wc -l <"$tmp/err")" = 1 ] && [ ! -s "$tmp/out" ]; then ok "unknown option: one line, no help text"
else bad_showing "$tmp/err" "unknown option: one line, no help text" "$(wc -l <"$tmp/err") lines"; fi
expect "an option without its value"        1 "commsim run: option '-n' needs a value" -- run x.lua -n
expect "replay: unknown option"             1 "commsim replay: unknown option '--zz'" -- replay --zz
expect "learn: unknown option"              1 "commsim learn: unknown option '-q'" -- learn -q
# Every command: the same one line (no usage text), getopt's own words never.
for cmd in run replay learn grade export bench; do
  expect "$cmd --zz: one line in the commsim COMMAND form" 1 \
    "commsim $cmd: unknown option '--zz' (commsim $cmd --help lists them)" -- $cmd --zz
  if [ "$(wc -l <"$tmp/err")" = 1 ] && [ ! -s "$tmp/out" ]; then ok "$cmd --zz: nothing else"
  else bad "$cmd --zz: nothing else" "$(wc -l <"$tmp/err") lines"; fi
done
expect "a long option without its value is named" 1 \
  "commsim grade: option '--format' needs a value (commsim grade --help lists them)" -- grade --format
expect "a long option with a short letter, without its value" 1 \
  "commsim learn: option '--lessons' needs a value" -- learn --lessons
expect "a long option given a value it takes none of" 1 \
  "commsim replay: option '--no-tui' takes no value" -- replay --no-tui=1
expect "export: a missing value" 1 "commsim export: option '--width' needs a value" -- export t.jsonl --width
# learn without a terminal: --no-tui prints the chapters, or one chapter
expect "learn --no-tui lists the chapters"  0 "  02-point-to-point          2. Point-to-point communication" -- learn --no-tui --lessons "$top_srcdir/lessons"
# every title starts in one column, the longest chapter name's too
"$bin" learn --no-tui --lessons "$top_srcdir/lessons" >"$tmp/ch.txt" 2>&1
[ "$(sed -n '2,$p' "$tmp/ch.txt" | awk '{ print index($0, $2) }' | sort -u | wc -l)" = 1 ] \
  && ok "learn --no-tui: the titles in one column" || bad_showing "$tmp/ch.txt" "learn --no-tui: titles aligned"
expect "learn 1 --no-tui prints the chapter and its scripts" 0 "  hello.lua              Hello: every rank says who it is" -- learn 1 --no-tui --lessons "$top_srcdir/lessons"
expect "run without a script"               1 "which script?" -- run
expect "missing script file"                1 "nope.lua" -- run "$tmp/nope.lua"
# A script that is not a file may name a lesson (src/lessons.c).
export COMMSIM_LESSONS="$top_srcdir/lessons"
expect "a lesson by name"                   0 "--- chain.lua: 4 ranks" -- run chain -n 4 --no-tui
expect "a lesson by chapter/name"           0 "verdict: ok" -- run 03-collectives/broadcast.lua --no-tui
expect "no such lesson either"              1 "cannot open no_such_lesson" -- run no_such_lesson --no-tui
unset COMMSIM_LESSONS
expect "-n 0"                               1 "need at least 1 rank" -- run "$dir/hello_all.lua" -n 0
# --world 0 and WORLD_SIZE=0 ended with status 1 and not a word
expect "--world 0"                          1 "commsim run: --world: need at least 1 rank" -- run "$dir/hello_all.lua" --world 0
WORLD_SIZE=0 RANK=1 expect "WORLD_SIZE=0"   1 "commsim run: WORLD_SIZE: need at least 1 rank" -- run "$dir/hello_all.lua" --engine tcp
expect "-n not a number"                    1 "'x' is not a whole number" -- run "$dir/hello_all.lua" -n x
expect "bad send mode"                      1 "unknown send mode 'fast'" -- run "$dir/hello_all.lua" --send-mode fast
expect "bad engine"                         1 "unknown engine 'carrier-pigeon'" -- run "$dir/hello_all.lua" --engine carrier-pigeon
expect "bad header names file and line"     1 "badheader.lua:2:" -- run "$dir/badheader.lua"
# a job over processes' options on the thread engine: refused, not ignored (a
# rank "joining" with --master would otherwise run the whole world by itself)
for opt in "--master 127.0.0.1:29500" "--rank 1" "--token 0123" "--bind 127.0.0.1"; do
  expect "thread engine: ${opt%% *} refused" 1 \
    "commsim run: ${opt%% *}: the thread engine runs every rank in this process; a job over several processes or machines needs --engine tcp" \
    -- run "$dir/hello_all.lua" $opt
done
# a header key misspelt is ignored, as any unknown key, but said: the run
# goes on with 2 ranks, not the 4 the student meant
printf -- '--- wrld: 4\nprint(world_size)\n' >"$tmp/wrld.lua"
expect "a misspelt header key: a warning, the run goes on" 0 \
  "commsim run: warning: wrld.lua:1: unknown header key 'wrld', ignored (did you mean 'world'?)" -- run "$tmp/wrld.lua"
count_lines "a misspelt header key: ignored (2 ranks)" 2 "] 2"

# ---- scripts that fail: file:line, status 2, nobody hangs
expect "runtime error: file:line"           2 "error.lua:6: attempt to index a nil value (local 'x')" -- run "$dir/error.lua"
expect "syntax error: file:line"            2 "syntax.lua:3:" -- run "$dir/syntax.lua"
expect "a Python habit: Lua's error, then the hint" 2 \
  "commsim run: kwarg.lua:3: ')' expected near '='; Lua has no keyword arguments: dist.all_reduce(t, dist.ReduceOp.SUM);" \
  -- run "$dir/kwarg.lua"
for eng in thread tcp; do # the error once, however many ranks compiled it
  expect "syntax error -n 4 ($eng)"         2 "syntax.lua:3:" -- run "$dir/syntax.lua" -n 4 --engine $eng --no-tui
  n=$(grep -c "syntax.lua:3:" "$tmp/err")
  if [ "$n" = 1 ]; then ok "syntax error -n 4 ($eng): printed once"
  else bad_showing "$tmp/err" "syntax error -n 4 ($eng): printed once" "$n times"; fi
done
expect "bad destination: file:line"         2 "badarg.lua:3:" -- run "$dir/badarg.lua"
expect "bad destination: message"           2 "destination 2 is outside the world" -- run "$dir/badarg.lua"
# A cycle of two receives, with a send waiting on it: the why names the
# operations of the cycle, not a send cycle.
expect "mixed deadlock: the why names the cycle's receives" 3 "rank 1's receive waits for rank 2 to send (mixed_cycle.lua:8), rank 2's receive waits for rank 1 to send (mixed_cycle.lua:11). Every rank in the cycle is receiving" -- run "$dir/mixed_cycle.lua"
expect "wrong source: the fix names the expected and the sending rank" 3 "fix: wrong source: rank 1 receives from rank 2 (wrong_source.lua:7), but the message for rank 1 comes from rank 0 (wrong_source.lua:5): receive from rank 0 there" -- run "$dir/wrong_source.lua"
expect "size mismatch names both sides"     2 "rank 1 receives float32 [3] (12 bytes) at mismatch.lua:7, but rank 0 sent float32 [4] (16 bytes) at mismatch.lua:4" -- run "$dir/mismatch.lua"

# ---- hostile scripts
expect "sandbox: io"                        2 "global 'io'" -- run "$dir/sandbox_io.lua"
expect "sandbox: os"                        2 "global 'os'" -- run "$dir/sandbox_os.lua"
if [ ! -e /tmp/commsim-escaped ]; then ok "sandbox: os.execute ran nothing"
else bad_showing /dev/null "sandbox: os.execute ran nothing" "/tmp/commsim-escaped exists"; fi
expect "sandbox: require"                   2 "global 'require'" -- run "$dir/sandbox_require.lua"
expect "sandbox: binary chunk refused"      2 "binary chunk" -- run "$dir/sandbox_binary.lua"
expect "infinite loop: instruction budget"  4 "instruction budget exceeded" -- run "$dir/loop.lua" --step-limit 1000000
expect "pcall cannot swallow the budget"    4 "instruction budget exceeded" -- run "$dir/pcall_loop.lua" --step-limit 1000000
expect "memory bomb: memory cap"            4 "memory limit exceeded" -- run "$dir/membomb.lua" --mem-limit 64
expect "huge tensor: memory cap"            4 "memory limit exceeded" -- run "$dir/tensorbomb.lua" --mem-limit 64
# 0 turns the cap off, as the help and docs/cli.md say (300 MiB fits no default cap)
printf 'local t = tensor.zeros(75 * 1024 * 1024)\nprint(t:numel())\n' >"$tmp/big.lua"
expect "--mem-limit 0: no cap"               0 "verdict: ok" -- run "$tmp/big.lua" -n 1 --mem-limit 0
expect "--help: --mem-limit 0 is no cap"     0 "0 = none; at most 1048576" -- run --help
expect "timeout ends the run"               4 "did not finish within 1 s" -- run "$dir/sleeper.lua" --timeout 1
expect "timeout: where a rank was"          4 "  rank 2 was in recv from rank 1 (tag 0, float32 [2], 8 bytes) at stopped.lua:15" \
  -- run "$dir/stopped.lua" --timeout 1
expect "timeout: the first 8 ranks, then a count" 4 "  ... and 4 more ranks (--report json lists them all)" \
  -- run "$dir/sleeper.lua" -n 12 --timeout 1
expect "a long timeout is fine"             0 "verdict: ok" -- run "$dir/hello_all.lua" --timeout 100000000
expect "the longest timeout is fine"        0 "verdict: ok" -- run "$dir/hello_all.lua" --timeout 1e9
expect "too long a timeout: the range"      1 "--timeout: '1e10' is not a number from 0 to 1e9" -- run "$dir/hello_all.lua" --timeout 1e10
expect "a fast speed is fine"               0 "verdict: ok" -- run "$dir/hello_all.lua" --speed 1e8
expect "too fast a speed: the range"        1 "--speed: '2e9' is not a number from 0 to 1e9" -- run "$dir/hello_all.lua" --speed 2e9

# ---- scale and semantics
expect "any-source receive returns the sender" 0 "[rank 0] sum of senders	6" -- run "$dir/any_source.lua"
expect "64-rank ring, 1000 iterations"      0 "after 1000 steps rank 0 holds	24.0" -- run "$dir/ring_many.lua" -n 64
expect "256 ranks start and end"            0 "ranks: 256 done" -- run "$dir/hello_all.lua" -n 256
if [ "$(grep -c '^\[rank [0-9]*\] hello from' "$tmp/out")" = 256 ]; then ok "256 ranks each print once"
else bad "256 ranks each print once"; fi

# ---- the trace: JSON Lines, header first, written through
expect "trace written"                      0 "" -- run "$top_srcdir/tests/cli/scripts/any_source.lua" --trace "$tmp/t.jsonl"
if head -n1 "$tmp/t.jsonl" | grep -q '"type": *"run"' && head -n1 "$tmp/t.jsonl" | grep -q '"version": *1' \
   && [ "$(grep -c '"type": *"exit"' "$tmp/t.jsonl")" = 4 ] && [ "$(grep -c '"type": *"match"' "$tmp/t.jsonl")" = 3 ]; then
  ok "trace has the run header, 3 matches and 4 exits"
else
  bad_showing "$tmp/t.jsonl" "trace has the run header, 3 matches and 4 exits"
fi
expect "trace to an unwritable path"        1 "/nonexistent/dir/t.jsonl" -- run "$dir/hello_all.lua" --trace /nonexistent/dir/t.jsonl

# ---- a receive takes the sender's element count and dtype; the shapes may
# differ (as in torch): [4] into [2, 2] runs, float32 into float64 does not
expect "[4] received into [2, 2]"           2 "[rank 1] shape	torch.Size([2, 2])	3.0" -- run "$dir/reshape_recv.lua"
expect "same count, other dtype: an error"  2 "dtype mismatch: rank 1 receives float64 [4] (32 bytes) at reshape_recv.lua:14, but rank 0 sent float32 [4] (16 bytes) at reshape_recv.lua:8; both sides must use the same dtype" -- run "$dir/reshape_recv.lua"

# ---- the engine table: --engine help, and the unknown engine's error
expect "--engine help prints the table"     0 "engine   ranks      device  native coll.  tags  any-source" -- run --engine help
if grep -q '^  thread   threads ' "$tmp/out" && grep -q '^  tcp      processes ' "$tmp/out" && [ ! -s "$tmp/err" ]; then
  ok "--engine help: a row per engine, on standard output"
else bad "--engine help: a row per engine, on standard output"; fi
expect "unknown engine prints the table"    1 "tcp      every rank a process" -- run "$dir/hello_all.lua" --engine carrier-pigeon

# ---- a reader that stops reading (| head) does not end the run half way:
# the run ends as it would, and its trace is whole
printf 'for i = 1, 3000 do print("line " .. i) end\ndist.barrier()\n' >"$tmp/printer.lua"
for engine in thread tcp; do
  "$bin" run "$tmp/printer.lua" -n 4 --engine $engine --no-tui --trace "$tmp/pipe.jsonl" </dev/null 2>"$tmp/err" | head -1 >/dev/null
  st=${PIPESTATUS[0]}
  "$bin" replay "$tmp/pipe.jsonl" --no-tui >"$tmp/out" 2>&1
  rst=$?
  [ "$st" = 0 ] && [ "$rst" = 0 ] && ok "| head: the run ends ok, its trace whole ($engine)" \
    || bad_showing "$tmp/out" "| head ($engine)" "run status $st, replay status $rst"
done

# ---- a reader that pauses (a pager at its prompt) does not hold the ranks:
# their output waits in memory, the run ends ok within its --timeout, and the
# reader gets every line when it reads again. The thread engine's ranks used
# to wait on the full pipe in the middle of a print, until the timeout ended
# the run (status 4). (The tcp engine's: tests/tcp/run_faults.sh.)
# 200 KiB: three times what a pipe holds.
printf 'for i = 1, 1500 do print(string.rep("x", 60) .. " " .. i) end\ndist.barrier()\n' >"$tmp/chatty.lua"
( guarded "$bin" run "$tmp/chatty.lua" -n 2 --engine thread --no-tui --timeout 5 2>"$tmp/err"
  echo $? >"$tmp/rc" ) | { sleep 7; cat >"$tmp/out"; }
st=$(cat "$tmp/rc")
lines=$(grep -c '^\[rank [01]\] x* [0-9]*$' "$tmp/out")
if [ "$st" != 0 ]; then bad "a reader that pauses (thread)" "exit status $st, expected 0"
elif [ "$lines" != 3000 ]; then bad "a reader that pauses (thread)" "$lines lines, expected 3000"
else ok "a reader that pauses does not hold the ranks: ok (status 0) with all 3000 lines (thread)"
fi

finish
