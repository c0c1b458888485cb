#!/usr/bin/env bash
# run_p2p.sh -- the tcp engine's point-to-point protocol where the receiver's
# ACK of a small rendezvous message is deferred (it rides on the receiver's
# next frame to the sender): the send still completes when the receiver then
# only computes, or ends its script, and the output is the thread engine's.
set -u
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
bin="$top_builddir/src/commsim"
dir="$top_srcdir/tests/tcp/scripts"
[ -x "$bin" ] || { echo "skip: $bin not built"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok()  { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "FAIL - $1: $2"; sed 's/^/    | /' "$tmp/tcp" | head -30; }

# same SCRIPT WHAT: on both engines, status 0 and the same output
same() {
  local status
  "$bin" run "$dir/$1" --no-tui --timeout 60 >"$tmp/thread" 2>&1 </dev/null
  status=$?
  if [ "$status" != 0 ]; then bad "$2" "thread engine: exit status $status"; return; fi
  "$bin" run "$dir/$1" --no-tui --timeout 60 --engine tcp >"$tmp/tcp" 2>&1 </dev/null
  status=$?
  if [ "$status" != 0 ]; then bad "$2" "tcp engine: exit status $status"; return; fi
  # the header names the engine; every other line must agree
  if ! diff <(grep -v "tcp engine\|thread engine" "$tmp/thread" | sort) \
            <(grep -v "tcp engine\|thread engine" "$tmp/tcp" | sort) >"$tmp/diff"; then
    bad "$2" "outputs differ: $(head -5 "$tmp/diff")"
    return
  fi
  ok "$2"
}

same ack_compute.lua "a rendezvous send completes while its receiver only computes"
same ack_last.lua "a rendezvous send completes when the receive was the receiver's last operation"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
