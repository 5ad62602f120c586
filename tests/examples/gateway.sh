#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# examples/gateway.c: mcp-everything --stdio offered over Streamable HTTP; the mcp client
# calls its echo tool through the gateway, a session stays open with a child of its own,
# and SIGTERM must end the gateway with status 0 and every child reaped.
. "$(dirname "$0")/lib.sh"

# No command after "--": a usage error.
out=$(timeout 60 "$BIN/examples_gateway" 127.0.0.1:0 2>&1)
[ $? -eq 2 ] || die "without a command the gateway should exit 2, it said: $out"
expect "usage error" "$out" "usage: examples_gateway [HOST:PORT] -- COMMAND"

start gateway "$BIN/examples_gateway" 127.0.0.1:0 -- "$BIN/mcp-everything" --stdio
[[ $URL =~ ^http://127\.0\.0\.1:([0-9]+)/mcp$ ]] || die "unexpected URL: $URL"
port=${BASH_REMATCH[1]}
[ "$port" -ne 0 ] || die "the gateway did not say its port: $URL"

out=$(timeout 60 "$BIN/mcp" "$URL" tools call echo text=hello-through-the-gateway 2>"$TMP/mcp.err") ||
    die "mcp tools call echo through the gateway failed: $out"
expect "tools call echo" "$out" "hello-through-the-gateway"

# A session of revision 2025-11-25 that is left open: the gateway starts a child for it,
# which the stop must end too.
code=$(timeout 60 curl -sS -o "$TMP/init.body" -D "$TMP/init.headers" -w '%{http_code}' \
    -H 'Accept: application/json, text/event-stream' -H 'Content-Type: application/json' \
    --data-binary '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"gateway-test","version":"1"}}}' \
    "$URL") || die "initialize through the gateway: curl failed"
[ "$code" = 200 ] || die "initialize through the gateway: HTTP $code: $(cat "$TMP/init.body")"
grep -qi '^mcp-session-id:' "$TMP/init.headers" || die "initialize: no Mcp-Session-Id header"
expect "initialize" "$(cat "$TMP/init.body")" '"serverInfo"'

# The gateway's children are mcp-everything processes.
mapfile -t children < <(pgrep -P "$PID")
[ "${#children[@]}" -ge 1 ] || die "the gateway has no child process"
for c in "${children[@]}"; do
    expect "child $c" "$(tr '\0' ' ' <"/proc/$c/cmdline" 2>/dev/null)" "mcp-everything --stdio"
done

# The same port cannot be served twice: the second gateway says why and exits 1.
out=$(timeout 60 "$BIN/examples_gateway" "127.0.0.1:$port" -- "$BIN/mcp-everything" --stdio 2>&1)
[ $? -eq 1 ] || die "a gateway on a port in use should exit 1, it said: $out"
expect "port in use" "$out" "gateway: cannot serve on 127.0.0.1:$port:"

# SIGTERM: the gateway drains, stops its children and exits 0, within 20 s.
stop "the gateway" "$PID"
for c in "${children[@]}"; do
    [ -e "/proc/$c" ] && die "child $c ($(tr '\0' ' ' <"/proc/$c/cmdline" 2>/dev/null)) outlived the gateway"
done
say "the gateway echoed through ${#children[@]} child(ren) of mcp-everything, and SIGTERM ended it with status 0 and no child left"
