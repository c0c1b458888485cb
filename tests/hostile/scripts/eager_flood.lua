--- world: 2
-- 3000 eager isends of 1 MiB before any receive: buffered, they count
-- against a cap (the sender's on the thread engine, the receiver's on tcp).
local t = tensor.zeros(256 * 1024)
if dist.get_rank() == 0 then
  local works = {}
  for i = 1, 3000 do works[i] = dist.isend(t, 1, {tag = i}) end
  dist.wait_all(works)
else
  dist.compute(5000)
  for i = 1, 3000 do dist.recv(t, 0, {tag = i}) end
end
