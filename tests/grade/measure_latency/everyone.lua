-- wrong: rank 0 pings every other rank in turn, so a third rank plays too
-- (the two-rank cases still pass).
local t = tensor.zeros(ELEMS)
if rank == 0 then
    local t0 = dist.time()
    for i = 1, ROUNDS do
        for peer = 1, world_size - 1 do dist.send(t, peer); dist.recv(t, peer) end
    end
    result = (dist.time() - t0) / (2 * ROUNDS)
else
    for i = 1, ROUNDS do dist.recv(t, 0); dist.send(t, 0) end
end
