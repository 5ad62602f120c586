#!/usr/bin/env bash
# The manual pages, as a reader meets them: each page the build made from doc/man/*.scd
# renders with groff -ww (every warning on) and with man -l without a single warning, and
# the options each program's --help lists are exactly the options its page defines (mcp's
# page: those of mcp --help and of mcp login --help). Says what differs.
#
# Usage: check.sh BUILD_DIR. Exit status 0 only if all of it holds.
set -u
build=$(cd "${1:?build directory}" && pwd) || exit 1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mcp-man.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() {
    echo "man: FAIL: $*" >&2
    fail=1
}

pages=("$build"/man/*.[0-9])
[ -f "${pages[0]}" ] || { echo "man: FAIL: no page in $build/man" >&2; exit 1; }
for want in mcp.1 mcp-gateway.1 mcp-everything.1 libmcp.3; do
    [ -f "$build/man/$want" ] || bad "$want was not built"
done

for page in "${pages[@]}"; do
    name=$(basename "$page")
    groff -ww -man -z "$page" 2>"$tmp/groff.err"
    [ -s "$tmp/groff.err" ] && bad "groff -ww warns of $name: $(head -5 "$tmp/groff.err")"
    LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" >"$tmp/man.out" 2>"$tmp/man.err" ||
        bad "man -l $name failed: $(head -5 "$tmp/man.err")"
    [ -s "$tmp/man.err" ] && bad "man -l warns of $name: $(head -5 "$tmp/man.err")"
    grep -q "NAME" "$tmp/man.out" || bad "man -l $name rendered no NAME section"
done

# The option names of a definition line: the words that begin with a dash before the
# description (which --help puts two spaces after the option, and a page on lines of
# their own).
help_options() {
    grep -E '^ {1,8}-' | sed -E 's/^ +//; s/ {2,}.*//' | grep -oE '(^|[ ,])--?[A-Za-z][-A-Za-z0-9]*' |
        sed -E 's/^[ ,]//' | sort -u
}
# A rendered page puts each definition at the indent of 7 columns.
page_options() {
    LC_ALL=C.UTF-8 groff -man -Tutf8 -P-cbou "$1" 2>/dev/null | grep -E '^ {7}-' | help_options
}

for prog in mcp mcp-gateway mcp-everything; do
    [ -f "$build/man/$prog.1" ] || continue
    "$build/bin/$prog" --help >"$tmp/help" 2>&1 || bad "$prog --help failed"
    [ "$prog" = mcp ] && { "$build/bin/mcp" login --help >>"$tmp/help" 2>&1 || bad "mcp login --help failed"; }
    help_options <"$tmp/help" >"$tmp/help.opts"
    page_options "$build/man/$prog.1" >"$tmp/page.opts"
    n=$(wc -l <"$tmp/help.opts")
    [ "$n" -ge 5 ] || bad "$prog --help gave only $n options: the test reads it wrong"
    if diff -u "$tmp/help.opts" "$tmp/page.opts" >"$tmp/diff"; then
        echo "man: $prog: the page defines the $n options of --help"
    else
        bad "$prog: --help and $prog(1) list different options (- only in --help, + only in the page):"
        grep -E '^[-+]-' "$tmp/diff" | grep -vE '^(---|\+\+\+) ' >&2
    fi
done
[ "$fail" -eq 0 ] && echo "man: ${#pages[@]} pages render without a warning"
exit "$fail"
