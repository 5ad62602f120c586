#!/usr/bin/env bash
# Runs client scenarios of the official MCP conformance suite
# (@modelcontextprotocol/conformance, pinned in tests/interop/package-lock.json) against
# $MCP_BIN_DIR/mcp-conformance-client: the harness starts a test server per scenario and runs
# the client with the scenario's name in MCP_CONFORMANCE_SCENARIO and the server's URL.
#
# Exit status 0 only if, for every scenario, the harness said PASSED and exited 0, and its
# results (checks.json) hold every check the scenario is known to make, each a SUCCESS: a
# client that does nothing passes some scenarios with 0 of 0 checks, which is no pass here.
#
# Environment:
#   MCP_BIN_DIR            the build's bin directory (required)
#   MCP_CONFORMANCE_HARNESS  "stable" (default: @modelcontextprotocol/conformance 0.1.x) or
#                          "next" (the prerelease, installed under the npm alias
#                          conformance-next)
#   MCP_CONFORMANCE_REQUIREMENTS  a revision (2026-07-28, 2025-11-25): run the client scenarios
#                          of its frozen requirement set (the prerelease harness's
#                          --requirements), every one, authorization (auth/*) and the
#                          unscored ones too; each must pass with no failure and no warning
#   MCP_CONFORMANCE_KEEP   if set to 1, keep the results directory even when everything passed
#
# The harness needs Node 22, from the npm package "node" pinned next to it. A missing
# node_modules fails the run: it is never a skip.

set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
interop=$(cd "$here/../interop" && pwd)
harness_name=${MCP_CONFORMANCE_HARNESS:-stable}
requirements=${MCP_CONFORMANCE_REQUIREMENTS:-}
fix="run scripts/deps (it runs \`npm ci\` in tests/interop)"

die() {
    echo "conformance-client: FAIL: $*" >&2
    exit 1
}

[ -n "${MCP_BIN_DIR:-}" ] || die "MCP_BIN_DIR must be set to the build's bin directory"
client_bin="$MCP_BIN_DIR/mcp-conformance-client"
[ -x "$client_bin" ] || die "$client_bin does not exist or is not executable"
# shellcheck source=harness.sh
. "$here/harness.sh"
find_harness

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mcp-conformance-client.XXXXXX") || die "mktemp failed"
keep=0
cleanup() {
    if [ "$keep" = 1 ] || [ "${MCP_CONFORMANCE_KEEP:-0}" = 1 ]; then
        echo "conformance-client: results kept in $tmp" >&2
    else
        rm -rf "$tmp"
    fi
}
trap cleanup EXIT
trap 'keep=1; exit 1' INT TERM

# ---- A requirement set: every client scenario of a revision, authorization included -------------

if [ -n "$requirements" ]; then
    reqfile="$harness_pkg/requirements/$requirements.yaml"
    [ -f "$reqfile" ] || die "$reqfile does not exist (MCP_CONFORMANCE_REQUIREMENTS=$requirements)"
    # The harness runs the whole set at once, auth/* included: nothing is excused.
    echo "conformance-client: requirements $requirements (harness $harness_name), every scenario"
    (cd "$interop" && timeout 300 "$node22" "$harness" client --command "$client_bin" \
        --requirements "$requirements" --timeout 30000 -o "$tmp/results" \
        >"$tmp/harness.log" 2>&1 </dev/null)
    rc=$?
    "$node22" - "$reqfile" "$interop" "$tmp/results" <<'EOF'
const fs = require('node:fs');
const path = require('node:path');
const [reqfile, interop, dir] = process.argv.slice(2);
const yaml = require(require.resolve('yaml', { paths: [interop] }));
const req = yaml.parse(fs.readFileSync(reqfile, 'utf8'));
const wanted = [
    ...(req.client ?? []),
    ...(req.not_scored ?? []).filter((e) => e.leg === 'client').map((e) => e.scenario),
];
let bad = 0;
const found = new Map();
// auth/x scenarios write to auth/x-<time>/, the others to x-<time>/.
const scan = (sub) => {
    const at = path.join(dir, sub);
    for (const d of fs.existsSync(at) ? fs.readdirSync(at) : []) {
        const file = path.join(at, d, 'checks.json');
        const s = (sub ? sub + '/' : '') + d.replace(/-\d{4}-\d\d-\d\dT.*$/, '');
        if (fs.existsSync(file)) found.set(s, file);
        else if (!sub && fs.statSync(path.join(at, d)).isDirectory()) scan(d);
    }
};
scan('');
for (const s of wanted) {
    const file = found.get(s);
    if (!file) {
        console.error(`conformance-client: ${s}: FAILED (no checks.json written)`);
        bad++;
        continue;
    }
    const checks = JSON.parse(fs.readFileSync(file, 'utf8'));
    const wrong = checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING');
    const ok = checks.filter((c) => c.status === 'SUCCESS').length;
    const skipped = checks.filter((c) => c.status === 'SKIPPED').length;
    if (wrong.length || ok === 0) {
        bad++;
        console.error(`conformance-client: ${s}: FAILED (${ok} checks succeeded)`);
        for (const c of wrong)
            console.error(`    [${c.id}] ${c.status}: ${c.errorMessage ?? c.description ?? ''}`);
    } else {
        console.log(`conformance-client: ${s}: passed (${ok} checks${skipped ? `, ${skipped} skipped` : ''})`);
    }
}
process.exit(bad ? 1 : 0);
EOF
    verdict=$?
    if [ "$rc" -ne 0 ] || [ "$verdict" -ne 0 ]; then
        keep=1
        sed 's/\x1b\[[0-9;]*m//g' "$tmp/harness.log" | grep -v '^ *$' | tail -n 60 >&2
        die "requirements $requirements: harness exit $rc, verdict $verdict"
    fi
    echo "conformance-client: requirements $requirements: every scenario passed, no warning"
    exit 0
fi

# Each scenario with the checks it must report (and nothing else may fail or warn).
scenarios=(
    "initialize mcp-client-initialization"
    "tools_call tool-add-numbers"
    "sse-retry client-sse-graceful-reconnect client-sse-retry-timing client-sse-last-event-id"
    "elicitation-sep1034-client-defaults client-elicitation-sep1034-string-default
     client-elicitation-sep1034-integer-default client-elicitation-sep1034-number-default
     client-elicitation-sep1034-enum-default client-elicitation-sep1034-boolean-default"
    # Revision 2025-03-26's authorization, in no requirement set: no Protected Resource
    # Metadata; the server's origin is the authorization server, with metadata, or none
    # (the default endpoints).
    "auth/2025-03-26-oauth-metadata-backcompat authorization-server-metadata client-registration
     authorization-request token-request pkce-code-challenge-sent pkce-s256-method-used
     pkce-verifier-matches-challenge"
    "auth/2025-03-26-oauth-endpoint-fallback client-registration authorization-request
     token-request"
)

failed=0
for entry in "${scenarios[@]}"; do
    read -r -d '' -a words <<<"$entry"
    name=${words[0]}
    checks=("${words[@]:1}")
    out="$tmp/$name"
    mkdir -p "$out"
    # The harness bounds the client (30 s); timeout bounds the harness.
    (cd "$interop" && timeout 120 "$node22" "$harness" client --command "$client_bin" \
        --scenario "$name" -o "$out" >"$out/harness.stdout" 2>"$out/harness.log" </dev/null)
    rc=$?
    file=$(find "$out" -name checks.json | head -n 1)
    verdict=$("$node22" -e '
        const fs = require("fs");
        const [file, ...want] = process.argv.slice(1);
        if (!file) { console.log("no checks.json written"); process.exit(0); }
        const checks = JSON.parse(fs.readFileSync(file, "utf8"));
        const bad = [];
        for (const id of want)
            if (!checks.some((c) => c.id.trim() === id)) bad.push(`${id}: missing`);
        for (const c of checks)
            if (c.status === "FAILURE" || c.status === "WARNING")
                bad.push(`${c.id.trim()}: ${c.status}${c.errorMessage ? " (" + c.errorMessage + ")" : ""}`);
        console.log(bad.length ? bad.join("; ") : "ok");
    ' "$file" "${checks[@]}" 2>&1)
    if [ "$rc" -ne 0 ] || [ "$verdict" != ok ] || ! grep -q "OVERALL: PASSED" "$out/harness.log"; then
        echo "conformance-client: $name: FAILED (harness exit $rc; $verdict)" >&2
        sed 's/^/    /' "$out/harness.log" | tail -n 40 >&2
        failed=1
        keep=1
    else
        echo "conformance-client: $name: passed (${#checks[@]} checks)"
    fi
done
[ "$failed" = 0 ] || die "some client scenarios failed (harness $harness_name)"
echo "conformance-client: every scenario passed (harness $harness_name)"
