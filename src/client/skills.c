/* SPDX-License-Identifier: MIT */
/*
 * Skills (SEP-2640) on the client: the calls (skills/list with its pages walked,
 * skills/get) and a skill file read and verified as the extension asks a host to:
 * listed in the entry, of its size and SHA-256 digest, and for a SKILL.md with the
 * frontmatter of the entry (read by the same reader the server side uses).
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client_int.h"
#include "protocol/frontmatter.h"
#include "util/seal.h"

#define SKILLS_EXTENSION "io.modelcontextprotocol/skills"
#define MAX_PAGES 64

static int refuse(mcp_rpc_error *err, int rc, const char *fmt, ...) MCP_PRINTF(3, 4);

static int refuse(mcp_rpc_error *err, int rc, const char *fmt, ...)
{
    if (err != NULL) {
        memset(err, 0, sizeof(*err));
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof(err->message), fmt, ap);
        va_end(ap);
    }
    return rc;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* s percent-decoded (malloc'd), for comparing URIs however either side encoded them;
 * NULL when an escape is not two hex digits or decodes to NUL (or memory runs out). */
static char *decoded(const char *s)
{
    char *out = s != NULL ? malloc(strlen(s) + 1) : NULL, *o = out;
    for (; out != NULL && *s != '\0'; s++) {
        if (*s != '%') {
            *o++ = *s;
            continue;
        }
        int hi = hexval(s[1]), lo = hi >= 0 ? hexval(s[2]) : -1;
        if (lo < 0 || (hi == 0 && lo == 0)) {
            free(out);
            return NULL;
        }
        *o++ = (char)(hi * 16 + lo);
        s += 2;
    }
    if (out != NULL)
        *o = '\0';
    return out;
}

/* Whether two URIs name the same file, however percent-encoded. */
static int same_file(const char *a, const char *b)
{
    char *da = decoded(a), *db = decoded(b);
    int same = da != NULL && db != NULL && strcmp(da, db) == 0;
    free(da);
    free(db);
    return same;
}

/* The shape of an entry (SkillSchema): NULL, or what is wrong. */
static const char *entry_problem(const json_t *e)
{
    const char *uri = json_string_value(json_object_get(e, "uri"));
    const json_t *fm = json_object_get(e, "frontmatter");
    const json_t *res = json_object_get(e, "resources");
    size_t n = uri != NULL ? strlen(uri) : 0;
    if (n < 10 || strcmp(uri + n - 9, "/SKILL.md") != 0 || uri[n - 10] == '/')
        return "its uri does not name a SKILL.md";
    if (!json_is_string(json_object_get(fm, "name")) ||
        !json_is_string(json_object_get(fm, "description")))
        return "its frontmatter has no string name and description";
    if (json_is_string(res) && strcmp(json_string_value(res), "dynamic") == 0)
        return NULL;
    if (!json_is_array(res))
        return "its resources are neither a list nor \"dynamic\"";
    size_t i;
    const json_t *r;
    int self = 0;
    json_array_foreach(res, i, r)
    {
        const char *ru = json_string_value(json_object_get(r, "uri"));
        char *plain = decoded(ru);
        free(plain);
        if (plain == NULL)
            return "a resource's uri has a bad escape, or an encoded NUL";
        for (size_t j = 0; j < i; j++)
            if (same_file(ru, json_string_value(json_object_get(json_array_get(res, j), "uri"))))
                return "two resources name one file";
        const char *d = json_string_value(json_object_get(r, "digest"));
        const json_t *size = json_object_get(r, "size");
        if (ru == NULL || d == NULL || strlen(d) != 71 || strncmp(d, "sha256:", 7) != 0 ||
            strspn(d + 7, "0123456789abcdef") != 64 || !json_is_integer(size) ||
            json_integer_value(size) < 0)
            return "a resource without a uri, a sha256 digest and a size";
        self |= strcmp(ru, uri) == 0;
    }
    return self ? NULL : "its resources do not list its SKILL.md";
}

static int declared(mcp_client *c, mcp_rpc_error *err)
{
    if (mcp_client_server_extension(c, SKILLS_EXTENSION) != NULL)
        return MCP_OK;
    return refuse(err, MCP_ENOTSUP, "the server does not declare %s", SKILLS_EXTENSION);
}

int mcp_client_list_skills(mcp_client *c, json_t **skills, mcp_rpc_error *err)
{
    if (c == NULL || skills == NULL)
        return MCP_EINVAL;
    *skills = NULL;
    int rc = declared(c, err);
    json_t *all = rc == MCP_OK ? json_array() : NULL;
    if (rc == MCP_OK && all == NULL)
        rc = MCP_ENOMEM;
    char *cursor = NULL;
    for (int page = 0; rc == MCP_OK; page++) {
        if (page == MAX_PAGES) {
            rc = refuse(err, MCP_ELIMIT, "skills/list: more than %d pages", MAX_PAGES);
            break;
        }
        json_t *params = cursor != NULL ? json_pack("{s:s}", "cursor", cursor) : json_object();
        json_t *result = NULL;
        rc = mcp_client_request(c, "skills/list", params, NULL, &result, err);
        if (rc != MCP_OK)
            break;
        size_t i;
        json_t *e;
        json_array_foreach(json_object_get(result, "skills"), i, e)
        {
            const char *problem = entry_problem(e);
            if (problem != NULL) {
                rc = refuse(err, MCP_EPROTO, "skills/list: entry %zu: %s", i, problem);
                break;
            }
            json_array_append(all, e);
        }
        if (rc == MCP_OK && !json_is_array(json_object_get(result, "skills")))
            rc = refuse(err, MCP_EPROTO, "skills/list: the result has no skills array");
        const char *next = json_string_value(json_object_get(result, "nextCursor"));
        free(cursor);
        cursor = next != NULL ? strdup(next) : NULL;
        json_decref(result);
        if (next == NULL)
            break;
    }
    free(cursor);
    if (rc == MCP_OK)
        *skills = all;
    else
        json_decref(all);
    return rc;
}

int mcp_client_get_skill(mcp_client *c, const char *uri, json_t **skill, mcp_rpc_error *err)
{
    if (c == NULL || uri == NULL || skill == NULL)
        return MCP_EINVAL;
    *skill = NULL;
    int rc = declared(c, err);
    json_t *result = NULL, *params = rc == MCP_OK ? json_pack("{s:s}", "uri", uri) : NULL;
    if (rc == MCP_OK && params == NULL)
        return refuse(err, MCP_EINVAL, "the skill's URI is not UTF-8");
    if (rc == MCP_OK)
        rc = mcp_client_request(c, "skills/get", params, NULL, &result, err);
    if (rc != MCP_OK)
        return rc;
    json_t *e = json_object_get(result, "skill");
    const char *problem = e != NULL ? entry_problem(e) : "the result has no skill";
    if (problem == NULL && strcmp(json_string_value(json_object_get(e, "uri")), uri) != 0)
        problem = "it is another skill's entry";
    if (problem != NULL)
        rc = refuse(err, MCP_EPROTO, "skills/get: %s", problem);
    else
        *skill = json_incref(e);
    json_decref(result);
    return rc;
}

/* The entry's resource that ref names (NULL: the SKILL.md), or NULL. */
static const json_t *listed(const json_t *skill, const char *ref)
{
    const char *uri = json_string_value(json_object_get(skill, "uri"));
    char *want;
    if (ref == NULL)
        want = strdup(uri);
    else if (strncmp(ref, "skill://", 8) == 0)
        want = strdup(ref);
    else if (asprintf(&want, "%.*s%s", (int)(strlen(uri) - 8), uri, ref) < 0)
        want = NULL;
    char *hash = want != NULL ? strchr(want, '#') : NULL;
    if (hash != NULL)
        *hash = '\0'; /* a fragment names no other file */
    const json_t *found = NULL;
    size_t i;
    const json_t *r;
    json_array_foreach(json_object_get(skill, "resources"), i, r)
    {
        if (want != NULL && same_file(json_string_value(json_object_get(r, "uri")), want)) {
            found = r;
            break;
        }
    }
    free(want);
    return found;
}

int mcp_client_read_skill(mcp_client *c, const json_t *skill, const char *ref, char **data,
                          size_t *len, mcp_rpc_error *err)
{
    if (c == NULL || skill == NULL || data == NULL || len == NULL)
        return MCP_EINVAL;
    *data = NULL;
    *len = 0;
    const char *problem = entry_problem(skill);
    if (problem != NULL)
        return refuse(err, MCP_EINVAL, "the skill entry is not valid: %s", problem);
    const char *skill_uri = json_string_value(json_object_get(skill, "uri"));
    int dynamic = json_is_string(json_object_get(skill, "resources"));
    const json_t *entry = dynamic ? NULL : listed(skill, ref);
    char *uri = NULL;
    if (dynamic) {
        if (ref == NULL || strncmp(ref, "skill://", 8) == 0)
            uri = strdup(ref != NULL ? ref : skill_uri);
        else if (asprintf(&uri, "%.*s%s", (int)(strlen(skill_uri) - 8), skill_uri, ref) < 0)
            uri = NULL;
    } else if (entry == NULL) {
        char q1[300], q2[300];
        return refuse(err, MCP_ENOENT, "%s is not a file of the skill %s",
                      mcp__quotable(q1, sizeof(q1), ref != NULL ? ref : "SKILL.md"),
                      mcp__quotable(q2, sizeof(q2), skill_uri));
    } else {
        uri = strdup(json_string_value(json_object_get(entry, "uri")));
    }
    if (uri == NULL)
        return MCP_ENOMEM;
    json_t *params = json_pack("{s:s}", "uri", uri);
    if (params == NULL) { /* not UTF-8 */
        free(uri);
        return refuse(err, MCP_EINVAL, "the file's URI is not UTF-8");
    }
    /* The server's URI in messages, without what a terminal would take for commands. */
    char quri[300];
    mcp__quotable(quri, sizeof(quri), uri);
    json_t *result = NULL;
    int rc = mcp_client_request(c, "resources/read", params, NULL, &result, err);
    const json_t *item = NULL;
    size_t i;
    const json_t *it;
    json_array_foreach(json_object_get(result, "contents"), i, it)
    {
        const char *iu = json_string_value(json_object_get(it, "uri"));
        if (iu != NULL && strcmp(iu, uri) == 0)
            item = it;
    }
    unsigned char *bytes = NULL;
    size_t n = 0;
    const json_t *text = json_object_get(item, "text");
    const char *blob = json_string_value(json_object_get(item, "blob"));
    if (rc == MCP_OK && json_is_string(text)) {
        n = json_string_length(text);
        bytes = malloc(n + 1);
        if (bytes != NULL)
            memcpy(bytes, json_string_value(text), n);
    } else if (rc == MCP_OK && blob != NULL) {
        bytes = mcp__base64_decode(blob, strlen(blob), &n);
        unsigned char *more = bytes != NULL ? realloc(bytes, n + 1) : NULL;
        if (more == NULL)
            free(bytes);
        bytes = more;
    } else if (rc == MCP_OK) {
        rc = refuse(err, MCP_EPROTO, "%s: the server returned no contents for it", quri);
    }
    if (rc == MCP_OK && bytes == NULL && blob != NULL && !json_is_string(text))
        rc = refuse(err, MCP_EPROTO, "%s: its contents could not be decoded", quri);
    else if (rc == MCP_OK && bytes == NULL)
        rc = MCP_ENOMEM;
    if (rc == MCP_OK && entry != NULL) {
        char hex[65];
        int hashed = mcp__sha256_hex(bytes, n, hex) == MCP_OK;
        if ((json_int_t)n != json_integer_value(json_object_get(entry, "size")))
            rc = refuse(err, MCP_EPROTO, "%s: %zu bytes, not the %" JSON_INTEGER_FORMAT " listed",
                        quri, n, json_integer_value(json_object_get(entry, "size")));
        else if (!hashed ||
                 strcmp(hex, json_string_value(json_object_get(entry, "digest")) + 7) != 0)
            rc = refuse(err, MCP_EPROTO, "%s: its SHA-256 digest is not the one listed", quri);
    }
    /* The skill's own SKILL.md, however its URI is spelled: its frontmatter is checked. */
    if (rc == MCP_OK && same_file(uri, skill_uri)) {
        char why[256], qwhy[400];
        json_t *fm = mcp__frontmatter_parse((const char *)bytes, n, why, sizeof(why));
        if (fm == NULL)
            rc = refuse(err, MCP_EPROTO, "%s: %s", quri, mcp__quotable(qwhy, sizeof(qwhy), why));
        else if (!json_equal(fm, json_object_get(skill, "frontmatter")))
            rc = refuse(err, MCP_EPROTO, "%s: its frontmatter is not the entry's", quri);
        json_decref(fm);
    }
    json_decref(result);
    free(uri);
    if (rc != MCP_OK) {
        free(bytes);
        return rc;
    }
    bytes[n] = '\0';
    *data = (char *)bytes;
    *len = n;
    return MCP_OK;
}
