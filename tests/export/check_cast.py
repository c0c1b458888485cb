#!/usr/bin/env python3
"""check_cast.py W H FILE... -- an asciinema v2 recording: asciinema's own parser
when the Debian package is installed, and the format by hand either way (a
header with version 2 and the size, then [time, "o", text] with times that
never go back, no row wider than the recording). One line "FILE: what is wrong" per bad file."""
import json, re, sys, unicodedata

sys.path.insert(0, "/usr/lib/python3/dist-packages")
try:
  from asciinema.asciicast import open_from_url
except ImportError:
  open_from_url = None


def cols(row):
  """A row's width on a terminal: SGR codes take none, wide characters two."""
  row = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", row)
  return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in row)


def check(path, w, h):
  lines = open(path, encoding="utf-8").read().splitlines()
  hdr = json.loads(lines[0])
  errs = []
  if hdr.get("version") != 2 or hdr.get("width") != w or hdr.get("height") != h:
      errs.append("header: %r" % hdr)
  t = 0.0
  for n, l in enumerate(lines[1:], 2):
      e = json.loads(l)
      if not (isinstance(e, list) and len(e) == 3 and e[1] == "o" and isinstance(e[2], str)):
          errs.append("%d: not [time, \"o\", text]" % n); continue
      if e[0] < t: errs.append("%d: time goes back" % n)
      t = e[0]
      if e[2].count("\r\n") != h - 1: errs.append("%d: a frame of %d rows" % (n, e[2].count("\r\n") + 1))
      wide = max(cols(r) for r in e[2].split("\r\n"))
      if wide > w: errs.append("%d: a row of %d columns" % (n, wide))
  if len(lines) < 2: errs.append("no frames")
  if open_from_url:
      with open_from_url(path) as c:
          if sum(1 for _ in c.events()) != len(lines) - 1: errs.append("asciinema reads another count")
  return errs


w, h = int(sys.argv[1]), int(sys.argv[2])
bad = 0
for path in sys.argv[3:]:
  errs = check(path, w, h)
  for e in errs[:5]: print("%s: %s" % (path, e))
  bad += bool(errs)
sys.exit(1 if bad else 0)
