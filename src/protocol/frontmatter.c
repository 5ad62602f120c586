/* SPDX-License-Identifier: MIT */
/*
 * A SKILL.md's frontmatter as JSON (SEP-2640). The skills extension lists each
 * skill's frontmatter as JSON, and a host reads the file back and compares its own
 * reading member by member, with exact types: a server that reads one value
 * differently from the host has its skill refused. So this reads a deliberately
 * small part of YAML 1.2 the way the TypeScript SDK's reader does, and refuses the
 * rest (a refused skill is not served, with the reason in a warning):
 *
 *   - the text begins with a "---" line (after a byte order mark; CRLF read as LF)
 *     and the frontmatter ends at the next line of "---" and blanks;
 *   - a block mapping of plain keys (not quoted, not typed as a number, boolean or
 *     null, not repeated, not "__proto__"), nested block mappings (at most 16 deep)
 *     and block sequences of scalars ("- x", also right under the key: "a:\n- x");
 *   - scalars: plain, over several lines (joined by a space, or by a newline per
 *     blank line), typed by the YAML 1.2 core schema (null, ~, true, false, decimal
 *     numbers, 0o octal and 0x hexadecimal; everything else a string); single- and
 *     double-quoted on one line (all of YAML's escapes); literal and folded block
 *     scalars ("|", ">", with "-" or "+"; a folded one without more-indented lines);
 *     one-line flow sequences of scalars ("[a, 'b']"), and "{}";
 *   - refused: tabs in indentation, anchors, aliases, tags, directives, complex keys,
 *     flow mappings with members, nested flows, indentation indicators, a plain scalar
 *     holding ": " or a comment inside a multi-line one, and anything else.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "protocol/frontmatter.h"
#include "util/util.h"

#define MAX_DEPTH 16

typedef struct fm {
    char **lines; /* the YAML's lines, NUL-terminated, without their LF */
    size_t n, at; /* how many; the next one to read */
    int depth;
    char *why;
    size_t why_size;
    int failed;
} fm;

static json_t *fail(fm *f, size_t line, const char *fmt, ...) MCP_PRINTF(3, 4);

static json_t *fail(fm *f, size_t line, const char *fmt, ...)
{
    if (!f->failed) {
        f->failed = 1;
        int k = snprintf(f->why, f->why_size, "frontmatter line %zu: ", line + 2);
        va_list ap;
        va_start(ap, fmt);
        if (k >= 0 && (size_t)k < f->why_size)
            vsnprintf(f->why + k, f->why_size - (size_t)k, fmt, ap);
        va_end(ap);
    }
    return NULL;
}

/* A JSON string of n bytes at p, or NULL when they are not UTF-8. */
static json_t *text_value(fm *f, size_t line, const char *p, size_t n)
{
    json_t *s = json_stringn(p != NULL ? p : "", n);
    return s != NULL ? s : fail(f, line, "a value that is not UTF-8");
}

static int ws(char c)
{
    return c == ' ' || c == '\t';
}

/* The line's indentation (spaces), or -1 when a tab indents it. */
static int indent_of(const char *line)
{
    int i = 0;
    while (line[i] == ' ')
        i++;
    return line[i] == '\t' ? -1 : i;
}

static int blank(const char *line)
{
    while (ws(*line))
        line++;
    return *line == '\0';
}

static int blank_or_comment(const char *line)
{
    while (ws(*line))
        line++;
    return *line == '\0' || *line == '#';
}

/* The next line that holds something, from f->at, or f->n. */
static size_t next_content(const fm *f)
{
    size_t i = f->at;
    while (i < f->n && blank_or_comment(f->lines[i]))
        i++;
    return i;
}

static int seq_item(const char *c)
{
    return c[0] == '-' && (c[1] == '\0' || ws(c[1]));
}

/* Where the ':' that ends a plain key is ("key: value", "key:"), or NULL. */
static const char *key_colon(const char *c)
{
    if (strchr("[]{}&*!|>%@`#,?-\"':", c[0]) != NULL)
        return NULL;
    for (const char *p = c; *p != '\0'; p++) {
        if (ws(*p) && p[1] == '#')
            return NULL;
        if (*p == ':' && (p[1] == '\0' || ws(p[1])))
            return p;
    }
    return NULL;
}

/* ---- scalars ---- */

static int all_digits(const char *s, const char *end, int (*is)(int))
{
    if (s == end)
        return 0;
    for (; s < end; s++)
        if (!is((unsigned char)*s))
            return 0;
    return 1;
}

static int is_oct(int c)
{
    return c >= '0' && c <= '7';
}

/* ^[+-]?(\.\d+|\d+(\.\d*)?)([Ee][+-]?\d+)?$ */
static int decimal(const char *s)
{
    const char *p = s + (*s == '+' || *s == '-');
    const char *d = p;
    while (isdigit((unsigned char)*p))
        p++;
    int whole = p > d;
    if (*p == '.') {
        const char *f = ++p;
        while (isdigit((unsigned char)*p))
            p++;
        if (!whole && p == f)
            return 0;
    } else if (!whole) {
        return 0;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        p += *p == '+' || *p == '-';
        const char *e = p;
        while (isdigit((unsigned char)*p))
            p++;
        if (p == e)
            return 0;
    }
    return *p == '\0';
}

/* A plain scalar typed by the YAML 1.2 core schema. NULL (with why) for a number that
 * is not finite, or a hexadecimal or octal one past 2^53. */
static json_t *typed(fm *f, size_t line, const char *s)
{
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL"};
    for (size_t i = 0; i < sizeof(nulls) / sizeof(nulls[0]); i++)
        if (strcmp(s, nulls[i]) == 0)
            return json_null();
    if (strcmp(s, "true") == 0 || strcmp(s, "True") == 0 || strcmp(s, "TRUE") == 0)
        return json_true();
    if (strcmp(s, "false") == 0 || strcmp(s, "False") == 0 || strcmp(s, "FALSE") == 0)
        return json_false();
    size_t n = strlen(s);
    int oct = n > 2 && s[0] == '0' && s[1] == 'o' && all_digits(s + 2, s + n, is_oct);
    int hex = n > 2 && s[0] == '0' && s[1] == 'x' && all_digits(s + 2, s + n, isxdigit);
    if (oct || hex) {
        /* Read as a number by value (leading zeros are fine); past 2^53 a double would
         * not hold it exactly, and other readers round it: refused. */
        errno = 0;
        unsigned long long v = strtoull(s + 2, NULL, oct ? 8 : 16);
        if (errno == ERANGE || v > (1ULL << 53))
            return fail(f, line, "the number %s is too large", s);
        return json_integer((json_int_t)v);
    }
    const char *sign = s + (*s == '+' || *s == '-');
    if (strcmp(sign, ".inf") == 0 || strcmp(sign, ".Inf") == 0 || strcmp(sign, ".INF") == 0 ||
        strcmp(s, ".nan") == 0 || strcmp(s, ".NaN") == 0 || strcmp(s, ".NAN") == 0)
        return fail(f, line, "%s is not a finite number", s);
    if (!decimal(s))
        return text_value(f, line, s, strlen(s));
    double v = strtod(s, NULL);
    if (!isfinite(v))
        return fail(f, line, "%s is not a finite number", s);
    if (v == floor(v) && fabs(v) <= 9007199254740992.0)
        return json_integer((json_int_t)v);
    return json_real(v);
}

/* A plain scalar may not hold ": " (nor end in ':'). */
static int plain_ok(const char *s)
{
    for (const char *p = s; *p != '\0'; p++)
        if (*p == ':' && (p[1] == '\0' || ws(p[1])))
            return 0;
    return 1;
}

/* Cuts a " #comment" off s (in place); 1 when there was one. Then trims the end. */
static int cut_comment(char *s)
{
    int had = 0;
    for (char *p = s; *p != '\0'; p++) {
        if (ws(*p) && p[1] == '#') {
            *p = '\0';
            had = 1;
            break;
        }
    }
    size_t n = strlen(s);
    while (n > 0 && ws(s[n - 1]))
        s[--n] = '\0';
    return had;
}

/* Appends, or fails f when memory runs out. */
static void put(fm *f, mcp__buf *b, const void *p, size_t n)
{
    if (mcp__buf_append(b, p, n) != MCP_OK)
        fail(f, 0, "out of memory");
}

static void put_utf8(fm *f, mcp__buf *b, unsigned long cp)
{
    char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (char)cp, n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | (cp >> 6)), u[1] = (char)(0x80 | (cp & 0x3F)), n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | (cp >> 12)), u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F)), n = 3;
    } else {
        u[0] = (char)(0xF0 | (cp >> 18)), u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), u[3] = (char)(0x80 | (cp & 0x3F)), n = 4;
    }
    put(f, b, u, n);
}

/* A quoted scalar from *pp (at its opening quote) to its closing one, *pp after it. */
static json_t *quoted(fm *f, size_t line, const char **pp)
{
    const char *p = *pp;
    char q = *p++;
    mcp__buf b = {0};
    json_t *out = NULL;
    for (;;) {
        unsigned char c = (unsigned char)*p;
        if (c == '\0') {
            fail(f, line, "a quoted value must end on its line");
            break;
        }
        if (c < 0x20 && c != '\t') {
            fail(f, line, "a control character in a quoted value");
            break;
        }
        if (c == (unsigned char)q) {
            if (q == '\'' && p[1] == '\'') {
                put(f, &b, "'", 1);
                p += 2;
                continue;
            }
            p++;
            out = f->failed ? NULL : text_value(f, line, b.data, b.len);
            break;
        }
        if (q == '"' && c == '\\') {
            static const char from[] = "0abtnvfre \"/\\\t";
            static const char to[] = "\0\a\b\t\n\v\f\r\x1b \"/\\\t";
            const char *k = p[1] != '\0' ? strchr(from, p[1]) : NULL;
            if (k != NULL) {
                put(f, &b, &to[k - from], 1);
                p += 2;
                continue;
            }
            unsigned long cp = 0;
            int digits = p[1] == 'x' ? 2 : p[1] == 'u' ? 4 : p[1] == 'U' ? 8 : 0;
            if (p[1] == 'N' || p[1] == '_' || p[1] == 'L' || p[1] == 'P') {
                cp = p[1] == 'N' ? 0x85 : p[1] == '_' ? 0xA0 : p[1] == 'L' ? 0x2028 : 0x2029;
                p += 2;
            } else if (digits > 0) {
                for (int i = 0; i < digits; i++) {
                    char h = p[2 + i];
                    if (!isxdigit((unsigned char)h)) {
                        digits = -1;
                        break;
                    }
                    cp = cp * 16 + (unsigned long)(isdigit((unsigned char)h)
                                                       ? h - '0'
                                                       : (tolower((unsigned char)h) - 'a' + 10));
                }
                if (digits < 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
                    fail(f, line, "an escape that is no character");
                    break;
                }
                p += 2 + digits;
            } else {
                fail(f, line, "an unknown escape \\%c", p[1] != '\0' ? p[1] : ' ');
                break;
            }
            put_utf8(f, &b, cp);
            continue;
        }
        put(f, &b, p, 1);
        p++;
    }
    mcp__buf_free(&b);
    *pp = p;
    return out;
}

/* What may follow a value on its line: blanks, and a comment after one. */
static int rest_ok(const char *p)
{
    if (*p == '\0')
        return 1;
    if (!ws(*p))
        return 0;
    while (ws(*p))
        p++;
    return *p == '\0' || *p == '#';
}

/* [a, "b", c] on one line. */
static json_t *flow_seq(fm *f, size_t line, const char *p)
{
    json_t *arr = json_array();
    p++;
    for (;;) {
        while (ws(*p))
            p++;
        if (*p == ']') {
            p++;
            break;
        }
        json_t *item = NULL;
        if (*p == '"' || *p == '\'') {
            item = quoted(f, line, &p);
        } else {
            const char *s = p;
            while (*p != '\0' && *p != ',' && *p != ']' && !(ws(*p) && p[1] == '#'))
                p++;
            char *text = strndup(s, (size_t)(p - s));
            if (text != NULL)
                cut_comment(text);
            if (text == NULL || text[0] == '\0' || strpbrk(text, "[]{}") != NULL ||
                strchr("&*!|>%@`#", text[0]) != NULL ||
                (strchr("-?:", text[0]) != NULL && (text[1] == '\0' || ws(text[1]))) ||
                strchr(text, ':') != NULL)
                fail(f, line, "a flow sequence's item is not read");
            else
                item = typed(f, line, text);
            free(text);
        }
        if (item == NULL || json_array_append_new(arr, item) != 0) {
            json_decref(arr);
            return f->failed ? NULL : fail(f, line, "out of memory");
        }
        while (ws(*p))
            p++;
        if (*p == ',')
            p++;
        else if (*p != ']') {
            json_decref(arr);
            return fail(f, line, "a flow sequence must end on its line");
        }
    }
    if (!rest_ok(p)) {
        json_decref(arr);
        return fail(f, line, "something after a flow sequence");
    }
    return arr;
}

/* A literal (|) or folded (>) block scalar, header at h, under parent indentation. */
static json_t *block_scalar(fm *f, size_t line, const char *h, int parent)
{
    char style = h[0], chomp = h[1] == '+' || h[1] == '-' ? h[1] : 0;
    if (!rest_ok(h + 1 + (chomp != 0)))
        return fail(f, line, "a block scalar header is not read (no indentation indicator)");
    /* Its lines: down to the first that is less indented than the first with text. */
    int ci = -1;
    size_t end = f->at;
    while (end < f->n) {
        const char *l = f->lines[end];
        if (blank(l) && strchr(l, '\t') == NULL) {
            end++;
            continue;
        }
        int ind = indent_of(l);
        if (ind < 0)
            return fail(f, end, "tabs cannot indent");
        if (ci < 0)
            ci = ind;
        if (ind < ci || ind <= parent)
            break;
        end++;
    }
    if (ci >= 0 && ci <= parent)
        ci = -1;
    /* Trailing blank lines are the block's only when "+" keeps them; they are read
     * either way. */
    size_t last = end; /* one past the last line with text */
    while (last > f->at && blank(f->lines[last - 1]))
        last--;
    size_t trailing = end - last;
    mcp__buf b = {0};
    int prev_empty_run = 0, started = 0;
    for (size_t i = f->at; i < last; i++) {
        const char *l = f->lines[i];
        const char *t = blank(l) ? "" : l + ci;
        if (style == '>') {
            if (t[0] == '\0') {
                if (!started) {
                    mcp__buf_free(&b);
                    return fail(f, i, "a folded scalar that begins with a blank line");
                }
                prev_empty_run++;
                continue;
            }
            if (ws(t[0])) {
                mcp__buf_free(&b);
                return fail(f, i, "a folded scalar with more-indented lines");
            }
            if (started) {
                if (prev_empty_run == 0)
                    put(f, &b, " ", 1);
                for (int k = 0; k < prev_empty_run; k++)
                    put(f, &b, "\n", 1);
            }
            prev_empty_run = 0;
            started = 1;
            put(f, &b, t, strlen(t));
        } else {
            if (i > f->at)
                put(f, &b, "\n", 1);
            put(f, &b, t, strlen(t));
        }
    }
    int has_text = last > f->at;
    if (chomp != '-' && has_text)
        put(f, &b, "\n", 1);
    if (chomp == '+')
        for (size_t k = 0; k < trailing; k++)
            put(f, &b, "\n", 1);
    f->at = end;
    json_t *s = f->failed ? NULL : text_value(f, line, b.data, b.len);
    mcp__buf_free(&b);
    return s;
}

/* A plain scalar beginning at text (its first line, f->at past it), continued on the
 * lines indented more than parent. */
static json_t *plain(fm *f, size_t line, const char *text, int parent)
{
    char *first = mcp__strdup(text);
    if (first == NULL)
        return fail(f, line, "out of memory");
    int commented = cut_comment(first);
    if (!plain_ok(first)) {
        free(first);
        return fail(f, line, "a plain value holds \": \" (quote it)");
    }
    mcp__buf b = {0};
    put(f, &b, first, strlen(first));
    free(first);
    for (;;) {
        size_t j = f->at, blanks = 0;
        while (j < f->n && blank(f->lines[j]))
            j++, blanks++;
        if (j == f->n)
            break;
        if (blank_or_comment(f->lines[j])) {
            /* A comment line ends the value: nothing may continue it after. */
            size_t k = j;
            while (k < f->n && blank_or_comment(f->lines[k]))
                k++;
            int after = k < f->n ? indent_of(f->lines[k]) : 0;
            if (k < f->n && (after < 0 || after > parent)) {
                mcp__buf_free(&b);
                return fail(f, k, "a continuation line after a comment is not read");
            }
            break;
        }
        int ind = indent_of(f->lines[j]);
        if (ind >= 0 && ind <= parent)
            break;
        const char *c = ind >= 0 ? f->lines[j] + ind : "";
        if (ind < 0 || commented || strchr("-?:,[]{}#&*!|>'\"%@`", c[0]) != NULL) {
            mcp__buf_free(&b);
            return fail(f, j, "a continuation line is not read");
        }
        char *more = mcp__strdup(c);
        if (more == NULL || (commented = cut_comment(more)) != 0 || !plain_ok(more)) {
            free(more);
            mcp__buf_free(&b);
            return fail(f, j, "a continuation line is not read");
        }
        if (blanks == 0)
            put(f, &b, " ", 1);
        for (size_t k = 0; k < blanks; k++)
            put(f, &b, "\n", 1);
        put(f, &b, more, strlen(more));
        free(more);
        f->at = j + 1;
    }
    put(f, &b, "", 1);
    json_t *v =
        b.data != NULL && !f->failed ? typed(f, line, b.data) : fail(f, line, "out of memory");
    mcp__buf_free(&b);
    return v;
}

static json_t *block_map(fm *f, int indent);
static json_t *block_seq(fm *f, int indent);

/* The value after "key:" or "- " (rest, blanks skipped), its line at line. */
static json_t *value(fm *f, size_t line, const char *rest, int parent, int in_map)
{
    if (rest[0] == '\0' || rest[0] == '#') {
        size_t j = next_content(f);
        if (j < f->n) {
            int ind = indent_of(f->lines[j]);
            if (ind < 0)
                return fail(f, j, "tabs cannot indent");
            const char *c = f->lines[j] + ind;
            if (ind > parent && seq_item(c))
                return block_seq(f, ind);
            if (ind > parent && key_colon(c) != NULL)
                return block_map(f, ind);
            if (ind > parent)
                return fail(f, j, "a value on the line after its key is not read");
            if (ind == parent && in_map && seq_item(c))
                return block_seq(f, ind);
        }
        return json_null();
    }
    if (rest[0] == '|' || rest[0] == '>')
        return block_scalar(f, line, rest, parent);
    json_t *v = NULL;
    if (rest[0] == '"' || rest[0] == '\'') {
        const char *p = rest;
        v = quoted(f, line, &p);
        if (v != NULL && !rest_ok(p)) {
            json_decref(v);
            return fail(f, line, "something after a quoted value");
        }
    } else if (rest[0] == '[') {
        v = flow_seq(f, line, rest);
    } else if (rest[0] == '{') {
        const char *p = rest + 1;
        while (ws(*p))
            p++;
        if (*p != '}' || !rest_ok(p + 1))
            return fail(f, line, "a flow mapping with members is not read");
        v = json_object();
    } else if (strchr("&*!%@`,]}", rest[0]) != NULL ||
               (strchr("-?:", rest[0]) != NULL && (rest[1] == '\0' || ws(rest[1])))) {
        return fail(f, line, "anchors, aliases, tags and such are not read");
    } else {
        return plain(f, line, rest, parent);
    }
    if (v == NULL)
        return NULL;
    /* A quoted or flow value ends on its line. */
    size_t j = next_content(f);
    if (j < f->n && indent_of(f->lines[j]) > parent) {
        json_decref(v);
        return fail(f, j, "unexpected indentation");
    }
    return v;
}

static json_t *block_map(fm *f, int indent)
{
    if (++f->depth > MAX_DEPTH)
        return fail(f, f->at, "nested more than %d deep", MAX_DEPTH);
    json_t *obj = json_object();
    while (obj != NULL) {
        size_t i = next_content(f);
        if (i == f->n)
            break;
        int ind = indent_of(f->lines[i]);
        if (ind < 0) {
            json_decref(obj);
            return fail(f, i, "tabs cannot indent");
        }
        if (ind < indent)
            break;
        const char *c = f->lines[i] + ind;
        const char *colon = ind == indent ? key_colon(c) : NULL;
        if (colon == NULL) {
            json_decref(obj);
            return fail(f, i, ind > indent ? "unexpected indentation" : "a key is not read");
        }
        char *key = strndup(c, (size_t)(colon - c));
        size_t kl = key != NULL ? strlen(key) : 0;
        while (kl > 0 && ws(key[kl - 1]))
            key[--kl] = '\0';
        json_t *kt = key != NULL ? typed(f, i, key) : NULL;
        int bad = key == NULL || !json_is_string(kt) || strcmp(key, "__proto__") == 0 ||
                  json_object_get(obj, key) != NULL || kl == 0;
        json_decref(kt);
        if (bad) {
            free(key);
            json_decref(obj);
            return fail(f, i, "a key that is repeated, or not a plain string");
        }
        const char *rest = colon + 1;
        while (ws(*rest))
            rest++;
        f->at = i + 1;
        json_t *v = value(f, i, rest, indent, 1);
        if (v == NULL || json_object_set_new(obj, key, v) != 0) {
            free(key);
            json_decref(obj);
            return f->failed ? NULL : fail(f, i, "out of memory");
        }
        free(key);
    }
    f->depth--;
    return obj;
}

static json_t *block_seq(fm *f, int indent)
{
    if (++f->depth > MAX_DEPTH)
        return fail(f, f->at, "nested more than %d deep", MAX_DEPTH);
    json_t *arr = json_array();
    while (arr != NULL) {
        size_t i = next_content(f);
        if (i == f->n)
            break;
        int ind = indent_of(f->lines[i]);
        if (ind < 0) {
            json_decref(arr);
            return fail(f, i, "tabs cannot indent");
        }
        if (ind < indent || !seq_item(f->lines[i] + ind))
            break;
        if (ind > indent) {
            json_decref(arr);
            return fail(f, i, "unexpected indentation");
        }
        const char *rest = f->lines[i] + ind + 1;
        while (ws(*rest))
            rest++;
        if (rest[0] == '\0' || rest[0] == '#' || seq_item(rest) || key_colon(rest) != NULL) {
            json_decref(arr);
            return fail(f, i, "an item that is empty, a sequence or a mapping is not read");
        }
        f->at = i + 1;
        json_t *v = value(f, i, rest, indent, 0);
        if (v == NULL || json_array_append_new(arr, v) != 0) {
            json_decref(arr);
            return f->failed ? NULL : fail(f, i, "out of memory");
        }
    }
    f->depth--;
    return arr;
}

json_t *mcp__frontmatter_parse(const char *text, size_t len, char *why, size_t why_size)
{
    fm f = {.why = why, .why_size = why_size};
    if (why_size > 0)
        why[0] = '\0';
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        text += 3, len -= 3;
    /* A copy with CRLF as LF, cut into lines. */
    char *copy = malloc(len + 1);
    if (copy == NULL) {
        snprintf(why, why_size, "out of memory");
        return NULL;
    }
    size_t n = 0, nlines = 1;
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '\r' && i + 1 < len && text[i + 1] == '\n')
            continue;
        if (text[i] == '\0') {
            free(copy);
            snprintf(why, why_size, "SKILL.md holds a NUL byte");
            return NULL;
        }
        nlines += text[i] == '\n';
        copy[n++] = text[i];
    }
    copy[n] = '\0';
    char **lines = calloc(nlines, sizeof(*lines));
    size_t nl = 0;
    for (char *p = copy; lines != NULL && p != NULL; nl++) {
        lines[nl] = p;
        p = strchr(p, '\n');
        if (p != NULL)
            *p++ = '\0';
    }
    json_t *out = NULL;
    size_t close = 1;
    while (lines != NULL && close < nl) {
        const char *l = lines[close];
        if (strncmp(l, "---", 3) == 0 && blank(l + 3))
            break;
        close++;
    }
    if (lines == NULL) {
        snprintf(why, why_size, "out of memory");
    } else if (nl < 2 || strcmp(lines[0], "---") != 0) {
        snprintf(why, why_size, "SKILL.md must begin with a \"---\" line");
    } else if (close >= nl) {
        snprintf(why, why_size, "the frontmatter has no closing \"---\" line");
    } else {
        f.lines = lines + 1;
        f.n = close - 1;
        for (size_t i = 0; i < f.n && !f.failed; i++)
            if (strchr(f.lines[i], '\r') != NULL || strstr(f.lines[i], "\xE2\x80\xA8") != NULL ||
                strstr(f.lines[i], "\xE2\x80\xA9") != NULL ||
                (i == 0 && strncmp(f.lines[i], "\xEF\xBB\xBF", 3) == 0))
                fail(&f, i, "a line break other than LF, or a byte order mark");
        if (!f.failed)
            out = block_map(&f, 0);
        if (out != NULL && next_content(&f) < f.n) {
            json_decref(out);
            out = fail(&f, next_content(&f), "unexpected content");
        }
    }
    free(lines);
    free(copy);
    return out;
}
