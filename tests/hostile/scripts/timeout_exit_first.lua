--- world: 2
local t = tensor.zeros(4)
if rank == 0 then dist.send(t, 1) else dist.compute(5000); dist.recv(t, 0) end
