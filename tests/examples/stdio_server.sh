#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# examples/stdio_server.c: the notes server over stdio, driven by the mcp client: its
# tools, its fixed resource and its template, its prompt, completion, and the errors of a
# note it does not have and of a URI nothing serves.
. "$(dirname "$0")/lib.sh"
SRV=("$BIN/examples_stdio_server")

# The server's stderr is mcp's: a sanitizer's report (sanitizer build) would be there.
clean() {
    case "$2" in
    *Sanitizer* | *"runtime error"*) die "$1: a sanitizer reported: $2" ;;
    esac
}
# mcp_ok WHAT ARGS...: runs mcp with the server and ARGS; it must exit 0. Sets out.
mcp_ok() {
    local what=$1
    shift
    out=$(timeout 60 "$BIN/mcp" "$@" 2>"$TMP/mcp.err") || die "$what: mcp exited $?: $out"
    clean "$what" "$(cat "$TMP/mcp.err")"
}
# mcp_fails WHAT ARGS...: mcp must exit 1 (a tool error or a JSON-RPC error). Sets out
# to what it printed, stdout and stderr.
mcp_fails() {
    local what=$1
    shift
    out=$(timeout 60 "$BIN/mcp" "$@" 2>&1)
    local rc=$?
    [ $rc -eq 1 ] || die "$what: mcp should exit 1, it exited $rc: $out"
    clean "$what" "$out"
}

mcp_ok "tools list" -- "${SRV[@]}" tools list
expect "tools list" "$out" "add (Add two numbers)"
expect "tools list" "$out" "a: number (required)"
expect "tools list" "$out" "count"

mcp_ok "tools call add" --json -- "${SRV[@]}" tools call add a=2 b=40
expect "tools call add" "$out" '"sum": 42'
expect "tools call add" "$out" '"text": "{\"sum\":42}"'
mcp_fails "add with b=two" -- "${SRV[@]}" tools call add a=2 b=two
expect "add with b=two" "$out" "/b: expected a number"

# Progress and log messages arrive on stderr while the tool works.
mcp_ok "tools call count" --log-level info -- "${SRV[@]}" tools call count to=3
expect "tools call count" "$out" "counted to 3"
err=$(cat "$TMP/mcp.err")
expect "count's progress" "$err" "progress 2/3 (67%) counted 2 of 3"
expect "count's log" "$err" "[info] counted 3 of 3"

mcp_ok "resources read notes://index" -- "${SRV[@]}" resources read notes://index
expect "the index" "$out" $'groceries\nideas\ntodo'
mcp_ok "resources templates" -- "${SRV[@]}" resources templates
expect "resources templates" "$out" "notes://{name}"
mcp_ok "resources read notes://todo" -- "${SRV[@]}" resources read notes://todo
expect "the template's note" "$out" "Write the examples, then run each one as a test."
mcp_ok "resources read notes://groceries" -- "${SRV[@]}" resources read notes://groceries
expect "the template's note" "$out" "a bag of coffee beans"

mcp_ok "prompts get summarize" -- "${SRV[@]}" prompts get summarize name=ideas
expect "prompts get" "$out" "[user]"
expect "prompts get" "$out" "Summarize my note 'ideas' in one sentence:"
expect "prompts get" "$out" "A bicycle bell"

mcp_ok "complete prompt" -- "${SRV[@]}" complete prompt summarize name gr
[ "$out" = groceries ] || die "complete prompt summarize name gr: expected groceries, got: $out"
mcp_ok "complete resource" -- "${SRV[@]}" complete resource 'notes://{name}' name t
[ "$out" = todo ] || die "complete resource notes://{name} name t: expected todo, got: $out"

# Errors: JSON-RPC errors make mcp exit 1 and print them. Resource not found is -32002
# until revision 2025-11-25 (initialize: --protocol legacy) and -32602 in 2026-07-28.
mcp_fails "a note the server does not have" -- "${SRV[@]}" resources read notes://nope
expect "a missing note" "$out" "error: -32602 no note at notes://nope"
mcp_fails "a missing note" --protocol legacy -- "${SRV[@]}" resources read notes://nope
expect "a missing note (legacy)" "$out" "error: -32002 no note at notes://nope"
mcp_fails "a URI nothing serves" -- "${SRV[@]}" resources read unknown://x
expect "an unknown URI" "$out" "error: -32602 Resource not found: unknown://x"
mcp_fails "a URI nothing serves" --protocol legacy -- "${SRV[@]}" resources read unknown://x
expect "an unknown URI" "$out" "error: -32002 Resource not found: unknown://x"
mcp_fails "prompts get without its argument" -- "${SRV[@]}" prompts get summarize
expect "a missing argument" "$out" 'missing required argument "name"'
say "stdio_server answered tools, resources, its template, its prompt and completion, and refused what it does not have"
