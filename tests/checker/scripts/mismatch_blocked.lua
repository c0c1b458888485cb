--- title: a collective mismatch whose third rank waits for a message first (tests)
--- world: 3
local t = tensor.ones(rank == 0 and 4 or 5)
if rank < 2 then
  dist.all_reduce(t)
  dist.send(t, 2)
else
  dist.recv(tensor.zeros(5), 1)
  dist.all_reduce(t)
end
