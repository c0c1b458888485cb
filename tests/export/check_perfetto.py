#!/usr/bin/env python3
"""check_perfetto.py FILE -- a Chrome Trace Event Format file as ui.perfetto.dev
reads it: required keys per phase, every flow start with exactly one end,
a slice without an end (B: a rank blocked for good) at most one per track,
timestamps monotone per track, metadata naming every rank and the script.
Several files: one line "FILE: what is wrong" per bad one."""
import json, sys


def check(path):
  doc = json.load(open(path))
  errs = []
  evs = doc.get("traceEvents")
  if not isinstance(evs, list):
    return ["no traceEvents array"]
  need = {"X": ["name", "pid", "tid", "ts", "dur", "cat"], "B": ["name", "pid", "tid", "ts", "cat"], "s": ["name", "pid", "tid", "ts", "id"],
          "f": ["name", "pid", "tid", "ts", "id", "bp"], "i": ["name", "pid", "tid", "ts", "s"],
          "M": ["name", "pid", "tid", "args"]}
  last = {}
  starts, ends = {}, {}
  opened = set()
  names = set()
  script = None
  for n, e in enumerate(evs):
      ph = e.get("ph")
      if ph not in need:
          errs.append("event %d: phase %r" % (n, ph)); continue
      for k in need[ph]:
          if k not in e: errs.append("event %d (%s): no %s" % (n, ph, k))
      if ph == "M":
          if e["name"] == "thread_name": names.add(e["args"]["name"])
          if e["name"] == "process_name": script = e["args"]["name"]
          continue
      if not isinstance(e.get("ts"), (int, float)) or e["ts"] < 0:
          errs.append("event %d: ts %r" % (n, e.get("ts")))
          continue
      if ph == "X" and e["dur"] < 0: errs.append("event %d: negative dur" % n)
      track = (e["pid"], e["tid"])
      if e["ts"] < last.get(track, 0): errs.append("event %d: ts goes back on %s" % (n, track))
      last[track] = e["ts"]
      if ph == "B":
          if track in opened: errs.append("event %d: a second open slice on %s" % (n, track))
          opened.add(track)
      if ph == "s": starts[e["id"]] = starts.get(e["id"], 0) + 1
      if ph == "f": ends[e["id"]] = ends.get(e["id"], 0) + 1
  for i in set(starts) | set(ends):
      if starts.get(i) != 1 or ends.get(i) != 1:
          errs.append("flow %s: %s starts, %s ends" % (i, starts.get(i), ends.get(i)))
  ranks = doc.get("otherData", {}).get("ranks", 0)
  for k in range(ranks):
      if "Rank %d" % k not in names: errs.append("no thread named Rank %d" % k)
  if not script or not script.startswith("commsim "): errs.append("no process named for the script")
  return errs


bad = 0
for path in sys.argv[1:]:
  errs = check(path)
  for e in errs[:5]: print("%s: %s" % (path, e))
  bad += bool(errs)
sys.exit(1 if bad else 0)
