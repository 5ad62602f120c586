# Sourced by run-server.sh and run-client.sh: finds the pinned conformance harness and the
# Node 22 it needs. Expects $interop (tests/interop), $harness_name ("stable" or "next"),
# $fix (what to run when something is missing) and a die function; sets harness_pkg (the
# package's directory), harness (its dist/index.js), node22 and node_version. A missing piece is a failure,
# never a skip.

find_harness() {
    case "$harness_name" in
    stable) harness_pkg="$interop/node_modules/@modelcontextprotocol/conformance" ;;
    next) harness_pkg="$interop/node_modules/conformance-next" ;;
    *) die "MCP_CONFORMANCE_HARNESS must be stable or next, not \"$harness_name\"" ;;
    esac
    node22="$interop/node_modules/node/bin/node"
    harness="$harness_pkg/dist/index.js"
    [ -d "$interop/node_modules" ] || die "$interop/node_modules is missing: $fix"
    [ -f "$harness" ] || die "$harness is missing: $fix"
    [ -x "$node22" ] || die "$node22 is missing (npm package \"node\"): $fix"
    node_version=$("$node22" --version 2>&1) || die "$node22 --version failed: $node_version"
    case "$node_version" in
    v22.*) ;;
    *) die "$node22 is $node_version, but the conformance harness needs Node 22: $fix" ;;
    esac
}
