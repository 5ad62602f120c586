/* SPDX-License-Identifier: MIT */
/*
 * --log-format for the programs: every line they write on stderr as a log (not their
 * --help, nor usage errors) and every line of the library goes out as text (the default
 * of mcp and mcp-everything), logfmt (the default of mcp-gateway) or JSON, one line each.
 */
#ifndef MCP_PROGRAMS_LOG_FLAG_H
#define MCP_PROGRAMS_LOG_FLAG_H

#include <mcp/mcp.h>

/* The --help line of the flag. */
#define LOG_FORMAT_HELP                                                                            \
    "      --log-format FORMAT  text, logfmt or json: how log lines on stderr are\n"               \
    "                        written (one a line; logfmt and json with ts, level,\n"               \
    "                        source and msg)"

/* Sets the format named by arg; 0, or -1 after printing a usage error for prog. */
int log_format_flag(const char *prog, const char *arg);

/* One log line of the program (source: its name) in the format set. */
void prog_log(mcp_log_level level, const char *source, const char *fmt, ...) MCP_PRINTF(3, 4);

#endif
