#!/usr/bin/env bash
# Modelled time (--net, docs/time-model.md): the virtual times of known
# programs equal their closed forms to the nanosecond, whatever the real
# timing, on every engine and in a replay.
. "$(dirname "$0")/../lib.sh"
dir=$top_srcdir/tests/time
A=10000 BW=1000000000          # alpha = 10 us, bandwidth = 1 GB/s: beta = 1 ns a byte
net="alpha=10us,bandwidth=1GB/s"
engines="thread"
[ "${COMMSIM_TIME_TCP:-1}" = 1 ] && engines="thread tcp"

# xfer BYTES: B/bandwidth in ns (rounded up, as the model does)
xfer() { echo $((($1 * 1000000000 + BW - 1) / BW)); }

# vt NAME WANT ARGS...: run commsim ARGS; the largest number printed after a
# rank's tag (its virtual time in ns) must be WANT.
vt() {
  local name=$1 want=$2
  shift 2
  guarded "$bin" run "$@" --no-tui >"$tmp/out" 2>"$tmp/err" </dev/null
  local st=$? got
  got=$(sed -n 's/^\[rank [0-9]*\] \([0-9][0-9]*\)$/\1/p' "$tmp/out" | sort -n | tail -1)
  if [ $st != 0 ]; then bad "$name" "exit status $st"
  elif [ "$got" != "$want" ]; then bad "$name" "makespan $got ns, expected $want ns"
  else ok "$name: $want ns"; fi
}

for e in $engines; do
  E="--engine $e --net $net"
  # ping-pong: 10 round trips of 1000 bytes, each 2 (alpha + n beta)
  vt "$e: ping-pong 10 x 1000 B" $((10 * 2 * (A + $(xfer 1000)))) \
    "$dir/pingpong.lua" $E
  [ "$(sed -n 's/^\[rank 0\] //p' "$tmp/out")" = "220000" ] \
    && ok "$e: ten 1000-byte round trips at 10 us, 1 GB/s take 220 us" \
    || bad "$e: ten 1000-byte round trips take 220 us"

  # three messages into one rank at once: 11, 12, 13 us, in sender order
  guarded "$bin" run "$dir/fanin.lua" $E --no-tui >"$tmp/out" 2>"$tmp/err" </dev/null
  if [ "$(grep -c '' "$tmp/out")" = 3 ] && grep -qx '\[rank 0\] from 1 at 11000 ns' "$tmp/out" \
     && grep -qx '\[rank 0\] from 2 at 12000 ns' "$tmp/out" \
     && grep -qx '\[rank 0\] from 3 at 13000 ns' "$tmp/out"; then
    ok "$e: three 1000-byte messages into one rank arrive at 11, 12, 13 us"
  else
    bad "$e: three messages into one rank"
  fi

  for p in 2 3 4 8; do
    n=4096
    vt "$e: chain of $p" $(((p - 1) * (A + $(xfer $n)))) "$dir/chain.lua" -n $p $E
    vt "$e: linear gather at the root, p=$p" $(((p - 1) * $(xfer $n) + A)) \
      "$dir/gather.lua" -n $p $E
  done
  for p in 2 4 8; do
    n=16384 lg=$( [ $p = 2 ] && echo 1 || { [ $p = 4 ] && echo 2 || echo 3; } )
    vt "$e: ring all_reduce p=$p" $((2 * (p - 1) * (A + $(xfer $((n / p)))))) \
      "$dir/coll.lua" -n $p --algo all_reduce=ring $E
    vt "$e: recursive doubling all_reduce p=$p" $((lg * (A + $(xfer $n)))) \
      "$dir/coll.lua" -n $p --algo all_reduce=recursive_doubling $E
    vt "$e: binomial tree broadcast p=$p" $((lg * (A + $(xfer 4096)))) \
      "$dir/bcast.lua" -n $p --algo broadcast=tree $E
  done
done

# GPipe: (m + p - 1)(F + B) + 2 (p - 1) alpha; with alpha -> 0 the bubble is
# (p - 1)/(m + p - 1) of the run. 1F1B: the same compute, at most p
# activations held instead of m.
m=8 F=1000000 B=2000000
for p in 2 4; do
  want=$(((m + p - 1) * (F + B) + 2 * (p - 1) * A))
  guarded "$bin" run "$dir/pipeline.lua" -n $p --net $net --no-tui >"$tmp/out" 2>"$tmp/err" </dev/null
  got=$(sed -n 's/^\[rank [0-9]*\] gpipe end \([0-9]*\) peak .*/\1/p' "$tmp/out" | sort -n | tail -1)
  peak=$(sed -n 's/^\[rank 0\] gpipe end [0-9]* peak \([0-9]*\)/\1/p' "$tmp/out")
  [ "$got" = "$want" ] && [ "$peak" = $m ] && ok "GPipe p=$p m=$m: $want ns, $m activations held" \
    || bad "GPipe p=$p m=$m" "got $got ns peak $peak, expected $want ns peak $m"
  sed 's/^local m, F, B/SCHEDULE = "1f1b"\nlocal m, F, B/' "$dir/pipeline.lua" >"$tmp/1f1b.lua"
  guarded "$bin" run "$tmp/1f1b.lua" -n $p --net $net --no-tui >"$tmp/out" 2>"$tmp/err" </dev/null
  got=$(sed -n 's/^\[rank [0-9]*\] 1f1b end \([0-9]*\) peak .*/\1/p' "$tmp/out" | sort -n | tail -1)
  peak=$(sed -n 's/^\[rank 0\] 1f1b end [0-9]* peak \([0-9]*\)/\1/p' "$tmp/out")
  # the compute part is GPipe's; only hops' latencies differ, by less than 2 m alpha
  base=$(((m + p - 1) * (F + B)))
  if [ -n "$got" ] && [ "$got" -ge "$base" ] && [ "$got" -lt $((base + 2 * m * A + 2 * (p - 1) * A)) ] \
     && [ "$peak" = $p ]; then
    ok "1F1B p=$p m=$m: $got ns, $p activations held"
  else
    bad "1F1B p=$p m=$m" "got $got ns peak $peak"
  fi
done

# flops=: arithmetic moves the clock (5000 operations at 1 GFLOP/s); without it, free
guarded "$bin" run "$dir/flops.lua" --net $net,flops=1G --no-tui >"$tmp/out" 2>"$tmp/err" </dev/null
[ "$(tr '\n' ' ' <"$tmp/out")" = "[rank 0] 5000 [rank 0] 1005000 " ] \
  && ok "flops=1G: 5000 operations take 5 us, dist.compute(1) 1 ms" || bad "flops=1G"
guarded "$bin" run "$dir/flops.lua" --net $net --no-tui >"$tmp/out" 2>"$tmp/err" </dev/null
[ "$(tr '\n' ' ' <"$tmp/out")" = "[rank 0] 0 [rank 0] 1000000 " ] \
  && ok "no flops=: arithmetic is free" || bad "no flops="

# the report: the makespan and where each rank's time went, the same on
# every engine and in a replay of the trace
for e in $engines; do
  guarded "$bin" run "$dir/fanin.lua" --engine $e --net $net --no-tui >"$tmp/out" 2>"$tmp/err" </dev/null
  sed -n '/^time (/,/^verdict/p' "$tmp/err" | grep -v '^verdict' >"$tmp/time.$e"
done
cat >"$tmp/time.want" <<'WANT'
time (alpha=10us,bandwidth=1GB/s): makespan 13 us
  rank 0: ends at 13 us; compute 0 ns, communication 13 us, waiting 0 ns
  rank 1: ends at 11 us; compute 0 ns, communication 11 us, waiting 0 ns
  rank 2: ends at 12 us; compute 0 ns, communication 11 us, waiting 1 us
  rank 3: ends at 13 us; compute 0 ns, communication 11 us, waiting 2 us
WANT
for e in $engines; do
  cmp -s "$tmp/time.$e" "$tmp/time.want" && ok "$e: the report's times (makespan 13 us, per rank)" \
    || bad_showing "$tmp/time.$e" "$e: the report's times"
done
expect "--report json: the makespan" 0 '"makespan_ns": 13000' -- \
  run "$dir/fanin.lua" --net $net --report json
expect "--report json: per rank" 0 '"wait_ns": 2000' -- \
  run "$dir/fanin.lua" --net $net --report json
expect "--report json without a model: time is null" 0 '"time": null' -- \
  run "$dir/chain.lua" --report json

for e in $engines; do
  replay_same "$e: fan-in" "$dir/fanin.lua" --engine $e --net $net --no-tui
  grep -q '"net":"alpha=10us,bandwidth=1GB/s"' "$tmp/t.jsonl" && ok "$e: the trace records the model" \
    || bad_showing "$tmp/t.jsonl" "$e: the trace records the model"
  grep -q '"type":"vtime".*"vt_arrive":13000,"what":"recv","vrank":0' "$tmp/t.jsonl" \
    && ok "$e: the trace carries the virtual times" \
    || bad_showing "$tmp/t.jsonl" "$e: the trace carries the virtual times"
  replay_same "$e: ring all_reduce" "$dir/coll.lua" -n 4 --algo all_reduce=ring --engine $e --net $net
  replay_same "$e: 1F1B" "$tmp/1f1b.lua" -n 4 --engine $e --net $net
done
guarded "$bin" run "$dir/fanin.lua" --net $net --trace "$tmp/f.jsonl" --no-tui >/dev/null 2>&1 </dev/null
expect "replay --net times the recorded program under another model" 0 \
  "time (alpha=1us,bandwidth=1GB/s): makespan 4 us" -- replay "$tmp/f.jsonl" --no-tui --net alpha=1us,bandwidth=1GB/s
guarded "$bin" run "$dir/fanin.lua" --trace "$tmp/plain.jsonl" --no-tui >/dev/null 2>&1 </dev/null
expect "replay --net of a trace recorded without a model: refused" 1 \
  "the trace was recorded without a network model" -- replay "$tmp/plain.jsonl" --no-tui --net $net

# the other commands take the model through
guarded "$bin" bench --engine thread --op pingpong --sizes 1000,1000000 --iters 4 --format csv \
  --net $net >"$tmp/out" 2>"$tmp/err" </dev/null
if grep -q ',1000,4,[0-9]*,11\.0*,' "$tmp/out" && grep -q ',1000000,4,[0-9]*,1010\.0*,' "$tmp/out"; then
  ok "bench --net: ping-pong takes alpha + n beta (11 us, 1010 us)"
else
  bad "bench --net: ping-pong takes alpha + n beta"
fi
expect "export --net: re-timed before drawing" 0 "" -- \
  export "$tmp/f.jsonl" --format mermaid --net ethernet-1g --out "$tmp/f.md"
expect "export --net of a trace without a model: refused" 1 \
  "recorded without a network model" -- export "$tmp/plain.jsonl" --format svg --net $net --out "$tmp/x.svg"
expect "grade --net: a bad model is refused" 1 "unknown model 'fast'" -- grade ring x.lua --net fast

# random programs (tests/time/random.lua): the same virtual times and report
# on every engine, send mode's run and replay, whatever the real timing
for seed in 1 2 3 4; do
  sed "s/^local seed = SEED or 1/local seed = $seed/" "$dir/random.lua" >"$tmp/r.lua"
  for m in rendezvous eager; do
    ref=
    for e in $engines; do
      guarded "$bin" run "$tmp/r.lua" --engine $e --send-mode $m --no-recheck --net alpha=3us,bandwidth=2GB/s \
        --trace "$tmp/r.jsonl" --no-tui >"$tmp/out" 2>"$tmp/err" </dev/null
      st=$?
      { sort "$tmp/out"; sed -n '/^time (/,/^verdict/p' "$tmp/err"; } >"$tmp/r.$e"
      guarded "$bin" replay "$tmp/r.jsonl" --no-tui >"$tmp/rep.out" 2>"$tmp/rep.err" </dev/null
      { sort "$tmp/rep.out"; sed -n '/^time (/,/^verdict/p' "$tmp/rep.err"; } >"$tmp/r.replay"
      if [ $st != 0 ] || ! grep -q '^time (.*makespan' "$tmp/r.$e"; then
        bad "random program $seed, $m, $e" "status $st"
      elif ! cmp -s "$tmp/r.$e" "$tmp/r.replay"; then
        bad_showing "$tmp/r.replay" "random program $seed, $m, $e: replay differs"
      elif [ -n "$ref" ] && ! cmp -s "$tmp/r.$e" "$ref"; then
        diff "$ref" "$tmp/r.$e" | head -10
        bad "random program $seed, $m: $e differs from thread"
      else
        ok "random program $seed, $m, $e: $(grep -o 'makespan .*' "$tmp/r.$e"), replay the same"
      fi
      [ -z "$ref" ] && cp "$tmp/r.$e" "$tmp/r.ref" && ref=$tmp/r.ref
    done
  done
done

# the same program gives the same times on every run
for i in 1 2 3; do
  guarded "$bin" run "$dir/fanin.lua" --net $net --no-tui 2>/dev/null </dev/null | sort >"$tmp/run$i"
done
cmp -s "$tmp/run1" "$tmp/run2" && cmp -s "$tmp/run1" "$tmp/run3" && ok "three runs, same times" \
  || bad "three runs, same times"

# the model's spelling
expect "--net none is real time" 0 "" -- run "$dir/chain.lua" --net none --no-tui
expect "--net preset" 0 "" -- run "$dir/chain.lua" --net ethernet-1g --no-tui
expect "--net unknown preset" 1 "unknown model 'token-ring'" -- run "$dir/chain.lua" --net token-ring
expect "--net without bandwidth" 1 "needs both alpha=TIME and bandwidth=RATE" -- \
  run "$dir/chain.lua" --net alpha=5us
expect "--net bad unit" 1 "bandwidth=10Gb: expected a decimal number with a unit" -- \
  run "$dir/chain.lua" --net alpha=5us,bandwidth=10Gb
# each figure has a range, said when a value is outside it (no clock that
# saturates, no value that silently becomes another), and numbers are decimal
expect "--net alpha too long: the range" 1 \
  "alpha=1e9s is out of range: alpha must be at least 1ns and at most 3600s" -- \
  run "$dir/pingpong.lua" --no-tui --net alpha=1e9s,bandwidth=1GB/s
expect "--net alpha way too long: the range" 1 \
  "alpha=1e10s is out of range: alpha must be at least 1ns and at most 3600s" -- \
  run "$dir/pingpong.lua" --no-tui --net alpha=1e10s,bandwidth=1GB/s
expect "--net alpha under 1ns: refused" 1 "alpha=0.5ns is out of range" -- \
  run "$dir/chain.lua" --no-tui --net alpha=0.5ns,bandwidth=1GB/s
expect "--net flops under 1: refused, not free" 1 \
  "flops=0.4 is out of range: flops must be at least 1 and at most 1000P" -- \
  run "$dir/chain.lua" --no-tui --net alpha=1us,bandwidth=1GB/s,flops=0.4
expect "--net flops 1e-30: refused, not free" 1 "flops=1e-30 is out of range" -- \
  run "$dir/chain.lua" --no-tui --net alpha=1us,bandwidth=1GB/s,flops=1e-30
expect "--net hexadecimal alpha: refused" 1 "alpha=0x10us: expected a decimal number" -- \
  run "$dir/chain.lua" --no-tui --net alpha=0x10us,bandwidth=1GB/s
expect "--net hexadecimal flops: refused" 1 "flops=0x10: expected a decimal number" -- \
  run "$dir/chain.lua" --no-tui --net alpha=1us,bandwidth=1GB/s,flops=0x10
expect "--net the longest alpha" 0 "time (alpha=3600s,bandwidth=1GB/s): makespan" -- \
  run "$dir/pingpong.lua" --no-tui --net alpha=3600s,bandwidth=1GB/s
printf -- '--- net: alpha=1us,bandwidth=1GB/s\nlocal t = tensor.zeros(250)\nif rank == 0 then dist.send(t, 1) else dist.recv(t, 0) end\nprint(string.format("%%.0f", dist.time() * 1e9))\n' >"$tmp/hdr.lua"
vt "the header's net: model" 2000 "$tmp/hdr.lua"
vt "--net wins over the header" 11000 "$tmp/hdr.lua" --net $net
printf -- '--- net: fast\nprint(1)\n' >"$tmp/badhdr.lua"
expect "a bad header net: names the line" 1 "badhdr.lua:1: net: unknown model 'fast'" -- run "$tmp/badhdr.lua"

finish
