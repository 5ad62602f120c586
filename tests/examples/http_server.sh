#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# examples/http_server.c: the server over Streamable HTTP on a port of the system's
# choosing. The mcp client calls its tools and reads its resource in both eras (a session
# in the legacy one); a stream that curl leaves is resumed with Last-Event-ID and replays
# the answer; a foreign Origin and a foreign Host get 403; a second server on the same port
# fails; SIGTERM stops the first, which exits 0.
. "$(dirname "$0")/lib.sh"
start http_server "$BIN/examples_http_server" 127.0.0.1:0
[[ $URL =~ ^http://127\.0\.0\.1:[0-9]+/mcp$ ]] || die "unexpected URL: $URL"

out=$(timeout 60 "$BIN/mcp" "$URL" tools call add a=2 b=40 2>"$TMP/mcp.err") ||
    die "mcp tools call add failed: $out"
[ "$out" = 42 ] || die "tools call add a=2 b=40: expected 42, got: $out"
out=$(timeout 60 "$BIN/mcp" "$URL" resources read info://server 2>"$TMP/mcp.err") ||
    die "mcp resources read failed: $out"
expect "resources read (2026-07-28)" "$out" "protocol 2026-07-28"
expect "resources read" "$out" "libmcp "

# The legacy era opens a session: the tool sees its id.
out=$(timeout 60 "$BIN/mcp" --protocol legacy "$URL" tools call greet name=Ada 2>"$TMP/mcp.err") ||
    die "mcp --protocol legacy tools call greet failed: $out"
[[ $out =~ ^Hello,\ Ada!\ \(session\ [0-9a-f]{16,}\)$ ]] || die "greet in a session: got: $out"
out=$(timeout 60 "$BIN/mcp" --protocol legacy "$URL" resources read info://server 2>"$TMP/mcp.err") ||
    die "mcp --protocol legacy resources read failed: $out"
expect "resources read (legacy)" "$out" "protocol 2025-11-25"
out=$(timeout 60 "$BIN/mcp" "$URL" tools call greet name= 2>&1)
[ $? -eq 1 ] || die "greet with an empty name: mcp should exit 1 (a tool error), it said: $out"
expect "greet with an empty name" "$out" "/name"

# Resumability, by hand: a session, a tools/call whose SSE events carry ids, then a GET
# with the id of the stream's first (priming) event replays the answer from the store.
H=(-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream')
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",
"capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}'
timeout 60 curl -sS -D "$TMP/init.headers" -o /dev/null -X POST "${H[@]}" -d "$init" "$URL" ||
    die "curl initialize failed"
sid=$(tr -d '\r' <"$TMP/init.headers" | sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: //p')
[ -n "$sid" ] || die "initialize gave no Mcp-Session-Id: $(cat "$TMP/init.headers")"
S=(-H "Mcp-Session-Id: $sid" -H 'MCP-Protocol-Version: 2025-11-25')
code=$(timeout 60 curl -sS -o /dev/null -w '%{http_code}' -X POST "${H[@]}" "${S[@]}" \
    -d '{"jsonrpc":"2.0","method":"notifications/initialized"}' "$URL")
[ "$code" = 202 ] || die "notifications/initialized: expected 202, got $code"
call='{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Bob"}}}'
sse=$(timeout 60 curl -sS -X POST "${H[@]}" "${S[@]}" -d "$call" "$URL") || die "curl tools/call failed"
expect "tools/call over SSE" "$sse" "Hello, Bob! (session $sid)"
first=$(tr -d '\r' <<<"$sse" | sed -n 's/^id: //p' | head -1)
[ -n "$first" ] || die "the SSE stream had no event id: $sse"
replay=$(timeout 60 curl -sS -N -H 'Accept: text/event-stream' "${S[@]}" -H "Last-Event-ID: $first" \
    "$URL") || die "curl GET with Last-Event-ID failed: $replay"
expect "the resumed stream" "$replay" "Hello, Bob! (session $sid)"

# The default DNS-rebinding checks: a foreign Origin or Host is refused.
code=$(timeout 60 curl -s -o /dev/null -w '%{http_code}' -X POST "${H[@]}" \
    -H 'Origin: https://evil.example' -d "$init" "$URL")
[ "$code" = 403 ] || die "a foreign Origin: expected 403, got $code"
code=$(timeout 60 curl -s -o /dev/null -w '%{http_code}' -X POST "${H[@]}" \
    -H 'Host: evil.example' -d "$init" "$URL")
[ "$code" = 403 ] || die "a foreign Host: expected 403, got $code"
code=$(timeout 60 curl -s -o /dev/null -w '%{http_code}' -X POST "${H[@]}" \
    -H 'Origin: http://localhost:3000' -d "$init" "$URL")
[ "$code" = 200 ] || die "a loopback Origin: expected 200, got $code"

# A second server cannot listen on the same port: it says so and exits 1.
port=${URL#http://127.0.0.1:}
port=${port%/mcp}
out=$(timeout 60 "$BIN/examples_http_server" "127.0.0.1:$port" 2>&1 </dev/null)
[ $? -eq 1 ] || die "a second server on port $port should exit 1: $out"
expect "a port in use" "$out" "http_server: serving 127.0.0.1:$port failed"

# SIGTERM drains and stops it; it must exit 0 (no leak either, in the sanitizer build).
stop "the server" "$PID"
say "http_server served both eras, resumed a stream, refused a foreign Origin and Host, and stopped on SIGTERM"
