#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# examples/protected_server.c in front of a real authorization server (oidc-provider, run by
# authserver.mjs): a request without a token gets 401 and a challenge naming the metadata
# document, which is served; a token issued for this server with mcp:tools gets in, and
# whoami names its client; a token for another resource (401) or without the scope (403)
# does not. Then the same server over HTTPS, with a throwaway certificate.
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
command -v node >/dev/null || die "node is not on PATH (the authorization server runs on it)"
[ -d "$HERE/../interop/node_modules/oidc-provider" ] ||
    die "tests/interop/node_modules has no oidc-provider: run scripts/deps (npm ci there)"
node_() {
    MCP_CLIENT_ID=$CLIENT_ID MCP_CLIENT_SECRET=$CLIENT_SECRET timeout 60 \
        node "$HERE/authserver.mjs" "$@" 2>>"$TMP/node.err"
}

# Resources with port 0 get a free port: this server's, over HTTP and over HTTPS.
start auth node "$HERE/authserver.mjs" serve http://127.0.0.1:0/mcp https://127.0.0.1:0/mcp \
    https://other.example/mcp
ISSUER=$URL
read -r _ CLIENT_ID CLIENT_SECRET < <(grep '^client ' "$TMP/auth.out")
mapfile -t RESOURCES < <(sed -n 's/^resource //p' "$TMP/auth.out")
[ "${#RESOURCES[@]}" -eq 3 ] || die "the authorization server did not name its 3 resources: $(cat "$TMP/auth.out")"
RESOURCE=${RESOURCES[0]} OTHER=${RESOURCES[2]}
hostport() { local u=${1#*://}; echo "${u%%/*}"; }

start server "$BIN/examples_protected_server" --issuer "$ISSUER" --resource "$RESOURCE" \
    --listen "$(hostport "$RESOURCE")"
[ "$URL" = "$RESOURCE" ] || die "the server listens on $URL, not on $RESOURCE"
SERVER=$PID

out=$(node_ http POST "$URL") || die "POST without a token: $out"
expect "no token" "$out" "status 401"
expect "no token" "$out" "www-authenticate: Bearer "
[[ $out =~ resource_metadata=\"([^\"]+)\" ]] || die "no resource_metadata in the challenge: $out"
metadata=${BASH_REMATCH[1]}
expect "the metadata URL" "$metadata" "$(hostport "$RESOURCE")/.well-known/oauth-protected-resource"
out=$(node_ http GET "$metadata") || die "GET $metadata: $out"
expect "metadata" "$out" "status 200"
expect "metadata" "$out" "\"resource\":\"$RESOURCE\""
expect "metadata" "$out" "\"authorization_servers\":[\"$ISSUER\"]"

token=$(node_ token "$ISSUER" "$RESOURCE" mcp:tools) || die "no token from $ISSUER"
out=$(timeout 60 "$BIN/mcp" --header "Authorization: Bearer $token" "$URL" tools call whoami \
    2>"$TMP/mcp.err") || die "whoami with a good token failed: $out"
[ "$out" = "$CLIENT_ID" ] || die "whoami should name the token's client, it said: $out"

token=$(node_ token "$ISSUER" "$OTHER" mcp:tools) || die "no token for $OTHER"
out=$(node_ http POST "$URL" "$token")
expect "a token for another resource" "$out" "status 401"
expect "a token for another resource" "$out" 'error="invalid_token"'
token=$(node_ token "$ISSUER" "$RESOURCE" other) || die "no token with the scope other"
out=$(node_ http POST "$URL" "$token")
expect "a token without mcp:tools" "$out" "status 403"
expect "a token without mcp:tools" "$out" 'error="insufficient_scope"'
stop server "$SERVER"
say "protected_server: 401 and its metadata without a token, whoami with one, the wrong ones refused"

# HTTPS: the endpoint speaks TLS itself with the files given.
RESOURCE=${RESOURCES[1]}
timeout 60 openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
    -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -keyout "$TMP/key.pem" \
    -out "$TMP/cert.pem" 2>"$TMP/openssl.err" || die "openssl could not make a certificate"
start tls "$BIN/examples_protected_server" --issuer "$ISSUER" --resource "$RESOURCE" \
    --listen "$(hostport "$RESOURCE")" --cert "$TMP/cert.pem" --key "$TMP/key.pem"
[ "$URL" = "$RESOURCE" ] || die "the server listens on $URL, not on $RESOURCE"
token=$(node_ token "$ISSUER" "$RESOURCE" mcp:tools) || die "no token for $RESOURCE"
out=$(timeout 60 "$BIN/mcp" --cacert "$TMP/cert.pem" --header "Authorization: Bearer $token" \
    "$URL" tools call whoami 2>"$TMP/mcp.err") || die "whoami over HTTPS failed: $out"
[ "$out" = "$CLIENT_ID" ] || die "whoami over HTTPS should name the client, it said: $out"
out=$(XDG_STATE_HOME=$TMP timeout 60 "$BIN/mcp" --cacert "$TMP/cert.pem" "$URL" tools call whoami 2>&1)
[ $? -eq 6 ] || die "without a token, mcp should exit 6 (authorization needed), it said: $out"
stop tls "$PID"
say "protected_server: the same over HTTPS ($URL)"
