#!/usr/bin/env bash
# Installs the build into a temporary prefix (cmake --install --prefix) and
# builds the README's example (examples/echo_server.c), the client example
# (examples/client.c) and the embedding
# example (examples/embed.c) against that install four ways: pkg-config
# shared, pkg-config --static, and find_package(libmcp) with libmcp::mcp and
# with libmcp::mcp_static. Each echo server is then run as an MCP server over
# stdio (initialize, then tools/call echo, answered); each embed runs its loop
# with an HTTP endpoint and a client of the installed mcp-everything --stdio,
# and must get its answer and close its loop.
#
# Usage: run.sh BUILD_DIR SOURCE_DIR, or run.sh --prefix PREFIX SOURCE_DIR to test what is
# installed there already (tests/install/debian.sh: the Debian packages unpacked, PREFIX
# their usr/). Exit status 0 only if all of it worked.
set -u

installed=
if [ "${1:-}" = --prefix ]; then
    installed=$(cd "${2:?prefix}" && pwd) || exit 1
    shift 2
    src=$(cd "${1:?source directory}" && pwd) || exit 1
else
    build=$(cd "${1:?build directory}" && pwd) || exit 1
    src=$(cd "${2:?source directory}" && pwd) || exit 1
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mcp-install.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

fail() {
    echo "install: FAIL: $*" >&2
    exit 1
}
step() { echo "install: $*"; }

if [ -n "$installed" ]; then
    prefix=$installed
else
    prefix=$tmp/prefix
    cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 ||
        { cat "$tmp/install.log" >&2; fail "cmake --install --prefix $prefix"; }
fi
pc=$(find "$prefix" -name libmcp.pc -print -quit)
[ -n "$pc" ] || fail "no libmcp.pc under $prefix"
libdir=$(dirname "$(dirname "$pc")")
export PKG_CONFIG_PATH=$(dirname "$pc")

# The installed headers, found through the pkg-config file from where it lies.
cflags=$(pkg-config --cflags libmcp) || fail "pkg-config --cflags libmcp"
case "$cflags" in
*"-I$prefix/"* | *"-I$libdir/../"*) ;;
*) fail "pkg-config --cflags libmcp gives '$cflags', not the install's include directory" ;;
esac
[ -f "$prefix/include/mcp/mcp.h" ] || fail "$prefix/include/mcp/mcp.h was not installed"

# The licence: its text installed with the docs (a package's: in its copyright file), its
# SPDX identifier in libmcp.pc.
if [ -n "$installed" ]; then
    grep -q "Permission is hereby granted" "$prefix/share/doc/libmcp-dev/copyright" ||
        fail "the licence is not in $prefix/share/doc/libmcp-dev/copyright"
else
    find "$prefix" -path '*/doc/*' -name LICENSE | grep -q . || fail "LICENSE was not installed"
fi
license=$(pkg-config --variable=license libmcp)
[ "$license" = MIT ] || fail "pkg-config --variable=license libmcp gives '$license', not MIT"

# A session over stdio: the server must answer the tools/call with the text.
run_server() {
    local bin=$1 what=$2 out
    out=$(printf '%s\n' \
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"install-test","version":"1"}}}' \
        '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
        '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"installed and running"}}}' |
        LD_LIBRARY_PATH=$libdir timeout 20 "$bin" 2>"$tmp/server.err")
    case "$out" in
    *'"id":2'*'installed and running'*) step "$what: answered" ;;
    *) cat "$tmp/server.err" >&2; fail "$what: no answer to tools/call; it wrote: $out" ;;
    esac
}

# The embedding host: its own loop, an endpoint and an HTTP client of it.
run_embed() {
    local bin=$1 what=$2 out
    out=$(LD_LIBRARY_PATH=$libdir timeout 30 "$bin" 2>"$tmp/embed.err") ||
        { cat "$tmp/embed.err" >&2; fail "$what: embed exited with an error; it wrote: $out"; }
    case "$out" in
    *"the server answered: the host's timer ticked"*"uv_loop_close: 0"*) step "$what: embed ran" ;;
    *) cat "$tmp/embed.err" >&2; fail "$what: embed did not finish cleanly; it wrote: $out" ;;
    esac
}

# The client example against the installed mcp-everything, over stdio.
run_client() {
    local bin=$1 what=$2 out
    out=$(LD_LIBRARY_PATH=$libdir timeout 30 "$bin" -- "$prefix/bin/mcp-everything" --stdio 2>"$tmp/client.err") ||
        { cat "$tmp/client.err" >&2; fail "$what: client exited with an error; it wrote: $out"; }
    case "$out" in
    *"tool: echo"*"echo: hello from examples_client"*"closed"*) step "$what: client ran" ;;
    *) cat "$tmp/client.err" >&2; fail "$what: client did not list, call and close; it wrote: $out" ;;
    esac
}

example=$src/examples/echo_server.c
embed=$src/examples/embed.c
client=$src/examples/client.c
cc=${CC:-cc}
[ -x "$prefix/bin/mcp-everything" ] || fail "mcp-everything was not installed"

step "pkg-config, shared"
# shellcheck disable=SC2046 # word splitting of pkg-config's output is intended
"$cc" -o "$tmp/echo_shared" "$example" $(pkg-config --cflags --libs libmcp) ||
    fail "building against pkg-config's shared libmcp"
ldd "$tmp/echo_shared" | grep -q "libmcp.so" || fail "echo_shared is not linked to libmcp.so"
run_server "$tmp/echo_shared" "pkg-config, shared"
# shellcheck disable=SC2046
"$cc" -o "$tmp/embed_shared" "$embed" $(pkg-config --cflags --libs libmcp libuv) ||
    fail "building embed.c against pkg-config's shared libmcp"
run_embed "$tmp/embed_shared" "pkg-config, shared"
# shellcheck disable=SC2046
"$cc" -o "$tmp/client_shared" "$client" $(pkg-config --cflags --libs libmcp) ||
    fail "building client.c against pkg-config's shared libmcp"
run_client "$tmp/client_shared" "pkg-config, shared"

step "pkg-config --static"
static_libs=$(pkg-config --static --libs libmcp) || fail "pkg-config --static --libs libmcp"
# Only libmcp itself is linked statically here: -lmcp picks the .a.
static_libs=${static_libs/-lmcp/-l:libmcp.a}
# shellcheck disable=SC2086
"$cc" -o "$tmp/echo_static" "$example" $(pkg-config --cflags libmcp) $static_libs ||
    fail "building against pkg-config --static (libs: $static_libs)"
if ldd "$tmp/echo_static" | grep -q "libmcp.so"; then
    fail "echo_static still needs libmcp.so"
fi
run_server "$tmp/echo_static" "pkg-config --static"
# shellcheck disable=SC2046,SC2086
"$cc" -o "$tmp/embed_static" "$embed" $(pkg-config --cflags libmcp libuv) $static_libs \
    $(pkg-config --libs libuv) || fail "building embed.c against pkg-config --static"
if ldd "$tmp/embed_static" | grep -q "libmcp.so"; then
    fail "embed_static still needs libmcp.so"
fi
run_embed "$tmp/embed_static" "pkg-config --static"

for target in mcp mcp_static; do
    step "find_package(libmcp), libmcp::$target"
    proj=$tmp/cmake_$target
    mkdir -p "$proj"
    cat >"$proj/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.16)
project(install_test_$target C)
find_package(libmcp REQUIRED)
if(NOT libmcp_LICENSE STREQUAL "MIT")
    message(FATAL_ERROR "libmcp_LICENSE is '\${libmcp_LICENSE}', not MIT")
endif()
find_package(PkgConfig REQUIRED)
pkg_check_modules(UV REQUIRED IMPORTED_TARGET libuv)
add_executable(echo_server "$example")
target_link_libraries(echo_server PRIVATE libmcp::$target)
add_executable(embed "$embed")
target_link_libraries(embed PRIVATE libmcp::$target PkgConfig::UV)
add_executable(client "$client")
target_link_libraries(client PRIVATE libmcp::$target)
EOF
    cmake -S "$proj" -B "$proj/build" -DCMAKE_PREFIX_PATH="$prefix" >"$tmp/cmake.log" 2>&1 ||
        { cat "$tmp/cmake.log" >&2; fail "find_package(libmcp) from $prefix"; }
    cmake --build "$proj/build" >"$tmp/cmake-build.log" 2>&1 ||
        { cat "$tmp/cmake-build.log" >&2; fail "building with libmcp::$target"; }
    run_server "$proj/build/echo_server" "find_package, libmcp::$target"
    run_embed "$proj/build/embed" "find_package, libmcp::$target"
    run_client "$proj/build/client" "find_package, libmcp::$target"
done

step "all four builds answered, embed ran four times, and the client three"
