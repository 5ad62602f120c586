# SPDX-License-Identifier: MIT
# Sourced by tests/examples/NAME.sh, the test example_NAME: runs examples/NAME.c as its
# header comment says and checks what it does. $1 is the build's bin directory (BIN).
# Every process started with `start` dies with the test (setpriv --pdeathsig, and the
# EXIT trap), and every wait has a deadline.
set -u
BIN=$(cd "${1:?usage: NAME.sh BIN_DIR}" && pwd) || exit 1
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mcp-example.XXXXXX") || exit 1
STARTED=()
cleanup() {
    local p
    # The test is over: what it left running is killed outright, so the waits are short.
    for p in "${STARTED[@]}"; do kill -KILL "$p" 2>/dev/null; done
    for p in "${STARTED[@]}"; do wait "$p" 2>/dev/null; done
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
PDEATH=()
[ -x /usr/bin/setpriv ] && PDEATH=(/usr/bin/setpriv --pdeathsig KILL --)

die() {
    echo "example: FAIL: $*" >&2
    local f
    for f in "$TMP"/*.err; do [ -s "$f" ] && { echo "--- $f" >&2; tail -20 "$f" >&2; }; done
    exit 1
}
say() { echo "example: $*"; }

# expect WHAT TEXT PATTERN: TEXT must contain PATTERN (a fixed string).
expect() {
    case "$2" in
    *"$3"*) ;;
    *) die "$1: expected '$3' in: $2" ;;
    esac
}

# start NAME CMD...: runs CMD in the background, its stdout in $TMP/NAME.out, and waits (30 s
# at most) for the line of its stderr that says "listening on http://HOST:PORT/..." (kept,
# with the rest of its stderr, in $TMP/NAME.err); sets URL to that URL and PID to its pid.
start() {
    local name=$1 fd line left deadline=$((SECONDS + 30))
    shift
    mkfifo "$TMP/$name.fifo" || die "mkfifo"
    "${PDEATH[@]}" "$@" >"$TMP/$name.out" 2>"$TMP/$name.fifo" </dev/null &
    PID=$!
    STARTED+=("$PID")
    exec {fd}<"$TMP/$name.fifo"
    URL=
    while [ -z "$URL" ]; do
        left=$((deadline - SECONDS))
        [ "$left" -gt 0 ] || die "$name did not say it was listening within 30 s"
        IFS= read -r -t "$left" line <&"$fd" || die "$name ended or stalled before listening"
        printf '%s\n' "$line" >>"$TMP/$name.err"
        [[ $line =~ listening\ on\ (https?://[^\ \"]+) ]] && URL=${BASH_REMATCH[1]}
    done
    cat <&"$fd" >>"$TMP/$name.err" &
    STARTED+=("$!")
    exec {fd}<&-
}

# stop NAME PID: SIGTERM to a program `start` started; it must exit with status 0 within
# 20 s (a sanitizer's report makes the status non-zero), or it is killed and the test fails.
# tail --pid awaits the exit (bash reaps its children as they end) with the deadline.
stop() {
    local status
    kill -TERM "$2" || die "$1 was gone before SIGTERM"
    if ! timeout 20 tail --pid="$2" -s 0.1 -f /dev/null; then
        kill -KILL "$2" 2>/dev/null
        die "$1 did not exit within 20 s of SIGTERM"
    fi
    wait "$2"
    status=$?
    [ "$status" -eq 0 ] || die "after SIGTERM $1 exited with status $status"
}

# refuses_arguments NAME: examples_NAME given an argument it takes none of exits 2 with
# its usage line.
refuses_arguments() {
    local out
    out=$(timeout 60 "$BIN/examples_$1" extra 2>&1)
    [ $? -eq 2 ] || die "an argument: examples_$1 should exit 2, it said: $out"
    expect "usage" "$out" "Usage: examples_$1"
}
