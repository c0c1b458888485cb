/* bench_script.c -- the Lua program of one bench run: a short generated
 * prologue (the op, the algorithm, the sizes, the iteration policy) and a
 * fixed driver. The driver only uses what lesson scripts use (dist.*,
 * tensor.*), so a bench measures exactly what 'commsim run' runs.
 *
 * Iteration counts are chosen by time, as osu and nccl-tests pick theirs by
 * size: rounds of 1, 2, 4, ... iterations warm up (and page the buffers in)
 * until one lasts a tenth of the budget; its time per iteration sets the
 * timed loop's count. Every rank must loop the same number of times, so each
 * round's time is the slowest rank's (all_reduce MAX). Rank 0 prints
 * "@bench BYTES ITERS WARMUP SECONDS" per size.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "xalloc.h"

static const char driver[] =
    "local n, me = world_size, rank\n"
    "local opts = ALGO and {algo = ALGO} or nil\n"
    "local F32 = 4\n"
    "\n"
    "local function agree_max(x)\n"
    "  local t = tensor.from({x}, {dtype = 'float64'})\n"
    "  dist.all_reduce(t, ReduceOp.MAX)\n"
    "  return t[0]\n"
    "end\n"
    "local function clamp(x, lo, hi) return math.max(lo, math.min(hi, x)) end\n"
    "local function timed(step, k)\n"
    "  local t0 = dist.time()\n"
    "  for _ = 1, k do step() end\n"
    "  return dist.time() - t0\n"
    "end\n"
    "\n"
    "-- Messages in flight per bw/bibw iteration (osu_bw's window), each with\n"
    "-- its own buffer, 64 at most and 64 MiB in all.\n"
    "local function window(bytes) return clamp((64 << 20) // bytes, 2, 64) end\n"
    "\n"
    "-- setup(bytes) -> step, real bytes, units per step (messages for bw)\n"
    "local setups = {}\n"
    "function setups.pingpong(bytes)\n"
    "  local t, peer = tensor.zeros(math.max(1, bytes // F32)), 1 - me\n"
    "  return function()\n"
    "    if me == 0 then dist.send(t, peer); dist.recv(t, peer)\n"
    "    else dist.recv(t, peer); dist.send(t, peer) end\n"
    "  end, t:numel() * F32, 2\n"
    "end\n"
    "local function bufs(bytes, w)\n"
    "  local l = {}\n"
    "  for i = 1, w do l[i] = tensor.zeros(math.max(1, bytes // F32)) end\n"
    "  return l\n"
    "end\n"
    "function setups.bw(bytes)\n"
    "  local w = window(bytes)\n"
    "  local l, ack, peer, q = bufs(bytes, w), tensor.zeros(1), 1 - me, {}\n"
    "  return function()\n"
    "    for i = 1, w do\n"
    "      if me == 0 then q[i] = dist.isend(l[i], peer) else q[i] = dist.irecv(l[i], peer) end\n"
    "    end\n"
    "    for i = 1, w do q[i]:wait() end\n"
    "    if me == 0 then dist.recv(ack, peer) else dist.send(ack, peer) end\n"
    "  end, l[1]:numel() * F32, w\n"
    "end\n"
    "function setups.bibw(bytes)\n"
    "  local w = window(bytes)\n"
    "  local s, r, peer, q = bufs(bytes, w), bufs(bytes, w), 1 - me, {}\n"
    "  return function()\n"
    "    for i = 1, w do q[i] = dist.irecv(r[i], peer) end\n"
    "    for i = 1, w do q[w + i] = dist.isend(s[i], peer) end\n"
    "    for i = 1, 2 * w do q[i]:wait() end\n"
    "  end, s[1]:numel() * F32, w\n"
    "end\n"
    "local function whole(bytes) return tensor.zeros(math.max(1, bytes // F32)) end\n"
    "local function chunk(bytes) return math.max(1, bytes // (F32 * n)) end\n"
    "function setups.broadcast(bytes)\n"
    "  local t = whole(bytes)\n"
    "  return function() dist.broadcast(t, 0, opts) end, t:numel() * F32, 1\n"
    "end\n"
    "function setups.reduce(bytes)\n"
    "  local t = whole(bytes)\n"
    "  return function() dist.reduce(t, 0, ReduceOp.SUM, opts) end, t:numel() * F32, 1\n"
    "end\n"
    "function setups.all_reduce(bytes)\n"
    "  local t = whole(bytes)\n"
    "  return function() dist.all_reduce(t, ReduceOp.SUM, opts) end, t:numel() * F32, 1\n"
    "end\n"
    "-- nccl-tests' size of the gathering ops is the whole buffer, n chunks\n"
    "function setups.all_gather(bytes)\n"
    "  local c = chunk(bytes)\n"
    "  local out, inp = tensor.zeros(c * n), tensor.zeros(c)\n"
    "  return function() dist.all_gather_into_tensor(out, inp, opts) end, c * n * F32, 1\n"
    "end\n"
    "function setups.reduce_scatter(bytes)\n"
    "  local c = chunk(bytes)\n"
    "  local out, inp = tensor.zeros(c), tensor.zeros(c * n)\n"
    "  return function() dist.reduce_scatter_tensor(out, inp, ReduceOp.SUM, opts) end,\n"
    "         c * n * F32, 1\n"
    "end\n"
    "function setups.all_to_all(bytes)\n"
    "  local c = chunk(bytes)\n"
    "  local out, inp = tensor.zeros(c * n), tensor.zeros(c * n)\n"
    "  return function() dist.all_to_all_single(out, inp, opts) end, c * n * F32, 1\n"
    "end\n"
    "local function root_list(c)\n"
    "  if me ~= 0 then return nil end\n"
    "  local l = {}\n"
    "  for i = 1, n do l[i] = tensor.zeros(c) end\n"
    "  return l\n"
    "end\n"
    "function setups.gather(bytes)\n"
    "  local c = chunk(bytes)\n"
    "  local t, l = tensor.zeros(c), root_list(c)\n"
    "  return function() dist.gather(t, l, 0, opts) end, c * n * F32, 1\n"
    "end\n"
    "function setups.scatter(bytes)\n"
    "  local c = chunk(bytes)\n"
    "  local t, l = tensor.zeros(c), root_list(c)\n"
    "  return function() dist.scatter(t, l, 0, opts) end, c * n * F32, 1\n"
    "end\n"
    "function setups.barrier()\n"
    "  return function() dist.barrier(opts) end, 0, 1\n"
    "end\n"
    "\n"
    "for _, size in ipairs(SIZES) do\n"
    "  collectgarbage()  -- free the previous size's buffers first\n"
    "  local step, bytes, units = setups[OP](size)\n"
    "  local warm, iters\n"
    "  if ITERS > 0 then\n"
    "    warm, iters = math.max(1, ITERS // 10), ITERS\n"
    "    timed(step, warm)\n"
    "  else\n"
    "    -- double the count until a round lasts a tenth of the budget: the\n"
    "    -- rounds warm up, and the last one times an iteration once warm\n"
    "    local k, dt = 1, 0\n"
    "    warm = 0\n"
    "    repeat\n"
    "      local el = agree_max(timed(step, k))\n"
    "      warm, dt = warm + k, el / k\n"
    "      k = k * 2\n"
    "    until (k > 2 and el >= TIME / 10) or k > 100000  -- round 1 only pages in\n"
    "    iters = math.floor(clamp(TIME / dt, 1, 1000000))\n"
    "  end\n"
    "  dist.barrier()\n"
    "  local el = agree_max(timed(step, iters))\n"
    "  if me == 0 then\n"
    "    print(string.format('@bench %d %d %d %.9e', bytes, iters, warm, el / iters / units))\n"
    "  end\n"
    "  -- the size's line is out before any rank can fail at the next size's\n"
    "  -- buffers: the failure is then told at the size that had them\n"
    "  dist.barrier()\n"
    "end\n";

char *cs_bench_script(const cs_bench_op *op, const char *algo, const size_t *sizes, int nsizes,
                      long iters, double seconds) {
    size_t cap = sizeof driver + 512 + (size_t)nsizes * 24;
    char *s = cs_xmalloc(cap, "the bench script");
    int len = snprintf(s, cap,
                       "--- title: commsim bench %s (generated)\n"
                       "local OP = '%s'\nlocal ALGO = %s%s%s\nlocal ITERS, TIME = %ld, %.17g\n"
                       "local SIZES = {",
                       op->name, op->name, algo ? "'" : "", algo ? algo : "nil", algo ? "'" : "",
                       iters, seconds);
    if (!op->sized) nsizes = 1; /* one row, size 0 */
    for (int i = 0; i < nsizes; i++)
        len += snprintf(s + len, cap - (size_t)len, "%s%zu", i ? ", " : "",
                        op->sized ? sizes[i] : (size_t)0);
    snprintf(s + len, cap - (size_t)len, "}\n%s", driver);
    return s;
}
