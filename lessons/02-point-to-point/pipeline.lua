--- title: Pipeline: a small model split into stages, one stage per rank
--- world: 4
--- expect: ok

-- Pipeline parallelism: a model too big for one device is cut into stages,
-- one per rank. Activations flow forward: each stage receives them from the
-- stage before, applies its layer, and sends the result to the stage after.
-- Here a layer is a 3x3 weight matrix followed by relu (the last stage has
-- no relu: it produces the output). Integer weights keep the arithmetic exact.

local batch, features = 2, 3
local first, last = 0, world_size - 1

-- Each rank holds only its own stage's weights: that is the point of
-- splitting the model. (With more than 4 ranks the list repeats.)
local layers = {
    { 1, 0, -1,    0, 1, 1,    1, 0, 0 },
    { 0, 1, 0,     1, -1, 1,   1, 0, -1 },
    { 1, 1, 0,     -1, 0, 1,   0, 1, 1 },
    { 1, 0, 0,     0, 0, 1,    -1, 1, 0 },
}
local weight = tensor.from(layers[rank % #layers + 1]):view(features, features)

-- The input batch, or the activations from the previous stage. The receiver
-- must know the shape in advance: every stage agrees on batch x features.
local x = tensor.zeros(batch, features)
if rank == first then
    x = tensor.from({1, 2, 3, 4, 5, 6}):view(batch, features)
    print("input:")
    print(x)
else
    dist.recv(x, rank - 1)
end

local y = tensor.matmul(x, weight)       -- (batch x features) @ (features x features)

if rank ~= last then
    dist.send(y:relu(), rank + 1)
else
    print("output:")
    print(y)
end

-- With one batch, only one stage is busy at a time while the others wait.
-- Real pipelines (GPipe, 1F1B) split the batch into micro-batches so that
-- the stages work on different micro-batches at once.
