--- title: a send to the wrong rank, a receive waiting for it (tests)
--- world: 3
local t = tensor.zeros(2)
if rank == 0 then
  dist.send(t, 2)
elseif rank == 1 then
  dist.recv(t, 0)
end
