#!/usr/bin/env bash
# run_tui.sh -- the visualizer as a user sees it, through tmux: the deadlock
# demo, stepping the chain, resizing, quitting (exit status and a restored
# terminal), Ctrl-C, a script error, NO_COLOR, many ranks, rank processes of
# the tcp engine (stepping, a death, no process left behind).
#
# Every check polls the screen until the expected text appears, within a
# generous bound: a slow machine makes the test slower, never wrong.
. "$(dirname "$0")/../lib.sh"
lessons=$(cd "$top_srcdir/lessons" && pwd)
scripts=$(cd "$top_srcdir/tests/cli/scripts" && pwd)
command -v tmux >/dev/null || skip_all "tmux is not installed"

sock="commsim-tui-$$"
tm() { tmux -L "$sock" -f /dev/null "$@"; }
# The probe session also keeps the server alive between tests: a server exits
# with its last session, and a test starting then could race its shutdown.
tm new-session -d -s probe -x 80 -y 24 "sleep 3600" 2>/dev/null || skip_all "tmux cannot start a server here"
on_exit() { tm kill-server 2>/dev/null; }

# UTF-8 if the system has it (arrows and box drawing), else the ASCII fallback.
if locale -a 2>/dev/null | grep -qiE '^c\.utf-?8$'; then
  loc=C.UTF-8 arrow="───▶" to="→" ell="…"
else
  loc=C arrow="--->" to="->" ell="..."
fi

# A failed case shows the screen it last saw.
evidence() {
  echo "    screen:"
  show "$tmp/screen"
}

# start NAME W H CMD...: a session running CMD under sh, which then prints the
# exit status and whether the terminal settings came back unchanged.
start() {
  local name=$1 w=$2 h=$3
  shift 3
  tm new-session -d -s "$name" -x "$w" -y "$h" \
    "env TERM=screen LC_ALL=$loc sh -c 'before=\$(stty -g); $*; echo EXIT=\$?; [ \"\$(stty -g)\" = \"\$before\" ] && echo STTY=same; sleep 600'"
  tm set-option -t "$name" status off >/dev/null
}

snap() { tm capture-pane -p -t "$1" >"$tmp/screen"; }

# on_screen NAME PATTERN...: every fixed-string pattern is on NAME's screen
# now; the first one that is not in $missing.
on_screen() {
  local p
  snap "$1"
  shift
  for p in "$@"; do grep -qF -- "$p" "$tmp/screen" || { missing=$p; return 1; }; done
}

# wait_for NAME PATTERN...: wait until every pattern is on screen (bound: 60 s).
# Returns 1 if they never all appear.
wait_for() {
  local missing=
  wait_until 60 on_screen "$@" && return 0
  echo "    never appeared: $missing"
  return 1
}

count() { grep -cF -- "$1" "$tmp/screen"; }

# wait_without NAME ABSENT PATTERN...: wait until every pattern is on screen
# and ABSENT is not (bound: 60 s). After a key, the old screen may still hold
# the patterns: asserting the absence on the first screen that has them
# would race the key.
shows_without() {
  local name=$1 absent=$2
  shift 2
  on_screen "$name" "$@" && ! grep -qF -- "$absent" "$tmp/screen"
}
wait_without() {
  local missing=
  wait_until 60 shows_without "$@" && return 0
  echo "    never appeared, or $2 stayed: $missing"
  return 1
}

# plain ARGS...: commsim ARGS, both streams in $tmp/screen (where a failed
# case shows them), its exit status in $status.
plain() { "$bin" "$@" >"$tmp/screen" 2>&1; status=$?; }

# check NAME CONDITION: one test, passing when the shell condition holds.
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }

# quit_check SESSION STATUS NAME: q leaves with STATUS and the terminal as it was.
quit_check() {
  tm send-keys -t "$1" q
  check "$3" "wait_for $1 EXIT=$2 STTY=same"
  tm kill-session -t "$1"
}

# lines_on_screen NAME PATTERN N: exactly N lines of NAME's screen hold PATTERN.
lines_on_screen() { snap "$1" && [ "$(count "$2")" = "$3" ]; }

# wait_count NAME PATTERN N: wait until exactly N lines hold PATTERN (60 s).
wait_count() {
  wait_until 60 lines_on_screen "$@" && return 0
  echo "    never $3 lines with: $2"
  return 1
}

# ---- the deadlock demo: alert, both ranks blocked, resize, quit
start dl 100 30 "$bin run $lessons/02-point-to-point/deadlock.lua"
check "deadlock: alert with its cycle and explanation, both ranks blocked" 'wait_for dl DEADLOCKED "wait-for cycle: rank 0 $to rank 1 $to rank 0" "why: every blocked rank" \
     "as the deadlock found them" && wait_count dl " blocked    send $to" 2'
tm resize-window -t dl -x 80 -y 24
check "deadlock: redrawn at 80x24 after a resize" '[ "$(tm display-message -p -t dl '\''#{pane_width}x#{pane_height}'\'')" = 80x24 ] &&
   wait_for dl " DEADLOCKED" "fix: reorder" "dist.send(outgoing, r" &&
   wait_count dl " blocked    send $to" 2'
tm send-keys -t dl q
check "deadlock: q leaves with status 3 and the terminal restored" 'wait_for dl EXIT=3 STTY=same "verdict: deadlock" && ! grep -q DEADLOCKED "$tmp/screen"'
tm kill-session -t dl

# ---- 8 ranks deadlocked at 80x24 (a projector): the alert says there is
# more, a gives it the screen, and it scrolls to its end; the diagram keeps
# every rank's bar and the verdict in view
start d8 80 24 "$bin run $lessons/02-point-to-point/deadlock.lua -n 8"
check "deadlock -n 8 at 80x24: the whole cycle, the verdict in the diagram, the header's speed" \
  'wait_for d8 " DEADLOCKED" "rank 4 $to rank 5" "$to rank 6 $to rank 7 $to rank 0" "a shows them all" "10 ops/s" " DEADLOCK " &&
   ! grep -qF "✗" "$tmp/screen"'
tm send-keys -t d8 a
check "a: the alert takes the screen, why and the whole fix first" \
  'wait_for d8 "alerts, lines 1-" "why: every blocked rank" "after the receives."'
tm send-keys -t d8 PPage NPage NPage
check "the alert scrolls to its end: every blocked rank" \
  'wait_for d8 "rank 3 is blocked in send to rank 4" "rank 7 is blocked in send to rank 0"'
tm send-keys -t d8 a
check "a again: back to the run" 'wait_for d8 "as the deadlock found them" "space-time"'
quit_check d8 3 "deadlock -n 8: q gives status 3"

# ---- below 60x15 the view only says that the window is too small, and what
# it needs; at 60x15 the rank rows keep their columns apart and the alerts
# say that a shows them
start ts5 20 5 "$bin run $lessons/02-point-to-point/deadlock.lua"
check "20x5: window too small, the size needed, no text over text" \
  'wait_for ts5 "window too small" "60x15)" && ! grep -qF "line 19" "$tmp/screen"'
tm resize-window -t ts5 -x 40 -y 10
check "40x10: window too small, the size needed" \
  'wait_for ts5 "window too small (40x10, need 60x15)" "deadlocked: q quits"'
tm resize-window -t ts5 -x 60 -y 15
rows_apart() { snap ts5 && [ "$(grep -cE "^.    [01]  blocked    send $to [01] tag 0 16 B +line 19 +[0-9]+\.[0-9]s$" "$tmp/screen")" = 2 ]; }
check "60x15: the deadlock, each rank's row in its columns, the alerts saying a shows them" \
  'wait_for ts5 " DEADLOCKED" "a shows them all" && wait_until 60 rows_apart'
quit_check ts5 3 "small windows: q gives status 3"

# ---- a wait-for cycle longer than the alert names (16 ranks): elided in the
# middle, never closed early with an edge that is not there
start d20 120 40 "$bin run $lessons/02-point-to-point/deadlock.lua -n 20 --speed 0"
check "deadlock -n 20: the cycle's middle elided, its length given, no false edge back to rank 0" \
  'wait_for d20 " DEADLOCKED" "rank 14 $to rank 15 $to $ell (20 ranks) $to rank 0" &&
   ! grep -qF "rank 15 $to rank 0" "$tmp/screen"'
quit_check d20 3 "deadlock -n 20: q gives status 3"


# ---- stepping the chain: space advances every runnable rank by one operation
start ch 100 30 "$bin run $lessons/02-point-to-point/chain.lua --step"
check "chain --step: starts paused, every rank ready at its first operation" 'wait_for ch PAUSED "ready      send $to 1" && wait_count ch " ready      recv" 3'
tm send-keys -t ch Space
check "chain step 1: one arrow 0->1, rank 1 ready to send, 2 and 3 blocked" 'wait_for ch "16 B$arrow" "    0  done" "    1  ready      send $to 2" "    2  blocked    recv" \
     "    3  blocked    recv" && wait_count ch "16 B$arrow" 1'
tm send-keys -t ch Space
check "chain step 2: a second arrow 1->2, rank 2 ready to send" 'wait_for ch "    1  done" "    2  ready      send $to 3" "    3  blocked    recv" &&
   wait_count ch "16 B$arrow" 2'
tm send-keys -t ch Space
check "chain step 3: three arrows, every rank done, rank 0's output shown" 'wait_for ch FINISHED "    3  done" "start: tensor([1., 2., 3., 4.])" &&
   wait_count ch "16 B$arrow" 3'
tm send-keys -t ch q
check "chain: q after the end gives the run's status (0)" 'wait_for ch EXIT=0 STTY=same "verdict: ok"'
tm kill-session -t ch

# ---- s steps only the selected rank (an interleaving built by hand); enter
# shows the tensor of its next operation; q mid-run is 130
start sr 100 30 "$bin run $lessons/02-point-to-point/chain.lua --step"
wait_count sr " ready  " 4 >/dev/null
tm send-keys -t sr Enter
check "enter: the tensor of the selected rank's next operation" 'wait_for sr "the tensor of its send" "tensor([1., 2., 3., 4.])"'
tm send-keys -t sr Escape s
check "s: only rank 0 moved: its rendezvous send waits for rank 1" 'wait_for sr "    0  blocked    send $to 1" && wait_count sr " ready      recv" 3 &&
   wait_count sr "16 B$arrow" 0'
timer() { grep -F "    0  blocked" "$tmp/screen" | grep -oE "[0-9]+\.[0-9]s"; }
snap sr; t1=$(timer); sleep 1.2; snap sr
check "paused: the blocked-for timer stands still" '[ -n "$t1" ] && [ "$(timer)" = "$t1" ]'
tm send-keys -t sr s
check "s on a blocked rank: it does not move, the footer says why" \
  'wait_for sr "rank 0 is blocked: it moves when its peer does" && wait_count sr " ready      recv" 3'
tm send-keys -t sr Tab s
check "tab, s: rank 1 receives, the message moves, ranks 2 and 3 did not" 'wait_for sr "    0  done" "16 B$arrow" "    1  ready      send $to 2" &&
   wait_count sr " ready      recv" 2'
# a click (X10 mouse report: button 1 at column 5, row 5, then its release)
tm send-keys -t sr -l $'\e[M &&'
tm send-keys -t sr -l $'\e[M#&&'
check "mouse: a click on a rank's row selects it" 'wait_for sr "source, rank 3" "output, rank 3"'
quit_check sr 130 "q mid-run: status 130, terminal restored"

# ---- keys: q inside the help only closes it; the speed ladder from any
# start; enter after the end says the run has ended
start hk 100 30 "$bin run $lessons/02-point-to-point/chain.lua --step --speed 3"
wait_for hk PAUSED "3 ops/s" >/dev/null
tm send-keys -t hk '?'
wait_for hk "this help (any key closes it)" >/dev/null
tm send-keys -t hk q
check "q in the help box closes it and does not quit" \
  'wait_without hk "any key closes it" PAUSED && ! grep -qF EXIT= "$tmp/screen"'
tm send-keys -t hk +
check "+ from 3 ops/s: the next step of the ladder, 5" 'wait_for hk "5 ops/s"'
tm send-keys -t hk -
check "- from 5 ops/s: 2, the step below it (3 was never on the ladder)" 'wait_for hk "  2 ops/s"'
tm send-keys -t hk r
wait_for hk FINISHED >/dev/null
tm send-keys -t hk Enter
check "enter after the end: says the run has ended" 'wait_for hk "the run has ended: rank 0 has no next operation"'
quit_check hk 0 "keys: q after the end gives status 0"
start sl 100 30 "$bin run $lessons/02-point-to-point/chain.lua --step --speed 0.2"
wait_for sl "0.2 ops/s" >/dev/null
tm send-keys -t sl -
check "- from 0.2 ops/s goes slower (0.1), not faster" 'wait_for sl "0.1 ops/s"'
quit_check sl 130 "speed: q mid-run gives status 130"
# the whole ladder, as docs/cli.md gives it, down from full speed to its
# slowest, which - does not pass
ladder=$(grep -o 'faster / slower: [0-9., ]*operations' "$top_srcdir/docs/cli.md" | sed 's/.*: //; s/ operations//; s/,//g')
walk_ladder() {
  local s
  for s in $(echo "$ladder" | tr ' ' '\n' | sort -gr); do
    tm send-keys -t ld -
    wait_for ld "  $s ops/s" >/dev/null || { echo "    - did not reach $s ops/s"; return 1; }
  done
  # - at the slowest stays: + after it is the ladder's second step
  tm send-keys -t ld - +
  wait_for ld "  $(echo "$ladder" | cut -d' ' -f2) ops/s" >/dev/null
}
start ld 100 30 "$bin run $lessons/02-point-to-point/chain.lua --step --speed 0"
wait_for ld PAUSED "full speed" >/dev/null
check "- walks the ladder docs/cli.md lists, full speed to its slowest ($ladder)" \
  '[ -n "$ladder" ] && walk_ladder'
quit_check ld 130 "ladder: q mid-run gives status 130"

# ---- 80x24, the smallest screen documented: the whole help fits
start hp 80 24 "$bin run $lessons/02-point-to-point/chain.lua --step"
wait_for hp PAUSED >/dev/null
tm send-keys -t hp '?'
check "? at 80x24: the whole help, down to its last line" \
  'wait_for hp "space    advance every runnable rank" "this help (any key closes it)" "each one operation when stepping)."'
tm send-keys -t hp Escape
quit_check hp 130 "help at 80x24: q mid-run gives status 130"

# ---- 60x15, the smallest screen the visualizer draws: the help is taller
# than its box and scrolls (it used to end in "a taller terminal shows the
# rest"); the arrows scroll it, to its end and back, and any other key
# closes it. The same in learn.
start hs 60 15 "$bin run $lessons/02-point-to-point/chain.lua --step"
wait_for hs PAUSED >/dev/null
tm send-keys -t hs '?'
check "? at 60x15: the help's first lines, and how to see the rest" \
  'wait_for hs "space    advance every runnable rank" "more below: down arrow or PgDn" &&
   ! grep -qF "each one operation when" "$tmp/screen"'
tm send-keys -t hs End
check "End: the help's last lines, and how to go back" \
  'wait_for hs "one operation when stepping)." "the end: up arrow or PgUp back" &&
   ! grep -qF "space    advance every runnable rank" "$tmp/screen"'
tm send-keys -t hs Up
check "up arrow: one line back, more below again" 'wait_for hs "more below: down arrow or PgDn"'
tm send-keys -t hs x
check "any other key closes the scrolled help" 'wait_without hs "─ keys ─" "PAUSED"'
quit_check hs 130 "help at 60x15: q mid-run gives status 130"
start ls 60 15 "$bin learn --lessons $lessons"
wait_for ls "commsim learn" >/dev/null
tm send-keys -t ls '?'
wait_for ls "more below: down arrow or PgDn" >/dev/null
tm send-keys -t ls PageDown
check "learn at 60x15: PgDn scrolls the help to its end" \
  'wait_for ls "q         quit" "the end: up arrow or PgUp back"'
tm send-keys -t ls x
check "learn: another key closes the scrolled help" 'wait_without ls "─ keys ─" "commsim learn"'
quit_check ls 0 "learn at 60x15: q quits with status 0"

# ---- 80x24, the smallest screen documented: every footer keeps "? help" and
# "q quit" (the less telling hints go first), every header its figures whole
footer_tail() { snap "$1" && tail -1 "$tmp/screen" | grep -qE '\? help  q quit *$'; }
header_has() { snap "$1" && head -1 "$tmp/screen" | grep -qE "$2"; }
"$bin" run "$lessons/02-point-to-point/ring.lua" --no-tui --trace "$tmp/ring.trace" >/dev/null 2>&1
start fs 80 24 "$bin run $lessons/02-point-to-point/ring.lua --step"
wait_for fs PAUSED >/dev/null
check "run --step at 80x24: the footer ends with ? help  q quit" 'wait_until 60 footer_tail fs'
# the output key is among the keys that fit: at 80 columns it is how a
# student finds the whole of a rank's output
footer_has() { snap "$1" && tail -1 "$tmp/screen" | grep -qF -- "$2"; }
check "run --step at 80x24: the footer names p output" 'wait_until 60 footer_has fs "tab rank  p output"'
# one column narrower: the bottom-right cell, never written, is blanked (it
# kept the wider frame's last letter: "q quitt")
drawn_at() { snap "$1" && [ "$(head -1 "$tmp/screen" | sed 's/ *$//' | wc -c)" = "$2" ]; }
tm resize-window -t fs -x 81 -y 24
wait_until 60 drawn_at fs 81
tm resize-window -t fs -x 80 -y 24
check "81x24 to 80x24: nothing of the wider frame is left in the corner" \
  'wait_until 60 drawn_at fs 80 && wait_until 60 footer_tail fs'
quit_check fs 130 "run --step at 80x24: q mid-run gives status 130"
start fl2 80 24 "$bin learn 2 --lessons $lessons"
wait_for fl2 "commsim learn  02-point-to-point" >/dev/null
check "learn at 80x24: the footer ends with ? help  q quit" 'wait_until 60 footer_tail fl2'
tm send-keys -t fl2 Enter
wait_for fl2 PAUSED >/dev/null
check "a run from learn at 80x24: the footer ends with ? help  q quit" 'wait_until 60 footer_tail fl2'
tm send-keys -t fl2 q
wait_for fl2 "ended: left before the end" >/dev/null
check "learn's message at 80x24: ? help  q quit beside it" 'wait_until 60 footer_tail fl2'
quit_check fl2 0 "learn at 80x24: q quits with status 0"
start fr 80 24 "$bin replay $tmp/ring.trace"
wait_for fr " REPLAY" "event 1/" >/dev/null
check "replay at 80x24: the footer ends with ? help  q quit" 'wait_until 60 footer_tail fr'
tm send-keys -t fr G
check "replay at 80x24, G: the header's event count and time whole, the footer's tail" \
  'wait_until 60 header_has fr " event ([0-9]+)/\1  t=[0-9.]+s +END OF TRACE" && footer_tail fr'
tm send-keys -t fr g - - - - - r
check "replay at 80x24, playing: the time stays in the header" \
  'wait_until 60 header_has fr " event [0-9]+/[0-9]+  t=[0-9.]+s +PLAYING" && footer_tail fr'
quit_check fr 0 "replay at 80x24: q gives the recorded status (0)"

# ---- at 80x24 the source, the messages in flight and the panes' titles are
# narrower than their text: what is cut ends in a mark
start cu 80 24 "$bin run $lessons/03-collectives/ring_allreduce.lua --step"
wait_for cu PAUSED >/dev/null
tm send-keys -t cu Space Space Space
check "80x24: a source line and an in-flight row too long end in $ell" \
  'wait_for cu "  22 local function exchange$ell" "recv posted  $ell"'
quit_check cu 130 "cut text: q mid-run gives status 130"
start cs 80 24 "$bin run $lessons/04-performance/pipeline.lua --speed 0"
wait_for cs FINISHED >/dev/null
tm send-keys -t cs t
check "80x24, t: the diagram's title too long for it ends in $ell" 'wait_for cs "to scale: 1 row = 5 ms, 0 to 66.235047 m$ell"'
quit_check cs 0 "cut title: q gives status 0"

# ---- enter on a rank that is not at its gate: the hint fits the state (the
# run is paused here: "pause (r)" would be wrong)
start hi 100 30 "$bin run $lessons/02-point-to-point/chain.lua --step"
wait_count hi " ready  " 4 >/dev/null
tm send-keys -t hi s
wait_for hi "    0  blocked    send $to 1" >/dev/null
tm send-keys -t hi Enter
check "enter on a blocked rank of a paused run: step its peer, not pause" \
  'wait_without hi "pause (r)" "rank 0 is blocked: step its peer; enter works once it is ready" PAUSED'
quit_check hi 130 "hint: q mid-run gives status 130"

# ---- Ctrl-C is a quit
start cc 80 24 "$bin run $lessons/02-point-to-point/chain.lua --step"
wait_for cc PAUSED >/dev/null
tm send-keys -t cc C-c
check "Ctrl-C: status 130, terminal restored" 'wait_for cc EXIT=130 STTY=same'

# ---- the summary after q mid-run says the user quit, not that a signal came
start qs 80 24 "$bin run $lessons/02-point-to-point/chain.lua --step"
wait_for qs PAUSED >/dev/null
tm send-keys -t qs q
check "q mid-run: the summary says the user quit, not SIGINT or SIGTERM" \
  'wait_for qs EXIT=130 "quit in the visualizer before the run ended" && ! grep -qF SIGINT "$tmp/screen"'
tm kill-session -t qs
start qt 80 24 "$bin run $lessons/02-point-to-point/chain.lua --step --engine tcp"
wait_for qt PAUSED >/dev/null
tm send-keys -t qt q
check "q mid-run, tcp engine: the summary says the user quit" \
  'wait_for qt EXIT=130 "quit in the visualizer before the run ended" && ! grep -qF SIGINT "$tmp/screen"'
tm kill-session -t qt

# ---- a script error: shown, then the run's status
start er 100 30 "$bin run $scripts/error.lua"
check "script error: FAILED with the message" 'wait_for er FAILED "error.lua:"'
quit_check er 2 "script error: q gives status 2, terminal restored"

# ---- why a run ended, on the screen: --timeout's reason as an alert (as the
# report words it), the rank it stopped at its line
printf '%s\n' '--- world: 2' 'if rank == 0 then local x = 0 for i = 1, 1e12 do x = x + 1 end end' >"$tmp/sleepy.lua"
start ts 100 30 "$bin run $tmp/sleepy.lua --timeout 2 --step-limit 0"
# (the rank's exit comes after the timeout's alert: it unwinds first)
stopped_on_line() { snap ts && grep -qE "0  aborted +line 2( |$)" "$tmp/screen"; }
check "--timeout: the report's reason as an alert, the stopped rank's line on its row" \
  'wait_for ts TIMEOUT "timeout: the run did not finish within 2 s (--timeout)" &&
   wait_until 60 stopped_on_line'
check "--timeout: under the reason, where it stopped each rank, as the summary says it" \
  'wait_for ts "  rank 0 was running at sleepy.lua:2"'
quit_check ts 4 "timeout alert: q gives status 4"

# ---- a failed rank: its line on its row and in the source, its number in the alert
printf '%s\n' '--- world: 3' 'local x = nil' 'if rank == 1 then' '  -- fails on line 6' \
  '  local y = 1' '  x.field = 3' 'end' 'dist.barrier()' >"$tmp/broken.lua"
start fl 100 30 "$bin run $tmp/broken.lua --speed 0"
check "a failed rank: its line on its row and marked in the source, the rank named in the alert" \
  'wait_for fl FAILED "rank 1: broken.lua:6: attempt to index a nil value" "     1   6   x.field = 3" &&
   grep -qE "1  failed +error +line 6( |$)" "$tmp/screen"'
quit_check fl 2 "failed rank: q gives status 2"

# ---- wide characters (CJK) take two columns: the source and output panes
# cut them at their edge, nothing spills into the diagram or the next row
if [ "$loc" = C.UTF-8 ]; then
  jp="日本語テキスト日本語テキスト日本語テキスト日本語テキスト"
  printf '%s\n' '--- world: 2' "-- $jp" "print(\"$jp\")" 'dist.barrier()' >"$tmp/wide.lua"
  start wd 80 24 "$bin run $tmp/wide.lua --step"
  wait_for wd PAUSED >/dev/null
  tm send-keys -t wd Space
  # a wide character left of the divider has spilled out of its pane
  spilled() { grep -E "^[^│]*(日|本|語|テ|キ|ス|ト)" "$tmp/screen"; }
  check "wide characters: the source and the output stay in their panes (80x24)" \
    'wait_for wd "output, rank 0 (1 line)" "│ 日本語テキスト" "   2 -- 日本語" && ! spilled'
  quit_check wd 130 "wide characters: q mid-run gives status 130"
else
  skip "wide characters stay in their panes" "no UTF-8 locale here"
fi

# ---- a rank computing before its first call runs its script: it is shown
# running (as between operations), not idle, on its row and in the diagram
printf '%s\n' '--- world: 4' 'local t = tensor.zeros(4)' \
  'if rank == 3 then local x = 0 for i = 1, 1e12 do x = x + 1 end end' \
  'dist.all_reduce(t)' >"$tmp/busy.lua"
for size in "80 24" "200 60"; do
  start bz ${size% *} ${size#* } "$bin run $tmp/busy.lua --step-limit 0"
  check "a rank computing before its first call is running, not idle (${size/ /x})" \
    'wait_for bz RUNNING "    2  blocked" && wait_count bz "    3  running" 1 && ! grep -qF " idle" "$tmp/screen"'
  quit_check bz 130 "a rank computing before its first call: q gives status 130 (${size/ /x})"
done

# ---- the output pane while the run goes on: p gives it the screen; scrolled
# back it stays put as lines come (and says how many are below), at its end it
# follows them; both sizes, and a resize between them
printf '%s\n' '--- world: 2' 'local t = tensor.zeros(4)' \
  'if rank == 0 then for i = 1, 100 do print("early " .. i) end end' \
  'if rank == 0 then dist.send(t, 1) else dist.recv(t, 0) end' \
  'if rank == 0 then for i = 101, 150 do print("late " .. i) end end' \
  'if rank == 0 then dist.send(t, 1) else dist.recv(t, 0) end' \
  'if rank == 0 then for i = 151, 170 do print("last " .. i) end end' >"$tmp/chatty.lua"
start op 80 24 "$bin run $tmp/chatty.lua --step --send-mode eager"
wait_for op PAUSED "output, rank 0 (100 lines)" >/dev/null
tm send-keys -t op p
check "p at 80x24: the output on the whole screen, from its newest line" \
  'wait_for op "output, rank 0 (100 lines), rows 80-100 of 100 " "early 100" "p or esc: back"'
tm send-keys -t op Tab
check "tab under the output: the next rank's (none yet)" 'wait_for op "output, rank 1 (0 lines) ─"'
tm send-keys -t op BTab
wait_for op "output, rank 0 (100 lines), rows 80-100 of 100 " >/dev/null
tm send-keys -t op PPage
check "PgUp: the output scrolls back while the run is live, saying what is below" \
  'wait_without op "early 100" "rows 60-80 of 100: 20 more below, End follows" " early 60" PAUSED'
tm send-keys -t op s
check "s under the output: rank 0 prints 50 more lines, the view stays where it was" \
  'wait_for op "(150 lines), rows 60-80 of 150: 70 more below" " early 60" " early 80" &&
   ! grep -qF "late" "$tmp/screen"'
tm resize-window -t op -x 200 -y 60
check "200x60: the same top row, the rest below it" \
  'wait_for op "rows 60-116 of 150: 34 more below" " early 60" " late 116"'
tm send-keys -t op End
check "End: the newest lines" 'wait_without op "more below" "rows 94-150 of 150" " late 150"'
tm send-keys -t op s
check "at the end it follows: rank 0's next lines come into view" \
  'wait_without op "more below" "(170 lines), rows 114-170 of 170" " last 170"'
tm resize-window -t op -x 80 -y 24
tm send-keys -t op p
check "p again: back to the run, the pane saying which key scrolls it where it has room" \
  'wait_for op "output, rank 0 (170 lines)" "last 170" "space-time" PAUSED'
tm resize-window -t op -x 200 -y 60
check "200x60: the pane names its key" 'wait_for op "output, rank 0 (170 lines: p scrolls)"'
quit_check op 130 "the output scrolled mid-run: q gives status 130"
# the run's keys under the output say what they did, as they do in the run
start ob 80 24 "$bin run $tmp/chatty.lua --step"
wait_for ob PAUSED "output, rank 0 (100 lines)" >/dev/null
tm send-keys -t ob s
wait_for ob "    0  blocked    send" >/dev/null
tm send-keys -t ob p s
check "s on a blocked rank under the output: the footer says why it did not move" \
  'wait_for ob "rank 0 is blocked: it moves when its peer does" "(100 lines), rows 80-100 of 100"'
quit_check ob 130 "the output over a blocked rank: q gives status 130"
# past the 2000 lines kept the oldest go as new ones come: scrolled back, the
# view stays on its text all the same
printf '%s\n' '--- world: 2' 'local t = tensor.zeros(4)' \
  'if rank == 0 then for i = 1, 2100 do print("a " .. i) end end' \
  'if rank == 0 then dist.send(t, 1) else dist.recv(t, 0) end' \
  'if rank == 0 then for i = 1, 500 do print("b " .. i) end end' \
  'if rank == 0 then dist.send(t, 1) else dist.recv(t, 0) end' >"$tmp/chattier.lua"
start oq 80 24 "$bin run $tmp/chattier.lua --step --send-mode eager"
wait_for oq PAUSED "output, rank 0 (2100 lines)" >/dev/null
tm send-keys -t oq p PPage
wait_for oq "rows 1961-1981 of 2001" " a 2060" >/dev/null
tm send-keys -t oq s
check "past the lines kept, scrolled back: the view stays on its text as the oldest go" \
  'wait_for oq "(2600 lines), rows 1461-1481 of 2001: 520 more below" " a 2060" " a 2080"'
tm send-keys -t oq Home
check "Home: the lines not kept are counted" 'wait_for oq "(the first 600 lines printed are not kept: the last 2000 are)" " a 601"'
quit_check oq 130 "the output past the lines kept: q gives status 130"

# ---- a collective deadlock: the alert says first which rank never called
# it, and the fix, where at 80x24 its few rows would otherwise hold only the
# collective's internal requests (two lines a rank); those follow, and a
# shows them. Both sizes, across a resize.
why_first() {
  snap "$1" && [ "$(grep -nF "why: ranks 0, 1, 2 entered all_reduce" "$tmp/screen" | cut -d: -f1)" -lt \
    "$(grep -nF "deadlock: no rank can make progress" "$tmp/screen" | cut -d: -f1)" ]
}
start mm 80 24 "$bin run $lessons/03-collectives/mismatch.lua --speed 0"
check "collective deadlock at 80x24: the rank that never called it and the fix in the alert" \
  'wait_for mm DEADLOCKED "rank 3 did not call it: it has finished" "fix: every rank of a group" &&
   ! grep -qF "on its internal" "$tmp/screen"'
tm resize-window -t mm -x 200 -y 60
check "collective deadlock at 200x60: why first, then where each rank is stuck" \
  'wait_for mm "rank 3 did not call it: it has finished" "rank 2 is blocked in all_reduce at mismatch.lua:16, on its internal isend" &&
   why_first mm'
tm resize-window -t mm -x 80 -y 24
tm send-keys -t mm a End
check "a at 80x24: the internal requests below the why" \
  'wait_for mm "alerts, lines" "rank 2 is blocked in all_reduce at mismatch.lua:16" "rank 3 has finished"'
quit_check mm 3 "collective deadlock: q gives status 3"

# ---- collectives: a band per call across the ranks in it
start co3 100 30 "$bin run $lessons/03-collectives/all_reduce.lua --speed 0"
check "all_reduce at full speed: bands, the internal messages counted" \
  'wait_for co3 FINISHED "all_reduce done" "in collectives" && wait_for co3 "all_reduce (ring) x24"'
quit_check co3 0 "all_reduce: q after the end gives status 0"

# Each band counts exactly the messages of its own call (the trace's numbers),
# on both engines, however the ranks' events interleave.
bands() { grep -oE "[a-z_)]+ x[0-9]+" "$tmp/screen" | sed 's/.* x//' | tr '\n' ' '; }
# The header can say FINISHED on a screen whose panes are still being drawn
# (a slow build): wait for a finished screen that holds these bands.
bands_are() { on_screen cx FINISHED && [ "$(bands)" = "$1" ]; }
for eng in thread tcp; do
  for case in "all_reduce:8 8 8 8 24 8 6 " "gather:3 " "broadcast:3 " "barrier:8 12 " \
              "all_gather:12 12 "; do
    name=${case%%:*}
    start cx 120 50 "$bin run $lessons/03-collectives/$name.lua --speed 0 --engine $eng"
    check "$name ($eng): each band counts its own call's messages: ${case#*:}" \
      'wait_until 60 bands_are "${case#*:}"'
    tm kill-session -t cx
  done
done

# ---- o opens the latest band: the ring all-reduce's 24 messages as arrows
# with their phase (3 reduce-scatter steps, then 3 all-gather steps, 4 ranks;
# RS 1 for reduce-scatter step 1 where the whole phase does not fit)
printf '%s\n' '--- world: 4' 'local t = tensor.full(4, rank)' \
  'dist.all_reduce(t, ReduceOp.SUM, {algo = "ring"})' 'print(tostring(t))' >"$tmp/ring_ar.lua"
start ob 100 30 "$bin run $tmp/ring_ar.lua --speed 0"
wait_for ob FINISHED "all_reduce (ring) x24" >/dev/null
tm send-keys -t ob o
check "o: the ring all-reduce band opened into its messages and phases" \
  'wait_for ob "24 messages of this call" "reduce-scatter step 1" "reduce-scatter step 3" "all-gather step 1" &&
   [ "$(grep -cE "reduce-scatter step|RS [0-9]" "$tmp/screen")" = 12 ]'
tm send-keys -t ob o
check "o again: the diagram is back" 'wait_without ob "messages of this call" "all_reduce done"'
quit_check ob 0 "band opened: q gives status 0"

# ---- at 80x24 the diagram is narrow: notes on its last row are not broken up
# by the lifelines drawn after them, a phase too long to fit is shortened
# (RS 1), and no label is written over an arrow's ends
start ob8 80 24 "$bin run $lessons/03-collectives/ring_allreduce.lua --speed 0"
wait_for ob8 FINISHED "all_reduce done" >/dev/null
tm send-keys -t ob8 t
check "t without --net at 80x24: the note whole up to its cut mark" \
  'wait_for ob8 "no modelled time: run with --net to draw $ell"'
tm send-keys -t ob8 t o
check "o at 80x24: phases shortened where they do not fit, never over an arrow's ends" \
  'wait_for ob8 "messages of this call" "4 B RS 1" "4 B reduce-scatter step 1" &&
   ! grep -qE "step [0-9]+(●|▶|o|>)" "$tmp/screen"'
quit_check ob8 0 "band opened at 80x24: q gives status 0"

# ---- t, to scale: messages that arrive in the same row do not hide each
# other (the ring's 1 -> 2 arrives with 3 -> 0: it goes to the next free row)
if [ "$loc" = C.UTF-8 ]; then dot="●" line="───"; else dot="o" line="---"; fi
start sc 100 50 "$bin run $lessons/02-point-to-point/ring.lua --net alpha=10us,bandwidth=1GB/s --speed 0"
wait_for sc FINISHED >/dev/null
tm send-keys -t sc t
# rank 1's column starts at 15, rank 0's at 5: an arrow from rank 1 alone
from1() { snap sc && [ "$(grep -cE "^ {5}[^ ]+ {9}$dot${line}8 B$line" "$tmp/screen")" = 3 ]; }
check "t: every message of the ring drawn to scale, rank 1's three sends to rank 2 too" \
  'wait_for sc "to scale: 1 row = " && wait_until 60 from1 &&
   [ "$(grep -oF -- "${line}8 B$line" "$tmp/screen" | wc -l)" = 12 ]'
quit_check sc 0 "to scale: q gives status 0"

# ---- after the screen closes: every rank's output and every warning, as
# --no-tui prints them, then the summary
start pa 80 24 "$bin run $lessons/02-point-to-point/isend_reuse.lua --speed 0"
wait_for pa FINISHED >/dev/null
tm send-keys -t pa q
check "q after the end: the output and the warning printed in full, then the summary" \
  'wait_for pa EXIT=0 "[rank 0] sent 2 rows through one buffer" "[rank 1] received 2 rows" \
     "[rank 0] warning: isend_reuse.lua:18: writes to a tensor" "Call wait() on the isend" \
     "warnings: 1 pitfall (see above)" &&
   [ "$(grep -n "warning: isend" "$tmp/screen" | cut -d: -f1)" -lt "$(grep -n "^--- isend_reuse" "$tmp/screen" | cut -d: -f1)" ]'
tm kill-session -t pa

# ---- an eager run that ends ok is rechecked with rendezvous sends: the line
# is on the visualizer's end screen, for both outcomes, and once in the summary
printf '%s\n' '--- world: 2' 'local t = tensor.full(4, rank)' 'local r = tensor.zeros(4)' \
  'dist.send(t, 1 - rank)' 'dist.recv(r, 1 - rank)' >"$tmp/bothsend.lua"
start rk 100 30 "$bin run $tmp/bothsend.lua --send-mode eager --speed 0 --trace $tmp/rk.trace"
check "eager, ok only because sends are buffered: the recheck's line on the end screen" \
  'wait_for rk FINISHED "with rendezvous sends: deadlock at bothsend.lua:4" "the run has ended (finished)"'
tm send-keys -t rk q
check "the recheck's line once in the summary after the screen closes" \
  'wait_for rk EXIT=0 "verdict: ok" && [ "$(count "with rendezvous sends: deadlock at")" = 1 ]'
tm kill-session -t rk
start rk2 80 24 "$bin run $lessons/02-point-to-point/chain.lua --send-mode eager --speed 0"
check "eager, and fine with rendezvous sends (80x24): \"with rendezvous sends: ok\" on the end screen" \
  'wait_for rk2 FINISHED "with rendezvous sends: ok"'
quit_check rk2 0 "recheck ok: q gives status 0"
start rkt 100 30 "$bin run $tmp/bothsend.lua --engine tcp --send-mode eager --speed 0"
check "tcp: the recheck's line on the end screen too" \
  'wait_for rkt FINISHED "with rendezvous sends: deadlock at bothsend.lua:4" "the run has ended (finished)"'
quit_check rkt 0 "tcp recheck: q gives status 0"
start rk3 80 24 "$bin run $tmp/bothsend.lua --send-mode eager --speed 0 --no-recheck"
check "--no-recheck: no recheck line on the end screen" \
  'wait_for rk3 FINISHED "the run has ended" && ! grep -qF "with rendezvous sends" "$tmp/screen"'
quit_check rk3 0 "--no-recheck: q gives status 0"
start rk4 100 30 "$bin replay $tmp/rk.trace"
wait_for rk4 "event 1/" >/dev/null
tm send-keys -t rk4 G
check "replay at the end: the recheck's line, not as a warning" \
  'wait_without rk4 "warning: with rendezvous sends:" "with rendezvous sends: deadlock at bothsend.lua:4"'
quit_check rk4 0 "replay of a rechecked run: q gives status 0"

# ---- --timeout applies in the visualizer only when given
start to 80 24 "$bin run $lessons/02-point-to-point/chain.lua --step --timeout 1"
check "--timeout 1 --step: the paused run times out and says so" 'wait_for to TIMEOUT'
quit_check to 4 "--timeout: q gives status 4"

# ---- NO_COLOR: attributes, no colours
start nc 100 30 "NO_COLOR=1 $bin run $lessons/02-point-to-point/deadlock.lua"
wait_for nc DEADLOCKED >/dev/null
tm capture-pane -e -p -t nc >"$tmp/screen"
check "NO_COLOR: no colour sequences" '! grep -qE $'\''\e\\[[0-9;]*3[1-6](;[0-9;]*)?m'\'' "$tmp/screen"'
tm kill-session -t nc
start co 100 30 "$bin run $lessons/02-point-to-point/deadlock.lua"
wait_for co DEADLOCKED >/dev/null
tm capture-pane -e -p -t co >"$tmp/screen"
check "colours without NO_COLOR" 'grep -qE $'\''\e\\[[0-9;]*3[1-6](;[0-9;]*)?m'\'' "$tmp/screen"'
tm kill-session -t co

# ---- 256 ranks: the table scrolls to the selection
start many 80 24 "$bin run $lessons/02-point-to-point/ring.lua -n 256 --step"
wait_for many PAUSED "ranks 0-4 of 256" >/dev/null
tm send-keys -t many BTab
check "256 ranks: the table scrolls to the selected rank" 'wait_for many "ranks 251-255 of 256" "  255  ready"'
# a taller window fills the table up to the last rank, no blank rows past it
tm resize-window -t many -x 200 -y 60
check "256 ranks, resized to 200x60: the table ends at the last rank" \
  'wait_for many "ranks 242-255 of 256" "  242  ready" "  255  ready"'
tm resize-window -t many -x 80 -y 24
quit_check many 130 "256 ranks: q leaves cleanly"

# ---- the marks beside the source: how many ranks are on a line, always the
# true count however many there are
start m256 100 30 "$bin run $lessons/02-point-to-point/deadlock.lua -n 256 --speed 0"
check "256 ranks on one line: the mark counts them all (0 and 255 more)" \
  'wait_for m256 " DEADLOCKED" " 0+255  19 dist.send(outgoing, right)"'
quit_check m256 3 "deadlock -n 256: q gives status 3"

# ---- --no-tui on a terminal: the plain report
start pl 100 30 "$bin run $lessons/02-point-to-point/chain.lua --no-tui"
check "--no-tui on a terminal prints the plain report" 'wait_for pl "[rank 3] end:" "verdict: ok" EXIT=0'

# ---- the tcp engine: the same view of rank processes, stepped through GATE/GO
# (a copy of the script, so that its processes can be told from any other run's)
cp "$lessons/02-point-to-point/chain.lua" "$tmp/tcpchain.lua"
cp "$lessons/02-point-to-point/deadlock.lua" "$tmp/tcpdeadlock.lua"
procs() { pgrep -f -- "$tmp/tcp[a-z]*\.lua --engine tcp --worker" | wc -l; }
start tc 100 30 "$bin run $tmp/tcpchain.lua --engine tcp --step"
check "tcp --step: the rank processes wait at their gates, paused" \
  'wait_for tc "tcpchain.lua  tcp" PAUSED "ready      send $to 1" && wait_count tc " ready      recv" 3'
tm send-keys -t tc Space
check "tcp step 1: one arrow 0->1, rank 1 ready to send, 2 and 3 blocked" 'wait_for tc "16 B$arrow" "    0  done" "    1  ready      send $to 2" \
     "    2  blocked    recv" "    3  blocked    recv" && wait_count tc "16 B$arrow" 1'
tm send-keys -t tc Tab Enter
check "tcp enter: the tensor of rank 1's next send, from its process" \
  'wait_for tc "rank 1, line 26: the tensor of its send" "tensor([11., 12., 13., 14.])"'
tm send-keys -t tc Escape s
check "tcp s: only rank 1 moved" 'wait_for tc "    1  done" "    2  ready      send $to 3" "    3  blocked    recv" &&
   wait_count tc "16 B$arrow" 2'
tm send-keys -t tc r
check "tcp r: runs to the end" 'wait_for tc FINISHED "    3  done" "space-time: 3 msgs"'
quit_check tc 0 "tcp: q after the end gives status 0, terminal restored"
check "tcp: no rank process is left" '[ "$(procs)" = 0 ]'

start td 100 30 "$bin run $tmp/tcpdeadlock.lua --engine tcp"
check "tcp deadlock: alert with its cycle, both ranks blocked" \
  'wait_for td DEADLOCKED "wait-for cycle: rank 0 $to rank 1 $to rank 0" && wait_count td " blocked    send $to" 2'
quit_check td 3 "tcp deadlock: q gives status 3"

start tk 100 30 "$bin run $tmp/tcpchain.lua --engine tcp --step"
wait_count tk " ready  " 4 >/dev/null
tm send-keys -t tk Space
wait_for tk "    2  blocked    recv" >/dev/null
pkill -KILL -f -- "$tmp/tcpchain.lua --engine tcp --worker --rank 2 "
check "tcp: a rank killed at its gate: the run ends, the death is named, on its row too" \
  'wait_for tk "RANK DIED" "rank 2 died (signal 9)" "    2  failed     died (signal 9)"'
quit_check tk 5 "tcp rank death: q gives status 5, terminal restored"
check "tcp rank death: no rank process is left" '[ "$(procs)" = 0 ]'

# rank 0 started by hand hosts the visualizer; its footer tells the others how to join
start mh 100 30 "$bin run $tmp/tcpchain.lua --engine tcp --rank 0 --world 4 --master 127.0.0.1:0"
check "tcp --rank 0: the footer shows how the other ranks join, every rank idle until they have" \
  'wait_for mh "join: --token " && wait_count mh "  idle" 4'
join=$(grep -o -- "--token [0-9a-f]* --master [0-9.:]*" "$tmp/screen")
# a stranger's garbage: refused and logged, but not over the screen
exec 3<>"/dev/tcp/127.0.0.1/${join##*:}" && printf 'GET / HTTP/1.0\r\n\r\n' >&3 && exec 3>&-
for r in 1 2 3; do
  "$bin" run "$tmp/tcpchain.lua" --engine tcp --rank $r --world 4 $join >"$tmp/rank$r.out" 2>&1 &
done
wait
check "tcp: ranks started by hand join; the visualizer shows the whole run" \
  'wait_for mh FINISHED "    3  done" "space-time: 3 msgs" && ! grep -qF "refused" "$tmp/screen"'
check "tcp: after FINISHED the join footer is gone" 'wait_without mh "join: --token" "the run has ended (finished)"'
quit_check mh 0 "tcp --rank 0: q gives status 0"
check "tcp: what the controller logged meanwhile is printed after the screen closes" \
  'grep -qF "refused a connection from 127.0.0.1" "$tmp/screen" && grep -qF "verdict: ok" "$tmp/screen"'

start tq 100 30 "$bin run $tmp/tcpchain.lua --engine tcp --step"
wait_count tq " ready  " 4 >/dev/null
tm send-keys -t tq C-c
check "tcp Ctrl-C mid-run: status 130, terminal restored" 'wait_for tq EXIT=130 STTY=same'
tm kill-session -t tq
check "tcp quit mid-run: no rank process is left" '[ "$(procs)" = 0 ]'

# ---- replay: the same view, forward by folding, back by folding again
"$bin" run "$lessons/02-point-to-point/deadlock.lua" --no-tui --trace "$tmp/dl.trace" >/dev/null 2>&1
start rp 100 30 "cd $lessons/02-point-to-point && $bin replay $tmp/dl.trace"
check "replay: opens at the start of the trace, source found" \
  'wait_for rp " REPLAY" "event 1/" "step 0" "    0  idle" "--- title: Deadlock"'
tm send-keys -t rp Space
check "replay: space folds one operation: one rank has posted its send, the other runs its code (as live)" \
  'wait_for rp "step 1" "send $to " "  running" && ! grep -qF "  idle" "$tmp/screen"'
tm send-keys -t rp G
check "replay: G goes to the end: the deadlock with its cycle, both ranks blocked" \
  'wait_for rp DEADLOCKED "wait-for cycle: rank 0 $to rank 1 $to rank 0" && wait_count rp " blocked    send $to" 2'
tm send-keys -t rp b
check "replay: b goes back before the last send: no deadlock yet" \
  'wait_without rp "wait-for cycle" " REPLAY" "step 1"'
tm send-keys -t rp '?'
check "replay: ? lists the replay keys, not the live ones" \
  'wait_without rp "step only the selected rank" "forward to the next operation" "G / g    the end / the start"'
tm send-keys -t rp Escape G
check "replay: after G the footer shows the replay keys" 'wait_without rp "s step rank" "b back" "G g end/start"'
quit_check rp 3 "replay: q gives the recorded run's status (3)"

# ---- the chapter browser: text beside scripts, a script run paused, back again
start ln 100 30 "$bin learn 2 --lessons $lessons"
# The scripts are listed in the README's teaching order: chain.lua first,
# deadlock.lua 13th (12 downs). A title cut at the list's edge ends in a mark.
if [ "$ell" = "..." ]; then chain_title="Chain: pass a tensor down..."; else chain_title="Chain: pass a tensor down t$ell"; fi
check "learn 2: the chapter's text beside its scripts and their titles" 'wait_for ln "commsim learn  02-point-to-point" "Point-to-point communication" "chain.lua" \
     "$chain_title" "chain_ring.lua" "The calls"'
tm send-keys -t ln NPage
check "learn: PgDn scrolls a page of the text (keeping one line)" 'wait_for ln "lines 28-55/"'
tm send-keys -t ln Space
check "learn: space scrolls a page too" 'wait_for ln "lines 55-82/"'
tm send-keys -t ln Home
tm send-keys -t ln Down Down Down Down Down Down Down Down Down Down Down Down
check "learn: the list scrolls to the selected script" 'wait_for ln "deadlock.lua" "Deadlock: both ranks send"'
tm send-keys -t ln Enter
check "learn: enter runs the selected script in the visualizer, paused at its start" 'wait_for ln "deadlock.lua  thread" PAUSED && wait_count ln " ready      send" 2'
tm send-keys -t ln Space
wait_for ln DEADLOCKED >/dev/null
tm send-keys -t ln q
check "learn: q returns to the chapter with the run's outcome" 'wait_for ln "deadlock.lua ended: deadlock (status 3)" "The calls"'
quit_check ln 0 "learn: q quits with status 0, terminal restored"
start lc 100 30 "$bin learn 2 --lessons $lessons"
wait_for lc "commsim learn  02-point-to-point" >/dev/null
tm send-keys -t lc C-c
check "learn: Ctrl-C quits with status 130 (an interrupt), terminal restored" 'wait_for lc EXIT=130 STTY=same'
tm kill-session -t lc
# a lesson the student broke (a syntax error): the footer says where, as
# commsim run does; the visualizer never opened to show it
mkdir -p "$tmp/broken/01-first-program"
cp "$lessons/01-first-program/README.md" "$tmp/broken/01-first-program/"
sed 's/^print(string.format(/print(string.format((/' "$lessons/01-first-program/hello.lua" \
  >"$tmp/broken/01-first-program/hello.lua"
start lb 100 30 "$bin learn 1 --lessons $tmp/broken"
wait_for lb "commsim learn  01-first-program" >/dev/null
tm send-keys -t lb Enter
check "learn: a lesson with a syntax error says its file:line in the footer" \
  'wait_for lb "hello.lua:12: '"')'"' expected" "Your first distributed program"'
quit_check lb 0 "learn after a lesson's syntax error: q quits with status 0"
# learn at 80 columns: the text's position is shown whole, three-digit
# numbers and all
start lw 80 24 "$bin learn 2 --lessons $lessons"
wait_for lw "commsim learn  02-point-to-point" >/dev/null
tm send-keys -t lw NPage NPage NPage NPage NPage NPage NPage NPage
position_whole() { snap lw && head -1 "$tmp/screen" | grep -qE " lines [0-9]{3}-[0-9]{3}/[0-9]{3}( |$)"; }
check "learn at 80 columns: 'lines X-Y/N' whole past line 100" 'wait_until 60 position_whole'
quit_check lw 0 "learn at 80 columns: q quits with status 0"
# ---- learn's help at 80x24: a box with its border, clear inside (the text
# behind does not show through)
start lh 80 24 "$bin learn --lessons $lessons"
wait_for lh "commsim learn" >/dev/null
tm send-keys -t lh '?'
boxed() { snap lh && grep -qE "│ c +copy the exercise's starter to your file +│" "$tmp/screen" &&
  grep -qE "│ q +quit +│" "$tmp/screen" && grep -qE "│─+│" "$tmp/screen"; }
check "learn ? at 80x24: the keys in a bordered box that clears what it covers" \
  'wait_for lh "─ keys ─" "this help (any key closes it)" && wait_until 60 boxed'
tm send-keys -t lh x
check "learn: any key closes the help" 'wait_without lh "─ keys ─" "commsim learn"'
quit_check lh 0 "learn help: q quits with status 0"
# ---- the chapter's exercises: the statement, the starter copied, the
# student's file graded, a failing case opened where it failed (80x24, then
# 200x60)
work=$tmp/work
mkdir -p "$work"
grade_dir=$(cd "$top_srcdir/tests/grade/ring" && pwd)
# its failing cases' traces go to a folder in $TMPDIR: one of the test's
# own, where no other learn run (another suite's) makes or removes any
mkdir -p "$tmp/lt"
learn_before=$(ls -d "$tmp"/lt/commsim-learn.* 2>/dev/null | sort)
start lx 80 24 "cd $work && TMPDIR=$tmp/lt $bin learn 2 --lessons $lessons"
wait_for lx "commsim learn  02-point-to-point" >/dev/null
tm send-keys -t lx e
check "learn e (80x24): the exercises listed, the first one's statement and where its file goes" \
  'wait_for lx "exercise bidirectional" "exercises (g grades)" "Exercise: bidirectional" "Your file will be ./bidirectional.lua"'
tm send-keys -t lx g
check "learn g without the file: says c copies the starter" 'wait_for lx "no ./bidirectional.lua yet: c copies the starter there"'
tm send-keys -t lx c
check "learn c: the starter copied to the student's file" \
  'wait_for lx "copied the starter to ./bidirectional.lua" &&
   cmp -s "$work/bidirectional.lua" "$lessons/02-point-to-point/exercises/bidirectional/starter.lua"'
echo "-- mine" >"$work/bidirectional.lua"
tm send-keys -t lx c
check "learn c again: a student's file is never overwritten" \
  'wait_for lx "./bidirectional.lua exists: edit it" && [ "$(cat "$work/bidirectional.lua")" = "-- mine" ]'
cp "$grade_dir/eager_only.lua" "$work/ring.lua"
tm send-keys -t lx Down Down Down Down
check "learn: down to the ring exercise" 'wait_for lx "exercise ring" "Exercise: ring" "Your file: ./ring.lua"'
tm send-keys -t lx g
check "learn g: the file graded as commsim grade grades it, the text result shown" \
  'wait_for lx "ring.lua: 0/5  v shows where '\''two ranks'\'' failed" "✗ 0/1  two ranks" "✗ 0/2  three to five ranks" "works with eager"'
# the traces of this run's grading: in the one folder that was not there before
learn_traces() { comm -13 <(echo "$learn_before") <(ls -d "$tmp"/lt/commsim-learn.* 2>/dev/null | sort) | head -1; }
check "learn g: the failing cases' traces are named for the student's file, as commsim grade names them" \
  'ls "$(learn_traces)" | grep -qx "ring-two_ranks-n2-rendezvous.jsonl" && ! ls "$(learn_traces)" | grep -qF "(null)"'
tm send-keys -t lx v
check "learn v: the first failing case opens in the visualizer at its failure, with the student's source" \
  'wait_for lx DEADLOCKED "world 2" "where it failed" "8     dist.send(outgoing," && wait_count lx " blocked    send $to" 2'
tm send-keys -t lx q
check "learn: q comes back to the grading" 'wait_for lx "back from '\''two ranks'\''" "✗ 0/1  two ranks"'
tm send-keys -t lx n v
check "learn n, v: the next failing case (world 3)" 'wait_for lx DEADLOCKED "world 3" && wait_count lx " blocked    send $to" 3'
tm send-keys -t lx q
# (the screen before v, seen again as the visualizer closes, may say "back
# from" too: wait for this case's)
wait_for lx "back from 'three to five ranks'" >/dev/null
cp "$grade_dir/all_reduce.lua" "$work/ring.lua"
tm send-keys -t lx g
wait_for lx "rank 0 calls dist.all_reduce on line 3" >/dev/null
tm send-keys -t lx v
check "learn v: a forbidden call opens at its rank and line, not at the end" \
  'wait_without lx "END OF TRACE" "rank 0 at line 3, where it failed" "source, rank 0" "3 dist.all_reduce(total)"'
tm send-keys -t lx q
wait_for lx "back from 'two ranks'" "calls dist.all_reduce" >/dev/null
cp "$grade_dir/reference.lua" "$work/ring.lua"
tm resize-window -t lx -x 200 -y 60
tm send-keys -t lx g
check "learn g again (200x60): full marks, the whole result in view" \
  'wait_for lx "ring.lua: 5/5" "✓ 1/1  two ranks" "✓ 1/1  eight ranks (hidden)" "total: 5/5" "exercises (g grades)" "pipeline_microbatches"'
tm send-keys -t lx v
check "learn v with nothing failing: says so" 'wait_for lx "no failing case to show"'
tm send-keys -t lx Enter
check "learn enter: the statement again" 'wait_without lx "total: 5/5" "Exercise: ring" "Your file: ./ring.lua"'
quit_check lx 0 "learn with exercises: q quits with status 0"
check "learn: the failing cases' traces are removed when it quits" \
  '[ "$(ls -d "$tmp"/lt/commsim-learn.* 2>/dev/null | sort)" = "$learn_before" ]'
plain learn 2 --no-tui --lessons "$lessons" --work "$work"
check "learn 2 --no-tui: the chapter's exercises listed" \
  'grep -qF "exercises (commsim grade $lessons/02-point-to-point/exercises/NAME $work/NAME.lua grades yours):" "$tmp/screen" && grep -qE "^  ring +.*exercises/ring$" "$tmp/screen"'
# that command, as printed, grades a file against the lessons given (grade
# NAME alone would look in the default lessons only)
cp "$lessons/02-point-to-point/exercises/ring/starter.lua" "$tmp/ring_starter.lua"
check "learn 2 --no-tui --lessons DIR: the grade command it prints works (a starter fails, status 6)" \
  '"$bin" grade "$lessons/02-point-to-point/exercises/ring" "$tmp/ring_starter.lua" >/dev/null 2>&1; [ $? = 6 ]'
check "learn 2 --no-tui --lessons DIR: the scripts' command names the folder found, which commsim run finds too" \
  'grep -qF "scripts (commsim run $lessons/02-point-to-point/FILE runs one):" "$tmp/screen"'

# ---- a failing case replayed from learn is the student's own: their file
# with their line numbers (not the grader's wrapper), their output only (not
# the grader's result lines); the header whole at 80 columns
work2=$tmp/work2
mkdir -p "$work2"
start lo 80 24 "$bin learn 2 --lessons $lessons --work $work2"
wait_for lo "commsim learn  02-point-to-point" >/dev/null
tm send-keys -t lo e c
wait_for lo "copied the starter to" >/dev/null
tm send-keys -t lo g
wait_for lo "v shows where 'one pair' failed" >/dev/null
tm send-keys -t lo v
event_whole() { head -1 "$tmp/screen" | grep -qE " event ([0-9]+)/\1 .* END OF TRACE"; }
check "learn v (80x24): the student's file from its line 1, no grader's line in the output, the header whole" \
  'wait_for lo "END OF TRACE" "   1 -- Exercise: bidirectio" "output, rank 0 (0 lines)" &&
   ! grep -qF "__cs_" "$tmp/screen" && ! grep -qF "cs-result" "$tmp/screen" && event_whole'
tm send-keys -t lo Tab
check "learn v: rank 1's output has no grader's line either" \
  'wait_for lo "output, rank 1 (0 lines)" && ! grep -qF "cs-result" "$tmp/screen"'
tm send-keys -t lo q
wait_for lo "back from 'one pair'" >/dev/null
quit_check lo 0 "learn after a replay of the student's case: q quits with status 0"

# a --work folder that does not exist: c says why it cannot copy
start lm 200 30 "$bin learn 2 --lessons $lessons --work $tmp/nowhere"
wait_for lm "commsim learn  02-point-to-point" >/dev/null
tm send-keys -t lm e c
check "learn c into a missing --work folder: names the file and the reason" \
  'wait_for lm "cannot write $tmp/nowhere/bidirectional.lua: No such file or directory"'
quit_check lm 0 "learn after a failed copy: q quits with status 0"

# ---- replay from another directory: the source comes from the trace
mkdir -p "$tmp/elsewhere"
cp "$lessons/02-point-to-point/chain.lua" "$tmp/elsewhere/mychain.lua"
"$bin" run "$tmp/elsewhere/mychain.lua" --no-tui --trace "$tmp/mychain.trace" >/dev/null 2>&1
rm -r "$tmp/elsewhere"
start rs 100 30 "cd / && $bin replay $tmp/mychain.trace --end"
check "replay from another directory, the script gone: the source recorded in the trace, --end at the end" \
  'wait_for rs "mychain.lua" "26     dist.send(t, rank + 1)" "END OF TRACE" "space-time: 3 msgs"'
quit_check rs 0 "replay --end: q gives the recorded status"
head -3 "$tmp/mychain.trace" >"$tmp/short.trace"
start rh 100 30 "$bin replay $tmp/short.trace"
check "replay of a trace that ends before the run did: opens" 'wait_for rh " REPLAY"'
quit_check rh 1 "replay of a trace that ends before the run did: q gives status 1, as the plain replay"
start ra 100 30 "$bin replay $tmp/dl.trace --at 1:19"
check "replay --at RANK:LINE: opens at that rank's first event on the line, the rank selected" \
  'wait_for ra "rank 1 at line 19, where it failed" "source, rank 1" "1  19 dist.send(outgoing, right)" " REPLAY"'
quit_check ra 3 "replay --at: q gives the recorded status"
start rb 100 30 "$bin replay $tmp/dl.trace --at 3"
check "replay --at N: opens after event N" 'wait_for rb "event 3/" "event 3: ] [ one event"'
quit_check rb 3 "replay --at N: q gives the recorded status"

plain run "$lessons/02-point-to-point/chain.lua" --tui </dev/null
check "--tui without a terminal: status 1, says why" '[ $status = 1 ] && grep -qF "needs a terminal" "$tmp/screen"'
plain run "$lessons/02-point-to-point/chain.lua" --tui --engine tcp --rank 1 --world 2
check "--tui in a hand-started rank process: a usage error (1) that says where it runs" \
  '[ $status = 1 ] && grep -qF "runs on rank 0'"'"'s side" "$tmp/screen"'
# ---- SIGTERM from outside (a kill, a job's time limit) mid-run: the
# summary says a signal came, not that the user quit in the visualizer
for e in thread tcp; do
  start st 80 24 "$bin run $lessons/02-point-to-point/chain.lua --step --engine $e"
  wait_for st PAUSED >/dev/null
  st_sh=$(tm display-message -p -t st '#{pane_pid}')
  st_pid=$(ps -o pid= --ppid "$st_sh" | tr -d ' ')
  [ -n "$st_pid" ] && kill -TERM "$st_pid"
  check "$e: SIGTERM mid-run: status 130, the summary says interrupted, terminal restored" \
    'wait_for st EXIT=130 STTY=same "interrupted (SIGINT, SIGTERM or SIGHUP)" && ! grep -qF "quit in the visualizer" "$tmp/screen"'
  tm kill-session -t st
done
# the chapter browser and the replay: interrupted too (ncurses' handler ended
# them with status 1), also the browser with a lesson open in it; Ctrl-C
# leaves a replay with 130 as well (q gives the recorded run's status)
"$bin" run "$lessons/02-point-to-point/deadlock.lua" --no-tui --trace "$tmp/st.trace" >/dev/null 2>&1
for what in "learn 2 --lessons $lessons|commsim learn  02-point-to-point|" \
            "learn 1 --lessons $lessons|commsim learn  01-first-program|Enter" \
            "replay $tmp/st.trace|REPLAY|"; do
  IFS='|' read -r args ready keys <<<"$what"
  start st 80 24 "$bin $args"
  wait_for st "$ready" >/dev/null
  [ -z "$keys" ] || { tm send-keys -t st "$keys"; wait_for st "step 0" >/dev/null; }
  st_sh=$(tm display-message -p -t st '#{pane_pid}')
  st_pid=$(ps -o pid= --ppid "$st_sh" | tr -d ' ')
  [ -n "$st_pid" ] && kill -TERM "$st_pid"
  check "SIGTERM under 'commsim $args${keys:+, a lesson open}': status 130, terminal restored" \
    'wait_for st EXIT=130 STTY=same'
  tm kill-session -t st
done
# SIGTERM while learn grades (its cases run in child processes): the
# grader's handler killed the process with the screen still up
mkdir -p "$tmp/gw"
printf 'while true do end\n' >"$tmp/gw/ring.lua"
start st 80 24 "$bin learn 2 --lessons $lessons --work $tmp/gw"
wait_for st "commsim learn  02-point-to-point" >/dev/null
tm send-keys -t st e Down Down Down Down
wait_for st "exercise ring" >/dev/null
tm send-keys -t st g
wait_for st "grading" >/dev/null
st_sh=$(tm display-message -p -t st '#{pane_pid}')
st_pid=$(ps -o pid= --ppid "$st_sh" | tr -d ' ')
[ -n "$st_pid" ] && kill -TERM "$st_pid"
check "SIGTERM while learn grades: status 130, terminal restored" 'wait_for st EXIT=130 STTY=same'
tm kill-session -t st
start st 80 24 "$bin replay $tmp/st.trace"
wait_for st REPLAY >/dev/null
tm send-keys -t st C-c
check "replay: Ctrl-C leaves with status 130, terminal restored" 'wait_for st EXIT=130 STTY=same'
tm kill-session -t st

# ---- the terminal goes away (a closed window, a dropped ssh: SIGHUP) under
# the visualizer: the run ends with it, on both engines; no commsim process
# is left spinning on a terminal that is gone
gone() { ! kill -0 "$1" 2>/dev/null || [ "$(ps -o stat= -p "$1" 2>/dev/null | cut -c1)" = Z ]; }
for e in thread tcp; do
  start hu 100 30 "$bin run $lessons/02-point-to-point/deadlock.lua --engine $e"
  wait_for hu DEADLOCKED >/dev/null
  hu_sh=$(tm display-message -p -t hu '#{pane_pid}')
  hu_pids=$(ps -o pid= --ppid "$hu_sh" | tr -d ' ')
  tm kill-session -t hu
  left=
  for p in $hu_pids; do wait_until 30 gone "$p" || left="$left $p"; done
  # shellcheck disable=SC2086
  [ -z "$left" ] || kill -9 $left 2>/dev/null
  check "$e: the terminal hung up under the visualizer: no process left" '[ -n "$hu_pids" ] && [ -z "$left" ]'
done

plain learn 99 --lessons "$lessons"
check "learn 99: an unknown chapter is an error (1) that lists the chapters" \
  '[ $status = 1 ] && grep -qF "no chapter '\''99'\''" "$tmp/screen" && grep -qF 02-point-to-point "$tmp/screen"'

finish
