/* SPDX-License-Identifier: MIT */
/*
 * JSON Schema patterns ("pattern", the names of "patternProperties") are
 * ECMA-262 regular expressions. We compile them into a small NFA program and
 * run it as Thompson's simulation: every live state advances one character
 * at a time, so a match costs at most (string length x program size) steps
 * and memory proportional to the program, whatever the pattern. The C
 * library's regexec is no such thing: glibc takes quadratic time on
 * ".*[0-9]{4}$" and builds a 256-entry table per new DFA state on
 * "^(a|b)*a(a|b){40}$", minutes and hundreds of megabytes for a string that
 * fits one request, and cannot be interrupted.
 *
 * Matching is on Unicode code points (ECMA-262 with the u flag), search
 * semantics (a match anywhere unless anchored), no flags:
 * - Supported: literals, . (anything but \n \r \u2028 \u2029), [...] and [^...]
 *   with ranges, \d \D \w \W (ASCII, as ECMA-262 has them) \s \S (with the
 *   Unicode spaces), \b \B, ^ $, groups, (?:...) and (?<name>...), |, the
 *   quantifiers * + ? {n} {n,} {n,m} (lazy ones too: the same strings match),
 *   escapes \t \n \r \f \v \0 \xHH \uHHHH \u{H...} \cX and any escaped
 *   punctuation, and a '{' or '}' that is no quantifier as a literal.
 * - Refused, which makes the schema invalid: backreferences (\1, \k<name>),
 *   lookahead and lookbehind, \p{...}, and patterns whose program would pass
 *   MCP__SCHEMA_MAX_PATTERN instructions once counted repetitions are
 *   expanded (a{1000} is a thousand copies).
 *
 * A tool's patterns are the same on every call: the first
 * MCP__SCHEMA_PATTERN_CACHE patterns a process meets stay compiled (programs
 * are read-only once built, so threads share them); others are compiled on
 * each use.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema/schema_int.h"

#define MAX_GROUPS 64 /* groups nested in one another */
#define MAX_COUNT 10000
#define NO_CP UINT32_MAX

/* ---- The program ---- */

enum {
    OP_CHAR,  /* x: the code point */
    OP_CLASS, /* x: the class */
    OP_SPLIT, /* go on at x and at y */
    OP_JMP,   /* go on at x */
    OP_BOL,
    OP_EOL,
    OP_WORDB,
    OP_NWORDB,
    OP_MATCH,
};

typedef struct inst {
    uint32_t op, x, y;
} inst;

typedef struct range {
    uint32_t lo, hi;
} range;

typedef struct cls {
    uint64_t ascii[2];
    uint32_t first, count; /* its non-ASCII ranges in the program's table */
    int negated;
} cls;

struct mcp__regex {
    inst *code;
    size_t len;
    cls *classes;
    size_t nclasses;
    range *ranges;
    size_t nranges;
    int anchored; /* begins with ^: only the start of the string can match */
};

/* ---- Parsing into a tree ---- */

enum { N_EMPTY, N_CHAR, N_CLASS, N_CAT, N_ALT, N_REPEAT, N_BOL, N_EOL, N_WORDB, N_NWORDB };

typedef struct node {
    int type;
    uint32_t a, b; /* CHAR: a the code point; CLASS: a the class; REPEAT: a min, b max */
    int child;     /* CAT, ALT: the first; REPEAT: the repeated */
    int next;      /* the next child of the same CAT or ALT */
} node;

typedef struct parser {
    const unsigned char *p;
    size_t i, n;
    node *nodes;
    size_t nnodes, capnodes;
    mcp__regex *re;
    size_t capclasses, capranges;
    int depth;
    int oom;
    char *why;
    size_t why_len;
} parser;

#define INF UINT32_MAX

static int refuse(parser *ps, const char *what)
{
    snprintf(ps->why, ps->why_len, "the pattern cannot be used: %s (at offset %zu)", what, ps->i);
    return -1;
}

static int grow(void **items, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t cap2 = *cap ? *cap * 2 : 16;
    while (cap2 < need)
        cap2 *= 2;
    void *p = realloc(*items, cap2 * size);
    if (p == NULL)
        return -1;
    *items = p;
    *cap = cap2;
    return 0;
}

static int new_node(parser *ps, int type, uint32_t a, uint32_t b)
{
    if (grow((void **)&ps->nodes, &ps->capnodes, ps->nnodes + 1, sizeof(node)) != 0) {
        ps->oom = 1;
        snprintf(ps->why, ps->why_len, "out of memory");
        return -1;
    }
    ps->nodes[ps->nnodes] = (node){type, a, b, -1, -1};
    return (int)ps->nnodes++;
}

static void append_child(parser *ps, int parent, int *last, int child)
{
    if (*last < 0)
        ps->nodes[parent].child = child;
    else
        ps->nodes[*last].next = child;
    *last = child;
}

static int hex(unsigned char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* Decodes the UTF-8 sequence at s[*i] (a stray byte stands for itself). */
static uint32_t utf8_next(const unsigned char *s, size_t *i, size_t n)
{
    uint32_t cp = s[*i];
    size_t len = cp < 0x80 ? 1 : cp >= 0xF0 ? 4 : cp >= 0xE0 ? 3 : cp >= 0xC0 ? 2 : 1;
    if (len > n - *i)
        len = 1;
    for (size_t k = 1; k < len; k++)
        if ((s[*i + k] & 0xC0) != 0x80)
            len = 1;
    if (len > 1) {
        cp &= 0x3Fu >> (len - 1);
        for (size_t k = 1; k < len; k++)
            cp = (cp << 6) | (s[*i + k] & 0x3F);
    }
    *i += len;
    return cp;
}

static int hex_digits(parser *ps, size_t digits, uint32_t *out)
{
    uint32_t v = 0;
    for (size_t k = 0; k < digits; k++, ps->i++) {
        if (ps->i >= ps->n || hex(ps->p[ps->i]) < 0)
            return -1;
        v = v * 16 + (uint32_t)hex(ps->p[ps->i]);
    }
    *out = v;
    return 0;
}

/* \u escapes, ps->i after the u: \uHHHH (a surrogate pair as two), or \u{H...}. */
static int unicode_escape(parser *ps, uint32_t *cp)
{
    if (ps->i < ps->n && ps->p[ps->i] == '{') {
        uint32_t v = 0;
        size_t digits = 0;
        for (ps->i++; ps->i < ps->n && ps->p[ps->i] != '}'; ps->i++) {
            if (hex(ps->p[ps->i]) < 0 || ++digits > 6)
                return refuse(ps, "a bad \\u{...} escape");
            v = v * 16 + (uint32_t)hex(ps->p[ps->i]);
        }
        if (ps->i >= ps->n || digits == 0 || v > 0x10FFFF)
            return refuse(ps, "a bad \\u{...} escape");
        ps->i++;
        *cp = v;
        return 0;
    }
    if (hex_digits(ps, 4, cp) != 0)
        return refuse(ps, "a bad \\u escape");
    if (*cp >= 0xD800 && *cp < 0xDC00 && ps->i + 6 <= ps->n && ps->p[ps->i] == '\\' &&
        ps->p[ps->i + 1] == 'u') {
        size_t at = ps->i;
        uint32_t low;
        ps->i += 2;
        if (hex_digits(ps, 4, &low) == 0 && low >= 0xDC00 && low < 0xE000) {
            *cp = 0x10000 + ((*cp - 0xD800) << 10) + (low - 0xDC00);
            return 0;
        }
        ps->i = at;
    }
    return 0;
}

/* ---- Classes ---- */

static int new_class(parser *ps, int negated)
{
    mcp__regex *re = ps->re;
    if (grow((void **)&re->classes, &ps->capclasses, re->nclasses + 1, sizeof(cls)) != 0) {
        ps->oom = 1;
        snprintf(ps->why, ps->why_len, "out of memory");
        return -1;
    }
    re->classes[re->nclasses] = (cls){{0, 0}, (uint32_t)re->nranges, 0, negated};
    return (int)re->nclasses++;
}

/* Adds lo..hi to the class being built (the last one). */
static int class_add(parser *ps, uint32_t lo, uint32_t hi)
{
    mcp__regex *re = ps->re;
    cls *c = &re->classes[re->nclasses - 1];
    for (uint32_t k = lo; k <= hi && k < 0x80; k++)
        c->ascii[k / 64] |= (uint64_t)1 << (k % 64);
    if (hi < 0x80)
        return 0;
    if (grow((void **)&re->ranges, &ps->capranges, re->nranges + 1, sizeof(range)) != 0) {
        ps->oom = 1;
        snprintf(ps->why, ps->why_len, "out of memory");
        return -1;
    }
    re->ranges[re->nranges++] = (range){lo < 0x80 ? 0x80 : lo, hi};
    c->count++;
    return 0;
}

/* ECMA-262's \s: WhiteSpace and LineTerminator. */
static const range spaces[] = {
    {0x09, 0x0D},     {0x20, 0x20},     {0xA0, 0xA0},     {0x1680, 0x1680}, {0x2000, 0x200A},
    {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000}, {0xFEFF, 0xFEFF}};
static const range digits[] = {{'0', '9'}};
static const range word[] = {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};

/* Adds \d \w \s to the class being built; upper case: what they leave out. */
static int class_shorthand(parser *ps, char which)
{
    const range *set = digits;
    size_t n = 1;
    if ((which | 0x20) == 'w')
        set = word, n = sizeof(word) / sizeof(word[0]);
    else if ((which | 0x20) == 's')
        set = spaces, n = sizeof(spaces) / sizeof(spaces[0]);
    if (which >= 'a') {
        for (size_t k = 0; k < n; k++)
            if (class_add(ps, set[k].lo, set[k].hi) != 0)
                return -1;
        return 0;
    }
    /* The complement: the gaps between the (sorted) ranges. */
    uint32_t from = 0;
    for (size_t k = 0; k < n; k++) {
        if (set[k].lo > from && class_add(ps, from, set[k].lo - 1) != 0)
            return -1;
        from = set[k].hi + 1;
    }
    return class_add(ps, from, 0x10FFFF);
}

/*
 * Reads the escape at ps->i (after the backslash) as one character (*cp), or
 * as a shorthand added to the class being built (*cp NO_CP; outside a class
 * the caller makes that class first), or as an assertion (*assertion, outside
 * a class). Returns 0 or -1.
 */
static int read_escape(parser *ps, int in_class, uint32_t *cp, int *assertion)
{
    if (ps->i >= ps->n)
        return refuse(ps, "a backslash at the end");
    unsigned char e = ps->p[ps->i++];
    *cp = NO_CP;
    switch (e) {
    case 'd':
    case 'D':
    case 'w':
    case 'W':
    case 's':
    case 'S':
        return class_shorthand(ps, (char)e);
    case 'b':
        if (in_class) {
            *cp = '\b';
            return 0;
        }
        *assertion = N_WORDB;
        return 0;
    case 'B':
        if (in_class)
            return refuse(ps, "\\B in a class");
        *assertion = N_NWORDB;
        return 0;
    case 't':
        *cp = '\t';
        return 0;
    case 'n':
        *cp = '\n';
        return 0;
    case 'r':
        *cp = '\r';
        return 0;
    case 'f':
        *cp = '\f';
        return 0;
    case 'v':
        *cp = '\v';
        return 0;
    case 'x':
        return hex_digits(ps, 2, cp) == 0 ? 0 : refuse(ps, "a bad \\x escape");
    case 'u':
        return unicode_escape(ps, cp);
    case 'c':
        if (ps->i < ps->n && (ps->p[ps->i] | 0x20) >= 'a' && (ps->p[ps->i] | 0x20) <= 'z') {
            *cp = ps->p[ps->i++] % 32;
            return 0;
        }
        return refuse(ps, "a bad \\c escape");
    case '0':
        if (ps->i < ps->n && ps->p[ps->i] >= '0' && ps->p[ps->i] <= '9')
            return refuse(ps, "backreferences are not supported");
        *cp = 0;
        return 0;
    case 'k':
        return refuse(ps, "backreferences are not supported");
    case 'p':
    case 'P':
        return refuse(ps, "Unicode property escapes are not supported");
    default:
        if (e >= '1' && e <= '9')
            return refuse(ps, "backreferences are not supported");
        /* Any other escaped character stands for itself. */
        ps->i--;
        *cp = utf8_next(ps->p, &ps->i, ps->n);
        return 0;
    }
}

/* A class [...] at ps->i (after the '['). */
static int parse_class(parser *ps)
{
    int negated = ps->i < ps->n && ps->p[ps->i] == '^';
    if (negated)
        ps->i++;
    int c = new_class(ps, negated);
    if (c < 0)
        return -1;
    for (;;) {
        if (ps->i >= ps->n)
            return refuse(ps, "an unclosed class");
        if (ps->p[ps->i] == ']') {
            ps->i++;
            break;
        }
        uint32_t lo, hi;
        int assertion = -1;
        if (ps->p[ps->i] == '\\') {
            ps->i++;
            if (read_escape(ps, 1, &lo, &assertion) != 0)
                return -1;
        } else {
            lo = utf8_next(ps->p, &ps->i, ps->n);
        }
        if (lo == NO_CP)
            continue; /* a shorthand, added already; a '-' after it is a literal */
        hi = lo;
        if (ps->i + 1 < ps->n && ps->p[ps->i] == '-' && ps->p[ps->i + 1] != ']') {
            ps->i++;
            if (ps->p[ps->i] == '\\') {
                ps->i++;
                if (read_escape(ps, 1, &hi, &assertion) != 0)
                    return -1;
            } else {
                hi = utf8_next(ps->p, &ps->i, ps->n);
            }
            if (hi == NO_CP) {
                /* [a-\d]: as in ECMA-262 without the u flag, 'a', '-' and \d. */
                if (class_add(ps, '-', '-') != 0)
                    return -1;
                hi = lo;
            } else if (lo > hi) {
                return refuse(ps, "a class range out of order");
            }
        }
        if (class_add(ps, lo, hi) != 0)
            return -1;
    }
    return new_node(ps, N_CLASS, (uint32_t)c, 0);
}

/* ---- The grammar ---- */

static int parse_alt(parser *ps);

static int parse_group(parser *ps)
{
    if (ps->i < ps->n && ps->p[ps->i] == '?') {
        const unsigned char *q = ps->p + ps->i + 1;
        size_t left = ps->n - ps->i - 1;
        if (left >= 1 && q[0] == ':') {
            ps->i += 2;
        } else if (left >= 1 && (q[0] == '=' || q[0] == '!')) {
            return refuse(ps, "lookahead is not supported");
        } else if (left >= 2 && q[0] == '<' && (q[1] == '=' || q[1] == '!')) {
            return refuse(ps, "lookbehind is not supported");
        } else if (left >= 1 && q[0] == '<') {
            const unsigned char *end = memchr(q, '>', left);
            if (end == NULL || end == q + 1)
                return refuse(ps, "a bad group name");
            ps->i += (size_t)(end - q) + 2;
        } else {
            return refuse(ps, "an unknown (? group");
        }
    }
    if (++ps->depth > MAX_GROUPS)
        return refuse(ps, "groups nested too deeply");
    int inner = parse_alt(ps);
    ps->depth--;
    if (inner < 0)
        return -1;
    if (ps->i >= ps->n || ps->p[ps->i] != ')')
        return refuse(ps, "an unclosed (");
    ps->i++;
    return inner;
}

/* A quantifier {n}, {n,} or {n,m} at ps->i (on the '{'): 1 when it is one (read),
 * 0 when the '{' is a literal. */
static int read_braces(parser *ps, uint32_t *lo, uint32_t *hi)
{
    size_t k = ps->i + 1, digits = 0;
    uint32_t v = 0;
    for (; k < ps->n && ps->p[k] >= '0' && ps->p[k] <= '9'; k++, digits++)
        if (v <= MAX_COUNT) /* past it, the count is refused whatever it is */
            v = v * 10 + (uint32_t)(ps->p[k] - '0');
    if (digits == 0 || k >= ps->n)
        return 0;
    *lo = *hi = v;
    if (ps->p[k] == ',') {
        k++;
        v = 0;
        digits = 0;
        for (; k < ps->n && ps->p[k] >= '0' && ps->p[k] <= '9'; k++, digits++)
            if (v <= MAX_COUNT)
                v = v * 10 + (uint32_t)(ps->p[k] - '0');
        *hi = digits ? v : INF;
    }
    if (k >= ps->n || ps->p[k] != '}')
        return 0;
    ps->i = k + 1;
    return 1;
}

static int parse_atom(parser *ps)
{
    unsigned char c = ps->p[ps->i];
    uint32_t cp, lo, hi;
    int assertion = -1;
    switch (c) {
    case '(':
        ps->i++;
        return parse_group(ps);
    case '[':
        ps->i++;
        return parse_class(ps);
    case '.': {
        ps->i++;
        int k = new_class(ps, 1);
        if (k < 0 || class_add(ps, '\n', '\n') != 0 || class_add(ps, '\r', '\r') != 0 ||
            class_add(ps, 0x2028, 0x2029) != 0)
            return -1;
        return new_node(ps, N_CLASS, (uint32_t)k, 0);
    }
    case '^':
        ps->i++;
        return new_node(ps, N_BOL, 0, 0);
    case '$':
        ps->i++;
        return new_node(ps, N_EOL, 0, 0);
    case '*':
    case '+':
    case '?':
        return refuse(ps, "a quantifier with nothing to repeat");
    case '{': {
        size_t at = ps->i;
        if (read_braces(ps, &lo, &hi)) {
            ps->i = at;
            return refuse(ps, "a quantifier with nothing to repeat");
        }
        ps->i++;
        return new_node(ps, N_CHAR, '{', 0);
    }
    case '\\': {
        ps->i++;
        /* A shorthand outside a class is a class of its own, made first. */
        int shorthand =
            ps->i < ps->n && ps->p[ps->i] != '\0' && strchr("dDwWsS", ps->p[ps->i]) != NULL;
        int k = shorthand ? new_class(ps, 0) : 0;
        if (k < 0 || read_escape(ps, 0, &cp, &assertion) != 0)
            return -1;
        if (assertion >= 0)
            return new_node(ps, assertion, 0, 0);
        if (shorthand)
            return new_node(ps, N_CLASS, (uint32_t)k, 0);
        return new_node(ps, N_CHAR, cp, 0);
    }
    default:
        return new_node(ps, N_CHAR, utf8_next(ps->p, &ps->i, ps->n), 0);
    }
}

static int parse_quantified(parser *ps)
{
    int atom = parse_atom(ps);
    if (atom < 0 || ps->i >= ps->n)
        return atom;
    uint32_t lo, hi;
    unsigned char c = ps->p[ps->i];
    if (c == '*' || c == '+' || c == '?') {
        ps->i++;
        lo = c == '+' ? 1 : 0;
        hi = c == '?' ? 1 : INF;
    } else if (c != '{' || !read_braces(ps, &lo, &hi)) {
        return atom;
    }
    int type = ps->nodes[atom].type;
    if (type == N_BOL || type == N_EOL || type == N_WORDB || type == N_NWORDB)
        return refuse(ps, "a quantifier on an assertion");
    if (lo > MAX_COUNT || (hi != INF && hi > MAX_COUNT))
        return refuse(ps, "a repetition count above 10000");
    if (hi < lo)
        return refuse(ps, "a quantifier {n,m} with m below n");
    if (ps->i < ps->n && ps->p[ps->i] == '?')
        ps->i++; /* lazy: matches the same strings */
    if (ps->i < ps->n && strchr("*+?", ps->p[ps->i]) != NULL)
        return refuse(ps, "a quantifier with nothing to repeat");
    if (ps->i < ps->n && ps->p[ps->i] == '{') {
        size_t at = ps->i;
        uint32_t a, b;
        if (read_braces(ps, &a, &b)) {
            ps->i = at;
            return refuse(ps, "a quantifier with nothing to repeat");
        }
    }
    int r = new_node(ps, N_REPEAT, lo, hi);
    if (r >= 0)
        ps->nodes[r].child = atom;
    return r;
}

static int parse_cat(parser *ps)
{
    int cat = new_node(ps, N_CAT, 0, 0), last = -1;
    if (cat < 0)
        return -1;
    while (ps->i < ps->n && ps->p[ps->i] != '|' && ps->p[ps->i] != ')') {
        int q = parse_quantified(ps);
        if (q < 0)
            return -1;
        append_child(ps, cat, &last, q);
    }
    return cat;
}

static int parse_alt(parser *ps)
{
    int first = parse_cat(ps);
    if (first < 0 || ps->i >= ps->n || ps->p[ps->i] != '|')
        return first;
    int alt = new_node(ps, N_ALT, 0, 0), last = -1;
    if (alt < 0)
        return -1;
    append_child(ps, alt, &last, first);
    while (ps->i < ps->n && ps->p[ps->i] == '|') {
        ps->i++;
        int next = parse_cat(ps);
        if (next < 0)
            return -1;
        append_child(ps, alt, &last, next);
    }
    return alt;
}

/* ---- Code ---- */

/* The instructions node n takes, or more than MCP__SCHEMA_MAX_PATTERN. */
static size_t code_size(const parser *ps, int n)
{
    const node *nd = &ps->nodes[n];
    size_t total = 0, k = 0;
    switch (nd->type) {
    case N_EMPTY:
        return 0;
    case N_CAT:
    case N_ALT:
        for (int c = nd->child; c >= 0; c = ps->nodes[c].next, k++) {
            total += code_size(ps, c);
            if (total > MCP__SCHEMA_MAX_PATTERN)
                return total;
        }
        return total + (nd->type == N_ALT ? 2 * (k - 1) : 0);
    case N_REPEAT: {
        size_t c = code_size(ps, nd->child);
        if (c > MCP__SCHEMA_MAX_PATTERN)
            return c;
        size_t copies = nd->b == INF ? (nd->a == 0 ? 1 : nd->a) : nd->b;
        if (c != 0 && copies > (MCP__SCHEMA_MAX_PATTERN + 1) / c)
            return MCP__SCHEMA_MAX_PATTERN + 1;
        return copies * c + (nd->b == INF ? (nd->a == 0 ? 2 : 1) : nd->b - nd->a);
    }
    default:
        return 1;
    }
}

static size_t emit(mcp__regex *re, size_t pc, uint32_t op, uint32_t x, uint32_t y)
{
    re->code[pc] = (inst){op, x, y};
    return pc + 1;
}

/* Writes node n's code at pc; returns the pc after it. */
static size_t gen(const parser *ps, mcp__regex *re, int n, size_t pc)
{
    const node *nd = &ps->nodes[n];
    switch (nd->type) {
    case N_EMPTY:
        return pc;
    case N_CHAR:
        return emit(re, pc, OP_CHAR, nd->a, 0);
    case N_CLASS:
        return emit(re, pc, OP_CLASS, nd->a, 0);
    case N_BOL:
        return emit(re, pc, OP_BOL, 0, 0);
    case N_EOL:
        return emit(re, pc, OP_EOL, 0, 0);
    case N_WORDB:
        return emit(re, pc, OP_WORDB, 0, 0);
    case N_NWORDB:
        return emit(re, pc, OP_NWORDB, 0, 0);
    case N_CAT:
        for (int c = nd->child; c >= 0; c = ps->nodes[c].next)
            pc = gen(ps, re, c, pc);
        return pc;
    case N_ALT: {
        /* SPLIT a, next; a; JMP end; next: SPLIT b, next2; b; JMP end; ... z; end: */
        size_t jumps[64], njumps = 0, *far = jumps;
        size_t count = 0;
        for (int c = nd->child; c >= 0; c = ps->nodes[c].next)
            count++;
        if (count > 64 && (far = malloc(count * sizeof(size_t))) == NULL)
            return SIZE_MAX;
        for (int c = nd->child; c >= 0 && pc != SIZE_MAX; c = ps->nodes[c].next) {
            if (ps->nodes[c].next < 0) {
                pc = gen(ps, re, c, pc);
                break;
            }
            size_t split = pc;
            pc = gen(ps, re, c, pc + 1);
            if (pc == SIZE_MAX)
                break;
            far[njumps++] = pc;
            pc++;
            re->code[split] = (inst){OP_SPLIT, (uint32_t)(split + 1), (uint32_t)pc};
        }
        for (size_t k = 0; k < njumps && pc != SIZE_MAX; k++)
            re->code[far[k]] = (inst){OP_JMP, (uint32_t)pc, 0};
        if (far != jumps)
            free(far);
        return pc;
    }
    default: { /* N_REPEAT */
        uint32_t min = nd->a, max = nd->b;
        for (uint32_t k = 0; k + (max == INF && min > 0 ? 1 : 0) < min && pc != SIZE_MAX; k++)
            pc = gen(ps, re, nd->child, pc);
        if (pc == SIZE_MAX)
            return pc;
        if (max == INF && min == 0) {
            /* L: SPLIT body, out; body; JMP L; out: */
            size_t loop = pc;
            pc = gen(ps, re, nd->child, pc + 1);
            if (pc == SIZE_MAX)
                return pc;
            pc = emit(re, pc, OP_JMP, (uint32_t)loop, 0);
            re->code[loop] = (inst){OP_SPLIT, (uint32_t)(loop + 1), (uint32_t)pc};
        } else if (max == INF) {
            /* The last copy loops: body: ...; SPLIT body, out; out: */
            size_t body = pc;
            pc = gen(ps, re, nd->child, pc);
            if (pc == SIZE_MAX)
                return pc;
            pc = emit(re, pc, OP_SPLIT, (uint32_t)body, (uint32_t)(pc + 1));
        } else {
            /* Each optional copy: SPLIT body, out; body; out: */
            for (uint32_t k = min; k < max && pc != SIZE_MAX; k++) {
                size_t split = pc;
                pc = gen(ps, re, nd->child, pc + 1);
                if (pc != SIZE_MAX)
                    re->code[split] = (inst){OP_SPLIT, (uint32_t)(split + 1), (uint32_t)pc};
            }
        }
        return pc;
    }
    }
}

void mcp__schema_regex_free(mcp__regex *re)
{
    if (re == NULL)
        return;
    free(re->code);
    free(re->classes);
    free(re->ranges);
    free(re);
}

int mcp__schema_regex_compile(const char *pattern, size_t len, mcp__regex **out, char *why,
                              size_t why_len)
{
    *out = NULL;
    parser ps;
    memset(&ps, 0, sizeof(ps));
    ps.p = (const unsigned char *)pattern;
    ps.n = len;
    ps.why = why;
    ps.why_len = why_len;
    if (len > 4 * (size_t)MCP__SCHEMA_MAX_PATTERN) {
        snprintf(why, why_len, "the pattern cannot be used: longer than %d bytes",
                 4 * MCP__SCHEMA_MAX_PATTERN);
        return -1;
    }
    if ((ps.re = calloc(1, sizeof(*ps.re))) == NULL) {
        snprintf(why, why_len, "out of memory");
        return -1;
    }
    int root = parse_alt(&ps);
    if (root >= 0 && ps.i < ps.n) /* stopped at a ')' */
        root = refuse(&ps, "an unmatched )");
    size_t size = root >= 0 ? code_size(&ps, root) : 0;
    if (root >= 0 && size > MCP__SCHEMA_MAX_PATTERN) {
        snprintf(why, why_len,
                 "the pattern cannot be used: more than %d instructions once its repetitions "
                 "are expanded",
                 MCP__SCHEMA_MAX_PATTERN);
        root = -1;
    }
    mcp__regex *re = ps.re;
    if (root >= 0 && (re->code = malloc((size + 1) * sizeof(inst))) == NULL) {
        snprintf(why, why_len, "out of memory");
        root = -1;
    }
    if (root >= 0) {
        size_t end = gen(&ps, re, root, 0);
        if (end != size) {
            snprintf(why, why_len, end == SIZE_MAX ? "out of memory" : "pattern compiler error");
            root = -1;
        } else {
            re->code[end] = (inst){OP_MATCH, 0, 0};
            re->len = end + 1;
            re->anchored = re->code[0].op == OP_BOL;
        }
    }
    free(ps.nodes);
    if (root < 0) {
        mcp__schema_regex_free(re);
        return -1;
    }
    *out = re;
    return 0;
}

/* ---- Matching ---- */

static int class_has(const mcp__regex *re, const cls *c, uint32_t cp)
{
    int in = 0;
    if (cp < 0x80) {
        in = (int)((c->ascii[cp / 64] >> (cp % 64)) & 1);
    } else {
        for (uint32_t k = 0; k < c->count && !in; k++)
            in = cp >= re->ranges[c->first + k].lo && cp <= re->ranges[c->first + k].hi;
    }
    return in != c->negated;
}

static int is_word(uint32_t cp)
{
    return cp != NO_CP && cp < 0x80 &&
           ((cp | 0x20) >= 'a' && (cp | 0x20) <= 'z' ? 1 : (cp >= '0' && cp <= '9') || cp == '_');
}

typedef struct sim {
    const mcp__regex *re;
    uint32_t *mark, *stack, *list[2];
    size_t count[2];
    uint32_t generation;
    size_t work;
} sim;

/* Adds pc and what it leads to without reading (SPLIT, JMP, assertions that hold
 * between prev and next) to list l; returns 1 when MATCH is reached. */
static int add(sim *s, int l, uint32_t pc, uint32_t prev, uint32_t next)
{
    size_t top = 0;
    s->stack[top++] = pc;
    while (top > 0) {
        pc = s->stack[--top];
        if (s->mark[pc] == s->generation)
            continue;
        s->mark[pc] = s->generation;
        s->work++;
        const inst *in = &s->re->code[pc];
        switch (in->op) {
        case OP_MATCH:
            return 1;
        case OP_JMP:
            s->stack[top++] = in->x;
            break;
        case OP_SPLIT:
            s->stack[top++] = in->y;
            s->stack[top++] = in->x;
            break;
        case OP_BOL:
            if (prev == NO_CP)
                s->stack[top++] = pc + 1;
            break;
        case OP_EOL:
            if (next == NO_CP)
                s->stack[top++] = pc + 1;
            break;
        case OP_WORDB:
        case OP_NWORDB:
            if ((is_word(prev) != is_word(next)) == (in->op == OP_WORDB))
                s->stack[top++] = pc + 1;
            break;
        default:
            s->list[l][s->count[l]++] = pc;
            break;
        }
    }
    return 0;
}

int mcp__schema_regex_match(const mcp__regex *re, const char *str, size_t len, size_t *budget)
{
    sim s = {.re = re};
    uint32_t small[5 * 64];
    uint32_t *mem = small;
    /* mark, two lists, and a stack (each pc pushed at most twice per step). */
    if (re->len > 64 && (mem = malloc(5 * re->len * sizeof(uint32_t))) == NULL)
        return -1;
    memset(mem, 0, re->len * sizeof(uint32_t));
    s.mark = mem;
    s.list[0] = mem + re->len;
    s.list[1] = mem + 2 * re->len;
    s.stack = mem + 3 * re->len;
    const unsigned char *p = (const unsigned char *)str;
    size_t i = 0, limit = *budget;
    uint32_t prev = NO_CP, cur = len > 0 ? utf8_next(p, &i, len) : NO_CP;
    int cl = 0, matched = 0, over = 0;
    s.generation = 1;
    for (;;) {
        /* Search: a match may start here too (unless anchored and past the start). */
        if ((!re->anchored || prev == NO_CP) && add(&s, cl, 0, prev, cur)) {
            matched = 1;
            break;
        }
        if (cur == NO_CP || (s.count[cl] == 0 && re->anchored))
            break;
        uint32_t next = i < len ? utf8_next(p, &i, len) : NO_CP;
        int nl = 1 - cl;
        s.count[nl] = 0;
        if (++s.generation == 0) {
            memset(s.mark, 0, re->len * sizeof(uint32_t));
            s.generation = 1;
        }
        for (size_t k = 0; k < s.count[cl] && !matched; k++) {
            const inst *in = &re->code[s.list[cl][k]];
            int ok = in->op == OP_CHAR ? in->x == cur : class_has(re, &re->classes[in->x], cur);
            s.work++;
            if (ok && add(&s, nl, s.list[cl][k] + 1, cur, next))
                matched = 1;
        }
        if (matched)
            break;
        if (s.work > limit) {
            over = 1;
            break;
        }
        prev = cur;
        cur = next;
        cl = nl;
    }
    if (mem != small)
        free(mem);
    *budget = s.work >= limit ? 0 : limit - s.work;
    return over ? -2 : matched;
}

/* ---- The process's compiled patterns ---- */

typedef struct cached {
    char *pattern;
    size_t len;
    mcp__regex *re;
} cached;

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static cached cache[MCP__SCHEMA_PATTERN_CACHE];
static size_t cache_len; /* entries are added, never removed */

static mcp__regex *cache_find(const char *pattern, size_t len)
{
    for (size_t i = 0; i < cache_len; i++)
        if (cache[i].len == len && memcmp(cache[i].pattern, pattern, len) == 0)
            return cache[i].re;
    return NULL;
}

int mcp__schema_pattern_match(const char *pattern, size_t len, const char *s, size_t slen,
                              size_t *budget, char *why, size_t why_len)
{
    pthread_mutex_lock(&cache_lock);
    mcp__regex *re = cache_find(pattern, len);
    pthread_mutex_unlock(&cache_lock);
    int cached_one = re != NULL;
    if (re == NULL && mcp__schema_regex_compile(pattern, len, &re, why, why_len) != 0)
        return -1;
    int m = mcp__schema_regex_match(re, s, slen, budget);
    if (m == -1)
        snprintf(why, why_len, "out of memory");
    if (!cached_one) {
        char *copy = malloc(len + 1);
        pthread_mutex_lock(&cache_lock);
        /* Another thread may have added it meanwhile: then this copy goes. */
        if (copy != NULL && cache_find(pattern, len) == NULL &&
            cache_len < MCP__SCHEMA_PATTERN_CACHE) {
            memcpy(copy, pattern, len);
            copy[len] = '\0';
            cache[cache_len++] = (cached){copy, len, re};
            re = NULL;
            copy = NULL;
        }
        pthread_mutex_unlock(&cache_lock);
        free(copy);
        mcp__schema_regex_free(re);
    }
    return m;
}
