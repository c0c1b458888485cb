--- title: __close handlers that loop while the budget error unwinds
--- world: 1
while true do
  pcall(function()
    local a <close> = setmetatable({}, {__close = function() while true do end end})
    local b <close> = setmetatable({}, {__close = function() while true do end end})
    while true do end
  end)
end
