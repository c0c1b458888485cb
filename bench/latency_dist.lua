--- title: the distribution of small-message latencies, one figure per iteration
--- world: 2
-- Measures, it does not test. On 2 ranks: 8 B half round trips; on more:
-- all_reduce of 1 KiB. Rank 0 times every iteration and prints the minimum,
-- the 10th percentile and the median. On a shared machine a mean over a
-- timed loop (commsim bench) mostly counts the times the ranks were
-- preempted; the low percentiles show what an operation costs when both
-- sides run.
--   commsim run bench/latency_dist.lua            (ping-pong)
--   commsim run bench/latency_dist.lua -n 4       (all_reduce)
local n = world_size == 2 and 20000 or 3000
local t = tensor.zeros(world_size == 2 and 2 or 256)
local peer = 1 - rank
local d = {}
local function once()
  if world_size > 2 then dist.all_reduce(t)
  elseif rank == 0 then dist.send(t, peer); dist.recv(t, peer)
  elseif rank == 1 then dist.recv(t, peer); dist.send(t, peer) end
end
for _ = 1, n // 10 do once() end -- warm up
for i = 1, n do
  local t0 = dist.time()
  once()
  d[i] = dist.time() - t0
end
if rank == 0 then
  table.sort(d)
  local half = world_size == 2 and 0.5 or 1
  local what = world_size == 2 and "8 B half round trip" or "all_reduce 1 KiB"
  print(string.format("%s, us: min %.3f p10 %.3f p50 %.3f (%d iterations)", what,
                      d[1] * half * 1e6, d[n // 10] * half * 1e6, d[n // 2] * half * 1e6, n))
end
