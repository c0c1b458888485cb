#!/bin/bash
# run_grade.sh -- commsim grade: every exercise's reference solution scores
# full marks and each wrong one its expected score (tests/grade/NAME/scores)
# on both engines; the formats (Gradescope's results.json checked against its
# schema); determinism; a class folder with hostile submissions.
. "$(dirname "$0")/../lib.sh"

here=$top_srcdir/tests/grade
exercises="ring bidirectional chunked ring_allreduce tree_broadcast pingpong_latency pipeline_microbatches"
exercises+=" measure_latency"   # chapter 04: every case under its own --net model
cd "$top_srcdir" || exit 1

# score NAME SOLUTION ENGINE: the total of a grading, "S/M"
score_of() { sed -n 's/^total: //p' "$1"; }

for ex in $exercises; do
  for engine in thread tcp; do
    while read -r sol want; do
      case $sol in '#'* | '') continue ;; esac
      guarded "$bin" grade "$ex" "$here/$ex/$sol.lua" --engine "$engine" >"$tmp/out" 2>"$tmp/err"
      st=$?
      got=$(score_of "$tmp/out")
      want_st=6
      [ "${got%/*}" = "${got#*/}" ] && want_st=0
      if [ "${got%/*}" != "$want" ]; then
        bad "$ex $sol on $engine" "score $got, expected $want"
      elif [ "$st" != "$want_st" ]; then
        bad "$ex $sol on $engine" "exit status $st, expected $want_st"
      else
        ok "$ex $sol on $engine: $got"
      fi
    done <"$here/$ex/scores"
  done
done

# The words the issue promises.
expect "eager-only says so" 6 "works with eager sends only: deadlocks when sends wait for their receive" \
  -- grade ring "$here/ring/eager_only.lua"
expect "forbidden op named with its line" 6 "rank 0 calls dist.all_reduce on line 3" \
  -- grade ring "$here/ring/all_reduce.lua"
expect "first differing value" 6 "rank 0: result[0] is 7, expected 6" \
  -- grade ring "$here/ring/forward_own.lua"
expect "pitfall text" 6 "pitfall: " -- grade bidirectional "$here/bidirectional/no_wait.lua"
# A case's net: its model, so times are graded exactly; a wrong one is the spec's error.
expect "exact time, the model's figure" 6 "rank 0's result is 20.008 us; under this model one message of 4 bytes takes 10.004 us" \
  -- grade measure_latency "$here/measure_latency/round_trip.lua"
expect "the model rounds up to whole ns" 0 "total: 5/5" \
  -- grade measure_latency "$here/measure_latency/reference.lua" --hidden
mkdir -p "$tmp/badnet" && printf 'return {cases = {{name = "x", net = "alpha=5"}}}\n' >"$tmp/badnet/spec.lua"
expect "a spec's bad net" 1 "case 'x': net: --net: alpha=5: expected a decimal number with a unit" \
  -- grade "$tmp/badnet" "$here/measure_latency/reference.lua"
expect "hidden details hidden" 6 "(hidden case: details are not shown)" \
  -- grade ring "$here/ring/forward_own.lua"
expect "--hidden shows them" 6 "rank 0: result[0] is 57, expected 36" \
  -- grade ring "$here/ring/forward_own.lua" --hidden
expect "an exercise by folder" 0 "total: 5/5" \
  -- grade lessons/02-point-to-point/exercises/ring "$here/ring/reference.lua"
expect "unknown exercise" 1 "no such exercise" -- grade nosuch "$here/ring/reference.lua"
expect "a mistyped exercise: the bundled ones listed" 1 "lessons/*/exercises/: bidirectional, chunked, " \
  -- grade rng "$here/ring/reference.lua"
expect "missing solution" 1 "no such file" -- grade ring "$tmp/none.lua"
expect "bad format" 1 "unknown format" -- grade ring "$here/ring/reference.lua" --format xml
expect "no arguments" 1 "usage: commsim grade" -- grade
expect "help" 0 "Exit status: 0 every case passed, 6 some case failed" -- grade --help
expect "help: a grader killed writes no results" 0 "killed by a signal (Ctrl-C: 130), it writes no results" -- grade --help
expect "listed in help" 0 "grade EXERCISE" -- help

# --trace-dir keeps a failing case's trace and names the replay command.
expect "trace-dir" 6 "see it: commsim replay $tmp/traces/" \
  -- grade ring "$here/ring/eager_only.lua" --trace-dir "$tmp/traces"
t=$(sed -n 's/^  see it: commsim replay \(.*\) --end$/\1/p' "$tmp/out" | head -1)
expect "the kept trace replays to the deadlock" 3 "deadlock" -- replay "$t" --no-tui
# A case failed by one call (a forbidden operation, a pitfall): the replay
# opens at that rank's line, named by rank and line, the same in every run
# (the events' numbering is not); a deadlock opens at the end.
expect "see it: --end for a deadlock" 6 "--end" -- grade ring "$here/ring/eager_only.lua" --trace-dir "$tmp/traces"
expect "see it: a forbidden call --at its rank and line" 6 \
  "see it: commsim replay $tmp/traces/all_reduce-two_ranks-n2-rendezvous.jsonl --at 0:3" \
  -- grade ring "$here/ring/all_reduce.lua" --trace-dir "$tmp/traces" --hidden
cp "$tmp/out" "$tmp/at1"
t=$(sed -n 's/^  see it: commsim replay \(.*\) --at 0:3$/\1/p' "$tmp/out" | head -1)
if [ -n "$t" ] && grep -q '"rank":0,.*"line":3' "$t"; then ok "the --at site is in the kept trace"
else bad "the --at site is in the kept trace" "no rank 0 event on line 3 in '$t'"; fi
expect "see it: a pitfall --at its lowest rank's warning" 6 "--at 0:8" \
  -- grade bidirectional "$here/bidirectional/read_early.lua" --trace-dir "$tmp/traces"
expect "json: trace_at" 6 '"trace_at": "0:8"' \
  -- grade bidirectional "$here/bidirectional/read_early.lua" --trace-dir "$tmp/traces" --format json
for i in 1 2 3; do
  "$bin" grade ring "$here/ring/all_reduce.lua" --trace-dir "$tmp/traces" --hidden >"$tmp/at2" 2>&1
  cmp -s "$tmp/at1" "$tmp/at2" || break
done
if cmp -s "$tmp/at1" "$tmp/at2"; then ok "--trace-dir output with --at: byte-identical run after run"
else bad_showing "$tmp/at2" "--trace-dir output with --at: byte-identical" "outputs differ"; fi

# Byte-identical twice, in every format.
for fmt in text json tap junit gradescope; do
  "$bin" grade ring_allreduce "$here/ring_allreduce/no_allgather.lua" --format $fmt >"$tmp/a.$fmt" 2>&1
  "$bin" grade ring_allreduce "$here/ring_allreduce/no_allgather.lua" --format $fmt >"$tmp/b.$fmt" 2>&1
  if cmp -s "$tmp/a.$fmt" "$tmp/b.$fmt"; then ok "$fmt twice: byte-identical"
  else bad_showing "$tmp/b.$fmt" "$fmt twice" "outputs differ"; fi
done
grep -q '^TAP version 13$' "$tmp/a.tap" && grep -q '^not ok 1 - ' "$tmp/a.tap" && ok "tap" || bad_showing "$tmp/a.tap" "tap"
if command -v python3 >/dev/null; then
  python3 - "$tmp/a.junit" <<'PY' && ok "junit parses" || bad_showing "$tmp/a.junit" "junit"
import sys, xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
assert r.tag == "testsuites"
s = r.find("testsuite"); assert int(s.get("tests")) == 4 and int(s.get("failures")) == 4
assert s.get("name") == "ring_allreduce"
assert s.find("testcase/failure") is not None
PY
  # A class: still one testsuite (the exercise), a testcase per student and case.
  mkdir -p "$tmp/jclass" && cp "$here/ring/reference.lua" "$tmp/jclass/ann.lua" &&
    cp "$here/ring/forward_own.lua" "$tmp/jclass/bob.lua"
  guarded "$bin" grade ring "$tmp/jclass" --format junit --out "$tmp/class.junit" --jobs 2
  python3 - "$tmp/class.junit" <<'PY' && ok "junit: a class is one testsuite for the exercise" || bad_showing "$tmp/class.junit" "junit class"
import sys, xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
suites = r.findall("testsuite")
assert len(suites) == 1 and suites[0].get("name") == "ring", suites
cases = suites[0].findall("testcase")
assert int(suites[0].get("tests")) == len(cases) == 8, len(cases)
assert sorted(set(c.get("classname") for c in cases)) == ["ring.ann", "ring.bob"]
assert not [c for c in cases if c.get("classname") == "ring.ann" and c.find("failure") is not None]
assert int(suites[0].get("failures")) == len([c for c in cases if c.find("failure") is not None]) > 0
PY
  # Gradescope's results.json schema (docs/grading.md): score, tests[] with
  # name, score, max_score, output, visibility; hidden cases after_published.
  "$bin" grade ring "$here/ring/forward_own.lua" --format gradescope --out "$tmp/results.json"
  python3 - "$tmp/results.json" <<'PY' && ok "gradescope results.json validates" || bad_showing "$tmp/results.json" "gradescope schema"
import json, sys
d = json.load(open(sys.argv[1]))
assert isinstance(d, dict) and set(d) <= {"score", "tests", "output", "visibility", "stdout_visibility", "execution_time", "extra_data", "leaderboard"}
assert isinstance(d["score"], (int, float))
assert isinstance(d["tests"], list) and d["tests"]
total = 0
for t in d["tests"]:
    assert set(t) <= {"name", "score", "max_score", "output", "visibility", "tags", "number", "status", "extra_data", "name_format", "output_format"}, t
    assert isinstance(t["name"], str) and isinstance(t["output"], str)
    assert isinstance(t["score"], (int, float)) and isinstance(t["max_score"], (int, float))
    assert 0 <= t["score"] <= t["max_score"]
    assert t["visibility"] in ("visible", "hidden", "after_due_date", "after_published")
    total += t["score"]
assert abs(total - d["score"]) < 1e-9 and d["score"] == 2
assert [t["visibility"] for t in d["tests"] if t["name"] == "eight ranks"] == ["after_published"]
PY
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["submissions"][0]["tests"][0]["pass"] is False' \
    "$tmp/a.json" && ok "json" || bad_showing "$tmp/a.json" "json"
  # A file name, or a spec's text, that is not UTF-8: every student keeps
  # a "student" (the byte as U+FFFD) and the XML stays well-formed.
  mkdir -p "$tmp/u8c" "$tmp/u8ex" && cp "$here/ring/reference.lua" "$tmp/u8c/ann.lua" &&
    cp "$here/ring/reference.lua" "$tmp/u8c/$(printf 'b\377b').lua"
  printf '%s\n' 'return {title = "t\255", cases = {{name = "c\254", world = 1, send_modes = {"eager"}}}}' >"$tmp/u8ex/spec.lua"
  guarded "$bin" grade ring "$tmp/u8c" --format json --out "$tmp/u8.json" --jobs 2
  guarded "$bin" grade "$tmp/u8ex" "$tmp/u8c" --format json --out "$tmp/u8s.json" --jobs 2
  python3 - "$tmp/u8.json" "$tmp/u8s.json" <<'PY' && ok "json: names that are not UTF-8" || bad_showing "$tmp/u8.json" "json: names that are not UTF-8"
import json, sys
d = json.load(open(sys.argv[1]))
assert [s.get("student") for s in d["submissions"]] == ["ann", "b\ufffdb"], d["submissions"]
d = json.load(open(sys.argv[2]))
assert d["title"] == "t\ufffd" and d["submissions"][0]["tests"][0]["name"] == "c\ufffd", d
PY
  guarded "$bin" grade ring "$tmp/u8c" --format junit --out "$tmp/u8.junit" --jobs 2
  python3 - "$tmp/u8.junit" <<'PY' && ok "junit: names that are not UTF-8" || bad_showing "$tmp/u8.junit" "junit: names that are not UTF-8"
import sys, xml.etree.ElementTree as ET
cases = ET.parse(sys.argv[1]).getroot().findall("testsuite/testcase")
assert sorted(set(c.get("classname") for c in cases)) == ["ring.ann", "ring.b\ufffdb"], cases
PY
else
  skip "junit, gradescope and json checks" "no python3"
fi

# The JSON's modelled time: each variant of a case under a network model
# carries its run's "time" (the fields of run --report json), per rank too.
# measure_latency's reference makes 10 round trips under alpha 10 us and
# 1 GB/s: 20 messages of 4 bytes, 10.004 us each, so 200080 ns, every rank;
# with eager sends rank 1's last send leaves without waiting: it ends when
# the 19th message has arrived and its 4 bytes are out, at 190080 ns.
if command -v python3 >/dev/null; then
  ml=$here/measure_latency/reference.lua
  "$bin" grade measure_latency "$ml" --format json >"$tmp/ml.json" 2>&1
  "$bin" grade measure_latency "$ml" --format json --hidden >"$tmp/mlh.json" 2>&1
  "$bin" grade measure_latency "$ml" --format json --hidden --engine tcp >"$tmp/mlt.json" 2>&1
  { echo 'ROUNDS = 10; ELEMS = 1'; cat "$ml"; } >"$tmp/ml_run.lua"
  "$bin" run "$tmp/ml_run.lua" --net alpha=10us,bandwidth=1GB/s --report json >"$tmp/ml_run.json" 2>/dev/null
  "$bin" grade ring "$here/ring/reference.lua" --format json --hidden >"$tmp/ring.json" 2>&1
  mkdir -p "$tmp/mlclass" && cp "$ml" "$tmp/mlclass/ann.lua" && cp "$here/measure_latency/round_trip.lua" "$tmp/mlclass/bob.lua"
  guarded "$bin" grade measure_latency "$tmp/mlclass" --format json --hidden --jobs 2 >"$tmp/mlclass.json" 2>&1
  "$bin" grade measure_latency "$here/measure_latency/round_trip.lua" --format json --hidden >"$tmp/mlbob.json" 2>&1
  json_check() { # NAME FILE PYTHON: the PYTHON assertions hold of FILE's JSON (as d)
    python3 -c "import json, sys; d = json.load(open(sys.argv[1])); run = json.load(open(sys.argv[2])); $3" \
      "$2" "$tmp/ml_run.json" && ok "$1" || bad_showing "$2" "$1"
  }
  json_check "json time: each variant of a case under a model, the exact makespan and per-rank figures" "$tmp/ml.json" '
t = d["submissions"][0]["tests"][0]["time"]
assert [(v["world"], v["engine"], v["send_mode"]) for v in t] == [(2, "thread", "rendezvous"), (2, "thread", "eager")], t
v, e = t
assert v["net"] == "alpha=10us,bandwidth=1GB/s" and v["complete"] is True and v["makespan_ns"] == 200080, v
assert [(r["rank"], r["end_ns"], r["compute_ns"], r["comm_ns"] + r["wait_ns"]) for r in v["ranks"]] == [(0, 200080, 0, 200080), (1, 200080, 0, 200080)], v
assert e["makespan_ns"] == 200080 and [r["end_ns"] for r in e["ranks"]] == [200080, 190080], e'
  json_check "json time: the same figures as the run's own --report json" "$tmp/ml.json" '
v = dict(d["submissions"][0]["tests"][0]["time"][0])
for k in ("world", "engine", "send_mode"): del v[k]
assert v == run["time"], (v, run["time"])'
  json_check "json time: a hidden case's only with --hidden" "$tmp/ml.json" '
t = d["submissions"][0]["tests"]
assert t[2]["hidden"] and "time" not in t[2]
h = json.load(open(sys.argv[1].replace("ml.json", "mlh.json")))["submissions"][0]["tests"][2]["time"]
assert [(v["world"], v["send_mode"], len(v["ranks"])) for v in h] == [(3, "rendezvous", 3), (3, "eager", 3)], h'
  json_check "json time: the tcp engine's figures are the thread engine's" "$tmp/mlt.json" '
th = json.load(open(sys.argv[1].replace("mlt.json", "mlh.json")))["submissions"][0]["tests"]
tc = d["submissions"][0]["tests"]
strip = lambda ts: [[{k: x for k, x in v.items() if k != "engine"} for v in t["time"]] for t in ts]
assert [v["engine"] for t in tc for v in t["time"]] == ["tcp"] * 6
assert strip(tc) == strip(th)'
  json_check "json time: none for a case without a model" "$tmp/ring.json" '
assert all("time" not in t for t in d["submissions"][0]["tests"])'
  json_check "json time: a class's workers keep each student's times" "$tmp/mlclass.json" '
s = {x["student"]: x for x in d["submissions"]}
alone = json.load(open(sys.argv[1].replace("mlclass.json", "mlbob.json")))["submissions"][0]
assert s["bob"]["tests"] == alone["tests"], (s["bob"]["tests"], alone["tests"])
assert s["ann"]["tests"][0]["time"][0]["makespan_ns"] == 200080'
else
  skip "json time checks" "no python3"
fi

# A class: 30 submissions, files and folders, hostile ones among them. Each
# hostile entry gets 0 with a reason; nobody else's result changes; twice
# byte-identical.
class=$tmp/class
mkdir -p "$class"
i=0
for n in 1 2 3 4 5 6; do
  for sol in reference eager_only all_reduce forward_own extra_sends; do
    i=$((i + 1))
    if [ $((i % 3)) = 0 ]; then mkdir -p "$class/s$(printf %02d $i)"; cp "$here/ring/$sol.lua" "$class/s$(printf %02d $i)/solution.lua"
    else cp "$here/ring/$sol.lua" "$class/s$(printf %02d $i).lua"; fi
  done
done
cp "$here/hostile/loop.lua" "$class/s01.lua"
cp "$here/hostile/membomb.lua" "$class/s07.lua"
cp "$here/hostile/escape.lua" "$class/s13.lua"
cp "$here/hostile/syntax.lua" "$class/s19.lua"
cp "$here/hostile/forge.lua" "$class/s25.lua"
rm -rf "$class/s01" "$class/s07" "$class/s13" "$class/s19" "$class/s25"
guarded "$bin" grade ring "$class" --jobs 2 --out "$tmp/c1.txt" --csv "$tmp/c1.csv"
st=$?
guarded "$bin" grade ring "$class" --jobs 3 --out "$tmp/c2.txt" --csv "$tmp/c2.csv"
[ "$st" = 6 ] && ok "class: status 6" || bad "class: status $st"
cmp -s "$tmp/c1.txt" "$tmp/c2.txt" && cmp -s "$tmp/c1.csv" "$tmp/c2.csv" && ok "class graded twice: byte-identical" \
  || { diff "$tmp/c1.txt" "$tmp/c2.txt" >"$tmp/c.diff"; bad_showing "$tmp/c.diff" "class twice" "outputs differ"; }
[ "$(grep -c . "$tmp/c1.csv")" = 31 ] && ok "class: 30 rows" || bad_showing "$tmp/c1.csv" "class rows"
# The same solution scores the same whatever its neighbours: compare with alone.
for s in 02 03 04 05 06; do
  sol=$(ls "$class/s$s.lua" "$class/s$s/solution.lua" 2>/dev/null)
  alone=$("$bin" grade ring "$sol" | sed -n 's/^total: //p')
  inclass=$(awk -F, -v s="\"s$s\"" '$1 == s { print $2 "/" $3 }' "$tmp/c1.csv")
  [ "$alone" = "$inclass" ] && ok "class s$s: $inclass as alone" || bad_showing "$tmp/c1.csv" "class s$s" "$inclass in class, $alone alone"
done
for s in 01 07 13 19 25; do
  grep -q "^\"s$s\",0,5," "$tmp/c1.csv" && ok "hostile s$s: 0" || bad_showing "$tmp/c1.csv" "hostile s$s" "not 0"
done
grep -q "instruction budget exceeded" "$tmp/c1.txt" && ok "the loop's reason" || bad_showing "$tmp/c1.txt" "loop reason"
grep -q "attempt to index a nil value (global 'io')" "$tmp/c1.txt" && ok "the escape's reason" || bad_showing "$tmp/c1.txt" "escape reason"
grep -q "unexpected symbol near 'do'" "$tmp/c1.txt" && ok "the syntax error's reason" || bad_showing "$tmp/c1.txt" "syntax reason"
[ ! -e /tmp/pwned ] && ok "no escape" || bad "escape" "/tmp/pwned exists"
# A forged result line, then a top-level return past the grader's own lines:
# the real result (none) is still printed after the forgery, and stands.
"$bin" grade ring "$here/hostile/forge_return.lua" >"$tmp/fr.out" 2>&1
grep -qF "total: 0/5" "$tmp/fr.out" && ok "a forged result with a top-level return: 0" \
  || bad_showing "$tmp/fr.out" "forged result with return"
# After an error the probe names the lowest rank that raised, from the
# probe's marked lines: one the solution prints itself names neither the
# rank nor the message.
"$bin" grade ring "$here/hostile/forge_probe.lua" --hidden >"$tmp/fp.out" 2>&1
grep -qF "error: rank 1: forge_probe.lua:5: the real error" "$tmp/fp.out" && ! grep -q "full marks" "$tmp/fp.out" &&
  ok "a forged probe line: the real rank and error" || bad_showing "$tmp/fp.out" "forged probe line"
# One that closes the wrapper's function itself ("end)(...)") and shadows
# the print of the grader's own lines: not a chunk alone, so a syntax error.
"$bin" grade ring "$here/hostile/forge_inject.lua" >"$tmp/fi.out" 2>&1
grep -qF "total: 0/5" "$tmp/fi.out" && grep -qF "forge_inject.lua:3: <eof> expected near 'end'" "$tmp/fi.out" &&
  ok "a solution that closes the grader's wrapper: a syntax error, 0" || bad_showing "$tmp/fi.out" "wrapper injection"
# A precompiled (binary) solution is not a chunk of text either: its error
# still names the file and the line.
cp "$top_srcdir/tests/hostile/scripts/precompiled.luac" "$tmp/pre.lua"
"$bin" grade ring "$tmp/pre.lua" >"$tmp/pre.out" 2>&1
grep -qF "error: pre.lua:1: unexpected symbol" "$tmp/pre.out" && ok "a binary solution: its error names the file and line" \
  || bad_showing "$tmp/pre.out" "binary solution"
# A result too large for check(run) (1e8 empty tables) is the solution's
# failure, not a spec error that stops the grading of everyone.
"$bin" grade ring "$here/hostile/shape_bomb.lua" >"$tmp/sb.out" 2>&1; rc=$?
[ $rc = 6 ] && grep -qF "total: 0/5" "$tmp/sb.out" && grep -qF "results are too large to grade" "$tmp/sb.out" &&
  ok "a result too large for check(run): 0, not a spec error" || bad_showing "$tmp/sb.out" "result too large (rc $rc)"
# Prints without end: each rank stops at the output limit (limits.output,
# 16 MiB by default, the result's own lines included) with its line, on
# both engines; before, every run wrote gigabytes of trace and its judge ran
# out of memory, saying so on the grader's stderr.
# Under ThreadSanitizer the thread engine's eight ranks, one process, cannot
# print their 16 MiB each within the case's 20 s: the wall time ends the
# run first (in one of two runs here), which says nothing of the limit; tcp
# still runs.
tsan=false
nm "$bin" 2>/dev/null | grep -q __tsan_init && tsan=true
for engine in thread tcp; do
  if $tsan && [ $engine = thread ]; then
    skip "a print flood on thread" "ThreadSanitizer's eight ranks cannot print 16 MiB each within the timeout"
    continue
  fi
  "$bin" grade ring "$here/hostile/flood.lua" --engine $engine --hidden >"$tmp/fl.out" 2>"$tmp/fl.err"; rc=$?
  [ $rc = 6 ] && [ ! -s "$tmp/fl.err" ] && grep -qF "total: 0/5" "$tmp/fl.out" &&
    [ "$(grep -cF "flood.lua:4: output limit exceeded (16 MiB printed per rank)" "$tmp/fl.out")" = 4 ] &&
    ok "a print flood on $engine: stopped at the output limit, 0" || bad_showing "$tmp/fl.out" "print flood on $engine (rc $rc)"
done
mkdir -p "$tmp/flx"
printf 'return {limits = {output = 4096}, cases = {{name = "o", world = 1, send_modes = {"eager"}, result = function() return 1 end}}}\n' \
  >"$tmp/flx/spec.lua"
echo 'for i = 1, 60 do print(("y"):rep(63)) end result = 1' >"$tmp/fl_ok.lua"
expect "printing up to limits.output passes" 0 "total: 1/1" -- grade "$tmp/flx" "$tmp/fl_ok.lua"
echo 'for i = 1, 65 do print(("y"):rep(63)) end result = 1' >"$tmp/fl_over.lua"
expect "printing past limits.output: the rank stops there" 6 "fl_over.lua:1: output limit exceeded (4 KiB printed per rank)" \
  -- grade "$tmp/flx" "$tmp/fl_over.lua" --hidden
# A NUL byte: the solution does not parse, so it runs as it is and fails
# with its syntax error. It was written to the run up to the NUL: cut
# short and unwrapped, its own forged result line stood (full marks).
printf 'print("\\30cs-result num 1")\n\0' >"$tmp/nulforge.lua"
expect "a solution with a NUL byte: its syntax error, not its forged result" 6 "nulforge.lua:2: unexpected symbol" \
  -- grade "$tmp/flx" "$tmp/nulforge.lua"
# A solution larger than a script may be (16 MiB), or a sparse file of
# gigabytes, is refused as the run refuses it, before it is read whole;
# the gigabytes were read into memory per variant (the grader's stderr
# said it was out of memory) and the run ended "without a verdict".
{ echo 'result = 1'; head -c $((17 << 20)) /dev/zero | tr '\0' '-'; echo; } >"$tmp/huge.lua"
expect "a 17 MiB solution: refused, said so" 6 "cannot read the solution: larger than 16 MiB" \
  -- grade "$tmp/flx" "$tmp/huge.lua" --hidden
echo 'result = 1' >"$tmp/sparse.lua" && truncate -s 3G "$tmp/sparse.lua"
expect "a sparse solution of 3 GiB: refused, said so" 6 "cannot read the solution: larger than 16 MiB" \
  -- grade "$tmp/flx" "$tmp/sparse.lua" --hidden
[ -s "$tmp/err" ] && bad_showing "$tmp/err" "a sparse solution of 3 GiB: nothing on stderr"
rm -f "$tmp/sparse.lua" "$tmp/huge.lua"
# Sends without end fill the trace as fast as the ranks go (2.4 GB in 20 s
# of eight ranks, which the judge then could not read in its time, killed
# "for the wall time"): a run's trace is a file of at most 256 MiB. With a
# budget that never ends it, the run fills it long before its timeout.
mkdir -p "$tmp/sf"
printf 'return {limits = {timeout = 15, steps = 1e12}, cases = {{name = "s", world = 8, send_modes = {"eager"}}}}\n' \
  >"$tmp/sf/spec.lua"
# Under ThreadSanitizer the ranks are too slow to write 256 MiB within the
# case's 15 s: the wall time ends it first, which says nothing of the cap.
if $tsan; then
  skip "sends without end: the trace's size limit" "ThreadSanitizer's ranks cannot fill 256 MiB within the timeout"
else
  expect "sends without end: the trace's size limit, said so" 6 \
    "killed: the run's trace passed 256 MiB (too many events, such as a loop of sends)" \
    -- grade "$tmp/sf" "$here/hostile/sendflood.lua" --hidden
  [ -s "$tmp/err" ] && bad_showing "$tmp/err" "sends without end: nothing on the grader's stderr"
fi
# The grader's own lines after the solution index no userdata but a tensor
# (a P2POp raises when indexed) and call no global the solution could
# remove: each failed at a line the solution does not have, naming 'local r'.
echo 'result = dist.P2POp(dist.isend, tensor.ones(1), 0)' >"$tmp/res_op.lua"
expect "a P2POp result: a userdata, not the grader's error" 6 "rank 0: result is userdata, expected a number" \
  -- grade "$tmp/flx" "$tmp/res_op.lua" --hidden
grep -q "local 'r'" "$tmp/out" && bad "a P2POp result: no error of the grader's lines"
echo 'result = {1}; tonumber, math = nil, nil' >"$tmp/res_nil.lua"
expect "a solution that removes tonumber and math: its result still read" 0 "total: 1/1" \
  -- grade "$tmp/flx" "$tmp/res_nil.lua"

# As root, RLIMIT_NPROC binds nobody: the solution's run is the user nobody's.
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
  mkdir -p "$tmp/spin_ex"
  echo 'return {title = "spin", limits = {timeout = 4}, cases = {{name = "spin", world = 1, send_modes = {"rendezvous"}}}}' \
    >"$tmp/spin_ex/spec.lua"
  echo 'while true do end' >"$tmp/spin.lua"
  "$bin" grade "$tmp/spin_ex" "$tmp/spin.lua" --trace-dir "$tmp/spin_traces" >"$tmp/spin.out" 2>&1 &
  gpid=$! found=
  runs_as_nobody() { ps -eo user=,args= | grep -F "$tmp/spin_ex" | grep -q '^nobody '; }
  wait_until 10 runs_as_nobody && found=1
  wait $gpid
  [ -n "$found" ] && ok "as root: the solution runs as nobody" || bad_showing "$tmp/spin.out" "as root: runs as nobody"
  grep -qF "total: 0/1" "$tmp/spin.out" && [ "$(stat -c %U "$tmp/spin_traces"/*.jsonl)" = root ] &&
    ok "as root: the spinning solution scores 0, its kept trace is the grader's" || bad_showing "$tmp/spin.out" "as root: spin"
else
  skip "as root: the solution runs as nobody" "not root, or no user nobody"
fi

# A class folder: every student is listed, even one with nothing to run;
# a folder with no submission at all is an error, not a class that passed.
mkdir -p "$tmp/empty_class"
expect "an empty class folder: an error" 1 "no submissions here" -- grade ring "$tmp/empty_class"
[ ! -s "$tmp/out" ] && ok "an empty class folder: no results" || bad "an empty class folder: no results"
fc=$tmp/folders
mkdir -p "$fc/bob" "$fc/dan/deeper" "$fc/eve/solution.lua"
cp "$here/ring/reference.lua" "$fc/ann.lua"
cp "$here/ring/reference.lua" "$fc/dan/deeper/solution.lua"
cp "$here/ring/reference.lua" "$fc/eve/other.lua"
ln -s "$tmp/nowhere.lua" "$fc/gus.lua"
ln -s "$fc/lou.lua" "$fc/lou.lua"
ln -s /etc/passwd "$fc/pat.lua"
ln -s "$fc/ann.lua" "$fc/amy.lua"
guarded "$bin" grade ring "$fc" --jobs 2 --csv "$tmp/fc.csv" >"$tmp/fc.txt" 2>&1
st=$?
[ "$st" = 6 ] && ok "class with missing solutions: status 6" || bad_showing "$tmp/fc.txt" "class with missing solutions" "status $st"
for row in '"amy",5,5' '"ann",5,5' '"bob",0,5' '"dan",0,5' '"eve",5,5' '"gus",0,5' '"lou",0,5' '"pat",0,5'; do
  grep -q "^$row," "$tmp/fc.csv" && ok "class folder: $row" || bad_showing "$tmp/fc.csv" "class folder: $row"
done
[ "$(grep -c . "$tmp/fc.csv")" = 9 ] && ok "class folder: every student listed" || bad_showing "$tmp/fc.csv" "every student listed"
# A file and a folder named alike (zed.lua, zed/) are two students apart:
# the file keeps its .lua.
mkdir -p "$tmp/twin/zed" && cp "$here/ring/reference.lua" "$tmp/twin/zed.lua" &&
  cp "$here/ring/forward_own.lua" "$tmp/twin/zed/solution.lua"
guarded "$bin" grade ring "$tmp/twin" --jobs 2 --csv "$tmp/twin.csv" >"$tmp/twin.txt" 2>&1
grep -q '^"zed",2,5,' "$tmp/twin.csv" && grep -q '^"zed.lua",5,5,' "$tmp/twin.csv" &&
  ok "a file and a folder named alike: two students" || bad_showing "$tmp/twin.csv" "a file and a folder named alike"
# A file name a spreadsheet would run as a formula starts its CSV cell with a
# quote mark (OWASP's advice for CSV injection): opening the CSV runs nothing.
mkdir -p "$tmp/formula" && cp "$here/ring/reference.lua" "$tmp/formula/=HYPERLINK(\"x\").lua" &&
  cp "$here/ring/forward_own.lua" "$tmp/formula/-bob.lua"
guarded "$bin" grade ring "$tmp/formula" --jobs 2 --csv "$tmp/formula.csv" >"$tmp/formula.txt" 2>&1
grep -qxF "\"'=HYPERLINK(\"\"x\"\")\",5,5,\"\"" "$tmp/formula.csv" && grep -q "^\"'-bob\",2,5," "$tmp/formula.csv" &&
  ok "CSV: a cell that reads as a formula starts with a quote mark" ||
  bad_showing "$tmp/formula.csv" "CSV: a cell that reads as a formula starts with a quote mark"
grep -qF "no solution: the folder holds no .lua file at its top level" "$tmp/fc.txt" &&
  grep -qF "no solution: gus.lua is a broken symbolic link" "$tmp/fc.txt" &&
  grep -qF "no solution: lou.lua is a symbolic link in a loop" "$tmp/fc.txt" &&
  grep -qF "not graded: pat.lua is a symbolic link that leads out of the class folder" "$tmp/fc.txt" &&
  ok "class folder: each missing solution's reason" || bad_showing "$tmp/fc.txt" "each missing solution's reason"
# a hidden case tells a student with nothing to run why, as the others do:
# the reason says nothing of the case
[ "$(sed -n '/^bob:/,/^total:/p' "$tmp/fc.txt" | grep -c "no solution: the folder holds no .lua file")" = 4 ] &&
  ok "class folder: a hidden case gives the missing solution's reason too" ||
  bad_showing "$tmp/fc.txt" "hidden case: the missing solution's reason"
grep -qE "root|pat.lua:[0-9]" "$tmp/fc.txt" && bad_showing "$tmp/fc.txt" "a link out of the class folder is never read"
mkdir -p "$tmp/linked/sam" && ln -s /etc/passwd "$tmp/linked/sam/solution.lua" &&
  cp "$here/ring/reference.lua" "$tmp/linked/sam/z.lua"
expect "a subfolder's link out of the class: the next candidate" 0 "total: 5/5" -- grade ring "$tmp/linked"

# An error names the rank that raised it: the lowest rank whose run raises,
# the same every time (not whichever rank ended the run first).
printf 'local x = 1\nresult = 0\nif rank == 1 then error("boom") end\n' >"$tmp/one_rank.lua"
expect "an error on one rank names it" 6 "error: rank 1: one_rank.lua:3: boom" -- grade ring "$tmp/one_rank.lua"
expect "an error on one rank names it (tcp)" 6 "error: rank 1: one_rank.lua:3: boom" \
  -- grade ring "$tmp/one_rank.lua" --engine tcp
expect "an error on every rank: the lowest" 6 "error: rank 0: escape.lua:2: attempt to index a nil value" \
  -- grade ring "$here/hostile/escape.lua"
expect "a syntax error is no one rank's" 6 "error: syntax.lua:2: unexpected symbol near 'do'" \
  -- grade ring "$here/hostile/syntax.lua"

# A student's control characters never reach the reader raw (ESC would
# drive the terminal): \xHH in text, TAP and CSV; JSON escapes its own. A NUL
# in an error message does not cut it: what follows is kept, as "\0".
printf 'if rank == 1 then error("a\\27[31mred\\0after") end\n' >"$tmp/ctl.lua"
for fmt in text tap; do
  "$bin" grade ring "$tmp/ctl.lua" --hidden --format $fmt >"$tmp/ctl.$fmt" 2>&1
  if ! grep -q $'\033' "$tmp/ctl.$fmt" && grep -qF 'ctl.lua:1: a\x1B[31mred\0after' "$tmp/ctl.$fmt"
  then ok "$fmt: control characters escaped, a NUL's rest kept"; else bad_showing "$tmp/ctl.$fmt" "$fmt: control characters"; fi
done
"$bin" grade ring "$tmp/ctl.lua" --hidden --format json >"$tmp/ctl.json" 2>&1
grep -qF 'ctl.lua:1: a\u001B[31mred\\0after' "$tmp/ctl.json" && ok "json: a NUL's rest kept" || bad_showing "$tmp/ctl.json" "json: a NUL's rest kept"
mkdir -p "$tmp/ctlc" && cp "$tmp/ctl.lua" "$tmp/ctlc/$(printf 'e\033[2Jve').lua"
"$bin" grade ring "$tmp/ctlc" --out "$tmp/ctlc.txt" >/dev/null 2>&1
if ! grep -q $'\033' "$tmp/ctlc.txt" "$tmp/ctlc.txt.csv" && grep -qF '"e\x1B[2Jve",0,5,' "$tmp/ctlc.txt.csv" &&
  grep -qF 'e\x1B[2Jve: ring' "$tmp/ctlc.txt"
then ok "a student's name: control characters escaped in text and CSV"; else bad_showing "$tmp/ctlc.txt.csv" "a student's name escaped"; fi

# A folder in the current directory named like a bundled exercise, without
# spec.lua (a class's), does not hide the exercise; a path to it does not
# fall back.
mkdir -p "$tmp/shadow/ring" && cp "$here/ring/reference.lua" "$tmp/shadow/ring/ann.lua"
# (the bundled exercises named outright: a build outside the source tree
# finds none beside its binary)
bundled=$PWD/lessons
(cd "$tmp/shadow" && COMMSIM_LESSONS=$bundled guarded "$bin" grade ring ring/ >"$tmp/out" 2>"$tmp/err")
st=$?
[ "$st" = 0 ] && grep -qF "total: 5/5" "$tmp/out" && ok "a folder named like an exercise: the bundled one" ||
  bad "a folder named like an exercise: the bundled one" "status $st"
(cd "$tmp/shadow" && guarded "$bin" grade ./ring ring/ >"$tmp/out" 2>"$tmp/err")
st=$?
[ "$st" = 1 ] && grep -qF "./ring: no spec.lua in this folder" "$tmp/err" && ok "a path to a folder without spec.lua: an error" ||
  bad "a path to a folder without spec.lua: an error" "status $st"
expect "an exercise path that does not exist: no such folder" 1 "$tmp/nowhere/ring: no such folder" \
  -- grade "$tmp/nowhere/ring" "$here/ring/reference.lua"
expect "spec.lua given as the exercise: the folder is" 1 "spec.lua: not a folder (EXERCISE is the folder that holds spec.lua)" \
  -- grade lessons/02-point-to-point/exercises/ring/spec.lua "$here/ring/reference.lua"

# One solution is named as a class names it (less .lua): its JUnit classname,
# trace files and CSV row; --csv writes that row.
expect "one solution: --csv writes its row" 6 "" -- grade ring "$here/ring/all_reduce.lua" --csv "$tmp/one.csv" \
  --format junit --trace-dir "$tmp/one_tr"
grep -qx '"all_reduce",0,5,"two ranks;three to five ranks;eight ranks;world_size - 1 messages per rank"' "$tmp/one.csv" &&
  ok "one solution: its CSV row" || bad_showing "$tmp/one.csv" "one solution: its CSV row"
grep -qF 'classname="ring.all_reduce"' "$tmp/out" && ok "one solution: JUnit classname as in a class" ||
  bad "one solution: JUnit classname as in a class"
[ -e "$tmp/one_tr/all_reduce-two_ranks-n2-rendezvous.jsonl" ] && ok "one solution: trace named as in a class" ||
  bad "one solution: trace named as in a class" "$(ls "$tmp/one_tr")"
# Results that could not be written (no such folder, a full disk) are a
# setup error, status 1: never a grading a course's script takes as done.
expect "--csv that cannot be written: status 1" 1 "--csv $tmp/nowhere/x.csv: cannot write it" \
  -- grade ring "$here/ring/reference.lua" --csv "$tmp/nowhere/x.csv"
# --trace-dir naming a file: refused, never replay commands for traces not kept.
echo x >"$tmp/a_file"
expect "--trace-dir that is a file: refused" 1 "--trace-dir $tmp/a_file: cannot create it as a folder" \
  -- grade ring "$here/ring/all_reduce.lua" --trace-dir "$tmp/a_file"
# ... and one refused before anyone is graded (no trace kept): a class's
# hour of grading is not lost at the end.
expect "--out that cannot be written: refused first" 1 "--out $tmp/nowhere/x.json: cannot write it" \
  -- grade ring "$here/ring/all_reduce.lua" --out "$tmp/nowhere/x.json" --trace-dir "$tmp/early_tr"
[ -z "$(ls "$tmp/early_tr")" ] && ok "--out that cannot be written: nothing graded" ||
  bad "--out that cannot be written: nothing graded" "traces: $(ls "$tmp/early_tr")"
if [ -w /dev/full ]; then
  expect "--out on a full disk: status 1" 1 "/dev/full: cannot write it" \
    -- grade ring "$here/ring/reference.lua" --out /dev/full
  guarded "$bin" grade ring "$here/ring/reference.lua" >/dev/full 2>"$tmp/err"
  st=$?
  [ "$st" = 1 ] && grep -qF "standard output: cannot write it" "$tmp/err" &&
    ok "standard output on a full disk: status 1" || bad_showing "$tmp/err" "standard output on a full disk: status 1" "status $st"
fi

# ---- The grader's own robustness: long names, broken or hostile specs,
# killed runs, names that collide. Each case below once failed.

# A parameter's name of any length: the wrapped solution is sized from it.
long=N$(printf 'x%.0s' $(seq 3000))
mkdir -p "$tmp/longp"
printf 'return {cases = {{name = "x", send_modes = {"rendezvous"}, params = {%s = 1, %sa = 2},\n  result = function() return {3} end}}}\n' \
  "$long" "$long" >"$tmp/longp/spec.lua"
printf 'result = %s + %sa\n' "$long" "$long" >"$tmp/longp.lua"
expect "a 3000-byte parameter name" 0 "total: 1/1" -- grade "$tmp/longp" "$tmp/longp.lua"

# A spec's result() returning a bare number is one value; any other shape,
# an error or a loop in the spec's code is the spec's error: exit 1, said
# once with the spec's place, never a panic and never the student's 0.
echo 'result = 2' >"$tmp/two.lua"
spec_case() { # NAME STATUS PATTERN SPEC [SOLUTION]
  mkdir -p "$tmp/sc" && printf '%s\n' "$4" >"$tmp/sc/spec.lua"
  expect "$1" "$2" "$3" -- grade "$tmp/sc" "${5:-$tmp/two.lua}"
}
spec_case "result() may return a bare number" 0 "total: 1/1" \
  'return {cases = {{name = "num", send_modes = {"eager"}, result = function() return 2 end}}}'
spec_case "a bare number is compared as one" 6 "rank 0: result[0] is 2, expected 3" \
  'return {cases = {{name = "num", send_modes = {"eager"}, result = function() return 3 end}}}'
for shape in '"2"' true '{{2}}' '0/0'; do
  spec_case "result() returning $shape: the spec's error" 1 "/sc/spec.lua: case 'num', world 2: result(0, 2): " \
    "return {cases = {{name = \"num\", send_modes = {\"eager\"}, result = function() return $shape end}}}"
  grep -q PANIC "$tmp/err" && bad "result() returning $shape: no panic"
done
# In a class, a spec that fails on one student's result names that student,
# so that the instructor can try the spec on it.
mkdir -p "$tmp/scc" && echo 'result = rank' >"$tmp/scc/ann.lua" && echo 'local x = 1' >"$tmp/scc/bob.lua" &&
  echo 'result = rank' >"$tmp/scc/cat.lua"
mkdir -p "$tmp/sc" && printf '%s\n' 'return {cases = {{name = "one", world = 2, send_modes = {"eager"},' \
  '  check = function(run) return run.result[0] + 0 == 0 end}}}' >"$tmp/sc/spec.lua"
expect "a spec failing on one student of a class: which student" 1 \
  "the spec failed grading bob (1 of the 3 submissions made it fail); no results are written" -- grade "$tmp/sc" "$tmp/scc"
# A case whose name is no string is named by its number.
spec_case "a case's name that is no string: which case" 1 "/sc/spec.lua: case 2: name must be a string, not a number" \
  'return {cases = {{name = "a"}, {name = 5}}}'
# A field's mistake names the line where it is written: the field's line, found
# in the text from the line that holds the case's name; a name the text does
# not hold (computed) gives no line rather than a wrong one.
spec_case "a spec field's mistake: its line" 1 "/sc/spec.lua:3: unknown field 'titel' in the spec" \
  "$(printf 'return {\n  cases = {{name = \"a\"}},\n  titel = \"t\",\n}')"
spec_case "a case field's mistake: the field's line in that case" 1 "/sc/spec.lua:5: case 'b': world must be" \
  "$(printf 'return {cases = {\n  {name = \"a\", world = 2},\n  {name = \"b\",\n   points = 1,\n   world = \"four\"},\n  {name = \"c\", world = 3},\n}}')"
spec_case "a case field written before its name, on its line" 1 "/sc/spec.lua:3: case 'b': points must be" \
  "$(printf 'return {cases = {\n  {name = \"a\", points = 1},\n  {points = \"x\", name = \"b\"},\n}}')"
spec_case "a computed case name: no line" 1 "/sc/spec.lua: case 'bb': world must be" \
  "$(printf 'return {cases = {\n  {name = (\"b\"):rep(2),\n   world = \"four\"},\n}}')"
spec_case "a case whose name is no string: no line" 1 "/sc/spec.lua: case 2: points must be" \
  "$(printf 'return {cases = {\n  {name = \"a\", points = 1},\n  {name = nil,\n   points = \"x\"},\n}}')"
# An engine that cannot run here (nccl: no machine has a GPU for each of 64
# ranks) is the grader's setup error, said once, never every student's
# failing case.
spec_case "a spec's engine that cannot run here: a setup error" 1 "/sc/spec.lua: case 'big': engine nccl: " \
  'return {cases = {{name = "big", world = 64, engines = {"thread", "nccl"}}}}'
expect "--engine that cannot run a case's world: a setup error" 1 "--engine nccl: " \
  -- grade "$tmp/sc" "$tmp/two.lua" --engine nccl
# A spec's code past its memory says so, not Lua's bare "not enough memory".
spec_case "a spec loading past its memory: said so" 1 "/sc/spec.lua: the spec's code ran past its 256 MiB of memory" \
  'local t = {} for i = 1, 1e9 do t[i] = i end'
spec_case "result() past the spec's memory: said so" 1 "result(0, 2): the spec's code ran past its 256 MiB of memory" \
  'return {cases = {{name = "m", result = function() local t = {} for i = 1, 1e9 do t[i] = i end end}}}'
spec_case "result() raising: the spec's error, with its line" 1 "result(0, 2): $tmp/sc/spec.lua:1: oops" \
  'return {cases = {{name = "num", send_modes = {"eager"}, result = function() error("oops") end}}}'
[ ! -s "$tmp/out" ] && ok "a spec error writes no results" || bad "a spec error writes no results"
spec_case "a looping check(): the spec's error, not the student's" 1 "check(run): $tmp/sc/spec.lua:1: the spec's code ran past" \
  'return {cases = {{name = "num", send_modes = {"eager"}, check = function() while true do end end}}}'
spec_case "a looping spec.lua: the spec's error" 1 "$tmp/sc/spec.lua:1: the spec's code ran past" 'while true do end'
mkdir -p "$tmp/scclass" && cp "$tmp/two.lua" "$tmp/scclass/ann.lua" && cp "$tmp/two.lua" "$tmp/scclass/bob.lua"
printf '%s\n' 'return {cases = {{name = "num", send_modes = {"eager"}, result = function() return true end}}}' >"$tmp/sc/spec.lua"
expect "a class: the spec's error once, exit 1" 1 "result(0, 2): returned a boolean" -- grade "$tmp/sc" "$tmp/scclass" --jobs 2

# Strict specs: every mistake an instructor can make is named with its file
# and place (exit 1), never silently ignored or blamed on a student.
while IFS='|' read -r spec want; do
  spec_case "spec $spec" 1 "$tmp/sc/spec.lua:1: $want" "return $spec"
done <<'SPECS'
{titel = "x", cases = {{}}}|unknown field 'titel' in the spec
{cases = {{name = "a", wrold = 2}}}|case 'a': unknown field 'wrold' in a case
{cases = {{name = "a", resutl = function() end}}}|case 'a': unknown field 'resutl' in a case
{cases = {{name = "a", world = "four"}}}|case 'a': world must be a world size or a list of them, not a string
{cases = {{name = "a", world = {}}}}|case 'a': world must list 1 to 16 world sizes
{cases = {{name = "a", world = 2.5}}}|case 'a': world size 2.5 is not a whole number from 1 to 64
{cases = {{name = "a", result = {1, 2}}}}|case 'a': result must be a function, not a table
{cases = {{name = "a", check = true}}}|case 'a': check must be a function, not a boolean
{forbidden = {"sned"}, cases = {{}}}|forbidden: 'sned' is not an operation
{cases = {{name = "a", points = "ten"}}}|case 'a': points must be a number, not a string
{cases = {{name = "a", points = -5}}}|case 'a': points must not be negative
{cases = {{name = "a", points = 0/0}}}|case 'a': points must be a finite number
{cases = {{name = "a", points = math.huge}}}|case 'a': points must be a finite number
{limits = {timeout = "fast"}, cases = {{}}}|limits: timeout must be a number, not a string
{limits = {timeout = 0}, cases = {{}}}|limits: timeout must be more than 0
{limits = {steps = -1}, cases = {{}}}|limits: steps must be from 1
{limits = {memory = 0}, cases = {{}}}|limits: memory must be from 1 MiB
{limits = {output = 100}, cases = {{}}}|limits: output must be from 1 KiB
{cases = {{name = "a", params = {N = "ten"}}}}|case 'a': params: N must be a number, not a string
{cases = {{name = "a", params = true}}}|case 'a': params must be a table
{cases = {{name = "a", params = {1}}}}|case 'a': params: keys must be names, not a number
{cases = {{name = "a", params = {["end"] = 1}}}}|case 'a': params: 'end' is not a name the solution can be given
{cases = {{name = "a", params = {N = 0/0}}}}|case 'a': params: N must be a finite number
{cases = {{name = "a", params = {N = math.huge}}}}|case 'a': params: N must be a finite number
{cases = {{name = "a", engines = {"bogus"}}}}|case 'a': engines: 'bogus' is not an engine
{cases = {{name = "a", send_modes = {"sometimes"}}}}|case 'a': send_modes: 'sometimes' is not rendezvous, eager or eager:N
SPECS
spec_case "forbidden as one string, dist. prefix too" 6 "rank 0 calls dist.send on line 9" \
  'return {forbidden = "dist.send", cases = {{name = "a", send_modes = {"eager"}}}}' "$here/ring/reference.lua"
expect "--engine bogus: a usage error" 1 "commsim grade: --engine bogus: unknown engine" \
  -- grade ring "$here/ring/reference.lua" --engine bogus

# A run killed before it ends (a crash, the OOM killer, an alarm) fails its
# case with the reason: its cut-short trace is never judged as if it ended.
mkdir -p "$tmp/kill_ex"
printf '%s\n' 'return {limits = {timeout = 120}, cases = {{name = "a", world = 1, send_modes = {"rendezvous"}}}}' \
  >"$tmp/kill_ex/spec.lua"
echo 'dist.compute(600000)' >"$tmp/long.lua"
"$bin" grade "$tmp/kill_ex" "$tmp/long.lua" >"$tmp/kill.out" 2>&1 &
gpid=$!
# the run: the grader's grandchild
run_pid() { local c; c=$(pgrep -P $gpid | head -1) && [ -n "$c" ] && pgrep -P "$c" | head -1; }
has_run() { [ -n "$(run_pid)" ]; }
if wait_until 20 has_run; then kill -SEGV "$(run_pid)"; fi
wait $gpid
st=$?
# (Under AddressSanitizer the run catches the SIGSEGV itself and exits 1:
# its trace then ends, in whole lines, before its rank did.)
if [ "$st" = 6 ] && grep -qE "killed: the run crashed \(Segmentation fault\)|killed: the run stopped before it ended: the trace ends before the run did: 1 rank had not finished" "$tmp/kill.out" && grep -qF "total: 0/1" "$tmp/kill.out"
then ok "a run killed by a signal fails its case, with the reason"
else bad_showing "$tmp/kill.out" "a run killed by a signal fails its case" "status $st"; fi

# TAP: a '#' in a student's or case's name is escaped (else "bob # TODO"
# turns a failure into a passing TODO for prove), a newline never ends the line.
mkdir -p "$tmp/tapc" && cp "$here/ring/forward_own.lua" "$tmp/tapc/bob # TODO.lua"
"$bin" grade ring "$tmp/tapc" --format tap >"$tmp/tap.out" 2>&1
if grep -qF 'not ok 2 - bob \# TODO: three to five ranks' "$tmp/tap.out" && ! grep -q '[^\\]# TODO' "$tmp/tap.out"
then ok "tap: '#' in a name escaped"; else bad_showing "$tmp/tap.out" "tap: '#' in a name escaped"; fi
printf '%s\n' 'return {cases = {{name = "two\nlines # SKIP", send_modes = {"eager"}, result = function() return 3 end}}}' \
  >"$tmp/sc/spec.lua"
expect "tap: a newline in a case's name stays on the line" 6 'not ok 1 - two: two lines \# SKIP' \
  -- grade "$tmp/sc" "$tmp/two.lua" --format tap

# Gradescope: a hidden case's details only with --hidden, as in every format.
expect "gradescope: a hidden case's details hidden" 6 '"output": "(hidden case: details are not shown)"' \
  -- grade ring "$here/ring/forward_own.lua" --format gradescope
grep -qF "expected 36" "$tmp/out" && bad "gradescope: no hidden case's details" "its message is shown"
expect "gradescope --hidden: a hidden case's details" 6 "rank 0: result[0] is 57, expected 36" \
  -- grade ring "$here/ring/forward_own.lua" --format gradescope --hidden
# JSON: a hidden case's trace (its file name tells the world size) and
# trace_at are details too, shown only with --hidden, as in the text.
expect "json: a hidden case's trace hidden" 6 '"trace": ' \
  -- grade ring "$here/ring/forward_own.lua" --format json --trace-dir "$tmp/hid_tr"
grep -qF "eight_ranks" "$tmp/out" && bad_showing "$tmp/out" "json: no hidden case's trace"
expect "json --hidden: a hidden case's trace" 6 '"trace": "'"$tmp/hid_tr/forward_own-eight_ranks-n8-rendezvous.jsonl" \
  -- grade ring "$here/ring/forward_own.lua" --format json --trace-dir "$tmp/hid_tr" --hidden

# A class keeps where a case failed: --at RANK:LINE and trace_at, as alone.
mkdir -p "$tmp/atc" && cp "$here/ring/all_reduce.lua" "$tmp/atc/zed.lua"
expect "a class: see it --at the failing call" 6 "zed-two_ranks-n2-rendezvous.jsonl --at 0:3" \
  -- grade ring "$tmp/atc" --trace-dir "$tmp/atc_tr"
expect "a class: json trace_at" 6 '"trace_at": "0:3"' -- grade ring "$tmp/atc" --trace-dir "$tmp/atc_tr" --format json

# Trace files never collide: students, or cases, whose names come out alike
# in a file name get a suffix (the same every run).
mkdir -p "$tmp/coll"
cp "$here/ring/all_reduce.lua" "$tmp/coll/bob smith.lua" && cp "$here/ring/forward_own.lua" "$tmp/coll/bob_smith.lua"
guarded "$bin" grade ring "$tmp/coll" --trace-dir "$tmp/coll_tr" --hidden >"$tmp/coll.out" 2>&1
n=$(grep -c "see it: commsim replay" "$tmp/coll.out")
files=$(sed -n 's/^  see it: commsim replay \([^ ]*\) .*/\1/p' "$tmp/coll.out" | sort -u | wc -l)
if [ "$n" = 6 ] && [ "$files" = 6 ] && [ "$(ls "$tmp/coll_tr" | wc -l)" = 6 ] &&
  grep -qF "$tmp/coll_tr/bob_smith_2-three_to_five_ranks-n3-rendezvous.jsonl" "$tmp/coll.out"
then ok "two students named alike: their traces apart"; else bad_showing "$tmp/coll.out" "two students named alike" "$n failures, $files files"; fi
printf '%s\n' 'return {cases = {{name = "a b", send_modes = {"eager"}, result = function() return 3 end},' \
  '{name = "a_b", send_modes = {"eager"}, result = function() return 4 end}}}' >"$tmp/sc/spec.lua"
expect "two cases named alike: their traces apart" 6 "two-a_b_2-n2-eager.jsonl" \
  -- grade "$tmp/sc" "$tmp/two.lua" --trace-dir "$tmp/coll_tr2"
[ "$(ls "$tmp/coll_tr2" | wc -l)" = 2 ] && ok "two cases named alike: two files" || bad "two cases named alike: two files"

# A grader killed (SIGTERM) leaves no run and no private folder behind,
# alone or grading a class.
mkdir -p "$tmp/termc" && cp "$tmp/long.lua" "$tmp/termc/ann.lua"
# the deepest descendant of pid $1: the run
deepest() { local p=$1 c; while c=$(pgrep -P "$p" | head -1) && [ -n "$c" ]; do p=$c; done; echo "$p"; }
for target in "$tmp/long.lua" "$tmp/termc"; do
  what=alone; [ -d "$target" ] && what="a class"
  "$bin" grade "$tmp/kill_ex" "$target" >/dev/null 2>&1 &
  gpid=$!
  run_dir() { # the folder whose trace the run writes
    local r; r=$(deepest $gpid); [ "$r" != $gpid ] || return 1
    readlink /proc/"$r"/fd/* 2>/dev/null | sed -n 's|/trace.jsonl$||p' | grep . | head -1
  }
  wait_until 20 run_dir >/dev/null
  dir=$(run_dir) run=$(deepest $gpid)
  kill -TERM $gpid
  wait $gpid
  gone() { ! kill -0 "$run" 2>/dev/null; }
  if [ -n "$dir" ] && wait_until 10 gone && [ ! -e "$dir" ] && [ ! -e "$(dirname "$dir")/$(basename "$dir")" ] &&
    { [ "$what" = alone ] || [ ! -e "$(dirname "$dir")" ]; }
  then ok "grader killed ($what): no run, no folder left"
  else bad "grader killed ($what): no run, no folder left" "run $run, folder '$dir'"; fi
done

# A grader started under nohup (SIGHUP ignored) outlives a hangup of its
# terminal, which signals its whole process group: it and its workers keep
# the signal ignored, alone or grading a class.
mkdir -p "$tmp/hup_ex" "$tmp/hupc"
printf '%s\n' 'return {cases = {{name = "a", world = 1, send_modes = {"rendezvous"}, result = function() return 1 end}}}' \
  >"$tmp/hup_ex/spec.lua"
echo 'dist.compute(1500); result = 1' >"$tmp/hupc/ann.lua"
for target in "$tmp/hupc/ann.lua" "$tmp/hupc"; do
  what=alone; [ -d "$target" ] && what="a class"
  setsid nohup "$bin" grade "$tmp/hup_ex" "$target" >"$tmp/hup.out" 2>&1 &
  gpid=$!
  wait_until 20 run_dir >/dev/null
  kill -HUP -- -"$(ps -o pgid= -p $gpid | tr -d ' ')"
  wait $gpid
  st=$?
  if [ "$st" = 0 ] && grep -qF "total: 1/1" "$tmp/hup.out"
  then ok "nohup grader ($what): a hangup does not end it"
  else bad_showing "$tmp/hup.out" "nohup grader ($what): a hangup does not end it" "status $st"; fi
done

finish
