--- title: three 1000-byte messages into one rank at once
--- world: 4
-- Ranks 1..3 send at virtual time 0; rank 0's incoming link carries one
-- transmission at a time, in sender-rank order, whatever the real order.
local t = tensor.zeros(250)
if rank == 0 then
  local w = {}
  for src = 3, 1, -1 do w[src] = dist.irecv(tensor.zeros(250), src) end
  for src = 1, 3 do
    w[src]:wait()
    print(string.format("from %d at %.0f ns", src, dist.time() * 1e9))
  end
else
  -- real delays that differ by rank; virtual time does not see them
  local x = 0
  for i = 1, (4 - rank) * 200000 do x = x + i end
  dist.send(t, 0)
end
