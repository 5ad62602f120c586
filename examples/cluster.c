/* SPDX-License-Identifier: MIT */
/*
 * A server on several nodes with Redis: one node of a deployment.
 *
 * Run this program several times, each on an address of its own and all with
 * the same Redis, and put a load balancer in front of them. The nodes share
 * their sessions, streams and events through Redis (mcp_http_opts.redis_url),
 * so any node serves any request of any session: a client that initialized on
 * one node may send its next request to another, and a stream cut on one node
 * resumes on another. Each node tells the others where it can be reached
 * (mcp_http_opts.cluster_address, by default the address it listens on).
 *
 * Its one tool, "node", says which node answered, for which session and client,
 * so a client can watch its session move between the nodes: the client's name
 * comes from the initialize that may have reached another node. An endpoint that
 * cannot reach Redis does not start. SIGTERM or SIGINT stops the node.
 *
 * Usage: examples_cluster [HOST:PORT [REDIS_URL]]
 * (defaults 127.0.0.1:8080 and redis://127.0.0.1:6379), for instance
 *   examples_cluster 127.0.0.1:8081 redis://127.0.0.1:6379 &
 *   examples_cluster 127.0.0.1:8082 redis://127.0.0.1:6379 &
 */
#include <stdio.h>

#include <mcp/mcp.h>

typedef struct node {
    /* Where this node listens: written by on_listen before any request comes,
     * then only read, by the tool on the server's workers. */
    char url[256];
} node;

static json_t *tool_node(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)args;
    const node *n = user;
    const char *session = mcp_ctx_session_id(ctx);
    const char *client = json_string_value(json_object_get(mcp_ctx_client_info(ctx), "name"));
    char text[512];
    snprintf(text, sizeof(text), "node %s answered session %s of client %s", n->url,
             session != NULL ? session : "(none)", client != NULL ? client : "(unnamed)");
    return mcp_text_result(text);
}

static void on_listen(const char *url, void *user)
{
    node *n = user;
    snprintf(n->url, sizeof(n->url), "%s", url);
    fprintf(stderr, "cluster: listening on %s\n", url);
}

int main(int argc, char **argv)
{
    if (argc > 3) {
        fprintf(stderr, "usage: examples_cluster [HOST:PORT [REDIS_URL]]\n");
        return 2;
    }
    node n = {.url = "(not listening)"};
    mcp_http_opts opts = {
        .size = sizeof(opts),
        .listen = argc > 1 ? argv[1] : "127.0.0.1:8080",
        .redis_url = argc > 2 ? argv[2] : "redis://127.0.0.1:6379",
        .on_listen = on_listen,
        .user = &n,
    };
    mcp_server *srv = mcp_server_new("cluster", "1.0.0");
    if (srv == NULL) {
        fprintf(stderr, "cluster: %s\n", mcp_strerror(MCP_ENOMEM));
        return 1;
    }
    int rc = mcp_server_add_tool(srv, "node", "Which node answered, for which session", NULL,
                                 tool_node, &n);
    if (rc == MCP_OK)
        rc = mcp_serve_http(srv, &opts); /* until SIGTERM or SIGINT */
    if (rc != MCP_OK)
        fprintf(stderr, "cluster: cannot serve on %s with %s: %s\n", opts.listen, opts.redis_url,
                mcp_strerror(rc));
    mcp_server_free(srv);
    return rc == MCP_OK ? 0 : 1;
}
