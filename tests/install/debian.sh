#!/usr/bin/env bash
# The Debian packages, as a user gets them: dpkg-buildpackage -us -uc -b in a copy of the
# tree (what git tracks, and what it would add) builds libmcp0, libmcp-dev and mcp-tools;
# lintian finds no error and no warning in them; apt can install them on this machine
# (apt-get --simulate: their dependencies are there to be had); unpacked into a root of
# their own (dpkg -x: the machine's /usr is left alone), the README's example and two other
# examples are built against the unpacked libmcp-dev with pkg-config and with CMake and run
# (tests/install/run.sh --prefix), and the programs, their manual pages and the systemd
# unit are where they belong and work.
#
# Usage: debian.sh SOURCE_DIR. Exit status 0 only if all of it holds.
set -u
src=$(cd "${1:?source directory}" && pwd) || exit 1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mcp-deb.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() {
    echo "debian: FAIL: $*" >&2
    exit 1
}
step() { echo "debian: $*"; }

version=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version) || fail "dpkg-parsechangelog"
base=$(sed -n 's/^#define MCP_VERSION_STRING "\(.*\)"$/\1/p' "$src/include/mcp/base.h")
[ "${version%%-*}" = "$base" ] || fail "debian/changelog is at $version, include/mcp/base.h at $base"
grep -qE "^## \[?$base\]?( |$)" "$src/CHANGELOG.md" || fail "CHANGELOG.md has no section for $base"
arch=$(dpkg --print-architecture)

tree=$tmp/libmcp-$version
mkdir -p "$tree"
(cd "$src" && git ls-files -z --cached --others --exclude-standard | xargs -0 -r cp --parents -t "$tree") ||
    fail "copying the tree"

step "dpkg-buildpackage -us -uc -b (libmcp $version)"
(cd "$tree" && DEB_BUILD_OPTIONS="parallel=$(nproc)" dpkg-buildpackage -us -uc -b) \
    >"$tmp/build.log" 2>&1 || { tail -60 "$tmp/build.log" >&2; fail "dpkg-buildpackage"; }
debs=()
for p in libmcp0 libmcp-dev mcp-tools; do
    f=$tmp/${p}_${version}_$arch.deb
    [ -f "$f" ] || fail "$p was not built ($(ls "$tmp"/*.deb 2>/dev/null | xargs -n1 basename | tr '\n' ' '))"
    debs+=("$f")
done
step "built: $(cd "$tmp" && ls ./*.deb | xargs -n1 basename | tr '\n' ' ')"

changes=$tmp/libmcp_${version}_$arch.changes
lintian --fail-on error,warning --display-info --tag-display-limit 0 "$changes" >"$tmp/lintian.out" 2>&1
rc=$?
cat "$tmp/lintian.out"
[ "$rc" -eq 0 ] || fail "lintian: status $rc"
grep -qE '^[EW]: ' "$tmp/lintian.out" && fail "lintian reports errors or warnings"
step "lintian: no error, no warning ($(grep -c '^[IPX]: ' "$tmp/lintian.out") notes of lower levels)"

apt-get install --simulate -q "${debs[@]}" >"$tmp/apt.out" 2>&1 ||
    { cat "$tmp/apt.out" >&2; fail "apt-get install --simulate of the three packages"; }
for p in libmcp0 libmcp-dev mcp-tools; do
    grep -qE "^Inst $p " "$tmp/apt.out" || { cat "$tmp/apt.out" >&2; fail "apt would not install $p"; }
done
step "apt-get install --simulate: all three installable here"

root=$tmp/root
for f in "${debs[@]}"; do dpkg -x "$f" "$root" || fail "dpkg -x $f"; done
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
for f in usr/lib/$multiarch/libmcp.so.0 usr/lib/$multiarch/libmcp.a usr/include/mcp/mcp.h \
    usr/lib/$multiarch/pkgconfig/libmcp.pc usr/lib/$multiarch/cmake/libmcp/libmcpConfig.cmake \
    usr/bin/mcp usr/bin/mcp-gateway usr/bin/mcp-everything lib/systemd/system/mcp-gateway@.service \
    usr/share/man/man1/mcp.1.gz usr/share/man/man1/mcp-gateway.1.gz usr/share/man/man1/mcp-everything.1.gz \
    usr/share/man/man3/libmcp.3.gz usr/share/doc/mcp-tools/examples/mcp-gateway.conf; do
    [ -e "$root/$f" ] || fail "/$f is in none of the packages"
done
[ -e "$root/usr/bin/mcp-conformance-client" ] && fail "mcp-conformance-client (a test program) is packaged"

out=$(LD_LIBRARY_PATH=$root/usr/lib/$multiarch "$root/usr/bin/mcp-everything" --version 2>&1)
case "$out" in *"$base"*) ;; *) fail "the packaged mcp-everything --version says: $out" ;; esac
for page in "$root"/usr/share/man/man*/*.gz; do
    LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" >/dev/null 2>"$tmp/man.err" || fail "man -l $page"
    [ -s "$tmp/man.err" ] && fail "man -l $(basename "$page") warns: $(head -3 "$tmp/man.err")"
done
step "the programs, $(ls "$root"/usr/share/man/man*/*.gz | wc -l) manual pages and the unit are in place"
if command -v systemd-analyze >/dev/null; then
    # Only the unit's syntax: the paths it names are those of an installed system.
    systemd-analyze verify --man=no "$root/lib/systemd/system/mcp-gateway@.service" 2>&1 |
        grep -vE "Command /usr/bin/mcp-gateway is not executable|No such file" >"$tmp/unit.err"
    [ -s "$tmp/unit.err" ] && fail "systemd-analyze verify: $(cat "$tmp/unit.err")"
fi

bash "$src/tests/install/run.sh" --prefix "$root/usr" "$src" || fail "building and running the examples against the packages"
step "all of it holds"
