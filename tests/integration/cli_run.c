/* SPDX-License-Identifier: MIT */
/*
 * Runs a program to its end, collecting what it prints: see cli_run.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli_run.h"
#include "harness.h"

#define MAX_MCP_ARGS 30

void cr_run_free(cr_run *r)
{
    free(r->out);
    free(r->err);
    memset(r, 0, sizeof *r);
}

static void buf_add(char **buf, size_t *len, const char *data, size_t n)
{
    char *grown = realloc(*buf, *len + n + 1);
    assert_non_null(grown);
    memcpy(grown + *len, data, n);
    *len += n;
    grown[*len] = '\0';
    *buf = grown;
}

int cr_bind_loopback(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    socklen_t len = sizeof sa;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
    *port = ntohs(sa.sin_port);
    return fd;
}

char *cr_read_file(const char *path)
{
    FILE *f = fopen(path, "r");
    char *text = NULL;
    size_t len = 0;
    buf_add(&text, &len, "", 0);
    if (f == NULL)
        return text;
    char chunk[1024];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0)
        buf_add(&text, &len, chunk, got);
    fclose(f);
    return text;
}

void cr_run_program_input(cr_run *r, const char *const argv[], const char *input, int deadline_ms)
{
    int outp[2], errp[2], inp[2] = {-1, -1};
    assert_int_equal(pipe2(outp, O_CLOEXEC), 0);
    assert_int_equal(pipe2(errp, O_CLOEXEC), 0);
    /* The whole input fits in the pipe, so it is written before the program reads. */
    assert_true(input == NULL || strlen(input) <= 4096);
    if (input != NULL)
        assert_int_equal(pipe2(inp, O_CLOEXEC), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int in = input != NULL ? inp[0] : open("/dev/null", O_RDONLY);
        if (in < 0 || dup2(in, 0) < 0 || dup2(outp[1], 1) < 0 || dup2(errp[1], 2) < 0)
            _exit(127);
        /* It dies with the thread that started it, whatever becomes of the test. */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
            _exit(127);
        execvp(argv[0], (char *const *)argv);
        /* Only async-signal-safe calls in a child forked from a threaded test. */
        static const char msg[] = "cannot run the program (exec failed): ";
        if (write(2, msg, sizeof msg - 1) < 0 || write(2, argv[0], strlen(argv[0])) < 0 ||
            write(2, "\n", 1) < 0)
            _exit(127);
        _exit(127);
    }
    close(outp[1]);
    close(errp[1]);
    if (input != NULL) {
        close(inp[0]);
        size_t len = strlen(input);
        assert_true(write(inp[1], input, len) == (ssize_t)len);
        close(inp[1]);
    }

    memset(r, 0, sizeof *r);
    size_t outlen = 0, errlen = 0;
    buf_add(&r->out, &outlen, "", 0);
    buf_add(&r->err, &errlen, "", 0);
    struct pollfd fds[2] = {{.fd = outp[0], .events = POLLIN}, {.fd = errp[0], .events = POLLIN}};
    long long deadline = harness_now_ms() + deadline_ms;
    int open_fds = 2;
    while (open_fds > 0) {
        long long left = deadline - harness_now_ms();
        if (left <= 0)
            break;
        int k = poll(fds, 2, (int)left);
        if (k < 0 && errno == EINTR)
            continue;
        assert_true(k >= 0);
        for (int i = 0; i < 2; i++) {
            if (fds[i].fd < 0 || fds[i].revents == 0)
                continue;
            char chunk[4096];
            ssize_t got = read(fds[i].fd, chunk, sizeof chunk);
            if (got > 0) {
                if (i == 0)
                    buf_add(&r->out, &outlen, chunk, (size_t)got);
                else
                    buf_add(&r->err, &errlen, chunk, (size_t)got);
            } else if (got == 0 || errno != EINTR) {
                close(fds[i].fd);
                fds[i].fd = -1;
                open_fds--;
            }
        }
    }
    bool late = open_fds > 0;
    for (int i = 0; i < 2; i++) {
        if (fds[i].fd >= 0)
            close(fds[i].fd);
    }
    if (late)
        kill(pid, SIGKILL);
    int wstatus;
    assert_int_equal(waitpid(pid, &wstatus, 0), pid);
    if (late)
        fail_msg("%s did not finish within %d ms; stderr so far:\n%s", argv[0], deadline_ms,
                 r->err);
    r->status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1;
}

void cr_run_program(cr_run *r, const char *const argv[], int deadline_ms)
{
    cr_run_program_input(r, argv, NULL, deadline_ms);
}

void cr_run_mcp_input(cr_run *r, const char *const *args, const char *input)
{
    static char mcp_path[4096];
    assert_int_equal(harness_bin_path("mcp", mcp_path, sizeof mcp_path), 0);
    const char *argv[MAX_MCP_ARGS + 2];
    size_t n = 0;
    argv[n++] = mcp_path;
    for (; args[n - 1] != NULL; n++) {
        assert_true(n <= MAX_MCP_ARGS);
        argv[n] = args[n - 1];
    }
    argv[n] = NULL;
    cr_run_program_input(r, argv, input, CR_MCP_DEADLINE_MS);
}

void cr_run_mcp(cr_run *r, const char *const *args)
{
    cr_run_mcp_input(r, args, NULL);
}

void cr_expect_contains(const char *what, const char *text, const char *needle)
{
    if (strstr(text, needle) == NULL)
        fail_msg("%s lacks \"%s\":\n%s", what, needle, text);
}

void cr_expect_status(const cr_run *r, int want)
{
    if (r->status != want)
        fail_msg("exit status %d, expected %d\nstdout:\n%s\nstderr:\n%s", r->status, want, r->out,
                 r->err);
}

void cr_expect_long_running(const cr_run *r, int steps)
{
    char want[64];
    cr_expect_status(r, 0);
    snprintf(want, sizeof want, "completed %d steps", steps);
    cr_expect_contains("stdout", r->out, want);
    snprintf(want, sizeof want, "progress 1/%d (%d%%)", steps, (100 + steps / 2) / steps);
    cr_expect_contains("stderr", r->err, want);
    snprintf(want, sizeof want, "progress %d/%d (100%%)", steps, steps);
    cr_expect_contains("stderr", r->err, want);
}

void cr_mcp_expect(const char *const *args, int status, const char *out, const char *err_has)
{
    cr_run r;
    cr_run_mcp(&r, args);
    cr_expect_status(&r, status);
    if (out != NULL && strcmp(r.out, out) != 0)
        fail_msg("stdout is not \"%s\":\n%s\nstderr:\n%s", out, r.out, r.err);
    if (err_has != NULL)
        cr_expect_contains("stderr", r.err, err_has);
    cr_run_free(&r);
}

void cr_expect_connect_failure(const cr_run *r, int status, const char *why, const char *url)
{
    char want[512];
    cr_expect_status(r, status);
    if (r->out[0] != '\0')
        fail_msg("a failed connect printed on stdout:\n%s", r->out);
    snprintf(want, sizeof want, "mcp: cannot connect: %s", why);
    cr_expect_contains("stderr", r->err, want);
    snprintf(want, sizeof want, "(server: %s)\n", url);
    cr_expect_contains("stderr", r->err, want);
}
