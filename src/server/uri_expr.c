/* SPDX-License-Identifier: MIT */
/*
 * URI templates of RFC 6570 levels 2 to 4: the template's parse, its expansion
 * (mcp_uri_template_expand), and the match of a URI against a template with
 * operators, several variables in an expression, prefixes or explode (the level-1
 * matcher, uri_template.c, takes the others).
 *
 * The match. A template is L0 E1 L1 E2 ... Ek Lk: literals around expressions. Going
 * left to right, each expression takes a span of the URI, then its literal follows:
 *   - the span holds only what the operator's expansion can hold: no '/' for simple
 *     ("{x}"), label, path-style and single path-segment expressions; anything for
 *     reserved ("+") and fragment ("#") ones; anything but '#' for query ones;
 *   - an expression whose operator begins its expansion with a character ('.', '/',
 *     ';', '?', '&', '#') takes an empty span (every variable undefined) when the URI
 *     does not go on with that character; others take at least one character;
 *   - the span ends where the literal after it first occurs (the last literal ends the
 *     URI instead); between two expressions, where the next one's first character
 *     first occurs, else as far as the class goes (the next one is then empty); or,
 *     when the next one has no first character, after one character (as level 1).
 * Each literal is found with Knuth-Morris-Pratt from where its span begins, so the
 * whole match reads each character of the URI a bounded number of times: linear.
 *
 * Inside a span, the expansion is read back: the operator's first character, then
 * items split at its separator. Unnamed operators give the items to the variables in
 * order (an exploded variable takes the rest, as a list, or as an object when every
 * item is name=value); one variable alone takes the whole span. Named operators (';',
 * '?', '&') give each name=value item to the variable of that name, or to the
 * exploded variable (an object) when none has it; other names are ignored, so a query
 * may carry parameters the template does not name. Values are percent-decoded; one
 * that decodes to bytes that are not UTF-8 is no match.
 */
#include <stdlib.h>
#include <string.h>

#include <mcp/common.h>

#include "server/uri_template.h"
#include "util/util.h"

/* ---- The parse ---- */

/* A template has at most this many expressions and variables per expression. */
#define MAX_EXPRS 64
#define MAX_VARS 64

typedef struct varspec {
    const char *name;
    size_t len;
    int prefix; /* > 0: ":n" */
    int explode;
} varspec;

typedef struct expr {
    char op; /* 0, '+', '#', '.', '/', ';', '?', '&' */
    varspec *vars;
    size_t nvars;
    const char *lit; /* the literal after it */
    size_t lit_len;
} expr;

typedef struct parsed {
    const char *head; /* the literal before the first expression */
    size_t head_len;
    expr exprs[MAX_EXPRS];
    size_t n;
    varspec all[MAX_EXPRS * 4];
    size_t nall;
} parsed;

static int op_char(char c)
{
    return c == '+' || c == '#' || c == '.' || c == '/' || c == ';' || c == '?' || c == '&';
}

/* A character of a variable's name: RFC 6570's varchar, and, as level-1 templates in
 * use have them, any other printable character but the template's own. */
static int varchar(char c)
{
    return (unsigned char)c > 0x20 && (unsigned char)c != 0x7f && strchr("{},:*", c) == NULL;
}

/* Parses tpl into p: 0, or -1 for a template that is not RFC 6570. */
static int parse(const char *tpl, parsed *p)
{
    memset(p, 0, sizeof(*p));
    p->head = tpl;
    p->head_len = strcspn(tpl, "{}");
    const char *t = tpl + p->head_len;
    while (*t != '\0') {
        if (*t != '{' || p->n == MAX_EXPRS)
            return -1;
        const char *close = strchr(t + 1, '}');
        if (close == NULL || memchr(t + 1, '{', (size_t)(close - t - 1)) != NULL)
            return -1;
        expr *e = &p->exprs[p->n++];
        const char *s = t + 1;
        if (op_char(*s))
            e->op = *s++;
        else if (strchr("=,!@|", *s) != NULL)
            return -1; /* reserved for future extensions */
        e->vars = &p->all[p->nall];
        while (s < close) {
            const char *end = s + strcspn(s, ",}");
            if (end > close)
                end = close;
            if (p->nall == sizeof(p->all) / sizeof(p->all[0]) || e->nvars == MAX_VARS)
                return -1;
            varspec *v = &p->all[p->nall++];
            e->nvars++;
            v->name = s;
            const char *colon = memchr(s, ':', (size_t)(end - s));
            if (end > s && end[-1] == '*') {
                v->explode = 1;
                v->len = (size_t)(end - 1 - s);
            } else if (colon != NULL) {
                v->len = (size_t)(colon - s);
                int n = 0;
                for (const char *d = colon + 1; d < end; d++) {
                    if (*d < '0' || *d > '9' || n > 999)
                        return -1;
                    n = n * 10 + (*d - '0');
                }
                if (n < 1 || n > 9999 || end == colon + 1)
                    return -1;
                v->prefix = n;
            } else {
                v->len = (size_t)(end - s);
            }
            if (v->len == 0)
                return -1;
            for (size_t i = 0; i < v->len; i++)
                if (!varchar(v->name[i]))
                    return -1;
            s = end < close ? end + 1 : end;
            if (end < close && s == close)
                return -1; /* a trailing comma */
        }
        if (e->nvars == 0)
            return -1;
        e->lit = close + 1;
        e->lit_len = strcspn(e->lit, "{}");
        t = e->lit + e->lit_len;
    }
    return 0;
}

int mcp__uri_template_valid(const char *tpl)
{
    parsed *p = malloc(sizeof(*p));
    int ok = p != NULL && tpl != NULL && parse(tpl, p) == 0;
    free(p);
    return ok;
}

/* ---- The operators (RFC 6570, appendix A) ---- */

typedef struct opinfo {
    char first; /* 0: none */
    char sep;
    int named;
    const char *ifemp;
    int reserved; /* U+R */
} opinfo;

static opinfo info(char op)
{
    switch (op) {
    case '+':
        return (opinfo){0, ',', 0, "", 1};
    case '#':
        return (opinfo){'#', ',', 0, "", 1};
    case '.':
        return (opinfo){'.', '.', 0, "", 0};
    case '/':
        return (opinfo){'/', '/', 0, "", 0};
    case ';':
        return (opinfo){';', ';', 1, "", 0};
    case '?':
        return (opinfo){'?', '&', 1, "=", 0};
    case '&':
        return (opinfo){'&', '&', 1, "=", 0};
    default:
        return (opinfo){0, ',', 0, "", 0};
    }
}

/* ---- Expansion ---- */

static int unreserved(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_' || c == '~';
}

static int reserved(unsigned char c)
{
    return c != '\0' && strchr(":/?#[]@!$&'()*+,;=", c) != NULL;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* Appends s (n bytes), percent-encoded for the operator (allow U or U+R). */
static int append_encoded(mcp__buf *b, const char *s, size_t n, int allow_reserved)
{
    static const char hex[] = "0123456789ABCDEF";
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        int keep = unreserved(c) || (allow_reserved && reserved(c));
        if (allow_reserved && c == '%' && i + 2 < n && hexval(s[i + 1]) >= 0 &&
            hexval(s[i + 2]) >= 0)
            keep = 1; /* a pct-encoded triplet stays as it is */
        char esc[3] = {'%', hex[c >> 4], hex[c & 15]};
        if ((keep ? mcp__buf_append(b, (const char *)&s[i], 1) : mcp__buf_append(b, esc, 3)) !=
            MCP_OK)
            return MCP_ENOMEM;
    }
    return MCP_OK;
}

/* The first max code points of s (n bytes): their byte length. */
static size_t prefix_bytes(const char *s, size_t n, int max)
{
    size_t i = 0;
    for (int k = 0; i < n && k < max; k++) {
        i++;
        while (i < n && ((unsigned char)s[i] & 0xC0) == 0x80)
            i++;
    }
    return i;
}

/* A value as text: a string, or a number's JSON text; NULL for other kinds. */
static const char *scalar(const json_t *v, char *buf, size_t size, size_t *len)
{
    if (json_is_string(v)) {
        *len = json_string_length(v);
        return json_string_value(v);
    }
    if (json_is_integer(v) || json_is_real(v)) {
        int n = json_is_integer(v)
                    ? snprintf(buf, size, "%" JSON_INTEGER_FORMAT, json_integer_value(v))
                    : snprintf(buf, size, "%.17g", json_real_value(v));
        *len = n > 0 && (size_t)n < size ? (size_t)n : 0;
        return buf;
    }
    return NULL;
}

static int defined(const json_t *v)
{
    return v != NULL && !json_is_null(v) && !(json_is_array(v) && json_array_size(v) == 0) &&
           !(json_is_object(v) && json_object_size(v) == 0);
}

static int expand_var(mcp__buf *b, const opinfo *o, const varspec *vs, const json_t *v)
{
    char num[64];
    size_t len;
    int rc = MCP_OK;
    const char *s = scalar(v, num, sizeof(num), &len);
    if (s != NULL) {
        if (o->named) {
            rc = mcp__buf_append(b, vs->name, vs->len);
            if (rc == MCP_OK)
                rc = mcp__buf_appends(b, len == 0 ? o->ifemp : "=");
        }
        if (rc == MCP_OK)
            rc = append_encoded(b, s, vs->prefix > 0 ? prefix_bytes(s, len, vs->prefix) : len,
                                o->reserved);
        return rc;
    }
    if (!json_is_array(v) && !json_is_object(v))
        return MCP_EINVAL;
    /* A list or an associative array: items, or name=value pairs when exploded. */
    int is_obj = json_is_object(v);
    if (!vs->explode && o->named) {
        rc = mcp__buf_append(b, vs->name, vs->len);
        if (rc == MCP_OK)
            rc = mcp__buf_appends(b, "=");
    }
    size_t i = 0;
    const char *key;
    json_t *item;
    void *iter = is_obj ? json_object_iter((json_t *)v) : NULL;
    for (;; i++) {
        if (is_obj) {
            if (iter == NULL)
                break;
            key = json_object_iter_key(iter);
            item = json_object_iter_value(iter);
            iter = json_object_iter_next((json_t *)v, iter);
        } else {
            if (i >= json_array_size(v))
                break;
            key = NULL;
            item = json_array_get(v, i);
        }
        const char *is = scalar(item, num, sizeof(num), &len);
        if (is == NULL)
            return MCP_EINVAL;
        if (i > 0 && rc == MCP_OK)
            rc = mcp__buf_append(b, vs->explode ? &o->sep : ",", 1);
        if (vs->explode) {
            if (is_obj && rc == MCP_OK) {
                rc = append_encoded(b, key, strlen(key), o->reserved);
                if (rc == MCP_OK)
                    rc = mcp__buf_appends(b, "=");
            } else if (o->named && rc == MCP_OK) {
                rc = mcp__buf_append(b, vs->name, vs->len);
                if (rc == MCP_OK)
                    rc = mcp__buf_appends(b, len == 0 ? o->ifemp : "=");
            }
        } else if (is_obj && rc == MCP_OK) {
            rc = append_encoded(b, key, strlen(key), o->reserved);
            if (rc == MCP_OK)
                rc = mcp__buf_appends(b, ",");
        }
        if (rc == MCP_OK)
            rc = append_encoded(b, is, len, o->reserved);
    }
    return rc;
}

char *mcp_uri_template_expand(const char *tpl, const json_t *vars)
{
    parsed *p = tpl != NULL && (vars == NULL || json_is_object(vars)) ? malloc(sizeof(*p)) : NULL;
    if (p == NULL || parse(tpl, p) != 0) {
        free(p);
        return NULL;
    }
    mcp__buf b = {0};
    int rc = mcp__buf_append(&b, p->head, p->head_len);
    for (size_t i = 0; i < p->n && rc == MCP_OK; i++) {
        const expr *e = &p->exprs[i];
        opinfo o = info(e->op);
        int first = 1;
        for (size_t k = 0; k < e->nvars && rc == MCP_OK; k++) {
            const varspec *vs = &e->vars[k];
            char name[256];
            if (vs->len >= sizeof(name)) {
                rc = MCP_EINVAL;
                break;
            }
            memcpy(name, vs->name, vs->len);
            name[vs->len] = '\0';
            const json_t *v = json_object_get(vars, name);
            if (!defined(v))
                continue;
            char lead = first ? o.first : o.sep;
            if (lead != 0)
                rc = mcp__buf_append(&b, &lead, 1);
            first = 0;
            if (rc == MCP_OK)
                rc = expand_var(&b, &o, vs, v);
        }
        if (rc == MCP_OK)
            rc = mcp__buf_append(&b, e->lit, e->lit_len);
    }
    free(p);
    if (rc == MCP_OK)
        rc = mcp__buf_append(&b, "", 1);
    if (rc != MCP_OK) {
        mcp__buf_free(&b);
        return NULL;
    }
    return mcp__buf_steal(&b);
}

/* ---- The match ---- */

/* Whether c may be in the span of e. */
static int in_class(const expr *e, char c)
{
    switch (e->op) {
    case '+':
    case '#':
        return 1;
    case '?':
    case '&':
        return c != '#';
    case '/':
        return c != '/' || e->nvars > 1 || e->vars[0].explode;
    default:
        return c != '/';
    }
}

/* The first place at or after from where lit (len > 0) occurs with uri[from, place)
 * inside e's class: *at, and 1; 0 when there is none. KMP, and the class checked as
 * far as the earliest place a match could still begin, so each character is read a
 * bounded number of times. MCP_ENOMEM without its table. */
static int find_literal(const expr *e, const char *uri, size_t from, const char *lit, size_t len,
                        size_t *at, size_t *steps)
{
    size_t *fail = malloc(len * sizeof(*fail));
    if (fail == NULL)
        return MCP_ENOMEM;
    size_t n = mcp__kmp_table(lit, len, fail);
    int found = 0;
    size_t j = 0, ok_to = from; /* uri[from, ok_to) is inside the class */
    for (size_t i = from; uri[i] != '\0'; i++, n++) {
        for (; j > 0 && uri[i] != lit[j]; n++)
            j = fail[j - 1];
        if (uri[i] == lit[j])
            j++;
        size_t start = i + 1 - j; /* the earliest place a match may still begin */
        for (; ok_to < start && in_class(e, uri[ok_to]); ok_to++, n++)
            ;
        if (ok_to < start)
            break; /* the class ends before any place left */
        if (j == len) {
            *at = start;
            found = 1;
            break;
        }
    }
    *steps += n;
    free(fail);
    return found;
}

json_t *mcp__uri_decoded(const char *s, size_t n)
{
    char *out = malloc(n + 1);
    if (out == NULL)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%' && i + 2 < n && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
            out[k++] = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
            i += 2;
        } else {
            out[k++] = s[i];
        }
    }
    json_t *v = json_stringn(out, k);
    free(out);
    return v;
}

static int set_var(json_t *vars, const varspec *vs, json_t *value)
{
    if (value == NULL)
        return -1;
    return json_object_setn_new(vars, vs->name, vs->len, value) == 0 ? 0 : MCP_ENOMEM;
}

/* Adds item (name=value text) to obj as name -> value. 0, -1 (not UTF-8) or ENOMEM. */
static int add_pair(json_t *obj, const char *item, size_t n)
{
    const char *eq = memchr(item, '=', n);
    size_t kl = eq != NULL ? (size_t)(eq - item) : n;
    json_t *k = mcp__uri_decoded(item, kl);
    json_t *v = eq != NULL ? mcp__uri_decoded(eq + 1, n - kl - 1) : json_string("");
    int rc = k == NULL || v == NULL
                 ? -1
                 : (json_object_set_new(obj, json_string_value(k), v) == 0 ? 0 : MCP_ENOMEM);
    if (rc == -1)
        json_decref(v);
    json_decref(k);
    return rc;
}

/* Reads the expansion in s (n bytes, its first character taken off) back into vars:
 * 1, 0 (it cannot be this expression's), or MCP_ENOMEM. */
static int read_back(const expr *e, const char *s, size_t n, json_t *vars, size_t *steps)
{
    opinfo o = info(e->op);
    *steps += n;
    /* The items, at the separator (',' inside a non-exploded list stays in it). */
    size_t cap = n + 1, nitems = 0;
    size_t *starts = malloc(cap * sizeof(*starts)), *lens = malloc(cap * sizeof(*lens));
    int rc = starts != NULL && lens != NULL ? 1 : MCP_ENOMEM;
    for (size_t i = 0, b = 0; rc == 1 && i <= n; i++) {
        if (i == n || s[i] == o.sep) {
            starts[nitems] = b;
            lens[nitems++] = i - b;
            b = i + 1;
        }
    }
    if (rc == 1 && !o.named) {
        if (e->nvars == 1 && !e->vars[0].explode) {
            /* One variable: the whole span (a list joined with ',' reads as one string). */
            rc = set_var(vars, &e->vars[0], mcp__uri_decoded(s, n)) == 0 ? 1 : 0;
        } else {
            size_t next = 0;
            for (size_t k = 0; rc == 1 && k < e->nvars && next < nitems; k++) {
                const varspec *vs = &e->vars[k];
                if (!vs->explode) {
                    int r = set_var(vars, vs, mcp__uri_decoded(s + starts[next], lens[next]));
                    rc = r == 0 ? 1 : r == -1 ? 0 : r;
                    next++;
                    continue;
                }
                /* Exploded: the rest, an object when every item is name=value. */
                int pairs = 1;
                for (size_t j = next; j < nitems; j++)
                    pairs &= memchr(s + starts[j], '=', lens[j]) != NULL;
                json_t *val = pairs ? json_object() : json_array();
                for (size_t j = next; val != NULL && rc == 1 && j < nitems; j++) {
                    if (pairs) {
                        int r = add_pair(val, s + starts[j], lens[j]);
                        rc = r == 0 ? 1 : r == -1 ? 0 : r;
                    } else {
                        json_t *item = mcp__uri_decoded(s + starts[j], lens[j]);
                        rc = item == NULL                            ? 0
                             : json_array_append_new(val, item) == 0 ? 1
                                                                     : MCP_ENOMEM;
                    }
                }
                next = nitems;
                if (rc == 1) {
                    int r = set_var(vars, vs, val);
                    rc = r == 0 ? 1 : r == -1 ? 0 : r;
                } else {
                    json_decref(val);
                }
            }
            if (rc == 1 && next < nitems)
                rc = 0; /* more items than variables */
        }
    } else if (rc == 1) {
        /* Named: each name=value to its variable, or to the exploded one. */
        const varspec *exploded = NULL;
        for (size_t k = 0; k < e->nvars; k++)
            if (e->vars[k].explode)
                exploded = &e->vars[k];
        /* The exploded one: a list of the items named after it ("{?list*}" gives
         * list=a&list=b), or an object of the items no variable is named after. */
        json_t *rest = exploded != NULL ? json_object() : NULL;
        json_t *listed = exploded != NULL ? json_array() : NULL;
        for (size_t j = 0; rc == 1 && j < nitems; j++) {
            const char *item = s + starts[j];
            const char *eq = memchr(item, '=', lens[j]);
            size_t kl = eq != NULL ? (size_t)(eq - item) : lens[j];
            const varspec *to = NULL;
            for (size_t k = 0; k < e->nvars && to == NULL; k++)
                if (e->vars[k].len == kl && memcmp(e->vars[k].name, item, kl) == 0)
                    to = &e->vars[k];
            int r = 0;
            if (to != NULL) {
                json_t *v =
                    eq != NULL ? mcp__uri_decoded(eq + 1, lens[j] - kl - 1) : json_string("");
                if (!to->explode)
                    r = set_var(vars, to, v);
                else
                    r = v == NULL ? -1 : json_array_append_new(listed, v) == 0 ? 0 : MCP_ENOMEM;
            } else if (rest != NULL && lens[j] > 0) {
                r = add_pair(rest, item, lens[j]);
            }
            rc = r == 0 ? 1 : r == -1 ? 0 : r;
        }
        if (rc == 1 && json_array_size(listed) > 0) {
            int r = set_var(vars, exploded, json_incref(listed));
            rc = r == 0 ? 1 : r == -1 ? 0 : r;
        } else if (rc == 1 && json_object_size(rest) > 0) {
            int r = set_var(vars, exploded, json_incref(rest));
            rc = r == 0 ? 1 : r == -1 ? 0 : r;
        }
        json_decref(rest);
        json_decref(listed);
    }
    free(starts);
    free(lens);
    return rc;
}

struct mcp__uri_tpl {
    parsed p;
};

mcp__uri_tpl *mcp__uri_template_compile(const char *tpl)
{
    mcp__uri_tpl *t = malloc(sizeof(*t));
    if (t != NULL && parse(tpl, &t->p) != 0) {
        free(t);
        t = NULL;
    }
    return t;
}

void mcp__uri_template_free(mcp__uri_tpl *t)
{
    free(t);
}

int mcp__uri_template_match_ext(const char *tpl, const char *uri, json_t *vars, size_t *steps)
{
    *steps += strlen(tpl);
    mcp__uri_tpl *t = malloc(sizeof(*t));
    if (t == NULL)
        return MCP_ENOMEM;
    int rc = parse(tpl, &t->p) == 0 ? mcp__uri_template_match_compiled(t, uri, vars, steps) : 0;
    free(t);
    return rc;
}

int mcp__uri_template_match_compiled(const mcp__uri_tpl *t, const char *uri, json_t *vars,
                                     size_t *steps)
{
    const parsed *p = &t->p;
    int rc = 1;
    size_t ulen = strlen(uri);
    if (p->head_len > ulen || memcmp(uri, p->head, p->head_len) != 0)
        rc = 0;
    size_t pos = p->head_len;
    for (size_t i = 0; rc == 1 && i < p->n; i++) {
        const expr *e = &p->exprs[i];
        opinfo o = info(e->op);
        int last = i + 1 == p->n;
        /* Empty: a prefixed expression the URI does not go on with. */
        int empty = o.first != 0 && uri[pos] != o.first;
        size_t from = pos + (o.first != 0 ? 1 : 0); /* where its values begin */
        size_t end = pos;                           /* the span is uri[pos, end) */
        if (empty) {
            end = pos;
        } else if (last) {
            if (ulen - from < e->lit_len + (o.first == 0 ? 1 : 0) ||
                memcmp(uri + ulen - e->lit_len, e->lit, e->lit_len) != 0) {
                rc = 0;
                break;
            }
            end = ulen - e->lit_len;
            for (size_t k = from; k < end && rc == 1; k++)
                if (!in_class(e, uri[k]))
                    rc = 0;
            *steps += end - from;
        } else if (e->lit_len > 0) {
            size_t search = from + (o.first == 0 ? 1 : 0);
            if (search > ulen) {
                rc = 0;
                break;
            }
            int r = find_literal(e, uri, search, e->lit, e->lit_len, &end, steps);
            if (r != 1) {
                rc = r;
                break;
            }
        } else {
            /* Another expression follows at once. */
            char next = info(p->exprs[i + 1].op).first;
            end = from;
            if (next != 0) {
                while (uri[end] != '\0' && uri[end] != next && in_class(e, uri[end]))
                    end++;
            } else if (uri[end] != '\0' && in_class(e, uri[end])) {
                end++;
                while (((unsigned char)uri[end] & 0xC0) == 0x80)
                    end++;
            }
            *steps += end - from;
            if (o.first == 0 && end == from)
                rc = 0;
        }
        if (rc == 1 && !empty)
            rc = read_back(e, uri + from, end - from, vars, steps);
        if (rc != 1)
            break;
        /* The literal after it. */
        if (ulen - end < e->lit_len || memcmp(uri + end, e->lit, e->lit_len) != 0)
            rc = 0;
        pos = end + e->lit_len;
    }
    if (rc == 1 && pos != ulen)
        rc = 0;
    return rc;
}
