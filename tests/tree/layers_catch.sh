#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# layers.sh can fail: on a copy of src/ and include/ with one include added
# that points up (src/util to the server core) and one between two rooms of a
# layer (src/sse to src/http), it must fail and name both.
# Usage: layers_catch.sh SOURCE_DIR
set -euo pipefail
root=$(realpath "${1:?usage: layers_catch.sh SOURCE_DIR}")
here=$(dirname "$(realpath "$0")")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -a "$root/src" "$root/include" "$tmp/"
sed -i '2i #include "server/server_int.h"' "$tmp/src/util/buf.c"
echo '#include "http/http.h"' >>"$tmp/src/sse/parser.c"
if out=$(bash "$here/layers.sh" "$tmp" "$here/layers"); then
    echo "layers.sh passed a tree with an arrow up:"
    echo "$out"
    exit 1
fi
echo "$out"
grep -q '^src/util/buf.c includes src/server/server_int.h: an arrow up' <<<"$out" ||
    { echo "the arrow up was not named"; exit 1; }
grep -q '^src/sse/parser.c includes src/http/http.h: .* same layer' <<<"$out" ||
    { echo "the include within a layer was not named"; exit 1; }
echo "layers_catch: both planted includes were refused"
