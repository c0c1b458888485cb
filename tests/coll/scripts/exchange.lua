--- world: 2
-- Many collectives in a row whose steps are exchanges (a rank sends to and
-- receives from one peer): every all_reduce algorithm, the rings on two
-- ranks, the barrier, beside all_to_all (not an exchange: sizes per pair),
-- over sizes on both sides of the largest SYNC (64 KiB) and of eager:N's
-- line (a two-rank ring of 32769 elements sends a SYNC one way and an RTS
-- the other), with empty ring blocks. Exact int32 sums; "ok" when all agree.
local n = world_size
local bad = 0
local function check(what, cond)
  if not cond then
    bad = bad + 1
    if bad <= 5 then print("wrong: " .. what) end
  end
end
local sizes = {1, 3, 257, 16383, 16384, 16385, 32769, 40000}
local algos = {"ring", "recursive_doubling", "reduce_broadcast", "recursive_halving"}
for round = 1, 3 do
  for _, m in ipairs(sizes) do
    for _, a in ipairs(algos) do
      local t = tensor.arange(m, {dtype = "int32"}) + (rank + round)
      dist.all_reduce(t, ReduceOp.SUM, {algo = a})
      -- element i: n * i + sum over ranks of (rank + round)
      local base = n * (n - 1) // 2 + n * round
      check(a .. " " .. m .. " first", t[0] == base)
      check(a .. " " .. m .. " last", t[m - 1] == n * (m - 1) + base)
      check(a .. " " .. m .. " sum", t:sum() == n * (m * (m - 1) // 2) + m * base)
    end
    local k = (m // n) + 1
    for _, a in ipairs({"ring", "direct"}) do
      local out = tensor.zeros(n * k, {dtype = "int32"})
      dist.all_gather_into_tensor(out, tensor.full(k, rank + 1, {dtype = "int32"}), {algo = a})
      check("all_gather " .. a .. " " .. m, out:sum() == k * n * (n + 1) // 2)
      local rs = tensor.zeros(k, {dtype = "int32"})
      dist.reduce_scatter_tensor(rs, tensor.full(n * k, rank + 1, {dtype = "int32"}), ReduceOp.SUM, {algo = a})
      check("reduce_scatter " .. a .. " " .. m, rs:sum() == k * n * (n + 1) // 2)
    end
    local x = tensor.full(n * k, rank, {dtype = "int32"})
    local y = tensor.zeros(n * k, {dtype = "int32"})
    dist.all_to_all_single(y, x)
    check("all_to_all " .. m, y:sum() == k * n * (n - 1) // 2)
    dist.barrier()
  end
end
if bad == 0 then print("ok") end
