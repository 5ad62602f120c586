#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# examples/embed.c: the host's loop serves HTTP and its client asks its own server; the
# program must get the answer and close its loop with nothing of libmcp left on it.
. "$(dirname "$0")/lib.sh"
out=$(timeout 60 "$BIN/examples_embed" 2>"$TMP/embed.err") || die "examples_embed failed: $out"
expect "embed" "$out" "the server answered: the host's timer ticked"
expect "embed" "$out" "uv_loop_close: 0"
say "embed ran on the host's loop and left it empty"
