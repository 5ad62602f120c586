/* SPDX-License-Identifier: MIT */
/*
 * The peer's advertised receive window, from the kernel's TCP_INFO. Apart from
 * conn.c because the field is only in the kernel's own struct (linux/tcp.h),
 * which cannot be included beside glibc's netinet/tcp.h (libuv's headers bring
 * that in).
 */
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <linux/tcp.h>

#include "http/tcp_info.h"

#ifndef SOL_TCP
#define SOL_TCP 6
#endif

int mcp__tcp_peer_window(int fd, uint32_t *window)
{
    struct tcp_info ti;
    socklen_t len = sizeof ti;
    if (getsockopt(fd, SOL_TCP, TCP_INFO, &ti, &len) != 0 ||
        len < offsetof(struct tcp_info, tcpi_snd_wnd) + sizeof ti.tcpi_snd_wnd)
        return -1; /* an older kernel (before 5.4) does not say */
    *window = ti.tcpi_snd_wnd;
    return 0;
}
