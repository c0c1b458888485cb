--- title: device tensor arithmetic against the host, every dtype
--- world: 1
--- expect: ok

-- Every operation runs twice: on host tensors and on their copies on the
-- GPU (CUDA kernels); the device result, copied back, must equal the host's.
-- The printed values are the host's, so the output is the same with and
-- without a GPU; a GPU that disagrees prints "differs".
local gpu = dist.cuda_device_count() >= world_size
local function dev(t) if gpu then return t:cuda() end return t end
local function host(t) if gpu then return t:cpu() end return t end

local dtypes = {"float32", "float64", "int32", "int64", "uint8"}
for _, d in ipairs(dtypes) do
  local a = tensor.from({6, 3, 9, 2}, {dtype = d})
  local b = tensor.from({2, 3, 1, 2}, {dtype = d})
  local da, db = dev(a), dev(b)
  local cases = {
    {"a + b", a + b, da + db}, {"a - b", a - b, da - db}, {"a * b", a * b, da * db},
    {"a * 3", a * 3, da * 3}, {"a:sum()", a:sum(), da:sum()}, {"a:max()", a:max(), da:max()},
    {"a:relu()", a:relu(), da:relu()}, {"a[2]", a[2], da[2]},
  }
  for _, c in ipairs(cases) do
    local h, g = c[2], c[3]
    local same
    if type(h) == "number" then same = h == g else same = h:equal(host(g)) end
    print(string.format("%-7s %-9s %s %s", d, c[1], tostring(h), same and "same" or "differs"))
  end
end
