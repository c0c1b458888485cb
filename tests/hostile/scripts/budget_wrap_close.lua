--- title: a wrapped coroutine stopped by the budget, with a __close that loops
--- world: 1
local w = coroutine.wrap(function()
  local guard <close> = setmetatable({}, {__close = function() while true do end end})
  while true do end
end)
w()
