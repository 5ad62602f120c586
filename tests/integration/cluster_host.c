/* SPDX-License-Identifier: MIT */
/*
 * A cluster of mcp-everything (or mcp-gateway) nodes behind HAProxy for the integration tests
 * (see cluster_host.h).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cluster_host.h"
#include "harness.h"

extern char **environ;

/* The balancer's configuration template, tests/cluster/haproxy.cfg (cmake/McpTests.cmake
 * gives its path), shared with the node.js tests and the conformance runs. */
#ifndef MCP_LB_CONFIG_TEMPLATE
#error "MCP_LB_CONFIG_TEMPLATE must name tests/cluster/haproxy.cfg"
#endif

#define HAPROXY "/usr/sbin/haproxy"
/* The deadline of one probe request through the balancer. */
#define PROBE_MS 5000

/* ---- Processes ---- */

static void *proc_reader(void *arg)
{
    ch_proc *p = arg;
    char chunk[4096];
    for (;;) {
        struct pollfd pfd[2] = {{.fd = p->out_fd, .events = POLLIN},
                                {.fd = p->wake[0], .events = POLLIN}};
        int r = poll(pfd, 2, -1);
        if (r < 0 && errno == EINTR)
            continue;
        ssize_t n = 0;
        /* Told to stop: a grandchild that still holds the pipe must not keep the test. */
        int stop = r < 0 || pfd[1].revents != 0;
        if (!stop) {
            n = read(p->out_fd, chunk, sizeof(chunk));
            if (n < 0 && (errno == EINTR || errno == EAGAIN))
                continue;
        }
        pthread_mutex_lock(&p->mu);
        if (stop || n <= 0) {
            p->out_eof = 1;
        } else if (harness_reserve(&p->out, &p->out_cap, p->out_len, (size_t)n) == 0) {
            memcpy(p->out + p->out_len, chunk, (size_t)n);
            p->out_len += (size_t)n;
            p->out[p->out_len] = '\0';
        }
        pthread_cond_broadcast(&p->cv);
        int done = p->out_eof;
        pthread_mutex_unlock(&p->mu);
        if (done)
            return NULL;
    }
}

/*
 * Starts argv (argv[0] a path) with stdin on /dev/null and stdout and stderr on
 * one pipe read by a thread. Under setpriv, the child gets SIGKILL when the
 * calling thread dies, so a test killed before its teardown leaves nothing.
 */
static int proc_start(ch_proc *p, const char *const argv[])
{
    const char *args[80];
    int outp[2] = {-1, -1};
    posix_spawn_file_actions_t fa;

    memset(p, 0, sizeof(*p));
    p->started = 1;
    p->out_fd = -1;
    p->wake[0] = p->wake[1] = -1;
    pthread_mutex_init(&p->mu, NULL);
    harness_cond_init_monotonic(&p->cv);
    /* A child that died must show up as EPIPE or a reset, not kill the test. */
    signal(SIGPIPE, SIG_IGN);

    if (harness_dying_argv(args, 80, argv) != 0)
        return -1;

    if (pipe2(outp, O_CLOEXEC) != 0)
        return -1;
    if (pipe2(p->wake, O_CLOEXEC) != 0) {
        close(outp[0]);
        close(outp[1]);
        return -1;
    }
    if (posix_spawn_file_actions_init(&fa) != 0)
        goto fail;
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, outp[1], 1);
    posix_spawn_file_actions_adddup2(&fa, outp[1], 2);
    int rc = posix_spawn(&p->pid, args[0], &fa, NULL, (char *const *)args, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        p->pid = 0;
        fprintf(stderr, "cluster: cannot start %s: %s\n", args[0], strerror(rc));
        goto fail;
    }
    close(outp[1]);
    outp[1] = -1;
    p->out_fd = outp[0];
    if (pthread_create(&p->reader, NULL, proc_reader, p) != 0) {
        p->out_fd = -1;
        goto fail;
    }
    p->reader_started = 1;
    return 0;

fail:
    if (p->pid > 0) {
        int status;
        kill(p->pid, SIGKILL);
        harness_wait_pid(p->pid, CH_STOP_MS, &status);
        p->pid = 0;
    }
    for (int i = 0; i < 2; i++) {
        if (outp[i] >= 0)
            close(outp[i]);
        if (p->wake[i] >= 0)
            close(p->wake[i]);
        p->wake[i] = -1;
    }
    return -1;
}

/* Signals the process (sig 0: none) and waits up to timeout_ms for it to exit, then
 * SIGKILL. Returns 0 when it exited by itself; p->status gets the waitpid status. */
static int proc_end(ch_proc *p, int sig, int timeout_ms)
{
    if (p->pid <= 0)
        return -1;
    if (sig != 0)
        kill(p->pid, sig);
    int rc = harness_wait_pid(p->pid, timeout_ms, &p->status);
    if (rc != 0) {
        kill(p->pid, SIGKILL);
        harness_wait_pid(p->pid, CH_STOP_MS, &p->status);
    }
    p->pid = 0;
    return rc;
}

/* Kills the process if still running, stops the reader (after what is left in the pipe,
 * for a little while) and frees everything but the output. */
static void proc_release(ch_proc *p)
{
    if (!p->started)
        return;
    if (p->pid > 0)
        proc_end(p, SIGKILL, CH_STOP_MS);
    if (p->reader_started) {
        long long deadline = harness_now_ms() + 1000;
        pthread_mutex_lock(&p->mu);
        while (!p->out_eof && harness_cond_wait_until(&p->cv, &p->mu, deadline))
            ;
        pthread_mutex_unlock(&p->mu);
        if (write(p->wake[1], "x", 1) < 0) {
            /* The reader is gone already, or will see the end of the pipe. */
        }
        pthread_join(p->reader, NULL);
        p->reader_started = 0;
    }
    if (p->out_fd >= 0)
        close(p->out_fd);
    p->out_fd = -1;
    for (int i = 0; i < 2; i++) {
        if (p->wake[i] >= 0)
            close(p->wake[i]);
        p->wake[i] = -1;
    }
}

/* proc_release, and the output and the lock too. */
static void proc_free(ch_proc *p)
{
    if (!p->started)
        return;
    proc_release(p);
    if (p->out != NULL || p->out_cap != 0) {
        free(p->out);
        p->out = NULL;
        p->out_len = p->out_cap = 0;
    }
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    p->started = 0;
}

static char *proc_output(ch_proc *p)
{
    if (!p->started)
        return strdup("");
    pthread_mutex_lock(&p->mu);
    char *copy = strdup(p->out ? p->out : "");
    pthread_mutex_unlock(&p->mu);
    return copy;
}

/* Waits until done(output, arg) is non-zero, the output ended, or the deadline. Returns
 * what done returned last. */
static int proc_wait(ch_proc *p, int (*done)(const char *, void *), void *arg, long long deadline)
{
    if (!p->started)
        return done("", arg);
    pthread_mutex_lock(&p->mu);
    int r;
    while ((r = done(p->out ? p->out : "", arg)) == 0 && !p->out_eof &&
           harness_cond_wait_until(&p->cv, &p->mu, deadline))
        ;
    pthread_mutex_unlock(&p->mu);
    return r;
}

/* ---- Ports and pids ---- */

size_t ch_pids(const ch_cluster *c, pid_t *out, size_t max)
{
    size_t n = 0;
#define PUT(pid)                                                                                   \
    do {                                                                                           \
        if ((pid) > 0 && n < max)                                                                  \
            out[n++] = (pid);                                                                      \
    } while (0)
    for (int i = 0; i < c->n; i++)
        PUT(c->nodes[i].proc.pid);
    PUT(c->lb.pid);
    PUT(c->lb_worker);
    if (c->redis_up)
        PUT(c->redis.proc.pid);
#undef PUT
    return n;
}

/* ---- Leaving nothing behind ---- */

/* The clusters running now, killed at exit if a test left one behind. */
static ch_cluster *live[16];

static void kill_everything(void)
{
    for (size_t k = 0; k < sizeof(live) / sizeof(live[0]); k++) {
        if (live[k] == NULL)
            continue;
        pid_t pids[CH_MAX_NODES + 4];
        size_t n = ch_pids(live[k], pids, sizeof(pids) / sizeof(pids[0]));
        for (size_t i = 0; i < n; i++)
            kill(pids[i], SIGKILL);
    }
}

static void track(ch_cluster *c)
{
    static int registered;
    if (!registered && atexit(kill_everything) == 0)
        registered = 1;
    for (size_t k = 0; k < sizeof(live) / sizeof(live[0]); k++) {
        if (live[k] == NULL) {
            live[k] = c;
            c->registered = 1;
            return;
        }
    }
}

static void untrack(ch_cluster *c)
{
    for (size_t k = 0; k < sizeof(live) / sizeof(live[0]); k++)
        if (live[k] == c)
            live[k] = NULL;
    c->registered = 0;
}

/* ---- Nodes ---- */

/* The port of the "listening on http://127.0.0.1:PORT/mcp" line, or 0. */
static int listening_port(const char *text, void *arg)
{
    (void)arg;
    const char *p = strstr(text, "listening on http://127.0.0.1:");
    if (p == NULL)
        return 0;
    p += strlen("listening on http://127.0.0.1:");
    char *e;
    long port = strtol(p, &e, 10);
    if (e == p || strncmp(e, "/mcp", 4) != 0 || port <= 0 || port > 65535)
        return 0;
    return (int)port;
}

/* Starts node i on port (0: one the kernel picks) and waits for its listening line. */
static int node_start(ch_cluster *c, int i, int port)
{
    ch_node *nd = &c->nodes[i];
    char path[4096], addr[32];
    const char *argv[72];
    size_t n = 0;

    if (harness_bin_path(c->program, path, sizeof(path)) != 0)
        return -1;
    snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
    argv[n++] = path;
    argv[n++] = "--http";
    argv[n++] = addr;
    if (c->redis_mode == CH_REDIS) {
        argv[n++] = "--redis";
        argv[n++] = c->redis_url;
    }
    for (size_t k = 0; c->node_args != NULL && c->node_args[k] != NULL && n < 71; k++)
        argv[n++] = c->node_args[k];
    argv[n] = NULL;

    if (proc_start(&nd->proc, argv) != 0)
        return -1;
    int got = proc_wait(&nd->proc, listening_port, NULL, harness_now_ms() + CH_START_MS);
    if (got == 0 || (port != 0 && got != port)) {
        char *out = proc_output(&nd->proc);
        fprintf(stderr,
                "cluster: node%d did not say it listens on 127.0.0.1:%d within %d ms:\n%s\n", i,
                port, CH_START_MS, out ? out : "");
        free(out);
        proc_release(&nd->proc);
        return -1;
    }
    nd->port = got;
    snprintf(nd->url, sizeof(nd->url), "http://127.0.0.1:%d/mcp", got);
    return 0;
}

int ch_kill_node(ch_cluster *c, int i)
{
    if (i < 0 || i >= c->n || c->nodes[i].proc.pid <= 0)
        return -1;
    proc_end(&c->nodes[i].proc, SIGKILL, CH_STOP_MS);
    proc_release(&c->nodes[i].proc);
    return 0;
}

/* SIGTERM to node i; 0 when it exited 0 in time (its output is printed otherwise). */
static int node_stop(ch_cluster *c, int i)
{
    ch_node *nd = &c->nodes[i];
    if (nd->proc.pid <= 0)
        return 0;
    int rc = proc_end(&nd->proc, SIGTERM, CH_STOP_MS);
    int status = nd->proc.status;
    proc_release(&nd->proc);
    if (rc == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    char *out = proc_output(&nd->proc);
    if (rc != 0)
        fprintf(stderr, "cluster: node%d did not exit within %d ms of SIGTERM (killed)", i,
                CH_STOP_MS);
    else if (WIFEXITED(status))
        fprintf(stderr, "cluster: node%d exited with status %d after SIGTERM", i,
                WEXITSTATUS(status));
    else
        fprintf(stderr, "cluster: node%d was killed by signal %d after SIGTERM", i,
                WTERMSIG(status));
    fprintf(stderr, "; its output:\n%s\n", out ? out : "");
    free(out);
    return -1;
}

int ch_stop_node(ch_cluster *c, int i)
{
    if (i < 0 || i >= c->n || c->nodes[i].proc.pid <= 0)
        return -1;
    return node_stop(c, i);
}

int ch_restart_node(ch_cluster *c, int i)
{
    if (i < 0 || i >= c->n || c->nodes[i].proc.pid > 0 || c->nodes[i].port <= 0)
        return -1;
    /* The old output goes: what a test reads is the new process's. */
    proc_free(&c->nodes[i].proc);
    return node_start(c, i, c->nodes[i].port);
}

int ch_node_alive(ch_cluster *c, int i)
{
    if (i < 0 || i >= c->n || c->nodes[i].proc.pid <= 0)
        return 0;
    int status;
    if (harness_wait_pid(c->nodes[i].proc.pid, 0, &status) == 0) {
        c->nodes[i].proc.pid = 0;
        c->nodes[i].proc.status = status;
        return 0;
    }
    return 1;
}

char *ch_node_output(ch_cluster *c, int i)
{
    if (i < 0 || i >= c->n)
        return NULL;
    return proc_output(&c->nodes[i].proc);
}

struct needle_count {
    const char *needle;
    int count;
};

/* How many times the text holds the needle, once that is at least the count; else 0. */
static int holds_needle(const char *text, void *arg)
{
    const struct needle_count *w = arg;
    int n = 0;
    for (const char *p = strstr(text, w->needle); p != NULL; p = strstr(p + 1, w->needle))
        n++;
    return n >= w->count ? n : 0;
}

int ch_node_wait_output(ch_cluster *c, int i, const char *needle, int count, int timeout_ms)
{
    if (i < 0 || i >= c->n || needle == NULL || *needle == '\0')
        return -1;
    struct needle_count w = {needle, count > 0 ? count : 1};
    int n = proc_wait(&c->nodes[i].proc, holds_needle, &w, harness_now_ms() + timeout_ms);
    return n > 0 ? n : -1;
}

/* ---- Redis ---- */

int ch_stop_redis(ch_cluster *c)
{
    if (!c->redis_up)
        return -1;
    c->redis_up = 0;
    return rh_stop(&c->redis, CH_STOP_MS);
}

int ch_start_redis(ch_cluster *c)
{
    if (c->redis_up || c->redis_port <= 0)
        return -1;
    if (rh_start_on(&c->redis, c->redis_port, CH_START_MS) != 0) {
        fprintf(stderr, "cluster: redis-server did not start again on port %d\n", c->redis_port);
        return -1;
    }
    c->redis_up = 1;
    return 0;
}

/* ---- The balancer ---- */

/* The configuration for HAProxy: the template with the port and one server line per node.
 * malloc'd, or NULL. */
static char *lb_config(const ch_cluster *c, int lb_port)
{
    FILE *f = fopen(MCP_LB_CONFIG_TEMPLATE, "r");
    if (f == NULL) {
        fprintf(stderr, "cluster: cannot read %s: %s\n", MCP_LB_CONFIG_TEMPLATE, strerror(errno));
        return NULL;
    }
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    if (out == NULL) {
        fclose(f);
        return NULL;
    }
    char line[1024];
    while (fgets(line, sizeof(line), f) != NULL) {
        char *at;
        const char *text = line + strspn(line, " \t");
        if (*text == '#') {
            fputs(line, out); /* the template's comments name the placeholders too */
        } else if (strncmp(text, "@SERVERS@", 9) == 0) {
            for (int i = 0; i < c->n; i++)
                fprintf(out, "    server node%d 127.0.0.1:%d\n", i, c->nodes[i].port);
        } else if ((at = strstr(line, "@LB_PORT@")) != NULL) {
            fprintf(out, "%.*s%d%s", (int)(at - line), line, lb_port, at + strlen("@LB_PORT@"));
        } else {
            fputs(line, out);
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (fclose(out) != 0 || bad) {
        free(text);
        return NULL;
    }
    return text;
}

/* 1 once HAProxy's master said it loaded (its worker runs and listens), -1 when it said
 * it failed, else 0. */
static int lb_loaded(const char *text, void *arg)
{
    (void)arg;
    if (strstr(text, "Loading success.") != NULL)
        return 1;
    if (strstr(text, "[ALERT]") != NULL && strstr(text, "Loading failure") != NULL)
        return -1;
    return 0;
}

/* Starts HAProxy on lb_port. 0, or -1 (it is not running then). */
static int lb_start(ch_cluster *c, int lb_port)
{
    char cfg_path[] = "/tmp/mcp-lb-XXXXXX";
    free(c->lb_config);
    c->lb_config = lb_config(c, lb_port);
    if (c->lb_config == NULL || harness_write_script(cfg_path, c->lb_config) != 0)
        return -1;
    /* -W: master and worker, so that "Loading success." says when the worker runs; -db:
     * in the foreground, logging on stderr. */
    const char *argv[] = {HAPROXY, "-W", "-db", "-f", cfg_path, NULL};
    if (proc_start(&c->lb, argv) != 0) {
        unlink(cfg_path);
        return -1;
    }
    int loaded = proc_wait(&c->lb, lb_loaded, NULL, harness_now_ms() + CH_START_MS);
    /* HAProxy read its file at start and never reloads here. */
    unlink(cfg_path);
    if (loaded != 1) {
        char *out = proc_output(&c->lb);
        fprintf(stderr, "cluster: haproxy did not load on port %d within %d ms:\n%s\n", lb_port,
                CH_START_MS, out ? out : "");
        free(out);
        proc_free(&c->lb);
        memset(&c->lb, 0, sizeof(c->lb));
        return -1;
    }
    char *out = proc_output(&c->lb);
    const char *w = out ? strstr(out, "New worker (") : NULL;
    c->lb_worker = w ? (pid_t)strtol(w + strlen("New worker ("), NULL, 10) : 0;
    free(out);
    c->lb_port = lb_port;
    snprintf(c->lb_url, sizeof(c->lb_url), "http://127.0.0.1:%d/mcp", lb_port);
    return 0;
}

/* Each node answers through the balancer: as many GET /healthz on one connection as there
 * are nodes, each answered 200 by another node. 0 or -1. */
static int lb_probe(ch_cluster *c)
{
    long long deadline = harness_now_ms() + CH_START_MS;
    hc_conn conn;
    if (hc_connect(&conn, c->lb_port, harness_left_ms(deadline)) != 0) {
        fprintf(stderr, "cluster: cannot connect to haproxy on port %d\n", c->lb_port);
        return -1;
    }
    int seen[CH_MAX_NODES] = {0};
    int rc = 0;
    for (int k = 0; k < c->n && rc == 0; k++) {
        hc_response r;
        memset(&r, 0, sizeof(r));
        int ms = harness_left_ms(deadline);
        if (hc_send_request(&conn, c->lb_port, "GET", "/healthz", NULL, NULL, ms) != 0 ||
            hc_read_response(&conn, &r, harness_left_ms(deadline)) != 0 || r.status != 200) {
            fprintf(stderr, "cluster: probe %d through haproxy: HTTP %d %s\n", k, r.status,
                    r.body ? r.body : "");
            rc = -1;
        } else {
            int node = ch_served_by(&r);
            if (node < 0 || node >= c->n || seen[node]++) {
                fprintf(stderr, "cluster: probe %d through haproxy answered by %s\n", k,
                        hc_header_get(&r, "x-mcp-node") ? hc_header_get(&r, "x-mcp-node")
                                                        : "no node");
                rc = -1;
            }
        }
        hc_response_free(&r);
    }
    hc_close(&conn);
    return rc;
}

/* ---- The cluster ---- */

int ch_start(ch_cluster *c, int n_nodes, ch_redis redis, const char *const node_args[])
{
    return ch_start_program(c, "mcp-everything", n_nodes, redis, node_args);
}

int ch_start_program(ch_cluster *c, const char *program, int n_nodes, ch_redis redis,
                     const char *const node_args[])
{
    memset(c, 0, sizeof(*c));
    if (n_nodes < 1 || n_nodes > CH_MAX_NODES || strlen(program) >= sizeof(c->program))
        return -1;
    snprintf(c->program, sizeof(c->program), "%s", program);
    c->redis_mode = redis;
    size_t n_args = 0;
    while (node_args != NULL && node_args[n_args] != NULL)
        n_args++;
    c->node_args = calloc(n_args + 1, sizeof(char *));
    if (c->node_args == NULL)
        return -1;
    for (size_t k = 0; k < n_args; k++)
        if ((c->node_args[k] = strdup(node_args[k])) == NULL)
            goto fail;
    track(c);

    if (redis != CH_NO_REDIS) {
        if (rh_start(&c->redis, CH_START_MS) != 0) {
            fprintf(stderr, "cluster: redis-server did not start\n");
            goto fail;
        }
        c->redis_up = 1;
        c->redis_port = c->redis.port;
        snprintf(c->redis_url, sizeof(c->redis_url), "redis://127.0.0.1:%d", c->redis_port);
    }
    c->n = n_nodes;
    for (int i = 0; i < n_nodes; i++)
        if (node_start(c, i, 0) != 0)
            goto fail;
    /* The port may be taken between choosing it and HAProxy binding it: then another. */
    int started = -1;
    for (int attempt = 0; attempt < 5 && started != 0; attempt++) {
        int port = harness_free_port();
        if (port > 0)
            started = lb_start(c, port);
    }
    if (started != 0 || lb_probe(c) != 0)
        goto fail;
    return 0;

fail:
    ch_stop(c);
    return -1;
}

int ch_stop(ch_cluster *c)
{
    int rc = 0;
    /* The balancer first: the nodes then have no connection left to drain. */
    if (c->lb.pid > 0 && proc_end(&c->lb, SIGTERM, CH_STOP_MS) != 0)
        fprintf(stderr, "cluster: haproxy did not exit within %d ms of SIGTERM (killed)\n",
                CH_STOP_MS);
    if (c->lb_worker > 0) {
        /* The worker ends with its master; it must be gone before the nodes are stopped. */
        if (ch_wait_gone(c->lb_worker, CH_STOP_MS) != 0) {
            kill(c->lb_worker, SIGKILL);
            ch_wait_gone(c->lb_worker, CH_STOP_MS);
        }
        c->lb_worker = 0;
    }
    proc_free(&c->lb);
    memset(&c->lb, 0, sizeof(c->lb));
    for (int i = 0; i < c->n; i++) {
        if (node_stop(c, i) != 0)
            rc = -1;
        proc_free(&c->nodes[i].proc);
        memset(&c->nodes[i].proc, 0, sizeof(c->nodes[i].proc));
    }
    if (c->redis_up) {
        rh_stop(&c->redis, CH_STOP_MS);
        c->redis_up = 0;
    }
    if (c->node_args != NULL) {
        for (size_t k = 0; c->node_args[k] != NULL; k++)
            free(c->node_args[k]);
        free(c->node_args);
        c->node_args = NULL;
    }
    free(c->lb_config);
    c->lb_config = NULL;
    if (c->registered)
        untrack(c);
    return rc;
}

int ch_wait_gone(pid_t pid, int timeout_ms)
{
#ifdef SYS_pidfd_open
    int fd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (fd < 0)
        return errno == ESRCH ? 0 : -1;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    long long deadline = harness_now_ms() + timeout_ms;
    int r;
    do {
        r = poll(&p, 1, harness_left_ms(deadline));
    } while (r < 0 && errno == EINTR);
    close(fd);
    return r > 0 ? 0 : -1;
#else
    long long deadline = harness_now_ms() + timeout_ms;
    /* No pidfd: look with short pauses, there is no other event for a process that is not
     * our child. */
    while (kill(pid, 0) == 0 || errno != ESRCH) {
        if (harness_now_ms() >= deadline)
            return -1;
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return 0;
#endif
}

/* ---- Accessors ---- */

int ch_lb_port(const ch_cluster *c)
{
    return c->lb_port;
}

const char *ch_lb_url(const ch_cluster *c)
{
    return c->lb_url;
}

int ch_node_port(const ch_cluster *c, int i)
{
    return i >= 0 && i < c->n ? c->nodes[i].port : -1;
}

const char *ch_node_url(const ch_cluster *c, int i)
{
    return i >= 0 && i < c->n ? c->nodes[i].url : "";
}

const char *ch_redis_url(const ch_cluster *c)
{
    return c->redis_url;
}

const char *ch_lb_config(const ch_cluster *c)
{
    return c->lb_config ? c->lb_config : "";
}

int ch_node_index(const char *name)
{
    if (name == NULL || strncmp(name, "node", 4) != 0)
        return -1;
    char *e;
    long i = strtol(name + 4, &e, 10);
    if (e == name + 4 || *e != '\0' || i < 0 || i >= CH_MAX_NODES)
        return -1;
    return (int)i;
}

int ch_served_by(const hc_response *r)
{
    return ch_node_index(hc_header_get(r, "x-mcp-node"));
}

/* ---- HAProxy's log ---- */

/* How many request lines the text holds. */
static int count_requests(const char *text, void *arg)
{
    int want = *(int *)arg, n = 0;
    for (const char *p = text; (p = strstr(p, "mcp-lb ")) != NULL; p++)
        if (p == text || p[-1] == '\n')
            n++;
    return n >= want ? n : 0;
}

int ch_lb_wait_requests(ch_cluster *c, int count, int timeout_ms)
{
    if (count <= 0)
        return ch_lb_requests(c, NULL, 0);
    int n = proc_wait(&c->lb, count_requests, &count, harness_now_ms() + timeout_ms);
    return n > 0 ? n : -1;
}

/* "-" or nothing: "". */
static void copy_field(char *dst, size_t size, const char *src)
{
    snprintf(dst, size, "%s", strcmp(src, "-") == 0 ? "" : src);
}

int ch_lb_requests(ch_cluster *c, ch_lb_request *out, size_t max)
{
    char *text = proc_output(&c->lb);
    if (text == NULL)
        return -1;
    int n = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        if (strncmp(line, "mcp-lb ", 7) != 0)
            continue;
        char node[64], method[16], path[128], status[16], session[72], last[136];
        if (sscanf(line + 7, "%63s %15s %127s %15s %71s %135s", node, method, path, status, session,
                   last) != 6)
            continue;
        if ((size_t)n < max) {
            ch_lb_request *q = &out[n];
            memset(q, 0, sizeof(*q));
            q->node = ch_node_index(node);
            snprintf(q->method, sizeof(q->method), "%s", method);
            snprintf(q->path, sizeof(q->path), "%s", path);
            q->status = (int)strtol(status, NULL, 10);
            copy_field(q->session, sizeof(q->session), session);
            copy_field(q->last_id, sizeof(q->last_id), last);
        }
        n++;
    }
    free(text);
    return n;
}

char *ch_lb_output(ch_cluster *c)
{
    return proc_output(&c->lb);
}
