#!/usr/bin/env bash
# soak.sh -- a long run of random programs on both engines, with kills at
# random points. Each round takes one program from tests/gen/gen_p2p (a pool
# of SOAK_PROGRAMS, so every program comes back and its memory can be
# compared between rounds) and runs it on the thread and tcp engines under a
# random send mode. About a third of the runs are killed (SIGKILL) after a
# random delay: the whole run, or on tcp one rank process. After each run:
#   - it ended: a run still alive HANG_S seconds after its start is a hang
#     (its program is kept, the run is killed);
#   - nothing is left behind: every process of the soak runs a private copy
#     of commsim in a fresh directory, so a leftover is found by that path
#     and never confused with someone else's commsim (an orphan is kept and
#     killed after ORPHAN_GRACE_S seconds);
#   - its trace replays: 'commsim replay' ends with a documented status
#     (0 to 5, 130), the recorded run's status when the run was not killed;
#   - its peak RSS (GNU time's %M: the largest process of the run) is noted,
#     and the rounds of one program on one engine are compared, first to last.
# Not part of make check (tests/bench/run_soak.sh runs it for 20 s so the
# script cannot rot). Usage, from a built tree:
#   SOAK_SECONDS=1800 nice -n 10 bench/soak.sh
# Environment: SOAK_SECONDS (default 1800), SOAK_PROGRAMS (pool, default 12),
# SOAK_SEED (bash RANDOM seed, default the pid), SOAK_HANG_S (60),
# SOAK_ORPHAN_GRACE_S (10), SOAK_GROWTH (1; 0 reports the RSS figures
# without judging them, for runs too short to compare), SOAK_KILLS (1; 0 kills
# nothing, so every run meets the detectors), SOAK_KEEP (where failures
# are kept, default /tmp/commsim-soak-fail.PID), COMMSIM, GEN_P2P (the
# binaries; by default those of the tree this script is in).
# Prints one line per finding, then a summary; status 0 only without any
# hang, orphan, replay failure, crash or memory growth.
set -u
# All in one function, read whole before it runs, and its call and the exit
# on one line: bash reads a script as it goes, and a long soak must not pick
# up an edit of this file halfway (nor read past its call at a stale offset).
soak() {

  top=$(cd "$(dirname "$0")/.." && pwd)
  commsim=${COMMSIM:-$top/src/commsim}
  gen=${GEN_P2P:-$top/tests/gen/gen_p2p}
  seconds=${SOAK_SECONDS:-1800}
  pool=${SOAK_PROGRAMS:-12}
  seed=${SOAK_SEED:-$$}
  keep=${SOAK_KEEP:-/tmp/commsim-soak-fail.$$}
  run_timeout=20                          # commsim's own --timeout
  hang_s=${SOAK_HANG_S:-60}               # past this a run is a hang
  orphan_grace_s=${SOAK_ORPHAN_GRACE_S:-10} # a killed controller's ranks must be gone by then
  growth_check=${SOAK_GROWTH:-1}
  kills_on=${SOAK_KILLS:-1}                 # 0: no run is killed

  for b in "$commsim" "$gen"; do
    [ -x "$b" ] || { echo "soak: $b is not built (make; make tests/gen/gen_p2p)"; exit 1; }
  done
  [ -x /usr/bin/time ] || { echo "soak: needs GNU time (/usr/bin/time)"; exit 1; }
  RANDOM=$seed

  dir=$(mktemp -d /tmp/commsim-soak.XXXXXX) || exit 1
  # The private copy: every process of every run has this path as its
  # executable (tcp ranks exec /proc/self/exe), so pgrep -f finds exactly ours.
  cp "$commsim" "$dir/commsim-soak" || exit 1
  bin=$dir/commsim-soak
  mkfifo "$dir/nap" && exec {nap}<>"$dir/nap" || exit 1 # read -t on it: a sleep without a fork
  cleanup() {
    pkill -KILL -f "^$bin" 2>/dev/null
    rm -rf "$dir"
  }
  trap cleanup EXIT
  trap 'exit 130' INT TERM

  ours() { pgrep -f "^$bin" 2>/dev/null; }
  finding() { # KIND WHAT: one line, and the run's files kept
    echo "FAIL $1: $2"
    mkdir -p "$keep"
    local k=$keep/$(( ++kept ))-$1
    mkdir -p "$k"
    cp "$dir/prog$prog.lua" "$k/program.lua" 2>/dev/null
    cp "$dir/trace.jsonl" "$dir/out" "$dir/err" "$dir/replay.out" "$k/" 2>/dev/null
    echo "$2" > "$k/what"
    echo "  kept in $k"
  }

  modes=(rendezvous eager eager:64)
  engines=(thread tcp)
  declare -A world rss_first rss_last runs kills status_count
  rss_all=()
  rounds=0 late=0 hangs=0 orphans=0 replay_fail=0 replay_differ=0 crashes=0 kept=0 growth=0
  start=$SECONDS
  mem_start=$(awk '/MemAvailable/ {print $2}' /proc/meminfo)

  # At least one round: bash's SECONDS ticks whole seconds, so a soak of 1 s
  # (the tests' detector checks) could otherwise end before its first.
  while (( rounds == 0 || SECONDS - start < seconds )); do
    rounds=$((rounds + 1))
    prog=$((RANDOM % pool))
    if [ -z "${world[$prog]:-}" ]; then
      read -r w _ < <("$gen" --print "$prog" "$dir/prog$prog.lua") || { echo "soak: gen_p2p failed"; exit 1; }
      world[$prog]=$w
    fi
    for engine in "${engines[@]}"; do
      mode=${modes[RANDOM % 3]}
      runs[$engine]=$(( ${runs[$engine]:-0} + 1 ))
      # kill: 0 none, 1 the whole run, 2 one rank process (tcp only)
      kill_kind=0
      if (( kills_on && RANDOM % 3 == 0 )); then
        kill_kind=1
        [ "$engine" = tcp ] && (( RANDOM % 2 )) && kill_kind=2
      fi
      rm -f "$dir/trace.jsonl" "$dir/rss"
      /usr/bin/time -f %M -o "$dir/rss" "$bin" run "$dir/prog$prog.lua" -n "${world[$prog]}" \
        --engine "$engine" --send-mode "$mode" --timeout "$run_timeout" \
        --trace "$dir/trace.jsonl" >"$dir/out" 2>"$dir/err" &
      tpid=$!
      killed=0
      if (( kill_kind )); then
        # A random point: 0 to 25 ms after the start (a run of these programs
        # takes some 10 to 30 ms), so kills land in the start, the join, mid-run
        # or too late (counted apart). No fork on the way (sleep, pgrep): the
        # wait is a read that times out, the children come from /proc.
        read -r -t "0.$(printf %03d $((RANDOM % 25)))" -u "$nap"
        main=
        read -r main _ 2>/dev/null < "/proc/$tpid/task/$tpid/children"
        victim=$main
        if (( kill_kind == 2 )) && [ -n "$main" ]; then
          # One rank process: wait for the ranks to exist (a run that never
          # starts them is the hang detector's, below), then a little more.
          kids=()
          t0=$SECONDS
          while (( ! ${#kids[@]} )) && kill -0 "$main" 2>/dev/null && (( SECONDS - t0 < hang_s )); do
            kids=(); read -r -a kids 2>/dev/null < "/proc/$main/task/$main/children"
            (( ${#kids[@]} )) || read -r -t 0.002 -u "$nap"
          done
          read -r -t "0.$(printf %03d $((RANDOM % 15)))" -u "$nap"
          (( ${#kids[@]} )) && victim=${kids[RANDOM % ${#kids[@]}]} || victim=
        fi
        # A process that already exited (a zombie) is no kill.
        state=
        [ -n "$victim" ] && read -r _ _ state _ 2>/dev/null < "/proc/$victim/stat"
        if [ -n "$state" ] && [ "$state" != Z ] && kill -KILL "$victim" 2>/dev/null; then
          killed=1
          kills[$engine-$kill_kind]=$(( ${kills[$engine-$kill_kind]:-0} + 1 ))
        else
          late=$((late + 1))
        fi
      fi
      t0=$SECONDS
      while kill -0 "$tpid" 2>/dev/null && (( SECONDS - t0 < hang_s )); do sleep 0.05; done
      if kill -0 "$tpid" 2>/dev/null; then
        hangs=$((hangs + 1))
        finding hang "program $prog on $engine, $mode, kill $kill_kind: still running after ${hang_s}s"
        pkill -KILL -f "^$bin" 2>/dev/null
        kill -KILL "$tpid" 2>/dev/null
      fi
      wait "$tpid" 2>/dev/null
      st=$?
      # GNU time gives 128+N for a command ended by signal N; its %M line is
      # then preceded by "Command terminated by signal N".
      if (( st > 128 && ! killed )); then
        crashes=$((crashes + 1))
        finding crash "program $prog on $engine, $mode: status $st without a kill"
      fi
      status_count[$engine-$killed-$st]=$(( ${status_count[$engine-$killed-$st]:-0} + 1 ))
      # Orphans: a killed controller's ranks must notice and leave.
      t0=$SECONDS
      while [ -n "$(ours)" ] && (( SECONDS - t0 < orphan_grace_s )); do sleep 0.1; done
      if [ -n "$(ours)" ]; then
        orphans=$((orphans + 1))
        finding orphan "program $prog on $engine, $mode, kill $kill_kind: left $(ours | tr '\n' ' ')"
        pkill -KILL -f "^$bin" 2>/dev/null
      fi
      # The trace up to the kill replays with a documented status.
      if [ -s "$dir/trace.jsonl" ]; then
        timeout -k 5 "$hang_s" "$bin" replay "$dir/trace.jsonl" --no-tui >"$dir/replay.out" 2>&1
        rst=$?
        case $rst in
          0|1|2|3|4|5|130) ;;
          *) replay_fail=$((replay_fail + 1))
             finding replay "program $prog on $engine, $mode, kill $kill_kind: replay status $rst" ;;
        esac
        if (( ! killed && st <= 5 && rst != st )); then
          replay_differ=$((replay_differ + 1))
          finding replay-differs "program $prog on $engine, $mode: run $st, replay $rst"
        fi
      elif (( ! killed )); then
        replay_fail=$((replay_fail + 1))
        finding no-trace "program $prog on $engine, $mode: status $st and no trace"
      fi
      # Memory: the runs that were not killed, per program and engine.
      rss=$(tail -1 "$dir/rss" 2>/dev/null)
      if (( ! killed )) && [[ "$rss" =~ ^[0-9]+$ ]]; then
        rss_all+=("$rss")
        key=$prog-$engine
        [ -z "${rss_first[$key]:-}" ] && rss_first[$key]=$rss
        rss_last[$key]=$rss
      fi
    done
  done
  mem_end=$(awk '/MemAvailable/ {print $2}' /proc/meminfo)

  # Growth: a program's last run on an engine against its first, with room for
  # the allocator's and the scheduler's noise (threads' stacks come and go).
  first_sum=0 last_sum=0 pairs=0
  for key in "${!rss_first[@]}"; do
    f=${rss_first[$key]} l=${rss_last[$key]}
    first_sum=$((first_sum + f)) last_sum=$((last_sum + l)) pairs=$((pairs + 1))
    if (( growth_check && l > f + f / 4 + 4096 )); then
      growth=$((growth + 1))
      echo "FAIL growth: program ${key%-*} on ${key#*-}: peak RSS ${f} KiB first, ${l} KiB last"
    fi
  done
  if (( ${#rss_all[@]} )); then
    mapfile -t sorted < <(printf '%s\n' "${rss_all[@]}" | sort -n)
    med=${sorted[${#sorted[@]} / 2]} max=${sorted[-1]}
  else
    med=- max=-
  fi

  echo "soak: $((SECONDS - start)) s, seed $seed, $rounds rounds over $pool programs"
  echo "runs: thread ${runs[thread]:-0}, tcp ${runs[tcp]:-0}"
  echo "kills: thread whole run ${kills[thread-1]:-0}; tcp whole run ${kills[tcp-1]:-0}, one rank ${kills[tcp-2]:-0}; $late more came after the run ended"
  echo -n "statuses (engine-killed-status: count):"
  for k in $(printf '%s\n' "${!status_count[@]}" | sort); do echo -n " $k: ${status_count[$k]}"; done
  echo
  echo "hangs: $hangs, orphans: $orphans, crashes: $crashes, replay failures: $replay_fail, replays that differ: $replay_differ"
  if (( pairs )); then
    echo "peak RSS (KiB, runs not killed): first ${rss_all[0]}, median $med, max $max;" \
         "$pairs program-engine pairs, mean first $((first_sum / pairs)), mean last $((last_sum / pairs)), $growth grew"
  fi
  echo "MemAvailable: $((mem_start / 1024)) MiB at the start, $((mem_end / 1024)) MiB at the end (the whole machine)"
  (( kept )) && echo "failures kept in $keep"
  total=$((hangs + orphans + crashes + replay_fail + replay_differ + growth))
  echo "$((rounds * 2 - total)) passed, $total failed"
  (( total == 0 ))
}
soak "$@"; exit # one line, read before it runs: nothing after it is read from the file
