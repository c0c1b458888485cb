-- ring: reference solution (even ranks send first).
local right = (rank + 1) % world_size
local left = (rank - 1 + world_size) % world_size
local outgoing = tensor.full(1, rank + 1)
local incoming = tensor.zeros(1)
local total = outgoing:clone()
for step = 1, world_size - 1 do
    if rank % 2 == 0 then
        dist.send(outgoing, right)
        dist.recv(incoming, left)
    else
        dist.recv(incoming, left)
        dist.send(outgoing, right)
    end
    total:add_(incoming)
    outgoing:copy_(incoming)
end
result = total
