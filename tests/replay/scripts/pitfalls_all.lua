--- title: every rank-side pitfall once (tests)
--- world: 2
-- Each pitfall is reported as a warning, once per site, naming both lines.
local t = tensor.ones(4)
local r = tensor.zeros(4)
if rank == 0 then
  local w = dist.isend(t, 1)
  for i = 1, 3 do t[0] = i end            -- line 8: write while the isend sends (once)
  local v = t:narrow(0, 2, 2)
  v:fill_(3)                              -- line 10: a view of it
  w:wait()
  t[0] = 1                                -- fine: waited
  dist.isend(tensor.ones(2), 1)           -- line 13: never waited on
else
  local w = dist.irecv(r, 0)
  local x = r:sum()                       -- line 16: read before the wait
  r:add_(1)                               -- line 17: write before the wait
  w:wait()
  print(r:sum())
  dist.recv(tensor.zeros(2), 0)
end
