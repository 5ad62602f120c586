#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# GET /metrics as Prometheus reads it: mcp-everything (the library's route,
# mcp_http_metrics_route) and mcp-gateway (its own families before the library's) answer
# with text that a strict parser of the text exposition format 0.0.4 accepts, as promtool
# check metrics would: HELP and TYPE at most once per family and before its samples, a
# family's samples together, names and labels of the allowed characters, label values
# quoted and escaped, values that are numbers, no series twice, counters named *_total,
# the last line ended. The figures move with traffic, and the parser refuses what it
# must (its own check, on planted faults). Usage: prometheus.sh BIN_DIR.
. "$(dirname "$0")/../examples/lib.sh"

# check_exposition FILE: the parser; prints what is wrong and fails, or prints the number
# of families and samples.
check_exposition() {
    [ -s "$1" ] || { echo "empty"; return 1; }
    [ "$(tail -c1 "$1" | od -An -c | tr -d ' ')" = '\n' ] || { echo "the last line is not ended"; return 1; }
    LC_ALL=C awk '
    function fail(msg) { print "line " NR ": " msg ": " $0; bad = 1; exit 1 }
    function family_of(name,   f) {
        f = name
        if (!(f in type)) for (s in suffixes) if (substr(name, length(name) - length(s) + 1) == s && substr(name, 1, length(name) - length(s)) in type) { f = substr(name, 1, length(name) - length(s)); break }
        return f
    }
    BEGIN { suffixes["_sum"]; suffixes["_count"]; suffixes["_bucket"]; name_re = "^[a-zA-Z_:][a-zA-Z0-9_:]*$" }
    /^$/ { next }
    /^#/ {
        if ($2 == "HELP" || $2 == "TYPE") {
            if (NF < 3 || $3 !~ name_re) fail("a " $2 " line without a valid metric name")
            if ($2 == "HELP") { if ($3 in help) fail("a second HELP for " $3); help[$3] = 1; if (NF < 4) fail("an empty HELP") }
            else {
                if ($3 in type) fail("a second TYPE for " $3)
                if ($3 in seen) fail("TYPE after samples of " $3)
                if (NF != 4 || $4 !~ /^(counter|gauge|histogram|summary|untyped)$/) fail("an unknown type")
                type[$3] = $4
                if ($4 == "counter" && $3 !~ /_total$/) fail("a counter not named *_total")
            }
            if (current != "" && $3 != current && ($3 in closed)) fail("family " $3 " comes back")
            if ($3 != current) { if (current != "") closed[current] = 1; current = $3 }
        }
        next
    }
    {
        line = $0
        if (!match(line, /^[a-zA-Z_:][a-zA-Z0-9_:]*/)) fail("a sample without a valid name")
        name = substr(line, 1, RLENGTH); rest = substr(line, RLENGTH + 1); labels = ""
        if (substr(rest, 1, 1) == "{") {
            if (!match(rest, /^\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\[\\"n])*")(,[a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\[\\"n])*")*,?\}/)) fail("malformed labels")
            labels = substr(rest, 1, RLENGTH); rest = substr(rest, RLENGTH + 1)
        }
        if (rest !~ /^ [^ ]+( -?[0-9]+)?$/) fail("not one value (and a timestamp) after the series")
        split(substr(rest, 2), v, " ")
        if (v[1] !~ /^[-+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+)?$/ && v[1] !~ /^([-+]?Inf|NaN)$/) fail("a value that is not a number")
        f = family_of(name)
        if (!(f in type)) fail("a sample of " name " before (or without) its TYPE")
        if (!(f in help)) fail("no HELP for " f)
        if (f != current) { if (f in closed || f in seen) fail("samples of " f " apart from the others"); if (current != "") closed[current] = 1; current = f }
        seen[f] = 1
        if ((name labels) in series) fail("the series " name labels " twice")
        series[name labels] = 1; samples++
    }
    END { if (!bad) { n = 0; for (t in type) n++; print n " families, " samples " samples" } }
    ' "$1"
}

# The parser's own check: each planted fault must be refused.
good='# HELP a_total A.\n# TYPE a_total counter\na_total{x="1"} 3\na_total{x="2"} 4\n# HELP g G.\n# TYPE g gauge\ng 1.5e3\n'
printf "$good" >"$TMP/good.prom"
check_exposition "$TMP/good.prom" >/dev/null || die "the parser refuses a good exposition: $(check_exposition "$TMP/good.prom")"
i=0
for fault in '# HELP a A.\n# TYPE a counter\na 1\n' \
    '# HELP g G.\ng 1\n# TYPE g gauge\n' \
    '# HELP g G.\n# TYPE g gauge\ng one\n' \
    '# HELP g G.\n# TYPE g gauge\ng{x=1} 1\n' \
    '# HELP g G.\n# TYPE g gauge\ng 1\ng 2\n' \
    '# HELP g G.\n# TYPE g gauge\ng{x="1"} 1\n# HELP h H.\n# TYPE h gauge\nh 1\ng{x="2"} 1\n' \
    '# TYPE g gauge\ng 1\n' \
    '# HELP 9g G.\n# TYPE 9g gauge\n9g 1\n' \
    '# HELP g G.\n# TYPE g gauge\ng 1'; do
    i=$((i + 1))
    printf "$fault" >"$TMP/bad$i.prom"
    check_exposition "$TMP/bad$i.prom" >/dev/null && die "the parser accepts planted fault $i: $(cat "$TMP/bad$i.prom")"
done
say "the parser accepts a good exposition and refuses $i planted faults"

# fetch NAME URL: GET URL/metrics into $TMP/NAME.prom, checking status and Content-Type.
fetch() {
    local base=${2%/mcp} code
    code=$(curl -sS --max-time 30 -D "$TMP/$1.headers" -o "$TMP/$1.prom" -w '%{http_code}' "$base/metrics") ||
        die "GET $base/metrics failed"
    [ "$code" = 200 ] || die "GET $base/metrics: HTTP $code"
    grep -qi '^Content-Type: text/plain; version=0.0.4' "$TMP/$1.headers" ||
        die "GET $base/metrics: $(grep -i '^Content-Type' "$TMP/$1.headers")"
    out=$(check_exposition "$TMP/$1.prom") || die "$1's /metrics is not valid: $out"
}
value() { awk -v n="$1" '$1 == n { print $2 }' "$2"; }

start everything "$BIN/mcp-everything" --http 127.0.0.1:0
fetch before "$URL"
sent0=$(value mcp_http_messages_sent_total "$TMP/before.prom")
for i in 1 2 3; do
    timeout 60 "$BIN/mcp" "$URL" tools call echo text=metrics-$i >/dev/null 2>>"$TMP/mcp.err" || die "mcp tools call echo failed"
done
fetch after "$URL"
say "mcp-everything: $out"
sent1=$(value mcp_http_messages_sent_total "$TMP/after.prom")
[ -n "$sent0" ] && [ -n "$sent1" ] && [ "$sent1" -ge $((sent0 + 3)) ] ||
    die "mcp_http_messages_sent_total went from '$sent0' to '$sent1' over three calls"
rss=$(value process_resident_memory_bytes "$TMP/after.prom")
[ -n "$rss" ] && [ "$rss" -gt 1000000 ] || die "process_resident_memory_bytes is '$rss'"
grep -q '^process_cpu_seconds_total [0-9]' "$TMP/after.prom" || die "no process_cpu_seconds_total"
grep -q '^mcp_http_auth_requests_total{outcome="passed"} ' "$TMP/after.prom" || die "no authorization outcomes"
say "mcp-everything: messages sent $sent0 -> $sent1 over three calls, resident memory $rss bytes"
stop "mcp-everything" "$PID"

start gateway "$BIN/mcp-gateway" --http 127.0.0.1:0 -- "$BIN/mcp-everything" --stdio
timeout 60 "$BIN/mcp" "$URL" tools call echo text=through >/dev/null 2>>"$TMP/mcp.err" || die "mcp through the gateway failed"
fetch gateway "$URL"
say "mcp-gateway: $out"
req=$(value mcp_gateway_requests_total "$TMP/gateway.prom")
[ -n "$req" ] && [ "$req" -ge 1 ] || die "mcp_gateway_requests_total is '$req' after a call"
grep -q '^mcp_http_streams_total ' "$TMP/gateway.prom" || die "the gateway's /metrics lacks the endpoint's families"
stop "mcp-gateway" "$PID"
say "mcp-gateway: $req requests counted, the endpoint's and the process's families after its own"
