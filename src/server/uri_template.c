/* SPDX-License-Identifier: MIT */
/*
 * URI template matching for resource templates (RFC 6570 level 1).
 *
 * A template is L0 {v1} L1 {v2} ... {vk} Lk: literal texts Li, possibly empty,
 * around variables that each stand for one or more characters other than '/'.
 * The semantics are leftmost-shortest, those of a backtracking matcher that
 * tries every length of each variable, shortest first. Such a matcher takes time
 * exponential in the number of variables (x://{a}-{b}-{c}-{d}.json against a
 * 1,024-byte URI kept the loop thread for 38.5 s), so this one never backtracks:
 *
 * Placing L(i) at its first possible occurrence after v(i) is never worse than a
 * later one, so it is the leftmost-shortest choice. If L(i) holds no '/' and a
 * match places it at o' while an occurrence o < o' exists, moving it to o gives
 * v(i) a prefix of its old value and v(i+1) what v(i) and L(i) held beyond it,
 * none of which is '/': still a match. If L(i) holds a '/', v(i) cannot cross
 * it, so the first '/' of L(i) falls on the first '/' after v(i) starts: one
 * place only. Lk ends the URI; two adjacent variables split like L(i) empty.
 *
 * Each literal is searched for with Knuth-Morris-Pratt from the start of its
 * variable's value, which never reads a character twice, so a whole match takes
 * time linear in the lengths of the URI and of the template.
 */
#include <stdlib.h>
#include <string.h>

#include <mcp/common.h>

#include "server/uri_template.h"

/* The KMP table of literals up to this length lives on the stack. */
#define LITERAL_ON_STACK 64

/* 1 when every '{' of tpl is closed by a '}' with a non-empty name between. */
static int template_valid(const char *tpl, size_t *steps)
{
    const char *t = tpl;
    while ((t = strchr(t, '{')) != NULL) {
        const char *close = strchr(t + 1, '}');
        if (close == NULL || close == t + 1)
            return 0;
        t = close + 1;
    }
    *steps += strlen(tpl);
    return 1;
}

size_t mcp__kmp_table(const char *lit, size_t len, size_t *fail)
{
    size_t n = 0;
    fail[0] = 0;
    for (size_t i = 1, k = 0; i < len; i++, n++) {
        for (; k > 0 && lit[i] != lit[k]; n++)
            k = fail[k - 1];
        if (lit[i] == lit[k])
            k++;
        fail[i] = k;
    }
    return n;
}

/*
 * The value of the variable starting at uri[p] when the literal lit (no '/',
 * len > 0) follows it: sets *end past the value at the first occurrence of lit
 * after uri[p] with no '/' before it, and returns 1, or 0 when there is none
 * (MCP_ENOMEM when its table cannot be had).
 */
static int find_literal(const char *uri, size_t p, const char *lit, size_t len, size_t *end,
                        size_t *steps)
{
    size_t stack[LITERAL_ON_STACK];
    size_t *fail = stack;
    if (len > LITERAL_ON_STACK) {
        fail = malloc(len * sizeof(*fail));
        if (fail == NULL)
            return MCP_ENOMEM;
    }
    size_t n = mcp__kmp_table(lit, len, fail); /* steps */
    int found = 0;
    size_t j = 0; /* characters of lit matched so far */
    for (size_t i = p + 1; uri[i] != '\0' && uri[i] != '/'; i++, n++) {
        for (; j > 0 && uri[i] != lit[j]; n++)
            j = fail[j - 1];
        if (uri[i] == lit[j])
            j++;
        if (j == len) {
            *end = i + 1 - len;
            found = 1;
            break;
        }
    }
    *steps += n;
    if (fail != stack)
        free(fail);
    return found;
}

/*
 * The same when lit holds a '/': the first '/' of lit is the first '/' from
 * uri[p] on, which leaves one place to try.
 */
static int place_literal(const char *uri, size_t ulen, size_t p, const char *lit, size_t len,
                         size_t *end, size_t *steps)
{
    size_t slash_in_lit = (size_t)(strchr(lit, '/') - lit);
    size_t slash = p + strcspn(uri + p, "/");
    *steps += slash - p + len;
    if (uri[slash] == '\0' || slash < p + 1 + slash_in_lit)
        return 0;
    size_t at = slash - slash_in_lit;
    if (ulen - at < len || memcmp(uri + at, lit, len) != 0)
        return 0;
    *end = at;
    return 1;
}

int mcp__uri_template_has_ops(const char *tpl)
{
    for (const char *t = strchr(tpl, '{'); t != NULL; t = strchr(t + 1, '{')) {
        size_t n = strcspn(t + 1, "}");
        if (strchr("+#./;?&=,!@|", t[1]) != NULL || memchr(t + 1, ',', n) != NULL ||
            memchr(t + 1, ':', n) != NULL || memchr(t + 1, '*', n) != NULL)
            return 1;
    }
    return 0;
}

int mcp__uri_template_match(const char *tpl, const char *uri, json_t *vars, size_t *steps)
{
    size_t ignored = 0;
    if (steps == NULL)
        steps = &ignored;
    if (!template_valid(tpl, steps))
        return 0;
    if (mcp__uri_template_has_ops(tpl))
        return mcp__uri_template_match_ext(tpl, uri, vars, steps);
    size_t ulen = strlen(uri);
    size_t len = strcspn(tpl, "{");
    *steps += len;
    if (len > ulen || memcmp(tpl, uri, len) != 0)
        return 0;
    const char *t = tpl + len;
    size_t p = len; /* where the next variable's value starts in uri */
    while (*t == '{') {
        const char *name = t + 1;
        const char *close = strchr(name, '}');
        const char *lit = close + 1;
        len = strcspn(lit, "{"); /* the literal after the variable */
        size_t end;              /* the value is uri[p, end) */
        if (lit[len] == '\0') {
            /* The last variable: its literal ends the URI. */
            if (ulen - p < len + 1 || memcmp(uri + ulen - len, lit, len) != 0)
                return 0;
            end = ulen - len;
            *steps += ulen - p;
            if (memchr(uri + p, '/', end - p) != NULL)
                return 0;
        } else if (uri[p] == '\0' || uri[p] == '/') {
            return 0;
        } else if (len == 0) {
            /* Another variable follows: this one takes one character, whole. */
            end = p + 1;
            while (((unsigned char)uri[end] & 0xC0) == 0x80)
                end++;
            *steps += end - p;
        } else {
            int rc = memchr(lit, '/', len) != NULL
                         ? place_literal(uri, ulen, p, lit, len, &end, steps)
                         : find_literal(uri, p, lit, len, &end, steps);
            if (rc != 1)
                return rc;
        }
        /* A value that is not UTF-8 cannot be a JSON string: no match. */
        *steps += end - p;
        json_t *value = mcp__uri_decoded(uri + p, end - p);
        if (value == NULL)
            return 0;
        if (json_object_setn_new(vars, name, (size_t)(close - name), value) != 0)
            return MCP_ENOMEM;
        p = end + len;
        t = lit + len;
    }
    return p == ulen;
}
