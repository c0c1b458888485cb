--- title: Mismatch: one rank skips an all_reduce
--- world: 4
--- expect: deadlock

-- Every rank of a group must call the same collectives in the same order.
-- Here the last rank skips the second all_reduce (a "only log on some
-- ranks" kind of bug): ranks 0, 1 and 2 wait inside it for a rank that has
-- already finished. commsim names the collective, the line and the missing
-- rank; torch would hang (or time out in its watchdog).

local t = tensor.ones(4)
dist.all_reduce(t)
print("first all_reduce: " .. tostring(t))

if rank ~= world_size - 1 then
    dist.all_reduce(t)      -- the last rank never gets here
    print("second all_reduce: " .. tostring(t))
end
