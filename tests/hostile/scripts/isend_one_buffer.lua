-- 80000 isends of one tensor in flight at once: each isend reads the tensor,
-- and the read used to be checked against every request in flight on it
-- (6.4e9 overlap tests, not charged to any budget: the run sat at its
-- timeout). A read conflicts only with a write in flight: none here.
local t, works = tensor.zeros(1), {}
local peer = 1 - rank
for i = 1, 80000 do
  works[#works + 1] = dist.isend(t, peer)
  works[#works + 1] = dist.irecv(tensor.zeros(1), peer)
end
dist.wait_all(works)
if rank == 0 then print("done", #works) end
