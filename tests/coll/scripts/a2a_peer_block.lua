-- rank 0 sends 50000 elements to rank 1, which has room for 2: the receive
-- refuses them (each rank's own block agrees)
if rank == 0 then
  dist.all_to_all({tensor.zeros(1), tensor.zeros(1)}, {tensor.zeros(1), tensor.zeros(50000)})
else
  dist.all_to_all({tensor.zeros(2), tensor.zeros(1)}, {tensor.zeros(1), tensor.zeros(1)})
end
