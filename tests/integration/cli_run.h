/* SPDX-License-Identifier: MIT */
/*
 * Runs a program to its end for the tests of the `mcp` command-line client:
 * mcp itself, and the tools a test needs around it (openssl). Each run is a
 * real process with stdin from /dev/null and its stdout and stderr on pipes,
 * bounded by a deadline; failures are cmocka failures.
 */
#ifndef MCP_TESTS_INTEGRATION_CLI_RUN_H
#define MCP_TESTS_INTEGRATION_CLI_RUN_H

/* How long one run of mcp may take. */
#define CR_MCP_DEADLINE_MS 20000

/* What one run printed, and how it ended. */
typedef struct cr_run {
    int status; /* exit status (127: it could not be started), or -1 when killed by a signal */
    char *out;  /* stdout, NUL-terminated */
    char *err;  /* stderr, NUL-terminated */
} cr_run;

/*
 * Runs argv (NULL-terminated; argv[0] is searched in PATH when it holds no
 * '/'), collecting stdout and stderr until both close. Fails the test when
 * the program has not finished within deadline_ms (it is killed then).
 */
void cr_run_program(cr_run *r, const char *const argv[], int deadline_ms);
/* The same with input (at most 4096 bytes) on its stdin, which then ends; NULL: /dev/null. */
void cr_run_program_input(cr_run *r, const char *const argv[], const char *input, int deadline_ms);
/* Runs $MCP_BIN_DIR/mcp with args (NULL-terminated, at most 30) within CR_MCP_DEADLINE_MS. */
void cr_run_mcp(cr_run *r, const char *const *args);
/* The same with input on its stdin (as cr_run_program_input). */
void cr_run_mcp_input(cr_run *r, const char *const *args, const char *input);
/* Frees what r holds and zeroes it. */
void cr_run_free(cr_run *r);

/*
 * A TCP socket bound to 127.0.0.1 on a port the kernel picks, not listening:
 * connections to it are refused while it is open, and the port is free again
 * once it is closed. Returns the socket; *port gets the port.
 */
int cr_bind_loopback(int *port);

/* The whole file at path (malloc'd, NUL-terminated), or "" when it cannot be read. */
char *cr_read_file(const char *path);

/* Fails, showing text, when text lacks needle; what names the text. */
void cr_expect_contains(const char *what, const char *text, const char *needle);
/* Fails, showing stdout and stderr, when the run did not exit with want. */
void cr_expect_status(const cr_run *r, int want);
/*
 * Runs mcp with args (as cr_run_mcp) and checks the run: the exit status,
 * stdout exactly when out is not NULL, and that stderr contains err_has when
 * it is not NULL.
 */
void cr_mcp_expect(const char *const *args, int status, const char *out, const char *err_has);
/*
 * Checks a run whose connect failed: the exit status, nothing on stdout, and
 * on stderr "mcp: cannot connect: " followed by why, naming the server as
 * "(server: URL)".
 */
void cr_expect_connect_failure(const cr_run *r, int status, const char *why, const char *url);
/*
 * Checks a run of `tools call long_running steps=N` (mcp-everything's tool,
 * N >= 2): exit status 0, the result on stdout, and the first and last
 * progress lines on stderr (not a terminal: one line each).
 */
void cr_expect_long_running(const cr_run *r, int steps);

#endif
