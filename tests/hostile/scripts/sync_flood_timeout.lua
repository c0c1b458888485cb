--- world: 2
-- 16384 rendezvous isends of 64 KiB before any receive; run with --timeout 4
-- (tests/hostile/run_hostile.sh), the timeout lands while rank 1 receives:
-- a timeout, never a deadlock.
local t = tensor.zeros(16384)
if dist.get_rank() == 0 then
  local works = {}
  for i = 1, 16384 do works[i] = dist.isend(t, 1, {tag = i}) end
  dist.wait_all(works)
else
  dist.compute(3000)
  for i = 1, 16384 do dist.recv(t, 0, {tag = i}) end
end
