--- title: 3000 eager isends of 1 MiB that nobody receives (item 5)
--- world: 2
--- send-mode: eager
local t = tensor.zeros(256 * 1024)
local works = {}
if rank == 0 then
  for i = 1, 3000 do
    works[i] = dist.isend(t, 1)
  end
end
