/* SPDX-License-Identifier: MIT */
/*
 * Shared helpers for the integration tests; see harness.h.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <inttypes.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

long long harness_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int harness_left_ms(long long deadline)
{
    long long left = deadline - harness_now_ms();
    return left <= 0 ? 0 : left > 0x7fffffff ? 0x7fffffff : (int)left;
}

int harness_bin_path(const char *name, char *out, size_t size)
{
    const char *dir = getenv("MCP_BIN_DIR");
    if (dir == NULL || dir[0] == '\0')
        dir = "./bin";
    int n = snprintf(out, size, "%s/%s", dir, name);
    return (n < 0 || (size_t)n >= size) ? -1 : 0;
}

int harness_write_script(char *path, const char *body)
{
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    size_t len = strlen(body), off = 0;
    while (off < len) {
        ssize_t n = write(fd, body + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        off += (size_t)n;
    }
    if (close(fd) != 0 || off < len || chmod(path, 0700) != 0) {
        unlink(path);
        return -1;
    }
    return 0;
}

static int set_flags(int fd, int nonblock)
{
    int fl = fcntl(fd, F_GETFD);
    if (fl < 0 || fcntl(fd, F_SETFD, fl | FD_CLOEXEC) < 0)
        return -1;
    if (nonblock) {
        fl = fcntl(fd, F_GETFL);
        if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
            return -1;
    }
    return 0;
}

#define SETPRIV "/usr/bin/setpriv"

int harness_dying_argv(const char **out, size_t cap, const char *const argv[])
{
    size_t n = 0;
    if (access(SETPRIV, X_OK) == 0) {
        const char *const prefix[] = {SETPRIV, "--pdeathsig", "KILL", "--"};
        for (size_t i = 0; i < 4; i++) {
            if (n + 1 >= cap)
                return -1;
            out[n++] = prefix[i];
        }
    }
    for (size_t i = 0; argv[i] != NULL; i++) {
        if (n + 1 >= cap)
            return -1;
        out[n++] = argv[i];
    }
    out[n] = NULL;
    return 0;
}

int harness_spawn(harness_proc *p, const char *const argv[])
{
    int in[2] = {-1, -1}, out[2] = {-1, -1};
    posix_spawn_file_actions_t fa;
    int have_fa = 0;

    memset(p, 0, sizeof(*p));
    p->in_fd = -1;
    p->out_fd = -1;
    /* A child that died must show up as EPIPE on write, not kill the test. */
    signal(SIGPIPE, SIG_IGN);

    if (pipe(in) != 0 || pipe(out) != 0)
        goto fail;
    /* The parent's ends are close-on-exec and non-blocking; the child's ends
     * are dup2'd onto 0 and 1, which clears close-on-exec there. */
    if (set_flags(in[1], 1) != 0 || set_flags(out[0], 1) != 0 || set_flags(in[0], 0) != 0 ||
        set_flags(out[1], 0) != 0)
        goto fail;
    if (posix_spawn_file_actions_init(&fa) != 0)
        goto fail;
    have_fa = 1;
    if (posix_spawn_file_actions_adddup2(&fa, in[0], 0) != 0 ||
        posix_spawn_file_actions_adddup2(&fa, out[1], 1) != 0)
        goto fail;
    const char *args[80];
    if (harness_dying_argv(args, 80, argv) != 0 ||
        posix_spawn(&p->pid, args[0], &fa, NULL, (char *const *)args, environ) != 0) {
        p->pid = 0;
        goto fail;
    }
    posix_spawn_file_actions_destroy(&fa);
    close(in[0]);
    close(out[1]);
    p->in_fd = in[1];
    p->out_fd = out[0];
    return 0;

fail:
    if (have_fa)
        posix_spawn_file_actions_destroy(&fa);
    for (int i = 0; i < 2; i++) {
        if (in[i] >= 0)
            close(in[i]);
        if (out[i] >= 0)
            close(out[i]);
    }
    return -1;
}

/* Reads what is available on stdout into the buffer. Returns 0, or -1 on a
 * read error. Sets p->eof at end of file. */
static int fill(harness_proc *p)
{
    for (;;) {
        if (p->cap - p->len < 65536) {
            size_t ncap = p->cap ? p->cap * 2 : 131072;
            char *nbuf = realloc(p->buf, ncap);
            if (nbuf == NULL)
                return -1;
            p->buf = nbuf;
            p->cap = ncap;
        }
        ssize_t n = read(p->out_fd, p->buf + p->len, p->cap - p->len - 1);
        if (n > 0) {
            p->len += (size_t)n;
            continue;
        }
        if (n == 0) {
            p->eof = 1;
            return 0;
        }
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return 0;
        return -1;
    }
}

int harness_write(harness_proc *p, const void *data, size_t len, int timeout_ms)
{
    const char *d = data;
    long long deadline = harness_now_ms() + timeout_ms;

    if (p->in_fd < 0)
        return -1;
    while (len > 0) {
        ssize_t n = write(p->in_fd, d, len);
        if (n > 0) {
            d += n;
            len -= (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
            return -1;
        long long left = deadline - harness_now_ms();
        if (left <= 0)
            return -1;
        struct pollfd pfd[2] = {{.fd = p->in_fd, .events = POLLOUT},
                                {.fd = p->eof ? -1 : p->out_fd, .events = POLLIN}};
        int r = poll(pfd, 2, (int)left);
        if (r < 0 && errno != EINTR)
            return -1;
        if (r > 0 && (pfd[1].revents & (POLLIN | POLLHUP)) && fill(p) != 0)
            return -1;
        if (r > 0 && (pfd[0].revents & (POLLERR | POLLNVAL)))
            return -1;
    }
    return 0;
}

int harness_send_line(harness_proc *p, const char *line, int timeout_ms)
{
    long long deadline = harness_now_ms() + timeout_ms;
    if (harness_write(p, line, strlen(line), timeout_ms) != 0)
        return -1;
    long long left = deadline - harness_now_ms();
    return harness_write(p, "\n", 1, left > 0 ? (int)left : 1);
}

int harness_send_json(harness_proc *p, const json_t *msg, int timeout_ms)
{
    char *text = json_dumps(msg, JSON_COMPACT);
    if (text == NULL)
        return -1;
    int rc = harness_send_line(p, text, timeout_ms);
    free(text);
    return rc;
}

char *harness_read_line(harness_proc *p, int timeout_ms, size_t *len)
{
    long long deadline = harness_now_ms() + timeout_ms;

    for (;;) {
        char *nl = p->len ? memchr(p->buf, '\n', p->len) : NULL;
        if (nl != NULL) {
            size_t n = (size_t)(nl - p->buf);
            size_t used = n + 1; /* the line and its newline */
            char *line = malloc(n + 1);
            if (line == NULL)
                return NULL;
            memcpy(line, p->buf, n);
            line[n] = '\0';
            if (n > 0 && line[n - 1] == '\r')
                line[--n] = '\0';
            memmove(p->buf, p->buf + used, p->len - used);
            p->len -= used;
            if (len != NULL)
                *len = n;
            return line;
        }
        if (p->eof || p->out_fd < 0)
            return NULL;
        long long left = deadline - harness_now_ms();
        if (left <= 0)
            return NULL;
        struct pollfd pfd = {.fd = p->out_fd, .events = POLLIN};
        int r = poll(&pfd, 1, (int)left);
        if (r < 0 && errno != EINTR)
            return NULL;
        if (r > 0 && fill(p) != 0)
            return NULL;
    }
}

json_t *harness_read_json(harness_proc *p, int timeout_ms, char **bad_line)
{
    size_t n = 0;
    char *line = harness_read_line(p, timeout_ms, &n);
    if (bad_line != NULL)
        *bad_line = NULL;
    if (line == NULL)
        return NULL;
    json_error_t jerr;
    json_t *msg = json_loadb(line, n, 0, &jerr);
    if (msg == NULL && bad_line != NULL) {
        *bad_line = line;
        return NULL;
    }
    free(line);
    return msg;
}

void harness_close_stdin(harness_proc *p)
{
    if (p->in_fd >= 0) {
        close(p->in_fd);
        p->in_fd = -1;
    }
}

int harness_wait_exit(harness_proc *p, int timeout_ms, int *status)
{
    long long deadline = harness_now_ms() + timeout_ms;

    if (p->pid <= 0)
        return -1;
    /* The child's stdout closing is the event to wait for; the buffered
     * output is kept for the caller. */
    while (!p->eof && p->out_fd >= 0) {
        long long left = deadline - harness_now_ms();
        if (left <= 0)
            return -1;
        struct pollfd pfd = {.fd = p->out_fd, .events = POLLIN};
        int r = poll(&pfd, 1, (int)left);
        if (r < 0 && errno != EINTR)
            return -1;
        if (r > 0 && fill(p) != 0)
            return -1;
    }
    long long left = deadline - harness_now_ms();
    if (harness_wait_pid(p->pid, left > 0 ? (int)left : 0, status) != 0)
        return -1;
    p->pid = 0;
    return 0;
}

int harness_wait_pid(pid_t pid, int timeout_ms, int *status)
{
    long long deadline = harness_now_ms() + timeout_ms;
#ifdef SYS_pidfd_open
    int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pfd >= 0) {
        struct pollfd p = {.fd = pfd, .events = POLLIN};
        int r;
        do {
            long long left = deadline - harness_now_ms();
            r = poll(&p, 1, left > 0 ? (int)left : 0);
        } while (r < 0 && errno == EINTR);
        close(pfd);
        if (r <= 0)
            return -1;
        pid_t w;
        while ((w = waitpid(pid, status, 0)) < 0 && errno == EINTR)
            ;
        return w == pid ? 0 : -1;
    }
#endif
    /* No pidfd: check with short pauses, there is no other portable event. */
    for (;;) {
        pid_t r = waitpid(pid, status, WNOHANG);
        if (r == pid)
            return 0;
        if (r < 0 && errno != EINTR)
            return -1;
        if (harness_now_ms() >= deadline)
            return -1;
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

void harness_kill(harness_proc *p)
{
    harness_close_stdin(p);
    if (p->pid > 0) {
        int status;
        kill(p->pid, SIGKILL);
        while (waitpid(p->pid, &status, 0) < 0 && errno == EINTR)
            ;
        p->pid = 0;
    }
    if (p->out_fd >= 0) {
        close(p->out_fd);
        p->out_fd = -1;
    }
    free(p->buf);
    p->buf = NULL;
    p->len = p->cap = 0;
}

int harness_contains_ci(const char *haystack, const char *needle)
{
    if (haystack == NULL || needle == NULL)
        return 0;
    return strcasestr(haystack, needle) != NULL;
}

int harness_reserve(char **buf, size_t *cap, size_t len, size_t need)
{
    if (*cap - len > need)
        return 0;
    size_t ncap = *cap ? *cap : 4096;
    while (ncap - len <= need)
        ncap *= 2;
    char *nbuf = realloc(*buf, ncap);
    if (nbuf == NULL)
        return -1;
    *buf = nbuf;
    *cap = ncap;
    return 0;
}

void harness_cond_init_monotonic(pthread_cond_t *cv)
{
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(cv, &attr);
    pthread_condattr_destroy(&attr);
}

int harness_cond_wait_until(pthread_cond_t *cv, pthread_mutex_t *mu, long long deadline_ms)
{
    long long left = deadline_ms - harness_now_ms();
    if (left <= 0)
        return 0;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += left / 1000;
    ts.tv_nsec += (left % 1000) * 1000000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    pthread_cond_timedwait(cv, mu, &ts);
    return 1;
}

uint64_t harness_chaos_seed(void)
{
    const char *env = getenv("MCP_CHAOS_SEED");
    uint64_t seed;
    if (env != NULL && *env != '\0') {
        seed = strtoull(env, NULL, 0);
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        seed = (uint64_t)ts.tv_sec * 1000003u ^ (uint64_t)ts.tv_nsec;
    }
    printf("chaos: seed %" PRIu64 " (set MCP_CHAOS_SEED=%" PRIu64 " to replay)\n", seed, seed);
    fflush(stdout);
    return seed;
}

uint64_t harness_rand(uint64_t *state)
{
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return *state * 2685821657736338717ULL;
}

/* A port the kernel had free on 127.0.0.1 a moment ago, or -1. */
int harness_free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t n = sizeof a;
    int port = -1;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &n) == 0)
        port = ntohs(a.sin_port);
    close(fd);
    return port;
}
