#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The licence is said once and in every file: LICENSE at the root is the MIT
# licence, and every C source and header under the folders that make up the
# project starts with its SPDX line. Usage: licence.sh SOURCE_DIR
set -euo pipefail
root=${1:?usage: licence.sh SOURCE_DIR}
cd "$root"
status=0
if ! grep -q '^MIT License$' LICENSE 2>/dev/null; then
    echo "LICENSE is missing or is not the MIT licence"
    status=1
fi
line='/* SPDX-License-Identifier: MIT */'
checked=0
while IFS= read -r -d '' f; do
    checked=$((checked + 1))
    if [[ $(head -n 1 "$f") != "$line" ]]; then
        echo "$f: the first line is not: $line"
        status=1
    fi
done < <(find src include programs tests fuzz examples bench \
    -name node_modules -prune -o -type f \( -name '*.c' -o -name '*.h' \) -print0)
if ((checked == 0)); then
    echo "no C file found under $root"
    status=1
fi
echo "licence: $checked C files checked"
exit "$status"
