--- title: Broadcast: every replica starts from rank 0's weights
--- world: 4
--- expect: ok

-- Data-parallel training keeps one copy (a replica) of the model on every
-- rank. The replicas must start identical, or they train different models.
-- PyTorch's DistributedDataParallel does this when it wraps the model: it
-- broadcasts rank 0's parameters and buffers to every other rank.

-- Each rank "initialises" its own weights. Real code would draw random
-- numbers; here every rank gets different integers, to make the point.
local weight = tensor.arange(6):view(2, 3) * (rank + 1) + 10 * rank
local bias = tensor.full(2, rank)
print(string.format("own init:   weight sum %d, bias %s", weight:sum(), tostring(bias)))

-- One broadcast per parameter, from rank 0 (the src is a world rank).
-- Who sends what: rank 0's tensor goes to everyone; nothing is added up.
dist.broadcast(weight, 0)
dist.broadcast(bias, 0)
print(string.format("after bcast: weight sum %d, bias %s", weight:sum(), tostring(bias)))

-- Check that the replicas agree: the largest and the smallest value of each
-- element over all ranks must be the same.
local hi, lo = weight:clone(), weight:clone()
dist.all_reduce(hi, ReduceOp.MAX)
dist.all_reduce(lo, ReduceOp.MIN)
if rank == 0 then
    print("every replica holds rank 0's weights: " .. tostring(hi:equal(lo)))
    print(weight)
end
