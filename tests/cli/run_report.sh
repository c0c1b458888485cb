#!/usr/bin/env bash
# run_report.sh -- `commsim run --report json` on every verdict class, on the
# thread and the tcp engine: exactly one JSON document on stdout, whose
# status is the exit status and whose kind and key fields are the expected
# ones; `commsim replay --report json` of the run's trace prints the same
# document. Fields are read with jq, or python3 where jq is missing.
. "$(dirname "$0")/../lib.sh"
L=$top_srcdir/lessons
C=$top_srcdir/tests/cli/scripts
R=$top_srcdir/tests/replay/scripts
P=$top_srcdir/tests/cli/report
T=$top_srcdir/tests/tcp/scripts

# values FILE PATH...: the value at each PATH (keys and array indexes joined
# by dots; "#" at the end: the length of the array there) of the one JSON
# document in FILE, one line each, as JSON. Fails unless FILE holds exactly
# one document. One reader process per case: jq and python3 are slow to start.
if command -v jq >/dev/null; then
  values() {
    local file=$1
    shift
    [ "$(jq -s length "$file" 2>/dev/null)" = 1 ] || return 1
    jq -c --args '. as $doc | $ARGS.positional[] as $p
      | ($p | rtrimstr("#") | split(".") | map(tonumber? // .)) as $k
      | $doc | getpath($k) | if ($p | endswith("#")) then length else . end' "$@" <"$file"
  }
elif command -v python3 >/dev/null; then
  values() {
    python3 - "$@" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))  # exactly one document, or an error
for path in sys.argv[2:]:
    v = doc
    for key in filter(None, path.rstrip("#").split(".")):
        v = v[int(key)] if isinstance(v, list) else v.get(key)
    print(json.dumps(len(v) if path.endswith("#") else v, ensure_ascii=False, separators=(",", ":")))
PY
  }
else
  skip_all "neither jq nor python3 to read JSON"
fi

# check NAME FILE CHECKS...: each check is PATH=VALUE (equal; a string bare)
# or PATH~TEXT (contains); the first that fails fails the case.
check() {
  local name=$1 file=$2 c paths=() got=() i=0 want
  shift 2
  for c in "$@"; do
    case $c in *=*) paths+=("${c%%=*}") ;; *) paths+=("${c%%~*}") ;; esac
  done
  mapfile -t got < <(values "$file" "${paths[@]}" 2>/dev/null)
  if [ "${#got[@]}" != "${#paths[@]}" ]; then
    bad "$name" "not one JSON document with every field"
    return 1
  fi
  for c in "$@"; do
    case $c in
      *=*) want=${c#*=}
           [ "${got[i]}" = "$want" ] || [ "${got[i]}" = "\"$want\"" ] ||
             { bad "$name" "${paths[i]} is ${got[i]}, expected $want"; return 1; } ;;
      *) want=${c#*~}
         case ${got[i]} in *"$want"*) ;; *) bad "$name" "${paths[i]} lacks '$want': ${got[i]}"; return 1 ;; esac ;;
    esac
    i=$((i + 1))
  done
  return 0
}

# report ENGINE NAME STATUS CHECKS... -- ARGS...: commsim run ARGS --report
# json on ENGINE; the exit status, the document's own status and version,
# then CHECKS. Its trace is left in $tmp/trace.
report() {
  local engine=$1 name="$2 ($1)" want=$3 checks=()
  shift 3
  while [ "$1" != -- ]; do checks+=("$1"); shift; done
  shift
  rm -f "$tmp/trace"
  guarded "$bin" run "$@" --engine "$engine" --no-tui --report json --trace "$tmp/trace" \
    >"$tmp/out" 2>"$tmp/err" </dev/null
  local got=$?
  if [ "$got" != "$want" ]; then bad "$name" "exit status $got, expected $want"; return; fi
  check "$name" "$tmp/out" "status=$want" version=1 "engine=$engine" "${checks[@]}" || return
  ok "$name"
}

# same_replay NAME: the replay of the last run's trace prints the same document.
same_replay() {
  guarded "$bin" replay "$tmp/trace" --report json >"$tmp/replayed" 2>"$tmp/err" </dev/null
  if cmp -s "$tmp/out" "$tmp/replayed"; then ok "$1: replay prints the same document"
  else bad_showing "$tmp/replayed" "$1: replay prints the same document"; fi
}

for e in thread tcp; do
  report $e "ok" 0 kind=ok verdict=ok output#=13 explanation=null operations#=0 \
    -- "$L/01-first-program/hello.lua"
  report $e "ok with a pitfall" 0 kind=ok output#=2 pitfalls.0.kind=write_while_sending \
    pitfalls.0.site.line=7 pitfalls.0.other_site.line=6 pitfalls.0.peer=1 -- "$P/hello_pitfall.lua"
  same_replay "ok with a pitfall ($e)"
  report $e "deadlock: both send" 3 kind=deadlock_sends verdict=deadlock operations.0.op=send \
    operations.0.peer=1 operations.0.site.line=19 operations.0.bytes=16 operations.0.dtype=float32 \
    ranks.0.state=deadlocked explanation~"none is receiving" fix~reorder \
    -- "$L/02-point-to-point/deadlock.lua"
  same_replay "deadlock: both send ($e)"
  report $e "deadlock: eager limit" 3 kind=deadlock_eager_limit note~"small tensors only" \
    -- "$L/02-point-to-point/eager_limit.lua"
  report $e "deadlock: both receive" 3 kind=deadlock_recvs operations.0.op=recv -- "$P/recvs.lua"
  report $e "deadlock: tag" 3 kind=deadlock_tag operations.1.tag=2 operations.1.site.line=7 \
    -- "$P/tag.lua"
  report $e "deadlock: finished peer" 3 kind=deadlock_finished_peer operations.0.rank=1 \
    fix~"mismatched send/recv" -- "$P/finished_peer.lua"
  report $e "deadlock: cycle" 3 kind=deadlock_cycle -- "$R/wait_cycle.lua"
  report $e "deadlock: self" 3 kind=deadlock_self pitfalls.0.kind=self_recv -- "$R/self_recv.lua"
  report $e "deadlock: any source" 3 kind=deadlock_any_source operations.0.peer=any \
    -- "$R/any_orphan.lua"
  report $e "deadlock: collective" 3 kind=deadlock_collective operations.0.op=all_reduce \
    operations.3.missing=true -- "$L/03-collectives/mismatch.lua"
  same_replay "deadlock: collective ($e)"
  report $e "deadlock declared at the timeout" 3 kind=deadlock_sends ranks.2.state=aborted \
    -- "$R/partial.lua" --timeout 2
  same_replay "deadlock declared at the timeout ($e)"
  report $e "collective mismatch" 2 kind=collective_mismatch verdict=error operations#=2 \
    headline~"collective mismatch" -- "$P/coll_mismatch.lua"
  same_replay "collective mismatch ($e)"
  report $e "group mismatch" 2 kind=group_mismatch operations.0.op=all_reduce \
    -- "$P/group_mismatch.lua"
  report $e "size mismatch" 2 kind=size_mismatch explanation~"size mismatch" -- "$C/mismatch.lua"
  report $e "dtype mismatch" 2 kind=size_mismatch explanation~"dtype mismatch" \
    -- "$top_srcdir/tests/hostile/scripts/dtype_mismatch.lua"
  report $e "script error" 2 kind=script_error explanation~"attempt to index a nil value" \
    -- "$C/error.lua"
  same_replay "script error ($e)"
  report $e "strict" 2 kind=strict -- "$R/never_waited.lua" --strict
  report $e "timeout" 4 kind=timeout run_error~"did not finish within 1 s" \
    -- "$C/sleeper.lua" --timeout 1
  same_replay "timeout ($e)"
  # where the timeout found each rank: in a wait, computing, in a blocking
  # receive, in a collective
  report $e "timeout: where each rank was" 4 kind=timeout ranks.0.state=aborted \
    ranks.0.stop~"waiting (stopped.lua:13) for the irecv posted at line 12 from rank 1" \
    ranks.0.stop_site.line=13 ranks.1.stop="running at stopped.lua:8" ranks.1.stop_site.line=8 \
    ranks.2.stop="in recv from rank 1 (tag 0, float32 [2], 8 bytes) at stopped.lua:15" \
    ranks.2.stop_site.line=15 ranks.3.stop~"in all_reduce at stopped.lua:17, on its internal" \
    ranks.3.stop_site.file=stopped.lua ranks.3.stop_site.line=17 \
    -- "$C/stopped.lua" --timeout 1
  same_replay "timeout: where each rank was ($e)"
  report $e "instruction budget" 4 kind=budget explanation~"instruction budget exceeded" \
    -- "$C/loop.lua" --step-limit 1000000
  report $e "memory budget" 4 kind=budget explanation~"memory limit exceeded" \
    -- "$C/membomb.lua" --mem-limit 64
  # interrupted: SIGINT to the run (the controller, on tcp); SIGTERM and
  # SIGHUP (the terminal went away) the same, the trace whole and replayable
  # (SIGHUP used to kill the run outright: its trace ended before the run did)
  for sig in INT TERM HUP; do
    rm -f "$tmp/trace"
    guarded timeout --preserve-status -s $sig 1 "$bin" run "$C/sleeper.lua" --engine $e --no-tui --report json \
      --trace "$tmp/trace" >"$tmp/out" 2>"$tmp/err" </dev/null
    got=$?
    if [ "$got" != 130 ]; then bad "interrupted by SIG$sig ($e)" "exit status $got, expected 130"
    elif check "interrupted by SIG$sig ($e)" "$tmp/out" status=130 kind=interrupted \
      run_error="interrupted (SIGINT, SIGTERM or SIGHUP)"; then
      ok "interrupted by SIG$sig ($e)"
      same_replay "interrupted by SIG$sig ($e)"
    fi
  done
  # started under nohup (SIGHUP ignored), a hangup of its terminal, which
  # signals the whole process group, does not end the run (it ended as
  # interrupted: the signal, blocked to be waited for, still arrived)
  echo 'dist.compute(1500); print("done")' >"$tmp/hup.lua"
  rm -f "$tmp/trace"
  setsid nohup "$bin" run "$tmp/hup.lua" -n 2 --engine $e --no-tui --trace "$tmp/trace" \
    >"$tmp/out" 2>&1 </dev/null &
  ctl=$!
  wait_until 15 grep -q '"compute"' "$tmp/trace" 2>/dev/null
  kill -HUP -- -"$ctl"
  wait "$ctl"
  got=$?
  if [ "$got" = 0 ] && grep -qxF "verdict: ok (exit status 0)" "$tmp/out"
  then ok "nohup run ($e): a hangup does not end it"
  else bad "nohup run ($e): a hangup does not end it" "exit status $got"; show "$tmp/out"; fi
done

# a rank process that dies (tcp): killed once it is waited on
rm -f "$tmp/trace"
"$bin" run "$T/victim.lua" --engine tcp --no-tui --report json --trace "$tmp/trace" \
  >"$tmp/out" 2>"$tmp/err" </dev/null &
ctl=$!
wait_until 15 grep -q '"ready' "$tmp/trace" 2>/dev/null
victim=$(ps -o pid=,args= --ppid "$ctl" | awk 'index($0, "--rank 2 ") {print $1}')
[ -n "$victim" ] && kill -9 "$victim"
wait "$ctl"
got=$?
if [ "$got" != 5 ]; then bad "rank died (tcp)" "exit status $got, expected 5"
elif check "rank died (tcp)" "$tmp/out" status=5 kind=rank_died explanation~"rank 2 died" \
  ranks.2.state=failed; then ok "rank died (tcp)"; fi
same_replay "rank died (tcp)"

# a trace that ends before the run did
"$bin" run "$P/recvs.lua" --no-tui --trace "$tmp/t.jsonl" >/dev/null 2>&1
head -n 3 "$tmp/t.jsonl" >"$tmp/cut.jsonl"
guarded "$bin" replay "$tmp/cut.jsonl" --report json >"$tmp/out" 2>"$tmp/err" </dev/null
got=$?
if [ "$got" != 1 ]; then bad "replay of a trace cut short" "exit status $got, expected 1"
elif check "replay of a trace cut short" "$tmp/out" status=1 kind=incomplete; then
  ok "replay of a trace cut short"
fi

# the default is the plain report, unchanged
expect "--report text is the default" 3 "verdict: deadlock (exit status 3)" \
  -- run "$L/02-point-to-point/deadlock.lua" --no-tui --report text
"$bin" run "$L/02-point-to-point/deadlock.lua" --no-tui >"$tmp/plain" 2>&1
"$bin" run "$L/02-point-to-point/deadlock.lua" --no-tui --report text >"$tmp/text" 2>&1
if cmp -s "$tmp/plain" "$tmp/text"; then ok "--report text prints what no --report prints"
else bad_showing "$tmp/text" "--report text prints what no --report prints"; fi
expect "unknown report format" 1 "--report: unknown format 'xml'" \
  -- run "$L/01-first-program/hello.lua" --report xml
expect "replay: unknown report format" 1 "--report: unknown format 'xml'" \
  -- replay "$tmp/t.jsonl" --report xml
expect "run --help names --report" 0 "--report FORMAT" -- run --help

finish
