--- title: The alpha-beta model: fit latency and bandwidth to your own ping-pongs
--- world: 2
--- net: alpha=10us,bandwidth=1GB/s
--- expect: ok

-- The model: a message of n bytes takes  t(n) = alpha + n * beta,
-- alpha the latency (the cost of any message, however small) and
-- beta = 1 / bandwidth (the cost of each byte). Measure t(n) for a few sizes
-- with ping-pong, fit a straight line through the points by least squares:
-- its intercept is alpha, its slope beta.
--
-- Under the header's model the fit gives back exactly the alpha and the
-- bandwidth it names. With `--net none` it fits your machine: compare the
-- thread and the tcp engine, and put the result in --net to model them
-- (`commsim bench --calibrate` does the same fit for you).

if world_size < 2 then error("run with -n 2") end

local rounds = 10
local sizes = {4, 4096, 65536, 262144, 1048576, 4194304}

-- one-way time of a message of `bytes`, as ping-pong measures it (rank 0)
local function one_way(bytes)
    local ball = tensor.zeros(bytes // 4)
    dist.barrier()
    local t0 = dist.time()
    for _ = 1, rounds do
        if rank == 0 then
            dist.send(ball, 1); dist.recv(ball, 1)
        elseif rank == 1 then
            dist.recv(ball, 0); dist.send(ball, 0)
        end
    end
    return (dist.time() - t0) / (2 * rounds)
end

local xs, ts = {}, {}
for i, bytes in ipairs(sizes) do
    xs[i], ts[i] = bytes, one_way(bytes)
end

if rank == 0 then
    -- least squares: slope = cov(x, t) / var(x), intercept = mean(t) - slope * mean(x)
    local n, mx, mt = #xs, 0, 0
    for i = 1, n do mx, mt = mx + xs[i] / n, mt + ts[i] / n end
    local sxt, sxx = 0, 0
    for i = 1, n do
        sxt = sxt + (xs[i] - mx) * (ts[i] - mt)
        sxx = sxx + (xs[i] - mx) ^ 2
    end
    local beta = sxt / sxx
    local alpha = mt - beta * mx
    for i = 1, n do
        print(string.format("%8d B: measured %.3f us, the line gives %.3f us", xs[i],
                            ts[i] * 1e6, (alpha + beta * xs[i]) * 1e6))
    end
    print(string.format("fit: alpha = %.3f us, bandwidth = %.4f GB/s", alpha * 1e6, 1 / beta / 1e9))
    -- Half the bandwidth is reached where both terms are equal: n = alpha / beta.
    print(string.format("half bandwidth at n = alpha / beta = %.0f bytes", alpha / beta))
end
