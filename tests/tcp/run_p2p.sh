#!/usr/bin/env bash
# run_p2p.sh -- the tcp engine's point-to-point protocol where the receiver's
# ACK of a small rendezvous message is deferred (it rides on the receiver's
# next frame to the sender): the send still completes when the receiver then
# only computes, or ends its script, and the output is the thread engine's;
# and a window of large messages read straight into the receives' tensors.
. "$(dirname "$0")/../lib.sh"
dir="$top_srcdir/tests/tcp/scripts"

# same SCRIPT NAME: on both engines, status 0 and the same output (but for the
# header line naming the engine)
same() {
  local e status
  for e in thread tcp; do
    guarded "$bin" run "$dir/$1" --no-tui --timeout 60 --engine $e >"$tmp/$e" 2>&1 </dev/null
    status=$?
    cp "$tmp/$e" "$tmp/out"
    if [ "$status" != 0 ]; then bad "$2" "$e engine: exit status $status"; return; fi
  done
  if ! diff <(grep -v "thread engine" "$tmp/thread" | sort) \
            <(grep -v "tcp engine" "$tmp/tcp" | sort) >"$tmp/diff"; then
    bad_showing "$tmp/diff" "$2" "the engines' outputs differ"
    return
  fi
  ok "$2"
}

same ack_compute.lua "a rendezvous send completes while its receiver only computes"
same ack_last.lua "a rendezvous send completes when the receive was the receiver's last operation"
same stream.lua "a window of 4 MiB messages arrives intact, a pause in the stream included"
finish
