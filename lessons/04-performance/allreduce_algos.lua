--- title: Ring, tree or recursive doubling: which all_reduce wins at which size
--- world: 4
--- net: alpha=10us,bandwidth=1GB/s
--- expect: ok

-- The three all_reduce algorithms of chapter 3 on p ranks and n bytes, in
-- the alpha-beta model (reductions are free here: only messages cost):
--   ring                2 (p - 1) steps of n / p bytes:  2 (p - 1) alpha + 2 (p - 1) / p n beta
--   recursive doubling  log2 p swaps of all n bytes:     log2 p alpha + log2 p n beta
--   tree                a binomial reduce to rank 0, then a binomial broadcast
--                       (--algo reduce_broadcast):       2 log2 p (alpha + n beta)
-- Few steps win for small n (alpha dominates); few bytes win for large n
-- (beta dominates). The ring sends the fewest bytes, recursive doubling takes
-- the fewest steps: they cross where both costs are equal. The script times
-- each algorithm at each size (the slowest rank's time) and computes the
-- crossover from the formulas. Try -n 8: the crossover moves.

local alpha, beta = 10e-6, 1e-9        -- the header's model, for the formulas
local p = world_size
local lg = math.log(p, 2)
if lg ~= math.floor(lg) then error("the formulas here are for a power-of-two world: -n 2, 4, 8") end

local algos = {
    {name = "ring",               algo = "ring",
     cost = function(n) return 2 * (p - 1) * alpha + 2 * (p - 1) / p * n * beta end},
    {name = "tree",               algo = "reduce_broadcast",
     cost = function(n) return 2 * lg * (alpha + n * beta) end},
    {name = "recursive_doubling", algo = "recursive_doubling",
     cost = function(n) return lg * (alpha + n * beta) end},
}

-- the slowest rank's time of one all_reduce of `bytes` with `algo`
local function measure(bytes, algo)
    local t = tensor.ones(bytes // 4)
    dist.barrier()                     -- start together
    local t0 = dist.time()
    dist.all_reduce(t, ReduceOp.SUM, {algo = algo})
    local took = tensor.from({dist.time() - t0}, {dtype = "float64"})
    dist.all_reduce(took, ReduceOp.MAX)
    return took[0]
end

if rank == 0 then
    print(string.format("%d ranks; times in us, measured (formula in brackets)", p))
    print(string.format("%9s  %-22s %-22s %-22s %s", "bytes", "ring", "tree",
                        "recursive_doubling", "fastest"))
end
for e = 0, 6 do
    local bytes = 32 << (3 * e)        -- 32 B to 8 MiB, 8 times larger each
    local cells, best, best_t = {}, nil, math.huge
    for i, a in ipairs(algos) do
        local took = measure(bytes, a.algo)
        cells[i] = string.format("%.3f (%.3f)", took * 1e6, a.cost(bytes) * 1e6)
        if took < best_t then best, best_t = a.name, took end
    end
    if rank == 0 then
        print(string.format("%9d  %-22s %-22s %-22s %s", bytes, cells[1], cells[2], cells[3], best))
    end
end

if rank == 0 then
    -- ring = recursive doubling where  (2 (p-1) - log2 p) alpha = (log2 p - 2 (p-1) / p) n beta
    local num, den = 2 * (p - 1) - lg, lg - 2 * (p - 1) / p
    if den > 0 then
        print(string.format("ring beats recursive doubling above n = %.0f bytes "
                            .. "(%g alpha / beta)", num / den * alpha / beta, num / den))
    else
        print("on 2 ranks recursive doubling always wins: the same bytes in half the steps")
    end
    print("the tree never beats recursive doubling here: twice the steps, each as large")
end
