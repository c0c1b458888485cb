--- world: 4
-- Two deadlocks that share no rank: ranks 0 and 1 both send first, ranks 2
-- and 3 both receive first. The report must not say that ranks 2 and 3 wait
-- on the cycle of ranks 0 and 1.
local t = tensor.zeros(2)
if rank < 2 then
  dist.send(t, 1 - rank)
else
  dist.recv(t, 5 - rank)
end
