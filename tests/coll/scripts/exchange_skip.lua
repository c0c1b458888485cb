--- world: 4
-- A small all_reduce (its messages eager under eager:1000), then a larger
-- one (rendezvous) that rank 3 never calls. Rank 2's send to rank 3 in the
-- first round must stay pending: its receive was never posted, whatever the
-- earlier exchanges with rank 3 were.
local small = tensor.ones(4)
dist.all_reduce(small)
local big = tensor.ones(512)
if rank ~= 3 then dist.all_reduce(big) end
