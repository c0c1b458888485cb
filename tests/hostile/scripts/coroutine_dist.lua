-- communication from inside coroutines works like anywhere else
local peer = 1 - rank
local co = coroutine.wrap(function()
  local t = tensor.full(2, rank)
  if rank == 0 then dist.send(t, peer) else dist.recv(t, peer) end
  coroutine.yield(t)
end)
print(co())
