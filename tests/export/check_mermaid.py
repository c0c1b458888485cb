#!/usr/bin/env python3
"""check_mermaid.py FILE -- the Mermaid sequenceDiagram subset commsim emits
(docs/export.md): the header, participants first, arrows and notes between
declared participants, rect blocks balanced, no text Mermaid would misread.
Several files: one line "FILE: what is wrong" per bad one."""
import re, sys


def check(path):
  lines = open(path).read().split("\n")
  errs = []
  if lines[0] != "sequenceDiagram": errs.append("line 1: not 'sequenceDiagram'")
  parts, depth, seen_body = set(), 0, False
  text_ok = re.compile(r"^[^;#\n]*$")
  for n, l in enumerate(lines[1:], 2):
      if not l: continue
      s = l.strip()
      m = re.fullmatch(r"participant (\w+) as (Rank \d+)", s)
      if m:
          if seen_body: errs.append("%d: participant after the body" % n)
          parts.add(m.group(1)); continue
      seen_body = True
      m = re.fullmatch(r"(\w+)->>(\w+): (.+)", s)
      if m:
          if m.group(1) not in parts or m.group(2) not in parts: errs.append("%d: unknown participant" % n)
          if not text_ok.match(m.group(3)): errs.append("%d: bad text" % n)
          continue
      m = re.fullmatch(r"Note over (\w+)(?:,(\w+))?: (.+)", s)
      if m:
          for p in m.group(1, 2):
              if p is not None and p not in parts: errs.append("%d: unknown participant %s" % (n, p))
          if not text_ok.match(m.group(3)): errs.append("%d: bad text" % n)
          continue
      if re.fullmatch(r"rect rgba\(\d+, \d+, \d+, [0-9.]+\)", s):
          depth += 1; continue
      if s == "end":
          depth -= 1
          if depth < 0: errs.append("%d: end without rect" % n)
          continue
      errs.append("%d: not in the grammar: %s" % (n, s))
  if depth: errs.append("unclosed rect")
  if not parts: errs.append("no participants")
  return errs


bad = 0
for path in sys.argv[1:]:
  errs = check(path)
  for e in errs[:5]: print("%s: %s" % (path, e))
  bad += bool(errs)
sys.exit(1 if bad else 0)
