--- title: spins on is_completed: fine with eager sends, never ends with rendezvous ones (tests)
--- world: 2
if rank == 0 then
  local w = dist.isend(tensor.ones(2), 1)
  while not w:is_completed() do end
end
