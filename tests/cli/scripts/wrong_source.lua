--- expect: deadlock
--- world: 3
local t = tensor.zeros(4)
if rank == 0 then
    dist.send(t, 1)
elseif rank == 1 then
    dist.recv(t, 2)
end
