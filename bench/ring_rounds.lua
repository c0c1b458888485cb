--- title: Benchmark: a ring exchange repeated, as fast as the ranks go
--- world: 64
-- Each round every rank sends to its right neighbour and receives from its
-- left one (isend, then recv, then wait): world_size messages per round.
local rounds = 3000
local right, left = (rank + 1) % world_size, (rank - 1 + world_size) % world_size
local out, inc = tensor.ones(16) * rank, tensor.zeros(16)
for _ = 1, rounds do
    local w = dist.isend(out, right)
    dist.recv(inc, left)
    w:wait()
end
if rank == 0 then print(rounds * world_size .. " messages") end
