--- title: Device tensor arithmetic against the host implementation, every dtype
--- world: 1
-- Needs a CUDA device (tests/gpu/ runs only where one is present): every
-- operation runs twice, once on host tensors and once on their copies on the
-- device, and the device's result, brought back with cpu(), must equal the
-- host's (same dtype, same shape, same values; allclose where the two sides
-- may round a transcendental function differently). Each case prints one
-- line, "ok" or what differed. Expected output: device_tensors.out, the
-- standard output of `commsim run device_tensors.lua --no-tui`. (Its lines
-- were made by running this script with DEV = "cpu" on a machine without a
-- GPU, which checks the script, not the device, and setting the seven lines
-- that name the device by hand.)
local DEV = "cuda"
local ndev = dist.cuda_device_count()
print("devices present", ndev > 0)
if ndev == 0 then error("this suite needs a CUDA device") end
local want_dev = DEV == "cpu" and "cpu" or "cuda:0"

local function same(h, d, close)
  if not tensor.is_tensor(h) then
    if h == d or (h ~= h and d ~= d) then return true end
    return false, tostring(h) .. " vs " .. tostring(d)
  end
  if d.device ~= want_dev then return false, "on " .. d.device end
  local c = d:cpu()
  if c.dtype ~= h.dtype then return false, "dtype " .. c.dtype .. " vs " .. h.dtype end
  if tostring(c.shape) ~= tostring(h.shape) then return false, tostring(c.shape) .. " vs " .. tostring(h.shape) end
  local eq
  if close then eq = c:allclose(h) else eq = c:equal(h) end
  if not eq then return false, tostring(h) .. " vs " .. tostring(c) end
  return true
end

local fails = 0
local function check(name, fn, close)
  local okh, h = pcall(fn, "cpu")
  local okd, d = pcall(fn, DEV)
  local good, why
  if okh ~= okd then
    good, why = false, "host " .. tostring(h) .. " / device " .. tostring(d)
  elseif not okh then -- both raised: the same message (after the location)
    local mh, md = tostring(h):gsub("^[^:]*:%d+: ", ""), tostring(d):gsub("^[^:]*:%d+: ", "")
    good, why = mh == md, mh .. " / " .. md
  else
    good, why = same(h, d, close)
  end
  if not good then fails = fails + 1 end
  print(name .. ": " .. (good and "ok" or ("MISMATCH " .. why)))
end

local dtypes = {"float32", "float64", "int32", "int64", "uint8"}
local A = {{1, 2, 3}, {4, 5, 6}}
local B = {{6, 5, 4}, {3, 2, 1}}

for _, dt in ipairs(dtypes) do
  local isint = dt ~= "float32" and dt ~= "float64"
  local function a(dev) return tensor.from(A, {dtype = dt, device = dev}) end
  local function b(dev) return tensor.from(B, {dtype = dt, device = dev}) end
  check(dt .. " zeros", function(dev) return tensor.zeros(2, 3, {dtype = dt, device = dev}) end)
  check(dt .. " ones", function(dev) return tensor.ones({4}, {dtype = dt, device = dev}) end)
  check(dt .. " full", function(dev) return tensor.full({2, 2}, 7, {dtype = dt, device = dev}) end)
  check(dt .. " arange", function(dev) return tensor.arange(0, 20, 3, {dtype = dt, device = dev}) end)
  check(dt .. " from", a)
  check(dt .. " add", function(dev) return a(dev) + b(dev) end)
  check(dt .. " sub", function(dev) return a(dev) - b(dev) end)
  check(dt .. " mul", function(dev) return a(dev) * b(dev) end)
  check(dt .. " div", function(dev) return a(dev) / b(dev) end, true)
  check(dt .. " pow", function(dev) return a(dev) ^ tensor.from({{2, 1, 0}, {1, 2, 3}}, {dtype = dt, device = dev}) end, true)
  check(dt .. " scalar add", function(dev) return a(dev) + 2 end)
  check(dt .. " scalar first", function(dev) return 10 - a(dev) end)
  check(dt .. " float scalar", function(dev) return a(dev) * 2.5 end)
  check(dt .. " neg", function(dev) return -a(dev) end)
  check(dt .. " relu", function(dev) return (a(dev) - 3):relu() end)
  check(dt .. " broadcast row", function(dev) return a(dev) + tensor.from({10, 20, 30}, {dtype = dt, device = dev}) end)
  check(dt .. " broadcast column", function(dev) return a(dev) * tensor.from({{2}, {3}}, {dtype = dt, device = dev}) end)
  check(dt .. " add_", function(dev) local t = a(dev); t:add_(b(dev)); return t end)
  check(dt .. " mul_ scalar", function(dev) local t = a(dev); t:mul_(3); return t end)
  check(dt .. " div_ (an error on ints)", function(dev) local t = a(dev); t:div_(2); return t end, true)
  check(dt .. " relu_", function(dev) local t = a(dev) - 4; t:relu_(); return t end)
  check(dt .. " fill_", function(dev) local t = a(dev); t:fill_(9); return t end)
  check(dt .. " zero_ of a view", function(dev) local t = a(dev); t:narrow(1, 1, 1):zero_(); return t end)
  check(dt .. " sum", function(dev) return a(dev):sum() end)
  check(dt .. " max", function(dev) return a(dev):max() end)
  check(dt .. " min", function(dev) return a(dev):min() end)
  check(dt .. " mean (an error on ints)", function(dev) return a(dev):mean() end)
  check(dt .. " sum of a column", function(dev) return a(dev):narrow(1, 2, 1):sum() end)
  check(dt .. " matmul", function(dev) return tensor.matmul(a(dev), b(dev):view(3, 2)) end)
  check(dt .. " matmul vector", function(dev) return tensor.matmul(a(dev), tensor.from({1, 0, 2}, {dtype = dt, device = dev})) end)
  check(dt .. " equal", function(dev) return a(dev):equal(a(dev):clone()) end)
  check(dt .. " not equal", function(dev) return a(dev):equal(b(dev)) end)
  check(dt .. " allclose", function(dev) return a(dev):allclose(a(dev) + 0) end)
  check(dt .. " clone of a view", function(dev) return a(dev):narrow(1, 1, 2):clone() end)
  check(dt .. " contiguous", function(dev) local v = a(dev):narrow(1, 0, 2); return v:contiguous(), v:is_contiguous() end)
  check(dt .. " select and index", function(dev) local t = a(dev); return t[1][2] end)
  check(dt .. " assign an element", function(dev) local t = a(dev); t[1][0] = 42; return t end)
  check(dt .. " assign a row", function(dev) local t = a(dev); t[0] = 8; return t end)
  check(dt .. " item", function(dev) return a(dev)[0]:narrow(0, 1, 1):item() end)
  check(dt .. " tolist", function(dev) return table.concat(a(dev)[1]:tolist(), ",") end)
  check(dt .. " chunk", function(dev) return a(dev):view(6):chunk(4)[3] end)
  for _, to in ipairs(dtypes) do
    check(dt .. " to " .. to, function(dev) return (a(dev) * 50):to(to) end)
    check(dt .. " copy_ into " .. to, function(dev)
      local t = tensor.zeros(3, 2, {dtype = to, device = dev}); t:copy_(a(dev)); return t end)
  end
  check(dt .. " copy_ from the host", function(dev) local t = tensor.zeros(2, 3, {dtype = dt, device = dev}); t:copy_(a("cpu")); return t end)
  check(dt .. " copy_ to the host", function(dev) local t = tensor.zeros(2, 3, {dtype = dt}); t:copy_(a(dev)); return t:to(DEV) end)
  if isint then
    local big = dt == "uint8" and 250 or dt == "int32" and 2147483647 or 9223372036854775807
    check(dt .. " wraps around", function(dev) return tensor.full(3, big, {dtype = dt, device = dev}) + 10 end)
    check(dt .. " sum wraps", function(dev) return tensor.full(4, big, {dtype = dt, device = dev}):sum() end)
  else
    check(dt .. " NaN in max", function(dev) local t = a(dev); t[0][1] = 0 / 0; return t:max() end)
    check(dt .. " division by zero", function(dev) return a(dev) / tensor.zeros(3, {dtype = dt, device = dev}) end)
    check(dt .. " randn on the device", function(dev) local r = tensor.randn(3, 3, {dtype = dt, device = dev}); return r.dtype .. " " .. tostring(r.shape) end)
  end
end

-- sizes that take many blocks and the two-pass reduction
check("arange(100000) int64 sum", function(dev) return tensor.arange(100000, {dtype = "int64", device = dev}):sum() end)
check("arange(100000) float32 sum", function(dev) return tensor.arange(100000, {device = dev}):sum() end)
check("arange(100000) max, min", function(dev) local t = tensor.arange(100000, {dtype = "float64", device = dev}) - 7; return t:max() * 1e6 + t:min() end)
check("large element-wise", function(dev) local t = tensor.arange(300000, {dtype = "int32", device = dev}); return t * t - t end)
check("4-D view, strided", function(dev) return tensor.arange(120, {device = dev}):view(2, 3, 4, 5):select(2, 1):narrow(2, 1, 3) * 2 end)

-- devices do not mix (torch's message; on the host the sum is fine)
local mixed, why = pcall(function() return tensor.ones(2, {device = DEV}) + tensor.ones(2) end)
print("host + device", mixed, mixed and "" or (tostring(why):gsub("^[^:]*:%d+: ", "")))

-- moving and printing
local d = tensor.from({1.5, 2, 3}, {device = DEV})
print(d)
print(tensor.from({1, 2}, {dtype = "int32"}):to(DEV))
print(d:cpu(), d:to("cpu").device, (DEV == "cpu" and d or d:cuda()).device)

-- communication: staged through the host on thread and tcp, native on nccl
local s = tensor.arange(5, {device = DEV})
local r = tensor.zeros(5, {device = DEV})
-- a batch, as NCCL wants a rank's send to itself (every engine takes it)
dist.wait_all(dist.batch_isend_irecv({dist.P2POp(dist.isend, s, 0), dist.P2POp(dist.irecv, r, 0)}))
print("send/recv to self", r.device, r:cpu():equal(s:cpu()))
local t = tensor.full(4, 3, {dtype = "int64", device = DEV})
dist.all_reduce(t, ReduceOp.SUM)
dist.broadcast(t, 0)
print("collectives", t)
print(fails == 0 and "all cases agree" or (fails .. " cases differ"))
