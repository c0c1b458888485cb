--- title: a random program: rounds of messages between random pairs, computes, clock reads
--- world: 5
-- Every rank draws the same schedule from SEED (a global set by the test,
-- default 1): per round, each rank sends to a random rank (itself
-- included) a random size, computes a random time, and some read their
-- clock. Each rank prints its clock at every read and at the end: the
-- virtual times must be the same on every engine, every run and a replay.
local seed = SEED or 1
local function rnd(n) -- a 31-bit LCG: the same on every rank
  seed = (seed * 1103515245 + 12345) % 2147483648
  return (seed // 65536) % n
end
local p = world_size
for round = 1, 6 do
  local dst, size, ms, read = {}, {}, {}, {}
  for r = 0, p - 1 do
    dst[r] = rnd(p)
    size[r] = ({0, 4, 1000, 100000})[rnd(4) + 1]
    ms[r] = rnd(3) * 0.001
    read[r] = rnd(3) == 0
  end
  local reqs = {}
  if ms[rank] > 0 then dist.compute(ms[rank]) end
  for r = 0, p - 1 do -- receives in sender order
    if dst[r] == rank then
      reqs[#reqs + 1] = dist.irecv(tensor.zeros(size[r] // 4), r, {tag = round})
    end
  end
  reqs[#reqs + 1] = dist.isend(tensor.ones(size[rank] // 4), dst[rank], {tag = round})
  dist.wait_all(reqs)
  if read[rank] then print(string.format("round %d: %.0f", round, dist.time() * 1e9)) end
end
print(string.format("end %.0f", dist.time() * 1e9))
