-- export_ring.lua -- a big trace for commsim export: every rank passes a
-- small tensor round the ring ROUNDS times (64 ranks x 3000 rounds = 192,000
-- messages). See bench/run.sh and docs/export.md.
-- run: commsim run bench/export_ring.lua -n 64 --trace ring64.jsonl
local ROUNDS = 3000
local t = tensor.zeros(4)
local r = tensor.zeros(4)
local right, left = (rank + 1) % world_size, (rank - 1) % world_size
for i = 1, ROUNDS do
  local w = dist.isend(t, right)
  dist.recv(r, left)
  w:wait()
end
