/*
 * What both halves of the mcp-gateway program share (see program.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>

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

void log_line(void *user, mcp_log_level level, const char *line)
{
    (void)user;
    struct timeval tv;
    gettimeofday(&tv, NULL);
    struct tm tm;
    gmtime_r(&tv.tv_sec, &tm);
    char ts[32];
    strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
    fprintf(stderr, "ts=%s.%03ldZ level=%s %s\n", ts, (long)(tv.tv_usec / 1000),
            mcp_log_level_name(level), line);
}
