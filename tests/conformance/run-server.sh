#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance, pinned in
# tests/interop/package-lock.json) in server mode against
# `$MCP_BIN_DIR/mcp-everything --http 127.0.0.1:0 [flags]`.
#
# Exit status 0 only if every check passed: a FAILURE or a WARNING in any scenario fails the
# run, and so does a missing result, a suite that did not finish, or a server that does not
# exit with status 0 on SIGTERM. The suite itself ignores warnings in server mode, so its
# per-check results (written with -o to a temporary directory) are read here. Only an
# expectations file (MCP_CONFORMANCE_EXPECTED) can allow failures or warnings, each by name,
# and then each must happen exactly as listed.
#
# Environment:
#   MCP_BIN_DIR            the build's bin directory (required)
#   MCP_CONFORMANCE_HARNESS  which pinned harness: "stable" (default: the package
#                          @modelcontextprotocol/conformance, 0.1.x) or "next" (the prerelease,
#                          installed under the npm alias conformance-next)
#   MCP_CONFORMANCE_SUITE  suite to run (default: active)
#   MCP_CONFORMANCE_REQUIREMENTS  run a spec revision's frozen requirement set instead of a
#                          suite (e.g. 2025-11-25; the prerelease only). Every scenario it runs
#                          is checked, the unscored ones too.
#   MCP_CONFORMANCE_SERVER_FLAGS  more flags for mcp-everything, space-separated
#                          (e.g. "--json-response", "--stateless")
#   MCP_CONFORMANCE_EXPECTED  a JSON file (relative to this directory or absolute) naming the
#                          scenarios allowed to fail and the checks allowed to warn; see
#                          expected-stateless.json. A listed failure must fail at once, with
#                          the reason the file gives; an unlisted one, or a listed one that
#                          passes, fails the run.
#   MCP_CONFORMANCE_GATEWAY  if set to 1, the server is `mcp-gateway --http 127.0.0.1:0 [flags]
#                          -- mcp-everything --stdio` (the flags then go to the gateway;
#                          MCP_CONFORMANCE_GATEWAY_FLAGS adds the gateway's own, such as
#                          --shared-child): the same checks must hold through it
#   MCP_CONFORMANCE_CLUSTER  if set to a number N, the server is a cluster: a redis-server and N
#                          nodes `mcp-everything --http 127.0.0.1:0 --redis redis://127.0.0.1:PORT
#                          [flags]` behind HAProxy, which sends every request to the next node in
#                          turn with no stickiness (tests/cluster/haproxy.cfg, started by
#                          tests/interop/lib/cluster.mjs); the suite talks to HAProxy. The same
#                          checks must hold, and every node must exit 0 on SIGTERM.
#                          With MCP_CONFORMANCE_GATEWAY, the nodes are mcp-gateway's (each in
#                          front of its own mcp-everything --stdio children), sharing one
#                          --state-key-file.
#   MCP_CONFORMANCE_CLUSTER_NO_REDIS  if set to 1 with MCP_CONFORMANCE_CLUSTER, no Redis and no
#                          --redis: independent nodes, to check the cluster's plumbing (with one
#                          node everything must pass; with more, sessions cannot be shared)
#   MCP_CONFORMANCE_KEEP   if set to 1, keep the results directory even when everything passed
#
# The harness needs Node 22 (its bundle imports fs.globSync), which comes from the npm package
# "node" pinned next to it; the system's node is not used. A missing node_modules fails the run:
# it is never a skip.

set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
interop=$(cd "$here/../interop" && pwd)
suite=${MCP_CONFORMANCE_SUITE:-active}
requirements=${MCP_CONFORMANCE_REQUIREMENTS:-}
harness_name=${MCP_CONFORMANCE_HARNESS:-stable}
expected=${MCP_CONFORMANCE_EXPECTED:-}
read -r -a server_flags <<<"${MCP_CONFORMANCE_SERVER_FLAGS:-}"
fix="run scripts/deps (it runs \`npm ci\` in tests/interop)"

die() {
    echo "conformance: FAIL: $*" >&2
    exit 1
}

[ -n "${MCP_BIN_DIR:-}" ] || die "MCP_BIN_DIR must be set to the build's bin directory"
server_name=mcp-everything
server_bin="$MCP_BIN_DIR/mcp-everything"
[ -x "$server_bin" ] || die "$server_bin does not exist or is not executable"
server_tail=()
if [ "${MCP_CONFORMANCE_GATEWAY:-0}" = 1 ]; then
    server_name=mcp-gateway
    server_tail=(--log-level warning)
    read -r -a gateway_flags <<<"${MCP_CONFORMANCE_GATEWAY_FLAGS:-}"
    server_tail+=("${gateway_flags[@]}" -- "$server_bin" --stdio)
    server_bin="$MCP_BIN_DIR/mcp-gateway"
    [ -x "$server_bin" ] || die "$server_bin does not exist or is not executable"
fi

# shellcheck source=harness.sh
. "$here/harness.sh"
find_harness

# What to start: the server itself, or a cluster of it behind HAProxy (run by node, so that
# starting and stopping Redis, the nodes and HAProxy is written once, in lib/cluster.mjs).
server_cmd=("$server_bin" --http 127.0.0.1:0 "${server_flags[@]}" "${server_tail[@]}")
start_s=10
stop_s=10
cluster=${MCP_CONFORMANCE_CLUSTER:-}
if [ -n "$cluster" ]; then
    [[ "$cluster" =~ ^[1-9][0-9]*$ ]] || die "MCP_CONFORMANCE_CLUSTER must be a number of nodes, not \"$cluster\""
    command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ] || die "haproxy is missing: $fix"
    server_name=mcp-cluster
    cluster_args=(--nodes "$cluster")
    if [ "${MCP_CONFORMANCE_CLUSTER_NO_REDIS:-0}" = 1 ]; then
        cluster_args+=(--no-redis)
    else
        [ -x /usr/bin/redis-server ] || die "redis-server is missing: $fix"
    fi
    # The nodes share the key of 2026-07-28's requestState, so that a retry any node takes
    # opens the state another node sealed.
    cluster_args+=(--state-key)
    if [ "${MCP_CONFORMANCE_GATEWAY:-0}" = 1 ]; then
        # Gateway nodes: a session's requests are relayed to the node whose child serves it,
        # and the nodes share the key of 2026-07-28's requestState.
        # The children of revision 2026-07-28 seal their own requestState: they share the key
        # too, so that a retry served by another node's child opens it.
        cluster_args+=(--program mcp-gateway)
        server_tail+=(--state-key-file @STATE_KEY_FILE@)
    fi
    server_cmd=("$node22" "$interop/lib/cluster.mjs" "${cluster_args[@]}" -- "${server_flags[@]}" "${server_tail[@]}")
    # Redis, every node and HAProxy start, and stop, one after the other.
    start_s=30
    stop_s=30
fi
if [ -n "$expected" ]; then
    case "$expected" in
    /*) ;;
    *) expected="$here/$expected" ;;
    esac
    [ -f "$expected" ] || die "the expectations file $expected does not exist"
fi

conf_version=$("$node22" -p "require('$harness_pkg/package.json').version") ||
    die "cannot read the conformance package version"
# What to run: a requirement set (the prerelease's --requirements) or a suite. The 0.2 line
# also bounds each scenario itself (--timeout); 0.1.x has no such option.
run_args=(--suite "$suite")
what="suite $suite"
if [ -n "$requirements" ]; then
    run_args=(--requirements "$requirements")
    what="requirements $requirements"
fi
case "$conf_version" in
0.1.*) ;;
*) run_args+=(--timeout 30000) ;;
esac

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
# Under setpriv --pdeathsig KILL (util-linux) the server dies with this script, even when the
# script itself is killed (CTest's timeout) and its EXIT trap never runs.
pdeath=()
[ -x /usr/bin/setpriv ] && pdeath=(/usr/bin/setpriv --pdeathsig KILL --)
"${pdeath[@]}" "${server_cmd[@]}" 2>"$tmp/server.fifo" >"$tmp/server.stdout" </dev/null &
server_pid=$!
exec 3<"$tmp/server.fifo"

port=
deadline=$((SECONDS + start_s))
while [ -z "$port" ]; do
    left=$((deadline - SECONDS))
    if [ "$left" -le 0 ]; then
        keep=1
        die "$server_name did not print its listening line within $start_s s (stderr: $tmp/server.log)"
    fi
    if ! IFS= read -r -t "$left" line <&3; then
        keep=1
        die "$server_name ended or stalled before listening (stderr: $tmp/server.log)"
    fi
    printf '%s\n' "$line" >>"$tmp/server.log"
    if [[ "$line" =~ ^$server_name:\ listening\ on\ http://127\.0\.0\.1:([0-9]+)/mcp$ ]]; then
        port=${BASH_REMATCH[1]}
    fi
done
cat <&3 >>"$tmp/server.log" &
drain_pid=$!
exec 3<&-

url="http://127.0.0.1:$port/mcp"
server_desc="$server_name ${server_flags[*]:-with no flags}${server_tail[*]:+ ${server_tail[*]}}"
[ -n "$cluster" ] && server_desc="haproxy in front of ${cluster_args[*]}: mcp-everything ${server_flags[*]:-with no flags}"
echo "conformance: @modelcontextprotocol/conformance $conf_version, node $node_version, $what," \
    "server $url ($server_desc)"

# ---- Run the suite ------------------------------------------------------------------------------

# 0.1.x has no per-scenario timeout in server mode, so a request the server never answered
# would hang it: timeout bounds the whole run (exit 124).
(cd "$interop" && timeout 600 "$node22" "$harness" server --url "$url" "${run_args[@]}" -o "$tmp/results") \
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
# Expected failures make the harness exit 1; the checks below decide whether they were
# exactly the expected ones.
1) [ -n "$expected" ] || fail "the suite exited with status 1" ;;
*) fail "the suite exited with status $suite_rc" ;;
esac

# ---- Read every check of every scenario ---------------------------------------------------------

# One directory per scenario run ("server-<scenario>-<start time>"), each with checks.json,
# written when the scenario ends. The summary ignores warnings, so the checks themselves
# decide. Scenarios the log says ran must all have a results file.
reqfile=
[ -n "$requirements" ] && reqfile="$harness_pkg/requirements/$requirements.yaml"
"$node22" - "$tmp/results" "$tmp/suite.log" "$url" "$expected" "$reqfile" <<'EOF' || status=1
const fs = require('node:fs');
const path = require('node:path');
const [dir, logFile, url, expectedFile, reqFile] = process.argv.slice(2);
const log = fs.readFileSync(logFile, 'utf8').replace(/\x1b\[[0-9;]*m/g, '');
const ran = [...log.matchAll(/=== Running scenario: (\S+) ===/g)].map((m) => m[1]);
const expected = expectedFile ? JSON.parse(fs.readFileSync(expectedFile, 'utf8')) : {};
const allowFail = expected.failures ?? {};
const allowWarn = expected.warnings ?? {};
const maxFailMs = expected.max_fail_ms ?? 2000;
// Extension scenarios the server does not offer: excused only where the requirement set
// itself marks the scenario optional ("reason: extension" under not_scored), never a
// scenario it requires. Each must still show its failure (else: update the file).
const allowExt = expected.extensions ?? {};
const reqText = reqFile && fs.existsSync(reqFile) ? fs.readFileSync(reqFile, 'utf8') : '';
const markedExtension = (s) =>
    /^[a-z0-9-]+$/.test(s) &&
    new RegExp(`- scenario: ${s}\\s*\\n\\s*leg: server\\s*\\n\\s*reason: extension\\b`).test(reqText);
let bad = 0;
const complain = (msg) => {
    bad++;
    console.error(`conformance: FAIL: ${msg}`);
};
const describe = (c) => {
    const details = c.details === undefined ? '' : `\n    details: ${JSON.stringify(c.details)}`;
    const logs = Array.isArray(c.logs) && c.logs.length ? `\n    logs: ${c.logs.join(' | ')}` : '';
    return `[${c.id}] ${c.status}: ${c.description ?? c.name ?? ''}` +
        `${c.errorMessage ? `\n    error: ${c.errorMessage}` : ''}${details}${logs}`;
};
// "...-2026-11-23T17-36-19-497Z" (":" and "." made "-") back to a time.
const startOf = (d) => {
    const m = d.match(/-(\d{4}-\d\d-\d\d)T(\d\d)-(\d\d)-(\d\d)-(\d{3})Z$/);
    return m ? Date.parse(`${m[1]}T${m[2]}:${m[3]}:${m[4]}.${m[5]}Z`) : NaN;
};
const dirs = fs.existsSync(dir) ? fs.readdirSync(dir).filter((d) => d.startsWith('server-')) : [];
if (ran.length === 0) complain('the suite log names no scenario');
const counts = { SUCCESS: 0, FAILURE: 0, WARNING: 0, SKIPPED: 0, INFO: 0 };
const seen = new Set();
const failedAsExpected = [];
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
    const warnAllowed = new Set(allowWarn[scenario]?.checks ?? []);
    const warned = new Set();
    let failures = 0;
    if (allowExt[scenario] !== undefined) {
        const bad = checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING').length;
        for (const c of checks) counts[c.status] = (counts[c.status] ?? 0) + 1;
        if (!markedExtension(scenario))
            complain(`${scenario}: listed as an extension in ${expectedFile}, but ${reqFile} ` +
                'does not mark it an optional extension');
        else if (bad === 0)
            complain(`${scenario}: listed as an extension not offered, but it passed: update ${expectedFile}`);
        else
            console.log(`conformance: excused extension: ${scenario}: ${bad} failed or warned ` +
                `(${allowExt[scenario].why})`);
        continue;
    }
    for (const c of checks) {
        counts[c.status] = (counts[c.status] ?? 0) + 1;
        if (c.status === 'WARNING' && warnAllowed.has(c.id)) {
            warned.add(c.id);
            console.log(`conformance: expected warning: ${scenario}: [${c.id}] (${allowWarn[scenario].why})`);
        } else if (c.status === 'FAILURE' && allowFail[scenario] !== undefined) {
            failures++;
            // Where the check quotes the tool's answer, it must give the precise reason.
            const text = JSON.stringify(c.details ?? {});
            if (text.includes('"result"') && !text.includes(expected.reason))
                complain(`${scenario}: failed, but not for the expected reason ` +
                    `("${expected.reason}"):\n    ${describe(c)}`);
        } else if (c.status === 'FAILURE' || c.status === 'WARNING') {
            complain(`${scenario}: ${describe(c)}`);
        }
    }
    for (const id of warnAllowed)
        if (!warned.has(id))
            complain(`${scenario}: the expected warning [${id}] did not happen: update ${expectedFile}`);
    if (allowFail[scenario] !== undefined) {
        // Failing at once: the scenario ended within max_fail_ms of its start, never after a
        // wait for an answer that cannot come (or for the harness's own timeout).
        const took = fs.statSync(file).mtimeMs - startOf(d);
        if (failures === 0)
            complain(`${scenario}: expected to fail (${allowFail[scenario].why}) but passed: ` +
                `update ${expectedFile}`);
        else if (!(took <= maxFailMs))
            complain(`${scenario}: failed as expected, but only after ${Math.round(took)} ms ` +
                `(at most ${maxFailMs} ms allowed)`);
        else
            failedAsExpected.push(`${scenario} (${Math.round(took)} ms)`);
    }
}
for (const s of ran) if (!seen.has(s)) complain(`${s}: the suite ran it but wrote no checks.json`);
for (const s of [...Object.keys(allowFail), ...Object.keys(allowWarn), ...Object.keys(allowExt)])
    if (!ran.includes(s)) complain(`${s}: listed in ${expectedFile} but the suite did not run it`);

// The checks do not always quote the tool's answer (the elicitation scenarios only say that
// no request came), so each expected failure's tool is also called here, directly, to show
// that it fails at once and says why.
async function probe(scenario, { tool, arguments: args }) {
    const t0 = Date.now();
    const res = await fetch(url, {
        method: 'POST',
        headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2025-11-25',
        },
        body: JSON.stringify({
            jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: args },
        }),
        signal: AbortSignal.timeout(10000),
    });
    const body = await res.text();
    const took = Date.now() - t0;
    const sse = (res.headers.get('content-type') ?? '').startsWith('text/event-stream');
    const msgs = sse
        ? body.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim())
            .filter(Boolean).map((l) => JSON.parse(l))
        : [JSON.parse(body)];
    const answer = msgs.find((m) => m.id === 1);
    const text = answer?.result?.content?.[0]?.text ?? '';
    if (res.status !== 200 || answer?.result?.isError !== true || !text.includes(expected.reason))
        complain(`${scenario}: calling ${tool} directly should fail with "${expected.reason}"; ` +
            `got HTTP ${res.status}: ${body.slice(0, 500)}`);
    else if (took > maxFailMs)
        complain(`${scenario}: ${tool} failed for the right reason, but only after ${took} ms`);
    else
        console.log(`conformance: ${tool} fails at once (${took} ms): ${text}`);
}

(async () => {
    for (const [s, e] of Object.entries(allowFail)) {
        try {
            await probe(s, e);
        } catch (err) {
            complain(`${s}: calling ${e.tool} directly failed: ${err.message}`);
        }
    }
    if (failedAsExpected.length)
        console.log(`conformance: failed as expected, each at once: ${failedAsExpected.join(', ')}`);
    console.log(
        `conformance: ${ran.length} scenarios, ${dirs.length} result files; checks: ` +
            Object.entries(counts).map(([k, v]) => `${v} ${k}`).join(', '),
    );
    process.exit(bad ? 1 : 0);
})();
EOF

# Sends SIGKILL to pid $1 after $stop_s s unless it gets SIGTERM first.
watchdog() {
    local target=$1 sleeper
    sleep "$stop_s" &
    sleeper=$!
    trap 'kill "$sleeper" 2>/dev/null; exit 0' TERM
    wait "$sleeper"
    kill -KILL "$target" 2>/dev/null
}

# ---- Stop the server ----------------------------------------------------------------------------

if ! kill -0 "$server_pid" 2>/dev/null; then
    wait "$server_pid"
    fail "$server_name died during the suite (status $?; stderr: $tmp/server.log)"
    server_pid=
else
    kill -TERM "$server_pid"
    # A watchdog bounds the wait; it is the deadline, not the synchronisation. It kills its
    # own sleep when told to stop, so nothing outlives this script holding CTest's pipe open.
    # Until the subshell has reset the traps it inherits, a TERM would run this script's
    # own (exit, then cleanup: killing the server and deleting the results). A quick server
    # exit makes that race real, so the watchdog starts with the default TERM action.
    trap - INT TERM
    watchdog "$server_pid" >/dev/null 2>&1 </dev/null &
    watchdog=$!
    trap 'keep=1; exit 1' INT TERM
    wait "$server_pid"
    server_rc=$?
    kill "$watchdog" 2>/dev/null
    wait "$watchdog" 2>/dev/null
    server_pid=
    if [ "$server_rc" -ne 0 ]; then
        fail "$server_name exited with status $server_rc after SIGTERM (137 = killed after $stop_s s)"
    fi
fi
wait "$drain_pid" 2>/dev/null
drain_pid=

# The cluster's own account: how the requests were spread over the nodes.
if [ -n "$cluster" ]; then
    grep '^mcp-cluster: ' "$tmp/server.log" | grep -v 'listening on' || true
fi

if [ -s "$tmp/server.log" ] && [ "$status" -ne 0 ]; then
    echo "---- $server_name stderr (last 50 lines) ----" >&2
    tail -n 50 "$tmp/server.log" >&2
fi

if [ "$status" -ne 0 ]; then
    keep=1
    echo "conformance: FAILED" >&2
elif [ -n "$expected" ]; then
    echo "conformance: PASSED (no failure, no warning but those $(basename "$expected") lists)"
else
    echo "conformance: PASSED (no failure, no warning)"
fi
exit "$status"
