/* SPDX-License-Identifier: MIT */
/*
 * libmcp - the Model Context Protocol in C.
 *
 * Definitions shared by the server and the client: JSON-RPC error codes,
 * protocol versions, logging levels, and builders of content and results
 * (<mcp/base.h>, which it includes, has the library's error codes).
 *
 * Threading: every function here is thread-safe; none touches shared state.
 */
#ifndef MCP_COMMON_H
#define MCP_COMMON_H

#include <jansson.h>
#include <stddef.h>

#include <mcp/base.h>

#ifdef __cplusplus
extern "C" {
#endif

/* JSON-RPC 2.0 error codes, and the ones MCP defines. */
#define MCP_RPC_PARSE_ERROR (-32700)
#define MCP_RPC_INVALID_REQUEST (-32600)
#define MCP_RPC_METHOD_NOT_FOUND (-32601)
#define MCP_RPC_INVALID_PARAMS (-32602)
#define MCP_RPC_INTERNAL_ERROR (-32603)
#define MCP_RPC_SERVER_ERROR (-32000)
#define MCP_RPC_REQUEST_TIMEOUT (-32001)
#define MCP_RPC_RESOURCE_NOT_FOUND (-32002)
/* Revision 2026-07-28 (the -32020..-32099 range is the specification's). */
#define MCP_RPC_HEADER_MISMATCH (-32020)
#define MCP_RPC_MISSING_CAPABILITY (-32021)
#define MCP_RPC_UNSUPPORTED_VERSION (-32022)

/*
 * A JSON-RPC error as received from a peer (MCP_ERPC). `data` is owned by the
 * struct; release it with mcp_rpc_error_clear(). A zeroed struct is valid and
 * empty.
 */
typedef struct mcp_rpc_error {
    int code;
    char message[256];
    json_t *data;
} mcp_rpc_error;

/* Releases err->data (json_decref) and zeroes the struct, so it can be filled again.
 * err must be zeroed or filled by the library, not garbage. NULL is allowed. */
MCP_EXTERN void mcp_rpc_error_clear(mcp_rpc_error *err);

/* Protocol versions, newest first. 2026-07-28 is the modern era (no initialize, no
 * sessions: every request names its revision in _meta); the others are the legacy era,
 * opened by initialize, and MCP_PROTOCOL_LATEST is the newest of those: what initialize
 * offers. */
#define MCP_PROTOCOL_2026_07_28 "2026-07-28"
#define MCP_PROTOCOL_LATEST "2025-11-25"
#define MCP_PROTOCOL_2025_11_25 "2025-11-25"
#define MCP_PROTOCOL_2025_06_18 "2025-06-18"
#define MCP_PROTOCOL_2025_03_26 "2025-03-26"
#define MCP_PROTOCOL_2024_11_05 "2024-11-05"

/*
 * Returns the supported version equal to `version` (compared exactly), as a
 * static string of the library's, or NULL when `version` is NULL or not one we
 * speak.
 */
MCP_EXTERN const char *mcp_protocol_version_supported(const char *version);

/* Logging levels of notifications/message (RFC 5424 severities). */
typedef enum mcp_log_level {
    MCP_LOG_DEBUG = 0,
    MCP_LOG_INFO,
    MCP_LOG_NOTICE,
    MCP_LOG_WARNING,
    MCP_LOG_ERROR,
    MCP_LOG_CRITICAL,
    MCP_LOG_ALERT,
    MCP_LOG_EMERGENCY
} mcp_log_level;

/* "debug", "info", ... (a static string); NULL for a value out of range. */
MCP_EXTERN const char *mcp_log_level_name(mcp_log_level level);
/* Parses a level name as mcp_log_level_name() writes it (lowercase, compared exactly);
 * returns the level, or MCP_EINVAL for NULL or any other text. */
MCP_EXTERN int mcp_log_level_parse(const char *name);

/*
 * How lines on stderr are written: the library's own warnings and errors, and the lines
 * a program writes with mcp_log_write(). One line each, in one write(2), so lines of
 * several threads never interleave; logfmt and JSON lines are valid UTF-8 (a byte that
 * does not begin valid UTF-8 becomes U+FFFD) and carry the time, in UTC to the millisecond.
 */
typedef enum mcp_log_format {
    MCP_LOG_FORMAT_TEXT = 0,   /* "libmcp: warning: message" (the default) */
    MCP_LOG_FORMAT_LOGFMT = 1, /* ts=2026-12-08T10:00:00.000Z level=warning source=libmcp msg=... */
    MCP_LOG_FORMAT_JSON = 2    /* {"ts":"...","level":"warning","source":"libmcp","msg":"..."} */
} mcp_log_format;

/* Sets the format of every line from now on, for the whole process; any thread. MCP_OK, or
 * MCP_EINVAL for a value that is not an mcp_log_format. */
MCP_EXTERN int mcp_log_set_format(mcp_log_format format);
/* "text", "logfmt" or "json" (compared exactly) as an mcp_log_format; MCP_EINVAL for NULL
 * or any other text. */
MCP_EXTERN int mcp_log_format_parse(const char *name);
/*
 * Writes one line of the program's on stderr, in the format set: its time and level (not
 * in text, which has only "source: msg fields"), then source and msg when not NULL, then
 * the pairs of fields, logfmt text (key=value key2="a value", or NULL): logfmt keeps
 * them as pairs, JSON makes each a member whose value is a string. Any thread. MCP_OK, or
 * MCP_EINVAL for a level out of range (nothing is written then).
 */
MCP_EXTERN int mcp_log_write(mcp_log_level level, const char *source, const char *msg,
                             const char *fields);

/* ---- Content and result builders ----
 *
 * Each returns a new reference the caller owns (typically returned from a
 * handler, or nested into another builder), or NULL when memory runs out or a
 * required argument is NULL. Strings are copied. An argument marked stolen is
 * released on every path, failure included, so builders nest without leaks:
 * mcp_content_result(a) returns NULL when given NULL. Text (text, description)
 * may hold any bytes: each byte that does not begin valid UTF-8 becomes U+FFFD.
 * Every other string must be valid UTF-8, or the builder returns NULL. Nothing
 * else is checked (a role, a MIME type, base64 data are taken as given).
 */

/* {"type":"text","text":text}; NULL when text is NULL or memory runs out. */
MCP_EXTERN json_t *mcp_text_content(const char *text);
/* {"type":"image","data":base64,"mimeType":mime}; both required: NULL when either is NULL
 * or not valid UTF-8, or memory runs out. */
MCP_EXTERN json_t *mcp_image_content(const char *base64, const char *mime);
/* {"type":"audio","data":base64,"mimeType":mime}; both required, NULL as for
 * mcp_image_content(). */
MCP_EXTERN json_t *mcp_audio_content(const char *base64, const char *mime);
/* {"type":"resource","resource":{"uri":uri,"mimeType"?:mime,"text":text}}; mime may be
 * NULL (left out). */
MCP_EXTERN json_t *mcp_embedded_text_content(const char *uri, const char *mime, const char *text);

/* A CallToolResult {"content":[{"type":"text","text":text}]}; NULL when text is NULL or
 * memory runs out. */
MCP_EXTERN json_t *mcp_text_result(const char *text);
/* A CallToolResult {"content":content}, content (an array, not checked) stolen; NULL
 * when content is NULL or memory runs out. */
MCP_EXTERN json_t *mcp_content_result(json_t *content);
/*
 * A CallToolResult with structuredContent (stolen; meant to be an object, not
 * checked) and, for older clients, the same value serialised as a text content
 * block. NULL when structured is NULL or memory runs out.
 */
MCP_EXTERN json_t *mcp_structured_result(json_t *structured);
/* A CallToolResult with "isError":true and one text block formatted from fmt (printf
 * style, not NULL); NULL also when fmt cannot be formatted. */
MCP_EXTERN json_t *mcp_tool_error(const char *fmt, ...) MCP_PRINTF(1, 2);

/* ReadResourceResult {"contents":[{"uri","mimeType"?,"text"}]}; mime may be NULL. */
MCP_EXTERN json_t *mcp_resource_text(const char *uri, const char *mime, const char *text);
/* ReadResourceResult with a base64 "blob" made from `len` bytes of `data` (borrowed for
 * the call; NULL only when len is 0); mime may be NULL. */
MCP_EXTERN json_t *mcp_resource_blob(const char *uri, const char *mime, const void *data,
                                     size_t len);

/* {"role":role,"content":content} (content stolen), for prompts and sampling; NULL when
 * either is NULL, role is not valid UTF-8, or memory runs out. */
MCP_EXTERN json_t *mcp_message(const char *role, json_t *content);
/* GetPromptResult {"description"?, "messages": messages (stolen)}; description may be
 * NULL (left out). */
MCP_EXTERN json_t *mcp_prompt_result(const char *description, json_t *messages);

/* Base64 (RFC 4648, padded) of `len` bytes of `data` (borrowed for the call; NULL only
 * when len is 0). Returns a NUL-terminated string allocated with malloc(), which the
 * caller frees with free(), or NULL when memory runs out. */
MCP_EXTERN char *mcp_base64_encode(const void *data, size_t len);

/*
 * Expands an RFC 6570 URI template (levels 1 to 4: "{x}", "{+x}", "{#x}", "{.x}",
 * "{/x}", "{;x}", "{?x,y}", "{&x}", prefixes "{x:3}" and explode "{x*}") with vars, a
 * JSON object (NULL: none) whose members are strings, numbers, arrays of them (lists)
 * or objects of them (associative arrays); null, [] and {} are undefined. Returns the
 * URI, allocated with malloc() (the caller frees it), or NULL for a template that is
 * not RFC 6570, a value of another kind, or no memory. The resource templates a server
 * registers are matched the other way (mcp_resource_template_def).
 */
MCP_EXTERN char *mcp_uri_template_expand(const char *tpl, const json_t *vars);

/*
 * The optional members of an Implementation (serverInfo, clientInfo) besides its
 * name and version: mcp_server_set_implementation, mcp_client_set_implementation.
 * size as in the option structs (0: the layout of libmcp 0.2). Strings are copied.
 */
typedef struct mcp_implementation {
    size_t size;
    const char *title;
    const char *description;
    const char *website_url; /* an http(s) URL */
    const char *icons;       /* JSON array text of Icon objects (see mcp_tool_def.icons) */
} mcp_implementation;

/*
 * W3C Trace Context (revision 2026-07-28 reserves "traceparent", "tracestate" and
 * "baggage" in _meta for OpenTelemetry): 1 when s is a traceparent of version 00 (or a
 * later version's prefix of that form): "00-" 32 lowercase hex digits, not all zero,
 * "-" 16 lowercase hex, not all zero, "-" 2 hex; else 0.
 */
MCP_EXTERN int mcp_traceparent_valid(const char *s);

/* How a capability of the library's is offered or declared (mcp_server_caps,
 * mcp_client_caps): as the library decides by default, always, or never. */
typedef enum mcp_cap { MCP_CAP_AUTO = 0, MCP_CAP_ON = 1, MCP_CAP_OFF = 2 } mcp_cap;

#ifdef __cplusplus
}
#endif
#endif
