/* SPDX-License-Identifier: MIT */
/*
 * Definitions shared by the server and the client: error strings, protocol versions,
 * logging levels, and the builders for content blocks and results.
 */
/* uv.h needs POSIX 2008 types (pthread_rwlock_t) that strict C17 hides. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <mcp/common.h>

#include "protocol/revision.h"
#include "util/util.h"

const char *mcp_strerror(int err)
{
    switch (err) {
    case MCP_OK:
        return "Success";
    case MCP_EINVAL:
        return "Invalid argument";
    case MCP_ENOMEM:
        return "Out of memory";
    case MCP_ETIMEDOUT:
        return "The peer did not answer in time";
    case MCP_ECANCELED:
        return "The request was cancelled";
    case MCP_ENOTSUP:
        return "The peer did not declare the needed capability";
    case MCP_ECLOSED:
        return "The connection or session is closed";
    case MCP_ERPC:
        return "The peer answered with a JSON-RPC error";
    case MCP_EIO:
        return "An operating system call failed";
    case MCP_EEXIST:
        return "An item with that name is already registered";
    case MCP_ENOENT:
        return "No such item";
    case MCP_EPROTO:
        return "The peer broke the protocol";
    case MCP_ESTATE:
        return "Not allowed in the current state or on this thread";
    case MCP_ELIMIT:
        return "A configured limit was reached";
    case MCP_ESTATELESS:
        return "Stateless server: requests to the client are not possible (no session to "
               "carry them or the client's answer)";
    case MCP_EHTTP:
        return "The server answered with an HTTP error status";
    case MCP_ECONNECT:
        return "The server cannot be reached";
    case MCP_EINPUT:
        return "The client answers with the request's retry: return, and the handler runs "
               "again with the answer";
    case MCP_EAUTH:
        return "Authorization failed: no access token could be had for the server";
    default:
        return "Unknown error";
    }
}

void mcp_rpc_error_clear(mcp_rpc_error *err)
{
    if (!err)
        return;
    json_decref(err->data);
    memset(err, 0, sizeof *err);
}

const char *mcp_protocol_version_supported(const char *version)
{
    const mcp__revision *rev = mcp__revision_find(version);
    return rev != NULL ? rev->version : NULL;
}

/* The names of notifications/message and logging/setLevel (RFC 5424 severities). */
static const char *const level_names[] = {
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency",
};

const char *mcp_log_level_name(mcp_log_level level)
{
    if ((int)level < 0 || (size_t)level >= sizeof level_names / sizeof level_names[0])
        return NULL;
    return level_names[level];
}

int mcp_log_level_parse(const char *name)
{
    if (!name)
        return MCP_EINVAL;
    for (size_t i = 0; i < sizeof level_names / sizeof level_names[0]; i++)
        if (strcmp(name, level_names[i]) == 0)
            return (int)i;
    return MCP_EINVAL;
}

/* ---- Builders ----
 *
 * json_object_set_new() and json_array_append_new() release the value they are given
 * even when they fail, so each builder below can add parts one by one and, on any
 * failure, drop the half-built object without leaking what it was handed.
 */

/*
 * Length of the valid UTF-8 sequence at s (1..4), or 0 when the bytes there are not
 * one (overlong forms, surrogates and values past U+10FFFF included).
 */
static size_t utf8_seq(const unsigned char *s)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        return (s[1] & 0xc0) == 0x80 ? 2 : 0;
    if (c >= 0xe0 && c <= 0xef) {
        unsigned char lo = c == 0xe0 ? 0xa0 : 0x80;
        unsigned char hi = c == 0xed ? 0x9f : 0xbf;
        if (s[1] < lo || s[1] > hi || (s[2] & 0xc0) != 0x80)
            return 0;
        return 3;
    }
    if (c >= 0xf0 && c <= 0xf4) {
        unsigned char lo = c == 0xf0 ? 0x90 : 0x80;
        unsigned char hi = c == 0xf4 ? 0x8f : 0xbf;
        if (s[1] < lo || s[1] > hi || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80)
            return 0;
        return 4;
    }
    return 0;
}

/*
 * A JSON string from text that may not be valid UTF-8 (a tool's output often comes
 * from elsewhere). jansson refuses such strings, which would turn a result into an
 * out-of-memory failure, so each invalid byte becomes U+FFFD instead.
 */
static json_t *text_string(const char *text)
{
    if (!text)
        return NULL;
    json_t *s = json_string(text);
    if (s)
        return s;
    mcp__buf b = {0};
    const unsigned char *p = (const unsigned char *)text;
    while (*p) {
        /* utf8_seq stops at the NUL: a continuation check fails on it first. */
        size_t n = utf8_seq(p);
        int rc = n ? mcp__buf_append(&b, p, n) : mcp__buf_append(&b, "\xef\xbf\xbd", 3);
        if (rc != MCP_OK) {
            mcp__buf_free(&b);
            return NULL;
        }
        p += n ? n : 1;
    }
    s = json_stringn(b.data ? b.data : "", b.len);
    mcp__buf_free(&b);
    return s;
}

/* Sets key to a new string value; a NULL string is skipped when `optional`. */
static int set_str(json_t *obj, const char *key, const char *val, int optional)
{
    if (!val)
        return optional ? 0 : -1;
    return json_object_set_new(obj, key, json_string(val));
}

static int set_text(json_t *obj, const char *key, const char *val)
{
    json_t *s = text_string(val);
    if (!s)
        return -1;
    return json_object_set_new(obj, key, s);
}

json_t *mcp_text_content(const char *text)
{
    json_t *c = json_object();
    if (!c || set_str(c, "type", "text", 0) || set_text(c, "text", text)) {
        json_decref(c);
        return NULL;
    }
    return c;
}

static json_t *media_content(const char *type, const char *base64, const char *mime)
{
    json_t *c = json_object();
    if (!c || set_str(c, "type", type, 0) || set_str(c, "data", base64, 0) ||
        set_str(c, "mimeType", mime, 0)) {
        json_decref(c);
        return NULL;
    }
    return c;
}

json_t *mcp_image_content(const char *base64, const char *mime)
{
    return media_content("image", base64, mime);
}

json_t *mcp_audio_content(const char *base64, const char *mime)
{
    return media_content("audio", base64, mime);
}

json_t *mcp_embedded_text_content(const char *uri, const char *mime, const char *text)
{
    json_t *res = json_object();
    if (!res || set_str(res, "uri", uri, 0) || set_str(res, "mimeType", mime, 1) ||
        set_text(res, "text", text)) {
        json_decref(res);
        return NULL;
    }
    json_t *c = json_object();
    if (!c || set_str(c, "type", "resource", 0)) {
        json_decref(res);
        json_decref(c);
        return NULL;
    }
    if (json_object_set_new(c, "resource", res)) {
        json_decref(c);
        return NULL;
    }
    return c;
}

/* A one-element array; `item` is stolen. */
static json_t *array_of(json_t *item)
{
    if (!item)
        return NULL;
    json_t *a = json_array();
    if (!a || json_array_append_new(a, item)) {
        if (!a)
            json_decref(item);
        json_decref(a);
        return NULL;
    }
    return a;
}

json_t *mcp_content_result(json_t *content)
{
    if (!content)
        return NULL;
    json_t *r = json_object();
    if (!r) {
        json_decref(content);
        return NULL;
    }
    if (json_object_set_new(r, "content", content)) {
        json_decref(r);
        return NULL;
    }
    return r;
}

json_t *mcp_text_result(const char *text)
{
    return mcp_content_result(array_of(mcp_text_content(text)));
}

json_t *mcp_structured_result(json_t *structured)
{
    if (!structured)
        return NULL;
    /* Clients before 2025-06-18 know only content, so they get the same data as text. */
    char *dump = json_dumps(structured, JSON_COMPACT | JSON_ENCODE_ANY);
    json_t *r = dump ? mcp_text_result(dump) : NULL;
    /* json_dumps allocates with jansson's allocator, which a host may have replaced. */
    json_free_t jfree;
    json_get_alloc_funcs(NULL, &jfree);
    if (dump)
        jfree(dump);
    if (!r) {
        json_decref(structured);
        return NULL;
    }
    if (json_object_set_new(r, "structuredContent", structured)) {
        json_decref(r);
        return NULL;
    }
    return r;
}

json_t *mcp_tool_error(const char *fmt, ...)
{
    mcp__buf b = {0};
    va_list ap;
    va_start(ap, fmt);
    int rc = mcp__buf_vappendf(&b, fmt, ap);
    va_end(ap);
    json_t *r = rc == MCP_OK ? mcp_text_result(b.data ? b.data : "") : NULL;
    mcp__buf_free(&b);
    if (!r)
        return NULL;
    if (json_object_set_new(r, "isError", json_true())) {
        json_decref(r);
        return NULL;
    }
    return r;
}

/* {"contents":[{"uri":uri,"mimeType"?:mime,<key>:<val>}]}; val is stolen. */
static json_t *resource_result(const char *uri, const char *mime, const char *key, json_t *val)
{
    json_t *item = json_object();
    if (!item || set_str(item, "uri", uri, 0) || set_str(item, "mimeType", mime, 1)) {
        json_decref(item);
        json_decref(val);
        return NULL;
    }
    if (!val || json_object_set_new(item, key, val)) {
        json_decref(item);
        return NULL;
    }
    json_t *arr = array_of(item);
    if (!arr)
        return NULL;
    json_t *r = json_object();
    if (!r || json_object_set_new(r, "contents", arr)) {
        if (!r)
            json_decref(arr);
        json_decref(r);
        return NULL;
    }
    return r;
}

json_t *mcp_resource_text(const char *uri, const char *mime, const char *text)
{
    return resource_result(uri, mime, "text", text_string(text));
}

json_t *mcp_resource_blob(const char *uri, const char *mime, const void *data, size_t len)
{
    if (!data && len > 0)
        return NULL;
    char *b64 = mcp__base64_encode(data ? data : "", len);
    if (!b64)
        return NULL;
    json_t *val = json_string(b64);
    free(b64);
    return resource_result(uri, mime, "blob", val);
}

json_t *mcp_message(const char *role, json_t *content)
{
    if (!content)
        return NULL;
    json_t *m = json_object();
    if (!m || set_str(m, "role", role, 0)) {
        json_decref(m);
        json_decref(content);
        return NULL;
    }
    if (json_object_set_new(m, "content", content)) {
        json_decref(m);
        return NULL;
    }
    return m;
}

json_t *mcp_prompt_result(const char *description, json_t *messages)
{
    if (!messages)
        return NULL;
    json_t *r = json_object();
    if (!r) {
        json_decref(messages);
        return NULL;
    }
    /* A NULL description is left out rather than sent as null. */
    if (description && set_text(r, "description", description)) {
        json_decref(r);
        json_decref(messages);
        return NULL;
    }
    if (json_object_set_new(r, "messages", messages)) {
        json_decref(r);
        return NULL;
    }
    return r;
}

char *mcp_base64_encode(const void *data, size_t len)
{
    return mcp__base64_encode(data, len);
}

int mcp_log_set_format(mcp_log_format format)
{
    if (format != MCP_LOG_FORMAT_TEXT && format != MCP_LOG_FORMAT_LOGFMT &&
        format != MCP_LOG_FORMAT_JSON)
        return MCP_EINVAL;
    mcp__log_set_format((int)format);
    return MCP_OK;
}

int mcp_log_format_parse(const char *name)
{
    static const char *const names[] = {"text", "logfmt", "json"};
    for (int i = 0; name != NULL && i < 3; i++)
        if (strcmp(name, names[i]) == 0)
            return i;
    return MCP_EINVAL;
}

int mcp_log_write(mcp_log_level level, const char *source, const char *msg, const char *fields)
{
    const char *name = mcp_log_level_name(level);
    if (name == NULL)
        return MCP_EINVAL;
    /* Text keeps a program's lines as they were before there were formats: no level. */
    if (mcp__log_get_format() == (int)MCP_LOG_FORMAT_TEXT)
        name = NULL;
    mcp__log_emit(name, source, msg, msg != NULL ? strlen(msg) : 0, fields);
    return MCP_OK;
}
