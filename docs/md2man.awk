# md2man.awk -- docs/cli.md to the man page commsim.1 (make builds it).
#   awk -v version=0.1.0 -f docs/md2man.awk docs/cli.md >commsim.1
# Knows the Markdown cli.md uses: "# name(1)", "## SECTION", "### Sub",
# fenced code, two-column tables, "*" and "-" lists, paragraphs, and inline
# `code`, **bold** and [text](link).

# Escape roff: backslashes, dashes (options copy as ASCII), a leading dot or quote.
function esc(s) {
    gsub(/\\/, "\\e", s)
    gsub(/-/, "\\-", s)
    sub(/^[.']/, "\\\\&&", s)
    return s
}

# Inline Markdown: `code` and **bold** in bold, links as their text. A code
# span may go on to the next line of its paragraph: bold is global, and every
# block (paragraph, item, table cell, heading) starts it off.
function inline(s,    out, i, c) {
    s = esc(s)
    while (match(s, /\[[^]]*\]\([^)]*\)/)) {
        t = substr(s, RSTART + 1, RLENGTH - 1)
        sub(/\]\(.*/, "", t)
        s = substr(s, 1, RSTART - 1) t substr(s, RSTART + RLENGTH)
    }
    gsub(/\*\*/, "`", s)
    out = ""
    for (i = 1; i <= length(s); i++) {
        c = substr(s, i, 1)
        if (c == "`") { out = out (bold ? "\\fR" : "\\fB"); bold = !bold }
        else out = out c
    }
    return out
}

function cell(s) { gsub(/^ +| +$/, "", s); return s }

# A block of one line (a table cell) ends its spans.
function line(s,    r) { bold = 0; r = inline(s); if (bold) r = r "\\fR"; bold = 0; return r }

BEGIN { code = 0 }

code && /^```/ { print ".fi"; print ".RE"; code = 0; next }
code { print esc($0); next }
/^```/ { print ".PP"; print ".RS 4"; print ".nf"; code = 1; next }

NR == 1 && /^# / {
    name = $2; sub(/\(.*/, "", name)
    printf ".TH %s 1 \"\" \"%s %s\" \"User Commands\"\n", toupper(name), name, version
    next
}
/^## / { sub(/^## /, ""); section = toupper($0); print ".SH " toupper(esc($0)); next }
# whatis(1) wants "name \- summary".
section == "NAME" && / — / { split($0, nm, / — /); print ".PP"; print inline(nm[1]) " \\- " inline(nm[2]); next }
/^### / { sub(/^### /, ""); print ".SS " esc($0); next }

# Tables: the header row and the rule are dropped; each row is a tagged paragraph.
/^\|/ {
    n = split($0, f, /\|/)
    if (f[2] ~ /^ *-+ *$/) next
    if (!intable) { intable = 1; next }     # the header row
    para = 0
    print ".TP"
    print line(cell(f[2]))
    rest = cell(f[3])
    for (i = 4; i < n; i++) rest = rest " | " cell(f[i])
    print line(rest)
    next
}
{ intable = 0 }

/^[*-] / { para = 0; bold = 0; sub(/^[*-] +/, ""); print ".IP \\(bu 2"; print inline($0); next }
/^$/ { para = 1; bold = 0; next }
{
    if (para) { print ".PP"; para = 0 }
    sub(/^ +/, "")
    print inline($0)
}
