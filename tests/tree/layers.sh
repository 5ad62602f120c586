#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# No arrow up, no circle between rooms: every #include of a C file under src/
# and include/ names its own room or a room of a layer below, as the file
# `layers` beside this script orders them. Includes are read from the sources
# ("dir/file.h" from src/, a bare "file.h" beside the file, <mcp/file.h> from
# include/); system and dependency headers are not the project's and are
# skipped. Usage: layers.sh SOURCE_DIR [LAYERS_FILE]
set -euo pipefail
root=${1:?usage: layers.sh SOURCE_DIR [LAYERS_FILE]}
layers=$(realpath "${2:-$(dirname "$(realpath "$0")")/layers}")
cd "$root"

declare -A rank
n=0
while read -r line; do
    line=${line%%#*}
    [[ -z ${line// /} ]] && continue
    for room in $line; do
        [[ -e $room ]] || { echo "layers: $room does not exist"; exit 1; }
        rank[$room]=$n
    done
    n=$((n + 1))
done <"$layers"

# The room of a file, in REPLY: itself when it is a room, else its longest
# folder that is; empty when none is.
room_of() {
    local p=$1
    REPLY=
    while [[ $p != . && $p != / ]]; do
        [[ -n ${rank[$p]+x} ]] && { REPLY=$p; return; }
        p=${p%/*}
        [[ $p == */* || -n ${rank[$p]+x} ]] || return 0
    done
}

status=0 files=0 arrows=0
while IFS= read -r -d '' f; do
    files=$((files + 1))
    room_of "$f"
    from=$REPLY
    if [[ -z $from ]]; then
        echo "$f: in no layer (add its folder to $layers)"
        status=1
        continue
    fi
    while IFS= read -r inc; do
        case $inc in
        '<mcp/'*) target=include/${inc:1:-1} ;;
        '"'*/*) target=src/${inc:1:-1} ;;
        '"'*) target=$(dirname "$f")/${inc:1:-1} ;;
        *) continue ;;
        esac
        [[ -f $target ]] || continue
        room_of "$target"
        to=$REPLY
        [[ $to == "$from" ]] && continue
        arrows=$((arrows + 1))
        if [[ -z $to ]]; then
            echo "$f includes $target, which is in no layer"
            status=1
        elif ((rank[$to] == rank[$from])); then
            echo "$f includes $target: $to is a room of the same layer as $from (a circle waiting to happen)"
            status=1
        elif ((rank[$to] > rank[$from])); then
            echo "$f includes $target: an arrow up, from $from (layer $((rank[$from]))) to $to (layer $((rank[$to])))"
            status=1
        fi
    done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*\([<"][^>"]*[>"]\).*/\1/p' "$f")
done < <(find src include -type f \( -name '*.c' -o -name '*.h' \) -print0 | sort -z)
echo "layers: $files files, $arrows includes between rooms, $n layers"
exit "$status"
