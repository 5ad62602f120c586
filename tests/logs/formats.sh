#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --log-format, as a log collector reads it: with json, every line that mcp-everything,
# mcp-gateway (event lines included) and mcp (the server's log messages) write on stderr
# is one JSON object with ts, level and source or event; with logfmt, every line is pairs
# key=value with ts and level first; text stays as it was; a format that does not exist is
# a usage error (status 2). Usage: formats.sh BIN_DIR.
. "$(dirname "$0")/../examples/lib.sh"

# check FORMAT FILE WHAT: every line of FILE in FORMAT; prints how many.
check() {
    python3 - "$1" "$2" <<'PY' || die "$3: lines not in $1 format (above)"
import json, re, sys
fmt, path = sys.argv[1], sys.argv[2]
pair = r'[A-Za-z_][A-Za-z0-9_.]*=(?:"(?:[^"\\]|\\.)*"|[^ "=]*)'
n = 0
for line in open(path, encoding='utf-8'):
    line = line.rstrip('\n')
    n += 1
    if fmt == 'json':
        try:
            o = json.loads(line)
        except ValueError as e:
            sys.exit('not JSON (%s): %s' % (e, line))
        if not isinstance(o, dict) or not all(isinstance(v, str) for v in o.values()):
            sys.exit('not an object of strings: ' + line)
        if list(o)[:2] != ['ts', 'level'] or not re.fullmatch(r'\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z', o['ts']):
            sys.exit('no ts and level first: ' + line)
        if 'source' not in o and 'event' not in o:
            sys.exit('neither source nor event: ' + line)
    else:
        if not re.fullmatch(r'ts=\S+ level=[a-z]+(?: %s)*' % pair, line):
            sys.exit('not logfmt with ts and level first: ' + line)
if n == 0:
    sys.exit('no line at all')
print(n)
PY
}

for f in json logfmt; do
    start "everything-$f" "$BIN/mcp-everything" --http 127.0.0.1:0 --log-format "$f"
    stop "mcp-everything --log-format $f" "$PID"
    n=$(check "$f" "$TMP/everything-$f.err" "mcp-everything --log-format $f")
    grep -q 'draining' "$TMP/everything-$f.err" || die "mcp-everything $f: the library's drain warning is missing"
    say "mcp-everything --log-format $f: $n lines, the library's among them"

    start "gateway-$f" "$BIN/mcp-gateway" --http 127.0.0.1:0 --log-format "$f" -- "$BIN/mcp-everything" --stdio
    timeout 60 "$BIN/mcp" "$URL" tools call echo text='a "quoted" text' >/dev/null 2>>"$TMP/mcp.err" || die "mcp through the gateway"
    stop "mcp-gateway --log-format $f" "$PID"
    # The children's lines (their own format: text) are theirs; the gateway's are checked.
    grep -v '^libmcp: ' "$TMP/gateway-$f.err" >"$TMP/gateway-$f.own"
    n=$(check "$f" "$TMP/gateway-$f.own" "mcp-gateway --log-format $f")
    grep -q 'request' "$TMP/gateway-$f.own" || die "mcp-gateway $f: no request event line"
    say "mcp-gateway --log-format $f: $n lines, request events among them"

    timeout 60 "$BIN/mcp" --log-format "$f" --log-level debug -- "$BIN/mcp-everything" --stdio \
        tools call log_all_levels >/dev/null 2>"$TMP/mcp-$f.err" || die "mcp --log-format $f"
    n=$(check "$f" "$TMP/mcp-$f.err" "mcp --log-format $f")
    grep -q 'emergency' "$TMP/mcp-$f.err" || die "mcp $f: the server's emergency message is missing"
    say "mcp --log-format $f: $n lines of the server's log messages"
done

timeout 60 "$BIN/mcp" --log-level debug -- "$BIN/mcp-everything" --stdio tools call log_all_levels \
    >/dev/null 2>"$TMP/mcp-text.err" || die "mcp with text"
grep -qx '\[emergency\] .*' "$TMP/mcp-text.err" || die "text is not as it was: $(head -3 "$TMP/mcp-text.err")"
for p in mcp-everything mcp-gateway; do
    out=$(timeout 30 "$BIN/$p" --log-format xml 2>&1)
    [ $? -eq 2 ] || die "$p --log-format xml should be a usage error (2): $out"
done
out=$(timeout 30 "$BIN/mcp" --log-format xml info 2>&1)
[ $? -eq 2 ] || die "mcp --log-format xml should be a usage error (2): $out"
say "text is as it was, and an unknown format is a usage error"
