/* SPDX-License-Identifier: MIT */
/*
 * What both halves of the mcp-gateway program share (see program.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>

#include "http_flags.h"
#include "log_flag.h"
#include "program.h"

void usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", NAME);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry '%s --help' for more information.\n", NAME);
}

int log_format_given;

int parse_log_format_flag(const char *arg)
{
    if (log_format_flag(NAME, arg) != 0)
        return -1;
    log_format_given = 1;
    return 0;
}

void log_line(void *user, mcp_log_level level, const char *line)
{
    (void)user;
    if (log_format_given) {
        mcp_log_write(level, NULL, NULL, line);
        return;
    }
    /* Without --log-format: logfmt, as the gateway always wrote its lines. */
    struct timeval tv;
    gettimeofday(&tv, NULL);
    struct tm tm;
    gmtime_r(&tv.tv_sec, &tm);
    char ts[32];
    strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
    fprintf(stderr, "ts=%s.%03ldZ level=%s %s\n", ts, (long)(tv.tv_usec / 1000),
            mcp_log_level_name(level), line);
}

int parse_bytes_flag(const char *flag, const char *arg, size_t *out)
{
    int v;
    if (http_flags_parse_int(arg, 1024, 1 << 30, &v) != 0) {
        usage_error("%s needs a byte count from 1024 to 1073741824, not '%s'", flag, arg);
        return -1;
    }
    *out = (size_t)v;
    return 0;
}

int parse_log_level_flag(const char *arg, mcp_log_level *out)
{
    int v = mcp_log_level_parse(arg);
    if (v < 0) {
        usage_error("--log-level needs debug, info, notice, warning, error, critical, alert or "
                    "emergency, not '%s'",
                    arg);
        return -1;
    }
    *out = (mcp_log_level)v;
    return 0;
}

void print_version(void)
{
    printf("%s %s (libmcp %s, MCP protocol %s)\n", NAME, MCP_VERSION_STRING, MCP_VERSION_STRING,
           MCP_PROTOCOL_LATEST);
}
