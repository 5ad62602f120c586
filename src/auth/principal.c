/* SPDX-License-Identifier: MIT */
/*
 * Principals: what a verified token says, read from its claims (RFC 9068 and RFC
 * 7662 names), and the checks a resource server owes them; see auth.h.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "auth/auth.h"

struct mcp_principal {
    atomic_uint refs; /* taken and dropped on the loop and by handlers' contexts */
    json_t *claims;
    const char *subject, *client_id, *issuer; /* borrowed from claims */
    const char **scopes;                      /* NULL-terminated; strings in scope_text or claims */
    char *scope_text;                         /* "scope" split in place */
    const char **audiences;                   /* NULL-terminated, borrowed from claims */
    int64_t exp, nbf;
    int bad_types;  /* a claim of the wrong type: refused by mcp__principal_check */
    char owner[65]; /* see mcp__principal_owner: made once, read by every request */
};

static const char *const no_strings[] = {NULL};

static const char *str_claim(const json_t *claims, const char *name, int *bad)
{
    const json_t *v = json_object_get(claims, name);
    if (v != NULL && !json_is_string(v))
        *bad = 1;
    return json_string_value(v);
}

/* A NumericDate: a JSON number of seconds (fractions dropped); 0 when absent. */
static int64_t date_claim(const json_t *claims, const char *name, int *bad)
{
    const json_t *v = json_object_get(claims, name);
    if (v == NULL)
        return 0;
    if (!json_is_number(v) || json_number_value(v) < 1 || json_number_value(v) > 1e15) {
        *bad = 1;
        return 0;
    }
    return (int64_t)json_number_value(v);
}

/* A string or an array of strings, as a NULL-terminated array borrowed from claims. */
static int string_list(const json_t *v, const char ***out, int *bad)
{
    *out = NULL;
    size_t n = json_is_array(v) ? json_array_size(v) : v != NULL ? 1 : 0;
    const char **list = calloc(n + 1, sizeof(*list));
    if (list == NULL)
        return MCP_ENOMEM;
    if (json_is_string(v)) {
        list[0] = json_string_value(v);
    } else if (json_is_array(v)) {
        for (size_t i = 0; i < n; i++) {
            list[i] = json_string_value(json_array_get(v, i));
            if (list[i] == NULL) {
                *bad = 1;
                list[i] = "";
            }
        }
    } else if (v != NULL) {
        *bad = 1;
        list[0] = NULL;
    }
    *out = list;
    return MCP_OK;
}

/* "scope": space-separated; split into p->scope_text. */
static int split_scope(mcp_principal *p, const char *scope)
{
    size_t n = 0;
    p->scope_text = strdup(scope);
    if (p->scope_text == NULL)
        return MCP_ENOMEM;
    for (const char *s = scope; *s; s++)
        n += *s != ' ' && (s == scope || s[-1] == ' ');
    p->scopes = calloc(n + 1, sizeof(*p->scopes));
    if (p->scopes == NULL)
        return MCP_ENOMEM;
    size_t i = 0;
    for (char *s = p->scope_text; *s;) {
        while (*s == ' ')
            *s++ = '\0';
        if (*s == '\0')
            break;
        p->scopes[i++] = s;
        while (*s && *s != ' ')
            s++;
    }
    return MCP_OK;
}

static int owner_of(const mcp_principal *p, char out[65]);

mcp_principal *mcp__principal_new(json_t *claims)
{
    if (!json_is_object(claims)) {
        json_decref(claims);
        return NULL;
    }
    mcp_principal *p = calloc(1, sizeof(*p));
    if (p == NULL) {
        json_decref(claims);
        return NULL;
    }
    atomic_init(&p->refs, 1);
    p->claims = claims;
    int bad = 0;
    p->subject = str_claim(claims, "sub", &bad);
    p->client_id = str_claim(claims, "client_id", &bad);
    if (p->client_id == NULL)
        p->client_id = str_claim(claims, "azp", &bad);
    p->issuer = str_claim(claims, "iss", &bad);
    p->exp = date_claim(claims, "exp", &bad);
    p->nbf = date_claim(claims, "nbf", &bad);
    int rc = string_list(json_object_get(claims, "aud"), (const char ***)&p->audiences, &bad);
    const json_t *scope = json_object_get(claims, "scope");
    if (rc == MCP_OK && json_is_string(scope)) {
        rc = split_scope(p, json_string_value(scope));
    } else if (rc == MCP_OK) {
        if (scope != NULL)
            bad = 1;
        const json_t *scp = json_object_get(claims, "scp");
        if (json_is_string(scp))
            rc = split_scope(p, json_string_value(scp));
        else
            rc = string_list(scp, (const char ***)&p->scopes, &bad);
    }
    /* Scopes are scope-tokens (RFC 6749 3.3): anything else is a claim of the wrong type. */
    for (size_t i = 0; rc == MCP_OK && p->scopes != NULL && p->scopes[i] != NULL; i++)
        if (!mcp__scope_token_valid(p->scopes[i]))
            bad = 1;
    p->bad_types = bad;
    if (rc == MCP_OK)
        rc = owner_of(p, p->owner);
    if (rc != MCP_OK) {
        mcp__principal_unref(p);
        return NULL;
    }
    return p;
}

mcp_principal *mcp__principal_ref(mcp_principal *p)
{
    if (p != NULL)
        atomic_fetch_add(&p->refs, 1);
    return p;
}

void mcp__principal_unref(mcp_principal *p)
{
    if (p == NULL || atomic_fetch_sub(&p->refs, 1) > 1)
        return;
    json_decref(p->claims);
    free(p->scopes);
    free(p->scope_text);
    free(p->audiences);
    free(p);
}

const char *mcp_principal_subject(const mcp_principal *p)
{
    return p != NULL ? p->subject : NULL;
}

const char *mcp_principal_client_id(const mcp_principal *p)
{
    return p != NULL ? p->client_id : NULL;
}

const char *mcp_principal_issuer(const mcp_principal *p)
{
    return p != NULL ? p->issuer : NULL;
}

const char *const *mcp_principal_scopes(const mcp_principal *p)
{
    return p != NULL && p->scopes != NULL ? p->scopes : no_strings;
}

int mcp_principal_has_scope(const mcp_principal *p, const char *scope)
{
    if (scope == NULL)
        return 0;
    for (const char *const *s = mcp_principal_scopes(p); *s != NULL; s++)
        if (strcmp(*s, scope) == 0)
            return 1;
    return 0;
}

int64_t mcp_principal_expires(const mcp_principal *p)
{
    return p != NULL ? p->exp : 0;
}

const json_t *mcp_principal_claims(const mcp_principal *p)
{
    return p != NULL ? p->claims : NULL;
}

const char *const *mcp__principal_audiences(const mcp_principal *p)
{
    return p != NULL && p->audiences != NULL ? p->audiences : no_strings;
}

int64_t mcp__principal_not_before(const mcp_principal *p)
{
    return p != NULL ? p->nbf : 0;
}

const char *mcp__principal_check(const mcp_principal *p, const char *resource,
                                 int allow_no_audience, const char *issuer, int64_t now_s,
                                 int skew_s)
{
    if (p == NULL)
        return "The access token could not be read";
    if (p->bad_types)
        return "The access token has a claim of the wrong type";
    if (p->exp != 0 && now_s >= p->exp + skew_s)
        return "The access token expired";
    if (p->nbf != 0 && now_s + skew_s < p->nbf)
        return "The access token is not valid yet";
    if (issuer != NULL && (p->issuer == NULL || strcmp(p->issuer, issuer) != 0))
        return "The access token was issued by another authorization server";
    const char *const *aud = mcp__principal_audiences(p);
    if (aud[0] == NULL)
        return allow_no_audience ? NULL : "The access token names no audience";
    for (; *aud != NULL; aud++)
        if (strcmp(*aud, resource) == 0)
            return NULL;
    return "The access token was issued for another resource";
}

static int owner_of(const mcp_principal *p, char out[65])
{
    const char *iss = mcp_principal_issuer(p), *sub = mcp_principal_subject(p);
    const char *client = sub == NULL ? mcp_principal_client_id(p) : NULL;
    /* Lengths first, so that no two (issuer, subject) pairs run together alike. */
    char *who = mcp__asprintf("%zu:%s|%zu:%s|%zu:%s", iss ? strlen(iss) : 0, iss ? iss : "",
                              sub ? strlen(sub) : 0, sub ? sub : "", client ? strlen(client) : 0,
                              client ? client : "");
    if (who == NULL)
        return MCP_EIO;
    int rc = mcp__token_key(who, strlen(who), out);
    free(who);
    return rc;
}

int mcp__principal_owner(const mcp_principal *p, char out[65])
{
    if (p == NULL || p->owner[0] == '\0')
        return owner_of(p, out);
    memcpy(out, p->owner, sizeof p->owner);
    return MCP_OK;
}

int mcp__principal_lacks(const mcp_principal *p, const char *scopes)
{
    for (const char *s = scopes; s != NULL && *s != '\0';) {
        while (*s == ' ')
            s++;
        size_t n = strcspn(s, " ");
        if (n == 0)
            break;
        int held = 0;
        for (const char *const *g = mcp_principal_scopes(p); *g != NULL && !held; g++)
            held = strlen(*g) == n && memcmp(*g, s, n) == 0;
        if (!held)
            return 1;
        s += n;
    }
    return 0;
}
