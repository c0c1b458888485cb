#!/usr/bin/env bash
# run_calibrate.sh -- commsim bench --calibrate: the form of what it prints
# and that each engine's line is a --net model that `commsim run --net`
# accepts; never the figures themselves (they are this machine's, and vary).
# Under a model the pingpong it measures is exact, so calibrating a modelled
# engine must give that model back: that case checks the fit end to end.
. "$(dirname "$0")/../lib.sh"
command -v python3 >/dev/null || skip_all "python3 is not installed"

net_re='^(thread|tcp) alpha=[0-9]+(\.[0-9]+)?us,bandwidth=[0-9]+(\.[0-9]+)?(G|M|K)?B/s$'

# ---- options
expect "--help lists it"       0 "--calibrate" -- bench --help
expect "not with --op"         1 "--calibrate measures pingpong with rendezvous sends" -- bench --calibrate --op bw
expect "not with --send-mode"  1 "do not apply" -- bench --calibrate --send-mode eager
# one algorithm named: it was ignored (only two or more were refused)
expect "not with --algo"       1 "--op, --algo and --send-mode do not apply" -- bench --calibrate --algo ring
expect "unknown engine"        1 "--engine: unknown engine 'nope'" -- bench --calibrate --engine nope
# One size: no line through one point; said, status 1.
expect "one size: no fit"      1 "thread: no line fits (1 sizes" -- bench --calibrate --engine thread --sizes 8 --iters 2

# ---- under a model the pingpongs are exact, so the fit must give the model
# back, to the digit, on both engines (the whole path: bench, CSV, fit, string).
expect "modelled: the model back" 0 "thread alpha=10.0us,bandwidth=1.00GB/s" -- \
  bench --calibrate --net alpha=10us,bandwidth=1GB/s --sizes 8,1K,64K,1M --iters 2
if grep -qxF "tcp alpha=10.0us,bandwidth=1.00GB/s" "$tmp/out" && grep -qF "error rms 0.0%" "$tmp/out"; then
  ok "modelled: tcp too, no error"; else bad "modelled: tcp too, no error"; show "$tmp/out"; fi
expect "modelled: a preset back" 0 "tcp alpha=50.0us,bandwidth=125MB/s" -- \
  bench --calibrate --net ethernet-1g --engine tcp --sizes 8:1M --iters 1
expect "modelled: 2.5 us, 40 GB/s" 0 "thread alpha=2.50us,bandwidth=40.0GB/s" -- \
  bench --calibrate --net alpha=2.5us,bandwidth=40GB/s --engine thread --sizes 64,4K,256K --iters 1

# CSV and JSON of a modelled calibration: always a fit, exactly known.
expect "csv, modelled" 0 "" -- bench --calibrate --engine thread --net alpha=10us,bandwidth=1GB/s \
  --sizes 8,4M --iters 1 --format csv
if [ "$(cat "$tmp/out")" = 'engine,alpha_us,bandwidth_gbps,net,sizes,rms_err,max_err
thread,10,1,"alpha=10.0us,bandwidth=1.00GB/s",2,0.0000,0.0000' ]; then ok "csv, modelled: the row, exactly"
else bad "csv, modelled: the row, exactly"; show "$tmp/out"; fi
expect "json, modelled" 0 "" -- bench --calibrate --engine tcp --net alpha=10us,bandwidth=1GB/s \
  --sizes 8,1K --iters 1 --format json
if out=$(python3 - "$tmp/out" <<'PY' 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
assert d["failed"] == 0 and len(d["engines"]) == 1, d
e = d["engines"][0]
assert e["engine"] == "tcp" and e["net"] == "alpha=10.0us,bandwidth=1.00GB/s", e
assert e["alpha_us"] == 10 and e["bandwidth_gbps"] == 1 and e["rms_err"] == 0, e
assert [(p["bytes"], p["time_us"]) for p in e["points"]] == [(8, 10.008), (1024, 11.024)], e
PY
); then ok "json, modelled: the model and its points"; else fail_line "json, modelled" "$out"; show "$tmp/out"; fi

# ---- the real thing, on both engines. A loaded machine can make times fall
# with size (then no line fits, status 1, said so): either outcome is a
# behaviour, a crash or a malformed line is not.
guarded "$bin" bench --calibrate --sizes 8,4M --iters 4 >"$tmp/out" 2>"$tmp/err" </dev/null
st=$?
if [ "$st" = 0 ]; then
  nets=$(grep -v '^#' "$tmp/out")
  if [ "$(printf '%s\n' "$nets" | grep -cE "$net_re")" = 2 ] && [ "$(printf '%s\n' "$nets" | wc -l)" = 2 ] &&
     [ "$(printf '%s\n' "$nets" | cut -d' ' -f1 | tr '\n' ' ')" = "thread tcp " ]; then
    ok "one ENGINE MODEL line per engine, thread then tcp"
  else bad "one ENGINE MODEL line per engine" "got: $nets"; fi
  for want in "# commsim bench --calibrate" "measured_us" "model_us" "error rms"; do
    if grep -qF -- "$want" "$tmp/out"; then ok "header: $want"; else bad "header: $want"; fi
  done
  # Each model is a --net string that run accepts.
  printf -- '--- world: 2\nlocal t = tensor.zeros(256)\nif rank == 0 then dist.send(t, 1) else dist.recv(t, 0) end\n' >"$tmp/one.lua"
  while read -r engine model; do
    expect "$engine's model runs: --net $model" 0 "" -- run "$tmp/one.lua" --no-tui --net "$model"
  done <<<"$nets"
elif [ "$st" = 1 ] && grep -qF "no line fits" "$tmp/err"; then
  ok "the machine was too noisy to fit: said, status 1"
else
  bad "calibrate thread,tcp" "exit status $st"
fi

# ---- CSV and JSON: the same per engine
# A real measurement: run as is (not with expect, which wants one status);
# a machine too loaded to fit is said, status 1, and accepted as such.
measured() { guarded "$bin" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null; }
too_noisy() { [ "$1" = 1 ] && grep -qF "no line fits" "$tmp/err"; }
measured bench --calibrate --engine thread --sizes 8,4M --iters 3 --format csv
st=$?
if too_noisy "$st"; then ok "csv: too noisy to fit, said (status 1)"
elif [ "$st" != 0 ]; then bad "csv" "exit status $st"
elif out=$(python3 - "$tmp/out" <<'PY' 2>&1
import csv, re, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert list(rows[0].keys()) == "engine,alpha_us,bandwidth_gbps,net,sizes,rms_err,max_err".split(","), rows
assert len(rows) == 1 and rows[0]["engine"] == "thread" and int(rows[0]["sizes"]) == 2, rows
r = rows[0]
assert float(r["alpha_us"]) >= 0 and float(r["bandwidth_gbps"]) > 0, r
assert re.fullmatch(r"alpha=[0-9.]+us,bandwidth=[0-9.]+[GMK]?B/s", r["net"]), r
PY
); then ok "csv: one row, its columns, a --net string"
else fail_line "csv" "$out"; show "$tmp/out"; fi

measured bench --calibrate --engine tcp --sizes 8,1K,4M --iters 3 --format json
st=$?
if too_noisy "$st"; then ok "json: too noisy to fit, said (status 1)"
elif [ "$st" != 0 ]; then bad "json" "exit status $st"
elif out=$(python3 - "$tmp/out" <<'PY' 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
assert d["tool"] == "commsim bench --calibrate" and d["op"] == "pingpong" and d["failed"] == 0, d
(e,) = d["engines"]
assert e["engine"] == "tcp" and e["net"].startswith("alpha=") and len(e["points"]) == 3, e
assert [p["bytes"] for p in e["points"]] == [8, 1024, 4194304], e
assert all(p["time_us"] > 0 for p in e["points"]), e
PY
); then ok "json: one document, the points"
else fail_line "json" "$out"; show "$tmp/out"; fi

finish
