-- same byte count, another dtype: a dtype mismatch, not a size mismatch
if rank == 0 then
  dist.send(tensor.zeros(4), 1)
else
  dist.recv(tensor.zeros(4, {dtype = "int32"}), 0)
end
