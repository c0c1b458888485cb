--- title: a matrix product of minutes: the end of the run stops it at its line
--- world: 2
local a = tensor.ones(3000, 3000)
local b = a:matmul(a)
print("done", b[1][1])
