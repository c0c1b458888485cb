--- title: an infinite loop that tries to swallow the budget error
--- world: 1
while true do pcall(function() while true do end end) end
