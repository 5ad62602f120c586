/* SPDX-License-Identifier: MIT */
#include <stdio.h>

#include "http_metrics.h"

const char *const http_metrics_headers[] = {"Content-Type", "text/plain; version=0.0.4",
                                            "Cache-Control", "no-store", NULL};

void http_metric(char *buf, size_t size, size_t *n, const char *name, const char *type,
                 const char *help, unsigned long long value)
{
    if (*n >= size)
        return;
    int w = snprintf(buf + *n, size - *n, "# HELP %s %s\n# TYPE %s %s\n%s %llu\n", name, help, name,
                     type, name, value);
    if (w > 0)
        *n += (size_t)w < size - *n ? (size_t)w : size - *n;
}

void http_metrics_table(char *buf, size_t size, size_t *n, const http_metric_row *rows,
                        size_t count)
{
    for (size_t i = 0; i < count; i++)
        http_metric(buf, size, n, rows[i].name, rows[i].type, rows[i].help, rows[i].value);
}
