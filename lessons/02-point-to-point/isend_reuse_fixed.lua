--- title: Fixed: wait for the isend, or give each message its own buffer
--- world: 2
--- expect: ok

-- The program of isend_reuse.lua, fixed two ways. A buffer handed to isend
-- belongs to the send until wait() returns (or is_completed() says true).

local rows = { {1, 2, 3}, {4, 5, 6} }

if rank == 0 then
    -- Fix 1: wait for each isend before touching its buffer again. Simple,
    -- but the sends no longer overlap anything.
    local buf = tensor.zeros(3)
    for i, row in ipairs(rows) do
        buf:copy_(tensor.from(row))
        dist.isend(buf, 1, {tag = i}):wait()
    end
    -- Fix 2: one buffer per message in flight, one wait for all of them at
    -- the end (double buffering, as pipelines and DDP's buckets do).
    local works = {}
    for i, row in ipairs(rows) do
        works[i] = dist.isend(tensor.from(row), 1, {tag = 10 + i})
    end
    dist.wait_all(works)
    print("sent 2 rows twice")
elseif rank == 1 then
    local got = tensor.zeros(3)
    for _, base in ipairs({0, 10}) do
        for i = 1, #rows do
            dist.recv(got, 0, {tag = base + i})
            print(string.format("tag %2d: %s", base + i, tostring(got)))
        end
    end
end
