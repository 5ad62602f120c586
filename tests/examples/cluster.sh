#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# examples/cluster.c: two nodes sharing a real redis-server. A session initialized on node A
# is served by node B (its tool names node B, and the client A saw), then by A again; the
# session ended on B is gone on A too; both nodes stop cleanly on SIGTERM; a node that
# cannot reach Redis does not start.
. "$(dirname "$0")/lib.sh"

if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
    die "redis-server and redis-cli are needed (Debian package redis-server; scripts/deps installs it)"
fi

# start_redis: starts redis-server on a free loopback port, nothing saved, dying with the
# test, and waits (30 s at most) until it accepts connections; sets REDIS_PORT.
start_redis() {
    local attempts port fd line ready deadline=$((SECONDS + 30))
    for ((attempts = 0; attempts < 5; attempts++)); do
        # A port nobody answers on; should another take it first, redis-server exits
        # and the next attempt takes another.
        port=$((20000 + RANDOM % 40000))
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && continue
        rm -f "$TMP/redis.fifo"
        mkfifo "$TMP/redis.fifo" || die "mkfifo"
        "${PDEATH[@]}" redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
            --daemonize no --logfile '' >"$TMP/redis.fifo" 2>&1 </dev/null &
        STARTED+=("$!")
        exec {fd}<"$TMP/redis.fifo"
        ready=
        while [ -z "$ready" ]; do
            [ $((deadline - SECONDS)) -gt 0 ] || die "redis-server did not start within 30 s"
            IFS= read -r -t $((deadline - SECONDS)) line <&"$fd" || break
            printf '%s\n' "$line" >>"$TMP/redis.err"
            [[ $line == *"Ready to accept connections"* ]] && ready=1
        done
        if [ -n "$ready" ]; then
            cat <&"$fd" >>"$TMP/redis.err" &
            STARTED+=("$!")
            exec {fd}<&-
            [ "$(timeout 10 redis-cli -p "$port" ping)" = PONG ] || die "redis-server on $port does not answer PING"
            REDIS_PORT=$port
            return 0
        fi
        exec {fd}<&-
    done
    die "redis-server could not start (5 attempts)"
}

# post NAME URL BODY [SESSION]: POSTs BODY as a Streamable HTTP client does (with the session
# and the protocol version after initialize); the response in $TMP/NAME.body and
# $TMP/NAME.headers, the status in CODE.
post() {
    local name=$1 url=$2 body=$3 session=${4:-}
    local h=(-H 'Accept: application/json, text/event-stream' -H 'Content-Type: application/json')
    [ -n "$session" ] && h+=(-H "Mcp-Session-Id: $session" -H 'MCP-Protocol-Version: 2025-11-25')
    CODE=$(curl -sS --max-time 30 -o "$TMP/$name.body" -D "$TMP/$name.headers" -w '%{http_code}' \
        "${h[@]}" --data-binary "$body" "$url") || die "$name: curl failed"
}

start_redis
REDIS=redis://127.0.0.1:$REDIS_PORT
start node-a "$BIN/examples_cluster" 127.0.0.1:0 "$REDIS"
A=$URL A_PID=$PID
start node-b "$BIN/examples_cluster" 127.0.0.1:0 "$REDIS"
B=$URL B_PID=$PID
[ "$A" != "$B" ] || die "both nodes listen on $A"

# initialize on node A.
post init "$A" '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"cluster-test","version":"1.0"}}}'
[ "$CODE" = 200 ] || die "initialize on node A: HTTP $CODE: $(cat "$TMP/init.body")"
expect "initialize on node A" "$(cat "$TMP/init.body")" '"protocolVersion":"2025-11-25"'
sid=$(sed -n 's/^[Mm][Cc][Pp]-[Ss]ession-[Ii][Dd]: *\([^[:space:]]*\).*/\1/p' "$TMP/init.headers")
[ -n "$sid" ] || die "initialize on node A: no Mcp-Session-Id in: $(cat "$TMP/init.headers")"

# The rest of the session on node B.
post initialized "$B" '{"jsonrpc":"2.0","method":"notifications/initialized"}' "$sid"
[ "$CODE" = 202 ] || die "notifications/initialized on node B: HTTP $CODE: $(cat "$TMP/initialized.body")"
post call-b "$B" '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"node","arguments":{}}}' "$sid"
[ "$CODE" = 200 ] || die "tools/call on node B: HTTP $CODE: $(cat "$TMP/call-b.body")"
expect "tools/call on node B" "$(cat "$TMP/call-b.body")" "node $B answered session $sid of client cluster-test"
expect "tools/call on node B" "$(cat "$TMP/call-b.body")" '"id":2'

# And back on node A.
post call-a "$A" '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"node","arguments":{}}}' "$sid"
[ "$CODE" = 200 ] || die "tools/call on node A: HTTP $CODE: $(cat "$TMP/call-a.body")"
expect "tools/call on node A" "$(cat "$TMP/call-a.body")" "node $A answered session $sid of client cluster-test"

# Ended on node B, the session is gone on node A too.
code=$(curl -sS --max-time 30 -o "$TMP/delete.body" -w '%{http_code}' -X DELETE \
    -H "Mcp-Session-Id: $sid" -H 'MCP-Protocol-Version: 2025-11-25' "$B") || die "DELETE on node B: curl failed"
[ "$code" = 200 ] || [ "$code" = 204 ] || die "DELETE on node B: HTTP $code: $(cat "$TMP/delete.body")"
post gone "$A" '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"node","arguments":{}}}' "$sid"
[ "$CODE" = 404 ] || die "the session ended on node B, on node A: expected HTTP 404, got $CODE: $(cat "$TMP/gone.body")"

# A session no node made is unknown to both.
post unknown "$B" '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"node","arguments":{}}}' 0123456789abcdef0123456789abcdef
[ "$CODE" = 404 ] || die "a made-up session on node B: expected HTTP 404, got $CODE: $(cat "$TMP/unknown.body")"

stop "node A" "$A_PID"
stop "node B" "$B_PID"

# A node that cannot reach its Redis does not start: it says why and exits 1.
out=$(timeout 60 "$BIN/examples_cluster" 127.0.0.1:0 redis://127.0.0.1:1 2>&1)
[ $? -eq 1 ] || die "a node without Redis should exit 1, it said: $out"
expect "a node without Redis" "$out" "cluster: cannot serve on 127.0.0.1:0 with redis://127.0.0.1:1:"
say "node B ($B) served the session node A ($A) began, A served it again, its end on B ended it on A, and both nodes stopped on SIGTERM"
