-- wrong: both ranks send first (deadlocks with rendezvous sends).
local t, u = tensor.zeros(1), tensor.zeros(1)
if rank <= 1 then
    local t0 = dist.time()
    for i = 1, ROUNDS do
        dist.send(t, 1 - rank)
        dist.recv(u, 1 - rank)
    end
    if rank == 0 then result = (dist.time() - t0) / (2 * ROUNDS) end
end
