#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance, pinned in
# tests/interop/package-lock.json) in server mode, "active" suite, against
# `$MCP_BIN_DIR/mcp-everything --http 127.0.0.1:0`.
#
# Exit status 0 only if every check passed: a FAILURE or a WARNING in any scenario fails the
# run, and so does a missing result, a suite that did not finish, or a server that does not
# exit with status 0 on SIGTERM. The suite itself ignores warnings in server mode, so its
# per-check results (written with -o to a temporary directory) are read here.
#
# Environment:
#   MCP_BIN_DIR            the build's bin directory (required)
#   MCP_CONFORMANCE_SUITE  suite to run (default: active)
#   MCP_CONFORMANCE_KEEP   if set to 1, keep the results directory even when everything passed
#
# The harness needs Node 22 (its bundle imports fs.globSync), which comes from the npm package
# "node" pinned next to it; the system's node is not used. A missing node_modules fails the run:
# it is never a skip.

set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
interop=$(cd "$here/../interop" && pwd)
suite=${MCP_CONFORMANCE_SUITE:-active}
fix="run scripts/deps (it runs \`npm ci\` in tests/interop)"

die() {
    echo "conformance: FAIL: $*" >&2
    exit 1
}

[ -n "${MCP_BIN_DIR:-}" ] || die "MCP_BIN_DIR must be set to the build's bin directory"
server_bin="$MCP_BIN_DIR/mcp-everything"
[ -x "$server_bin" ] || die "$server_bin does not exist or is not executable"

node22="$interop/node_modules/node/bin/node"
harness="$interop/node_modules/@modelcontextprotocol/conformance/dist/index.js"
[ -d "$interop/node_modules" ] || die "$interop/node_modules is missing: $fix"
[ -f "$harness" ] || die "$harness is missing: $fix"
[ -x "$node22" ] || die "$node22 is missing (npm package \"node\"): $fix"
node_version=$("$node22" --version 2>&1) || die "$node22 --version failed: $node_version"
case "$node_version" in
v22.*) ;;
*) die "$node22 is $node_version, but the conformance harness needs Node 22: $fix" ;;
esac
conf_version=$("$node22" -p "require('$interop/node_modules/@modelcontextprotocol/conformance/package.json').version") ||
    die "cannot read the conformance package version"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mcp-conformance.XXXXXX") || die "mktemp failed"
server_pid=
drain_pid=
keep=0

# shellcheck disable=SC2317 # called through the EXIT trap
cleanup() {
    # Only ever the processes this script started, by their id.
    if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
        kill -KILL "$server_pid" 2>/dev/null
    fi
    if [ -n "$drain_pid" ]; then
        kill "$drain_pid" 2>/dev/null
    fi
    if [ "$keep" = 1 ] || [ "${MCP_CONFORMANCE_KEEP:-0}" = 1 ]; then
        echo "conformance: results kept in $tmp" >&2
    else
        rm -rf "$tmp"
    fi
}
trap cleanup EXIT
trap 'keep=1; exit 1' INT TERM

# ---- Start the server and read its port --------------------------------------------------------

# Its stderr goes through a FIFO so that the listening line can be awaited with a deadline,
# then a background cat keeps draining it (into a log) so the server never blocks on a full pipe.
mkfifo "$tmp/server.fifo" || die "mkfifo failed"
"$server_bin" --http 127.0.0.1:0 2>"$tmp/server.fifo" >"$tmp/server.stdout" </dev/null &
server_pid=$!
exec 3<"$tmp/server.fifo"

port=
deadline=$((SECONDS + 10))
while [ -z "$port" ]; do
    left=$((deadline - SECONDS))
    if [ "$left" -le 0 ]; then
        keep=1
        die "mcp-everything did not print its listening line within 10 s (stderr: $tmp/server.log)"
    fi
    if ! IFS= read -r -t "$left" line <&3; then
        keep=1
        die "mcp-everything ended or stalled before listening (stderr: $tmp/server.log)"
    fi
    printf '%s\n' "$line" >>"$tmp/server.log"
    if [[ "$line" =~ ^mcp-everything:\ listening\ on\ http://127\.0\.0\.1:([0-9]+)/mcp$ ]]; then
        port=${BASH_REMATCH[1]}
    fi
done
cat <&3 >>"$tmp/server.log" &
drain_pid=$!
exec 3<&-

url="http://127.0.0.1:$port/mcp"
echo "conformance: @modelcontextprotocol/conformance $conf_version, node $node_version, suite $suite, server $url"

# ---- Run the suite ------------------------------------------------------------------------------

# The harness has no per-scenario timeout in server mode, so a request the server never
# answers would hang it: timeout bounds it (exit 124).
(cd "$interop" && timeout 600 "$node22" "$harness" server --url "$url" --suite "$suite" -o "$tmp/results") \
    >"$tmp/suite.log" 2>&1
suite_rc=$?
cat "$tmp/suite.log"

status=0
fail() {
    echo "conformance: FAIL: $*" >&2
    status=1
}

case "$suite_rc" in
0) ;;
124) fail "the suite did not finish within 600 s (hung on a request the server never answered?)" ;;
*) fail "the suite exited with status $suite_rc" ;;
esac

# ---- Read every check of every scenario ---------------------------------------------------------

# One directory per scenario run, each with checks.json. The summary ignores warnings, so the
# checks themselves decide. Scenarios the log says ran must all have a results file.
"$node22" - "$tmp/results" "$tmp/suite.log" <<'EOF' || status=1
const fs = require('node:fs');
const path = require('node:path');
const [dir, logFile] = process.argv.slice(2);
const log = fs.readFileSync(logFile, 'utf8').replace(/\x1b\[[0-9;]*m/g, '');
const ran = [...log.matchAll(/=== Running scenario: (\S+) ===/g)].map((m) => m[1]);
let bad = 0;
const complain = (msg) => {
    bad++;
    console.error(`conformance: FAIL: ${msg}`);
};
const dirs = fs.existsSync(dir) ? fs.readdirSync(dir).filter((d) => d.startsWith('server-')) : [];
if (ran.length === 0) complain('the suite log names no scenario');
const counts = { SUCCESS: 0, FAILURE: 0, WARNING: 0, SKIPPED: 0, INFO: 0 };
const seen = new Set();
for (const d of dirs.sort()) {
    const file = path.join(dir, d, 'checks.json');
    const scenario = d.replace(/^server-/, '').replace(/-\d{4}-\d\d-\d\dT.*$/, '');
    seen.add(scenario);
    let checks;
    try {
        checks = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch (e) {
        complain(`${scenario}: cannot read ${file}: ${e.message}`);
        continue;
    }
    if (!Array.isArray(checks)) {
        complain(`${scenario}: ${file} is not an array`);
        continue;
    }
    for (const c of checks) {
        counts[c.status] = (counts[c.status] ?? 0) + 1;
        if (c.status === 'FAILURE' || c.status === 'WARNING') {
            const details = c.details === undefined ? '' : `\n    details: ${JSON.stringify(c.details)}`;
            const logs = Array.isArray(c.logs) && c.logs.length ? `\n    logs: ${c.logs.join(' | ')}` : '';
            complain(
                `${scenario}: [${c.id}] ${c.status}: ${c.description ?? c.name ?? ''}` +
                    `${c.errorMessage ? `\n    error: ${c.errorMessage}` : ''}${details}${logs}`,
            );
        }
    }
}
for (const s of ran) if (!seen.has(s)) complain(`${s}: the suite ran it but wrote no checks.json`);
console.log(
    `conformance: ${ran.length} scenarios, ${dirs.length} result files; checks: ` +
        Object.entries(counts).map(([k, v]) => `${v} ${k}`).join(', '),
);
process.exit(bad ? 1 : 0);
EOF

# Sends SIGKILL to pid $1 after 10 s unless it gets SIGTERM first.
watchdog() {
    local target=$1 sleeper
    sleep 10 &
    sleeper=$!
    trap 'kill "$sleeper" 2>/dev/null; exit 0' TERM
    wait "$sleeper"
    kill -KILL "$target" 2>/dev/null
}

# ---- Stop the server ----------------------------------------------------------------------------

if ! kill -0 "$server_pid" 2>/dev/null; then
    wait "$server_pid"
    fail "mcp-everything died during the suite (status $?; stderr: $tmp/server.log)"
    server_pid=
else
    kill -TERM "$server_pid"
    # A watchdog bounds the wait; it is the deadline, not the synchronisation. It kills its
    # own sleep when told to stop, so nothing outlives this script holding CTest's pipe open.
    watchdog "$server_pid" >/dev/null 2>&1 </dev/null &
    watchdog=$!
    wait "$server_pid"
    server_rc=$?
    kill "$watchdog" 2>/dev/null
    wait "$watchdog" 2>/dev/null
    server_pid=
    if [ "$server_rc" -ne 0 ]; then
        fail "mcp-everything exited with status $server_rc after SIGTERM (137 = killed after 10 s)"
    fi
fi
wait "$drain_pid" 2>/dev/null
drain_pid=

if [ -s "$tmp/server.log" ] && [ "$status" -ne 0 ]; then
    echo "---- mcp-everything stderr (last 50 lines) ----" >&2
    tail -n 50 "$tmp/server.log" >&2
fi

if [ "$status" -ne 0 ]; then
    keep=1
    echo "conformance: FAILED" >&2
else
    echo "conformance: PASSED (no failure, no warning)"
fi
exit "$status"
