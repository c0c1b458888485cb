--- world: 2
--- send-mode: eager
-- Rank 1 is a peer that never reads (tests/hostile/mute_rank.py): rank 0's
-- eager sends pile up in its own process, copied aside because the socket
-- takes no more. Those copies count against rank 0's cap.
local t = tensor.zeros(256 * 1024)
if rank == 0 then
  local works = {}
  for i = 1, 3000 do works[i] = dist.isend(t, 1, {tag = i}) end
  dist.wait_all(works)
end
