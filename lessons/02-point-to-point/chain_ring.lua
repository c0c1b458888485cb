--- title: Exercise: close the chain into a ring and predict the value
--- world: 4
--- expect: ok

-- chain.lua with one change: the last rank does not print, it sends the
-- tensor back to rank 0, which receives it after a full circle. Predict
-- first: with n ranks, what does rank 0 get back? (Every rank but rank 0
-- adds 10, now the last one too.)

local n = world_size
if n < 2 then error("a ring needs at least 2 ranks: run with -n 2 or more") end
local right, left = (rank + 1) % n, (rank - 1 + n) % n
local t = tensor.zeros(4)

if rank == 0 then
    t:copy_(tensor.from({1, 2, 3, 4}))
    print("start: " .. tostring(t))
    -- Rank 0 sends first and receives last. Had it received first, every
    -- rank would wait for its left neighbour: a ring of waits, a deadlock.
    dist.send(t, right)
    dist.recv(t, left)
    print(string.format("after a full circle: %s (predicted: start + 10 * %d)",
                        tostring(t), n - 1))
else
    dist.recv(t, left)
    t:add_(10)
    dist.send(t, right)
end
