/* SPDX-License-Identifier: MIT */
/*
 * Multi Round-Trip Requests (revision 2026-07-28, basic/patterns/mrtr.mdx): how one
 * handler, written once, asks the client for input in both eras.
 *
 * In the legacy era mcp_ctx_ask sends the client a request and waits for its answer.
 * In the modern era nothing waits: the server keeps no state between rounds. A
 * handler's question that has no answer yet returns MCP_EINPUT and is recorded; when
 * the handler returns, whatever it returned is dropped and the request is answered
 * with an InputRequiredResult that carries every recorded question and a sealed
 * requestState. The client retries the request (a new id, the same params) with its
 * answers in inputResponses and the requestState echoed, and the handler runs again
 * from the start: each question now finds its answer, in the retry's inputResponses
 * or, for questions of earlier rounds, in the requestState.
 *
 * The requestState is AEAD-sealed with the server's key (src/util/seal.h), so the
 * client can neither read nor change it, bound to the method, the tool, prompt or
 * resource, and a digest of the arguments, so that it is refused on any other request,
 * and it expires. It holds the answers of earlier rounds (each with a digest of the
 * question it answers, so a handler that asks something else gets asked again), the
 * handler's own state (mcp_ctx_keep_state), the round, and the id of the request that
 * produced it, so that a retry under the same JSON-RPC id is refused. Each is good for
 * one retry: the server remembers those it took (used_take), so a replayed one is
 * refused rather than run again until it expires.
 */
#include <stdlib.h>
#include <string.h>

#include "protocol/json.h"
#include "server/server_int.h"
#include "util/seal.h"

/* Bounds: rounds of one request, questions per round, and a default expiry. */
#define MAX_ROUNDS 32
#define MAX_QUESTIONS 32
#define DEFAULT_STATE_TTL_MS (10 * 60 * 1000)

int mcp__mrtr_method(const char *method)
{
    return strcmp(method, "tools/call") == 0 || strcmp(method, "prompts/get") == 0 ||
           strcmp(method, "resources/read") == 0;
}

int mcp_server_set_state_key(mcp_server *srv, const unsigned char *key, size_t len,
                             long long ttl_ms)
{
    if (srv == NULL || key == NULL || len != MCP__SEAL_KEY_LEN)
        return MCP_EINVAL;
    uv_mutex_lock(&srv->lock);
    /* Ids tell the current key from the previous one in a token. */
    int rc = mcp__sealer_rotate(&srv->sealer, (uint8_t)(srv->sealer.current_id + 1), key);
    if (rc == MCP_OK && ttl_ms > 0)
        srv->state_ttl_ms = ttl_ms;
    uv_mutex_unlock(&srv->lock);
    return rc;
}

int mcp__mrtr_init(mcp_server *srv)
{
    unsigned char key[MCP__SEAL_KEY_LEN];
    if (mcp__random_bytes(key, sizeof key) != MCP_OK)
        return MCP_EIO;
    mcp__sealer_init(&srv->sealer, 0, key);
    memset(key, 0, sizeof key);
    srv->state_ttl_ms = DEFAULT_STATE_TTL_MS;
    return MCP_OK;
}

/*
 * What a requestState is bound to: the method, what it names (tool or prompt name,
 * resource URI), the digest of the arguments and, with authorization, who the request
 * acts for (a digest of the principal's issuer and subject: another principal's retry
 * cannot use it), length-prefixed so that no two requests give the same bytes.
 */
static char *binding_of(const mcp_ctx *ctx, size_t *len)
{
    const char *name = json_string_value(json_object_get(ctx->params, "name"));
    if (name == NULL)
        name = json_string_value(json_object_get(ctx->params, "uri"));
    char args[65], owner[65] = "";
    if (mcp__json_digest_hex(json_object_get(ctx->params, "arguments"), args) != MCP_OK ||
        (ctx->principal != NULL && mcp__principal_owner(ctx->principal, owner) != MCP_OK))
        return NULL;
    mcp__buf b = {0};
    if (mcp__buf_appendf(&b, "%zu:%s|%zu:%s|%s|%s", strlen(ctx->method), ctx->method,
                         name ? strlen(name) : 0, name ? name : "", args, owner) != MCP_OK) {
        mcp__buf_free(&b);
        return NULL;
    }
    *len = b.len;
    return mcp__buf_steal(&b);
}

/*
 * requestStates already taken, by their token's random nonce, until they expire: a
 * hash table of fixed size, probed a few slots from the nonce's first bytes (random,
 * so uniform). When every probed slot holds a live state, the one that expires first
 * is forgotten, and floor rises to its expiry: a state that expires no later may have
 * been forgotten, so it is refused too. Under a flood of retries states thus lapse
 * early; none is ever taken twice. Nodes that share a state key do not share this:
 * across nodes a state is bound by its expiry alone.
 */
#define USED_SLOTS 131072
#define USED_PROBES 8

struct mcp__used_states {
    uint64_t floor;
    struct {
        unsigned char nonce[12];
        uint64_t expiry; /* 0: free */
    } slot[USED_SLOTS];
};

/* Takes an authentic token for its one retry: MCP_OK, MCP_EEXIST when it was taken
 * before (or may have been), MCP_ENOMEM. Under srv->lock. */
static int used_take(mcp_server *srv, const char *token, uint64_t now)
{
    /* "v1." then base64url of key id (1), nonce (12), expiry (8): 28 characters. */
    unsigned char head[24];
    size_t n = 0;
    if (strlen(token) < 3 + 28 || mcp__base64url_decode(token + 3, 28, head, &n) != MCP_OK ||
        n != 21)
        return MCP_EEXIST; /* cannot be: it was just authenticated */
    const unsigned char *nonce = head + 1;
    uint64_t expiry = 0;
    for (int i = 13; i < 21; i++)
        expiry = expiry << 8 | head[i];
    if (srv->used_states == NULL &&
        (srv->used_states = calloc(1, sizeof(*srv->used_states))) == NULL)
        return MCP_ENOMEM;
    struct mcp__used_states *u = srv->used_states;
    if (expiry <= u->floor)
        return MCP_EEXIST;
    uint32_t h = (uint32_t)nonce[0] | (uint32_t)nonce[1] << 8 | (uint32_t)nonce[2] << 16;
    size_t free_at = USED_SLOTS, victim = USED_SLOTS;
    for (size_t i = 0; i < USED_PROBES; i++) {
        size_t k = (h + i) % USED_SLOTS;
        if (u->slot[k].expiry > now && memcmp(u->slot[k].nonce, nonce, 12) == 0)
            return MCP_EEXIST;
        if (u->slot[k].expiry <= now && free_at == USED_SLOTS)
            free_at = k;
        if (victim == USED_SLOTS || u->slot[k].expiry < u->slot[victim].expiry)
            victim = k;
    }
    if (free_at == USED_SLOTS) {
        u->floor = u->slot[victim].expiry > u->floor ? u->slot[victim].expiry : u->floor;
        free_at = victim;
    }
    memcpy(u->slot[free_at].nonce, nonce, 12);
    u->slot[free_at].expiry = expiry;
    return MCP_OK;
}

/* Fails the request with -32602 before its handler runs; returns -1. */
static int refuse(mcp_ctx *ctx, const char *why)
{
    mcp_ctx_set_error(ctx, MCP_RPC_INVALID_PARAMS, "Invalid params: %s", why);
    ctx->invoke = NULL;
    return -1;
}

int mcp__mrtr_begin(mcp_ctx *ctx)
{
    mcp_server *srv = ctx->rt->srv;
    ctx->round = 1;
    json_t *responses = json_object_get(ctx->params, "inputResponses");
    if (responses != NULL && !json_is_object(responses))
        return refuse(ctx, "\"inputResponses\" must be an object of answers");
    ctx->responses = responses;
    json_t *token = json_object_get(ctx->params, "requestState");
    if (token == NULL)
        return 0;
    if (!json_is_string(token) || strlen(json_string_value(token)) != json_string_length(token))
        return refuse(ctx, "\"requestState\" must be the string the server gave");
    size_t blen;
    char *binding = binding_of(ctx, &blen);
    if (binding == NULL)
        return refuse(ctx, "out of memory reading \"requestState\"");
    unsigned char *plain = NULL;
    size_t len = 0;
    uv_mutex_lock(&srv->lock);
    int rc = mcp__sealer_unseal(&srv->sealer, json_string_value(token), binding, blen,
                                mcp__wall_ms(), &plain, &len);
    uv_mutex_unlock(&srv->lock);
    free(binding);
    if (rc == MCP_ETIMEDOUT)
        return refuse(ctx, "\"requestState\" has expired: send the request again without it");
    if (rc != MCP_OK)
        return refuse(ctx, "\"requestState\" is not one this server gave for this request");
    json_t *state = mcp__json_parse((const char *)plain, len, 0, NULL);
    free(plain);
    json_t *answers = json_object_get(state, "a");
    json_t *round = json_object_get(state, "r");
    json_t *from = json_object_get(state, "i");
    if (!json_is_object(answers) || !json_is_integer(round) || from == NULL) {
        json_decref(state);
        return refuse(ctx, "\"requestState\" is not one this server gave for this request");
    }
    /* mrtr.mdx: the retry is a new request with its own id. */
    if (json_equal(from, ctx->id)) {
        json_decref(state);
        return refuse(ctx, "a retry must have a JSON-RPC id of its own, not the id of the "
                           "request it retries");
    }
    uv_mutex_lock(&srv->lock);
    rc = used_take(srv, json_string_value(token), mcp__wall_ms());
    uv_mutex_unlock(&srv->lock);
    if (rc != MCP_OK) {
        json_decref(state);
        return refuse(ctx, rc == MCP_ENOMEM ? "out of memory reading \"requestState\""
                                            : "\"requestState\" was used by a retry already: "
                                              "send the request again without it");
    }
    ctx->round = (int)json_integer_value(round);
    ctx->prior = json_incref(answers);
    ctx->state_in = json_incref(json_object_get(state, "s"));
    json_decref(state);
    return 0;
}

/* Whether an answer has the shape of the method's result (mrtr.mdx, Error Handling:
 * servers SHOULD validate the InputResponses). */
int mcp__mrtr_answer_valid(const char *method, const json_t *a)
{
    if (!json_is_object(a))
        return 0;
    if (strcmp(method, "elicitation/create") == 0) {
        const char *action = json_string_value(json_object_get(a, "action"));
        json_t *content = json_object_get(a, "content");
        return action != NULL &&
               (strcmp(action, "accept") == 0 || strcmp(action, "decline") == 0 ||
                strcmp(action, "cancel") == 0) &&
               (content == NULL || json_is_object(content));
    }
    if (strcmp(method, "sampling/createMessage") == 0)
        return json_is_string(json_object_get(a, "role")) && json_object_get(a, "content") != NULL;
    return json_is_array(json_object_get(a, "roots")); /* roots/list */
}

int mcp__mrtr_ask(mcp_ctx *ctx, const char *key, const char *method, json_t *params,
                  json_t **result)
{
    json_t *question = json_pack("{s:s, s:o}", "method", method, "params", params);
    char digest[65];
    if (question == NULL || mcp__json_digest_hex(question, digest) != MCP_OK) {
        json_decref(question);
        return MCP_ENOMEM;
    }
    char auto_key[48], plain_key[32] = "";
    if (key == NULL && ctx->task_id != NULL) /* the key it had before the task began */
        snprintf(plain_key, sizeof plain_key, "input-%d", ctx->nasked);
    if (key == NULL) {
        /* A task's keys name one question each for its life (the tasks extension): its
         * own keys carry the question's digest. */
        if (ctx->task_id != NULL)
            snprintf(auto_key, sizeof auto_key, "input-%d-%.12s", ctx->nasked, digest);
        else
            snprintf(auto_key, sizeof auto_key, "input-%d", ctx->nasked);
        key = auto_key;
    }
    ctx->nasked++;
    /* An answer in this retry, then one carried from an earlier round for the same
     * question. */
    json_t *answer = json_object_get(ctx->responses, key);
    json_t *carried = json_object_get(ctx->prior, key);
    if (carried == NULL && plain_key[0] != '\0') {
        /* Asked in a Multi Round-Trip round before the handler made its call a task, under
         * the key the round gave it: the same question has its answer. */
        json_t *before = json_object_get(ctx->prior, plain_key);
        if (strcmp(json_string_value(json_object_get(before, "h")) ?: "", digest) == 0)
            carried = before;
    }
    int same = carried != NULL &&
               strcmp(json_string_value(json_object_get(carried, "h")) ?: "", digest) == 0;
    if (answer == NULL && same)
        answer = json_object_get(carried, "a");
    if (answer == NULL && carried != NULL && ctx->task_id != NULL) {
        json_decref(question);
        return MCP_EEXIST; /* answered for another question: a task never asks it again */
    }
    if (answer != NULL) {
        json_decref(question);
        if (!mcp__mrtr_answer_valid(method, answer)) {
            ctx->bad_answer = 1;
            mcp_ctx_set_error(ctx, MCP_RPC_INVALID_PARAMS,
                              "Invalid params: inputResponses.%s is not a result of %s", key,
                              method);
            return MCP_EPROTO;
        }
        if (ctx->used == NULL && (ctx->used = json_object()) == NULL)
            return MCP_ENOMEM;
        json_object_set_new(ctx->used, key, json_pack("{s:s, s:O}", "h", digest, "a", answer));
        if (result != NULL)
            *result = json_deep_copy(answer);
        return MCP_OK;
    }
    if (json_object_size(ctx->asked) >= MAX_QUESTIONS || json_object_get(ctx->asked, key)) {
        json_decref(question);
        return MCP_ELIMIT; /* too many questions, or the same key twice in one round */
    }
    if (ctx->asked == NULL && (ctx->asked = json_object()) == NULL) {
        json_decref(question);
        return MCP_ENOMEM;
    }
    json_object_set_new(ctx->asked, key, question);
    return MCP_EINPUT;
}

json_t *mcp__mrtr_finish(mcp_ctx *ctx, json_t *result)
{
    if (ctx->bad_answer) {
        json_decref(result);
        return NULL; /* the error set by mcp__mrtr_ask */
    }
    if (json_object_size(ctx->asked) == 0)
        return result;
    /* Questions are open: what the handler returned is not the answer yet. */
    json_decref(result);
    mcp_server *srv = ctx->rt->srv;
    if (ctx->round >= MAX_ROUNDS) {
        mcp_ctx_set_error(ctx, MCP_RPC_INTERNAL_ERROR,
                          "Internal error: the handler still asks for input after %d rounds",
                          MAX_ROUNDS);
        return NULL;
    }
    json_t *state = json_pack("{s:i, s:O, s:o}", "r", ctx->round + 1, "i", ctx->id, "a",
                              ctx->used != NULL ? json_incref(ctx->used) : json_object());
    if (state != NULL && ctx->state_out != NULL)
        json_object_set(state, "s", ctx->state_out);
    char *text = state != NULL ? json_dumps(state, JSON_COMPACT) : NULL;
    json_decref(state);
    size_t blen = 0;
    char *binding = text != NULL ? binding_of(ctx, &blen) : NULL;
    char *token = NULL;
    int rc = MCP_ENOMEM;
    if (binding != NULL) {
        uv_mutex_lock(&srv->lock);
        rc = mcp__sealer_seal(&srv->sealer, binding, blen, text, strlen(text),
                              mcp__wall_ms() + (uint64_t)srv->state_ttl_ms, &token);
        uv_mutex_unlock(&srv->lock);
    }
    free(binding);
    free(text);
    if (rc != MCP_OK) {
        mcp_ctx_set_error(ctx, MCP_RPC_INTERNAL_ERROR,
                          rc == MCP_ELIMIT ? "Internal error: the answers and state to carry to "
                                             "the next round are too large"
                                           : "Internal error: cannot seal the request state");
        return NULL;
    }
    json_t *out = json_pack("{s:s, s:O, s:s}", "resultType", "input_required", "inputRequests",
                            ctx->asked, "requestState", token);
    free(token);
    return out;
}

void mcp__mrtr_free(mcp_ctx *ctx)
{
    json_decref(ctx->prior);
    json_decref(ctx->used);
    json_decref(ctx->asked);
    json_decref(ctx->state_in);
    json_decref(ctx->state_out);
}

/* ---- Public ---- */

int mcp_ctx_round(const mcp_ctx *ctx)
{
    return ctx->modern ? ctx->round : 1;
}

const json_t *mcp_ctx_round_state(const mcp_ctx *ctx)
{
    return ctx->state_in; /* NULL in the first round, and so always in the legacy era */
}

int mcp_ctx_keep_state(mcp_ctx *ctx, json_t *state)
{
    json_decref(ctx->state_out);
    ctx->state_out = state;
    return MCP_OK;
}

int mcp_ctx_require_capability(mcp_ctx *ctx, const char *capability)
{
    if (capability == NULL)
        return MCP_EINVAL;
    if (json_object_get(ctx->client_caps, capability) != NULL)
        return MCP_OK;
    mcp_ctx_set_error_data(ctx, MCP_RPC_MISSING_CAPABILITY,
                           json_pack("{s:{s:{}}}", "requiredCapabilities", capability),
                           "Missing required client capability: %s", capability);
    return MCP_ENOTSUP;
}
