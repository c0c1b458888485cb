-- ring, wrong: forwards its own value every step instead of what arrived.
local right = (rank + 1) % world_size
local left = (rank - 1 + world_size) % world_size
local mine = tensor.full(1, rank + 1)
local incoming = tensor.zeros(1)
local total = mine:clone()
for step = 1, world_size - 1 do
    if rank % 2 == 0 then
        dist.send(mine, right)
        dist.recv(incoming, left)
    else
        dist.recv(incoming, left)
        dist.send(mine, right)
    end
    total:add_(incoming)
end
result = total
