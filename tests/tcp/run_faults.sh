#!/usr/bin/env bash
# run_faults.sh -- the tcp engine when things go wrong:
#   - a rank process killed while another waits on it: status 5 and the report
#     names the dead rank, its signal and who waited on it;
#   - 20 runs that kill a random rank at a random point of a busy ring;
#   - a segfaulting rank; the controller killed (the ranks must go too);
#   - strangers on the controller's port (garbage bytes, a wrong token, a wrong
#     version): refused and logged, the run's output unchanged;
#   - ranks started by hand joining with the token (torchrun's variables too).
# Every case checks the process table afterwards: no rank process is left.
# Outcomes are asserted; times are only bounded generously (a slow machine
# must not fail the test) and the slowest end after a kill is printed.
. "$(dirname "$0")/../lib.sh"
dir="$top_srcdir/tests/tcp/scripts"
command -v ps >/dev/null || skip_all "no ps to check the process table"
ctl=
on_exit() { if [ -n "$ctl" ]; then kill -9 "$ctl" 2>/dev/null; fi; }

trap '' PIPE   # writing to a stranger's socket that commsim already closed
BOUND=${FAULT_BOUND:-15}   # seconds: generous; the run normally ends well within 1 s
slowest=0

now() { date +%s.%N; }

# start ARGS...: commsim run in the background; its pid in $ctl
start() {
  "$bin" run "$@" >"$tmp/out" 2>"$tmp/err" </dev/null &
  ctl=$!
}

# wait_text FILE TEXT: until FILE contains TEXT (or the run ended, or BOUND)
wait_text() {
  local i
  for ((i = 0; i < BOUND * 20; i++)); do
    grep -qF -- "$2" "$1" 2>/dev/null && return 0
    kill -0 "$ctl" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}

# wait_end T0 [nocount]: wait for the controller (at most BOUND s); its status
# in $status, the time since T0 in $took (counted in $slowest unless nocount)
wait_end() {
  local t0=$1 i
  status=
  for ((i = 0; i < BOUND * 100; i++)); do
    kill -0 "$ctl" 2>/dev/null || break
    sleep 0.01
  done
  if kill -0 "$ctl" 2>/dev/null; then
    kill -9 "$ctl"
    status=timeout
  fi
  wait "$ctl" 2>/dev/null
  local rc=$?
  [ "$status" = timeout ] || status=$rc
  ctl=
  took=$(echo "$(now) - $t0" | bc)
  if [ "${2:-}" != nocount ] && [ "$(echo "$took > $slowest" | bc)" = 1 ]; then slowest=$took; fi
}

children() { ps -o pid= --ppid "$1" | tr -d ' '; }
rank_pid() { ps -o pid=,args= --ppid "$1" | awk -v r="--rank $2 " 'index($0, r) {print $1}'; }

# alive PIDS...: the ones still running (zombies do not count: nothing runs)
alive() {
  local p st left=
  for p in "$@"; do
    st=$(ps -o stat= -p "$p" 2>/dev/null)
    [ -n "$st" ] && [ "${st#Z}" = "$st" ] && left="$left $p"
  done
  echo "$left"
}

# left_behind PIDS...: wait (bounded) for them to go; print those that stay
left_behind() {
  local i left
  for ((i = 0; i < BOUND * 20; i++)); do
    left=$(alive "$@")
    [ -z "$left" ] && return 0
    sleep 0.05
  done
  echo "$left"
}

# ---- a chosen rank killed while another waits on it
kill_victim() {
  local sig=$1 signum=$2
  start "$dir/victim.lua" --engine tcp --no-tui --trace "$tmp/trace"
  if ! wait_text "$tmp/out" "[rank 2] ready" ||
     ! wait_text "$tmp/trace" '{"type":"block","rank":1,'; then
    bad "kill -$sig rank 2" "the run never got to the point"
    return
  fi
  local kids victim t0
  kids=$(children "$ctl")
  victim=$(rank_pid "$ctl" 2)
  t0=$(now)
  kill "-$sig" "$victim"
  wait_end "$t0"
  local want="rank 2 died (signal $signum) while rank 1 waited to receive from it"
  local stay
  # shellcheck disable=SC2086
  stay=$(left_behind $kids)
  if [ "$status" != 5 ]; then bad "kill -$sig rank 2" "exit status $status, expected 5"
  elif ! grep -qF -- "$want" "$tmp/err"; then bad "kill -$sig rank 2" "the report lacks: $want"
  elif ! grep -qF -- "verdict: a rank died (exit status 5)" "$tmp/err"; then
    bad "kill -$sig rank 2" "no verdict"
  elif [ -n "$stay" ]; then bad "kill -$sig rank 2" "processes left:$stay"
  else ok "kill -$sig rank 2: reported as '$want', status 5, nothing left"
  fi
}
kill_victim KILL 9
# Sanitizer builds catch SIGSEGV themselves (and exit 1): let the signal kill.
# TSan defers asynchronous signals to its own safe points, so a SEGV sent from
# outside may never be acted on: that case runs on the other builds only.
if nm "$bin" 2>/dev/null | grep -q __tsan_init; then
  skip "kill -SEGV rank 2" "ThreadSanitizer defers asynchronous signals"
else
  ASAN_OPTIONS="handle_segv=0:${ASAN_OPTIONS:-}" kill_victim SEGV 11
fi

# ---- 20 runs, a random rank killed at a random point
random_kills() {
  local run worst_fail=
  for ((run = 1; run <= 20; run++)); do
    start "$dir/busy_ring.lua" --engine tcp --no-tui
    if ! wait_text "$tmp/out" "running"; then
      bad "random kill $run" "the ring never started"
      continue
    fi
    sleep "0.$((RANDOM % 300))"
    local r=$((RANDOM % 4)) kids victim t0 stay
    kids=$(children "$ctl")
    victim=$(rank_pid "$ctl" $r)
    t0=$(now)
    kill -9 "$victim"
    wait_end "$t0"
    # shellcheck disable=SC2086
    stay=$(left_behind $kids)
    if [ "$status" != 5 ]; then worst_fail="run $run: exit status $status, expected 5"
    elif ! grep -qF -- "rank $r died (signal 9)" "$tmp/err"; then
      worst_fail="run $run: the report does not name rank $r"
    elif [ -n "$stay" ]; then worst_fail="run $run: processes left:$stay"
    else continue
    fi
    bad "random kills" "$worst_fail"
    return
  done
  ok "20 random kills: each run ended with status 5 naming the killed rank, nothing left"
}
random_kills

# ---- the controller killed: every rank process goes too
start "$dir/busy_ring.lua" --engine tcp --no-tui
if wait_text "$tmp/out" "running"; then
  kids=$(children "$ctl")
  kill -9 "$ctl"
  wait "$ctl" 2>/dev/null
  ctl=
  # shellcheck disable=SC2086
  stay=$(left_behind $kids)
  if [ -z "$kids" ]; then bad "controller killed" "no rank processes seen"
  elif [ -n "$stay" ]; then bad "controller killed" "rank processes left:$stay"
  else ok "controller killed: its $(echo $kids | wc -w) rank processes exited"
  fi
else
  bad "controller killed" "the ring never started"
fi

# ---- a large rendezvous send waits as an envelope, not as a copy at the receiver
rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
large_send() {
  start "$dir/big.lua" --engine tcp --no-tui --mem-limit 1024
  if ! wait_text "$tmp/out" "[rank 0] sending" || ! wait_text "$tmp/out" "[rank 1] waiting"; then
    bad "large send" "the run never got to the point"
    return
  fi
  local r0 r1 i m0=0 m1=0 v
  r0=$(rank_pid "$ctl" 0)
  r1=$(rank_pid "$ctl" 1)
  for ((i = 0; i < 10; i++)); do  # while rank 1 computes, before its receive
    sleep 0.1
    v=$(rss_kib "$r0"); [ "${v:-0}" -gt "$m0" ] && m0=$v
    v=$(rss_kib "$r1"); [ "${v:-0}" -gt "$m1" ] && m1=$v
  done
  wait_end "$(now)" nocount
  if [ "$status" != 0 ]; then bad "large send" "exit status $status"
  elif ! grep -qF "[rank 1] last value 2" "$tmp/out"; then bad "large send" "wrong data"
  elif [ "$m0" -lt $((256 * 1024)) ]; then bad "large send" "the sender holds only $m0 KiB"
  elif [ "$m1" -ge $((128 * 1024)) ]; then bad "large send" "the receiver buffered it: $m1 KiB"
  else ok "a 256 MiB send posted before its receive: the receiver held $((m1 / 1024)) MiB until then, the data arrived"
  fi
}
large_send

# ---- strangers on the controller's port
free_port() { echo $((20000 + RANDOM % 30000)); }

# hello TOKEN VERSION: a HELLO frame for rank 1 of 2 with the given token
hello() {
  printf 'CSIM\x'"$2"'\x01\x00\x00\x30\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00'
  printf '%s' "$1"
  printf '\x01\x00\x00\x00\x02\x00\x00\x00\x7f\x00\x00\x01\x39\x30\x00\x00'
}

strangers() {
  "$bin" run "$dir/quiet.lua" --engine tcp --no-tui >"$tmp/clean.out" 2>"$tmp/clean.err" </dev/null
  local port tries
  for ((tries = 0; tries < 5; tries++)); do
    port=$(free_port)
    start "$dir/quiet.lua" --engine tcp --no-tui --master "127.0.0.1:$port"
    wait_text "$tmp/out" "listening" && break
    wait "$ctl"
    ctl=
  done
  if [ -z "$ctl" ]; then
    bad "strangers" "no free port"
    return
  fi
  exec 3<>"/dev/tcp/127.0.0.1/$port" && printf 'GET / HTTP/1.0\r\nHost: commsim\r\n\r\n' >&3
  exec 4<>"/dev/tcp/127.0.0.1/$port" && hello 0123456789abcdef0123456789abcdef 01 >&4
  exec 5<>"/dev/tcp/127.0.0.1/$port" && hello 0123456789abcdef0123456789abcdef 07 >&5
  exec 6<>"/dev/tcp/127.0.0.1/$port" && printf 'CSIM\x01\x01\x00\x00\xff\xff\xff\x7f' >&6 &&
    printf '\x00\x00\x00\x00\x00\x00\x00\x00' >&6
  local t0
  t0=$(now)
  wait_end "$t0" nocount
  exec 3>&- 4>&- 5>&- 6>&-
  local why=
  for want in "not a commsim frame (bad magic)" "wrong job token" "wire protocol version 7" \
              "HELLO frame with 2147483647 bytes of metadata"; do
    grep -qF -- "$want" "$tmp/err" || why="the log lacks: $want"
  done
  sort "$tmp/out" >"$tmp/out.s"
  sort "$tmp/clean.out" >"$tmp/clean.out.s"
  grep -v '^commsim: refused a connection' "$tmp/err" >"$tmp/err.f"
  if [ "$status" != 0 ]; then bad "strangers" "exit status $status, expected 0"
  elif [ -n "$why" ]; then bad "strangers" "$why"
  elif ! cmp -s "$tmp/out.s" "$tmp/clean.out.s"; then bad "strangers" "the output changed"
  elif ! cmp -s "$tmp/err.f" "$tmp/clean.err"; then bad "strangers" "the report changed"
  else ok "strangers (garbage, wrong token, wrong version, oversized frame): refused and logged, output unchanged"
  fi
}
strangers

# ---- ranks started by hand join with the token
by_hand() {
  local port tries token
  for ((tries = 0; tries < 5; tries++)); do
    port=$(free_port)
    start "$top_srcdir/lessons/02-point-to-point/ring.lua" --engine tcp --no-tui \
      --master "127.0.0.1:$port" --rank 0 --world 3
    wait_text "$tmp/err" "job token" && break
    wait "$ctl"
    ctl=
  done
  token=$(sed -n 's/^commsim: job token \([0-9a-f]*\):.*/\1/p' "$tmp/err")
  if [ -z "$ctl" ] || [ -z "$token" ]; then
    bad "ranks by hand" "the controller printed no token"
    return
  fi
  "$bin" run "$top_srcdir/lessons/02-point-to-point/ring.lua" --engine tcp --master "127.0.0.1:$port" \
    --rank 1 --world 3 --token "$token" </dev/null >"$tmp/r1" 2>&1 &
  local r1=$!
  MASTER_ADDR=127.0.0.1 MASTER_PORT=$port RANK=2 WORLD_SIZE=3 COMMSIM_TOKEN=$token \
    "$bin" run "$top_srcdir/lessons/02-point-to-point/ring.lua" --engine tcp </dev/null >"$tmp/r2" 2>&1 &
  local r2=$!
  wait_end "$(now)" nocount
  wait $r1 $r2
  if [ "$status" != 0 ]; then bad "ranks by hand" "exit status $status"
  elif ! grep -qF "[rank 2] sum of all ranks: tensor([3., 3.])" "$tmp/out"; then
    bad "ranks by hand" "no result from rank 2"
  else ok "ranks started by hand (--token; MASTER_ADDR/MASTER_PORT/RANK/WORLD_SIZE) run the ring"
  fi
}
by_hand

echo "# slowest end of a run after a kill: ${slowest} s"
finish
