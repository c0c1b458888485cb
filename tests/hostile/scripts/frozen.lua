--- title: rank 0 waits on rank 1, which runs on and on: a test stops one of them (SIGSTOP)
--- world: 2
local t = tensor.zeros(4)
if rank == 0 then
  dist.recv(t, 1)
else
  print("running")
  while true do t:add_(1) end
end
