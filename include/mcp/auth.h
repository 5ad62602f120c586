/* SPDX-License-Identifier: MIT */
/*
 * Authorization of the HTTP endpoint: libmcp as an OAuth 2.1 resource server
 * (MCP's authorization chapter, revisions 2025-11-25 and 2026-07-28; RFC 6750,
 * RFC 9728, RFC 8707).
 *
 * With mcp_http_opts.auth set, every request to the MCP endpoint (and to the
 * 2024-11-05 HTTP+SSE endpoints) must carry `Authorization: Bearer <token>`,
 * checked before any MCP handling:
 *   - no token: 401 with `WWW-Authenticate: Bearer resource_metadata="…",
 *     scope="…"` (scope: required_scopes, when there are any);
 *   - a token that fails verification, or whose claims do not hold (audience,
 *     expiry, issuer): 401 with `error="invalid_token"` and an
 *     `error_description`;
 *   - a token without the required scopes: 403 with
 *     `error="insufficient_scope"`, the scopes needed and `resource_metadata`;
 *   - a token in the query string (`access_token=`), or two Authorization
 *     headers: 400 with `error="invalid_request"`;
 *   - a verifier that cannot decide (its authorization server is out of
 *     reach): 503.
 * Each of these carries a JSON-RPC error in its body. The Protected Resource
 * Metadata document (RFC 9728) is served on the endpoint's own listener at the
 * path-inserted well-known URI of the resource (and at the root when asked),
 * with CORS for browser clients; it needs no token.
 *
 * A token is checked by a verifier (mcp_token_verifier) the application gives:
 * it may complete later, so that it can do I/O on the loop without blocking it.
 * What it vouches for is a set of claims (a JSON object, with the names of RFC
 * 9068 and RFC 7662: sub, client_id, scope, aud, iss, exp, nbf); the library
 * then checks the audience (RFC 8707: the token must name this resource), the
 * expiry and, when configured, the issuer, and keeps the outcome in a bounded
 * cache keyed by a hash of the token (never the token itself), never past the
 * token's expiry. No token is logged or passed on.
 */
#ifndef MCP_AUTH_H
#define MCP_AUTH_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include <mcp/base.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- The principal: who a request acts for ---- */

/*
 * What a verified access token says. Opaque; reference-counted by the library.
 * A handler borrows its request's principal (mcp_ctx_principal) for the call.
 * Every accessor takes a NULL principal and answers as for an empty one.
 */
typedef struct mcp_principal mcp_principal;

/* "sub", or NULL. Borrowed from p. */
MCP_EXTERN const char *mcp_principal_subject(const mcp_principal *p);
/* "client_id" (RFC 9068), else "azp", or NULL. Borrowed from p. */
MCP_EXTERN const char *mcp_principal_client_id(const mcp_principal *p);
/* "iss", or NULL. Borrowed from p. */
MCP_EXTERN const char *mcp_principal_issuer(const mcp_principal *p);
/* The granted scopes ("scope", space-separated, or "scp", a string or an array
 * of strings), NULL-terminated (never NULL itself). Borrowed from p. */
MCP_EXTERN const char *const *mcp_principal_scopes(const mcp_principal *p);
/* 1 when scope is among the granted scopes, else 0. */
MCP_EXTERN int mcp_principal_has_scope(const mcp_principal *p, const char *scope);
/* "exp" in seconds since the epoch; 0 when the token has none. */
MCP_EXTERN int64_t mcp_principal_expires(const mcp_principal *p);
/* Every claim, as the verifier gave them (a JSON object), or NULL for a NULL p. Borrowed
 * from p (do not modify). */
MCP_EXTERN const json_t *mcp_principal_claims(const mcp_principal *p);

/* ---- Verifiers ---- */

/* One verification in progress: completed exactly once by one of the
 * mcp_token_check_* calls below, on the loop's thread. */
typedef struct mcp_token_check mcp_token_check;

typedef struct mcp_token_verifier {
    /*
     * Starts checking token (NUL-terminated, its syntax already checked: a
     * b64token of RFC 6750 no longer than mcp_auth_opts.max_token). Completes
     * check later, or from inside this call. Loop thread. token is valid only
     * during the call: copy what must outlive it. The request may end before
     * the check completes (its client gone); completing it is still required,
     * and the library then forgets the outcome.
     */
    void (*verify)(void *user, const char *token, mcp_token_check *check);
    void *user;
} mcp_token_verifier;

/* The token is good and says claims (a JSON object; the reference is stolen,
 * also on failure). The library still checks aud, exp, nbf and iss. */
MCP_EXTERN void mcp_token_check_accept(mcp_token_check *check, json_t *claims);
/* The token is not good: 401 invalid_token. description (may be NULL) goes in
 * the challenge's error_description, with characters RFC 6750 does not allow
 * there replaced by spaces; keep it short and free of secrets. */
MCP_EXTERN void mcp_token_check_reject(mcp_token_check *check, const char *description);
/* The verifier cannot decide now (its authorization server is out of reach):
 * 503, nothing cached. */
MCP_EXTERN void mcp_token_check_unavailable(mcp_token_check *check, const char *description);

/* ---- The built-in verifier of JWT access tokens ---- */

/*
 * JWT access tokens (RFC 9068) checked against the authorization server's keys:
 * the signature with one of the allowed algorithms (never "none", never HMAC), the
 * header's typ ("at+jwt"), then the claims as for any verifier (audience, issuer,
 * expiry). The keys (JWKS, RFC 7517) are fetched on the endpoint's loop from
 * jwks_uri, or from the jwks_uri of the issuer's metadata (RFC 8414, then OpenID
 * Connect discovery; its "issuer" must be mcp_auth_opts.issuer exactly), kept, and
 * fetched again when older than keys_ttl_ms or when a token names a key they lack
 * (at most every refresh_min_ms: a storm of unknown key ids costs one fetch). While
 * the keys cannot be fetched, the keys already there keep working, and a token
 * that needs others gets 503.
 */
typedef struct mcp_jwt_opts {
    size_t size;          /* the caller's sizeof(mcp_jwt_opts); 0: this one */
    const char *jwks_uri; /* NULL: from the issuer's metadata */
    /* Accepted algorithms, NULL-terminated, among RS256, RS384, RS512, PS256, PS384,
     * PS512 and ES256 (NULL: RS256, PS256, ES256). */
    const char *const *algorithms;
    int refresh_min_ms; /* 0: 10000; < 0: none (each unknown key id fetches) */
    int keys_ttl_ms;    /* 0: 3600000 */
    int timeout_ms;     /* each fetch; 0: 5000 */
    int any_type;       /* accept tokens whose typ is not at+jwt (not recommended) */
} mcp_jwt_opts;

/* ---- The built-in verifier of opaque tokens: introspection ---- */

/*
 * OAuth 2.0 Token Introspection (RFC 7662): a token the cache does not know is posted
 * to the authorization server's introspection endpoint with this server's client
 * credentials (HTTP Basic); "active": true and its claims make a good token (the gate
 * then checks audience, issuer and time, and keeps it for cache_ttl_ms at most, never
 * past its "exp"), "active": false a bad one (401), no answer a 503. At most 256
 * introspections are in flight; more get 503.
 */
typedef struct mcp_introspection_opts {
    size_t size;           /* the caller's sizeof; 0: this one */
    const char *endpoint;  /* the introspection endpoint's URL; required */
    const char *client_id; /* this server's client at the authorization server */
    const char *client_secret;
    int timeout_ms; /* each introspection; 0: 5000 */
} mcp_introspection_opts;

/* ---- Options ---- */

/* The scopes a JSON-RPC method needs besides required_scopes (an array of them is
 * ended by one whose method is NULL). */
typedef struct mcp_method_scopes {
    const char *method; /* "resources/read", "prompts/get", a custom method... */
    const char *scopes; /* space-separated scope tokens, e.g. "files:read" */
} mcp_method_scopes;

typedef struct mcp_auth_opts {
    /* The caller's sizeof(mcp_auth_opts), so the struct can grow (0: this one). */
    size_t size;
    /* This server's resource identifier (RFC 8707, RFC 9728 `resource`): the
     * canonical URL of the MCP endpoint as clients reach it, e.g.
     * "https://mcp.example.com/mcp" (no fragment). Required. */
    const char *resource;
    /* Issuer URLs of the authorization servers, for the metadata document
     * (NULL-terminated; NULL: none listed). */
    const char *const *authorization_servers;
    /* scopes_supported of the metadata document (NULL-terminated; NULL: none). */
    const char *const *scopes_supported;
    /* Scopes every request needs (NULL-terminated; NULL: none): a token without
     * them gets 403 insufficient_scope. Also the scope of the 401 challenge. */
    const char *const *required_scopes;
    const char *resource_name; /* resource_name of the document; NULL: none */
    /* Members added to the metadata document: the text of a JSON object (NULL:
     * none). It cannot replace the members above. */
    const char *metadata_extra;
    /* Also serve the document at /.well-known/oauth-protected-resource (the
     * root) when the resource has a path. */
    int metadata_at_root;
    /* When set, a token's "iss" must be exactly this. */
    const char *issuer;
    /* Accept tokens that name no audience at all (opaque tokens of a verifier
     * that knows them to be this server's). A token that names audiences must
     * always name this resource. Default 0: "aud" is required. */
    int allow_no_audience;
    int clock_skew_s; /* tolerance on exp and nbf; 0: 60 s; < 0: none */
    size_t cache_max; /* verified tokens remembered; 0: 10000 */
    int cache_ttl_ms; /* how long a verification is trusted at most; 0: 300000 */
    size_t max_token; /* longest token looked at; longer: 401; 0: 8192 bytes */
    /* Who checks tokens: the application's verifier, or (verifier.verify NULL) the
     * built-in ones: JWT access tokens with jwt's options (which needs issuer), opaque
     * tokens by introspection with introspection's. With both, a token that has the
     * shape of a JWS (three parts) goes to the first, any other to the second. */
    mcp_token_verifier verifier;
    const mcp_jwt_opts *jwt;
    const mcp_introspection_opts *introspection;
    /* A tools/call whose token lacks the tool's scopes (mcp_tool_def.scopes) is answered
     * with a tool error the model can read instead of 403 insufficient_scope. */
    int scope_error_as_result;
    /* Scopes per method (NULL: none besides required_scopes): a request whose token
     * lacks its method's gets 403 insufficient_scope naming them, as a tool's do (a
     * client steps up); tools/call's are the tool's own (mcp_tool_def.scopes) and
     * those given here for "tools/call" apply to every tool. */
    const mcp_method_scopes *method_scopes;
} mcp_auth_opts;

#ifdef __cplusplus
}
#endif

#endif
