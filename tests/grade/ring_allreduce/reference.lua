local p = world_size
local data = tensor.arange(4 * p) + rank
local chunks = data:chunk(p)
local right, left = (rank + 1) % p, (rank - 1 + p) % p
local incoming = tensor.zeros(4)
local function exchange(send_idx, recv_idx, add)
    local s = dist.isend(chunks[send_idx + 1], right)
    dist.recv(incoming, left)
    s:wait()
    if add then chunks[recv_idx + 1]:add_(incoming) else chunks[recv_idx + 1]:copy_(incoming) end
end
for s = 0, p - 2 do
    exchange((rank - s) % p, (rank - s - 1) % p, true)
end
for s = 0, p - 2 do
    exchange((rank + 1 - s) % p, (rank - s) % p, false)
end
result = data
