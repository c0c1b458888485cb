-- wrong: rank 0 sends to everyone (p - 1 sends from one rank).
local t = rank == 0 and tensor.arange(8) or tensor.zeros(8)
if rank == 0 then
    for r = 1, world_size - 1 do dist.send(t, r) end
else
    dist.recv(t, 0)
end
result = t
