-- same byte count, but other element count and dtype: a size mismatch
if rank == 0 then
  dist.send(tensor.zeros(4), 1)
else
  dist.recv(tensor.zeros(2, {dtype = "float64"}), 0)
end
