--- title: ping-pong latency and streaming bandwidth between two ranks
--- world: 2
-- Measures, it does not test: run it with `bench/run.sh` (or commsim run
-- bench/pingpong.lua) and read the figures rank 0 prints.
local peer = 1 - rank

local function pingpong(numel, iters)
  local t = tensor.zeros(numel)
  -- warm up: the first exchanges page in buffers and wake the threads
  for _ = 1, 100 do
    if rank == 0 then dist.send(t, peer); dist.recv(t, peer)
    else dist.recv(t, peer); dist.send(t, peer) end
  end
  local t0 = dist.time()
  for _ = 1, iters do
    if rank == 0 then dist.send(t, peer); dist.recv(t, peer)
    else dist.recv(t, peer); dist.send(t, peer) end
  end
  return (dist.time() - t0) / iters / 2   -- half round trip, seconds
end

local function stream(numel, iters)
  local t = tensor.zeros(numel)
  local ack = tensor.zeros(1)
  local t0 = dist.time()
  for _ = 1, iters do
    if rank == 0 then dist.send(t, peer) else dist.recv(t, peer) end
  end
  if rank == 0 then dist.recv(ack, peer) else dist.send(ack, peer) end
  return numel * 4 * iters / (dist.time() - t0)   -- bytes per second
end

local lat8 = pingpong(2, 20000)          -- 8 bytes
local lat64k = pingpong(16384, 2000)     -- 64 KiB
local bw = stream(1 << 20, 200)          -- 4 MiB messages
if rank == 0 then
  print(string.format("half round trip, 8 B:    %8.2f us", lat8 * 1e6))
  print(string.format("half round trip, 64 KiB: %8.2f us", lat64k * 1e6))
  print(string.format("bandwidth, 4 MiB:        %8.2f GB/s", bw / 1e9))
end
