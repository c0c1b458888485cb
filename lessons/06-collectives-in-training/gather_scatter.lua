--- title: Scatter the data shards, gather the losses for the log
--- world: 4
--- expect: ok

-- Rank 0 holds the batch (it read it from disk) and deals one shard to each
-- rank with dist.scatter; each rank computes a loss on its shard; rank 0
-- collects every rank's loss with dist.gather to log them one by one. (Most
-- training loops let every rank load its own shard through a
-- DistributedSampler instead; scatter is the choice when one process owns
-- the data. Lightning and logging code gather per-rank values to rank 0.)

local per_rank = 3
local shard = tensor.zeros(per_rank)

-- Who sends what: rank 0 sends piece i of its list to rank i; only rank 0
-- passes a list. Nothing is aggregated.
local pieces = nil
if rank == 0 then
    local batch = tensor.arange(per_rank * world_size) + 1   -- 1, 2, ..., 12
    print("the batch: " .. tostring(batch))
    pieces = batch:chunk(world_size)
end
dist.scatter(shard, pieces, 0)
print("my shard: " .. tostring(shard))

-- A "loss" on the shard: the sum of squares, an integer.
local loss = tensor.from({(shard * shard):sum()})

-- Who sends what: every rank its loss to rank 0, which stores rank i's in
-- slot i. Nothing is aggregated: rank 0 sees every value, not just a sum.
local losses = nil
if rank == 0 then
    losses = {}
    for i = 1, world_size do losses[i] = tensor.zeros(1) end
end
dist.gather(loss, losses, 0)

if rank == 0 then
    local total = 0
    for i = 1, world_size do
        print(string.format("  loss of rank %d: %d", i - 1, losses[i][0]))
        total = total + losses[i][0]
    end
    print(string.format("log: mean loss %d/%d", total, world_size))
end
