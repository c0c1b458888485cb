#!/usr/bin/env bash
# run_bench.sh -- commsim bench's behaviour, never its figures: options and
# their errors, the table's header, CSV and JSON that parse, every op on
# every engine producing a row with positive numbers, busbw following
# nccl-tests' factors. Tiny sizes and few iterations keep it fast; no case
# reads a timing as a verdict.
. "$(dirname "$0")/../lib.sh"
command -v python3 >/dev/null || skip_all "python3 is not installed"

quick=(--sizes 8,1K --iters 3 -n 3)

# ---- options
expect "--help"                 0 "usage: commsim bench" -- bench --help
expect "listed by help"         0 "bench [OPTIONS]" -- help
expect "help bench"             0 "--format F" -- help bench
expect "unknown op"             1 "--op: unknown op 'pingpng'" -- bench --op pingpng
expect "unknown engine"         1 "--engine: unknown engine 'nope'" -- bench --engine nope
expect "engine table"           0 "tcp" -- bench --engine help
expect "sizes backwards"        1 "--sizes: '8:4'" -- bench --sizes 8:4
expect "size not a size"        1 "--sizes: 'x' is not a size" -- bench --sizes 8,x
expect "unknown format"         1 "--format: want table, csv or json" -- bench --format xml
expect "unknown send mode"      1 "--send-mode: not rendezvous" -- bench --send-mode fast
expect "one rank"               1 "-n: want 2 to 1024 ranks" -- bench -n 1
expect "stray argument"         1 "unexpected argument 'x.lua'" -- bench x.lua
# a size past the largest says so (it said "not a size", though the suffix is
# one the help lists); a range's third part is no size either
expect "size too large"         1 "--sizes: '100G' is more than the largest size, 16G" -- bench --sizes 100G
expect "range too large"        1 "--sizes: '8:100G': '100G' is more than the largest size, 16G" -- bench --sizes 8:100G
expect "three-part range"       1 "--sizes: '8:8:8': want A:B" -- bench --sizes 8:8:8
# an algorithm no collective has, or none of the ops asked for: an error, not
# an empty table with status 0
expect "unknown algorithm"      1 "--algo: no collective has the algorithm 'nope' (commsim bench --algo help lists them)" -- bench --algo ring,nope
# a list longer than a run takes said "no engine in" it
expect "65 engines"             1 "--engine: more than 64 engines" -- bench --engine "$(printf 'thread,%.0s' {1..64})thread"
# an empty entry is a typo, not a shorter list
expect "no engine"              1 "--engine: ',' has an empty entry" -- bench --engine ,
expect "an empty engine"        1 "--engine: 'thread,' has an empty entry" -- bench --engine thread,
expect "an empty size"          1 "--sizes: '8,,16' has an empty entry" -- bench --sizes 8,,16
# --iters and --time both say how long: the last one given won silently
expect "--iters with --time"    1 "--iters and --time each say how long to measure: give one" -- bench --iters 5 --time 1
expect "--time with --iters"    1 "--iters and --time each say how long to measure: give one" -- bench --time 1 --iters 5
expect "no run in the plan"     1 "nothing to run: no op of --op has an algorithm of --algo" -- bench --engine thread --op broadcast --algo ring --iters 1 --sizes 8
if [ -s "$tmp/out" ]; then bad "no run in the plan: nothing on stdout"; show "$tmp/out"; else ok "no run in the plan: nothing on stdout"; fi

# ---- the table: its header says how the runs were made
expect "table" 0 "visualizer off, trace off" -- bench "${quick[@]}" --op pingpong --engine thread
for want in "load average" "time_us" "busbw_GB/s" "rss_MiB" "3 iterations per size"; do
  if grep -qF -- "$want" "$tmp/out"; then ok "table header: $want"; else bad "table header: $want"; fi
done

# ---- CSV: every op on every engine, one row per size, numbers positive
expect "csv, all ops, both engines" 0 "" -- bench "${quick[@]}" --engine all --op all --format csv
cp "$tmp/out" "$tmp/all.csv"
check_csv() {
  python3 - "$tmp/all.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
cols = "engine,mode,op,algo,ranks,bytes,iters,warmup,time_us,algbw_gbps,busbw_gbps,rss_mib".split(",")
assert list(rows[0].keys()) == cols, rows[0].keys()
ops = "pingpong bw bibw broadcast reduce all_reduce all_gather reduce_scatter all_to_all gather scatter barrier".split()
seen = {(r["engine"], r["op"]) for r in rows}
for e in ("thread", "tcp"):
    for op in ops:
        assert (e, op) in seen, (e, op)
factor = {"all_reduce": lambda n: 2 * (n - 1) / n, "all_gather": lambda n: (n - 1) / n,
          "reduce_scatter": lambda n: (n - 1) / n, "all_to_all": lambda n: (n - 1) / n,
          "gather": lambda n: (n - 1) / n, "scatter": lambda n: (n - 1) / n}
for r in rows:
    assert None not in r.values() and len(r) == len(cols), r
    n = int(r["ranks"])
    assert n == (2 if r["op"] in ("pingpong", "bw", "bibw") else 3), r
    assert int(r["iters"]) == 3 and int(r["warmup"]) >= 1, r
    assert float(r["time_us"]) > 0 and float(r["rss_mib"]) > 0, r
    if r["op"] == "barrier":
        assert int(r["bytes"]) == 0, r
        continue
    assert int(r["bytes"]) > 0 and float(r["algbw_gbps"]) > 0, r
    want = factor.get(r["op"], lambda n: 1.0)(n)
    got = float(r["busbw_gbps"]) / float(r["algbw_gbps"])
    assert abs(got - want) < 1e-3 * want, (r, want)
# one row per size, and a barrier row per engine
assert len(rows) == 2 * (11 * 2 + 1), len(rows)
PY
}
if out=$(check_csv 2>&1); then ok "csv well formed, every op x engine, positive, busbw factors"
else fail_line "csv well formed" "$out"; show "$tmp/all.csv"; fi

# ---- JSON: one document; the header says what was off
expect "json" 0 "" -- bench "${quick[@]}" --engine tcp --op pingpong,all_reduce --format json
if out=$(python3 - "$tmp/out" <<'PY' 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
h = d["header"]
assert h["visualizer"] is False and h["trace"] is False and len(h["loadavg"]) == 3, h
assert h["engines"] == ["tcp"] and h["ops"] == ["pingpong", "all_reduce"], h
assert d["failed"] == 0 and len(d["rows"]) == 4, d
for r in d["rows"]:
    assert r["engine"] == "tcp" and r["time_us"] > 0 and r["algbw_gbps"] > 0 and r["rss_mib"] > 0, r
PY
); then ok "json parses, header and rows"; else fail_line "json parses" "$out"; show "$tmp/out"; fi

# ---- send modes and algorithms: one run per pair, an algorithm only where its family has it
expect "eager, algorithms" 0 "" -- bench "${quick[@]}" --engine thread --send-mode rendezvous,eager \
  --op all_reduce,broadcast,pingpong --algo ring,tree --format csv
if out=$(python3 - "$tmp/out" <<'PY' 2>&1
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
got = sorted({(r["mode"], r["op"], r["algo"]) for r in rows})
want = sorted((m, op, a) for m in ("rendezvous", "eager")
              for op, a in (("all_reduce", "ring"), ("broadcast", "tree"), ("pingpong", "-")))
assert got == want, got
PY
); then ok "modes x ops x algorithms"; else fail_line "modes x ops x algorithms" "$out"; show "$tmp/out"; fi

# ---- sizes: A:B doubles, suffixes count in binary
expect "sizes 1K:4K" 0 "" -- bench --sizes 1K:4K --iters 2 --engine thread --op pingpong --format csv
if [ "$(cut -d, -f6 "$tmp/out" | tail -n +2 | tr '\n' ' ')" = "1024 2048 4096 " ]; then ok "sizes 1K:4K are 1024 2048 4096"
else bad "sizes 1K:4K are 1024 2048 4096"; fi

# ---- iterations chosen by time: some, whatever they are
expect "by time" 0 "" -- bench --sizes 8 --time 0.01 --engine thread --op pingpong,barrier --format csv
if awk -F, 'NR > 1 && !($7 >= 1) { bad = 1 } END { exit bad || NR != 3 }' "$tmp/out"; then ok "by time: iterations chosen"
else bad "by time: iterations chosen"; fi

# ---- a run that cannot start: said on stderr, the others still run, status 1
TMPDIR=/nonexistent guarded "$bin" bench --iters 1 --engine thread --op barrier,pingpong --sizes 8 \
  >"$tmp/out" 2>"$tmp/err" </dev/null
got=$?
if [ "$got" = 1 ] && [ "$(grep -c 'temporary script /nonexistent/' "$tmp/err")" = 2 ] &&
   grep -qF "some runs failed" "$tmp/out"; then ok "failed runs: status 1, each said"
else bad "failed runs: status 1, each said" "exit status $got"; fi

# ---- a size over the memory cap: the sizes before it are kept, the failure
# names the size (all of the op's rows were left out, and a sweep to 16G,
# which the 4 GiB cap never fits, measured nothing)
expect "a size over --mem-limit" 1 "pingpong on thread (rendezvous, -, 2 ranks) failed at size 8M (the sizes before it are kept) with status 4" \
  -- bench --iters 2 --engine thread --op pingpong --sizes 8,1K,8M,16 --mem-limit 4 --format csv
if [ "$(grep -c '^thread,rendezvous,pingpong,-,2,' "$tmp/out")" = 2 ] &&
   grep -q ',2,1024,2,' "$tmp/out" && grep -qF "memory limit exceeded (4 MiB per rank" "$tmp/err"
then ok "a size over --mem-limit: the two sizes before it measured"
else bad "a size over --mem-limit: the two sizes before it measured"; show "$tmp/out"; fi
expect "--mem-limit in the header" 0 "# memory cap 64 MiB per rank (--mem-limit)" \
  -- bench --iters 1 --engine thread --op barrier --mem-limit 64
expect "--mem-limit 0"          1 "--mem-limit: want MiB (1 to 1048576), not '0'" -- bench --mem-limit 0
expect "--mem-limit 4G"         1 "--mem-limit: want MiB (1 to 1048576), not '4G'" -- bench --mem-limit 4G

finish
