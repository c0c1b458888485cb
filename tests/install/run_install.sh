#!/usr/bin/env bash
# run_install.sh -- make install into a scratch DESTDIR, then use the installed
# commsim from a directory that is not the source tree: it finds its lessons
# (by chapter name too), runs one, and its man page renders. make uninstall
# takes every file back.
. "$(dirname "$0")/../lib.sh"

top_srcdir=$(cd "$top_srcdir" && pwd) top_builddir=$(cd "$top_builddir" && pwd)
dest=$tmp/dest
# The outer make's flags (-j, TESTS=...) are not this make's.
domake() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL "${MAKE:-make}" -s -C "$top_builddir" "$@"; }

if domake install DESTDIR="$dest" >"$tmp/out" 2>"$tmp/err"; then
  ok "make install DESTDIR=..."
else
  bad "make install DESTDIR=..."
  finish
fi

inst=$(find "$dest" -type f -name commsim -perm -u+x | head -1)
lessons=$(find "$dest" -type d -path '*/share/commsim/lessons' | head -1)
man1=$(find "$dest" -type f -name commsim.1 | head -1)
cli_md=$(find "$dest" -type f -path '*/doc/commsim/docs/cli.md' | head -1)
[ -n "$inst" ] && ok "the program is installed" || bad "the program is installed" "no commsim under $dest"

# Every lesson file is installed, and nothing else.
(cd "$top_srcdir/lessons" && find . -type f | sort) >"$tmp/want"
if [ -n "$lessons" ] && (cd "$lessons" && find . -type f | sort) >"$tmp/got" && cmp -s "$tmp/want" "$tmp/got"; then
  ok "every lesson is installed under \$(pkgdatadir)/lessons"
else
  bad_showing "$tmp/want" "every lesson is installed under \$(pkgdatadir)/lessons" "missing or extra files"
fi
(cd "$top_srcdir/docs" && ls -- *.md) >"$tmp/want"
if [ -n "$cli_md" ] && (cd "$(dirname "$cli_md")" && ls -- *.md) >"$tmp/got" && cmp -s "$tmp/want" "$tmp/got"; then
  ok "every page of docs/ is installed under \$(docdir) (Makefile.am's nobase_doc_DATA)"
else
  bad_showing "$tmp/want" "every page of docs/ is installed under \$(docdir) (Makefile.am's nobase_doc_DATA)"
fi

# The installed commsim, run away from the tree, without COMMSIM_LESSONS.
away=$tmp/away
mkdir -p "$away"
bin=$inst
unset COMMSIM_LESSONS
cd "$away"
expect "installed: version" 0 "commsim " -- version
expect "installed: learn finds the installed chapters (an unknown one lists them)" \
  1 "  02-point-to-point" -- learn 99
expect "installed: learn CHAPTER by name finds it (and needs a terminal)" \
  1 "needs a terminal" -- learn point-to-point
expect "installed: learn --help names the installed lessons" 0 "/share/commsim/lessons)" -- learn --help
expect "installed: a lesson by name runs" 0 "verdict: ok" -- run ring -n 3 --no-tui
expect "installed: an installed lesson runs" 0 "verdict: ok" -- run "$lessons/01-first-program/hello.lua" --no-tui

# The man page: made from docs/cli.md, one .SH per "## " section.
if [ -z "$man1" ]; then
  bad "the man page is installed" "no commsim.1 under $dest"
else
  ok "the man page is installed"
  sed -n 's/^## //p' "$top_srcdir/docs/cli.md" | tr '[:lower:]' '[:upper:]' | sed 's/-/\\-/g' >"$tmp/want"
  sed -n 's/^\.SH //p' "$man1" >"$tmp/got"
  if cmp -s "$tmp/want" "$tmp/got"; then
    ok "the man page has docs/cli.md's sections"
  else
    diff "$tmp/want" "$tmp/got" >"$tmp/diff"
    bad_showing "$tmp/diff" "the man page has docs/cli.md's sections"
  fi
  opened=$(grep -o '\\fB' "$man1" | wc -l) closed=$(grep -o '\\fR' "$man1" | wc -l)
  [ "$opened" = "$closed" ] && ok "the man page closes every bold span" ||
    bad "the man page closes every bold span" "$opened \\fB, $closed \\fR"
  if ! command -v man >/dev/null; then
    skip "man -l renders the page" "no man(1) here"
  elif MANWIDTH=80 man -l "$man1" >"$tmp/out" 2>"$tmp/err" && [ ! -s "$tmp/err" ] &&
       grep -q "^COMMSIM(1)" "$tmp/out" && grep -q "^EXIT STATUS" "$tmp/out"; then
    ok "man -l renders the page without warnings"
  else
    bad "man -l renders the page without warnings"
  fi
fi

cd "$top_builddir"
if domake uninstall DESTDIR="$dest" >"$tmp/out" 2>"$tmp/err" &&
   [ -z "$(find "$dest" -type f)" ]; then
  ok "make uninstall removes every installed file"
else
  find "$dest" -type f >>"$tmp/out"
  bad "make uninstall removes every installed file"
fi
finish
