--- world: 2
--- send-mode: eager
-- Rank 1 drops work handles and makes garbage while rank 0 fails: it is
-- stopped anywhere in the loop, and the finalizers that release what the
-- handles hold must still run as it unwinds and when its state closes
-- (found by tests/fuzz/fuzz_script.c: a leak, seen under AddressSanitizer,
-- make check-asan; the stop lands at a point that leaked in about one run
-- of three before the fix).
local t = tensor.arange(65536)
local u = tensor.zeros(65536)
if rank == 0 then
  dist.compute(100)
  error("rank 0 fails while rank 1 makes garbage")
end
while true do
  dist.isend(t, 1)
  pcall(function() local x = t:neg() end)
  dist.irecv(u, 1)
end
