--- title: a handler that errors and loops, called again and again
--- world: 1
local function h() while true do end end
while true do
  xpcall(error, h, "boom")
end
