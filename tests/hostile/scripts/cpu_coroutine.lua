-- the budget reaches into coroutines, and resuming cannot swallow it
while true do
  local co = coroutine.wrap(function() while true do coroutine.yield() end end)
  pcall(co)
  pcall(coroutine.wrap(function() while true do end end))
end
