--- title: a rendezvous send completes while its receiver computes
--- world: 2
-- Rank 1 neither waits nor sends after its first receive: the ACK its
-- receive owes rank 0 must leave anyway, or rank 0 never sends again.
local a, b = tensor.full(2, 1), tensor.full(2, 2)
if rank == 0 then
  dist.send(a, 1)
  print("first send completed")
  dist.send(b, 1)
else
  dist.recv(a, 0)
  local w = dist.irecv(b, 0)
  local polls = 0
  while not w:is_completed() do
    dist.compute(1)
    polls = polls + 1
  end
  w:wait()
  print("received " .. tostring(a[0]) .. " and " .. tostring(b[0]))
end
