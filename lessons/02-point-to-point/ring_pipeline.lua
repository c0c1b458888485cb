--- title: A pipeline that comes back: 0 -> 1 -> ... -> n-1 -> 0, each rank adds its part
--- world: 4
--- expect: ok

-- A running total travels once around the ring: rank 0 starts it with its
-- own contribution, every rank adds its contribution and passes it on, and
-- the last rank hands it back to rank 0, which ends with the contributions of
-- everybody. Unlike the linear chain, the result comes home to the rank that
-- started it, so rank 0 can use it (and broadcast it: that second lap is
-- the ring all-reduce's all-gather).
--
-- Rank r contributes 2^r in the first column (so the total, 2^n - 1, shows
-- that every rank added exactly once) and r + 1 in the second.

local n = world_size
if n < 2 then error("the ring needs at least 2 ranks: run with -n 2 or more") end
local right, left = (rank + 1) % n, (rank - 1 + n) % n
local mine = tensor.from({1 << rank, rank + 1}, {dtype = "int64"})
local total = tensor.zeros(2, {dtype = "int64"})

if rank == 0 then
    total:copy_(mine)
    dist.send(total, right)               -- start the lap
    dist.recv(total, left)                -- ... and receive it back from rank n - 1
    print("back at rank 0: " .. tostring(total))
    print(string.format("expected: %d (every bit set once) and %d (1 + 2 + ... + n)",
                        (1 << n) - 1, n * (n + 1) // 2))
else
    dist.recv(total, left)
    total:add_(mine)
    print("passing on " .. tostring(total))
    dist.send(total, right)
end
