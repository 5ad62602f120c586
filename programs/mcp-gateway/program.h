/* SPDX-License-Identifier: MIT */
/*
 * What both halves of the mcp-gateway program share (main.c: a stdio server over
 * HTTP; connect.c: a remote server on stdio).
 */
#ifndef MCP_GATEWAY_PROGRAM_H
#define MCP_GATEWAY_PROGRAM_H

#include <mcp/mcp.h>

#define NAME "mcp-gateway"

/* A usage error on stderr ("mcp-gateway: ..." and where to find the help). */
void usage_error(const char *fmt, ...) MCP_PRINTF(1, 2);
/* One log line of the gateway on stderr, as logfmt with a UTC timestamp first. */
void log_line(void *user, mcp_log_level level, const char *line);
/* --log-format: the format of every line on stderr (log_line's, the library's, the
 * program's). 0, or a usage error was printed. Without it, log_line writes logfmt and the
 * rest is text, as before the flag. */
int parse_log_format_flag(const char *arg);
#define GATEWAY_LOG_FORMAT_HELP                                                                    \
    "      --log-format FORMAT  text, logfmt or json for every line on stderr (one a\n"            \
    "                        line; logfmt and json with ts, level, source and msg);\n"             \
    "                        without it, event lines are logfmt and the rest text\n"
/* The flags both halves take: a byte count from 1024 to 1 GiB named flag, and
 * --log-level. 0, or a usage error was printed. */
int parse_bytes_flag(const char *flag, const char *arg, size_t *out);
int parse_log_level_flag(const char *arg, mcp_log_level *out);
/* --version's line on stdout. */
void print_version(void);

#endif
