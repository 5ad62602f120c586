/* SPDX-License-Identifier: MIT */
/*
 * stdio_bench: a C driver for the stdio rows of bench/run, so that the server is what is
 * measured (a Node client driving a stdio server bounds the figure by its own cost). It
 * starts CMD ARGS... with pipes on its stdin and stdout (stderr inherited), initializes it
 * (protocol 2025-11-25) and sends notifications/initialized, then makes tools/call echo
 * round trips, DEPTH requests outstanding at a time (1: one after the other), for
 * SECONDS after 0.5 s of warm-up. Every answer is checked: one line, a result, the id of
 * a request in flight. Then it prints one line that bench/run parses:
 *
 *   BENCH round_trips=N seconds=S per_s=R mean_us=M server_cpu_us_per_req=C depth=D
 *
 * where C is the server process's user and system CPU (from /proc/PID/stat) over the
 * measured round trips, divided by their number. Then it closes the server's stdin and
 * waits for it (SIGKILL after 5 s).
 *
 * Usage: stdio_bench SECONDS DEPTH -- CMD [ARGS...]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pid_t child;
static int to_child = -1, from_child = -1;
static char inbuf[1 << 20];
static size_t inlen;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *fmt, const char *arg)
{
    fprintf(stderr, "stdio_bench: ");
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    if (child > 0)
        kill(child, SIGKILL);
    exit(1);
}

static long cpu_ticks(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        die("cannot read %s", path);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    long utime = 0, stime = 0;
    /* After ") ": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
     * utime stime (fields 3 to 15). */
    if (p == NULL ||
        sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %ld %ld", &utime, &stime) != 2)
        die("cannot parse %s", path);
    return utime + stime;
}

static void send_all(const char *s, size_t len)
{
    while (len > 0) {
        ssize_t w = write(to_child, s, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            die("the server's stdin closed%s", "");
        s += w;
        len -= (size_t)w;
    }
}

/* The next line from the server (NUL-terminated in inbuf, moved out on the next call),
 * within 10 s. */
static char *next_line(size_t *consumed)
{
    for (;;) {
        char *nl = memchr(inbuf, '\n', inlen);
        if (nl != NULL) {
            *nl = '\0';
            *consumed = (size_t)(nl - inbuf) + 1;
            return inbuf;
        }
        if (inlen == sizeof inbuf)
            die("a line longer than %s", "1 MiB");
        struct pollfd p = {.fd = from_child, .events = POLLIN};
        int r = poll(&p, 1, 10000);
        if (r == 0)
            die("no answer in %s", "10 s");
        if (r < 0 && errno == EINTR)
            continue;
        ssize_t n = read(from_child, inbuf + inlen, sizeof inbuf - inlen);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            die("the server's stdout ended%s", "");
        inlen += (size_t)n;
    }
}

static void drop_line(size_t consumed)
{
    memmove(inbuf, inbuf + consumed, inlen - consumed);
    inlen -= consumed;
}

/* Reads lines until an answer (a line with "id"); checks it has a result. Returns its id. */
static long read_answer(void)
{
    for (;;) {
        size_t used;
        char *line = next_line(&used);
        char *id = strstr(line, "\"id\":");
        if (id == NULL) { /* a notification */
            drop_line(used);
            continue;
        }
        if (strstr(line, "\"result\"") == NULL)
            die("an answer without a result: %.300s", line);
        long v = strtol(id + 5, NULL, 10);
        drop_line(used);
        return v;
    }
}

static void send_echo(long id)
{
    char req[256];
    int n = snprintf(req, sizeof req,
                     "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tools/call\",\"params\":"
                     "{\"name\":\"echo\",\"arguments\":{\"text\":\"hello\"}}}\n",
                     id);
    send_all(req, (size_t)n);
}

/* Round trips for `seconds`, depth in flight: how many were answered. */
static long run(double seconds, int depth, long *next_id)
{
    long inflight = 0, done = 0;
    double end = now_s() + seconds;
    for (int i = 0; i < depth; i++, inflight++)
        send_echo((*next_id)++);
    while (inflight > 0) {
        long id = read_answer();
        if (id <= 0 || id >= *next_id)
            die("an answer to no request in flight%s", "");
        inflight--;
        done++;
        if (now_s() < end) {
            send_echo((*next_id)++);
            inflight++;
        }
    }
    return done;
}

int main(int argc, char **argv)
{
    if (argc < 5 || strcmp(argv[3], "--") != 0) {
        fprintf(stderr, "usage: stdio_bench SECONDS DEPTH -- CMD [ARGS...]\n");
        return 2;
    }
    double seconds = atof(argv[1]);
    int depth = atoi(argv[2]);
    if (seconds <= 0 || depth < 1 || depth > 1024) {
        fprintf(stderr, "stdio_bench: SECONDS > 0 and DEPTH 1 to 1024\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0)
        die("pipe: %s", strerror(errno));
    child = fork();
    if (child < 0)
        die("fork: %s", strerror(errno));
    if (child == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[0]), close(in[1]), close(out[0]), close(out[1]);
        execvp(argv[4], argv + 4);
        fprintf(stderr, "stdio_bench: cannot run %s: %s\n", argv[4], strerror(errno));
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    to_child = in[1];
    from_child = out[0];

    const char *init = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
                       "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
                       "\"clientInfo\":{\"name\":\"stdio_bench\",\"version\":\"0\"}}}\n";
    send_all(init, strlen(init));
    if (read_answer() != 0)
        die("initialize was not answered%s", "");
    const char *note = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";
    send_all(note, strlen(note));

    long next_id = 1;
    run(0.5, depth, &next_id); /* warm-up */
    long c0 = cpu_ticks(child);
    double t0 = now_s();
    long n = run(seconds, depth, &next_id);
    double secs = now_s() - t0;
    long c1 = cpu_ticks(child);
    long hz = sysconf(_SC_CLK_TCK);
    printf("BENCH round_trips=%ld seconds=%.3f per_s=%.0f mean_us=%.1f "
           "server_cpu_us_per_req=%.1f depth=%d\n",
           n, secs, (double)n / secs, secs * 1e6 / (double)n * depth,
           (double)(c1 - c0) * 1e6 / (double)hz / (double)n, depth);
    fflush(stdout);

    close(to_child);
    for (int i = 0; i < 500; i++) {
        int st;
        if (waitpid(child, &st, WNOHANG) == child)
            return 0;
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    return 0;
}
