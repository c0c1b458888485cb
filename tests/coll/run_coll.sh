#!/usr/bin/env bash
# run_coll.sh -- collectives as a script user meets them: argument errors with
# rank, file and line; mismatch and never-arrived verdicts with their exit
# statuses; --algo; groups keeping traffic apart; async handles; coll events
# and internal messages in the trace.
. "$(dirname "$0")/../lib.sh"
dir="$top_srcdir/tests/coll/scripts"

# ---- argument errors: status 2, the rank (whichever fails first), the file and the line
expect "list of the wrong length" 2 "] error: list_len.lua:2: dist.all_gather: the output list has 2 tensors, but the group has 3 ranks (one per rank)" -- run "$dir/list_len.lua" -n 3
expect "root outside the world"   2 "bad_root.lua:2: dist.broadcast: root 3 is outside the world (ranks 0 to 2)" -- run "$dir/bad_root.lua" -n 3
expect "reduce without dst"       2 "no_root.lua:2: dist.reduce: dst must be an integer (got nil)" -- run "$dir/no_root.lua" -n 2
expect "a scatter list off the source" 2 "] error: list_off_root.lua:4: dist.scatter: the scatter list must be nil on every rank but the source (rank 1), as in torch" -- run "$dir/list_off_root.lua" -n 2
expect "root outside the group"   2 "root_group.lua:3: dist.broadcast: root 1 is not a member of the group (ranks [0, 2])" -- run "$dir/root_group.lua" -n 3
expect "bitwise op on floats"     2 "band_float.lua:2: dist.all_reduce: ReduceOp.BAND needs an integer dtype (the tensor is float32)" -- run "$dir/band_float.lua"
expect "not a ReduceOp"           2 "bad_op.lua:1: dist.all_reduce: op must be a ReduceOp (ReduceOp.SUM, AVG, PRODUCT, MIN, MAX, BAND, BOR or BXOR), got sum" -- run "$dir/bad_op.lua"
expect "algorithm of another collective" 2 "bad_algo.lua:1: dist.all_reduce: unknown all_reduce algorithm 'tree' (available: ring, recursive_doubling, reduce_broadcast, recursive_halving; default: recursive_doubling up to 32 KiB (128 KiB from 16 ranks), else ring)" -- run "$dir/bad_algo.lua"
expect "unknown option"           2 "bad_opt.lua:1: dist.barrier: unknown option 'grup' (expected group, async_op or algo)" -- run "$dir/bad_opt.lua"
expect "rank outside the group"   2 "[rank 1] error: not_member.lua:2: dist.all_reduce: rank 1 is not a member of the group (ranks [0])" -- run "$dir/not_member.lua"
# all_to_all's own block is copied in place: checked before anything moves,
# on both engines (a heap overflow from the script before); the blocks two
# ranks exchange are checked by the receive
a2a_own="a2a_own_block.lua:3: dist.all_to_all: tensor 0 of the output list has 1 elements, but tensor 0 of the input list has 100000 (a rank's own block must fit)"
a2a_peer="size mismatch: rank 1 receives float32 [2] (8 bytes) at a2a_peer_block.lua:6, but rank 0 sent float32 [50000] (200000 bytes) at a2a_peer_block.lua:4"
for engine in thread tcp; do
  expect "all_to_all: own block too small ($engine)"   2 "$a2a_own" -- run "$dir/a2a_own_block.lua" -n 1 --engine $engine
  expect "all_to_all: peer block too small ($engine)"  2 "$a2a_peer" -- run "$dir/a2a_peer_block.lua" -n 2 --engine $engine
done
# all_to_all has no in-place form: an output sharing memory with an input was a
# silently wrong result
for engine in thread tcp; do
  expect "all_to_all_single in place ($engine)" 2 "] error: a2a_alias.lua:4: dist.all_to_all_single: the output shares memory with the input: all-to-all has no in-place form (give it another output)" -- run "$dir/a2a_alias.lua" -n 3 --engine $engine
done
expect "wrong output size"        2 "sizes.lua:2: dist.all_gather_into_tensor: the output has 5 elements, but must have 2 x 2 (group size x the input)" -- run "$dir/sizes.lua"

# ---- verdicts
expect "count mismatch: status 2"  2 "rank 1 calls all_reduce(SUM, float32, 3 elements) at count_mismatch.lua:2" -- run "$dir/count_mismatch.lua" -n 3
for engine in thread tcp; do
  expect "count mismatch across the size line: status 2 ($engine)" 2 "rank 1 calls all_reduce(SUM, float32, 8193 elements) at count_mismatch_line.lua:4" -- run "$dir/count_mismatch_line.lua" -n 3 --engine $engine
done
# Two ranks call broadcast and all_reduce in different orders: the whole
# ending, byte for byte and the same on both engines. The calls' internal
# messages never pair (each carries its call's digest), so no size mismatch
# of an internal message can come before the monitor's verdict.
cat >"$tmp/order.want" <<'END'
messages: 0, bytes: 0
collectives: 1
ranks: 2 aborted
collective mismatch: the ranks of the world group disagree on their collective call #1:
  rank 0 calls broadcast(root 0, float32, 2 elements) at order.lua:3
  rank 1 calls all_reduce(SUM, float32, 2 elements) at order.lua:6
why: every rank of a group must call the same collectives in the same order, with the same root, count, dtype and reduce op; a collective whose calls disagree mixes data or waits forever.
fix: compare the calls above; a collective inside an `if` on the rank, or tensors of different sizes per rank, are the usual causes.
verdict: error (exit status 2)
END
for engine in thread tcp; do
  expect "order mismatch: status 2 ($engine)" 2 "" -- run "$dir/order.lua" --engine $engine
  # the report is on stderr; nothing on stdout
  if [ "$(head -1 "$tmp/err")" = "--- order.lua: 2 ranks, $engine engine, rendezvous sends" ] &&
     tail -n +2 "$tmp/err" | cmp -s - "$tmp/order.want" && [ ! -s "$tmp/out" ]; then
    ok "order mismatch: the whole ending ($engine)"
  else
    tail -n +2 "$tmp/err" | diff "$tmp/order.want" - | head -20
    bad "order mismatch: the whole ending ($engine)"
  fi
done
# A mismatch found when two ranks have entered waits for the third: every
# run names all three calls and counts the call, whichever rank came last
# (timing, so every run is checked; only the ranks' fates may differ).
cat >"$tmp/roots.want" <<'END'
collectives: 1
collective mismatch: the ranks of the world group disagree on their collective call #1:
  rank 0 calls broadcast(root 0, float32, 4 elements) at root_per_rank.lua:4
  rank 1 calls broadcast(root 1, float32, 4 elements) at root_per_rank.lua:4
  rank 2 calls broadcast(root 2, float32, 4 elements) at root_per_rank.lua:4
END
for engine in thread tcp; do
  why=
  for ((i = 0; i < 6; i++)); do
    guarded "$bin" run "$dir/root_per_rank.lua" -n 3 --engine $engine --no-tui >"$tmp/out" 2>"$tmp/err" </dev/null
    got=$?
    if [ "$got" != 2 ]; then why="status $got"
    elif ! grep -E "^(collectives|collective mismatch|  rank)" "$tmp/err" | cmp -s - "$tmp/roots.want"; then
      why="not every rank's call, or not counted"
      grep -E "^(collectives|collective mismatch|  rank)" "$tmp/err" | diff "$tmp/roots.want" - | head
    fi
    [ -n "$why" ] && break
  done
  if [ -n "$why" ]; then bad "a mismatch before every rank entered: waits for them ($engine)" "$why"
  else ok "a mismatch before every rank entered: waits for them ($engine)"
  fi
done
expect "a rank skips: status 3"    3 "rank 2 did not call it: it has finished" -- run "$dir/skip.lua" -n 3
expect "a rank skips: the call"    3 "ranks 0, 1 entered barrier() at skip.lua:2, collective call #1 on the world group" -- run "$dir/skip.lua" -n 3

# ---- --algo
expect "--algo in --help"          0 "default: recursive_doubling up to 32 KiB (128 KiB from 16 ranks), else ring" -- run --help
expect "--algo help: the defaults"  0 "all_gather      ring, direct" -- run --algo help
expect "--algo help: all_reduce's"  0 "default: recursive_doubling up to 32 KiB (128 KiB from 16 ranks), else ring" -- run --algo help
expect "bench --algo help"          0 "default: direct up to 16 KiB on up to 8 ranks, else ring" -- bench --algo help
expect "--algo: unknown algorithm" 1 "--algo: unknown broadcast algorithm 'ring' (available: tree (default), linear)" -- run "$dir/async.lua" --algo broadcast=ring
expect "--algo: not C=A"           1 "--algo: 'ring' is not COLLECTIVE=ALGORITHM" -- run "$dir/async.lua" --algo ring
expect "--algo is used"            0 "" -- run "$dir/async.lua" -n 5 --algo all_reduce=recursive_doubling,broadcast=linear --trace "$tmp/a.jsonl"
if grep -q '"name": *"all_reduce".*"algo": *"recursive_doubling"' "$tmp/a.jsonl" &&
   grep -q '"name": *"broadcast".*"algo": *"linear"' "$tmp/a.jsonl"; then
  ok "the trace says which algorithm ran"
else
  bad_showing "$tmp/a.jsonl" "the trace says which algorithm ran"
fi

# the default by size: recursive doubling up to 32 KiB, the ring above
for np in 3 4; do
  eng=thread; [ $np = 4 ] && eng=tcp
  expect "default by size, $np ranks ($eng): the same sums" 0 "[rank 0] same" -- run "$dir/default_algo.lua" -n $np --engine $eng --trace "$tmp/d$np.jsonl"
  if [ "$(grep '"type": *"coll"' "$tmp/d$np.jsonl" | grep '"begin": *true' | grep '"line": *4' | grep -c '"algo": *"recursive_doubling"')" = $np ] &&
     [ "$(grep '"type": *"coll"' "$tmp/d$np.jsonl" | grep '"begin": *true' | grep '"line": *5' | grep -c '"algo": *"ring"')" = $np ]; then
    ok "the trace names the default's pick, $np ranks"
  else
    bad_showing "$tmp/d$np.jsonl" "the trace names the default's pick, $np ranks"
  fi
done

replay_same "the default by size" "$dir/default_algo.lua" -n 5
replay_same "a count mismatch across the size line" "$dir/count_mismatch_line.lua" -n 3

# commsim bench's algo column says what the default picked at each size
expect "bench: the default's pick per size" 0 "" -- bench --engine thread --op all_reduce,broadcast --sizes 1K,64K -n 3 --iters 2 --format csv
if [ "$(cut -d, -f3,4,6 "$tmp/out" | tail -n +2 | tr '\n' ' ')" = "all_reduce,default:recursive_doubling,1024 all_reduce,default:ring,65536 broadcast,default:tree,1024 broadcast,default:tree,65536 " ]; then
  ok "bench: algo column default:recursive_doubling at 1 KiB, default:ring at 64 KiB"
else
  bad_showing "$tmp/out" "bench: algo column default:recursive_doubling at 1 KiB, default:ring at 64 KiB"
fi

# ---- semantics
expect "async work handles"        0 "[rank 2] tensor([3., 3., 3.])	true" -- run "$dir/async.lua" -n 3
expect "async handle prints"       0 "Work(all_reduce, line 2, completed)	true" -- run "$dir/async.lua" -n 3
# get_rank and get_world_size of a group: -1 for both off the group, as torch
expect "group rank and size: a member"     0 "[rank 2] group rank and size	0	2" -- run "$dir/group_query.lua" -n 3
expect "group rank and size: not a member" 0 "[rank 1] group rank and size	-1	-1" -- run "$dir/group_query.lua" -n 3
expect "groups keep traffic apart" 0 "[rank 0] user message from rank 2: tensor([3., 3.])" -- run "$dir/isolation.lua" -n 3 --trace "$tmp/i.jsonl"
# every internal message of the group runs in the group's context (2), the
# user message in context 0; coll enter and leave on both members
if [ "$(grep -c '"type": *"coll"' "$tmp/i.jsonl")" = 4 ] &&
   grep '"type": *"post"' "$tmp/i.jsonl" | grep -q '"ctx": *2' &&
   ! grep '"type": *"post"' "$tmp/i.jsonl" | grep -v '"ctx": *[02]' | grep -q .; then
  ok "trace: coll events and internal messages in the group's context"
else
  bad_showing "$tmp/i.jsonl" "trace: coll events and internal messages in the group's context"
fi

# recursive doubling and reduce_broadcast over 1 MiB: the ring's result
for np in 3 4 5; do
  expect "recursive_doubling and reduce_broadcast (in place) over 1 MiB, $np ranks: the ring's result" 0 "[rank 0] same" -- run "$dir/rd_chunks.lua" -n $np --mem-limit 1024
done
expect "... on tcp too" 0 "[rank 2] same" -- run "$dir/rd_chunks.lua" --engine tcp --mem-limit 1024

# exchange steps (a rank sends to and receives from one peer), where the tcp
# engine completes a SYNC without its ACK: every algorithm and the rings on
# two ranks, sizes across the largest SYNC and eager:N's line, all_to_all
# beside them, three rounds; exact sums, no hang, in every send mode
for eng in thread tcp; do
  for np in 2 3 4 6; do
    for mode in rendezvous eager eager:1000; do
      expect "exchanges, $np ranks, $mode ($eng)" 0 "[rank 0] ok" -- run "$dir/exchange.lua" -n $np --engine $eng --send-mode $mode
      count_lines "exchanges: every rank agrees, $np ranks, $mode ($eng)" $np "] ok"
    done
  done
done
replay_same "exchanges on tcp" "$dir/exchange.lua" -n 4 --engine tcp
# ... and an exchange's send completes only once the peer's receive is
# posted: rank 3 never calls the second all_reduce, so rank 2's send to it
# stays pending, after eager exchanges with rank 3 (eager:1000) as after
# rendezvous ones; the same ending on both engines
for mode in rendezvous eager:1000; do
  for engine in thread tcp; do
    expect "exchange with a rank that never calls, $mode ($engine)" 3 \
      "rank 2 is blocked in all_reduce at exchange_skip.lua:9, on its internal isend to rank 3" \
      -- run "$dir/exchange_skip.lua" --engine $engine --send-mode $mode
    tail -n +2 "$tmp/err" >"$tmp/skip.$engine"
  done
  if cmp -s "$tmp/skip.thread" "$tmp/skip.tcp"; then
    ok "exchange with a rank that never calls: the same ending on both engines ($mode)"
  else
    diff "$tmp/skip.thread" "$tmp/skip.tcp" | head -20
    bad "exchange with a rank that never calls: the same ending on both engines ($mode)"
  fi
done
replay_same "exchange with a rank that never calls (tcp)" "$dir/exchange_skip.lua" --engine tcp --send-mode eager:1000

finish
