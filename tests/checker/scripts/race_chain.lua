--- title: a race that always deadlocks with buffered sends (tests)
--- world: 3
-- Rank 2 sends to rank 0, then to rank 1, which only then sends to rank 0.
-- With eager sends rank 0's receive from any source always takes rank 2's
-- message (the first to arrive) and nothing orders rank 1's send after that
-- receive: a race, which leaves rank 0 waiting for a second message from
-- rank 2. The deadlock's fix must name the race, not a wrong source.
local t = tensor.zeros(1)
if rank == 0 then
  dist.recv(t)
  dist.recv(t, 2)
elseif rank == 2 then
  dist.send(tensor.full(1, 2), 0)
  dist.send(tensor.full(1, 2), 1)
else
  dist.recv(t, 2)
  dist.send(tensor.full(1, 1), 0)
end
