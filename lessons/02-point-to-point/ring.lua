--- title: Ring: every rank passes to the right until all have seen every value
--- world: 4
--- expect: ok

-- The ranks form a ring: each sends to its right neighbour and receives from
-- its left one. Passing on what just arrived, after world_size - 1 steps
-- every value has visited every rank, so each rank can add them all up.
-- This is the skeleton of the ring all-reduce used by NCCL and Horovod.

if world_size < 2 then
    error("a ring needs at least 2 ranks: run with -n 2 or more")
end

local right = (rank + 1) % world_size
local left = (rank - 1 + world_size) % world_size

local outgoing = tensor.ones(2) * rank   -- what this rank passes on next
local incoming = tensor.zeros(2)         -- where the left neighbour's value lands
local total = outgoing:clone()

for step = 1, world_size - 1 do
    -- If every rank sent first, every send would wait for a receive that is
    -- never posted (see deadlock.lua). Even ranks send first, odd ranks
    -- receive first: every send then meets a receive. With an odd world
    -- size ranks n-1 and 0 are both even, but rank 0 receives right after
    -- its own send completes, so the chain of waits still unwinds.
    if rank % 2 == 0 then
        dist.send(outgoing, right)
        dist.recv(incoming, left)
    else
        dist.recv(incoming, left)
        dist.send(outgoing, right)
    end
    if step == 1 then
        print("step 1: received " .. tostring(incoming) .. " from rank " .. left)
    end
    total:add_(incoming)
    outgoing:copy_(incoming)             -- next step, pass on what just arrived
end

-- 0 + 1 + ... + (n - 1) = n * (n - 1) / 2 on every rank.
print("sum of all ranks: " .. tostring(total))
