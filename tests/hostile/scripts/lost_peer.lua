--- world: 2
-- Under ulimit -v the receiver cannot buffer an eager 512 MiB message that
-- arrives before its receive: it drops the connection. That must be
-- reported at once, not found at the timeout. (A receive posted first would
-- take the bytes straight into its tensor, needing no buffer: the small
-- message first makes sure the big one arrives while rank 1 computes.)
local n = 128 * 1024 * 1024
if dist.get_rank() == 0 then
  local big = tensor.ones(n)
  dist.send(tensor.ones(1), 1)
  dist.send(big, 1)
else
  local t = tensor.zeros(n)
  dist.recv(tensor.zeros(1), 0)
  dist.compute(500)
  dist.recv(t, 0)
  print(t:sum())
end
