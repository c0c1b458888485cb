--- title: a receive from a rank that has finished (tests: deadlock_finished_peer)
--- world: 2
local t = tensor.zeros(4)
if rank == 1 then
  dist.recv(t, 0)
end
