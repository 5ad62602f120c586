#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# examples/resume.c: the server closes a call's SSE stream after the third of six progress
# notifications (SEP-1699); the client resumes it with GET and Last-Event-ID and must get
# all six, in order and once each, then the result, with the loop left empty.
. "$(dirname "$0")/lib.sh"
out=$(timeout 60 "$BIN/examples_resume" 2>"$TMP/resume.err") || die "examples_resume failed: $out"
progress=$(grep '^progress ' <<<"$out" | tr '\n' ' ')
want=$(for i in 1 2 3 4 5 6; do printf 'progress %d/6: step %d ' "$i" "$i"; done)
[ "$progress" = "$want" ] || die "the progress notifications, once each in order: $progress"
expect "the stream closed" "$out" "the stream closed after progress 3; resuming in 100 ms (attempt 1)"
# The resumption comes between the third notification and the fourth, and the result last.
at() { grep -n -m1 -F "$1" <<<"$out" | cut -d: -f1; }
[ "$(at 'progress 3/6')" -lt "$(at 'resuming:')" ] && [ "$(at 'resuming:')" -lt "$(at 'progress 4/6')" ] &&
    [ "$(at 'progress 6/6')" -lt "$(at 'result:')" ] || die "out of order: $out"
expect "result" "$out" "result: all six steps done"
[[ $out =~ the\ endpoint\ took\ [1-9][0-9]*\ resume ]] || die "the endpoint took no resume: $out"
expect "summary" "$out" "notifications: 6 of 6, in order, none twice; resumed "
expect "loop" "$out" "uv_loop_close: 0"
refuses_arguments resume
say "resume: six notifications and the result came through a resumed stream, once each"
