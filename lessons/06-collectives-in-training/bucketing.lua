--- title: Bucketing: one large all_reduce instead of many small ones
--- world: 4
--- expect: ok

-- A model has many parameters, most of them small (biases, norms). One
-- all_reduce per parameter pays the fixed cost of a collective every time:
-- the ring all_reduce (named here: small tensors default to recursive
-- doubling) takes 2 (n - 1) steps, one message each, whatever the size.
-- PyTorch DDP packs gradients into buckets (25 MB, `bucket_cap_mb`) and
-- all-reduces each bucket as one flat tensor as soon as the backward pass
-- has filled it. Horovod calls it tensor fusion; DeepSpeed and FSDP too.

local sizes = {3, 5, 2, 4, 1, 5}           -- six parameters, 20 values in all
local grads = {}
for i, k in ipairs(sizes) do
    grads[i] = tensor.full(k, (rank + 1) * i)    -- this rank's gradient of parameter i
end

-- 1. One all_reduce per parameter.
local separate = {}
for i, g in ipairs(grads) do
    separate[i] = g:clone()
    dist.all_reduce(separate[i], ReduceOp.SUM, {algo = "ring"})
end

-- 2. One bucket: copy every gradient into a flat tensor (views of it, as
-- DDP's buckets are), all_reduce it once, read the results back.
local total = 0
for _, k in ipairs(sizes) do total = total + k end
local bucket = tensor.zeros(total)
local views, offset = {}, 0
for i, k in ipairs(sizes) do
    views[i] = bucket:narrow(0, offset, k)
    views[i]:copy_(grads[i])
    offset = offset + k
end
dist.all_reduce(bucket, ReduceOp.SUM, {algo = "ring"})

local same = true
for i = 1, #sizes do same = same and views[i]:equal(separate[i]) end

if rank == 0 then
    local n = world_size
    local per_call = 2 * (n - 1)              -- ring: sends per rank and call
    print(string.format("%d all_reduces, one per parameter: %d messages per rank, %d in all",
                        #sizes, #sizes * per_call, #sizes * per_call * n))
    print(string.format("1 all_reduce of a %d-value bucket: %d messages per rank, %d in all",
                        total, per_call, per_call * n))
    print("bucket: " .. tostring(bucket))
    print("same gradients either way: " .. tostring(same))
end
-- The bytes are the same either way: bucketing saves the per-message cost
-- (latency), not bandwidth. Count the messages yourself: run with
-- --trace b.jsonl and count the "isend" posts of each all_reduce line.
