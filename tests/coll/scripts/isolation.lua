-- A user receive from any source is posted before a collective runs between
-- the other ranks: it must get rank 2's message, never collective traffic.
local t = tensor.zeros(2)
if rank == 0 then
    local w = dist.irecv(t)
    local g = dist.new_group({1, 2})
    w:wait()
    print("user message from rank " .. w:source() .. ": " .. tostring(t))
else
    local g = dist.new_group({1, 2})
    local u = tensor.full(2, rank)
    dist.all_reduce(u, ReduceOp.SUM, {group = g})
    if rank == 2 then dist.send(u, 0) end
end
