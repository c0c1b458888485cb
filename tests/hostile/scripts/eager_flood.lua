--- world: 2
-- 3000 eager isends of 1 MiB before any receive: buffered, they count
-- against a cap (the sender's on the thread engine; on tcp the receiver's
-- for what reached it, the sender's for what its socket has not taken).
-- Rank 1 receives the last message first: the other 3000 arrive before it
-- on the same connection, so they wait for their receives whatever the speed.
local t = tensor.zeros(256 * 1024)
local done = tensor.zeros(1)
if dist.get_rank() == 0 then
  local works = {}
  for i = 1, 3000 do works[i] = dist.isend(t, 1, {tag = i}) end
  dist.send(done, 1, {tag = 0})
  dist.wait_all(works)
else
  dist.recv(done, 0, {tag = 0})
  for i = 1, 3000 do dist.recv(t, 0, {tag = i}) end
end
