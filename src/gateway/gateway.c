/* SPDX-License-Identifier: MIT */
/*
 * The gateway's public entry points (mcp/gateway.h): its options, the HTTP
 * endpoint in front of the forwarder (forward.c), and its statistics.
 */
#include <stdlib.h>
#include <string.h>

#include "gateway/gateway_int.h"
#include "transport/shttp.h"

#define DEFAULT_MAX_CHILDREN 100
#define DEFAULT_GRACE_MS 2000
#define DEFAULT_INIT_TIMEOUT_MS 30000
#define DEFAULT_MAX_MESSAGE (4u << 20)
#define DEFAULT_POOL_SIZE 4
#define DEFAULT_INPUT_TIMEOUT_MS 60000

void mcp__gw_cfg_free(mcp__gw_cfg *cfg)
{
    if (cfg->argv != NULL)
        for (char **p = cfg->argv; *p != NULL; p++)
            free(*p);
    free(cfg->argv);
    cfg->argv = NULL;
    memset(cfg->state_key, 0, sizeof(cfg->state_key));
}

/* Copies and checks the options. MCP_OK, MCP_EINVAL or MCP_ENOMEM. */
static int cfg_make(const mcp_gateway_opts *opts, mcp__gw_cfg *cfg)
{
    mcp_gateway_opts o;
    memset(cfg, 0, sizeof(*cfg));
    if (mcp__opts_copy(&o, sizeof(o), opts, sizeof(o)) != MCP_OK || o.argv == NULL ||
        o.argv[0] == NULL || o.argv[0][0] == '\0' || o.max_children < 0 || o.kill_grace_ms < 0 ||
        o.init_timeout_ms < 0 || o.poll_ms < 0 || o.pool_size < 0 || o.input_timeout_ms < 0 ||
        (int)o.log_level < 0 || o.log_level > MCP_LOG_EMERGENCY ||
        (o.state_key != NULL && o.state_key_len != sizeof(cfg->state_key)))
        return MCP_EINVAL;
    if (o.state_key != NULL) {
        memcpy(cfg->state_key, o.state_key, sizeof(cfg->state_key));
        cfg->has_state_key = 1;
    }
    size_t n = 0;
    while (o.argv[n] != NULL)
        n++;
    cfg->argv = calloc(n + 1, sizeof(char *));
    if (cfg->argv == NULL)
        return MCP_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        if ((cfg->argv[i] = mcp__strdup(o.argv[i])) == NULL) {
            mcp__gw_cfg_free(cfg);
            return MCP_ENOMEM;
        }
    }
    cfg->shared_child = o.shared_child != 0;
    cfg->max_children = o.max_children ? o.max_children : DEFAULT_MAX_CHILDREN;
    cfg->kill_grace_ms = o.kill_grace_ms ? o.kill_grace_ms : DEFAULT_GRACE_MS;
    cfg->init_timeout_ms = o.init_timeout_ms ? o.init_timeout_ms : DEFAULT_INIT_TIMEOUT_MS;
    cfg->poll_ms = o.poll_ms;
    cfg->pool_size = o.pool_size ? o.pool_size : DEFAULT_POOL_SIZE;
    cfg->input_timeout_ms = o.input_timeout_ms ? o.input_timeout_ms : DEFAULT_INPUT_TIMEOUT_MS;
    cfg->max_message = o.max_message ? o.max_message : DEFAULT_MAX_MESSAGE;
    cfg->log_level = o.log_level;
    cfg->log = o.log;
    cfg->log_user = o.log_user;
    return MCP_OK;
}

int mcp_gateway_http_new(uv_loop_t *loop, const mcp_gateway_opts *gw, const mcp_http_opts *http,
                         mcp_http_endpoint **out)
{
    if (out != NULL)
        *out = NULL;
    if (loop == NULL || gw == NULL || out == NULL)
        return MCP_EINVAL;
    mcp__gw_cfg cfg;
    mcp_http_opts h;
    if (mcp__opts_copy(&h, sizeof(h), http, sizeof(h)) != MCP_OK)
        return MCP_EINVAL;
    int rc = cfg_make(gw, &cfg);
    if (rc != MCP_OK)
        return rc;
    /* A session holds a child of its own: a table of more sessions than children would
     * turn the newest away while idle ones hold every child, when an idle one should
     * make room (the transport closes the least useful). */
    if (h.max_sessions == 0 && !cfg.shared_child)
        h.max_sessions = cfg.max_children;
    mcp__answerer *ans = mcp__gw_answerer_new(loop, &cfg);
    if (ans == NULL)
        return MCP_ENOMEM;
    return mcp__http_endpoint_new(loop, ans, &h, out);
}

static const char *const methods[MCP_GATEWAY_METHODS] = {
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "server/discover",
    "subscriptions/listen",
    "other",
};

const char *mcp_gateway_method_name(int i)
{
    return i >= 0 && i < MCP_GATEWAY_METHODS ? methods[i] : NULL;
}

/* A method name as a logfmt value: printable ASCII without quotes or spaces, else
 * quoted with what is not replaced by '?'. */
const char *mcp__gw_log_word(const char *s, char *out, size_t size)
{
    size_t n = 0;
    if (s == NULL)
        s = "";
    for (; *s != '\0' && n + 1 < size; s++)
        out[n++] = (*s > ' ' && *s < 127 && *s != '"' && *s != '=' && *s != '\\') ? *s : '?';
    out[n] = '\0';
    return n > 0 ? out : "-";
}

int mcp__gw_method_index(const char *method)
{
    for (int i = 0; i + 1 < MCP_GATEWAY_METHODS; i++)
        if (method != NULL && strcmp(method, methods[i]) == 0)
            return i;
    return MCP_GATEWAY_METHODS - 1;
}

int mcp_gateway_stats_get(const mcp_http_endpoint *ep, mcp_gateway_stats *stats)
{
    if (ep == NULL || stats == NULL || stats->size < sizeof(stats->size))
        return MCP_EINVAL;
    return mcp__gw_stats(ep->ans, stats);
}
