--- title: Hello: every rank says who it is
--- world: 4
--- expect: ok

-- This one file is run by every rank at the same time, each in its own
-- interpreter with its own variables. Nothing is shared between ranks:
-- the only way to share data is to send it (see exchange.lua).
--
-- `rank` is this copy's number, from 0 to world_size - 1.
-- `world_size` is how many ranks run the script (-n, or the header above).

print(string.format("hello from rank %d of %d", rank, world_size))

-- The same values through the torch.distributed names:
-- dist.get_rank() == rank, dist.get_world_size() == world_size.
assert(dist.get_rank() == rank and dist.get_world_size() == world_size)

-- Branching on the rank is how one program gives each rank a different job.
if rank == 0 then
    print("I am rank 0, often the one that coordinates the others")
end

-- A first taste of chapter 3: collectives, where every rank takes part.
-- all_gather collects every rank's tensor on every rank...
local everyone = {}
for i = 1, world_size do everyone[i] = tensor.zeros(1) end
dist.all_gather(everyone, tensor.full(1, rank))
local ranks = {}
for i = 1, world_size do ranks[i] = string.format("%g", everyone[i][0]) end
print("all_gather: the ranks are " .. table.concat(ranks, ", "))

-- ...and all_reduce adds them up: 0 + 1 + ... + (world_size - 1).
local total = tensor.full(1, rank)
dist.all_reduce(total, ReduceOp.SUM)
print(string.format("all_reduce: their sum is %g", total[0]))
