--- title: a 1 GiB rendezvous send posted long before its receive
--- world: 3
-- Rank 1 sends rank 2 a large tensor; rank 2 posts its receive only once
-- rank 0 says go. tests/tcp/run_faults.sh holds rank 0 (stopped before the
-- job starts) while it samples rank 2's memory, so the receive cannot be
-- posted before the samples, however slow the machine. The test may lower
-- mib (a sanitizer build); the rest follows from it.
--
-- The values: zeros, but the first int32 of every 64 KiB block holds the
-- block's number plus one, so a lost, repeated or shifted byte range shows.
-- Writing every page of the sender's tensor would cost as much as the
-- transfer (page faults): the stamps touch one page in 16.
local mib = 1024                          -- a multiple of 64
local n = mib * 1024 * 1024 // 4          -- int32 elements
local block = 16 * 1024                   -- int32 elements in 64 KiB
local go = tensor.zeros(1)

if rank == 0 then
  dist.send(go, 2, {tag = 1})
elseif rank == 1 then
  local t = tensor.zeros(n, {dtype = "int32"})
  for s = 0, n - 1, block do t[s] = s // block + 1 end
  print("sending " .. mib .. " MiB")
  dist.send(t, 2)
else
  print("waiting")
  dist.recv(go, 0, {tag = 1})
  local r = tensor.zeros(n, {dtype = "int32"})
  dist.recv(r, 1)
  -- every value: the stamps, then (with them cleared) zeros everywhere else
  local bad
  for s = 0, n - 1, block do
    if r[s] ~= s // block + 1 then bad = bad or s end
    r[s] = 0
  end
  local m = 16 * 1024 * 1024              -- compared a 64 MiB slice at a time
  local zero = tensor.zeros(m, {dtype = "int32"})
  for s = 0, n - 1, m do
    if not r:narrow(0, s, m):equal(zero) then bad = bad or s end
  end
  if bad then print("wrong values from element " .. bad)
  else print("all " .. n .. " values arrived") end
end
