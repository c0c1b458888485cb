--- world: 2
-- An isend and its irecv, neither waited on: both ranks end before the
-- message moves (on tcp it may not even reach rank 1). The never-waited
-- warnings are the finding; the message had its receive.
local t = tensor.ones(4)
if rank == 0 then
  W = dist.isend(t, 1)
else
  W = dist.irecv(t, 0)
end
