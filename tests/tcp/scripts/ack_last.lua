--- title: a rendezvous receive is the receiver's last operation
--- world: 2
-- The ACK rank 1 owes leaves when its script ends: rank 0's send completes.
local t = tensor.full(3, 7)
if rank == 0 then
  dist.send(t, 1)
  print("send completed")
else
  local r = tensor.zeros(3)
  dist.recv(r, 0)
  print("received " .. tostring(r[2]))
end
