--- title: a syntax error
local t = tensor.zeros(4)
if rank = 1 then end
