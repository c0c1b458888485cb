--- title: rank 2 skips creating a group it is not in, so its next group is the others' first (tests)
--- world: 3
local t = tensor.ones(4)
local g
if rank < 2 then g = dist.new_group({0, 1}) end -- every rank must call new_group
if rank < 2 then dist.all_reduce(t, {group = g}) end
local h = dist.new_group({1, 2})
if rank > 0 then dist.all_reduce(t, {group = h}) end
