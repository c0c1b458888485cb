--- title: Pitfall: reusing a buffer before its isend has completed
--- world: 2
--- expect: ok

-- Rank 0 sends two rows of a table to rank 1 through one buffer. The bug:
-- it refills the buffer for the second row while the isend of the first
-- may still be reading it. Depending on timing rank 1 gets the first row,
-- the second, or a mix, and on a real network nothing tells you which.
-- commsim warns at the write, naming both lines (see the report), even in
-- runs where the data happened to arrive intact. The fix: isend_reuse_fixed.lua.

local rows = { {1, 2, 3}, {4, 5, 6} }

if rank == 0 then
    local buf = tensor.zeros(3)
    local works = {}
    for i, row in ipairs(rows) do
        buf:copy_(tensor.from(row))       -- BUG on the 2nd row: the 1st isend may still own buf
        works[i] = dist.isend(buf, 1, {tag = i})
    end
    dist.wait_all(works)
    print("sent 2 rows through one buffer")
elseif rank == 1 then
    local got = tensor.zeros(3)
    for i = 1, #rows do
        dist.recv(got, 0, {tag = i})
        -- What arrived depends on timing, so this lesson does not print it.
    end
    print("received 2 rows")
end
