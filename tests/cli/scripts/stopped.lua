--- title: a timeout stops every rank somewhere, and the report says where
--- world: 4
-- Rank 1 takes one message from each other rank, then computes past any
-- timeout; the others, their message taken, wait where nothing will come.
local t = tensor.zeros(2)
if rank == 1 then
    for _, src in ipairs({0, 2, 3}) do dist.recv(t, src) end
    dist.compute(600000)
else
    dist.send(t, 1)
    if rank == 0 then
        local q = dist.irecv(t, 1)
        q:wait()
    elseif rank == 2 then
        dist.recv(t, 1)
    else
        dist.all_reduce(t)
    end
end
