#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# examples/task.c: a tool that runs as a task. The program calls its own tool as a task and
# prints the task's id, then the sum; a sum the tool's schema refuses fails. Served alone
# (--serve), mcp calls it with --task and gets the sum, is refused without --task (-32021),
# and a task cancelled with `mcp tasks cancel` ends "cancelled", its handler stopping at a
# step; then SIGTERM stops the server cleanly.
. "$(dirname "$0")/lib.sh"

out=$(timeout 60 "$BIN/examples_task" 2>"$TMP/self.err") || die "examples_task failed: $out"
[[ $out =~ task\ created:\ ([0-9a-f-]{36})$'\n'result:\ the\ sum\ of\ 1\ to\ 10\ is\ 55 ]] ||
    die "examples_task: expected the task's id, then the sum 55, in: $out"
out=$(timeout 60 "$BIN/examples_task" 4 2>"$TMP/self.err") || die "examples_task 4 failed: $out"
expect "examples_task 4" "$out" "result: the sum of 1 to 4 is 10"
out=$(timeout 60 "$BIN/examples_task" 0 2>&1)
[ $? -eq 1 ] || die "examples_task 0: should exit 1 (n must be at least 1), it said: $out"
expect "examples_task 0" "$out" "must be at least 1"
say "examples_task followed its own task to the sum, and failed on a sum the schema refuses"

start task "$BIN/examples_task" --serve 127.0.0.1:0
server_err=${STARTED[-1]} # what copies its stderr to $TMP/task.err
out=$(timeout 60 "$BIN/mcp" "$URL" tools call --task slow_sum n=8 2>"$TMP/call.err") ||
    die "mcp tools call --task slow_sum failed: $out $(cat "$TMP/call.err")"
expect "tools call --task" "$out" "the sum of 1 to 8 is 36"
expect "tools call --task (stderr)" "$(cat "$TMP/call.err")" "mcp: the server runs the call as task "
out=$(timeout 60 "$BIN/mcp" "$URL" tools call slow_sum n=3 2>&1)
[ $? -eq 1 ] || die "a call without --task: mcp should exit 1 (a JSON-RPC error), it said: $out"
expect "a call without --task" "$out" "-32021"
say "mcp ran slow_sum as a task, and was refused without --task"

# A long task, cancelled from another mcp once its id is known.
mkfifo "$TMP/long.fifo" || die "mkfifo"
"${PDEATH[@]}" timeout 60 "$BIN/mcp" "$URL" tools call --task slow_sum n=1000 \
    >"$TMP/long.out" 2>"$TMP/long.fifo" &
long=$!
STARTED+=("$long")
exec {fd}<"$TMP/long.fifo"
id=
while [ -z "$id" ]; do
    IFS= read -r -t 30 line <&"$fd" || die "mcp tools call --task slow_sum n=1000 told no task id"
    [[ $line =~ as\ task\ ([0-9a-f-]{36}) ]] && id=${BASH_REMATCH[1]}
done
cat <&"$fd" >"$TMP/long.err" &
drain=$!
exec {fd}<&-
out=$(timeout 60 "$BIN/mcp" "$URL" tasks cancel "$id" 2>&1) || die "mcp tasks cancel failed: $out"
wait "$long"
rc=$?
wait "$drain"
[ "$rc" -eq 3 ] || die "the cancelled call: mcp should exit 3, it exited $rc"
expect "the cancelled call" "$(cat "$TMP/long.err")" "the task was cancelled"
out=$(timeout 60 "$BIN/mcp" "$URL" tasks get "$id" 2>&1) || die "mcp tasks get failed: $out"
expect "tasks get" "$out" "task $id: cancelled"

stop "examples_task --serve" "$PID"
timeout 20 tail --pid="$server_err" -s 0.1 -f /dev/null || die "its stderr did not end"
wait "$server_err" # its stderr, to the end
expect "the server's stderr" "$(cat "$TMP/task.err")" "slow_sum: task $id cancelled at step "
say "a cancelled task stopped at a step, and the server stopped on SIGTERM"
