#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# examples/ask.c: one tool handler asks the client (elicitation, then sampling) in both
# eras: as an InputRequiredResult the client retries (2026-07-28, three rounds) and as
# requests on the session's stream (2025-11-25). Both results must carry the client's
# canned answers, and the loop must close with nothing of libmcp left on it.
. "$(dirname "$0")/lib.sh"
out=$(timeout 60 "$BIN/examples_ask" 2>"$TMP/ask.err") || die "examples_ask failed: $out"
expect "modern era" "$out" \
    '2026-07-28: Ada, the model says: "Welcome aboard!" (protocol 2026-07-28, round 3)'
expect "legacy era" "$out" \
    '2025-11-25: Ada, the model says: "Welcome aboard!" (protocol 2025-11-25, round 1)'
expect "elicitation handler" "$out" 'the server asks "What is your name?"'
expect "sampling handler" "$out" 'the model is asked "Greet Ada in one short sentence."'
expect "loop" "$out" "uv_loop_close: 0"
refuses_arguments ask
say "ask: the handler's questions were answered in both eras, and the loop closed empty"
