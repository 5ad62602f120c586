/* SPDX-License-Identifier: MIT */
/*
 * The default token store: one file per MCP server in a directory only its user
 * can enter (0700), each file 0600, named by a hash of the server's URL, and
 * replaced whole (a temporary file, fsync, rename) so that a crash leaves the old
 * document or the new one, never half of either.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* mkostemp */
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/sha.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oauth/oauth.h"

/* The largest document read back: tokens and a registration are a few KiB. */
#define DOC_MAX (1024 * 1024)

typedef struct file_store {
    mcp_token_store s;
    char *dir;
} file_store;

/* dir/<32 hex digits of SHA-256(key)>.json, malloc'd. */
static char *path_of(const char *dir, const char *key, const char *suffix)
{
    unsigned char d[SHA256_DIGEST_LENGTH];
    char hex[33];
    SHA256((const unsigned char *)key, strlen(key), d);
    mcp__hex(d, 16, hex);
    return mcp__asprintf("%s/%s.json%s", dir, hex, suffix);
}

/* The document at path, malloc'd into *json: MCP_OK, MCP_ENOENT, MCP_EIO (not a
 * regular file, too large, readable by others or not the user's), MCP_ENOMEM. */
static int read_doc_at(const char *path, char **json)
{
    *json = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return errno == ENOENT ? MCP_ENOENT : MCP_EIO;
    struct stat st;
    int rc = MCP_EIO;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > DOC_MAX)
        goto out;
    if ((st.st_mode & 077) != 0 || st.st_uid != geteuid()) {
        /* Someone else could read (or wrote) it: its secrets are not to be trusted. */
        mcp__warn("oauth: %s is readable by others or not its user's: ignored (chmod 600)", path);
        goto out;
    }
    char *buf = malloc((size_t)st.st_size + 1);
    if (buf == NULL) {
        rc = MCP_ENOMEM;
        goto out;
    }
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    buf[got] = '\0';
    *json = buf;
    rc = MCP_OK;
out:
    close(fd);
    return rc;
}

static int fs_load(void *user, const char *key, char **json)
{
    char *path = path_of(user, key, "");
    if (path == NULL)
        return MCP_ENOMEM;
    int rc = read_doc_at(path, json);
    free(path);
    return rc;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int fs_save(void *user, const char *key, const char *json)
{
    const char *dir = user;
    char *path = path_of(dir, key, "");
    /* A name of its own: two processes saving at once never write the same file. */
    char *tmp = path_of(dir, key, ".tmp.XXXXXX");
    int rc = MCP_ENOMEM;
    if (path == NULL || tmp == NULL)
        goto out;
    rc = MCP_EIO;
    int fd = mkostemp(tmp, O_CLOEXEC); /* 0600 */
    if (fd < 0)
        goto out;
    /* The mode of a file that existed already is made 0600 too. */
    if (fchmod(fd, 0600) != 0 || write_all(fd, json, strlen(json)) != 0 || fsync(fd) != 0) {
        close(fd);
        unlink(tmp);
        goto out;
    }
    close(fd);
    if (rename(tmp, path) != 0) {
        unlink(tmp);
        goto out;
    }
    rc = MCP_OK;
out:
    free(path);
    free(tmp);
    return rc;
}

static int fs_erase(void *user, const char *key)
{
    char *path = path_of(user, key, "");
    if (path == NULL)
        return MCP_ENOMEM;
    int rc = unlink(path) == 0 ? MCP_OK : errno == ENOENT ? MCP_ENOENT : MCP_EIO;
    free(path);
    return rc;
}

static int fs_keys(void *user, char ***out)
{
    const char *dir = user;
    *out = NULL;
    DIR *d = opendir(dir);
    if (d == NULL)
        return MCP_EIO;
    size_t n = 0, cap = 8;
    char **keys = calloc(cap, sizeof(*keys));
    struct dirent *e;
    int rc = keys != NULL ? MCP_OK : MCP_ENOMEM;
    while (rc == MCP_OK && (e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len != 37 || strcmp(e->d_name + 32, ".json") != 0)
            continue;
        /* The key is the server the document names; the file's own name is a hash. */
        char *path = mcp__asprintf("%s/%s", dir, e->d_name);
        char *buf = NULL;
        if (path == NULL || read_doc_at(path, &buf) != MCP_OK) {
            free(path);
            continue;
        }
        free(path);
        json_t *doc = json_loads(buf, 0, NULL);
        memset(buf, 0, strlen(buf));
        free(buf);
        const char *server = json_string_value(json_object_get(doc, "server"));
        if (server != NULL) {
            if (n + 2 > cap) {
                char **k = realloc(keys, (cap *= 2) * sizeof(*keys));
                if (k == NULL)
                    rc = MCP_ENOMEM;
                else
                    keys = k;
            }
            if (rc == MCP_OK && (keys[n] = mcp__strdup(server)) != NULL)
                keys[++n] = NULL;
        }
        json_decref(doc);
    }
    closedir(d);
    if (rc != MCP_OK) {
        mcp__strv_free(keys);
        return rc;
    }
    *out = keys;
    return MCP_OK;
}

static int fs_lock(void *user, const char *key, void **handle)
{
    char *path = path_of(user, key, ".lock");
    if (path == NULL)
        return MCP_ENOMEM;
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    free(path);
    if (fd < 0)
        return MCP_EIO;
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int busy = errno == EWOULDBLOCK;
        close(fd);
        return busy ? MCP_ESTATE : MCP_EIO;
    }
    *handle = (void *)(intptr_t)(fd + 1);
    return MCP_OK;
}

static void fs_unlock(void *user, void *handle)
{
    (void)user;
    int fd = (int)(intptr_t)handle - 1;
    if (fd >= 0) {
        flock(fd, LOCK_UN);
        close(fd);
    }
}

/* mkdir -p, each directory it makes 0700. */
static int make_dirs(char *path)
{
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char c = *p;
        *p = '\0';
        int ok = mkdir(path, 0700) == 0 || errno == EEXIST;
        *p = c;
        if (!ok)
            return MCP_EIO;
        if (c == '\0')
            return MCP_OK;
    }
}

int mcp_token_store_files(const char *dir, mcp_token_store **out)
{
    if (out == NULL)
        return MCP_EINVAL;
    *out = NULL;
    char *d;
    const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
    if (dir != NULL)
        d = mcp__strdup(dir);
    else if (xdg != NULL && xdg[0] == '/')
        d = mcp__asprintf("%s/mcp/oauth", xdg);
    else if (home != NULL && home[0] == '/')
        d = mcp__asprintf("%s/.local/state/mcp/oauth", home);
    else
        return MCP_EIO;
    if (d == NULL)
        return MCP_ENOMEM;
    struct stat st;
    if (d[0] == '\0' || make_dirs(d) != MCP_OK || stat(d, &st) != 0 || !S_ISDIR(st.st_mode)) {
        free(d);
        return MCP_EIO;
    }
    /* A directory others can enter is closed to them (it was made by hand, say). */
    if ((st.st_mode & 077) != 0 && st.st_uid == geteuid()) {
        mcp__warn("oauth: %s could be entered by others: made 0700", d);
        if (chmod(d, 0700) != 0) {
            free(d);
            return MCP_EIO;
        }
    }
    file_store *fs = calloc(1, sizeof(*fs));
    if (fs == NULL) {
        free(d);
        return MCP_ENOMEM;
    }
    fs->dir = d;
    fs->s = (mcp_token_store){fs_load, fs_save, fs_erase, fs_keys, fs_lock, fs_unlock, d};
    *out = &fs->s;
    return MCP_OK;
}

void mcp_token_store_free(mcp_token_store *s)
{
    if (s == NULL)
        return;
    file_store *fs = (file_store *)s;
    free(fs->dir);
    free(fs);
}

int mcp_token_store_describe(const mcp_token_store *s, const char *server_url, json_t **out)
{
    if (s == NULL || s->load == NULL || server_url == NULL || out == NULL)
        return MCP_EINVAL;
    *out = NULL;
    char *text = NULL;
    int rc = s->load(s->user, server_url, &text);
    if (rc != MCP_OK)
        return rc;
    json_t *doc = text != NULL ? json_loads(text, 0, NULL) : NULL;
    if (text != NULL) {
        memset(text, 0, strlen(text));
        free(text);
    }
    if (!json_is_object(doc)) {
        json_decref(doc);
        return MCP_ENOENT;
    }
    const json_t *tk = json_object_get(doc, "tokens"), *cl = json_object_get(doc, "client");
    json_int_t exp = json_integer_value(json_object_get(tk, "expires_at")) / 1000;
#define S(obj, k) json_string_value(json_object_get(obj, k))
    *out = json_pack("{s:s?, s:s?, s:s?, s:s?, s:s?, s:s?, s:I, s:b, s:b, s:b}", "server",
                     S(doc, "server"), "issuer", S(doc, "issuer"), "client_id", S(cl, "client_id"),
                     "grant", S(doc, "grant"), "scope", S(tk, "scope"), "token_type",
                     S(tk, "token_type"), "expires_at", exp, "access_token",
                     S(tk, "access_token") != NULL, "refresh_token", S(tk, "refresh_token") != NULL,
                     "dpop", S(doc, "dpop_key") != NULL);
#undef S
    json_decref(doc);
    return *out != NULL ? MCP_OK : MCP_ENOMEM;
}

int mcp_token_store_forget(const mcp_token_store *s, const char *server_url)
{
    if (s == NULL || s->erase == NULL || server_url == NULL)
        return MCP_EINVAL;
    return s->erase(s->user, server_url);
}
