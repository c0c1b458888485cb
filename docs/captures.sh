#!/usr/bin/env bash
# captures.sh COMMSIM README -- README's three text captures of the
# visualizer (the deadlock demo, the ring after three steps, the ring
# all-reduce band opened), taken from COMMSIM in a 100x30 tmux pane and put
# in place of the README's code blocks that begin with " commsim ", in that
# order. Run by `make captures`. The ranks' interleaving varies from run to
# run, so two runs may order a band's arrows, or the blocked-since times,
# differently.
set -euo pipefail
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
readme=$2
top=$(cd "$(dirname "$readme")" && pwd)
command -v tmux >/dev/null || { echo "captures.sh: needs tmux" >&2; exit 1; }
tmp=$(mktemp -d)
sock="commsim-captures-$$"
trap 'tmux -L "$sock" kill-server 2>/dev/null; rm -rf "$tmp"' EXIT
t() { tmux -L "$sock" "$@"; }
# start NAME DIR CMD: a 100x30 pane running CMD in DIR
start() {
  t new-session -d -s "$1" -x 100 -y 30 "cd '$2' && env TERM=screen LC_ALL=C.UTF-8 $3; sleep 600"
  t set-option -t "$1" status off >/dev/null
}
# waitfor NAME TEXT: poll the pane until TEXT shows (60 s at most)
waitfor() {
  for _ in $(seq 1 600); do t capture-pane -p -t "$1" | grep -qF -- "$2" && return 0; sleep 0.1; done
  echo "captures.sh: '$2' never appeared in $1" >&2
  exit 1
}
grab() { sleep 0.5; t capture-pane -p -t "$1" | sed 's/[[:space:]]*$//' >"$tmp/$2"; }

start deadlock "$top" "$bin run lessons/02-point-to-point/deadlock.lua"
waitfor deadlock "the run has ended"
grab deadlock 1
start ring "$top" "$bin run lessons/02-point-to-point/ring.lua --step"
waitfor ring PAUSED
for _ in 1 2 3; do t send-keys -t ring Space; sleep 1; done
waitfor ring "step 12"
grab ring 2
printf -- '--- world: 4\nlocal t = tensor.full(4, rank)\ndist.all_reduce(t, ReduceOp.SUM, {algo = "ring"})\nprint(tostring(t))\n' \
  >"$tmp/ring.lua"
start band "$tmp" "$bin run ring.lua --speed 0"
waitfor band "the run has ended"
t send-keys -t band o
waitfor band "messages of this call"
grab band 3

# each ``` block whose first line begins with " commsim " becomes the next capture
awk -v dir="$tmp" '
  /^```$/ && !inblock { print; inblock = 1; first = 1; next }
  inblock && first && /^ commsim / {
    n++; while ((getline line < (dir "/" n)) > 0) print line
    skip = 1; first = 0; next
  }
  /^```$/ && inblock { inblock = 0; skip = 0; print; next }
  { first = 0 } skip { next } { print }
' "$readme" >"$tmp/README.new"
n=$(grep -c '^ commsim ' "$tmp/README.new" || true)
[ "$n" -ge 3 ] || { echo "captures.sh: README has fewer than three capture blocks" >&2; exit 1; }
cp "$tmp/README.new" "$readme"
