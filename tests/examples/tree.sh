#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every example is run by the test command: each examples/NAME.c has its
# tests/examples/NAME.sh, and its first comment says what it shows and how to run it
# ("Usage:" or "Run:"). Usage: tree.sh SOURCE_DIR.
set -u
src=$(cd "${1:?source directory}" && pwd) || exit 1
fail=0
n=0
for c in "$src"/examples/*.c; do
    name=$(basename "$c" .c)
    n=$((n + 1))
    [ -f "$src/tests/examples/$name.sh" ] || { echo "examples: FAIL: examples/$name.c has no tests/examples/$name.sh" >&2; fail=1; }
    head -40 "$c" | grep -qE '(Usage|Run):' || { echo "examples: FAIL: examples/$name.c does not say how to run it (Usage: or Run: in its first comment)" >&2; fail=1; }
done
[ "$fail" -eq 0 ] && echo "examples: all $n examples have their test and say how to run them"
exit "$fail"
