--- title: a gsub callback and a load reader that loop
--- world: 1
while true do
  pcall(string.gsub, "abc", ".", function() while true do end end)
  load(function() while true do end end)
end
