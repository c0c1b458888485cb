local t = tensor.ones(2)
if rank ~= 2 then dist.barrier() end
