-- wrong: the time of a round trip, not of one message (twice the answer).
local t = tensor.zeros(ELEMS)
if rank == 0 then
    local t0 = dist.time()
    for i = 1, ROUNDS do dist.send(t, 1); dist.recv(t, 1) end
    result = (dist.time() - t0) / ROUNDS
elseif rank == 1 then
    for i = 1, ROUNDS do dist.recv(t, 0); dist.send(t, 0) end
end
