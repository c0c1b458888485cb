--- world: 2
-- t[i] reads or writes element (or row) i only: the pitfall checks compare
-- that part with the buffers in flight, not the whole tensor.
local m = tensor.zeros(4, 4)
local v = tensor.zeros(6)
if rank == 0 then
  local w = dist.isend(m[1], 1)
  local w2 = dist.isend(v:narrow(0, 0, 3), 1, {tag = 1})
  m[2] = 5                       -- another row: fine
  m[0][3] = 2                    -- another row: fine
  v[4] = 1                       -- outside the narrow: fine
  m[1][0] = 9                    -- line 12: inside the isend of row 1
  v[1] = 3                       -- line 13: inside the narrow
  dist.wait_all({w, w2})
else
  local w = dist.irecv(m[1], 0)
  local w2 = dist.irecv(v:narrow(0, 0, 3), 0, {tag = 1})
  local x = m[0][1]              -- another row: fine
  local y = v[5]                 -- outside: fine
  local z = v[2]                 -- line 20: inside the narrow
  m[3] = m[1]                    -- line 21: reads the row being received
  dist.wait_all({w, w2})
end
