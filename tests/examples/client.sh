#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# examples/client.c: the synchronous client against mcp-everything, over stdio (it starts
# the server) and over Streamable HTTP; it must list echo among the tools, print what
# echo sent back and the first resource's text, and close. A server that cannot be
# reached, or a program that does not exist, makes it say why and exit 1.
. "$(dirname "$0")/lib.sh"

# check WHAT OUTPUT: what a run against mcp-everything must have printed.
check() {
    expect "$1" "$2" "connected to mcp-everything"
    expect "$1" "$2" $'\ntool: echo\n'
    expect "$1" "$2" "echo: hello from examples_client"
    expect "$1" "$2" "resource test://static-text: This is the content of the static text resource."
    expect "$1" "$2" $'\nclosed'
}

out=$(timeout 60 "$BIN/examples_client" -- "$BIN/mcp-everything" --stdio 2>"$TMP/client.err") ||
    die "examples_client over stdio failed: $out"
check "over stdio" "$out"

start everything "$BIN/mcp-everything" --http 127.0.0.1:0
out=$(timeout 60 "$BIN/examples_client" "$URL" 2>"$TMP/client.err") ||
    die "examples_client over HTTP failed: $out"
check "over HTTP" "$out"

# Nothing listens on port 1: the connect fails, and the client says why.
out=$(timeout 60 "$BIN/examples_client" http://127.0.0.1:1/mcp 2>&1)
[ $? -eq 1 ] || die "an unreachable server: examples_client should exit 1, it said: $out"
expect "an unreachable server" "$out" "client: cannot connect: The server cannot be reached"
out=$(timeout 60 "$BIN/examples_client" -- "$TMP/no-such-server" 2>&1)
[ $? -eq 1 ] || die "a missing program: examples_client should exit 1, it said: $out"
expect "a missing program" "$out" "client: cannot connect:"
say "client listed, called echo and read a resource over stdio and HTTP, and reported an unreachable server"
