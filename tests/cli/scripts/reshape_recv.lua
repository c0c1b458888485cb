--- title: a receive needs the sender's element count and dtype, not its shape
--- world: 2
-- A [4] tensor received into a [2, 2] buffer runs, as in torch: the bytes
-- are copied in order and keep the receiver's shape. A float64 buffer of 4
-- elements does not: the dtype must match too.
if rank == 0 then
  dist.send(tensor.from({1, 2, 3, 4}), 1)
  dist.send(tensor.from({5, 6, 7, 8}), 1)
else
  local grid = tensor.zeros(2, 2)
  dist.recv(grid, 0)
  print("shape", tostring(grid.shape), grid[1][0])
  local wrong = tensor.zeros(4, {dtype = "float64"})
  dist.recv(wrong, 0)
end
