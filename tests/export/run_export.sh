#!/usr/bin/env bash
# run_export.sh -- commsim export and run --export: every lesson of the
# chapters exports in every format, and each picture is read back by a real
# consumer where one is installed: xmllint and rsvg-convert for SVG, the
# Trace Event Format checks for Perfetto, Mermaid's own parser (npm's
# mermaid in node, when ./setup could install it) and the grammar subset we
# emit, asciinema's parser for asciicasts. Then a golden PNG of the deadlock
# demo, bad traces (the replay's FILE:LINE errors) and the options.
. "$(dirname "$0")/../lib.sh"
here="$top_srcdir/tests/export"
L="$top_srcdir/lessons"
# the system python starts fast (a pyenv shim takes most of a second) and has asciinema
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3) || skip_all "python3 is needed to check the pictures"
have() { command -v "$1" >/dev/null 2>&1; }

# ---- every lesson, every format; each consumer reads all of its pictures at once
mkdir -p "$tmp/pics"
for script in "$L"/[0-9][0-9]-*/*.lua; do
  name=${script#"$L"/}
  base=$tmp/pics/$(echo "${name%.lua}" | tr / _)
  rm -f "$tmp/t.jsonl"
  guarded "$bin" run "$script" --no-tui --trace "$tmp/t.jsonl" >/dev/null 2>"$tmp/run.err" </dev/null
  if [ ! -s "$tmp/t.jsonl" ]; then # a run that could not start here (no GPU for its engine)
    skip "$name: exports" "the run wrote no trace here: $(head -n 1 "$tmp/run.err")"
    continue
  fi
  for fmt in svg mermaid perfetto asciicast; do
    if "$bin" export "$tmp/t.jsonl" --format $fmt --out "$base.$fmt" 2>"$tmp/err"; then
      ok "$name: exports $fmt"
    else
      bad "$name: exports $fmt"
    fi
  done
done
# consumer NAME COMMAND...: one case per picture the command names in its complaints.
consumer() {
  local name=$1
  shift
  if "$@" >"$tmp/chk" 2>&1; then
    ok "$name"
  else
    bad_showing "$tmp/chk" "$name"
  fi
}
if have xmllint; then consumer "svg: xmllint reads every lesson's picture" xmllint --noout "$tmp"/pics/*.svg
else skip "svg: xmllint is not installed"; fi
if have rsvg-convert; then
  for f in "$tmp"/pics/*.svg; do rsvg-convert "$f" -o "${f%.svg}.png" || echo "$f: rsvg-convert fails"; done >"$tmp/rsvg" 2>&1
  consumer "svg: rsvg-convert renders every lesson's picture" test ! -s "$tmp/rsvg"
  [ -s "$tmp/rsvg" ] && show "$tmp/rsvg"
else skip "svg: rsvg-convert is not installed"; fi
consumer "svg: collectives' messages inside their bands, user arrows outside, steps labelled" "$py" "$here/check_svg.py" "$tmp"/pics/*.svg
# README's inline diagram is what the chain exports (its participants and
# arrows: whether a rank blocks first, a note, depends on the run's timing),
# and Mermaid reads it
awk '/^```mermaid$/{on=1; next} /^```$/{on=0} on' "$top_srcdir/README.md" >"$tmp/readme.mmd"
guarded "$bin" run "$L/02-point-to-point/chain.lua" -n 4 --no-tui --export mermaid:"$tmp/chain.mmd" >/dev/null 2>&1 </dev/null
if [ -s "$tmp/readme.mmd" ] && cmp -s <(grep -v 'Note over' "$tmp/readme.mmd") <(grep -v 'Note over' "$tmp/chain.mmd"); then
  ok "README's Mermaid diagram is the chain's export"
else
  bad "README's Mermaid diagram is the chain's export"
fi
cp "$tmp/readme.mmd" "$tmp/pics/README.mermaid"
# Mermaid itself where ./setup could install it (npm), offline in node; it
# must refuse a broken diagram too, or its passing would say nothing
mm=$here/mermaid
if have node && [ -d "$mm/node_modules/mermaid" ]; then
  consumer "mermaid: Mermaid itself parses every lesson's diagram as a sequenceDiagram" node "$mm/parse.mjs" "$tmp"/pics/*.mermaid
  printf 'sequenceDiagram\n    participant R0 as Rank 0\n    R0->>: 16 B tag 0\n' >"$tmp/broken.mmd"
  if node "$mm/parse.mjs" "$tmp/broken.mmd" >"$tmp/chk" 2>&1; then bad "mermaid: Mermaid refuses a broken diagram"
  else ok "mermaid: Mermaid refuses a broken diagram"; fi
else
  skip "mermaid: Mermaid itself is not installed (./setup installs it with npm): the grammar subset only"
fi
consumer "mermaid: every lesson's diagram is in the grammar we emit" "$py" "$here/check_mermaid.py" "$tmp"/pics/*.mermaid
consumer "perfetto: every lesson's trace events are well formed" "$py" "$here/check_perfetto.py" "$tmp"/pics/*.perfetto
consumer "asciicast: every lesson's recording is asciicast v2" "$py" "$here/check_cast.py" 100 30 "$tmp"/pics/*.asciicast

# ---- every lesson again with a network model: SVG to scale and Perfetto in
# virtual time, read back by the same consumers
mkdir -p "$tmp/net"
for script in "$L"/[0-9][0-9]-*/*.lua; do
  name=${script#"$L"/}
  base=$tmp/net/$(echo "${name%.lua}" | tr / _)
  rm -f "$tmp/t.jsonl"
  guarded "$bin" run "$script" --net ethernet-1g --no-tui --trace "$tmp/t.jsonl" >/dev/null 2>&1 </dev/null
  [ -s "$tmp/t.jsonl" ] || continue
  "$bin" export "$tmp/t.jsonl" --format svg --out "$base.svg" 2>>"$tmp/net/err" || echo "$name: svg" >>"$tmp/net/fail"
  "$bin" export "$tmp/t.jsonl" --format perfetto --out "$base.perfetto" 2>>"$tmp/net/err" || echo "$name: perfetto" >>"$tmp/net/fail"
done
consumer "model: every lesson exports in virtual time" test ! -s "$tmp/net/fail"
if have xmllint; then consumer "model: xmllint reads every lesson's picture to scale" xmllint --noout "$tmp"/net/*.svg; fi
consumer "model: every lesson's picture to scale: labels apart" "$py" "$here/check_svg.py" "$tmp"/net/*.svg
consumer "model: every lesson's Perfetto in virtual time is well formed" "$py" "$here/check_perfetto.py" "$tmp"/net/*.perfetto

# ---- what each format says about the deadlock demo
"$bin" run "$L/02-point-to-point/deadlock.lua" --no-tui --trace "$tmp/d.jsonl" >/dev/null 2>&1
expect "mermaid: a note over the deadlock's ranks" 0 "Note over R0,R1: deadlock: no rank can make progress" -- export "$tmp/d.jsonl" -f mermaid
expect "mermaid: the blocked waits"   0 "Note over R1: blocked in send -> 0 tag 0 16 B at line 19" -- export "$tmp/d.jsonl" -f mermaid
expect "perfetto: the verdict as a global instant" 0 '"ph":"i","s":"g"' -- export "$tmp/d.jsonl" -f perfetto
expect "svg: the verdict beside the picture" 0 "deadlock: no rank can make progress" -- export "$tmp/d.jsonl" -f svg
expect "svg: the dark theme"          0 'fill="#0d1117"' -- export "$tmp/d.jsonl" -f svg --theme dark
expect "asciicast: the visualizer's deadlock frame" 0 "wait-for cycle: rank 0" -- export "$tmp/d.jsonl" -f asciicast
"$bin" run "$L/03-collectives/ring_allreduce.lua" --no-tui --trace "$tmp/r.jsonl" >/dev/null 2>&1
expect "mermaid: a collective in a rect" 0 "Note over R0,R3: all_reduce (ring) SUM" -- export "$tmp/r.jsonl" -f mermaid
expect "svg: a collective band names its algorithm" 0 ">ring SUM, 24 msgs<" -- export "$tmp/r.jsonl" -f svg
for label in RS1 RS3 AG1 AG3 reduce-scatter all-gather; do
  expect "svg: the ring's schedule labelled: $label" 0 ">$label<" -- export "$tmp/r.jsonl" -f svg
done
# two calls on one context overlapping in time: a message is its own call's
# (by the call's number, its tag), not the call open at its time
expect "svg: overlapping calls count their own messages (first)"  0 ">ring SUM, 3 msgs<" -- export "$here/overlap.jsonl" -f svg
expect "svg: overlapping calls count their own messages (second)" 0 ">ring, 3 msgs<" -- export "$here/overlap.jsonl" -f svg
# an eager send posted before its sender entered the all_reduce, received
# after: the message is drawn before the band, not inside it
cat >"$tmp/early.lua" <<'LUA'
local t = tensor.zeros(1)
if rank == 0 then dist.send(t, 1) else dist.compute(50); dist.recv(t, 0) end
dist.all_reduce(t)
LUA
"$bin" run "$tmp/early.lua" -n 2 --send-mode eager --no-tui --trace "$tmp/early.jsonl" >/dev/null 2>&1
"$bin" export "$tmp/early.jsonl" -f svg -o "$tmp/early.svg" 2>"$tmp/err"
consumer "svg: a message sent before its sender entered a call is drawn before the band" "$py" "$here/check_svg.py" "$tmp/early.svg"
"$bin" run "$L/02-point-to-point/isend_reuse.lua" --no-tui --trace "$tmp/p.jsonl" >/dev/null 2>&1
expect "svg: pitfalls listed by number" 0 "pitfall 1 (rank" -- export "$tmp/p.jsonl" -f svg
expect "perfetto: pitfalls as instants" 0 '"cat":"pitfall"' -- export "$tmp/p.jsonl" -f perfetto
# a rank's error: beneath the picture as the report gives it (the picture
# once said "every rank finished"), and in modelled time an x where the
# rank's clock stood (after its 2 ms compute: x = 96 + 1200 px)
cat >"$tmp/fail.lua" <<'LUA'
if rank == 0 then dist.compute(2); error("rank 0 gives up") end
dist.recv(tensor.zeros(1), 0)
LUA
"$bin" run "$tmp/fail.lua" -n 2 --net alpha=1us,bandwidth=1GB/s --no-tui --trace "$tmp/fail.jsonl" >/dev/null 2>&1
for time in real virtual; do
  expect "svg: a rank's error beneath the picture ($time time)" 0 "rank 0 failed: fail.lua:1: rank 0 gives up" \
    -- export "$tmp/fail.jsonl" -f svg --time $time
  count_lines "svg: an error is not 'every rank finished' ($time time)" 0 "every rank finished"
done
expect "svg: the error's x where the rank's clock stood" 0 '<text x="1296.0" y="134.0" font-size="18" fill="#cf222e" text-anchor="middle" font-weight="bold">x</text>' -- export "$tmp/fail.jsonl" -f svg
# a run the timeout stopped: beneath the picture, where it found each rank, as
# the report says it. In modelled time rank 0, stopped in its receive, waits
# from its clock (0) to the end of the time drawn (rank 1's 1 ms compute: x =
# 96 + 1200 px) and ends in a square there; rank 1 ends in a square where its
# clock stood, not in the dot of a rank that finished. Perfetto: rank 0's wait
# is open from 0.
cat >"$tmp/stuck.lua" <<'LUA'
if rank == 0 then dist.recv(tensor.zeros(1), 1) else dist.compute(1); while true do end end
LUA
guarded "$bin" run "$tmp/stuck.lua" -n 2 --net alpha=1us,bandwidth=1GB/s --timeout 0.3 --step-limit 0 \
  --no-tui --trace "$tmp/stuck.jsonl" >/dev/null 2>&1 </dev/null
for time in real virtual; do
  for where in "rank 0 was in recv from rank 1 (tag 0, float32 [1], 4 bytes) at stuck.lua:1" \
               "rank 1 was running at stuck.lua:1"; do
    expect "svg: where the timeout found them ($time time): ${where%% was*}" 0 "$where" \
      -- export "$tmp/stuck.jsonl" -f svg --time $time
  done
done
expect "svg: stopped in a wait, it waits to the end of the time drawn" 0 \
  '<rect x="96.00" y="123.0" width="1200.00" height="10" fill="#e8a33d"><title>waiting when the run stopped it</title>' \
  -- export "$tmp/stuck.jsonl" -f svg
count_lines "svg: a square for each rank stopped" 2 '<rect x="1291.00" '
count_lines "svg: no end dot for a rank stopped" 0 '<title>end</title>'
expect "perfetto: a wait the timeout stopped is open from the rank's clock" 0 \
  '{"ph":"B","pid":1,"tid":0,"ts":0.000,"cat":"blocked","name":"blocked","args":{"line":1}}' \
  -- export "$tmp/stuck.jsonl" -f perfetto
cp "$tmp/out" "$tmp/stuck.json"
consumer "perfetto: a timeout's open wait is well formed" "$py" "$here/check_perfetto.py" "$tmp/stuck.json"
# Mermaid: the timeout is the run's, a note over every rank (it was over
# rank 0, as if rank 0 had failed), then where it found each rank
expect "mermaid: the timeout over every rank" 0 \
  "Note over R0,R1: timeout: the run did not finish within 0.3 s (--timeout)" -- export "$tmp/stuck.jsonl" -f mermaid
count_lines "mermaid: the timeout is no rank's error" 0 "error: timeout"
for where in "R0: stopped: in recv from rank 1 (tag 0, float32 [1], 4 bytes) at stuck.lua:1" \
             "R1: stopped: running at stuck.lua:1"; do
  expect "mermaid: where the timeout found ${where%%:*}" 0 "Note over $where" -- export "$tmp/stuck.jsonl" -f mermaid
done
cp "$tmp/out" "$tmp/stuck.mmd"
consumer "mermaid: the stopped ranks' notes are in the grammar we emit" "$py" "$here/check_mermaid.py" "$tmp/stuck.mmd"
if have node && [ -d "$mm/node_modules/mermaid" ]; then
  consumer "mermaid: Mermaid parses the stopped ranks' notes" node "$mm/parse.mjs" "$tmp/stuck.mmd"
fi

# ---- a bigger trace: the SVG aggregates (and says so) instead of growing
cat >"$tmp/big.lua" <<'LUA'
local t, r = tensor.zeros(4), tensor.zeros(4)
local right, left = (rank + 1) % world_size, (rank - 1) % world_size
for i = 1, 400 do
  local w = dist.isend(t, right)
  dist.recv(r, left)
  w:wait()
end
LUA
guarded "$bin" run "$tmp/big.lua" -n 8 --no-tui --trace "$tmp/big.jsonl" >/dev/null 2>&1 </dev/null
"$bin" export "$tmp/big.jsonl" -f svg -o "$tmp/big.svg" 2>"$tmp/err"
size=$(wc -c <"$tmp/big.svg")
if [ "$size" -lt 1000000 ] && grep -q "Aggregated: the first [0-9]* diagram columns ([0-9]* messages) are not drawn" "$tmp/big.svg"; then
  ok "svg: 3200 messages drawn in $size bytes, the aggregation said on the picture"
else
  bad "svg: a big trace aggregates" "$size bytes"
fi
"$bin" export "$tmp/big.jsonl" -f perfetto -o "$tmp/big.json" 2>"$tmp/err"
consumer "perfetto: the big trace's events are well formed" "$py" "$here/check_perfetto.py" "$tmp/big.json"

# ---- a run with a network model: drawn in virtual time, to scale. Each
# ping-pong message of 4 bytes takes alpha + 4 B / (1 GB/s) = 100.004 us.
guarded "$bin" run "$L/02-point-to-point/pingpong.lua" --net alpha=100us,bandwidth=1GB/s --no-tui \
  --trace "$tmp/v.jsonl" >/dev/null 2>&1 </dev/null
"$bin" export "$tmp/v.jsonl" -f svg -o "$tmp/v.svg" 2>"$tmp/err"
"$bin" export "$tmp/v.jsonl" -f perfetto -o "$tmp/v.json" 2>>"$tmp/err"
consumer "model: every message 100.004 us long in the SVG and in Perfetto" "$py" "$here/check_scale.py" 100004 "$tmp/v.svg" "$tmp/v.json"
consumer "model: the to-scale SVG is well formed" xmllint --noout "$tmp/v.svg"
consumer "model: Perfetto in virtual time is well formed" "$py" "$here/check_perfetto.py" "$tmp/v.json"
expect "model: the makespan in the title" 0 "makespan 1.00004 ms" -- export "$tmp/v.jsonl" -f svg
# the makespan is the report's, to the nanosecond, and only when every rank
# ended: a deadlock's drawing stops somewhere, but that is no makespan
guarded "$bin" run "$L/02-point-to-point/timing.lua" --net ethernet-1g --no-tui --trace "$tmp/vt.jsonl" \
  >/dev/null 2>&1 </dev/null
expect "model: the title's makespan is the report's, exact" 0 "makespan 150.200272 ms (--net" -- export "$tmp/vt.jsonl" -f svg
cp "$tmp/out" "$tmp/vt.svg"
# the virtual times are the events' own, timed again as replay times them: a
# vtime line edited to the end of time changes nothing in the picture
n=$(grep -n '"type":"vtime"' "$tmp/vt.jsonl" | head -1 | cut -d: -f1)
sed "${n}s/\"vt_arrive\":[0-9]*/\"vt_arrive\":9223372036854775807/" "$tmp/vt.jsonl" >"$tmp/vtx.jsonl"
cmp -s "$tmp/vt.jsonl" "$tmp/vtx.jsonl" && bad "model: the edited trace differs" "sed changed nothing"
expect "model: an edited vtime does not move the picture" 0 "makespan 150.200272 ms (--net" -- export "$tmp/vtx.jsonl" -f svg
cmp -s "$tmp/out" "$tmp/vt.svg" && ok "model: an edited vtime: the same svg" || bad "model: an edited vtime: the same svg"
guarded "$bin" run "$L/02-point-to-point/deadlock.lua" --net ethernet-1g --no-tui --trace "$tmp/vd.jsonl" >/dev/null 2>&1 </dev/null
expect "model: a deadlock has no makespan" 0 "makespan not known, the run did not end normally" -- export "$tmp/vd.jsonl" -f svg
# a deadlock's waits never end, so none is timed: each blocked rank's last
# wait runs from where its clock stood into the deadlock. In pitfalls.lua
# rank 2 blocks at 0, rank 0 once its first message arrived (10.008 us, the
# end of time drawn: x = 96 + 1200 px)
guarded "$bin" run "$L/02-point-to-point/pitfalls.lua" --net alpha=10us,bandwidth=1GB/s --no-tui \
  --trace "$tmp/vp.jsonl" >/dev/null 2>&1 </dev/null
"$bin" export "$tmp/vp.jsonl" -f svg -o "$tmp/vp.svg" 2>"$tmp/err"
for at in "96.00 rank 2 from 0" "1296.00 rank 0 from its clock"; do
  grep -q "<rect x=\"${at%% *}\" [^>]*fill=\"#cf222e\"><title>blocked for good" "$tmp/vp.svg" &&
    ok "model: blocked for good: ${at#* }" || bad "model: blocked for good: ${at#* }" "no bar at x=${at%% *}"
done
expect "model: the deadlock's column beside the picture" 0 'recv from 1, tag 0, line 20' -- export "$tmp/vp.jsonl" -f svg
n=$("$bin" export "$tmp/vp.jsonl" -f svg | grep -c 'blocked for good')
[ "$n" = 2 ] && ok "model: two ranks blocked for good, the finished one not" || bad "model: ranks blocked for good" "got $n"
"$bin" export "$tmp/vp.jsonl" -f perfetto -o "$tmp/vp.json" 2>"$tmp/err"
consumer "model: Perfetto with open slices is well formed" "$py" "$here/check_perfetto.py" "$tmp/vp.json"
expect "model: Perfetto: rank 0 blocked for good at its clock" 0 '"ph":"B","pid":1,"tid":0,"ts":10.008,"cat":"blocked"' -- export "$tmp/vp.jsonl" -f perfetto
expect "model: Perfetto: rank 2 blocked for good from 0" 0 '"ph":"B","pid":1,"tid":2,"ts":0.000,"cat":"blocked"' -- export "$tmp/vp.jsonl" -f perfetto
# --to just before the verdict: no deadlock drawn yet; rank 2, blocked from
# 0, waits to the end of the time drawn, in both pictures
d=$(grep -n '"type":"deadlock"' "$tmp/vp.jsonl" | cut -d: -f1)
expect "model: --to before the verdict: rank 2 waits to the end of the time drawn" 0 \
  '<rect x="96.00" y="235.0" width="1200.00" height="10" fill="#e8a33d"><title>waiting when the drawn events end</title>' \
  -- export "$tmp/vp.jsonl" -f svg --to $((d - 1))
count_lines "model: --to before the verdict: no deadlock column" 0 'blocked for good'
expect "model: --to before the verdict: Perfetto's rank 2 blocked from 0" 0 \
  '"ph":"B","pid":1,"tid":2,"ts":0.000,"cat":"blocked"' -- export "$tmp/vp.jsonl" -f perfetto --to $((d - 1))
# --from the verdict: no timed span in the window, yet each rank's clock is
# where it stood in the run (its clock is the run's, not the window's)
for at in "96.00 rank 2 from 0" "1296.00 rank 0 from its clock"; do
  "$bin" export "$tmp/vp.jsonl" -f svg --from $((d - 1)) |
    grep -q "<rect x=\"${at%% *}\" [^>]*fill=\"#cf222e\"><title>blocked for good" &&
    ok "model: --from the verdict: ${at#* }" || bad "model: --from the verdict: ${at#* }" "no bar at x=${at%% *}"
done
expect "model: --time real draws the event order" 0 "time flows right" -- export "$tmp/v.jsonl" -f svg --time real
expect "model: --time real in Perfetto" 0 '"time":"real, recorded"' -- export "$tmp/v.jsonl" -f perfetto --time real
expect "model: the asciicast's diagram to scale" 0 "to scale: 1 row =" -- export "$tmp/v.jsonl" -f asciicast
expect "model: --time takes virtual or real" 1 "--time: virtual or real" -- export "$tmp/v.jsonl" -f svg --time wall
# an option the format does not read is refused, not dropped
expect "--theme on an asciicast: refused" 1 "commsim export: --theme: asciicast does not use it (only svg)" \
  -- export "$tmp/v.jsonl" -f asciicast --theme dark
expect "--speed on perfetto: refused" 1 "commsim export: --speed: perfetto does not use it (only asciicast)" \
  -- export "$tmp/v.jsonl" -f perfetto --speed 3
expect "--time on mermaid: refused" 1 "commsim export: --time: mermaid does not use it (only svg perfetto asciicast)" \
  -- export "$tmp/v.jsonl" -f mermaid --time real
expect "--width on svg: read" 0 "<svg" -- export "$tmp/v.jsonl" -f svg --width 200 --theme dark
# asked for modelled time, a trace without a model is refused: a picture in
# real time would pass for one
expect "--time virtual on a trace without a model: refused" 1 \
  "--time virtual: $tmp/r.jsonl was recorded without a network model" -- export "$tmp/r.jsonl" -f svg --time virtual
# the built-in ring all_reduce as a band over its requests' virtual times:
# 2 (n - 1) = 6 steps of alpha + 4 B / (1 GB/s) = 10.004 us each
guarded "$bin" run "$L/03-collectives/ring_allreduce.lua" --net alpha=10us,bandwidth=1GB/s --no-tui \
  --trace "$tmp/vr.jsonl" >/dev/null 2>&1 </dev/null
expect "model: the all_reduce's slice lasts its 6 steps" 0 '"name":"all_reduce (ring)","dur":60.024' -- export "$tmp/vr.jsonl" -f perfetto
expect "model: the all_reduce's band in the SVG" 0 ">all_reduce ring<" -- export "$tmp/vr.jsonl" -f svg

# ---- golden image: the deadlock demo's SVG as a PNG, stable across exports
if have rsvg-convert; then
  "$bin" export "$tmp/d.jsonl" -f svg -o "$tmp/d1.svg" && "$bin" export "$tmp/d.jsonl" -f svg -o "$tmp/d2.svg"
  rsvg-convert "$tmp/d1.svg" -o "$tmp/d1.png" && rsvg-convert "$tmp/d2.svg" -o "$tmp/d2.png"
  size=$("$py" -c 'import struct,sys; d=open(sys.argv[1],"rb").read(24); print("%dx%d" % struct.unpack(">II", d[16:24]))' "$tmp/d1.png")
  if [ "$size" = 760x410 ]; then ok "golden: deadlock PNG is 760x410"; else bad "golden: deadlock PNG size" "got $size"; fi
  if cmp -s "$tmp/d1.svg" "$tmp/d2.svg" && cmp -s "$tmp/d1.png" "$tmp/d2.png"; then
    ok "golden: two exports of one trace render to the same bytes"
  else
    bad "golden: two exports differ"
  fi
else
  skip "golden PNG: rsvg-convert is not installed"
fi

# ---- --from/--to, sizes
# the verdict replay gives the events drawn: before the deadlock both ranks still run
expect "--to: the verdict of the events up to there" 0 '"verdict":"failed","kind":"incomplete"' -- export "$tmp/d.jsonl" -f perfetto --to 3
expect "--to: svg says the run had not ended" 0 "the first 3 events end before the run did: 2 ranks had not finished" -- export "$tmp/d.jsonl" -f svg --to 3
count_lines "--to: svg draws no 'every rank finished'" 0 "every rank finished"
expect "--to: the svg title's verdict" 0 "deadlock.lua: 2 ranks, failed" -- export "$tmp/d.jsonl" -f svg --to 3
# drawn up to the deadlock, before the ranks unwind: both waits still open,
# each a slice without an end in Perfetto
n=$(grep -n '"type":"deadlock"' "$tmp/d.jsonl" | cut -d: -f1)
"$bin" export "$tmp/d.jsonl" -f perfetto --to "$n" -o "$tmp/dto.json" 2>"$tmp/err"
consumer "--to the deadlock: Perfetto with open slices is well formed" "$py" "$here/check_perfetto.py" "$tmp/dto.json"
n=$(grep -c '"ph":"B".*"cat":"blocked"' "$tmp/dto.json")
[ "$n" = 2 ] && ok "--to the deadlock: both ranks' waits open in Perfetto" || bad "--to the deadlock: open waits" "got $n"
head -n 2 "$tmp/d.jsonl" >"$tmp/d2.jsonl"
expect "short trace: mermaid says the run had not ended" 0 "Note over R0,R1: the trace ends before the run did: 2 ranks had not finished" -- export "$tmp/d2.jsonl" -f mermaid
expect "short trace: perfetto's verdict as replay's" 0 '"verdict":"failed","kind":"incomplete"' -- export "$tmp/d2.jsonl" -f perfetto
printf '{"type":"run"' >"$tmp/h.jsonl"
expect "trace cut in its header: nothing to draw, status 1" 1 "inside its run header: nothing to show" -- export "$tmp/h.jsonl" -f svg
count_lines "trace cut in its header: no empty picture" 0 "<svg"
# a window with nothing in it is a usage error, not an empty 'ok' picture
expect "--from not before --to: refused" 1 "--from 5 is not before --to 3" -- export "$tmp/d.jsonl" -f svg --from 5 --to 3
expect "--from past the end: refused" 1 "--from 99999: $tmp/d.jsonl has" -- export "$tmp/d.jsonl" -f svg --from 99999
expect "--to past the end: drawn to the end" 0 "deadlock.lua: 2 ranks, deadlock" -- export "$tmp/d.jsonl" -f svg --to 99999
expect "--width -1: refused" 1 "--width: '-1' is not a number from 20 to 1000" -- export "$tmp/d.jsonl" -f asciicast --width -1
count_lines "--width -1: one message" 1 "commsim export:"
expect "--speed 1e9: the refusal names the limit" 1 "--speed: '1e9' is not a number above 0, at most 1e6" -- export "$tmp/d.jsonl" -f asciicast --speed 1e9
"$bin" export "$tmp/r.jsonl" -f asciicast --width 80 --height 24 -o "$tmp/s.cast" 2>"$tmp/err"
if "$py" "$here/check_cast.py" 80 24 "$tmp/s.cast" >"$tmp/chk" 2>&1; then ok "asciicast: 80x24"; else bad "asciicast: 80x24"; fi
# wide characters take two columns whatever the locale the export runs under
printf 'print(string.rep("\345\271\205\345\272\203", 40))\ndist.barrier()\n' >"$tmp/wide.lua"
"$bin" run "$tmp/wide.lua" -n 2 --no-tui --trace "$tmp/wide.jsonl" >/dev/null 2>&1
LC_ALL=C "$bin" export "$tmp/wide.jsonl" -f asciicast --width 80 --height 24 -o "$tmp/wide.cast" 2>"$tmp/err"
consumer "asciicast: wide characters fit the width under LC_ALL=C" "$py" "$here/check_cast.py" 80 24 "$tmp/wide.cast"
# a script's C1 controls (U+009B is CSI) and line separators reach no terminal
printf 'print("a\\u{9b}2J b\\u{85}c\\u{2028}d")\n' >"$tmp/c1.lua"
"$bin" run "$tmp/c1.lua" -n 1 --no-tui --trace "$tmp/c1.jsonl" >/dev/null 2>&1
"$bin" export "$tmp/c1.jsonl" -f asciicast -o "$tmp/c1.cast" 2>"$tmp/err"
consumer "asciicast: a script's C1 controls are drawn as '?'" "$py" -c '
import json, re, sys
ls = open(sys.argv[1], "rb").read().decode().split("\n")
bad = [l for l in ls[1:] if l and re.search("[\x80-\x9f\u2028\u2029]", json.loads(l)[2])]
print("%d frames with C1 controls" % len(bad) if bad else "", end="")
sys.exit(1 if bad else 0)' "$tmp/c1.cast"

# down the file t may go back across ranks (a tcp run's ranks stamp their
# own events): rank 0's clock a second ahead, the frames' times still never go back
"$bin" run "$L/02-point-to-point/pingpong.lua" --trace "$tmp/pp.jsonl" >/dev/null 2>&1
"$py" -c '
import json, sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e["rank"] == 0: e["t"] = round(e["t"] + 1, 6)
    print(json.dumps(e, separators=(",", ":")))' "$tmp/pp.jsonl" >"$tmp/skew.jsonl"
"$bin" export "$tmp/skew.jsonl" -f asciicast -o "$tmp/skew.cast" 2>"$tmp/err"
consumer "asciicast: frame times never go back when t does" "$py" "$here/check_cast.py" 100 30 "$tmp/skew.cast"

# ---- run --export
guarded "$bin" run "$L/02-point-to-point/chain.lua" -n 3 --no-tui --export mermaid:"$tmp/c.mmd" \
  --export perfetto:"$tmp/c.json" >"$tmp/out" 2>"$tmp/err" </dev/null
if [ $? = 0 ] && "$py" "$here/check_mermaid.py" "$tmp/c.mmd" >"$tmp/chk" 2>&1 &&
   "$py" "$here/check_perfetto.py" "$tmp/c.json" >>"$tmp/chk" 2>&1 && grep -q 'R1->>R2' "$tmp/c.mmd"; then
  ok "run --export: two pictures of the live run"
else
  bad "run --export: two pictures of the live run"
fi
expect "run --export: FORMAT:FILE" 1 "FORMAT:FILE" -- run "$L/02-point-to-point/chain.lua" --no-tui --export svg
echo 'print("ran")' >"$tmp/ran.lua"
expect "run --export: an unknown format" 1 "--export: unknown format 'png'" -- run "$tmp/ran.lua" --no-tui --export png:"$tmp/x.png"
count_lines "run --export: refused before the run" 0 "ran"
guarded "$bin" run "$L/02-point-to-point/deadlock.lua" --no-tui --export svg:"$tmp/x.svg" >/dev/null 2>&1 </dev/null
st=$?
if [ $st = 3 ] && grep -q "no rank can make progress" "$tmp/x.svg"; then ok "run --export keeps the run's status (3)"; else bad "run --export status" "status $st"; fi

# ---- bad input: the replay's errors, status 1
"$bin" run "$L/02-point-to-point/chain.lua" -n 4 --trace "$tmp/c.jsonl" >/dev/null 2>&1
sed '3s/.*/{"type":"bogus"}/' "$tmp/c.jsonl" >"$tmp/bad.jsonl"
expect "malformed line: FILE:LINE: reason" 1 "$tmp/bad.jsonl:3: " -- export "$tmp/bad.jsonl" -f svg
printf 'not json\n' >"$tmp/junk.jsonl"
expect "not a trace at all"                1 "$tmp/junk.jsonl:1: not JSON" -- export "$tmp/junk.jsonl" -f mermaid
n=$(wc -l <"$tmp/c.jsonl")
{ head -n $((n - 1)) "$tmp/c.jsonl"; tail -n 1 "$tmp/c.jsonl" | head -c 20; } >"$tmp/cut.jsonl"
expect "cut trace: the replay's message, status 1" 1 "$tmp/cut.jsonl:$n: trace cut off mid-event" -- export "$tmp/cut.jsonl" -f perfetto -o "$tmp/cut.json"
count_lines "cut trace: that message alone (the picture was written)" 1 "commsim export:"
# a time past the reader's bound is refused, so no picture holds a number JSON cannot
"$bin" run "$L/02-point-to-point/pingpong.lua" --trace "$tmp/pp.jsonl" >/dev/null 2>&1
sed '2s/"t":[0-9.e-]*/"t":1e303/' "$tmp/pp.jsonl" >"$tmp/huge.jsonl"
expect "a time past the bound: FILE:LINE, status 1" 1 "$tmp/huge.jsonl:2: field \"t\" out of range" -- export "$tmp/huge.jsonl" -f perfetto
guarded "$bin" run "$L/02-point-to-point/pingpong.lua" --net ethernet-1g --trace "$tmp/n.jsonl" >/dev/null 2>&1 </dev/null
sed '1s/"net":"[^"]*"/"net":"warp-drive"/' "$tmp/n.jsonl" >"$tmp/warp.jsonl"
expect "an unknown model in the header: FILE:1" 1 "$tmp/warp.jsonl:1: field \"net\": unknown model 'warp-drive'" -- export "$tmp/warp.jsonl" -f svg
sed '1s/"send_mode":"[^"]*"/"send_mode":"eager:-5"/' "$tmp/c.jsonl" >"$tmp/sm.jsonl"
expect "an unknown send mode in the header: FILE:1" 1 "$tmp/sm.jsonl:1: field \"send_mode\": unknown mode \"eager:-5\"" -- export "$tmp/sm.jsonl" -f mermaid
expect "missing file"     1 "$tmp/nope.jsonl" -- export "$tmp/nope.jsonl" -f svg
expect "unknown format"   1 "unknown format 'png'" -- export "$tmp/c.jsonl" -f png
expect "no format"        1 "which format?" -- export "$tmp/c.jsonl"
expect "no trace"         1 "which trace?" -- export -f svg
expect "bad theme"        1 "--theme: light or dark" -- export "$tmp/c.jsonl" -f svg --theme pink
expect "export --help"    0 "usage: commsim export TRACE" -- export --help
expect "help export"      0 "asciicast" -- help export
expect "help lists export" 0 "export TRACE" -- help
finish
