--- title: Chain: pass a tensor down the line, each middle rank adds 10
--- world: 4
--- expect: ok

-- Rank 0 starts the chain, the middle ranks each receive, add 10 and pass it
-- on, and the last rank prints the result. Each rank talks only to its
-- neighbours: rank - 1 before it and rank + 1 after it.

local first, last = 0, world_size - 1
local t = tensor.zeros(4)           -- every rank needs a buffer of the same size

if rank == first then
    t:copy_(tensor.from({1, 2, 3, 4}))
    print("start: " .. tostring(t))
else
    -- Blocks until rank - 1 has sent. Rank 3 waits for rank 2, which waits
    -- for rank 1...: the ranks finish one after another, not together.
    dist.recv(t, rank - 1)
end

if rank ~= first and rank ~= last then
    t:add_(10)                      -- in place: the trailing _ means "modify t"
end

if rank ~= last then
    dist.send(t, rank + 1)
else
    -- n ranks: n - 2 middle ranks, so the result is the start + 10 * (n - 2).
    print("end:   " .. tostring(t))
end
