--- title: Ping-pong: two ranks bounce a tensor back and forth
--- world: 2
--- expect: ok

-- Ping-pong is how latency is measured: the time of one round trip, halved,
-- is the time of one message. Here each side adds 1 before returning the
-- ball, so we can check that every bounce really happened.

if world_size < 2 then
    error("ping-pong needs 2 ranks: run with -n 2")
end

local rounds = 5
local ball = tensor.zeros(1)

if rank == 0 then
    for i = 1, rounds do
        dist.send(ball, 1)          -- ping
        dist.recv(ball, 1)          -- pong: the same buffer is reused
        ball:add_(1)
    end
    -- Two increments per round trip: one here, one on rank 1.
    print(string.format("after %d round trips: %s", rounds, tostring(ball)))
elseif rank == 1 then
    for i = 1, rounds do
        dist.recv(ball, 0)
        ball:add_(1)
        dist.send(ball, 0)
    end
    print("last value returned: " .. tostring(ball))
end
-- Ranks 2 and up (with -n 3 or more) have no part in the game.

-- To time it yourself: note t0 = dist.time() on rank 0 before the loop and
-- print (dist.time() - t0) / (2 * rounds) after it: the one-way latency.
