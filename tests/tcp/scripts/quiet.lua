--- title: two ranks exchange a tensor after a pause (for stranger connections)
--- world: 2
local t = tensor.full(4, rank)
if rank == 0 then print("listening") end
dist.compute(1500)
if rank == 0 then dist.send(t, 1) else dist.recv(t, 0) end
print(t)
