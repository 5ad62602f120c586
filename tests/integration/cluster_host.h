/* SPDX-License-Identifier: MIT */
/*
 * A cluster for the integration tests: N mcp-everything nodes on free loopback
 * ports, a real HAProxy in front of them balancing every request on its own
 * (round robin, no stickiness: tests/cluster/haproxy.cfg), and, when asked for,
 * a real redis-server (redis_host.h) that the nodes share.
 *
 * A node is `$MCP_BIN_DIR/mcp-everything --http 127.0.0.1:PORT [--redis
 * redis://127.0.0.1:RPORT] [node args]`, ready once it prints its listening
 * line. HAProxy runs in the foreground (-W -db) and is ready once it says
 * "Loading success." and every node has answered a probe through it. Each
 * answer through the balancer names its node in the header X-Mcp-Node
 * ("node0", "node1", ...), and HAProxy writes one line per request (see
 * ch_lb_requests), so a test can tell which node served what.
 *
 * Nothing outlives the test: the nodes and HAProxy run under setpriv
 * --pdeathsig KILL (they get SIGKILL when the thread that started them dies:
 * a crash, CTest's timeout), redis-server too (redis_host.c), and an atexit
 * handler kills whatever a test left running. Start and stop clusters from
 * the test's main thread.
 *
 * Every wait has a deadline. Functions return -1 and print why on stderr, so
 * that tests decide what to assert.
 */
#ifndef MCP_TESTS_INTEGRATION_CLUSTER_HOST_H
#define MCP_TESTS_INTEGRATION_CLUSTER_HOST_H

#include <pthread.h>
#include <stddef.h>
#include <sys/types.h>

#include "http_client.h"
#include "redis_host.h"

#define CH_MAX_NODES 8
/* Deadlines: starting a process (a node, HAProxy, Redis), and stopping one. */
#define CH_START_MS 15000
#define CH_STOP_MS 15000

/* What the cluster has of Redis. */
typedef enum ch_redis {
    CH_NO_REDIS = 0,   /* independent nodes, no redis-server */
    CH_REDIS = 1,      /* a redis-server, and every node gets --redis redis://127.0.0.1:PORT */
    CH_REDIS_ALONE = 2 /* a redis-server the nodes are not told about (checks of the harness) */
} ch_redis;

/* A process of the cluster, its stdout and stderr read into one buffer by a thread. */
typedef struct ch_proc {
    int started; /* the lock, the pipes and the reader exist */
    pid_t pid;   /* 0 once reaped */
    int status;  /* the waitpid status, once reaped */
    int out_fd;  /* -1 when closed */
    int wake[2];
    pthread_t reader;
    int reader_started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    char *out; /* everything the process wrote, NUL-terminated */
    size_t out_len, out_cap;
    int out_eof;
} ch_proc;

typedef struct ch_node {
    ch_proc proc;
    int port;
    char url[64]; /* http://127.0.0.1:PORT/mcp */
} ch_node;

typedef struct ch_cluster {
    char program[32]; /* what each node runs: mcp-everything, mcp-gateway */
    int n;
    ch_redis redis_mode;
    rh_server redis;
    int redis_port; /* kept across ch_stop_redis: it starts again there */
    int redis_up;
    char redis_url[64];
    char **node_args; /* a copy, NULL-terminated */
    ch_node nodes[CH_MAX_NODES];
    ch_proc lb;
    pid_t lb_worker; /* HAProxy's worker, a child of the master (lb.pid) */
    int lb_port;
    char lb_url[64];
    char *lb_config; /* the configuration HAProxy runs with */
    int registered;
} ch_cluster;

/*
 * Starts Redis (unless CH_NO_REDIS), n_nodes nodes (1..CH_MAX_NODES) with
 * node_args (NULL-terminated, may be NULL) and HAProxy, and waits until each
 * node has answered through HAProxy. Returns 0, or -1 with nothing left
 * running.
 */
int ch_start(ch_cluster *c, int n_nodes, ch_redis redis, const char *const node_args[]);
/* The same with nodes that run `$MCP_BIN_DIR/<program> --http ... [--redis ...] [node args]`
 * (mcp-gateway: its node args end with "--" and the stdio server's command). */
int ch_start_program(ch_cluster *c, const char *program, int n_nodes, ch_redis redis,
                     const char *const node_args[]);
/*
 * Stops everything: HAProxy (SIGTERM), then each node (SIGTERM: it must exit 0
 * within CH_STOP_MS; its output is printed otherwise), then Redis. Whatever
 * does not exit in time is killed. Returns 0 when every node exited 0, -1
 * otherwise; nothing is left running either way. May be called again.
 */
int ch_stop(ch_cluster *c);

/* The balancer: its port and its MCP endpoint, http://127.0.0.1:PORT/mcp. */
int ch_lb_port(const ch_cluster *c);
const char *ch_lb_url(const ch_cluster *c);
/* Node i, directly. */
int ch_node_port(const ch_cluster *c, int i);
const char *ch_node_url(const ch_cluster *c, int i);
/* redis://127.0.0.1:PORT, or "" without Redis. */
const char *ch_redis_url(const ch_cluster *c);
/* The text of HAProxy's configuration. */
const char *ch_lb_config(const ch_cluster *c);

/* SIGKILL to node i, and reaps it. 0, or -1 when it was not running. */
int ch_kill_node(ch_cluster *c, int i);
/* SIGTERM to node i: 0 when it exited 0 within CH_STOP_MS (it is killed otherwise). */
int ch_stop_node(ch_cluster *c, int i);
/* Starts node i again on its port, with the same arguments. 0 or -1. */
int ch_restart_node(ch_cluster *c, int i);
/* 1 while node i's process has not exited. */
int ch_node_alive(ch_cluster *c, int i);
/* A malloc'd copy of what node i wrote to stderr since it was last started. */
char *ch_node_output(ch_cluster *c, int i);
/*
 * Waits up to timeout_ms for node i's output (since it was last started) to
 * hold needle at least count times. Returns how many times it does, or -1
 * when fewer by the deadline (or when its output ended first).
 */
int ch_node_wait_output(ch_cluster *c, int i, const char *needle, int count, int timeout_ms);

/* Stops Redis (SIGTERM). 0 when it exited by itself. */
int ch_stop_redis(ch_cluster *c);
/* Starts Redis again on the same port, empty. 0 or -1. */
int ch_start_redis(ch_cluster *c);

/* The node that answered through the balancer (its X-Mcp-Node header), or -1. */
int ch_served_by(const hc_response *r);
/* The same from a header value ("node2" gives 2), or -1. */
int ch_node_index(const char *name);

/* One request as HAProxy logged it. */
typedef struct ch_lb_request {
    int node; /* the node it was sent to, -1 when none */
    char method[16];
    char path[128];
    int status;        /* -1 when there was no response */
    char session[72];  /* Mcp-Session-Id, "" when absent */
    char last_id[136]; /* Last-Event-ID, "" when absent */
} ch_lb_request;

/*
 * The requests HAProxy has logged so far, oldest first (a line is written when
 * the response head is sent, so an open SSE stream is there). Returns how many
 * (at most max are filled in), or -1.
 */
int ch_lb_requests(ch_cluster *c, ch_lb_request *out, size_t max);
/* Waits up to timeout_ms for HAProxy to have logged at least count requests. Returns
 * how many it has, or -1 when fewer by the deadline. */
int ch_lb_wait_requests(ch_cluster *c, int count, int timeout_ms);
/* A malloc'd copy of everything HAProxy wrote (notices and request lines). */
char *ch_lb_output(ch_cluster *c);

/*
 * The processes the cluster runs now: the nodes, HAProxy's master and worker,
 * Redis. Returns how many (at most max are written).
 */
size_t ch_pids(const ch_cluster *c, pid_t *out, size_t max);
/* Waits up to timeout_ms for the process pid (not necessarily a child) to have exited.
 * 0 once it has, or when there is no such process; -1 at the deadline. */
int ch_wait_gone(pid_t pid, int timeout_ms);

#endif
