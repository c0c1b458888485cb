--- title: finalizers run with the hook off: refused, and the loop still ends
--- world: 1
while true do
  pcall(setmetatable, {}, {__gc = function() while true do end end})
  collectgarbage()
end
