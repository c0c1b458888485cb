--- title: every rank-side pitfall once (tests)
--- world: 2
-- Each pitfall is reported as a warning, once per site, naming both lines.
-- The "go" messages hold back the other side until the accesses are done,
-- so that nothing really races (the pitfalls are found all the same).
local t, r, go = tensor.ones(4), tensor.zeros(4), tensor.zeros(1)
if rank == 0 then
  local w = dist.isend(t, 1)
  for i = 1, 3 do t[0] = i end            -- line 9: write while the isend sends (once)
  local v = t:narrow(0, 2, 2)
  v:fill_(3)                              -- line 11: a view of it
  dist.send(go, 1, {tag = 9})
  w:wait()
  t[0] = 1                                -- line 14: fine, waited
  dist.recv(go, 1, {tag = 8})
  dist.send(t, 1, {tag = 5})
  dist.isend(tensor.ones(2), 1, {tag = 6}) -- line 17: never waited on
else
  dist.recv(go, 0, {tag = 9})
  dist.recv(tensor.zeros(4), 0)
  local w = dist.irecv(r, 0, {tag = 5})
  local x = r:sum()                       -- line 22: read before the wait
  r:add_(1)                               -- line 23: write before the wait
  dist.send(go, 0, {tag = 8})
  w:wait()
  print(r:sum())
  dist.recv(tensor.zeros(2), 0, {tag = 6})
end
