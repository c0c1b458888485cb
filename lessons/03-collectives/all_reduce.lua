--- title: All-reduce: every rank gets the sum (or max, ...) of all tensors
--- world: 4
--- expect: ok

-- dist.all_reduce(t, op) is a reduce whose result lands on every rank: the
-- gradient averaging step of data-parallel training.

local t = tensor.from({rank, 10 * rank, 1})
print("before: " .. tostring(t))
dist.all_reduce(t)                          -- ReduceOp.SUM is the default
print("sum:    " .. tostring(t))            -- {0+1+2+3, 0+10+20+30, 4}

local m = tensor.from({rank, -rank})
dist.all_reduce(m, ReduceOp.MAX)
print("max:    " .. tostring(m))            -- {3, 0}

local a = tensor.from({rank, 1})
dist.all_reduce(a, ReduceOp.AVG)            -- the sum divided by world_size
print("avg:    " .. tostring(a))            -- {1.5, 1}

-- Bitwise ops take integer tensors only: each rank sets its own bit.
local bits = tensor.from({1 << rank}, {dtype = "int64"})
dist.all_reduce(bits, ReduceOp.BOR)
print("bor:    " .. tostring(bits))         -- 1 | 2 | 4 | 8 = 15

-- Three algorithms, same answer (try --algo all_reduce=NAME, or per call):
for _, algo in ipairs({"ring", "recursive_doubling", "reduce_broadcast"}) do
    local u = tensor.full(5, rank + 1)
    dist.all_reduce(u, ReduceOp.SUM, {algo = algo})
    print(string.format("%-18s %s", algo .. ":", tostring(u)))
end
