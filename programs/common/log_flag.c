/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stdio.h>

#include "log_flag.h"

int log_format_flag(const char *prog, const char *arg)
{
    int f = mcp_log_format_parse(arg);
    if (f < 0 || mcp_log_set_format((mcp_log_format)f) != MCP_OK) {
        fprintf(stderr, "%s: --log-format needs text, logfmt or json, not '%s'\n", prog, arg);
        return -1;
    }
    return 0;
}

void prog_log(mcp_log_level level, const char *source, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    mcp_log_write(level, source, msg, NULL);
}
