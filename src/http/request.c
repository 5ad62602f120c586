/* SPDX-License-Identifier: MIT */
/*
 * What a request holds: the accessors of http.h over a parsed request.
 */
#include <string.h>
#include <strings.h>

#include "http/http_int.h"

/* ---- Request accessors ---- */

mcp__http_method mcp__http_req_method(const mcp__http_req *req)
{
    return req->method;
}

const char *mcp__http_req_method_name(const mcp__http_req *req)
{
    return req->method_name;
}

const char *mcp__http_req_path(const mcp__http_req *req)
{
    return req->path;
}

const char *mcp__http_req_query(const mcp__http_req *req)
{
    return req->query;
}

const char *mcp__http_header(const mcp__http_req *req, const char *name)
{
    for (size_t i = 0; i < req->nhdr; i++)
        if (strcasecmp(req->hdrs.data + req->hdr[i].name, name) == 0)
            return req->hdrs.data + req->hdr[i].value;
    return NULL;
}

size_t mcp__http_header_count(const mcp__http_req *req)
{
    return req->nhdr;
}

int mcp__http_header_at(const mcp__http_req *req, size_t i, const char **name, const char **value)
{
    if (i >= req->nhdr)
        return MCP_ENOENT;
    if (name)
        *name = req->hdrs.data + req->hdr[i].name;
    if (value)
        *value = req->hdrs.data + req->hdr[i].value;
    return MCP_OK;
}

const char *mcp__http_req_body(const mcp__http_req *req, size_t *len)
{
    if (len)
        *len = req->body.len;
    return req->body.data ? req->body.data : "";
}

int mcp__http_req_version(const mcp__http_req *req)
{
    return req->version;
}

int mcp__http_req_keep_alive(const mcp__http_req *req)
{
    return req->keep_alive;
}

int mcp__http_req_closed(const mcp__http_req *req)
{
    return !(req->conn && !req->conn->closing && !req->conn->broken);
}

void mcp__http_req_set_tag(mcp__http_req *req, void *tag, void (*drop)(void *tag))
{
    if (req->tag_drop != NULL)
        req->tag_drop(req->tag);
    req->tag = tag;
    req->tag_drop = drop;
}

void *mcp__http_req_tag(const mcp__http_req *req)
{
    return req->tag;
}

void mcp__http_req_set_conn_memo(mcp__http_req *req, void *memo, void (*drop)(void *memo))
{
    mcp__http_conn *c = req->conn;
    if (c == NULL || c->closing) {
        if (drop != NULL)
            drop(memo);
        return;
    }
    if (c->memo_drop != NULL)
        c->memo_drop(c->memo);
    c->memo = memo;
    c->memo_drop = drop;
}

void *mcp__http_req_conn_memo(const mcp__http_req *req)
{
    mcp__http_conn *c = req->conn;
    return c != NULL && !c->closing ? c->memo : NULL;
}

void mcp__http_req_on_close(mcp__http_req *req, mcp__http_close_fn cb, void *arg)
{
    req->on_close = cb;
    req->on_close_arg = arg;
}
