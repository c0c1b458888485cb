--- title: Ping-pong: one-way time and bandwidth for every message size
--- world: 2
--- net: alpha=10us,bandwidth=1GB/s
--- expect: ok

-- Rank 0 sends a tensor to rank 1, which sends it straight back: a round
-- trip. Half of it is the one-way time of one message. Done for sizes from 4
-- bytes to 4 MiB, it shows the two regimes of every network: small messages
-- cost a fixed latency whatever their size, large ones cost their size over
-- the bandwidth.
--
-- The header's net line runs this under the alpha-beta model (alpha 10 us,
-- 1 GB/s: one byte takes 1 ns), so the times are exact and the same on every
-- run. `--net none` measures the real thing on your machine and engine.

if world_size < 2 then error("ping-pong needs 2 ranks: run with -n 2") end

local rounds = 10
local sizes = {4, 64, 1024, 16384, 262144, 4194304}   -- bytes; float32 is 4 bytes

for _, bytes in ipairs(sizes) do
    local ball = tensor.zeros(bytes // 4)
    dist.barrier()
    if rank == 0 then
        local t0 = dist.time()
        for _ = 1, rounds do
            dist.send(ball, 1)
            dist.recv(ball, 1)
        end
        local one_way = (dist.time() - t0) / (2 * rounds)
        print(string.format("%8d B: one way %.3f us, %.4f GB/s", bytes, one_way * 1e6,
                            bytes / one_way / 1e9))
    elseif rank == 1 then
        for _ = 1, rounds do
            dist.recv(ball, 0)
            dist.send(ball, 0)
        end
    end
end
