#!/usr/bin/env bash
# run_engine.sh -- the nccl engine where a run cannot use it: what make check
# proves on every machine, GPU or not (the runs themselves are
# tests/gpu/run_gpu.sh's, where GPUs are).
#
#   - a build with NCCL lists the engine in --engine help; a build without
#     leaves it out, and --engine nccl says the build lacks it (status 1);
#   - more ranks than GPUs (every world on a machine without one) is a usage
#     error naming both counts and the engines to use instead (status 1),
#     whether the size comes from -n or the script's header, from run or
#     bench, and under a sanitizer build without a report from it (no
#     crash, no leak);
#   - --algo nccl on an engine without NCCL's collectives is a usage error;
#   - the GPU suite's scripts marked "-- host reference:" (they take host
#     tensors when dist.cuda_device_count() is below their world) print
#     their NAME.out on the thread engine: those .out files are the host
#     reference the GPU runs are compared with, checked here.
. "$(dirname "$0")/../lib.sh"
lesson=$top_srcdir/lessons/01-first-program/hello.lua

built=no
grep -q '^#define HAVE_NCCL 1' "$top_builddir/config.h" 2>/dev/null && built=yes

# The run's stderr holds no sanitizer report (an ASan/UBSan/LSan build).
clean_exit() {
  if grep -qE 'Sanitizer|runtime error:' "$tmp/err"; then
    bad "$1: no sanitizer report" "the run's stderr has one"
  else
    ok "$1: no sanitizer report"
  fi
}

# ---- the GPU suite's host reference (every build: the scripts choose host
# tensors where the GPUs are fewer than their ranks)
by_rank() {
  awk '{ k = 1000000000
         if (match($0, /^\[rank [0-9]+\]/)) k = substr($0, 7, RLENGTH - 7) + 0
         printf "%d\t%d\t%s\n", k, NR, $0 }' | sort -t "$(printf '\t')" -k1,1n -k2,2n | cut -f3-
}
for script in "$top_srcdir"/tests/gpu/*.lua; do
  name=$(basename "$script" .lua)
  [ -f "${script%.lua}.out" ] || continue
  # only the scripts that choose host tensors without GPUs (the others need one)
  grep -q '^-- host reference:' "$script" || continue
  want=0
  grep -q '^--- expect: deadlock' "$script" && want=3
  guarded "$bin" run "$script" --engine thread --no-tui >"$tmp/out" 2>"$tmp/err" </dev/null
  got=$?
  by_rank <"$tmp/out" >"$tmp/out.n"
  if [ "$got" != "$want" ]; then bad "gpu/$name.lua on thread (host reference)" "exit status $got, expected $want"
  elif ! cmp -s "${script%.lua}.out" "$tmp/out.n"; then
    diff -u "${script%.lua}.out" "$tmp/out.n" | head -20 | sed 's/^/#   /'
    bad "gpu/$name.lua on thread (host reference)" "output differs from $name.out"
  else ok "gpu/$name.lua on thread: $name.out (host reference)"; fi
done

# ---- the GPU suite's lesson wrapper (tests/gpu/on_device.lua: one line put
# before a lesson, so its line numbers stay; the factories make tensors on the
# given device, printing copies them back). With device "cpu" on the thread
# engine every lesson of chapters 2 and 3 must print what it prints alone:
# then the GPU suite's comparison (device "cuda" on nccl against thread)
# compares the engines, not the wrapper.
wrapped=0 unwrapped=""
for script in "$top_srcdir"/lessons/0[23]-*/*.lua; do
  rel=${script#"$top_srcdir"/lessons/}
  grep -q 'dist.time()' "$script" && continue # prints durations
  world=$(sed -n -E 's/^--- world:[[:space:]]*([0-9]+).*/\1/p' "$script" | head -n 1)
  mode=$(sed -n -E 's/^--- send-mode:[[:space:]]*([a-z0-9:]+).*/\1/p' "$script" | head -n 1)
  { sed 's/@DEVICE@/cpu/' "$top_srcdir/tests/gpu/on_device.lua"; cat "$script"; } >"$tmp/w.lua"
  guarded "$bin" run "$script" --no-tui -n "${world:-2}" --send-mode "${mode:-rendezvous}" 2>/dev/null </dev/null | by_rank >"$tmp/a.out"
  a=${PIPESTATUS[0]}
  guarded "$bin" run "$tmp/w.lua" --no-tui -n "${world:-2}" --send-mode "${mode:-rendezvous}" 2>/dev/null </dev/null | by_rank >"$tmp/b.out"
  b=${PIPESTATUS[0]}
  if [ "$a" = "$b" ] && cmp -s "$tmp/a.out" "$tmp/b.out"; then wrapped=$((wrapped + 1))
  else unwrapped+=" $rel"; diff "$tmp/a.out" "$tmp/b.out" | head -5 | sed 's/^/#   /'; fi
done
if [ -z "$unwrapped" ]; then ok "the GPU suite's lesson wrapper keeps $wrapped lessons' output (device cpu, thread)"
else bad "the GPU suite's lesson wrapper keeps the lessons' output" "differs:$unwrapped"; fi

if [ "$built" = no ]; then
  "$bin" run --engine help x >"$tmp/out" 2>&1
  if grep -qE '^  nccl ' "$tmp/out"; then bad "--engine help leaves nccl out (not built)"
  else ok "--engine help leaves nccl out (not built)"; fi
  expect "--engine nccl: this build lacks it" 1 \
    "this build lacks the nccl engine: configure found no CUDA toolkit with NCCL" -- \
    run "$lesson" --engine nccl --no-tui
  clean_exit "--engine nccl (not built)"
  expect "--engine nccl-mp: this build lacks it" 1 \
    "this build lacks the nccl engine: configure found no CUDA toolkit with NCCL" -- \
    run "$lesson" --engine nccl-mp --no-tui
  finish
fi

# ---- built with NCCL
expect "--engine help lists nccl" 0 "nccl     every rank a thread with a GPU of its own" -- run --engine help x
expect "--engine help: nccl's capabilities" 0 "nccl     threads    yes     yes           yes   yes" -- run --engine help x

# The machine's GPUs, as the engine counts them: a world of 4096 ranks is
# always too many, and the refusal names the count.
"$bin" run "$lesson" --engine nccl -n 4096 --no-tui >"$tmp/out" 2>"$tmp/err" </dev/null
gpus=$(sed -n -E 's/.* 4096 ranks asked for, ([0-9]+) GPUs? here.*/\1/p' "$tmp/err")
if [ -z "$gpus" ]; then
  bad "the refusal names the GPU count" "no count in its message"
  gpus=0
else
  ok "the refusal names the GPU count ($gpus)"
fi
n=$((gpus + 1))
if [ "$n" = 1 ]; then ranks="1 rank"; else ranks="$n ranks"; fi
want="the nccl engine runs one rank per GPU (NCCL refuses two ranks on one device): $ranks asked for, $gpus GPU"
expect "one rank more than GPUs (-n $n): status 1" 1 "$want" -- run "$lesson" --engine nccl -n "$n" --no-tui
expect "the refusal suggests the other engines" 1 "; use --engine thread or --engine tcp" -- run "$lesson" --engine nccl -n "$n" --no-tui
clean_exit "the refusal"
if [ "$(wc -l <"$tmp/err")" = 1 ]; then ok "the refusal is one line"
else bad "the refusal is one line" "$(wc -l <"$tmp/err") lines"; fi
if [ "$gpus" = 0 ]; then
  expect "no GPU: the reason is CUDA's" 1 "0 GPUs here (no CUDA device available: " -- run "$lesson" --engine nccl -n 1 --no-tui
fi
# The world from the script's header (hello.lua: 4) when it is too big.
if [ "$gpus" -lt 4 ]; then
  expect "the header's world (4) too big" 1 "4 ranks asked for, $gpus GPU" -- run "$lesson" --engine nccl --no-tui
fi
# commsim bench goes through the same launcher: refused the same way (its
# point-to-point runs take 2 ranks); 'all' leaves out what cannot run here.
if [ "$gpus" -lt 2 ]; then
  expect "bench --engine nccl: refused" 1 "2 ranks asked for, $gpus GPU" -- \
    bench --engine nccl --op pingpong --sizes 8:8 --iters 1
fi
if [ "$gpus" = 0 ]; then
  expect "bench (all engines): no nccl without a GPU" 0 "tcp " -- bench --op pingpong --sizes 8:8 --iters 1
  if grep -qE "^nccl |on nccl" "$tmp/out" "$tmp/err"; then bad "bench (all engines): nccl left out" "it ran"
  else ok "bench (all engines): nccl left out"; fi
fi
# commsim grade --engine nccl: said once, not as every case's failure.
if [ "$gpus" = 0 ]; then
  ex=$top_srcdir/lessons/02-point-to-point/exercises/bidirectional
  expect "grade --engine nccl without a GPU: refused once" 1 \
    "commsim grade: --engine nccl: the nccl engine runs one rank per GPU" -- \
    grade "$ex" "$ex/starter.lua" --engine nccl
fi
# Nothing on standard output: the refusal is the report's business.
expect "refused: stdout is empty" 1 "" -- run "$lesson" --engine nccl -n "$n" --no-tui
if [ -s "$tmp/out" ]; then bad "refused: stdout is empty" "it has: $(head -c 200 "$tmp/out")"; fi

# ---- ranks as processes (nccl-mp): every way of starting them refuses a
# machine without the GPUs its ranks need, with status 1, the count named,
# no sanitizer report and no process left behind. The script is a copy
# with a name of its own, so that a leftover process is found by it.
expect "--engine help lists nccl-mp" 0 "nccl-mp  processes  yes     yes           yes   yes" -- run --engine help x
marker=$tmp/nccl-mp-marker-$$.lua
cp "$lesson" "$marker"
no_orphans() {
  sleep 0.3
  if pgrep -f -- "$marker" >/dev/null 2>&1; then
    bad "$1: no process left" "$(pgrep -af -- "$marker" | head -3)"
    pkill -KILL -f -- "$marker" 2>/dev/null
  else ok "$1: no process left"; fi
}
port=$((20000 + $$ % 20000))
tok=0123456789abcdef0123456789abcdef
if [ "$gpus" -lt 2 ]; then
  expect "nccl-mp, launched (-n 2): refused" 1 "2 ranks asked for, $gpus GPU" -- \
    run "$marker" --engine nccl-mp -n 2 --no-tui
  clean_exit "nccl-mp, launched"
  if [ "$(wc -l <"$tmp/err")" = 1 ]; then ok "nccl-mp, launched: the refusal is one line"
  else bad "nccl-mp, launched: the refusal is one line" "$(wc -l <"$tmp/err") lines"; fi
  no_orphans "nccl-mp, launched"
fi
if [ "$gpus" = 0 ]; then
  # --master and --rank make --engine nccl the processes' twin
  expect "--engine nccl --rank 0 (the controller's machine): refused" 1 \
    "1 rank asked for, 0 GPUs here (no CUDA device available: " -- \
    run "$marker" --engine nccl --master "127.0.0.1:$port" --rank 0 --world 2 --no-tui
  clean_exit "--engine nccl --rank 0"
  no_orphans "--engine nccl --rank 0"
  expect "--engine nccl --rank 1 (by hand): refused before dialing" 1 \
    "rank 1: the nccl engine runs one rank per GPU" -- \
    run "$marker" --engine nccl --master "127.0.0.1:$port" --rank 1 --world 2 --token "$tok" --no-tui
  clean_exit "--engine nccl --rank 1"
  no_orphans "--engine nccl --rank 1"
  # torchrun's variables
  MASTER_ADDR=127.0.0.1 MASTER_PORT=$port RANK=1 WORLD_SIZE=2 COMMSIM_TOKEN=$tok \
    expect "torchrun's variables, RANK=1: refused" 1 "rank 1: the nccl engine runs one rank per GPU" -- \
    run "$marker" --engine nccl --no-tui
  clean_exit "torchrun's variables, RANK=1"
  no_orphans "torchrun's variables, RANK=1"
  MASTER_ADDR=127.0.0.1 MASTER_PORT=$port RANK=0 WORLD_SIZE=2 \
    expect "torchrun's variables, RANK=0: refused" 1 "1 rank asked for, 0 GPUs here" -- \
    run "$marker" --engine nccl --no-tui
  clean_exit "torchrun's variables, RANK=0"
  no_orphans "torchrun's variables, RANK=0"
  # with neither a master nor a rank, --engine nccl stays threads
  expect "--engine nccl alone: threads (the world's count)" 1 "2 ranks asked for, 0 GPUs" -- \
    run "$marker" --engine nccl -n 2 --no-tui
fi

# A rank launched here is this machine's rank i (LOCAL_RANK=i: its GPU on
# nccl-mp), whatever LOCAL_RANK the caller had: seen in a tcp run's ranks.
lr=$tmp/local-rank-$$.lua
printf 'dist.compute(3000)\n' >"$lr"
LOCAL_RANK=7 guarded "$bin" run "$lr" --engine tcp -n 3 --no-tui >/dev/null 2>&1 </dev/null &
lrpid=$!
seen=""
for _ in $(seq 50); do
  sleep 0.1
  pids=$(pgrep -f -- "$lr.*--worker" || true)
  [ "$(echo "$pids" | grep -c .)" = 3 ] || continue
  seen=$(for p in $pids; do tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep '^LOCAL_RANK='; done | sort | tr '\n' ' ')
  break
done
wait "$lrpid"
if [ "$seen" = "LOCAL_RANK=0 LOCAL_RANK=1 LOCAL_RANK=2 " ]; then ok "launched ranks get LOCAL_RANK=0, 1, 2"
else bad "launched ranks get LOCAL_RANK=0, 1, 2" "saw: ${seen:-nothing}"; fi

# ---- --algo nccl elsewhere
expect "--algo nccl on the thread engine" 1 \
  "--algo all_reduce=nccl: NCCL's own collectives run on --engine nccl only (this run uses the thread engine)" -- \
  run "$lesson" --algo all_reduce=nccl --no-tui
expect "--algo nccl on the tcp engine" 1 "(this run uses the tcp engine)" -- \
  run "$lesson" --algo barrier=nccl --engine tcp --no-tui
# A script naming it on the thread engine: an error at its line.
printf 'local t = tensor.ones(2)\ndist.all_reduce(t, ReduceOp.SUM, {algo = "nccl"})\n' >"$tmp/algo.lua"
expect "{algo=\"nccl\"} on the thread engine" 2 \
  "algo.lua:2: dist.all_reduce: the 'nccl' algorithm is NCCL's own and runs on --engine nccl only" -- \
  run "$tmp/algo.lua" -n 2 --no-tui

# ---- dist.cuda_device_count(): what the engine counted
printf 'print(dist.cuda_device_count())\n' >"$tmp/count.lua"
expect "dist.cuda_device_count()" 0 "[rank 0] $gpus" -- run "$tmp/count.lua" -n 1 --no-tui

finish
