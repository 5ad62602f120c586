#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# examples/echo_server.c: the README's server, over stdio, asked by the mcp client.
. "$(dirname "$0")/lib.sh"
out=$(timeout 60 "$BIN/mcp" -- "$BIN/examples_echo_server" tools call echo text=hello-example 2>"$TMP/mcp.err") ||
    die "mcp tools call echo failed: $out"
expect "tools call echo" "$out" "hello-example"
out=$(timeout 60 "$BIN/mcp" -- "$BIN/examples_echo_server" tools call echo text:=42 2>&1)
[ $? -eq 1 ] || die "a text that is not a string: mcp should exit 1 (a tool error), it said: $out"
expect "a tool error" "$out" "must be a string"
grep -E "Sanitizer|runtime error" "$TMP/mcp.err" && die "a sanitizer report from echo_server"
say "echo_server answered, and refused a text that is not a string"
