--- title: pcall in a loop around an endless loop
--- world: 1
while true do
  pcall(function() while true do end end)
end
