--- title: an isend and an irecv posted at one line, neither waited on (tests)
--- world: 2
local t = tensor.zeros(2)
local w = rank == 0 and dist.isend(t, 1) or dist.irecv(t, 0)
