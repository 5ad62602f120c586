/* SPDX-License-Identifier: MIT */
/*
 * stdio_floor: the floor of the stdio rows of bench/run, as nginx is the floor of the HTTP
 * rows. It is no MCP server: it reads newline-delimited lines from stdin and answers each
 * line that has an "id" with one fixed result line carrying that id, the size of an echo
 * answer, written with one write per read. What stdio_bench measures against it is the cost
 * of a round trip through two pipes on this machine (two writes, two reads, two wake-ups),
 * which no stdio server can go below.
 *
 * Usage: stdio_bench SECONDS DEPTH -- stdio_floor
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char in[1 << 16], out[1 << 17];

static int write_all(const char *s, size_t len)
{
    while (len > 0) {
        ssize_t w = write(1, s, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        s += w;
        len -= (size_t)w;
    }
    return 0;
}

int main(void)
{
    size_t len = 0;
    for (;;) {
        ssize_t n = read(0, in + len, sizeof in - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return 0;
        len += (size_t)n;
        char *line = in, *nl;
        size_t olen = 0;
        while ((nl = memchr(line, '\n', (size_t)(in + len - line))) != NULL) {
            *nl = '\0';
            char *id = strstr(line, "\"id\":");
            if (id != NULL) {
                id += 5;
                size_t idlen = strcspn(id, ",}");
                int w = snprintf(out + olen, sizeof out - olen,
                                 "{\"jsonrpc\":\"2.0\",\"id\":%.*s,\"result\":{\"content\":"
                                 "[{\"type\":\"text\",\"text\":\"hello\"}]}}\n",
                                 (int)idlen, id);
                if (w < 0 || (size_t)w >= sizeof out - olen)
                    return 1;
                olen += (size_t)w;
            }
            line = nl + 1;
        }
        if (olen > 0 && write_all(out, olen) != 0)
            return 1;
        len = (size_t)(in + len - line);
        memmove(in, line, len);
        if (len == sizeof in)
            return 1; /* a line longer than the buffer: not a bench of ours */
    }
}
