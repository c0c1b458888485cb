-- empty tensors, some with a huge dimension: every operation works on none
-- of their elements (an empty tensor plus a number dereferenced NULL before)
local e, h = tensor.zeros(0), tensor.zeros(1 << 40, 0)
print(e + 1, 1 + e, -e, e * e, e:relu())
print(h, h:sum(), h:numel(), #h:chunk(3), h:narrow(0, 1 << 39, 2):sum())
print((h + 1).shape, (2 * h).shape, h:clone().shape, h:to("int64").dtype)
print(tensor.matmul(tensor.zeros(3, 0), tensor.zeros(0, 2)))
print("mean of none", e:mean(), h:mean())  -- nan, as torch's
print(h:view(0, 1 << 40).shape, h:reshape(0).shape, "done")
