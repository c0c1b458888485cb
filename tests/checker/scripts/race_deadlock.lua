--- title: a race whose other order deadlocks: any source, then a named source (tests)
--- world: 3
-- Rank 0 takes whichever message comes first, then waits for rank 2's. If
-- rank 2's came first, rank 1's send is never received: a deadlock, in which
-- the race must still be named (it was only when a later receive took it).
-- Rank 1 computes first, so that the deadlock is the usual order; the race
-- is named in either.
local t = tensor.zeros(1)
if rank == 0 then
  dist.recv(t)
  dist.recv(t, 2)
else
  if rank == 1 then dist.compute(50) end
  dist.send(tensor.full(1, rank), 0)
end
