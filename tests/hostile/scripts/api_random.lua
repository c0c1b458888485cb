--- title: thousands of calls of every dist and tensor function and tensor method, arguments drawn at random
--- world: 1
-- The case (run_hostile.sh case_api_random) prepends `SEED = N` (else 1): the draws
-- are math.random's from that seed, so a failing seed fails again. Each call
-- runs under pcall and may fail with a message; none may crash, and a memory
-- limit, a deadlock or the step limit may end the run. dist.send and
-- dist.recv are left out: on one rank they wait for themselves.
math.randomseed(SEED or 1)
local g = dist.new_group()
local pool = {
  0, 1, -1, 2, 3, 1.5, -2^63, math.maxinteger, math.mininteger, 0/0, 1/0, -1/0,
  "x", "", "float32", "int64", "uint8", "cuda", "cpu", "cuda:1", true, false, {}, {1, 2}, {{1}, {2}},
  {tag = 1}, {group = g}, {async_op = true}, {algo = "ring"}, {dtype = "int32"}, {group = 1},
  tensor.zeros(3), tensor.ones(2, 2), tensor.zeros(0), tensor.zeros(3, {dtype = "int32"}),
  tensor.zeros(3, {dtype = "uint8"}), tensor.arange(6):view(2, 3):narrow(1, 0, 2), tensor.from(5),
  tensor.zeros(1, 1, 1, 1), g, ReduceOp.SUM, ReduceOp.AVG, ReduceOp.BAND, print, dist.isend, dist.irecv,
  {tensor.zeros(3)}, {tensor.zeros(3), tensor.zeros(3)}, {tensor.zeros(2, {dtype = "int64"})},
}
local function arg()
  if math.random() < 0.1 then return nil end
  return pool[math.random(#pool)]
end
local fns = {}
for k, v in pairs(dist) do
  if type(v) == "function" and k ~= "send" and k ~= "recv" then fns[#fns + 1] = {"dist." .. k, v} end
end
for k, v in pairs(tensor) do
  if type(v) == "function" then fns[#fns + 1] = {"tensor." .. k, v} end
end
table.sort(fns, function(a, b) return a[1] < b[1] end) -- pairs' order is not the seed's
local methods = {"numel", "dim", "size", "is_contiguous", "contiguous", "clone", "narrow", "select",
  "view", "reshape", "chunk", "fill", "fill_", "zero_", "copy_", "sum", "max", "min", "mean", "item",
  "tolist", "equal", "allclose", "add", "sub", "mul", "div", "pow", "add_", "sub_", "mul_", "div_",
  "neg", "relu", "relu_", "matmul", "cuda", "cpu", "to", "float", "double", "int", "long", "byte",
  "wait", "is_completed", "result", "__gc", "__close"}
for _ = 1, 3000 do
  local n = math.random(0, 4)
  local a = {}
  for j = 1, n do a[j] = arg() end
  local r, ok, res = math.random()
  if r < 0.5 then
    ok, res = pcall(fns[math.random(#fns)][2], table.unpack(a, 1, n))
  elseif r < 0.9 then
    local t, m = pool[math.random(#pool)], methods[math.random(#methods)]
    ok, res = pcall(function() return t[m](t, table.unpack(a, 1, n)) end)
  else -- indexing, assignment and the operators
    local t = pool[math.random(#pool)]
    ok, res = pcall(function()
      local _ = t[a[1]]
      t[a[1]] = a[2]
      return #t, tostring(t), t == a[2], -t, t .. ""
    end)
  end
  -- what came back (tensors, work handles, lists) joins the pool
  if ok and (type(res) == "userdata" or type(res) == "table") then pool[#pool + 1] = res end
end
print("done")
