/* SPDX-License-Identifier: MIT */
/*
 * Revision 2026-07-28 through the gateway, translated children (see modern.c): a
 * request of the child to its client (elicitation, sampling, roots) is a Multi
 * Round-Trip Request's question (basic/patterns/mrtr.mdx). The client's request is
 * answered with an InputRequiredResult of every open question and a requestState,
 * sealed with the gateway's key and bound to the request, that names the request
 * waiting in the child; the client's retry brings the answers, which go to the child,
 * and the request goes on there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/modern_int.h"
#include "protocol/json.h"
#include "protocol/meta.h"
#include "protocol/rpc.h"
#include "util/seal.h"

/* ---- Translated requests and their questions ---- */

/* What a requestState is bound to: the method, the tool, prompt or resource, and the
 * arguments, length-prefixed (as the server core binds its own). */
char *mcp__gwm_binding_of(const char *method, const json_t *params, size_t *len)
{
    const char *name = json_string_value(json_object_get(params, "name"));
    if (name == NULL)
        name = json_string_value(json_object_get(params, "uri"));
    char args[65];
    if (mcp__json_digest_hex(json_object_get(params, "arguments"), args) != MCP_OK)
        return NULL;
    mcp__buf b = {0};
    if (mcp__buf_appendf(&b, "gateway|%zu:%s|%zu:%s|%s", strlen(method), method,
                         name ? strlen(name) : 0, name ? name : "", args) != MCP_OK) {
        mcp__buf_free(&b);
        return NULL;
    }
    *len = b.len;
    return mcp__buf_steal(&b);
}

/* Answers the child's open questions of r with an error (the client will not). */
void mcp__gwm_drop_questions(gw_req *r, const char *why)
{
    gw_mreq *mr = r->m;
    const char *key;
    json_t *q;
    json_object_foreach(mr->asked, key, q)
    {
        json_t *e = mcp__error_message(json_object_get(q, "id"), MCP_RPC_INTERNAL_ERROR, why, NULL);
        if (r->c->state != CH_GONE && !r->c->closing)
            mcp__gw_to_child(r->c, e);
        json_decref(e);
    }
    json_object_clear(mr->asked);
}

/* r's child asks its client: r is answered with an InputRequiredResult of every open
 * question, and waits in the child for the retry. */
static void ask(gw_req *r)
{
    gw *g = r->c->g;
    gw_mreq *mr = r->m;
    gw_sess *s = r->s;
    uint64_t stream = r->stream;
    json_t *requests = json_object();
    const char *key;
    json_t *q;
    json_object_foreach(mr->asked, key, q)
    {
        json_t *one = json_pack("{s:O}", "method", json_object_get(q, "method"));
        json_t *params = json_object_get(q, "params");
        if (one != NULL && params != NULL)
            json_object_set(one, "params", params);
        json_object_set_new(requests, key, one);
    }
    /* The request, its round, and the node whose child it waits in (a retry that
     * reaches another node is sent here: see mcp__gwm_home). */
    char plain[400];
    int n =
        g->addr[0] == '\0'
            ? snprintf(plain, sizeof plain, "{\"g\":%" JSON_INTEGER_FORMAT ",\"r\":%u,\"n\":%u}",
                       r->gid, mr->round + 1, (unsigned)g->node)
            : snprintf(plain, sizeof plain,
                       "{\"g\":%" JSON_INTEGER_FORMAT ",\"r\":%u,\"n\":%u,\"a\":\"%s\"}", r->gid,
                       mr->round + 1, (unsigned)g->node, g->addr);
    char *state = NULL;
    uint64_t expiry = mcp__wall_ms() + (uint64_t)g->cfg.input_timeout_ms;
    int rc = mcp__sealer_seal(&g->modern->sealer, mr->binding, mr->blen, plain, (size_t)n, expiry,
                              &state);
    json_t *result = rc == MCP_OK ? json_pack("{s:s, s:o, s:s}", "resultType", "input_required",
                                              "inputRequests", requests, "requestState", state)
                                  : NULL;
    free(state);
    if (result == NULL) {
        if (rc != MCP_OK)
            json_decref(requests);
        mcp__gwm_drop_questions(r, "the gateway could not ask the client (out of memory)");
        return;
    }
    mcp__gwm_decorate(r->c, r->method, result);
    json_t *ans =
        json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", r->client_id, "result", result);
    g->stats.by_method[mcp__gw_method_index(r->method)][MCP_GATEWAY_INPUT_REQUIRED]++;
    mr->round++;
    mr->parked = 1;
    mr->parked_at = uv_now(g->loop);
    /* r leaves the client's request: that one is answered, and its session goes. */
    mcp__gw_req_leave_session(r);
    if (mcp__gw_logs(g, MCP_LOG_INFO)) {
        char m[64];
        mcp__gw_log(g, MCP_LOG_INFO,
                    "event=request session=- method=%s status=input_required round=%u "
                    "duration_ms=%.3f",
                    mcp__gw_log_word(r->method, m, sizeof(m)), mr->round,
                    (double)(uv_hrtime() - r->t0) / 1e6);
    }
    mcp__gwm_reply(s, stream, ans);
    mcp__gwm_park_bound(g, r);
}

/* The child gives up waiting: the question is withdrawn. */
void mcp__gwm_withdraw(gw_child *c, const json_t *child_id)
{
    gw_req *r = c->excl;
    if (r == NULL || r->m == NULL)
        return;
    const char *key;
    json_t *q;
    void *tmp;
    json_object_foreach_safe(r->m->asked, tmp, key, q)
    {
        if (json_equal(json_object_get(q, "id"), child_id))
            json_object_del(r->m->asked, key);
    }
}

void mcp__gw_modern_child_request(gw_child *c, json_t *msg)
{
    json_t *cid = json_object_get(msg, "id");
    const char *method = json_string_value(json_object_get(msg, "method"));
    json_t *e = NULL;
    if (strcmp(method, "ping") == 0) {
        e = json_pack("{s:s, s:O, s:{}}", "jsonrpc", "2.0", "id", cid, "result");
        mcp__gw_to_child(c, e);
        json_decref(e);
        return;
    }
    gw_req *r = c->excl;
    const char *cap = strcmp(method, "elicitation/create") == 0       ? "elicitation"
                      : strcmp(method, "sampling/createMessage") == 0 ? "sampling"
                      : strcmp(method, "roots/list") == 0             ? "roots"
                                                                      : NULL;
    char why[160];
    if (cap == NULL) {
        snprintf(why, sizeof why, "Method not found: %.100s", method);
        e = mcp__error_message(cid, MCP_RPC_METHOD_NOT_FOUND, why, NULL);
    } else if (r == NULL || r->m == NULL || r->zombie || c->modern) {
        e = mcp__error_message(cid, MCP_RPC_INTERNAL_ERROR,
                               "the gateway cannot tell which client this request is for", NULL);
    } else if (!json_is_object(json_object_get(r->m->caps, cap))) {
        /* mrtr.mdx: only what the client declared in this request's _meta. */
        snprintf(why, sizeof why, "the client did not declare the %s capability", cap);
        e = mcp__error_message(cid, MCP_RPC_METHOD_NOT_FOUND, why, NULL);
    } else if (r->m->round >= MAX_ROUNDS) {
        e = mcp__error_message(cid, MCP_RPC_INTERNAL_ERROR,
                               "too many rounds of questions to the client", NULL);
    } else if (json_object_size(r->m->asked) >= MAX_QUESTIONS) {
        e = mcp__error_message(cid, MCP_RPC_INTERNAL_ERROR,
                               "too many questions to the client at once", NULL);
    }
    if (e != NULL) {
        mcp__gw_to_child(c, e);
        json_decref(e);
        return;
    }
    char key[24];
    snprintf(key, sizeof key, "q%u", ++r->m->next_key);
    json_t *q = json_pack("{s:O, s:s}", "id", cid, "method", method);
    json_t *params = json_object_get(msg, "params");
    if (q != NULL && params != NULL)
        json_object_set(q, "params", params);
    json_object_set_new(r->m->asked, key, q);
    if (!r->m->parked)
        ask(r);
}

/* Opens a retry's requestState (params' "requestState", a string): MCP_OK and *state
 * (new) when the gateway sealed it for this request, MCP_ETIMEDOUT when it expired,
 * anything else when it is not one of the gateway's. */
static int open_state(gw *g, const char *method, const json_t *params, json_t **state)
{
    size_t blen, len = 0;
    char *binding = mcp__gwm_binding_of(method, params, &blen);
    unsigned char *plain = NULL;
    int rc = binding != NULL
                 ? mcp__sealer_unseal(&g->modern->sealer,
                                      json_string_value(json_object_get(params, "requestState")),
                                      binding, blen, mcp__wall_ms(), &plain, &len)
                 : MCP_ENOMEM;
    free(binding);
    *state = rc == MCP_OK ? mcp__json_parse((const char *)plain, len, 0, NULL) : NULL;
    free(plain);
    if (rc == MCP_OK && *state == NULL)
        rc = MCP_EINVAL;
    return rc;
}

uint32_t mcp__gwm_home(gw *g, const json_t *msg, char *addr, size_t size)
{
    addr[0] = '\0';
    const char *method = json_string_value(json_object_get(msg, "method"));
    const json_t *params = json_object_get(msg, "params");
    if (method == NULL || g->node == 0 || g->modern == NULL)
        return 0;
    /* A task of another node's child. */
    uint32_t task_node = mcp__gwm_task_node(msg, NULL);
    if (task_node != 0)
        return task_node != g->node ? task_node : 0;
    if (!json_is_string(json_object_get(params, "requestState")))
        return 0;
    json_t *state = NULL;
    json_int_t node = 0;
    if (open_state(g, method, params, &state) == MCP_OK) {
        node = json_integer_value(json_object_get(state, "n"));
        const char *a = json_string_value(json_object_get(state, "a"));
        if (a != NULL && strlen(a) < size)
            snprintf(addr, size, "%s", a);
    }
    json_decref(state);
    return node > 0 && node <= UINT32_MAX && (uint32_t)node != g->node ? (uint32_t)node : 0;
}

/* The retry of a request whose questions the client answers: the answers go to the
 * child, and the request goes on there (or is asked again what is still open). 1 when
 * done here; 0 when the requestState names no request any more (it is then served
 * anew); -1 when it is not one the gateway sealed. */
int mcp__gwm_retry(gw_sess *s, json_t *msg, uint64_t stream)
{
    gw *g = s->g;
    json_t *id = json_object_get(msg, "id");
    json_t *params = json_object_get(msg, "params");
    const char *method = json_string_value(json_object_get(msg, "method"));
    json_t *token = json_object_get(params, "requestState");
    json_t *responses = json_object_get(params, "inputResponses");
    if (!json_is_string(token) || strlen(json_string_value(token)) != json_string_length(token)) {
        mcp__gwm_reply_error(s, stream, id, MCP_RPC_INVALID_PARAMS,
                             "Invalid params: \"requestState\" must be the string the server gave",
                             NULL);
        return 1;
    }
    if (responses != NULL && !json_is_object(responses)) {
        mcp__gwm_reply_error(s, stream, id, MCP_RPC_INVALID_PARAMS,
                             "Invalid params: \"inputResponses\" must be an object of answers",
                             NULL);
        return 1;
    }
    json_t *state = NULL;
    int rc = open_state(g, method, params, &state);
    if (rc == MCP_ETIMEDOUT) {
        mcp__gwm_reply_error(s, stream, id, MCP_RPC_INVALID_PARAMS,
                             "Invalid params: \"requestState\" has expired: send the request again "
                             "without it",
                             NULL);
        return 1;
    }
    if (rc != MCP_OK)
        return -1; /* not the gateway's: a child's of this revision, or forged */
    gw_req *r = mcp__gw_gid_lookup(&g->reqs, json_object_get(state, "g"));
    json_int_t round = json_integer_value(json_object_get(state, "r"));
    json_decref(state);
    if (r == NULL || r->m == NULL || !r->m->parked || r->zombie || (json_int_t)r->m->round != round)
        return 0; /* that request is over (its time ran out, its server went) */
    if (json_equal(id, r->client_id)) {
        mcp__gwm_reply_error(
            s, stream, id, MCP_RPC_INVALID_PARAMS,
            "Invalid params: a retry must have a JSON-RPC id of its own, not the id of "
            "the request it retries",
            NULL);
        return 1;
    }
    gw_mreq *mr = r->m;
    mcp__meta meta;
    mcp__meta_read(params, &meta);
    json_decref(mr->caps);
    mr->caps = json_incref((json_t *)meta.caps);
    int level = mcp_log_level_parse(json_string_value(meta.level));
    mr->log_level = level >= 0 ? level : MCP_LOG_EMERGENCY + 1;
    /* r joins this request: the retry's id, stream and session. */
    mr->parked = 0;
    json_decref(r->client_id);
    r->client_id = json_incref(id);
    json_t *tok = json_object_get(json_object_get(params, "_meta"), "progressToken");
    json_decref(r->token);
    r->token = json_incref(tok);
    r->stream = stream;
    r->s = s;
    r->sprev = NULL;
    r->snext = s->reqs;
    if (r->snext != NULL)
        r->snext->sprev = r;
    s->reqs = r;
    s->nreqs++;
    mcp__gw_attach(s, r->c);
    if (mr->final != NULL) {
        json_t *fin = mr->final;
        mr->final = NULL;
        json_object_set(fin, "id", id);
        mcp__gwm_reply(s, stream, json_incref(fin));
        mcp__gw_req_done(r, json_object_get(fin, "error"));
        json_decref(fin);
        return 1;
    }
    const char *key;
    json_t *q;
    void *tmp;
    json_object_foreach_safe(mr->asked, tmp, key, q)
    {
        json_t *answer = json_object_get(responses, key);
        if (!json_is_object(answer))
            continue; /* still open: asked again below */
        json_t *out = json_pack("{s:s, s:O, s:O}", "jsonrpc", "2.0", "id", json_object_get(q, "id"),
                                "result", answer);
        if (out != NULL)
            mcp__gw_to_child(r->c, out);
        json_decref(out);
        json_object_del(mr->asked, key);
    }
    if (json_object_size(mr->asked) > 0)
        ask(r);
    return 1;
}
