--- title: writing after an eager isend is fine (tests; run with --send-mode eager)
--- world: 2
local t = tensor.ones(2)
if rank == 0 then
  local w = dist.isend(t, 1)
  t:fill_(5)
  w:wait()
else
  dist.recv(t, 0)
  print(t)
end
