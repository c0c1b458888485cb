-- finalizers run with the hooks off, where no budget reaches
setmetatable({}, {__gc = function() while true do end end})
