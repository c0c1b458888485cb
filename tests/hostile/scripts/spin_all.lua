-- Every rank runs on and on (tests/hostile/run_tcp.sh kills one of them).
local t = tensor.zeros(1)
while true do t:add_(1) end
