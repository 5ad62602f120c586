/* SPDX-License-Identifier: MIT */
/*
 * libmcp - the Model Context Protocol in C.
 *
 * The ground every other header stands on: the attribute macros, the library's
 * version, and its error codes. It knows nothing of JSON or of the protocol, so
 * that the library's lowest layer can include it.
 *
 * Threading: every function here is thread-safe; none touches shared state.
 */
#ifndef MCP_BASE_H
#define MCP_BASE_H

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define MCP_EXTERN __attribute__((visibility("default")))
#define MCP_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define MCP_EXTERN
#define MCP_PRINTF(a, b)
#endif

#define MCP_VERSION_MAJOR 0
#define MCP_VERSION_MINOR 2
#define MCP_VERSION_PATCH 0
#define MCP_VERSION_STRING "0.2.0"

/*
 * Library error codes. Every function that can fail returns one of these
 * (negative) or MCP_OK. mcp_strerror() gives a sentence for each.
 */
typedef enum mcp_error {
    MCP_OK = 0,
    MCP_EINVAL = -1,      /* an argument is invalid */
    MCP_ENOMEM = -2,      /* out of memory */
    MCP_ETIMEDOUT = -3,   /* the peer did not answer in time */
    MCP_ECANCELED = -4,   /* the request was cancelled */
    MCP_ENOTSUP = -5,     /* the peer did not declare the needed capability */
    MCP_ECLOSED = -6,     /* the connection or session is closed */
    MCP_ERPC = -7,        /* the peer answered with a JSON-RPC error */
    MCP_EIO = -8,         /* an operating system call failed */
    MCP_EEXIST = -9,      /* an item with that name is already registered */
    MCP_ENOENT = -10,     /* no such item */
    MCP_EPROTO = -11,     /* the peer broke the protocol */
    MCP_ESTATE = -12,     /* not allowed in the current state or on this thread */
    MCP_ELIMIT = -13,     /* a configured limit was reached */
    MCP_ESTATELESS = -14, /* a stateless server cannot send the client a request */
    MCP_EHTTP = -15,      /* the server answered with an HTTP error status */
    MCP_ECONNECT = -16,   /* the server cannot be reached (refused, unresolvable, TLS) */
    MCP_EINPUT = -17,     /* 2026-07-28: the client's answer comes with the request's retry */
    MCP_EAUTH = -18       /* authorization failed: no token could be had (see the message) */
} mcp_error;

/* Returns a static, human-readable sentence for an mcp_error value ("Unknown error"
 * for any other value); never NULL. */
MCP_EXTERN const char *mcp_strerror(int err);

#ifdef __cplusplus
}
#endif

#endif /* MCP_BASE_H */
