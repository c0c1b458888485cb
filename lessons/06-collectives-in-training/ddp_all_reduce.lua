--- title: Data parallel: average the gradients with all_reduce
--- world: 4
--- expect: ok

-- Data-parallel training (PyTorch DDP, Horovod, DeepSpeed's stage 0): every
-- rank holds the whole model and a different slice of the batch. After the
-- backward pass each rank has the gradient of *its* data only; an all_reduce
-- sums the gradients and a division by world_size turns the sum into the
-- average, the gradient of the whole batch. Every rank then takes the same
-- step, so the replicas stay identical without ever sending a weight.

-- The model: y = x . w, three weights, squared error, every replica at zero
-- (broadcast_weights.lua shows how they are made equal). The data was made
-- up by y = x . {1, 2, 3}.
local w = tensor.zeros(3)
local lr = 0.0625                  -- 1/16, a power of two: the arithmetic stays exact

-- This rank's slice of the batch: one sample, different on every rank.
local samples = { {1, 1, 3}, {2, 3, 4}, {3, 4, 3}, {4, 2, 4} }
local x = tensor.from(samples[rank % #samples + 1])
local y = (x * tensor.from({1, 2, 3})):sum()

-- forward and backward on the local data: grad = (x . w - y) * x
local err = (x * w):sum() - y
local grad = x * err
print("local gradient:    " .. tostring(grad))

-- Who sends what: every rank its gradient. What is aggregated: the sum,
-- elementwise; every rank gets it.
dist.all_reduce(grad, ReduceOp.SUM)
print("sum over ranks:    " .. tostring(grad))
grad:div_(world_size)              -- DDP averages: it divides by world_size
print("average:           " .. tostring(grad))

w:sub_(grad * lr)                  -- the same step on every rank
print("weights after one step: " .. tostring(w))

-- ReduceOp.AVG does the sum and the division in one call (NCCL has it too):
--   dist.all_reduce(grad, ReduceOp.AVG)
