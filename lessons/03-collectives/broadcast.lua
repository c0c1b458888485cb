--- title: Broadcast: the root's tensor is copied to every rank
--- world: 4
--- expect: ok

-- dist.broadcast(t, src): after the call every rank's t holds what rank src
-- had. The other ranks' tensors only say how much data to expect (same
-- shape and dtype on every rank); their old contents are overwritten.

local t
if rank == 0 then
    t = tensor.from({1, 2, 3})
else
    t = tensor.zeros(3)
end
print("before: " .. tostring(t))

dist.broadcast(t, 0)

print("after:  " .. tostring(t))

-- The default algorithm is a binomial tree: rank 0 sends to rank 2, then
-- ranks 0 and 2 send to ranks 1 and 3 at the same time, so everybody has it
-- after log2(4) = 2 rounds instead of 3 sends in a row from rank 0. Compare
-- with: commsim run broadcast.lua --algo broadcast=linear
