-- hostile: a tensor result of shape {1e8, 0, 1}: no elements, but 1e8
-- empty tables as the nested list check(run) is given
result = tensor.zeros(100000000, 0, 1)
