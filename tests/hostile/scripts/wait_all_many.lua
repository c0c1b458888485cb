--- world: 2
-- wait_all over 16400 receives: the first 16384 are matched, the rest never
-- are. A block event lists at most 16384 requests; the deadlock must still
-- be found.
local works = {}
if dist.get_rank() == 0 then
  for i = 1, 16400 do works[i] = dist.irecv(tensor.zeros(1), 1, {tag = i}) end
  dist.wait_all(works)
else
  for i = 1, 16384 do works[i] = dist.isend(tensor.zeros(1), 0, {tag = i}) end
  dist.wait_all(works)
end
