--- title: a rank fails while another waits on it (tests)
--- world: 2
local t = tensor.zeros(2)
if rank == 0 then
  local w = dist.irecv(t, 1)              -- posted before the ping: rank 1 fails after
  dist.send(tensor.ones(1), 1)
  w:wait()
else
  dist.recv(tensor.zeros(1), 0)
  error("boom")
end
