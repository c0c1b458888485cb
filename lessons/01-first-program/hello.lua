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
