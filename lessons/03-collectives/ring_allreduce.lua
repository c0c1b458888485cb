--- title: Ring all-reduce by hand, beside the built-in one
--- world: 4
--- expect: ok

-- The ring all-reduce (NCCL's, Horovod's) written with isend/irecv. The
-- tensor is cut into world_size chunks. Each rank sends to its right
-- neighbour and receives from its left one, one chunk per step:
--   1. reduce-scatter, world_size - 1 steps: pass a chunk on and add the
--      chunk arriving from the left to your own copy of it. Afterwards
--      rank r holds the complete sum of chunk r + 1.
--   2. all-gather, world_size - 1 steps: pass the complete chunks around.
-- Each rank sends 2 * (n - 1) / n of the tensor in all, whatever n is:
-- that is why the ring is the bandwidth-optimal all-reduce.

local n = world_size
local right, left = (rank + 1) % n, (rank - 1 + n) % n
local t = (tensor.arange(n) + 1) * (rank + 1)      -- {1, 2, ..., n} * (rank + 1): one element per chunk
local chunks = t:chunk(n)                          -- views: they share t's storage
local incoming = tensor.zeros(1)
print("start:          " .. tostring(t))

local function exchange(send_chunk, recv_into)
    -- post the receive first, then the send: no rank waits for the other
    local r = dist.irecv(recv_into, left)
    local s = dist.isend(send_chunk, right)
    r:wait()
    s:wait()
end

for step = 0, n - 2 do                             -- 1. reduce-scatter
    local send_i = (rank - step) % n
    local recv_i = (rank - step - 1) % n
    exchange(chunks[send_i + 1], incoming)
    chunks[recv_i + 1]:add_(incoming)
    print(string.format("reduce step %d: sent chunk %d, added chunk %d -> %s", step + 1,
                        send_i, recv_i, tostring(t)))
end
for step = 0, n - 2 do                             -- 2. all-gather
    local send_i = (rank + 1 - step) % n
    local recv_i = (rank - step) % n
    exchange(chunks[send_i + 1], chunks[recv_i + 1])
    print(string.format("gather step %d: sent chunk %d, got chunk %d -> %s", step + 1,
                        send_i, recv_i, tostring(t)))
end

-- The built-in one runs the same schedule (watch its messages with --trace).
local u = (tensor.arange(n) + 1) * (rank + 1)
dist.all_reduce(u, ReduceOp.SUM, {algo = "ring"})
print("by hand:        " .. tostring(t))
print("built-in ring:  " .. tostring(u))
print("same: " .. tostring(t:equal(u)))
