--- title: SyncBatchNorm: all_gather every rank's statistics
--- world: 4
--- expect: ok

-- Batch normalisation normalises each channel by the mean and variance of
-- the batch. With data parallelism each rank sees only its slice, often a
-- few samples: its own statistics are noisy. torch.nn.SyncBatchNorm computes
-- them over the whole global batch: every rank computes its local
-- statistics, an all_gather gives everybody everybody's, and every rank
-- combines them the same way. (torch gathers each rank's mean, inverse
-- standard deviation and sample count; here sums keep the numbers exact.)

-- This rank's activations: 2 samples x 2 channels, different on every rank.
local x = tensor.from({4 * rank + 1, 4 * rank,
                       4 * rank + 3, 4 * rank + 4}):view(2, 2)
local ch = {x:select(1, 0), x:select(1, 1)}   -- the two channels (columns)

-- Local statistics: per channel the sum and the sum of squares, and the count.
local stats = tensor.from({ch[1]:sum(), ch[2]:sum(),
                           (ch[1] * ch[1]):sum(), (ch[2] * ch[2]):sum(), #x})
local m0 = ch[1]:sum() / #x
print(string.format("local channel 0: mean %g, variance %g",
                    m0, (ch[1] * ch[1]):sum() / #x - m0 * m0))

-- Who sends what: every rank its 5 numbers to every rank. Nothing is
-- added up by the collective: each rank gets all the rows and combines them.
local all = tensor.zeros(world_size * 5)
dist.all_gather_into_tensor(all, stats)
local rows = all:view(world_size, 5)
if rank == 0 then
    print("gathered (sum0, sum1, sumsq0, sumsq1, count), one row per rank:")
    print(rows)
end

-- Combine, in rank order, the same way on every rank.
local tot = tensor.zeros(5)
for r = 0, world_size - 1 do tot:add_(rows[r]) end
local n = tot[4]
for c = 0, 1 do
    local mean = tot[c] / n
    local var = tot[2 + c] / n - mean * mean      -- biased, as batch norm uses
    print(string.format("global channel %d: mean %g, variance %g", c, mean, var))
end
