-- wrong: the last stage forgets to add its rank.
local last = world_size - 1
local out = tensor.zeros(MB)
for m = 0, MB - 1 do
    local x = rank == 0 and tensor.full(4, m) or tensor.zeros(4)
    if rank > 0 then dist.recv(x, rank - 1) end
    if rank < last then x:add_(rank); dist.send(x, rank + 1) else out[m] = x:sum() end
end
if rank == last then result = out end
