-- a yield through a C function (table.sort's comparator) is refused
local co = coroutine.wrap(function()
  table.sort({3, 2, 1}, function(a, b) coroutine.yield() return a < b end)
end)
co()
