--- title: an any-source receive after every sender finished (tests)
--- world: 3
local t = tensor.zeros(2)
if rank == 0 then
  dist.recv(t)
  dist.recv(t)
  dist.recv(t)
else
  dist.send(tensor.ones(2), 0)
end
