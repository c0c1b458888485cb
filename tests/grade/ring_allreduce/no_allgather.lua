-- wrong: reduce-scatter only: each rank holds one finished chunk.
local p = world_size
local data = tensor.arange(4 * p) + rank
local chunks = data:chunk(p)
local right, left = (rank + 1) % p, (rank - 1 + p) % p
local incoming = tensor.zeros(4)
for s = 0, p - 2 do
    local req = dist.isend(chunks[(rank - s) % p + 1], right)
    dist.recv(incoming, left)
    req:wait()
    chunks[(rank - s - 1) % p + 1]:add_(incoming)
end
result = data
