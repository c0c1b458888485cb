--- title: a 256 MiB rendezvous send posted long before its receive
--- world: 2
local n = 64 * 1024 * 1024   -- float32: 256 MiB
local go = tensor.zeros(1)
if rank == 0 then
  local t = tensor.full(n, 2)
  dist.send(go, 1)
  print("sending")
  dist.send(t, 1)
else
  dist.recv(go, 0)            -- the sender's tensor exists now
  print("waiting")
  dist.compute(5000)          -- the test samples this rank's memory meanwhile
  local r = tensor.zeros(n)
  dist.recv(r, 0)
  print("last value " .. r[n - 1])
end
