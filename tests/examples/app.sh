#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# examples/app.c: an MCP App over stdio, asked by the mcp client. The server declares the
# extension, its tool's listing links the view (_meta.ui.resourceUri, and the older flat
# key), the view reads as HTML of the apps' MIME type, and the tool converts (or refuses a
# temperature below absolute zero). The server's stderr (mcp's too) must hold no sanitizer
# report, since mcp does not pass on the server's exit status.
. "$(dirname "$0")/lib.sh"
APP=("$BIN/mcp" --json -- "$BIN/examples_app")
VIEW=ui://thermometer/view.html

out=$(timeout 60 "${APP[@]}" info 2>>"$TMP/app.err") || die "mcp info failed: $out"
expect "info" "$out" "io.modelcontextprotocol/ui"

out=$(timeout 60 "${APP[@]}" tools list 2>>"$TMP/app.err") || die "mcp tools list failed: $out"
expect "tools list" "$out" '"name": "to_fahrenheit"'
[[ $out =~ \"_meta\":\ \{[[:space:]]*\"ui\":\ \{[[:space:]]*\"resourceUri\":\ \"$VIEW\" ]] ||
    die "tools list: no _meta.ui.resourceUri $VIEW in: $out"
expect "tools list" "$out" "\"ui/resourceUri\": \"$VIEW\""

out=$(timeout 60 "$BIN/mcp" -- "$BIN/examples_app" resources list 2>>"$TMP/app.err") ||
    die "mcp resources list failed: $out"
expect "resources list" "$out" "$VIEW  thermometer  text/html;profile=mcp-app"
out=$(timeout 60 "${APP[@]}" resources read "$VIEW" 2>>"$TMP/app.err") ||
    die "mcp resources read failed: $out"
expect "resources read" "$out" '"mimeType": "text/html;profile=mcp-app"'
expect "resources read" "$out" '"prefersBorder": true'
out=$(timeout 60 "$BIN/mcp" -- "$BIN/examples_app" resources read "$VIEW" 2>>"$TMP/app.err") ||
    die "mcp resources read failed: $out"
[[ $out == '<!DOCTYPE html>'*"method: 'ui/initialize'"*'</html>' ]] ||
    die "resources read: expected the view's HTML document, got: $out"
say "the tool links its view, which reads as an HTML document of type text/html;profile=mcp-app"

out=$(timeout 60 "${APP[@]}" tools call to_fahrenheit celsius=100 2>>"$TMP/app.err") ||
    die "mcp tools call failed: $out"
expect "tools call" "$out" "100 °C is 212 °F"
expect "tools call" "$out" '"fahrenheit": 212'
out=$(timeout 60 "$BIN/mcp" -- "$BIN/examples_app" tools call to_fahrenheit celsius=-300 2>&1)
[ $? -eq 1 ] || die "below absolute zero: mcp should exit 1 (a tool error), it said: $out"
expect "below absolute zero" "$out" "must be at least -273.15"
if grep -E 'Sanitizer|runtime error' "$TMP/app.err" || [[ $out == *Sanitizer* ]]; then
    die "a sanitizer report from examples_app"
fi
say "to_fahrenheit converted 100 °C, and refused -300 °C"
