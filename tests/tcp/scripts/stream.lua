--- title: a window of 4 MiB rendezvous messages, with a pause in the middle
--- world: 2
-- Rank 1 posts every receive first; rank 0 streams the messages and stops
-- for a while half way, so that on tcp the receiver, reading each payload
-- straight into its tensor, waits in the middle of the stream. Every
-- message is stamped: the first int32 of each 64 KiB block holds the
-- message's number times 1000 plus the block's, the rest is zeros, so a lost,
-- repeated, shifted or misdelivered byte range shows.
local count, n = 8, 1024 * 1024            -- int32 elements: 4 MiB a message
local block = 16 * 1024                    -- int32 elements in 64 KiB
local q = {}

local function stamp(i, s) return i * 1000 + s // block + 1 end

if rank == 0 then
  for i = 1, count do
    local t = tensor.zeros(n, {dtype = "int32"})
    for s = 0, n - 1, block do t[s] = stamp(i, s) end
    q[i] = dist.isend(t, 1)
    if i == count // 2 then dist.compute(30) end
  end
  for i = 1, count do q[i]:wait() end
  print("sent " .. count .. " messages")
else
  local r = {}
  for i = 1, count do
    r[i] = tensor.zeros(n, {dtype = "int32"})
    q[i] = dist.irecv(r[i], 0)
  end
  local zero = tensor.zeros(n, {dtype = "int32"})
  for i = 1, count do
    q[i]:wait()
    local bad
    for s = 0, n - 1, block do
      if r[i][s] ~= stamp(i, s) then bad = bad or s end
      r[i][s] = 0
    end
    if not r[i]:equal(zero) then bad = bad or -1 end
    if bad then print("message " .. i .. ": wrong values from element " .. bad)
    else print("message " .. i .. ": all " .. n .. " values arrived") end
  end
end
