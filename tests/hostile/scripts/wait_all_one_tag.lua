--- world: 2
-- wait_all over 16400 receives of one tag, fed by 16384 blocking sends: on
-- tcp every send blocks (RTS/CTS), so each of its events used to rescan the
-- whole wait list (minutes, past --timeout). The deadlock, as on thread.
local hs = {}
if rank == 0 then
  for i = 1, 16400 do hs[i] = dist.irecv(tensor.zeros(1), 1) end
  dist.wait_all(hs)
else
  for i = 1, 16384 do dist.send(tensor.zeros(1), 0) end
end
