#!/usr/bin/env bash
# run_netns.sh -- the tcp engine across two hosts, simulated by two network
# namespaces joined by a veth pair (10.77.N.1 and 10.77.N.2). Rank 0 (with the
# controller) and rank 1 run in the first, ranks 2 and 3 in the second, all
# started by hand with torchrun's variables or the flags; together they run the
# ring lesson. Needs root and iproute2 (./setup installs it); skipped with a
# message otherwise.
. "$(dirname "$0")/../lib.sh"
ring=$(cd "$top_srcdir/lessons/02-point-to-point" && pwd)/ring.lua
[ "$(id -u)" = 0 ] ||
  skip_all "the two-host test needs root (ip netns); run make check as root to include it"
command -v ip >/dev/null || skip_all "no ip command (iproute2; ./setup installs it)"

tag=$$
a=csA$tag b=csB$tag net=10.77.$((tag % 250 + 1))
on_exit() {
  ip netns pids "$a" 2>/dev/null | xargs -r kill -9 2>/dev/null
  ip netns pids "$b" 2>/dev/null | xargs -r kill -9 2>/dev/null
  ip netns del "$a" 2>/dev/null
  ip netns del "$b" 2>/dev/null
}

if ! ip netns add "$a" 2>"$tmp/why" || ! ip netns add "$b" 2>>"$tmp/why"; then
  skip_all "cannot create network namespaces here: $(head -1 "$tmp/why")"
fi
ip link add "va$tag" type veth peer name "vb$tag" &&
  ip link set "va$tag" netns "$a" && ip link set "vb$tag" netns "$b" &&
  ip -n "$a" addr add "$net.1/24" dev "va$tag" && ip -n "$b" addr add "$net.2/24" dev "vb$tag" &&
  ip -n "$a" link set "va$tag" up && ip -n "$b" link set "vb$tag" up &&
  ip -n "$a" link set lo up && ip -n "$b" link set lo up || skip_all "cannot set up the veth pair"

token=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
port=29500

# rank 0 and the controller on host A, told the token
ip netns exec "$a" "$bin" run "$ring" --engine tcp --no-tui --master "$net.1:$port" \
  --rank 0 --world 4 --token "$token" --timeout 30 >"$tmp/out" 2>"$tmp/err" </dev/null &
ctl=$!
ip netns exec "$a" env COMMSIM_TOKEN="$token" "$bin" run "$ring" --engine tcp \
  --master "$net.1:$port" --rank 1 --world 4 >"$tmp/r1" 2>&1 </dev/null &
for r in 2 3; do
  ip netns exec "$b" env MASTER_ADDR="$net.1" MASTER_PORT=$port RANK=$r WORLD_SIZE=4 \
    COMMSIM_TOKEN="$token" "$bin" run "$ring" --engine tcp >"$tmp/r$r" 2>&1 </dev/null &
done
wait $ctl
status=$?
wait

why=
[ "$status" = 0 ] || why="exit status $status"
for r in 0 1 2 3; do
  grep -qF "[rank $r] sum of all ranks: tensor([6., 6.])" "$tmp/out" || why="rank $r's result is missing"
done
grep -qF -- "--- ring.lua: 4 ranks, tcp engine, rendezvous sends" "$tmp/err" || why="no summary"
grep -qF "verdict: ok (exit status 0)" "$tmp/err" || why="no ok verdict"
evidence() { show "$tmp/out" "$tmp/err" "$tmp/r1" "$tmp/r2" "$tmp/r3"; }
if [ -z "$why" ]; then ok "ring lesson on 4 ranks across two network namespaces ($net.1, $net.2)"
else bad "two namespaces" "$why"
fi
finish
