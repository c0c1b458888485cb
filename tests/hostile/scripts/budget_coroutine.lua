--- title: coroutines catching the budget: resume in a loop, a wrap with __close
--- world: 1
local stuck = coroutine.create(function() while true do end end)
for i = 1, 3 do coroutine.resume(stuck) end
local w = coroutine.wrap(function()
  local guard <close> = setmetatable({}, {__close = function() while true do end end})
  while true do end
end)
while true do pcall(w) end
