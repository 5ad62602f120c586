#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# examples/login_client.c signs in to examples/protected_server.c, whose tokens come from a
# real authorization server (oidc-provider, run by authserver.mjs), with no person: first as
# the client itself (client credentials), then again with nothing but the token it kept (no
# new grant), then as a user through the browser step, the test playing the browser. A wrong
# secret fails, saying why.
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
command -v node >/dev/null || die "node is not on PATH (the authorization server runs on it)"
[ -d "$HERE/../interop/node_modules/oidc-provider" ] ||
    die "tests/interop/node_modules has no oidc-provider: run scripts/deps (npm ci there)"

start auth node "$HERE/authserver.mjs" serve http://127.0.0.1:0/mcp
ISSUER=$URL
read -r _ CLIENT_ID CLIENT_SECRET < <(grep '^client ' "$TMP/auth.out")
RESOURCE=$(sed -n 's/^resource //p' "$TMP/auth.out")
hostport=${RESOURCE#http://}
start server "$BIN/examples_protected_server" --issuer "$ISSUER" --resource "$RESOURCE" \
    --listen "${hostport%%/*}"
[ "$URL" = "$RESOURCE" ] || die "the server listens on $URL, not on $RESOURCE"
# grants TYPE: how many tokens the authorization server issued by that grant.
grants() { grep -c "^grant $1\$" "$TMP/auth.out"; }
# client STATE ARGS...: examples_login_client keeping its tokens under STATE.
client() { XDG_STATE_HOME=$1 timeout 60 "$BIN/examples_login_client" "${@:2}"; }

out=$(MCP_CLIENT_SECRET=$CLIENT_SECRET client "$TMP/state" --client-id "$CLIENT_ID" "$URL" whoami \
    2>"$TMP/client.err") || die "login_client --client-id failed: $out"
expect "tools/list" "$out" "tool: whoami"
expect "whoami" "$out" "whoami: $CLIENT_ID"
[ "$(grants client_credentials)" -eq 1 ] || die "expected one client credentials grant: $(cat "$TMP/auth.out")"
ls "$TMP"/state/mcp/oauth/*.json >/dev/null 2>&1 || die "no token kept in $TMP/state/mcp/oauth"

out=$(client "$TMP/state" "$URL" whoami 2>"$TMP/client.err") || die "login_client again failed: $out"
expect "whoami with the kept token" "$out" "whoami: $CLIENT_ID"
[ "$(grep -c '^grant ' "$TMP/auth.out")" -eq 1 ] || die "the second run signed in again: $(cat "$TMP/auth.out")"
say "login_client signed in as the client, and the next run used the token it kept"

out=$(client "$TMP/state" "$URL" no-such-tool 2>&1)
[ $? -eq 1 ] || die "a tool the server lacks: login_client should exit 1, it said: $out"
expect "a tool the server lacks" "$out" "login_client: "
expect "a tool the server lacks" "$out" "Unknown tool: no-such-tool"

out=$(MCP_CLIENT_SECRET=wrong-secret client "$TMP/state2" --client-id "$CLIENT_ID" "$URL" 2>&1)
[ $? -eq 1 ] || die "a wrong secret: login_client should exit 1, it said: $out"
expect "a wrong secret" "$out" "login_client: Authorization failed"
expect "a wrong secret" "$out" "invalid_client"
say "login_client refused a wrong secret: ${out#login_client: }"

# The browser step: login_client prints the URL to open, the test opens it as the user's
# browser would (the authorization server's user approves), and the answer goes back to
# login_client's listener on 127.0.0.1.
mkfifo "$TMP/browser.fifo" || die "mkfifo"
XDG_STATE_HOME=$TMP/state3 "${PDEATH[@]}" timeout 60 "$BIN/examples_login_client" "$URL" whoami \
    >"$TMP/browser.out" 2>"$TMP/browser.fifo" </dev/null &
pid=$!
STARTED+=("$pid")
exec {fd}<"$TMP/browser.fifo"
authorize=
while [ -z "$authorize" ] && IFS= read -r -t 30 line <&"$fd"; do
    printf '%s\n' "$line" >>"$TMP/browser.err"
    [[ $line =~ ^\ +(http://[^ ]+/auth\?.*)$ ]] && authorize=${BASH_REMATCH[1]}
done
[ -n "$authorize" ] || die "login_client printed no authorization URL within 30 s"
cat <&"$fd" >>"$TMP/browser.err" &
STARTED+=("$!")
exec {fd}<&-
timeout 60 node "$HERE/authserver.mjs" browse "$authorize" >"$TMP/browse.out" 2>"$TMP/browse.err" ||
    die "the browser step failed: $(cat "$TMP/browse.out")"
wait "$pid" || die "login_client after the browser step failed: $(cat "$TMP/browser.out")"
out=$(cat "$TMP/browser.out")
expect "whoami after the browser step" "$out" "whoami: user"
[ "$(grants authorization_code)" -eq 1 ] || die "expected one authorization code grant: $(cat "$TMP/auth.out")"
say "login_client signed the user in through the browser step: $(grep '^whoami' <<<"$out")"
