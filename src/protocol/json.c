/* SPDX-License-Identifier: MIT */
/*
 * JSON text to jansson values and back (see json.h for why and what it promises).
 *
 * The reader is iterative: open containers sit on an explicit stack, so the depth
 * jansson allows (JSON_PARSER_MAX_DEPTH) costs heap, not a thread's stack. A
 * container joins its parent as soon as it opens, so on any error freeing the root
 * frees everything read so far. Strings without escapes are handed to jansson
 * straight from the input; only escaped ones are decoded, into a scratch buffer.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "protocol/json.h"
#include "util/seal.h"

#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH JSON_PARSER_MAX_DEPTH

/* Bytes that stand for themselves inside a string: printable ASCII but '"' and '\\'.
 * The rest are the end, an escape, a control character (refused) or the lead byte
 * of a UTF-8 sequence (checked). The same holds for writing. */
static const unsigned char plain[256] = {
    ['\x20'] = 1,
    1,
    0,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1, /* 0x20-0x2f, '"' no */
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1, /* 0x30-0x3f */
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1, /* 0x40-0x4f */
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    0,
    1,
    1,
    1, /* 0x50-0x5f, '\\' no */
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1, /* 0x60-0x6f */
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1, /* 0x70-0x7f */
};

/*
 * The length of the UTF-8 sequence at p (at most n bytes there), or 0 when it is not
 * one jansson accepts: no overlong forms, no surrogates, nothing above U+10FFFF.
 */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
    unsigned u = p[0];
    size_t size;
    uint32_t value;
    if (u < 0x80)
        return 1;
    if (u >= 0xC2 && u <= 0xDF) {
        size = 2;
        value = u & 0x1F;
    } else if (u >= 0xE0 && u <= 0xEF) {
        size = 3;
        value = u & 0x0F;
    } else if (u >= 0xF0 && u <= 0xF4) {
        size = 4;
        value = u & 0x07;
    } else {
        return 0;
    }
    if (n < size)
        return 0;
    for (size_t i = 1; i < size; i++) {
        if (p[i] < 0x80 || p[i] > 0xBF)
            return 0;
        value = (value << 6) | (p[i] & 0x3F);
    }
    if (value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF) || (size == 3 && value < 0x800) ||
        (size == 4 && value < 0x10000))
        return 0;
    return size;
}

/* ---- Reading ---------------------------------------------------------------------- */

typedef struct {
    json_t *container; /* borrowed: its parent (or the root reference) owns it */
    int is_object;
} frame;

typedef struct {
    const unsigned char *start, *p, *end;
    json_error_t *err;
    mcp__buf key;  /* an escaped key, decoded */
    mcp__buf text; /* an escaped string value, decoded */
} reader;

/* The C locale, for reals: the host's may spell the decimal point otherwise. Made on
 * first use and kept; when it cannot be made (out of memory) reals fail, and the next
 * one tries again. */
static locale_t c_locale;

static locale_t get_c_locale(void)
{
    locale_t l = __atomic_load_n(&c_locale, __ATOMIC_ACQUIRE);
    if (l != (locale_t)0)
        return l;
    locale_t fresh = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    if (fresh == (locale_t)0)
        return fresh;
    locale_t seen = (locale_t)0;
    if (!__atomic_compare_exchange_n(&c_locale, &seen, fresh, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        freelocale(fresh); /* another thread made it first */
        return seen;
    }
    return fresh;
}

/* Records why the text is refused, where, and jansson's code for it. Returns NULL. */
static json_t *fail(reader *r, enum json_error_code code, const char *fmt, ...) MCP_PRINTF(3, 4);
static json_t *fail(reader *r, enum json_error_code code, const char *fmt, ...)
{
    json_error_t *e = r->err;
    if (e == NULL)
        return NULL;
    const unsigned char *at = r->p < r->end ? r->p : r->end;
    size_t line = 1, column = 1;
    for (const unsigned char *q = r->start; q < at; q++) {
        if (*q == '\n') {
            line++;
            column = 1;
        } else if ((*q & 0xC0) != 0x80) {
            column++; /* characters, as jansson counts them, not bytes */
        }
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->text, sizeof(e->text) - 1, fmt, ap);
    va_end(ap);
    e->text[sizeof(e->text) - 1] = (char)code;
    snprintf(e->source, sizeof(e->source), "<buffer>");
    /* jansson's fields are ints: a text past 2 GiB (far past any limit) saturates. */
    e->line = line > INT_MAX ? INT_MAX : (int)line;
    e->column = column > INT_MAX ? INT_MAX : (int)column;
    size_t position = (size_t)(at - r->start);
    e->position = position > INT_MAX ? INT_MAX : (int)position;
    return NULL;
}

static void skip_space(reader *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\n' || *r->p == '\r' || *r->p == '\t'))
        r->p++;
}

static int hex4(const unsigned char *p, uint32_t *out)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= c - '0';
        else if (c >= 'a' && c <= 'f')
            v |= c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            v |= c - 'A' + 10;
        else
            return -1;
    }
    *out = v;
    return 0;
}

static int put_utf8(mcp__buf *b, uint32_t cp)
{
    char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | (cp >> 6));
        u[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | (cp >> 12));
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        u[0] = (char)(0xF0 | (cp >> 18));
        u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    return mcp__buf_append(b, u, n);
}

/*
 * Reads the string whose opening quote r->p is past. *s and *n get its bytes: in the
 * input itself when it has no escape, else decoded into scratch. 0, or -1 with the
 * error recorded.
 */
static int read_string(reader *r, mcp__buf *scratch, const char **s, size_t *n)
{
    const unsigned char *run = r->p;
    int decoding = 0;
    mcp__buf_reset(scratch);
    for (;;) {
        const unsigned char *p = r->p;
        while (p < r->end && plain[*p])
            p++;
        r->p = p;
        if (p >= r->end) {
            fail(r, json_error_premature_end_of_input, "premature end of input in a string");
            return -1;
        }
        unsigned c = *p;
        if (c == '"') {
            if (!decoding) {
                *s = (const char *)run;
                *n = (size_t)(p - run);
            } else {
                if (mcp__buf_append(scratch, run, (size_t)(p - run)) != MCP_OK)
                    goto nomem;
                *s = scratch->data != NULL ? scratch->data : "";
                *n = scratch->len;
            }
            r->p = p + 1;
            return 0;
        }
        if (c >= 0x80) {
            size_t k = utf8_seq(p, (size_t)(r->end - p));
            if (k == 0) {
                fail(r, json_error_invalid_utf8, "unable to decode byte 0x%x", c);
                return -1;
            }
            r->p = p + k;
            continue;
        }
        if (c < 0x20) {
            fail(r, json_error_invalid_syntax, "control character 0x%x in a string", c);
            return -1;
        }
        /* A backslash: what came before is copied, the escape decoded. */
        if (mcp__buf_append(scratch, run, (size_t)(p - run)) != MCP_OK)
            goto nomem;
        decoding = 1;
        if (r->end - p < 2) {
            r->p = r->end;
            fail(r, json_error_premature_end_of_input, "premature end of input in a string");
            return -1;
        }
        char simple = 0;
        switch (p[1]) {
        case '"':
            simple = '"';
            break;
        case '\\':
            simple = '\\';
            break;
        case '/':
            simple = '/';
            break;
        case 'b':
            simple = '\b';
            break;
        case 'f':
            simple = '\f';
            break;
        case 'n':
            simple = '\n';
            break;
        case 'r':
            simple = '\r';
            break;
        case 't':
            simple = '\t';
            break;
        case 'u':
            break;
        default:
            r->p = p + 1;
            if (p[1] >= 0x20 && p[1] < 0x7f)
                fail(r, json_error_invalid_syntax, "invalid escape '\\%c'", p[1]);
            else
                fail(r, json_error_invalid_syntax, "invalid escape: '\\' then byte 0x%x", p[1]);
            return -1;
        }
        if (simple != 0) {
            if (mcp__buf_append(scratch, &simple, 1) != MCP_OK)
                goto nomem;
            r->p = run = p + 2;
            continue;
        }
        uint32_t cp, lo;
        if (r->end - p < 6 || hex4(p + 2, &cp) != 0) {
            r->p = p + 1;
            fail(r, json_error_invalid_syntax, "invalid escape: \\u needs four hex digits");
            return -1;
        }
        p += 6;
        if (cp == 0) {
            r->p = p;
            fail(r, json_error_null_character, "\\u0000 is not allowed without JSON_ALLOW_NUL");
            return -1;
        }
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (r->end - p < 6 || p[0] != '\\' || p[1] != 'u' || hex4(p + 2, &lo) != 0) {
                r->p = p;
                fail(r, json_error_invalid_syntax, "invalid Unicode '\\u%04X'", (unsigned)cp);
                return -1;
            }
            if (lo < 0xDC00 || lo > 0xDFFF) {
                r->p = p + 6;
                fail(r, json_error_invalid_syntax, "invalid Unicode '\\u%04X\\u%04X'", (unsigned)cp,
                     (unsigned)lo);
                return -1;
            }
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            p += 6;
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            r->p = p;
            fail(r, json_error_invalid_syntax, "invalid Unicode '\\u%04X'", (unsigned)cp);
            return -1;
        }
        if (put_utf8(scratch, cp) != MCP_OK)
            goto nomem;
        r->p = run = p;
    }
nomem:
    fail(r, json_error_out_of_memory, "out of memory");
    return -1;
}

/* A number at r->p, as jansson reads one: an integer unless it has a fraction or an
 * exponent; an integer beyond int64 or a real beyond a double is refused. */
static json_t *read_number(reader *r)
{
    const unsigned char *p = r->p, *first = p;
    int negative = 0;
    if (*p == '-') {
        negative = 1;
        p++;
    }
    if (p >= r->end || *p < '0' || *p > '9') {
        r->p = p;
        return fail(r, json_error_invalid_syntax, "invalid token: a number needs a digit");
    }
    const unsigned char *digits = p;
    if (*p == '0') {
        p++;
        if (p < r->end && *p >= '0' && *p <= '9') {
            r->p = p;
            return fail(r, json_error_invalid_syntax, "invalid token: a leading zero");
        }
    } else {
        while (p < r->end && *p >= '0' && *p <= '9')
            p++;
    }
    int real = 0;
    if (p < r->end && *p == '.') {
        if (p + 1 >= r->end || p[1] < '0' || p[1] > '9') {
            r->p = p;
            return fail(r, json_error_invalid_syntax, "invalid token: a fraction needs a digit");
        }
        p++;
        while (p < r->end && *p >= '0' && *p <= '9')
            p++;
        real = 1;
    }
    if (p < r->end && (*p == 'e' || *p == 'E')) {
        const unsigned char *q = p + 1;
        if (q < r->end && (*q == '+' || *q == '-'))
            q++;
        if (q >= r->end || *q < '0' || *q > '9') {
            r->p = q;
            return fail(r, json_error_invalid_syntax, "invalid token: an exponent needs a digit");
        }
        while (q < r->end && *q >= '0' && *q <= '9')
            q++;
        p = q;
        real = 1;
    }
    if (!real) {
        /* Exact in int64, as strtoll reads it: -2^63 fits, 2^63 does not. */
        uint64_t v = 0, limit = negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
        for (const unsigned char *d = digits; d < p; d++) {
            unsigned k = *d - '0';
            if (v > (limit - k) / 10) {
                r->p = first;
                return fail(r, json_error_numeric_overflow, "too big %sinteger",
                            negative ? "negative " : "");
            }
            v = v * 10 + k;
        }
        r->p = p;
        json_int_t i =
            negative ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(json_int_t)v) : (json_int_t)v;
        json_t *num = json_integer(i);
        return num != NULL ? num : fail(r, json_error_out_of_memory, "out of memory");
    }
    size_t n = (size_t)(p - first);
    char small[64];
    char *copy = n < sizeof(small) ? small : malloc(n + 1);
    if (copy == NULL)
        return fail(r, json_error_out_of_memory, "out of memory");
    memcpy(copy, first, n);
    copy[n] = '\0';
    locale_t c = get_c_locale();
    char *stop = copy;
    errno = 0;
    double d = c != (locale_t)0 ? strtod_l(copy, &stop, c) : 0;
    int overflow = (d == HUGE_VAL || d == -HUGE_VAL) && errno == ERANGE;
    int whole = stop == copy + n;
    if (copy != small)
        free(copy);
    if (c == (locale_t)0)
        return fail(r, json_error_out_of_memory, "out of memory");
    if (!whole) {
        r->p = first;
        return fail(r, json_error_invalid_syntax, "invalid token: not a number");
    }
    if (overflow) {
        r->p = first;
        return fail(r, json_error_numeric_overflow, "real number overflow");
    }
    r->p = p;
    json_t *num = json_real(d);
    return num != NULL ? num : fail(r, json_error_out_of_memory, "out of memory");
}

/* true, false or null at r->p; a word that runs on (nullx) is no literal. */
static json_t *read_literal(reader *r)
{
    static const struct {
        const char *word;
        size_t len;
    } words[] = {{"true", 4}, {"false", 5}, {"null", 4}};
    const unsigned char *p = r->p;
    for (size_t i = 0; i < 3; i++) {
        size_t n = words[i].len;
        if ((size_t)(r->end - p) < n || memcmp(p, words[i].word, n) != 0)
            continue;
        if (p + n < r->end && ((p[n] | 0x20) >= 'a' && (p[n] | 0x20) <= 'z'))
            break;
        r->p = p + n;
        return i == 0 ? json_true() : i == 1 ? json_false() : json_null();
    }
    return fail(r, json_error_invalid_syntax, "invalid token");
}

/* Reads an object's key and its colon; r->p is at the key's opening quote. */
static int read_key(reader *r, const char **key, size_t *klen)
{
    if (r->p >= r->end || *r->p != '"') {
        fail(r, r->p >= r->end ? json_error_premature_end_of_input : json_error_invalid_syntax,
             "string or '}' expected");
        return -1;
    }
    r->p++;
    if (read_string(r, &r->key, key, klen) != 0)
        return -1;
    skip_space(r);
    if (r->p >= r->end || *r->p != ':') {
        fail(r, r->p >= r->end ? json_error_premature_end_of_input : json_error_invalid_syntax,
             "':' expected");
        return -1;
    }
    r->p++;
    return 0;
}

json_t *mcp__json_parse(const char *text, size_t len, unsigned flags, json_error_t *err)
{
    reader r = {.start = (const unsigned char *)text, .err = err};
    r.p = r.start;
    r.end = r.start + len;
    frame stack_small[32];
    frame *stack = stack_small;
    size_t depth = 0, cap = sizeof(stack_small) / sizeof(stack_small[0]);
    json_t *root = NULL, *value = NULL;
    const char *key = NULL;
    size_t klen = 0;

    skip_space(&r);
    if (!(flags & MCP__JSON_ANY) && (r.p >= r.end || (*r.p != '[' && *r.p != '{'))) {
        fail(&r, json_error_invalid_syntax, "'[' or '{' expected");
        goto fail;
    }
    for (;;) {
        /* A value starts at r.p (after white space). */
        skip_space(&r);
        if (depth + 1 > MAX_DEPTH) {
            fail(&r, json_error_stack_overflow, "maximum parsing depth reached");
            goto fail;
        }
        if (r.p >= r.end) {
            fail(&r, json_error_premature_end_of_input, "premature end of input");
            goto fail;
        }
        unsigned c = *r.p;
        if (c == '{' || c == '[') {
            json_t *container = c == '{' ? json_object() : json_array();
            if (container == NULL) {
                fail(&r, json_error_out_of_memory, "out of memory");
                goto fail;
            }
            r.p++;
            /* It joins its parent now, so that failing later frees it with the root. */
            if (depth == 0) {
                root = container;
            } else if ((stack[depth - 1].is_object
                            ? json_object_setn_new_nocheck(stack[depth - 1].container, key, klen,
                                                           container)
                            : json_array_append_new(stack[depth - 1].container, container)) != 0) {
                fail(&r, json_error_out_of_memory, "out of memory");
                goto fail;
            }
            if (depth == cap) {
                size_t ncap = cap * 2 > MAX_DEPTH ? MAX_DEPTH : cap * 2;
                frame *grown = malloc(ncap * sizeof(*grown));
                if (grown == NULL) {
                    fail(&r, json_error_out_of_memory, "out of memory");
                    goto fail;
                }
                memcpy(grown, stack, depth * sizeof(*grown));
                if (stack != stack_small)
                    free(stack);
                stack = grown;
                cap = ncap;
            }
            stack[depth].container = container;
            stack[depth].is_object = c == '{';
            depth++;
            skip_space(&r);
            if (r.p < r.end && *r.p == (c == '{' ? '}' : ']')) {
                r.p++;
                goto closed;
            }
            if (c == '{' && read_key(&r, &key, &klen) != 0)
                goto fail;
            continue;
        }
        if (c == '"') {
            const char *s;
            size_t n;
            r.p++;
            if (read_string(&r, &r.text, &s, &n) != 0)
                goto fail;
            value = json_stringn_nocheck(s, n);
            if (value == NULL) {
                fail(&r, json_error_out_of_memory, "out of memory");
                goto fail;
            }
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            if ((value = read_number(&r)) == NULL)
                goto fail;
        } else if (c == 't' || c == 'f' || c == 'n') {
            if ((value = read_literal(&r)) == NULL)
                goto fail;
        } else {
            fail(&r, json_error_invalid_syntax, "invalid token");
            goto fail;
        }
        /* A scalar is read: it joins its container, or is the whole text. */
        if (depth == 0) {
            root = value;
            value = NULL;
            break;
        }
        {
            frame *top = &stack[depth - 1];
            int rc = top->is_object ? json_object_setn_new_nocheck(top->container, key, klen, value)
                                    : json_array_append_new(top->container, value);
            value = NULL; /* taken, even when refused */
            if (rc != 0) {
                fail(&r, json_error_out_of_memory, "out of memory");
                goto fail;
            }
        }
    next:
        /* After a member: a comma and the next, or the container's end. */
        skip_space(&r);
        if (r.p >= r.end) {
            fail(&r, json_error_premature_end_of_input, "premature end of input");
            goto fail;
        }
        {
            frame *top = &stack[depth - 1];
            if (*r.p == ',') {
                r.p++;
                if (top->is_object) {
                    skip_space(&r);
                    if (read_key(&r, &key, &klen) != 0)
                        goto fail;
                }
                continue;
            }
            if (*r.p != (top->is_object ? '}' : ']')) {
                fail(&r, json_error_invalid_syntax,
                     top->is_object ? "'}' expected" : "']' expected");
                goto fail;
            }
            r.p++;
        }
    closed:
        depth--;
        if (depth == 0)
            break;
        goto next;
    }
    skip_space(&r);
    if (r.p < r.end) {
        fail(&r, json_error_end_of_input_expected, "end of file expected");
        goto fail;
    }
    if (stack != stack_small)
        free(stack);
    mcp__buf_free(&r.key);
    mcp__buf_free(&r.text);
    return root;

fail:
    json_decref(value);
    json_decref(root);
    if (stack != stack_small)
        free(stack);
    mcp__buf_free(&r.key);
    mcp__buf_free(&r.text);
    return NULL;
}

/* ---- Writing ---------------------------------------------------------------------- */

static int write_string(mcp__buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    if (mcp__buf_reserve(b, n + 2) != MCP_OK)
        return MCP_ENOMEM;
    b->data[b->len++] = '"';
    while (p < end) {
        const unsigned char *run = p;
        while (p < end && plain[*p])
            p++;
        while (p < end && *p >= 0x80) {
            size_t k = utf8_seq(p, (size_t)(end - p));
            if (k == 0)
                return MCP_EINVAL; /* jansson writes no text that is not UTF-8 either */
            p += k;
            while (p < end && plain[*p])
                p++;
        }
        if (p > run && mcp__buf_append(b, run, (size_t)(p - run)) != MCP_OK)
            return MCP_ENOMEM;
        if (p >= end)
            break;
        char esc[6] = {'\\', 0, 0, 0, 0, 0};
        size_t k = 2;
        switch (*p) {
        case '"':
            esc[1] = '"';
            break;
        case '\\':
            esc[1] = '\\';
            break;
        case '\b':
            esc[1] = 'b';
            break;
        case '\f':
            esc[1] = 'f';
            break;
        case '\n':
            esc[1] = 'n';
            break;
        case '\r':
            esc[1] = 'r';
            break;
        case '\t':
            esc[1] = 't';
            break;
        default:
            esc[1] = 'u';
            esc[2] = '0';
            esc[3] = '0';
            esc[4] = hex[*p >> 4];
            esc[5] = hex[*p & 0xF];
            k = 6;
        }
        if (mcp__buf_append(b, esc, k) != MCP_OK)
            return MCP_ENOMEM;
        p++;
    }
    return mcp__buf_append(b, "\"", 1);
}

/* A real as jansson writes one: %.17g, ".0" when it would read back as an integer, and
 * no '+' or leading zeros in the exponent; in the C locale, so that the point is '.'
 * whatever the host set (jansson swaps in the first byte of the locale's point only,
 * which breaks UTF-8 where that point is a multibyte character). */
static int write_real(mcp__buf *b, double v)
{
    char t[64];
    locale_t c = get_c_locale();
    if (c == (locale_t)0)
        return MCP_ENOMEM;
    locale_t host = uselocale(c);
    int n = snprintf(t, sizeof(t), "%.17g", v);
    uselocale(host);
    if (n < 0 || (size_t)n >= sizeof(t) - 3)
        return MCP_EINVAL;
    size_t len = (size_t)n;
    if (strchr(t, '.') == NULL && strchr(t, 'e') == NULL) {
        memcpy(t + len, ".0", 3);
        len += 2;
    }
    char *e = strchr(t, 'e');
    if (e != NULL) {
        char *start = e + 1, *end = start + 1;
        if (*start == '-')
            start++;
        while (*end == '0')
            end++;
        if (end != start) {
            memmove(start, end, len - (size_t)(end - t));
            len -= (size_t)(end - start);
        }
    }
    return mcp__buf_append(b, t, len);
}

static int write_integer(mcp__buf *b, json_int_t v)
{
    char t[24];
    char *p = t + sizeof(t);
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    if (v < 0)
        *--p = '-';
    return mcp__buf_append(b, p, (size_t)(t + sizeof(t) - p));
}

/* An object's member, for writing them in key order. */
typedef struct member {
    const char *key;
    size_t len;
    json_t *value;
} member;

/* jansson's order for JSON_SORT_KEYS: the bytes, then the length. */
static int member_cmp(const void *a, const void *b)
{
    const member *x = a, *y = b;
    int c = memcmp(x->key, y->key, x->len < y->len ? x->len : y->len);
    return c != 0 ? c : (x->len > y->len) - (x->len < y->len);
}

static int write_value(mcp__buf *b, const json_t *v, int depth, int sorted);

/* An object's members in key order (sorted): JSON_SORT_KEYS's text. */
static int write_sorted(mcp__buf *b, const json_t *v, int depth)
{
    member some[8], *m = some;
    size_t n = json_object_size(v);
    if (n > sizeof some / sizeof some[0] && (m = malloc(n * sizeof(*m))) == NULL)
        return MCP_ENOMEM;
    size_t k = 0;
    for (void *it = json_object_iter((json_t *)v); it != NULL && k < n;
         it = json_object_iter_next((json_t *)v, it), k++)
        m[k] = (member){json_object_iter_key(it), json_object_iter_key_len(it),
                        json_object_iter_value(it)};
    qsort(m, k, sizeof(*m), member_cmp);
    int rc = mcp__buf_append(b, "{", 1);
    for (size_t i = 0; i < k && rc == MCP_OK; i++) {
        if (i > 0)
            rc = mcp__buf_append(b, ",", 1);
        if (rc == MCP_OK)
            rc = write_string(b, m[i].key, m[i].len);
        if (rc == MCP_OK)
            rc = mcp__buf_append(b, ":", 1);
        if (rc == MCP_OK)
            rc = write_value(b, m[i].value, depth + 1, 1);
    }
    if (rc == MCP_OK)
        rc = mcp__buf_append(b, "}", 1);
    if (m != some)
        free(m);
    return rc;
}

static int write_value(mcp__buf *b, const json_t *v, int depth, int sorted)
{
    if (depth > MAX_DEPTH)
        return MCP_EINVAL;
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        if (sorted)
            return write_sorted(b, v, depth);
        if (mcp__buf_append(b, "{", 1) != MCP_OK)
            return MCP_ENOMEM;
        void *it = json_object_iter((json_t *)v);
        for (int first = 1; it != NULL; it = json_object_iter_next((json_t *)v, it), first = 0) {
            int rc;
            if (!first && mcp__buf_append(b, ",", 1) != MCP_OK)
                return MCP_ENOMEM;
            if ((rc = write_string(b, json_object_iter_key(it), json_object_iter_key_len(it))) !=
                MCP_OK)
                return rc;
            if (mcp__buf_append(b, ":", 1) != MCP_OK)
                return MCP_ENOMEM;
            if ((rc = write_value(b, json_object_iter_value(it), depth + 1, 0)) != MCP_OK)
                return rc;
        }
        return mcp__buf_append(b, "}", 1);
    }
    case JSON_ARRAY: {
        if (mcp__buf_append(b, "[", 1) != MCP_OK)
            return MCP_ENOMEM;
        size_t n = json_array_size(v);
        for (size_t i = 0; i < n; i++) {
            int rc;
            if (i > 0 && mcp__buf_append(b, ",", 1) != MCP_OK)
                return MCP_ENOMEM;
            if ((rc = write_value(b, json_array_get(v, i), depth + 1, sorted)) != MCP_OK)
                return rc;
        }
        return mcp__buf_append(b, "]", 1);
    }
    case JSON_STRING:
        return write_string(b, json_string_value(v), json_string_length(v));
    case JSON_INTEGER:
        return write_integer(b, json_integer_value(v));
    case JSON_REAL:
        return write_real(b, json_real_value(v));
    case JSON_TRUE:
        return mcp__buf_append(b, "true", 4);
    case JSON_FALSE:
        return mcp__buf_append(b, "false", 5);
    case JSON_NULL:
        return mcp__buf_append(b, "null", 4);
    }
    return MCP_EINVAL;
}

int mcp__json_write_str(mcp__buf *b, const char *s, size_t n)
{
    return write_string(b, s, n);
}

int mcp__json_write(mcp__buf *b, const json_t *v)
{
    if (v == NULL)
        return MCP_EINVAL;
    return write_value(b, v, 1, 0);
}

int mcp__json_write_sorted(mcp__buf *b, const json_t *v)
{
    if (v == NULL)
        return MCP_EINVAL;
    return write_value(b, v, 1, 1);
}

int mcp__json_digest_hex(const json_t *v, char out[65])
{
    mcp__buf text = {0};
    int rc = mcp__json_write_sorted(&text, v != NULL ? v : json_null());
    unsigned char d[32];
    if (rc == MCP_OK)
        rc = mcp__sha256(text.data, text.len, d);
    mcp__buf_free(&text);
    if (rc != MCP_OK)
        return rc;
    mcp__hex(d, sizeof d, out);
    return MCP_OK;
}
