--- title: Recursive halving: the all_reduce of MPICH, by hand and built in
--- world: 4
--- expect: ok

-- Rabenseifner's all_reduce, which MPICH and Open MPI use for long vectors:
--   1. reduce-scatter by recursive halving: swap half of your blocks with
--      the rank n/2 away and add the half you keep, then half of that with
--      the rank n/4 away, ..., until each rank holds the total of one block;
--   2. all-gather by recursive doubling: swap everything you hold with the
--      rank 1 away, then 2 away, ..., until everybody holds everything.
-- Each rank sends 2 log2(n) messages and 2 (n - 1) / n of the tensor: the
-- ring's bytes in log2(n) steps instead of n - 1. Written here with
-- isend/irecv for a power-of-two world (the built-in one also folds other
-- sizes: see docs/collectives.md).

local n = world_size
if n & (n - 1) ~= 0 then
    error("this hand-written version needs a power-of-two world: -n 2, 4, 8, ...")
end

local t = (tensor.arange(2 * n) + 1) * (rank + 1)   -- 2 values per block
local blocks = t:chunk(n)                            -- views of t
local function span(lo, hi)                          -- blocks lo .. hi - 1, one view
    return t:narrow(0, 2 * lo, 2 * (hi - lo))
end
print("start:        " .. tostring(t))

local function swap(send, recv, peer)
    local r = dist.irecv(recv, peer)
    local s = dist.isend(send, peer)
    r:wait()
    s:wait()
end

-- 1. reduce-scatter: [lo, hi) are the blocks this rank still works on.
local lo, hi = 0, n
local away = n // 2
while away >= 1 do
    local peer = rank ~ away                        -- xor: the partner `away` ranks off
    local mid = lo + away
    local keep_lo, keep_hi, give_lo, give_hi = lo, mid, mid, hi
    if rank & away ~= 0 then                        -- the upper partner keeps the upper half
        keep_lo, keep_hi, give_lo, give_hi = mid, hi, lo, mid
    end
    local incoming = tensor.zeros(2 * (keep_hi - keep_lo))
    swap(span(give_lo, give_hi), incoming, peer)
    span(keep_lo, keep_hi):add_(incoming)
    lo, hi = keep_lo, keep_hi
    print(string.format("halving, peer %d: I add blocks %d..%d -> %s", peer, lo, hi - 1, tostring(t)))
    away = away // 2
end
print(string.format("block %d is complete: %s", lo, tostring(blocks[lo + 1])))

-- 2. all-gather: swap everything held with the rank 1, 2, 4, ... away.
away = 1
while away < n do
    local peer = rank ~ away
    local plo = lo ~ away                           -- the partner holds as many blocks
    swap(span(lo, hi), span(plo, plo + (hi - lo)), peer)
    lo, hi = math.min(lo, plo), math.max(hi, plo + (hi - lo))
    print(string.format("doubling, peer %d: I hold blocks %d..%d", peer, lo, hi - 1))
    away = away * 2
end

-- The built-in algorithm runs the same schedule.
local u = (tensor.arange(2 * n) + 1) * (rank + 1)
dist.all_reduce(u, ReduceOp.SUM, {algo = "recursive_halving"})
print("by hand:      " .. tostring(t))
print("built in:     " .. tostring(u))
print("same: " .. tostring(t:equal(u)))

-- Four algorithms, one answer (the report counts only this script's own
-- messages: 2 * log2(n) per rank above, 16 with 4 ranks).
for _, algo in ipairs({"ring", "recursive_doubling", "reduce_broadcast", "recursive_halving"}) do
    local v = tensor.full(3, rank + 1)
    dist.all_reduce(v, ReduceOp.SUM, {algo = algo})
    if rank == 0 then print(string.format("%-19s %s", algo .. ":", tostring(v))) end
end
