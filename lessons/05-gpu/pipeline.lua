--- title: Model parallel: two stages on two GPUs, activations forward, gradients back
--- world: 2
--- expect: ok

-- A model too big for one GPU is cut in stages, one per GPU (GPipe, torch's
-- pipelining, Megatron-LM). Here stage 0 (rank 0) scales its input by w0,
-- stage 1 (rank 1) takes the weighted sum with w1 and the squared error.
-- Forward, the activation h goes 0 -> 1; backward, its gradient goes 1 -> 0.
-- Small integers keep every value exact: check them by hand in README.md.
local gpu = dist.cuda_device_count() >= world_size
local function to_gpu(t) if gpu then return t:cuda() end return t end
local function to_host(t) if gpu then return t:cpu() end return t end

local w0 = to_gpu(tensor.from({1, 2, 1, 2}))   -- stage 0's weights
local w1 = to_gpu(tensor.from({1, 1, 2, 2}))   -- stage 1's weights

-- One micro-batch: x = (1, 2, 3, 4), target 20.
if rank == 0 then
  local x = to_gpu(tensor.from({1, 2, 3, 4}))
  local h = x * w0                              -- forward on GPU 0
  dist.send(h, 1)                               -- the activation to stage 1
  local grad_h = to_gpu(tensor.zeros(4))
  dist.recv(grad_h, 1)                          -- its gradient, back from stage 1
  print("one micro-batch: grad w0 = " .. tostring(to_host(grad_h * x)))
else
  local h = to_gpu(tensor.zeros(4))
  dist.recv(h, 0)
  local y = to_host(h * w1):sum()               -- forward on GPU 1
  local dy = y - 20                             -- d(loss)/dy for loss = (y - 20)^2 / 2
  print(string.format("one micro-batch: y = %g, loss = %g", y, dy * dy / 2))
  dist.send(w1 * dy, 0)                         -- d(loss)/dh, to stage 0
  print("one micro-batch: grad w1 = " .. tostring(to_host(h * dy)))
end

-- Four micro-batches, GPipe's schedule: every forward, then every backward.
-- While stage 1 works on micro-batch m, stage 0 already computes m + 1.
-- Tags name the micro-batches, so stage 1 may send the gradients back in
-- reverse order (the last forward is the first backward) while stage 0
-- receives them in its own order: the host matches by tag, NCCL moves bytes.
local M = 4
local targets = {10, 12, 14, 16}
if rank == 0 then
  local xs, sends = {}, {}
  for m = 1, M do
    xs[m] = to_gpu(tensor.from({m, 1, 0, 1}))
    sends[m] = dist.isend(xs[m] * w0, 1, {tag = m})
  end
  local grad_w0 = to_gpu(tensor.zeros(4))
  for m = 1, M do
    local grad_h = to_gpu(tensor.zeros(4))
    dist.recv(grad_h, 1, {tag = m})
    grad_w0:add_(grad_h * xs[m])                -- gradients accumulate over micro-batches
  end
  dist.wait_all(sends)
  print("4 micro-batches: grad w0 = " .. tostring(to_host(grad_w0)))
else
  local hs, dys = {}, {}
  for m = 1, M do
    hs[m] = to_gpu(tensor.zeros(4))
    dist.recv(hs[m], 0, {tag = m})
    dys[m] = to_host(hs[m] * w1):sum() - targets[m]
  end
  local grad_w1, backs = to_gpu(tensor.zeros(4)), {}
  for m = M, 1, -1 do                           -- backward: last micro-batch first
    grad_w1:add_(hs[m] * dys[m])
    backs[#backs + 1] = dist.isend(w1 * dys[m], 0, {tag = m})
  end
  dist.wait_all(backs)
  print(string.format("4 micro-batches: errors %g, %g, %g, %g; grad w1 = %s", dys[1], dys[2],
                      dys[3], dys[4], tostring(to_host(grad_w1))))
end
