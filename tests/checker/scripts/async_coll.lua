--- title: async collectives: the work handle owns the tensors until its wait (tests)
--- world: 2
local t = tensor.ones(4)
local w = dist.all_reduce(t, ReduceOp.SUM, {async_op = true})
print(t[0])                      -- line 5: reads the result before the wait
t:fill_(3)                       -- line 6: writes it before the wait
w:wait()
print(t[0])                      -- after the wait: fine
local u = tensor.ones(2)
local v = dist.broadcast(u, 0, {async_op = true}) -- line 10: never waited on
local x = tensor.ones(2)
local y = dist.all_reduce(x, ReduceOp.SUM, {async_op = true})
dist.wait_all({y})
x:fill_(1)                       -- after wait_all: fine
local z = dist.all_reduce(tensor.ones(2), ReduceOp.SUM, {async_op = true})
if z:is_completed() then end     -- a true is_completed counts as a wait
