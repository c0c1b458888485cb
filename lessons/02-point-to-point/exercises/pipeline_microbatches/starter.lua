-- Exercise: pipeline_microbatches (see README.md). MB is set by the grader.
MB = MB or 4
local last = world_size - 1
local out = tensor.zeros(MB)
for m = 0, MB - 1 do
    local x = tensor.zeros(4)
    -- TODO: stage 0 makes tensor.full(4, m); others receive from rank - 1;
    -- add rank; send to rank + 1, or on the last stage store x:sum() in out[m]
end
if rank == last then result = out end
