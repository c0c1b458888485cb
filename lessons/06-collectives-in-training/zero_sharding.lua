--- title: ZeRO: reduce_scatter the gradients, update a shard, all_gather the weights
--- world: 4
--- expect: ok

-- Plain data parallelism keeps everything on every rank: weights, gradients
-- and the optimizer's state (Adam keeps two numbers per weight). DeepSpeed's
-- ZeRO and PyTorch's FSDP shard them instead: rank r owns 1/n of the
-- optimizer state and updates only its shard of the weights.
--   1. reduce_scatter: each rank gets the averaged gradient of its shard
--      only (ZeRO stage 2 keeps no more gradient than that);
--   2. each rank updates its shard with its shard of the optimizer state;
--   3. all_gather: everybody gets every updated shard back.
-- reduce_scatter + all_gather, both run as rings here, are the ring all_reduce
-- cut in two, so ZeRO moves DDP's bytes while storing a fraction of the state.
-- (ZeRO stage 3 and FSDP also shard the weights and all_gather them before
-- each layer's forward and backward.)

local n, k = world_size, 2                 -- k values per shard
local numel = n * k
local lo = rank * k                        -- this rank's shard: [lo, lo + k)

local w = (tensor.arange(numel) + 1) * 10  -- the same weights on every rank
local grad = tensor.arange(numel) + (2 * rank - 3)   -- this rank's gradient
local momentum = tensor.zeros(k)           -- optimizer state: this shard only
local lr, beta = 1, 0.5

print(string.format("holds: %d weights, %d gradients, optimizer state for [%d, %d)",
                    numel, numel, lo, lo + k))

-- 1. Who sends what: every rank its whole gradient, cut in n shards; what
-- is aggregated: the sum of shard j, which only rank j receives.
local gshard = tensor.zeros(k)
dist.reduce_scatter_tensor(gshard, grad, ReduceOp.SUM, {algo = "ring"})
gshard:div_(n)                             -- the average, as in DDP
print("after reduce_scatter: averaged gradient of my shard " .. tostring(gshard))

-- 2. The optimizer step on this shard only (SGD with momentum).
momentum:mul_(beta):add_(gshard)
local wshard = w:narrow(0, lo, k)          -- a view: updates w in place
wshard:sub_(momentum * lr)
print("after the step: my shard of the weights " .. tostring(wshard))

-- 3. Who sends what: every rank its updated shard to every rank; nothing
-- is aggregated. Every rank ends with the whole updated model.
local full = tensor.zeros(numel)
dist.all_gather_into_tensor(full, wshard:clone(), {algo = "ring"})
w:copy_(full)
print("after all_gather: all weights " .. tostring(w))
