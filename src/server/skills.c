/* SPDX-License-Identifier: MIT */
/*
 * Skills (SEP-2640, "io.modelcontextprotocol/skills"), served from a folder: the
 * catalog is read once (mcp_server_add_skills), and answers skills/list, skills/get,
 * resources/directory/read and resources/read of skill:// URIs as the TypeScript
 * SDK 2.4.0 serves them, so that its SkillsClient (and any host that checks an
 * entry's sizes, digests and frontmatter) accepts them:
 *
 *   - a skill is a folder (not the root) with a SKILL.md; its files are every regular
 *     file below it, SKILL.md and nested skills' files included, names beginning with
 *     '.' left out (and not descended);
 *   - a file's URI is "skill://" then its path's names, the first encoded as
 *     encodeURIComponent does, the others with the path-segment set; a folder's has no
 *     trailing '/'; everything is sorted by URI (bytes);
 *   - an entry is {uri, frontmatter, resources: [{uri, digest "sha256:<hex>", size}]};
 *   - in revision 2026-07-28 the results carry ttlMs 0 and cacheScope "private".
 *
 * A file is opened again for each read, beneath the folder's descriptor with no link
 * followed, and must still have the size and digest of its entry.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "protocol/frontmatter.h"
#include "protocol/revision.h"
#include "server/server_int.h"
#include "util/seal.h"

#define SKILLS_EXTENSION "io.modelcontextprotocol/skills"
#define MAX_ENTRIES 10000   /* walked in the whole folder */
#define MAX_DEPTH 16        /* levels of folders */
#define MAX_FILES 512       /* of one skill (SEP-2640's interoperability limits) */
#define MAX_BYTES 16777216u /* of one skill */

/* One entry of the folder, by its path relative to the root. */
typedef struct node {
    char *rel;
    enum { N_FILE, N_DIR, N_OTHER } kind;
    size_t size;
} node;

typedef struct sk_file {
    char *rel;
    size_t size;
    char digest[72]; /* "sha256:" and 64 hex digits */
} sk_file;

struct mcp__skills {
    int rootfd;
    json_t *skills;  /* the entries, sorted by uri */
    mcp__map by_uri; /* skill uri -> its entry (borrowed from skills) */
    mcp__map files;  /* file uri -> sk_file */
    mcp__map dirs;   /* folder uri -> json array of its children */
};

/* ---- the folder ---- */

typedef struct walk {
    int rootfd;
    node *nodes;
    size_t n, cap;
    int failed; /* the walk went past a limit, or memory ran out */
} walk;

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Reads the folder open at fd (taken: closed here), whose path below the root is rel. */
static void walk_dir(walk *w, int fd, const char *rel, int depth)
{
    if (depth > MAX_DEPTH) {
        close(fd);
        w->failed = 1;
        return;
    }
    DIR *d = fdopendir(fd);
    if (d == NULL) {
        close(fd);
        w->failed = 1;
        return;
    }
    char **names = NULL;
    size_t nn = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && !w->failed) {
        if (e->d_name[0] == '.')
            continue; /* hidden, and "." and ".." */
        if (w->n + nn >= MAX_ENTRIES) {
            w->failed = 1;
            break;
        }
        if (nn == cap) {
            char **more = realloc(names, (cap = cap ? cap * 2 : 16) * sizeof(*names));
            if (more == NULL) {
                w->failed = 1;
                break;
            }
            names = more;
        }
        if ((names[nn] = strdup(e->d_name)) == NULL)
            w->failed = 1;
        else
            nn++;
    }
    qsort(names, nn, sizeof(*names), name_cmp);
    for (size_t i = 0; i < nn; i++) {
        if (w->failed || w->n >= MAX_ENTRIES) {
            w->failed = 1;
            break;
        }
        struct stat st;
        char *path = NULL;
        if (asprintf(&path, "%s%s%s", rel, rel[0] != '\0' ? "/" : "", names[i]) < 0) {
            w->failed = 1;
            break;
        }
        if (fstatat(dirfd(d), names[i], &st, AT_SYMLINK_NOFOLLOW) != 0) {
            free(path);
            continue; /* gone meanwhile */
        }
        if (w->n == w->cap) {
            node *more = realloc(w->nodes, (w->cap = w->cap ? w->cap * 2 : 64) * sizeof(*more));
            if (more == NULL) {
                free(path);
                w->failed = 1;
                break;
            }
            w->nodes = more;
        }
        node *nd = &w->nodes[w->n++];
        nd->rel = path;
        nd->size = (size_t)st.st_size;
        nd->kind = S_ISREG(st.st_mode) ? N_FILE : S_ISDIR(st.st_mode) ? N_DIR : N_OTHER;
        if (nd->kind == N_DIR) {
            /* Descended by its name in this folder, never through a link put there since. */
            int sub = openat(dirfd(d), names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub < 0)
                w->failed = 1;
            else
                walk_dir(w, sub, path, depth + 1);
        }
    }
    for (size_t i = 0; i < nn; i++)
        free(names[i]);
    free(names);
    closedir(d);
}

/* ---- URIs ---- */

/* Appends s percent-encoded, keeping A-Za-z0-9 and the characters of keep. */
static void encode(mcp__buf *b, const char *s, size_t n, const char *keep)
{
    static const char hex[] = "0123456789ABCDEF";
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            (c != '\0' && strchr(keep, c) != NULL)) {
            mcp__buf_append(b, &s[i], 1);
        } else {
            char e[3] = {'%', hex[c >> 4], hex[c & 15]};
            mcp__buf_append(b, e, 3);
        }
    }
}

/* The skill:// URI of a relative path (malloc'd), or NULL. */
static char *uri_of(const char *rel)
{
    mcp__buf b = {0};
    mcp__buf_appends(&b, "skill://");
    const char *p = rel;
    for (int first = 1;; first = 0) {
        const char *slash = strchr(p, '/');
        size_t n = slash != NULL ? (size_t)(slash - p) : strlen(p);
        if (!first)
            mcp__buf_append(&b, "/", 1);
        /* The authority as encodeURIComponent; the path's segments as a URL keeps them. */
        encode(&b, p, n, first ? "-_.!~*'()" : "_!$&'()*+,.:;=@[]|~-");
        if (slash == NULL)
            break;
        p = slash + 1;
    }
    return mcp__buf_steal(&b);
}

static const char *mime_of(const char *name)
{
    static const char *const table[][2] = {
        {"md", "text/markdown"},      {"markdown", "text/markdown"}, {"txt", "text/plain"},
        {"json", "application/json"}, {"yaml", "application/yaml"},  {"yml", "application/yaml"},
        {"py", "text/x-python"},      {"sh", "application/x-sh"},    {"bash", "application/x-sh"},
        {"js", "text/javascript"},    {"mjs", "text/javascript"},    {"ts", "text/typescript"},
        {"html", "text/html"},        {"css", "text/css"},           {"csv", "text/csv"},
        {"xml", "application/xml"},   {"svg", "image/svg+xml"},      {"png", "image/png"},
        {"jpg", "image/jpeg"},        {"jpeg", "image/jpeg"},        {"gif", "image/gif"},
        {"webp", "image/webp"},       {"pdf", "application/pdf"},
    };
    const char *base = strrchr(name, '/');
    base = base != NULL ? base + 1 : name;
    const char *dot = strrchr(base, '.');
    if (dot != NULL && dot != base)
        for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
            if (strcasecmp(dot + 1, table[i][0]) == 0)
                return table[i][1];
    return "application/octet-stream";
}

/* ---- files ---- */

/* rel opened for reading beneath the root, no link followed on the way. -1 on error. */
static int open_beneath(int rootfd, const char *rel)
{
    char *copy = strdup(rel);
    if (copy == NULL)
        return -1;
    int dir = rootfd, fd = -1;
    char *save = NULL;
    char *name = strtok_r(copy, "/", &save);
    while (name != NULL) {
        char *next = strtok_r(NULL, "/", &save);
        /* O_NONBLOCK: a FIFO put in a file's place must not block the open (fstat then
         * refuses it); a regular file reads as ever. */
        fd = openat(dir, name,
                    O_RDONLY | O_NOFOLLOW | O_CLOEXEC |
                        (next != NULL ? O_DIRECTORY : O_NONBLOCK | O_NOCTTY));
        if (dir != rootfd)
            close(dir);
        if (fd < 0 || next == NULL)
            break;
        dir = fd;
        fd = -1;
        name = next;
    }
    free(copy);
    return fd;
}

/* The file's bytes (at most max; *len gets how many), or NULL. */
static unsigned char *read_file(int rootfd, const char *rel, size_t max, size_t *len)
{
    int fd = open_beneath(rootfd, rel);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size > max) {
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    unsigned char *data = malloc(max + 1);
    size_t n = 0;
    while (data != NULL && n <= max) {
        ssize_t r = read(fd, data + n, max + 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    if (data != NULL && n > max) {
        free(data);
        return NULL;
    }
    *len = n;
    return data;
}

/* "sha256:" and the hex digest of the bytes (an empty hex part if OpenSSL fails). */
static void digest_of(const unsigned char *data, size_t len, char out[72])
{
    memcpy(out, "sha256:", 7);
    mcp__sha256_hex(data, len, out + 7);
}

/* ---- one skill ---- */

static size_t code_points(const char *s)
{
    size_t n = 0;
    for (; *s != '\0'; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* Whether name is 1 to 64 of [0-9a-z] in runs joined by single '-'. */
static int name_ok(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > 64 || name[0] == '-' || name[n - 1] == '-')
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-') ||
            (c == '-' && name[i + 1] == '-'))
            return 0;
    }
    return 1;
}

/* Whether every string in v (keys included) is free of NUL bytes, which a C string would
 * cut short: "name: \"pdf\\0x\"" must not pass for "pdf". */
static int nul_free(const json_t *v)
{
    if (json_is_string(v))
        return strlen(json_string_value(v)) == json_string_length(v);
    size_t i;
    const char *k;
    json_t *item;
    if (json_is_array(v)) {
        json_array_foreach(v, i, item) if (!nul_free(item)) return 0;
    } else if (json_is_object(v)) {
        json_object_foreach((json_t *)v, k, item) if (!nul_free(item)) return 0;
    }
    return 1;
}

/* The frontmatter's rules (SEP-2640), for the skill in folder base: NULL, or why not. */
static const char *frontmatter_problem(const json_t *fm, const char *base)
{
    if (!nul_free(fm))
        return "a value holds a NUL character";
    const char *name = json_string_value(json_object_get(fm, "name"));
    const char *description = json_string_value(json_object_get(fm, "description"));
    if (name == NULL || description == NULL)
        return "the frontmatter needs a string name and description";
    if (!name_ok(name))
        return "name must be 1 to 64 of a-z, 0-9 and single inner hyphens";
    if (strcmp(name, base) != 0)
        return "name must be the skill folder's name";
    if (description[0] == '\0' || code_points(description) > 1024)
        return "description must be 1 to 1024 characters";
    const json_t *compat = json_object_get(fm, "compatibility");
    if (compat != NULL && (!json_is_string(compat) || json_string_length(compat) == 0 ||
                           code_points(json_string_value(compat)) > 500))
        return "compatibility must be a string of 1 to 500 characters";
    const json_t *meta = json_object_get(fm, "metadata");
    if (meta != NULL) {
        if (!json_is_object(meta))
            return "metadata must be a mapping";
        const char *k;
        const json_t *v;
        json_object_foreach((json_t *)meta, k, v)
        {
            if (!json_is_string(v))
                return "metadata's values must be strings";
        }
    }
    return NULL;
}

static json_t *dir_child(const char *uri, const char *name, const node *nd)
{
    return nd->kind == N_DIR ? json_pack("{s:s, s:s, s:s}", "uri", uri, "name", name, "mimeType",
                                         "inode/directory")
                             : json_pack("{s:s, s:s, s:s, s:I}", "uri", uri, "name", name,
                                         "mimeType", mime_of(name), "size", (json_int_t)nd->size);
}

static int uri_cmp(const void *a, const void *b)
{
    return strcmp(json_string_value(json_object_get(*(json_t *const *)a, "uri")),
                  json_string_value(json_object_get(*(json_t *const *)b, "uri")));
}

/* Sorts an array of objects by their "uri". */
static void sort_by_uri(json_t *arr)
{
    size_t n = json_array_size(arr);
    json_t **items = n > 0 ? malloc(n * sizeof(*items)) : NULL;
    if (items == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        items[i] = json_incref(json_array_get(arr, i));
    qsort(items, n, sizeof(*items), uri_cmp);
    json_array_clear(arr);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, items[i]);
    free(items);
}

/* Adds the skill in folder w->nodes[at]: MCP_OK, MCP_ENOENT when it is not served
 * (why says so), MCP_ENOMEM. */
static int add_skill(struct mcp__skills *sk, const walk *w, size_t at, char *why, size_t why_size)
{
    const char *dir = w->nodes[at].rel;
    size_t dlen = strlen(dir);
    const char *base = strrchr(dir, '/');
    base = base != NULL ? base + 1 : dir;
    /* Its nodes: those below it, which follow it in the walk's order. */
    size_t end = at + 1, nfiles = 0, bytes = 0;
    while (end < w->n && strncmp(w->nodes[end].rel, dir, dlen) == 0 &&
           w->nodes[end].rel[dlen] == '/')
        end++;
    for (size_t i = at; i < end; i++) {
        const node *nd = &w->nodes[i];
        json_t *probe = json_string(nd->rel);
        json_decref(probe);
        if (probe == NULL) {
            snprintf(why, why_size, "a name that is not UTF-8");
            return MCP_ENOENT;
        }
        if (nd->kind == N_OTHER) {
            snprintf(why, why_size, "%s is a link or a special file", nd->rel);
            return MCP_ENOENT;
        }
        if (nd->kind == N_FILE) {
            nfiles++;
            bytes = nd->size > MAX_BYTES - bytes ? (size_t)MAX_BYTES + 1 : bytes + nd->size;
        }
        if (nfiles > MAX_FILES || bytes > MAX_BYTES)
            break;
    }
    if (nfiles > MAX_FILES || bytes > MAX_BYTES) {
        snprintf(why, why_size, "more than %d files or %u bytes", MAX_FILES, MAX_BYTES);
        return MCP_ENOENT;
    }
    json_t *resources = json_array(), *fm = NULL;
    mcp__map files = {0};
    int rc = resources != NULL ? MCP_OK : MCP_ENOMEM;
    for (size_t i = at + 1; i < end && rc == MCP_OK; i++) {
        const node *nd = &w->nodes[i];
        if (nd->kind != N_FILE)
            continue;
        size_t len = 0;
        unsigned char *data = read_file(w->rootfd, nd->rel, nd->size, &len);
        sk_file *f = calloc(1, sizeof(*f));
        char *uri = uri_of(nd->rel);
        if (data == NULL || f == NULL || uri == NULL || (f->rel = strdup(nd->rel)) == NULL) {
            snprintf(why, why_size, "%s could not be read", nd->rel);
            rc = data == NULL ? MCP_ENOENT : MCP_ENOMEM;
        } else {
            f->size = len;
            digest_of(data, len, f->digest);
            if (strcmp(nd->rel + dlen, "/SKILL.md") == 0) {
                json_t *text = json_stringn((const char *)data, len);
                if (text == NULL)
                    snprintf(why, why_size, "SKILL.md is not UTF-8");
                else if ((fm = mcp__frontmatter_parse((const char *)data, len, why, why_size)) !=
                         NULL) {
                    const char *problem = frontmatter_problem(fm, base);
                    if (problem != NULL)
                        snprintf(why, why_size, "%s", problem);
                    if (problem != NULL)
                        json_decref(fm), fm = NULL;
                }
                json_decref(text);
                if (fm == NULL)
                    rc = MCP_ENOENT;
            }
            if (rc == MCP_OK &&
                (json_array_append_new(resources, json_pack("{s:s, s:s, s:I}", "uri", uri, "digest",
                                                            f->digest, "size", (json_int_t)len)) !=
                     0 ||
                 mcp__map_put(&files, uri, f) != MCP_OK))
                rc = MCP_ENOMEM;
            if (rc == MCP_OK)
                f = NULL; /* the map has it */
        }
        if (f != NULL)
            free(f->rel);
        free(f);
        free(uri);
        free(data);
    }
    /* Its folders, each with its children. */
    mcp__map dirs = {0};
    for (size_t i = at; i < end && rc == MCP_OK; i++) {
        if (w->nodes[i].kind != N_DIR)
            continue;
        const char *d = w->nodes[i].rel;
        size_t n = strlen(d);
        json_t *children = json_array();
        for (size_t j = i + 1; j < end && children != NULL; j++) {
            const char *r = w->nodes[j].rel;
            if (strncmp(r, d, n) != 0 || r[n] != '/' || strchr(r + n + 1, '/') != NULL)
                continue;
            char *curi = uri_of(r);
            json_t *child = curi != NULL ? dir_child(curi, r + n + 1, &w->nodes[j]) : NULL;
            free(curi);
            if (child == NULL || json_array_append_new(children, child) != 0)
                json_decref(children), children = NULL;
        }
        char *duri = uri_of(d);
        if (children != NULL)
            sort_by_uri(children);
        if (children == NULL || duri == NULL || mcp__map_put(&dirs, duri, children) != MCP_OK) {
            json_decref(children);
            rc = MCP_ENOMEM;
        }
        free(duri);
    }
    char *skill_md = NULL;
    json_t *entry = NULL;
    if (rc == MCP_OK) {
        sort_by_uri(resources);
        char *rel = NULL;
        if (asprintf(&rel, "%s/SKILL.md", dir) >= 0)
            skill_md = uri_of(rel);
        free(rel);
        entry = skill_md != NULL ? json_pack("{s:s, s:O, s:O}", "uri", skill_md, "frontmatter", fm,
                                             "resources", resources)
                                 : NULL;
        if (entry == NULL || json_array_append(sk->skills, entry) != 0)
            rc = MCP_ENOMEM;
    }
    /* Into the catalog: the skill, its files and its folders (a nested skill's are its
     * parent's too, and the same). */
    size_t pos = 0;
    const char *key;
    void *val;
    while (mcp__map_next(&files, &pos, &key, &val)) {
        sk_file *old = rc == MCP_OK ? mcp__map_get(&sk->files, key) : NULL;
        if (rc == MCP_OK && old == NULL && mcp__map_put(&sk->files, key, val) == MCP_OK)
            continue;
        free(((sk_file *)val)->rel);
        free(val);
    }
    pos = 0;
    while (mcp__map_next(&dirs, &pos, &key, &val)) {
        if (rc == MCP_OK && mcp__map_get(&sk->dirs, key) == NULL &&
            mcp__map_put(&sk->dirs, key, val) == MCP_OK)
            continue;
        json_decref(val);
    }
    if (rc == MCP_OK && mcp__map_put(&sk->by_uri, skill_md, entry) != MCP_OK)
        rc = MCP_ENOMEM;
    mcp__map_free(&files);
    mcp__map_free(&dirs);
    json_decref(entry);
    json_decref(resources);
    json_decref(fm);
    free(skill_md);
    return rc;
}

void mcp__skills_free(struct mcp__skills *sk)
{
    if (sk == NULL)
        return;
    size_t pos = 0;
    const char *key;
    void *val;
    while (mcp__map_next(&sk->files, &pos, &key, &val)) {
        free(((sk_file *)val)->rel);
        free(val);
    }
    pos = 0;
    while (mcp__map_next(&sk->dirs, &pos, &key, &val))
        json_decref(val);
    mcp__map_free(&sk->files);
    mcp__map_free(&sk->dirs);
    mcp__map_free(&sk->by_uri);
    json_decref(sk->skills);
    if (sk->rootfd >= 0)
        close(sk->rootfd);
    free(sk);
}

/* ---- the methods ---- */

/* result with the caching fields revision 2026-07-28 requires of these results. */
static json_t *cacheable(mcp_ctx *ctx, json_t *result)
{
    if (result != NULL && ctx->modern) {
        json_object_set_new(result, "ttlMs", json_integer(0));
        json_object_set_new(result, "cacheScope", json_string("private"));
    }
    return result;
}

/* No page but the first: a cursor is one the server never gave. */
static int no_cursor(mcp_ctx *ctx, const json_t *params)
{
    if (json_object_get(params, "cursor") == NULL)
        return 1;
    mcp_ctx_set_error(ctx, MCP_RPC_INVALID_PARAMS, "Invalid cursor");
    return 0;
}

static json_t *skills_list(mcp_ctx *ctx, const json_t *params, void *user)
{
    struct mcp__skills *sk = user;
    if (!no_cursor(ctx, params))
        return NULL;
    return cacheable(ctx, json_pack("{s:O}", "skills", sk->skills));
}

/* params.uri, or NULL after setting the error. */
static const char *uri_param(mcp_ctx *ctx, const json_t *params)
{
    const char *uri = json_string_value(json_object_get(params, "uri"));
    if (uri == NULL)
        mcp_ctx_set_error(ctx, MCP_RPC_INVALID_PARAMS, "Invalid params: uri must be a string");
    return uri;
}

static json_t *skills_get(mcp_ctx *ctx, const json_t *params, void *user)
{
    struct mcp__skills *sk = user;
    const char *uri = uri_param(ctx, params);
    if (uri == NULL)
        return NULL;
    json_t *entry = mcp__map_get(&sk->by_uri, uri);
    if (entry == NULL) {
        mcp_ctx_set_error(ctx, MCP_RPC_INVALID_PARAMS, "No skill is served at %s", uri);
        return NULL;
    }
    return cacheable(ctx, json_pack("{s:O}", "skill", entry));
}

static json_t *directory_read(mcp_ctx *ctx, const json_t *params, void *user)
{
    struct mcp__skills *sk = user;
    const char *uri = uri_param(ctx, params);
    if (uri == NULL || !no_cursor(ctx, params))
        return NULL;
    json_t *children = mcp__map_get(&sk->dirs, uri);
    if (children == NULL) {
        mcp_ctx_set_error(ctx, MCP_RPC_INVALID_PARAMS, "%s is not a directory resource", uri);
        return NULL;
    }
    return cacheable(ctx, json_pack("{s:O}", "resources", children));
}

static json_t *read_skill_file(mcp_ctx *ctx, const char *uri, const json_t *vars, void *user)
{
    (void)vars;
    struct mcp__skills *sk = user;
    sk_file *f = mcp__map_get(&sk->files, uri);
    if (f == NULL) {
        /* A resource not found gets the request's revision's code (-32002 before
         * 2026-07-28), as every other; a folder is the wrong kind of resource: -32602. */
        int dir = mcp__map_get(&sk->dirs, uri) != NULL;
        int not_found =
            ctx->rev != NULL ? ctx->rev->resource_not_found : MCP_RPC_RESOURCE_NOT_FOUND;
        mcp_ctx_set_error_data(
            ctx, dir ? MCP_RPC_INVALID_PARAMS : not_found, json_pack("{s:s}", "uri", uri),
            dir ? "%s is a directory; use resources/directory/read" : "Resource not found: %s",
            uri);
        return NULL;
    }
    size_t len = 0;
    unsigned char *data = read_file(sk->rootfd, f->rel, f->size, &len);
    char digest[72];
    if (data != NULL)
        digest_of(data, len, digest);
    if (data == NULL || len != f->size || strcmp(digest, f->digest) != 0) {
        free(data);
        mcp_ctx_set_error(ctx, MCP_RPC_INTERNAL_ERROR,
                          "%s changed since the skills were loaded, or could not be read", uri);
        return NULL;
    }
    json_t *text = json_stringn((const char *)data, len);
    json_t *item = json_pack("{s:s, s:s}", "uri", uri, "mimeType", mime_of(f->rel));
    if (item != NULL && text != NULL) {
        json_object_set_new(item, "text", text);
    } else if (item != NULL) {
        char *b64 = mcp__base64_encode(data, len);
        json_object_set_new(item, "blob", b64 != NULL ? json_string(b64) : NULL);
        free(b64);
        if (b64 == NULL)
            json_decref(item), item = NULL;
    } else {
        json_decref(text);
    }
    free(data);
    return item != NULL ? json_pack("{s:[o]}", "contents", item) : NULL;
}

/* ---- registering ---- */

static const char *const method_names[] = {"skills/list", "skills/get", "resources/directory/read"};
#define SKILLS_TEMPLATE "skill://{+path}"

/* Takes out what register_skills added: the first nmethods methods, the template when
 * added, the first nres SKILL.md resources, the extension. */
static void unregister(mcp_server *srv, struct mcp__skills *sk, size_t nmethods, int tpl,
                       size_t nres)
{
    for (size_t i = 0; i < nmethods; i++)
        mcp_server_remove_method(srv, method_names[i]);
    if (tpl)
        mcp_server_remove_resource_template(srv, SKILLS_TEMPLATE);
    for (size_t i = 0; i < nres; i++)
        mcp_server_remove_resource(
            srv, json_string_value(json_object_get(json_array_get(sk->skills, i), "uri")));
    mcp_server_remove_extension(srv, SKILLS_EXTENSION);
}

/* Registers the methods, the template and each SKILL.md; on failure takes out what it
 * added and returns the error. */
static int register_skills(mcp_server *srv, struct mcp__skills *sk)
{
    mcp_method_fn fns[] = {skills_list, skills_get, directory_read};
    size_t nmethods = 0, nres = 0;
    int tpl = 0, rc = MCP_OK;
    for (; nmethods < sizeof(fns) / sizeof(fns[0]) && rc == MCP_OK; nmethods++) {
        mcp_method_def m = {.size = sizeof(m),
                            .method = method_names[nmethods],
                            .fn = fns[nmethods],
                            .user = sk,
                            .flags = MCP_HANDLER_INLINE};
        rc = mcp__add_library_method(srv, &m);
        if (rc != MCP_OK)
            break;
    }
    if (rc == MCP_OK) {
        mcp_resource_template_def t = {.size = sizeof(t),
                                       .uri_template = SKILLS_TEMPLATE,
                                       .name = SKILLS_EXTENSION,
                                       .description = "The files of the server's skills",
                                       .fn = read_skill_file,
                                       .user = sk};
        rc = mcp_server_add_resource_template(srv, &t);
        tpl = rc == MCP_OK;
    }
    /* Each skill's SKILL.md in resources/list, as other SDKs list them. */
    for (; rc == MCP_OK && nres < json_array_size(sk->skills); nres++) {
        const json_t *entry = json_array_get(sk->skills, nres);
        const char *uri = json_string_value(json_object_get(entry, "uri"));
        const json_t *fm = json_object_get(entry, "frontmatter");
        sk_file *f = mcp__map_get(&sk->files, uri);
        mcp_resource_def r = {.struct_size = sizeof(r),
                              .uri = uri,
                              .name = json_string_value(json_object_get(fm, "name")),
                              .description = json_string_value(json_object_get(fm, "description")),
                              .mime_type = "text/markdown",
                              .size = f != NULL ? (long long)f->size : 0,
                              .fn = read_skill_file,
                              .user = sk};
        rc = mcp_server_add_resource(srv, &r);
        if (rc != MCP_OK)
            break;
    }
    json_t *settings = rc == MCP_OK ? json_pack("{s:b}", "directoryRead", 1) : NULL;
    if (rc == MCP_OK)
        rc = settings != NULL ? mcp_server_set_extension(srv, SKILLS_EXTENSION, settings)
                              : MCP_ENOMEM;
    json_decref(settings);
    if (rc != MCP_OK)
        unregister(srv, sk, nmethods, tpl, nres);
    return rc;
}

int mcp_server_add_skills(mcp_server *srv, const char *dir, size_t *count)
{
    if (count != NULL)
        *count = 0;
    if (srv == NULL || dir == NULL)
        return MCP_EINVAL;
    struct mcp__skills *sk = calloc(1, sizeof(*sk));
    if (sk == NULL || (sk->skills = json_array()) == NULL) {
        free(sk);
        return MCP_ENOMEM;
    }
    /* Claimed first, so that two calls at once do not both register. */
    uv_mutex_lock(&srv->lock);
    int taken = srv->skills != NULL;
    if (!taken)
        srv->skills = sk;
    uv_mutex_unlock(&srv->lock);
    if (taken) {
        json_decref(sk->skills);
        free(sk);
        return MCP_EEXIST;
    }
    sk->rootfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    walk w = {.rootfd = sk->rootfd};
    int first = sk->rootfd >= 0 ? dup(sk->rootfd) : -1;
    if (first >= 0)
        walk_dir(&w, first, "", 0);
    else
        w.failed = 1;
    int rc = w.failed ? MCP_EIO : MCP_OK;
    if (rc == MCP_EIO) {
        char shown[300];
        mcp__warn("skills: %s cannot be read%s", mcp__quotable(shown, sizeof(shown), dir),
                  sk->rootfd >= 0 ? " (or holds more than 10,000 entries or 16 levels)" : "");
    }
    /* A skill is a folder (not the root) with a SKILL.md file. */
    for (size_t i = 0; i < w.n && rc == MCP_OK; i++) {
        const node *nd = &w.nodes[i];
        const char *slash = strrchr(nd->rel, '/');
        if (nd->kind != N_FILE || slash == NULL || strcmp(slash + 1, "SKILL.md") != 0)
            continue;
        size_t at = i;
        while (at > 0 && !(w.nodes[at].kind == N_DIR &&
                           strlen(w.nodes[at].rel) == (size_t)(slash - nd->rel) &&
                           strncmp(w.nodes[at].rel, nd->rel, (size_t)(slash - nd->rel)) == 0))
            at--;
        char why[300] = "", shown[300], name[300], qwhy[400];
        int r = add_skill(sk, &w, at, why, sizeof(why));
        /* Names and frontmatter text from the folder go to the operator's terminal
         * without their control characters. */
        snprintf(name, sizeof(name), "%.*s", (int)(slash - nd->rel), nd->rel);
        if (r == MCP_ENOENT)
            mcp__warn("skills: %s is not served: %s", mcp__quotable(shown, sizeof(shown), name),
                      mcp__quotable(qwhy, sizeof(qwhy), why));
        else
            rc = r;
    }
    for (size_t i = 0; i < w.n; i++)
        free(w.nodes[i].rel);
    free(w.nodes);
    if (rc == MCP_OK) {
        sort_by_uri(sk->skills);
        rc = register_skills(srv, sk);
    }
    if (rc != MCP_OK) {
        uv_mutex_lock(&srv->lock);
        srv->skills = NULL;
        uv_mutex_unlock(&srv->lock);
        mcp__skills_free(sk);
        return rc;
    }
    if (count != NULL)
        *count = json_array_size(sk->skills);
    return MCP_OK;
}
