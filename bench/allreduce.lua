--- title: all_reduce float32 SUM: time, algbw and busbw per algorithm
--- world: 4
-- Measures, it does not test: run it with `bench/run.sh allreduce` (or
-- commsim run bench/allreduce.lua --step-limit 0 --mem-limit 1024) and read
-- the table rank 0 prints. The formulas are nccl-tests' (doc/PERFORMANCE.md):
--   algbw = bytes / time
--   busbw = algbw * 2 (n - 1) / n      (the bytes each link carries)
-- time is the slowest rank's average over the iterations, each iteration
-- starting from a barrier-aligned loop.

local n = world_size
local algos = {"ring", "recursive_doubling", "reduce_broadcast"}
local sizes = {}
for kib = 0, 16, 2 do sizes[#sizes + 1] = 1024 << kib end   -- 1 KiB .. 64 MiB

local function measure(algo, bytes)
    collectgarbage()                     -- free the previous size's tensor first
    local t = tensor.ones(bytes // 4)
    local iters = math.max(3, math.min(1000, (256 << 20) // bytes))
    dist.all_reduce(t, ReduceOp.SUM, {algo = algo})          -- warm up
    dist.barrier()
    local t0 = dist.time()
    for _ = 1, iters do dist.all_reduce(t, ReduceOp.SUM, {algo = algo}) end
    local elapsed = tensor.from({(dist.time() - t0) / iters}, {dtype = "float64"})
    dist.all_reduce(elapsed, ReduceOp.MAX)
    return elapsed[0], iters
end

local function human(bytes)
    if bytes >= 1 << 20 then return string.format("%d MiB", bytes >> 20) end
    return string.format("%d KiB", bytes >> 10)
end

if rank == 0 then
    print(string.format("all_reduce float32 SUM, %d ranks, thread engine", n))
    print(string.format("%-19s %8s %6s %12s %10s %10s", "algorithm", "size", "iters",
                        "time (us)", "algbw GB/s", "busbw GB/s"))
end
for _, algo in ipairs(algos) do
    for _, bytes in ipairs(sizes) do
        local sec, iters = measure(algo, bytes)
        local algbw = bytes / sec / 1e9
        if rank == 0 then
            print(string.format("%-19s %8s %6d %12.1f %10.3f %10.3f", algo, human(bytes), iters,
                                sec * 1e6, algbw, algbw * 2 * (n - 1) / n))
        end
    end
end
