--- title: Pipeline parallelism: GPipe and 1F1B, and the bubble
--- world: 4
--- net: alpha=5us,bandwidth=10GB/s
--- expect: ok

-- A model cut into p stages, one per rank, trains on a batch cut into m
-- micro-batches. Stage s runs the forward pass of a micro-batch when stage
-- s - 1 hands it the activations, and the backward pass when stage s + 1
-- hands back the gradient. Each rank draws its own timeline (1 ms a cell):
--   1..8  the forward pass of micro-batch 1..8 (1 ms; F past 9)
--   a..h  the backward pass of micro-batch 1..8 (2 ms, two cells; B past 26)
--   .     idle: the bubble
-- GPipe runs every forward, then every backward; 1F1B (one forward, one
-- backward) starts the backward passes as soon as it can. With equal stage
-- times both idle the same (p - 1) (F + B) per stage, a fraction
--     bubble = (p - 1) / (m + p - 1)
-- of the run, but GPipe keeps all m micro-batches' activations alive at once
-- and 1F1B at most p - s on stage s. More micro-batches shrink the bubble:
-- change m and run again. Messages cost a few microseconds here, so the run
-- is a little longer than the formula.

local m = 8                  -- micro-batches
local F, B = 1, 2            -- milliseconds per micro-batch and stage
local p, s = world_size, rank
local ACT, GRAD = 1, 2       -- tags: activations go forward, gradients back

local function run(schedule)
    local act, grad, sends, cells = {}, {}, {}, {}
    local held, peak = 0, 0
    dist.barrier()           -- every stage starts together
    local t0 = dist.time()
    local function busy(ms, mark)
        local first = math.floor((dist.time() - t0) * 1000 + 0.5)
        dist.compute(ms)
        for c = first, first + ms - 1 do cells[c + 1] = mark end
    end
    local function forward(j)
        act[j] = tensor.zeros(1)
        if s > 0 then dist.recv(act[j], s - 1, {tag = ACT}) end
        busy(F, j <= 9 and tostring(j) or "F")
        held = held + 1; peak = math.max(peak, held)     -- kept for the backward pass
        if s < p - 1 then sends[#sends + 1] = dist.isend(act[j], s + 1, {tag = ACT}) end
    end
    local function backward(j)
        grad[j] = tensor.zeros(1)
        if s < p - 1 then dist.recv(grad[j], s + 1, {tag = GRAD}) end
        busy(B, j <= 26 and string.char(96 + j) or "B")
        held = held - 1
        if s > 0 then sends[#sends + 1] = dist.isend(grad[j], s - 1, {tag = GRAD}) end
    end

    if schedule == "gpipe" then
        for j = 1, m do forward(j) end
        for j = m, 1, -1 do backward(j) end
    else -- 1f1b: fill the pipeline, then alternate, then drain
        local warm = math.min(p - s - 1, m)
        for j = 1, warm do forward(j) end
        for j = 1, m - warm do forward(warm + j); backward(j) end
        for j = m - warm + 1, m do backward(j) end
    end
    dist.wait_all(sends)

    local row = {}
    local span = tensor.from({dist.time() - t0}, {dtype = "float64"})
    dist.all_reduce(span, ReduceOp.MAX)                   -- the slowest stage's end
    for c = 1, math.floor(span[0] * 1000 + 0.5) do row[c] = cells[c] or "." end
    print(string.format("%-5s stage %d |%s|  activations held at most: %d", schedule, s,
                        table.concat(row), peak))
    if s == 0 then
        local work = m * (F + B) / 1000
        print(string.format("%-5s makespan %.3f ms, bubble %.4f (formula (p - 1) / (m + p - 1) = %.4f)",
                            schedule, span[0] * 1000, 1 - work / span[0], (p - 1) / (m + p - 1)))
    end
end

run("gpipe")
run("1f1b")
