--- title: two ranks deadlock while a third still computes (tests)
--- world: 3
local t = tensor.zeros(4)
if rank < 2 then
  dist.send(t, 1 - rank)                  -- both send first
  dist.recv(t, 1 - rank)
else
  dist.compute(600000)                    -- ten minutes: the verdict must not wait for it
end
