/* SPDX-License-Identifier: MIT */
/*
 * Shared helpers for the integration tests: a child process with pipes to its
 * stdin and stdout, deadline-bounded line reads and writes, and the location
 * of the programs under test ($MCP_BIN_DIR).
 *
 * Every wait here has a deadline; nothing sleeps to synchronise. The helpers
 * are plain functions that report failure by return value, so tests decide
 * what to assert.
 */
#ifndef MCP_TESTS_INTEGRATION_HARNESS_H
#define MCP_TESTS_INTEGRATION_HARNESS_H

#include <jansson.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A spawned child with its stdin and stdout on pipes; stderr is inherited. */
typedef struct harness_proc {
    pid_t pid;  /* 0 once reaped */
    int in_fd;  /* write end of the child's stdin, -1 once closed */
    int out_fd; /* read end of the child's stdout, -1 once closed */
    char *buf;  /* bytes read from stdout and not yet returned as lines */
    size_t len;
    size_t cap;
    int eof; /* the child closed its stdout */
} harness_proc;

/* Monotonic clock in milliseconds. */
long long harness_now_ms(void);
/* Milliseconds left until deadline (harness_now_ms() clock), 0 once passed, for poll(). */
int harness_left_ms(long long deadline);

/*
 * Writes "$MCP_BIN_DIR/name" into out. MCP_BIN_DIR unset falls back to
 * "./bin". Returns 0, or -1 when it does not fit.
 */
int harness_bin_path(const char *name, char *out, size_t size);
/* A port the kernel had free on 127.0.0.1 a moment ago, or -1. */
int harness_free_port(void);

/*
 * Writes body into a new executable file named after path, a mkstemp() template
 * ("/tmp/name-XXXXXX") that gets the file's name: a scripted peer to spawn. The
 * caller unlinks it. Returns 0, or -1 (nothing is left behind).
 */
int harness_write_script(char *path, const char *body);

/*
 * Copies argv (NULL-terminated) into out (room for cap pointers, the NULL
 * included), behind "setpriv --pdeathsig KILL --" where util-linux has it: the
 * program then gets SIGKILL when the thread that started it dies (a crash,
 * CTest's timeout), so no test leaves a process behind whatever its outcome.
 * Returns 0, or -1 when out is too small. Start such programs from a thread
 * that outlives them (the test's own).
 */
int harness_dying_argv(const char **out, size_t cap, const char *const argv[]);

/*
 * Starts argv[0] (a path) with argv, stdin and stdout on pipes, dying with the
 * calling thread (harness_dying_argv). Ignores
 * SIGPIPE in this process so a dead child shows up as EPIPE. Returns 0 or -1.
 */
int harness_spawn(harness_proc *p, const char *const argv[]);

/*
 * Writes all of data to the child's stdin within timeout_ms, reading its
 * stdout meanwhile into the line buffer so that neither side can block the
 * other. Returns 0, or -1 on timeout or error.
 */
int harness_write(harness_proc *p, const void *data, size_t len, int timeout_ms);
/* Writes line and a newline. */
int harness_send_line(harness_proc *p, const char *line, int timeout_ms);
/* Serialises msg compactly and writes it as one line. msg is borrowed. */
int harness_send_json(harness_proc *p, const json_t *msg, int timeout_ms);

/*
 * Returns the next line of the child's stdout without its newline (malloc'd,
 * NUL-terminated; *len gets its length when len is not NULL), or NULL when
 * none is complete within timeout_ms or the child closed stdout.
 */
char *harness_read_line(harness_proc *p, int timeout_ms, size_t *len);
/*
 * Reads the next line and parses it as JSON. Returns a new reference, or NULL
 * on timeout, EOF or a line that is not JSON (then *bad_line, when not NULL,
 * gets the malloc'd line for the failure message).
 */
json_t *harness_read_json(harness_proc *p, int timeout_ms, char **bad_line);

/* Closes the child's stdin (EOF for the child). */
void harness_close_stdin(harness_proc *p);
/*
 * Waits up to timeout_ms for the child to close stdout and exit, and reaps
 * it. *status gets the waitpid status. Returns 0, or -1 on timeout.
 */
int harness_wait_exit(harness_proc *p, int timeout_ms, int *status);
/*
 * Waits up to timeout_ms (0: just looks) for the child pid to exit and reaps
 * it; *status gets the waitpid status. Returns 0, or -1 when it has not exited
 * in time. It waits on a pidfd where the kernel has them.
 */
int harness_wait_pid(pid_t pid, int timeout_ms, int *status);
/* Kills (SIGKILL) and reaps the child if still there, closes pipes, frees. */
void harness_kill(harness_proc *p);

/* Case-insensitive substring test; NULL arguments give 0. */
int harness_contains_ci(const char *haystack, const char *needle);

/* Grows *buf (capacity *cap, len bytes used) so that more than need bytes are
 * free after len. Returns 0, or -1 on ENOMEM (*buf unchanged). */
int harness_reserve(char **buf, size_t *cap, size_t len, size_t need);

/* ---- Threads and waits ---- */

/* Initialises cv on the monotonic clock, the clock of every deadline here. */
void harness_cond_init_monotonic(pthread_cond_t *cv);
/*
 * Waits on cv (mu held) until deadline_ms (harness_now_ms() clock). Returns 0
 * when the deadline had passed already (the caller stops waiting), 1 otherwise.
 */
int harness_cond_wait_until(pthread_cond_t *cv, pthread_mutex_t *mu, long long deadline_ms);

/* ---- Chaos ---- */

/* The seed of a chaos test, printed: $MCP_CHAOS_SEED when set (to replay a run),
 * else taken from the clock. */
uint64_t harness_chaos_seed(void);
/* xorshift64*: small, fast and reproducible from its state (never 0). */
uint64_t harness_rand(uint64_t *state);

#endif
