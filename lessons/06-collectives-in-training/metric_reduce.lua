--- title: Reduce: a validation metric, added up on the rank that logs it
--- world: 4
--- expect: ok

-- Each rank evaluates its own slice of the validation set and counts its
-- correct predictions. Only rank 0 writes the log, so only rank 0 needs the
-- totals: dist.reduce sends them there and adds them up, and the other
-- ranks keep their own counts. (torchmetrics and Lightning sync metrics
-- across ranks the same way; with all_reduce every rank would get them.)

-- Integer counters: int64 adds exactly, whatever the size.
local samples = 10 + rank                 -- the slices need not be equal
local correct = 7 + 2 * rank % 3
local counts = tensor.from({correct, samples}, {dtype = "int64"})
print("my slice: " .. correct .. " correct of " .. samples)

-- Who sends what: every rank its two counters. What is aggregated: the sum,
-- on rank 0 only.
dist.reduce(counts, 0, ReduceOp.SUM)

if rank == 0 then
    local c, s = counts[0], counts[1]
    print(string.format("total: %d correct of %d samples", c, s))
    -- Dividing before the reduce would be wrong: the mean of the ranks'
    -- accuracies is not the accuracy when the slices differ in size.
    print(string.format("accuracy: %d/%d", c, s))
else
    print("my counts are unchanged: " .. tostring(counts))
end
