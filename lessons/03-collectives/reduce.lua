--- title: Reduce: the root gets the sum of every rank's tensor
--- world: 4
--- expect: ok

-- dist.reduce(t, dst, op): rank dst ends with op applied across every rank's
-- t (elementwise). The other ranks' tensors are inputs only: commsim leaves
-- them unchanged (torch does not promise what they hold afterwards).

local t = tensor.from({1, 10, 100}) * (rank + 1)
print("before: " .. tostring(t))

dist.reduce(t, 0, ReduceOp.SUM)

print("after:  " .. tostring(t))

-- On rank 0: (1 + 2 + 3 + 4) * {1, 10, 100} = {10, 100, 1000}.
