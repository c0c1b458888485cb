--- title: a ring that keeps exchanging until the run is ended from outside
--- world: 4
-- Every rank sends to the right and receives from the left, with a little
-- compute between rounds, so that a kill lands in a send, a receive, a wait
-- or a compute.
local t = tensor.full(1024, rank)
local r = tensor.zeros(1024)
local right, left = (rank + 1) % world_size, (rank - 1) % world_size
for i = 1, 1000000 do
  if i == 1 and rank == 0 then print("running") end
  local w = dist.isend(t, right)
  dist.recv(r, left)
  w:wait()
  if i % 7 == rank then dist.compute(1) end
end
