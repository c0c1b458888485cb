#!/usr/bin/env python3
"""check_svg.py -- the layout of commsim's SVG diagrams, read back from the
files: a collective's own messages (marker carrow) lie inside a band of
their call; a point-to-point arrow (marker arrow) never crosses a band over
the lanes it joins; every band that draws its schedule labels each step; no
two labels overlap (their boxes estimated from the font size: DejaVu Sans
averages under 0.6 em a character).
Usage: check_svg.py FILE.svg...   Prints one line per fault; status 1 if any."""
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"


def faults(path):
    root = ET.parse(path).getroot()
    bands, arrows, inner, texts, boxes = [], [], [], [], []
    for el in root.iter():
        tag = el.tag.replace(NS, "")
        if tag == "rect" and el.get("rx") == "6" and el.get("fill-opacity") == "0.8":
            x, y, w, h = (float(el.get(k)) for k in ("x", "y", "width", "height"))
            bands.append((x, y, x + w, y + h))
        elif tag == "line" and el.get("marker-end") in ("url(#arrow)", "url(#carrow)"):
            seg = tuple(float(el.get(k)) for k in ("x1", "y1", "x2", "y2"))
            (arrows if el.get("marker-end") == "url(#arrow)" else inner).append(seg)
        elif tag == "text":
            texts.append(el.text or "")
            size, x, y = float(el.get("font-size")), float(el.get("x")), float(el.get("y"))
            w = 0.6 * size * len(el.text or "")
            if el.get("font-weight") == "bold":
                w *= 1.1
            x0 = {"start": x, "middle": x - w / 2, "end": x - w}[el.get("text-anchor", "start")]
            boxes.append((x0 + 1, y - 0.75 * size + 1, x0 + w - 1, y + 0.2 * size - 1, el.text))
    out = []
    for x1, y1, x2, y2 in inner:
        if not any(bx0 <= min(x1, x2) and max(x1, x2) <= bx1 for bx0, _, bx1, _ in bands):
            out.append("%s: a collective's message at x %.0f..%.0f outside every band" % (path, x1, x2))
    for x1, y1, x2, y2 in arrows:
        lo, hi = min(y1, y2), max(y1, y2)
        for bx0, by0, bx1, by1 in bands:
            # the arrow's ends: both lanes inside one band rectangle means the
            # band covers the ranks it joins
            if max(x1, x2) > bx0 and min(x1, x2) < bx1 and by0 <= lo and hi <= by1:
                out.append("%s: a message arrow at x %.0f..%.0f inside a band at %.0f..%.0f"
                           % (path, x1, x2, bx0, bx1))
    if inner and not any(t[:2] in ("RS", "AG") or t[:1] in ("R", "S", "T") and t[1:].isdigit()
                         for t in texts):
        out.append("%s: a band draws messages but labels no step" % path)
    boxes.sort()
    for i, (ax0, ay0, ax1, ay1, at) in enumerate(boxes):
        for bx0, by0, bx1, by1, bt in boxes[i + 1:]:
            if bx0 >= ax1:
                break
            if by0 < ay1 and ay0 < by1:
                out.append("%s: labels overlap: %r and %r" % (path, at, bt))
    return out


def main():
    bad = [f for p in sys.argv[1:] for f in faults(p)]
    for line in bad:
        print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
