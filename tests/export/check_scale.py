#!/usr/bin/env python3
"""check_scale.py NS SVG PERFETTO -- pictures of a run with a network model
drawn in virtual time: every message of the run takes NS virtual
nanoseconds from the start of its transmission to its arrival (the model's
alpha plus its bytes over the bandwidth), so every SVG arrow is NS long at
the picture's scale (data-ns-per-px on the svg element) and every Perfetto
flow ends NS/1000 microseconds after it starts."""
import json
import sys
import xml.etree.ElementTree as ET

ns = float(sys.argv[1])
errs = []
root = ET.parse(sys.argv[2]).getroot()
per_px = float(root.get("data-ns-per-px", "0"))
if per_px <= 0:
    errs.append("svg: no data-ns-per-px: not drawn to scale")
arrows = [el for el in root.iter() if el.tag.endswith("line") and el.get("marker-end") == "url(#arrow)"]
if not arrows:
    errs.append("svg: no message arrows")
for el in arrows:
    dx = float(el.get("x2")) - float(el.get("x1"))
    if per_px > 0 and abs(dx * per_px - ns) > 0.02 * per_px + 1:
        errs.append("svg: an arrow of %.0f ns, expected %.0f" % (dx * per_px, ns))
d = json.load(open(sys.argv[3]))
if d["otherData"].get("time") != "virtual, modelled":
    errs.append("perfetto: otherData.time is %r" % d["otherData"].get("time"))
ev = d["traceEvents"]
start = {e["id"]: e["ts"] for e in ev if e["ph"] == "s"}
end = {e["id"]: e["ts"] for e in ev if e["ph"] == "f"}
if not start:
    errs.append("perfetto: no flows")
for i, ts in start.items():
    if abs(end[i] - ts - ns / 1000) > 0.0015:
        errs.append("perfetto: flow %s takes %.3f us, expected %.3f" % (i, end[i] - ts, ns / 1000))
for e in errs[:10]:
    print(e)
sys.exit(1 if errs else 0)
