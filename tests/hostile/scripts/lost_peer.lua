--- world: 2
-- Under ulimit -v the receiver cannot buffer an eager 512 MiB message that
-- arrives before its receive: it drops the connection. That must be
-- reported at once, not found at the timeout.
local n = 128 * 1024 * 1024
if dist.get_rank() == 0 then
  dist.send(tensor.ones(n), 1)
else
  local t = tensor.zeros(n)
  dist.compute(500)
  dist.recv(t, 0)
  print(t:sum())
end
