--- title: a blocking receive from the rank itself (tests)
--- world: 2
local t = tensor.zeros(2)
if rank == 1 then
  dist.recv(t, 1)
end
