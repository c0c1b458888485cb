local t = tensor.ones(2)
if rank == 0 then
    dist.broadcast(t, 0)
    dist.all_reduce(t)
else
    dist.all_reduce(t)
    dist.broadcast(t, 0)
end
