/* SPDX-License-Identifier: MIT */
/*
 * Bytes from the operating system's random source.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include "util.h"

static int read_urandom(unsigned char *p, size_t n)
{
    int fd;
    do {
        fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return MCP_EIO;
    while (n > 0) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            close(fd);
            return MCP_EIO;
        }
        p += r;
        n -= (size_t)r;
    }
    close(fd);
    return MCP_OK;
}

int mcp__random_bytes(void *buf, size_t n)
{
    unsigned char *p = buf;
    while (n > 0) {
        /* getrandom returns at most 32 MiB per call and may be interrupted by a signal
         * once it has been asked for more than 256 bytes, so loop over short reads. */
        ssize_t r = getrandom(p, n, 0);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            /* Kernels before 3.17 (ENOSYS) or seccomp filters (EPERM) leave only the
             * device. */
            if (errno == ENOSYS || errno == EPERM)
                return read_urandom(p, n);
            return MCP_EIO;
        }
        p += r;
        n -= (size_t)r;
    }
    return MCP_OK;
}
