--- title: an irecv nobody waits on (tests)
--- world: 2
if rank == 0 then local w = dist.irecv(tensor.zeros(2), 1) end
if rank == 1 then dist.send(tensor.ones(2), 0) end
