--- title: a pipeline of world_size stages, m micro-batches, GPipe or 1F1B
--- send-mode: eager
-- F and B ms of compute per micro-batch and stage; activations and
-- gradients are empty messages, so a hop costs alpha. Prints the makespan
-- on the last rank to finish and the most activations a stage held.
local m, F, B = 8, 1, 2
local schedule = SCHEDULE or "gpipe"
local s, p = rank, world_size
local msg = tensor.zeros(0)
local held, peak = 0, 0
local function fwd(j)
  if s > 0 then dist.recv(msg, s - 1, {tag = j}) end
  dist.compute(F)
  held = held + 1
  if held > peak then peak = held end
  if s < p - 1 then dist.send(msg, s + 1, {tag = j}) end
end
local function bwd(j)
  if s < p - 1 then dist.recv(msg, s + 1, {tag = 1000 + j}) end
  dist.compute(B)
  held = held - 1
  if s > 0 then dist.send(msg, s - 1, {tag = 1000 + j}) end
end
if schedule == "gpipe" then
  for j = 0, m - 1 do fwd(j) end
  for j = 0, m - 1 do bwd(j) end
else
  local w = math.min(p - s - 1, m)
  local f, b = 0, 0
  for _ = 1, w do fwd(f); f = f + 1 end
  while f < m do fwd(f); f = f + 1; bwd(b); b = b + 1 end
  while b < m do bwd(b); b = b + 1 end
end
print(string.format("%s end %.0f peak %d", schedule, dist.time() * 1e9, peak))
