/* SPDX-License-Identifier: MIT */
/*
 * Authorization, the client's side: libmcp's HTTP client as an OAuth 2.1
 * client of a protected MCP server (MCP's authorization chapter, revisions
 * 2025-11-25 and 2026-07-28; RFC 6749, 6750, 7591, 7636, 8414, 8628, 8693,
 * 8707, 9068, 9207, 9449, 9728; the client ID metadata documents of SEP-991).
 *
 * An mcp_oauth provider, set in mcp_http_client_opts.oauth, puts a token on
 * every request to the server (`Authorization: Bearer …`, or `DPoP …` with a
 * proof) and gets one when the server asks:
 *   - a 401 is read (its `WWW-Authenticate`: resource_metadata, scope, error),
 *     the Protected Resource Metadata found (the challenge's URL, else the
 *     path-inserted well-known URI, then the root one; any 4xx moves on) and
 *     its `resource` checked against the server's URL; the authorization
 *     server's metadata found by RFC 8414 and OpenID Connect discovery, every
 *     path-insertion order, its `issuer` checked exactly; every URL they give
 *     must be https (or http on a loopback host, or when the MCP server itself
 *     is reached over http); a server with no
 *     metadata at all (revision 2025-03-26) gets /authorize, /token and
 *     /register at its root;
 *   - a client identity: pre-registered (client_id), a client ID metadata
 *     document (client_metadata_url, when the authorization server supports
 *     them), else dynamic registration; bound to the issuer that issued it;
 *   - then the grant: authorization code with PKCE S256, `state` and RFC 9207
 *     `iss` checked on the way back, the browser step left to the application
 *     (on_redirect); or client credentials, a JWT bearer assertion (workload
 *     identity), or enterprise-managed authorization (an identity assertion
 *     grant obtained by token exchange at the enterprise's identity provider);
 *   - the request that met the 401 is sent again with the token. A token that
 *     expires is refreshed (before it does, and on a 401), a rotated refresh
 *     token kept at once; a 403 `insufficient_scope` asks for the union of the
 *     scopes held and the ones challenged by a new authorization, never by a
 *     refresh. Every loop is bounded, and a request that cannot be authorized
 *     fails with MCP_EAUTH and a message that says why.
 *
 * Nothing here blocks: HTTP requests to the authorization server run on the
 * client's loop. No token, secret, code or assertion is ever written to a log
 * line or an error message; text from an authorization server (an
 * error_description) reaches a message only with control characters removed
 * and bounded in length.
 */
#ifndef MCP_OAUTH_H
#define MCP_OAUTH_H

#include <jansson.h>
#include <stddef.h>

#include <mcp/base.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mcp_oauth mcp_oauth;

/* The grant the provider uses to get its first token. */
typedef enum mcp_oauth_grant {
    /* Authorization code with PKCE: a user signs in through on_redirect. */
    MCP_OAUTH_AUTHORIZATION_CODE = 0,
    /* client_credentials (RFC 6749 §4.4): the client acts for itself, with a
     * secret (basic or post) or private_key_jwt (private_key_pem). */
    MCP_OAUTH_CLIENT_CREDENTIALS = 1,
    /* urn:ietf:params:oauth:grant-type:jwt-bearer (RFC 7523) with the assertion
     * that assertion (or on_assertion) gives: a workload's identity token. */
    MCP_OAUTH_JWT_BEARER = 2,
    /* Enterprise-managed authorization: the identity provider's ID token
     * (idp_id_token) is exchanged there (RFC 8693) for an identity assertion
     * grant (urn:ietf:params:oauth:token-type:id-jag) naming the MCP server's
     * authorization server, which then grants a token for it (jwt-bearer). */
    MCP_OAUTH_ENTERPRISE = 3,
    /* The device authorization grant (RFC 8628), for a host with no browser:
     * on_device_code shows the user a code to enter at a URL on any device, and
     * the client polls until the user has approved (or refused, or the code
     * expired). */
    MCP_OAUTH_DEVICE = 4
} mcp_oauth_grant;

/*
 * The browser step of the authorization code grant: url is the authorization
 * request to open (or to print, for a user on another machine). When the
 * authorization server redirects back to redirect_uri, give the whole URL it
 * redirected to to mcp_oauth_complete(). Runs on the client's loop thread:
 * do not block there.
 */
typedef void (*mcp_oauth_redirect_fn)(mcp_oauth *o, const char *url, void *user);

/*
 * The device grant's step for the user: open verification_uri on any device
 * and enter user_code (verification_uri_complete, when not NULL, carries the
 * code already). Loop thread; do not block. The strings are the authorization
 * server's, checked: an http(s) URL, and a code of printable characters.
 */
typedef void (*mcp_oauth_device_fn)(mcp_oauth *o, const char *verification_uri,
                                    const char *user_code, const char *verification_uri_complete,
                                    void *user);

/*
 * A JWT bearer assertion for MCP_OAUTH_JWT_BEARER, when assertion is NULL (a
 * workload identity token that changes, say): audience is the authorization
 * server's issuer. Return a malloc'd string (the library frees it), or NULL
 * when there is none (the authorization fails). Loop thread; do not block.
 */
typedef char *(*mcp_oauth_assertion_fn)(mcp_oauth *o, const char *audience, void *user);

/*
 * Where tokens and client registrations are kept between runs: one JSON
 * document per MCP server (key: the server's URL, as given to the connect).
 * load: MCP_OK with *json malloc'd, MCP_ENOENT when there is none; save and
 * erase: MCP_OK or an error (a save that fails is reported, and the token is
 * still used for this run). Called on the loop thread; keep them quick (a local
 * file). The document holds secrets: keep it where only its user can read it.
 * A store must outlive every provider given it (a provider lives until the
 * client connected with it is freed).
 */
typedef struct mcp_token_store {
    int (*load)(void *user, const char *key, char **json);
    int (*save)(void *user, const char *key, const char *json);
    int (*erase)(void *user, const char *key);
    /* The keys held, a malloc'd NULL-terminated array of malloc'd strings (free
     * each, then the array); may be NULL (a store that cannot list). */
    int (*keys)(void *user, char ***keys);
    /* Several processes may share a store (an IDE's gateway and a terminal's
     * mcp): a refresh token is spent by one of them only. lock takes the key's
     * lock without waiting: MCP_OK and *handle, or MCP_ESTATE while another holds
     * it (the provider tries again a little later, up to 5 s, reading the store
     * each time for tokens the other got). unlock releases it. Both may be NULL
     * (a store of one process). */
    int (*lock)(void *user, const char *key, void **handle);
    void (*unlock)(void *user, void *handle);
    void *user;
} mcp_token_store;

/*
 * Options of a provider. NULL or zeroed gives the defaults; size as in
 * mcp_http_client_opts. Strings are copied.
 *
 * With a store, what was kept for the server is used: its client registration,
 * tokens (refreshed when they expire) and DPoP key. A provider that cannot sign
 * a user in (the authorization code grant without on_redirect: a program run
 * from a script) takes the grant the store recorded when that grant needs no
 * user: client credentials with the secret kept. So one interactive login (or
 * `mcp login`) serves every later run.
 */
typedef struct mcp_oauth_opts {
    size_t size;
    mcp_oauth_grant grant;
    /* client_name for dynamic registration (default "libmcp"). */
    const char *client_name;
    /* Authorization code: where the authorization server sends the browser
     * back, and the hook that starts the browser step (both required for that
     * grant, unless a stored token or refresh token is enough). */
    const char *redirect_uri;
    mcp_oauth_redirect_fn on_redirect;
    void *redirect_user;
    /* 1: the library listens for the redirect itself, on 127.0.0.1 (RFC 8252
     * §7.3) at loopback_port (0: any free port), path /callback, for the time of
     * the browser step, and redirect_uri is that listener's URL (a redirect_uri
     * given is then an error). on_redirect only has to open the browser. A
     * request to the listener whose state is not the one awaited is refused
     * (400) and the wait goes on. */
    int loopback_redirect;
    int loopback_port;
    /* MCP_OAUTH_DEVICE: the user's step. */
    mcp_oauth_device_fn on_device_code;
    void *device_user;
    /* A pre-registered client: no registration is made. client_secret may be
     * NULL (a public client). token_endpoint_auth_method: "client_secret_basic",
     * "client_secret_post", "private_key_jwt" or "none"; NULL: the first the
     * authorization server supports of what the client has. */
    const char *client_id;
    const char *client_secret;
    const char *token_endpoint_auth_method;
    /* private_key_jwt: a PEM private key (EC P-256 for ES256, RSA for RS256)
     * that signs the client's assertions, and its alg (default: from the key). */
    const char *private_key_pem;
    const char *signing_alg;
    /* The URL of this client's metadata document (SEP-991): used as client_id
     * by an authorization server that says client_id_metadata_document_supported. */
    const char *client_metadata_url;
    /* Scopes (space-separated) to ask for instead of the ones the server
     * advertises or challenges with; step-ups still add challenged ones. */
    const char *scope;
    /* RFC 8707 `resource`: NULL sends the Protected Resource Metadata's
     * resource (else the server's URL); set: this value instead; omit_resource
     * 1: none at all (identity providers that refuse it). */
    const char *resource;
    int omit_resource;
    /* An issuer spelling accepted besides the exact one (a trailing slash that
     * the metadata adds or drops, say). */
    const char *issuer_alias;
    /* 1: sender-constrained tokens (RFC 9449 DPoP, ES256, a key made per provider
     * and kept in the store). */
    int dpop;
    /* MCP_OAUTH_JWT_BEARER: the assertion, or the hook that makes one. */
    const char *assertion;
    mcp_oauth_assertion_fn on_assertion;
    void *assertion_user;
    /* MCP_OAUTH_ENTERPRISE: the identity provider's token endpoint, the user's ID
     * token there, and the client's credentials at the identity provider
     * (idp_client_secret may be NULL). */
    const char *idp_token_endpoint;
    const char *idp_id_token;
    const char *idp_client_id;
    const char *idp_client_secret;
    /* Where tokens persist; NULL: in memory only, for the provider's life. */
    const mcp_token_store *store;
    /* Step-ups (403 insufficient_scope) one request may cause before it fails
     * (default 2), and authorizations after a 401 (default 2): a server that
     * refuses every new token ends with MCP_EAUTH, never a loop. */
    int max_step_ups;
    int max_reauthorizations;
    /* Bound on each HTTP exchange with an authorization server (default 30 s)
     * and on the browser step (default 300 s). */
    int http_timeout_ms;
    int redirect_timeout_ms;
    /* CAs to trust for the authorization server (default: the system's). */
    const char *cacert;
} mcp_oauth_opts;

/* A provider: MCP_OK and *out, MCP_EINVAL for options that cannot work (a grant
 * without what it needs, a key that does not load), MCP_ENOMEM. */
MCP_EXTERN int mcp_oauth_new(const mcp_oauth_opts *opts, mcp_oauth **out);
/* Releases the application's hold on o; a client connected with it keeps it
 * until it is freed. NULL is ignored. */
MCP_EXTERN void mcp_oauth_free(mcp_oauth *o);

/*
 * The end of the browser step: callback_url is the URL the authorization server
 * redirected to (its query holds code, state and maybe iss, or error). Any
 * thread. MCP_OK (posted: the flow goes on on the loop, and what it gives is seen
 * by the requests that wait; a URL no browser step awaits is ignored there, with a
 * warning); MCP_ESTATE when the provider is not connected; MCP_EINVAL for a NULL
 * argument; MCP_ENOMEM.
 */
MCP_EXTERN int mcp_oauth_complete(mcp_oauth *o, const char *callback_url);

/*
 * The default store: one file per server under dir (created 0700; files 0600,
 * replaced atomically), named by a hash of the key. dir NULL:
 * $XDG_STATE_HOME/mcp/oauth, else ~/.local/state/mcp/oauth. MCP_OK and *out
 * (free with mcp_token_store_free), MCP_EIO when there is no home,
 * MCP_ENOMEM.
 */
MCP_EXTERN int mcp_token_store_files(const char *dir, mcp_token_store **out);
/* Frees a store made by mcp_token_store_files (NULL is ignored). */
MCP_EXTERN void mcp_token_store_free(mcp_token_store *s);

/*
 * What s keeps for server_url, without a secret: a new object with "server",
 * "issuer", "client_id", "grant", "scope", "token_type", "expires_at" (Unix
 * seconds, 0: unknown), "access_token" and "refresh_token" as true or false
 * (held or not), "dpop" (true when tokens are bound to a key). MCP_OK and *out;
 * MCP_ENOENT when nothing is kept; MCP_EINVAL; MCP_ENOMEM; what load returned.
 */
MCP_EXTERN int mcp_token_store_describe(const mcp_token_store *s, const char *server_url,
                                        json_t **out);
/* Forgets what s keeps for server_url: MCP_OK, MCP_ENOENT, or erase's error. */
MCP_EXTERN int mcp_token_store_forget(const mcp_token_store *s, const char *server_url);

#ifdef __cplusplus
}
#endif

#endif /* MCP_OAUTH_H */
