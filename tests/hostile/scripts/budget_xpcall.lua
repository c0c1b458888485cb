--- title: xpcall's message handler loops after the budget error (issue 11, item 3)
--- world: 1
xpcall(function() while true do end end, function() while true do end end)
