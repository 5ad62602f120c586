/*
 * JSON Schema patterns ("pattern", the names of "patternProperties") are
 * ECMA-262 regular expressions. We translate them into POSIX extended regular
 * expressions for the C library's regcomp, an approximation:
 *
 * - Kept: literals, ., [...] and [^...] classes with ranges, \d \D \w \W \s
 *   \S (ASCII only, as in ECMA-262 except \s, which there also takes Unicode
 *   spaces), \b \B, groups, (?:...) and (?<name>...) as plain groups,
 *   alternation, ^ $, the quantifiers * + ? {n} {n,} {n,m}, lazy quantifiers
 *   (*?: the same match or no match as the greedy ones), escapes \t \n \r \f
 *   \v \xHH \uHHHH \u{H...} \cX, and a '{' that begins no quantifier as a
 *   literal. Like ECMA-262 without the m flag, . matches anything but \n and
 *   \r, and a pattern matches anywhere in the string unless anchored.
 * - Refused, which makes the schema invalid: backreferences (\1, \k<name>),
 *   lookahead and lookbehind ((?=, (?!, (?<=, (?<!), \p{...}, NUL, and
 *   patterns too large (MCP__SCHEMA_MAX_PATTERN atoms once counted
 *   repetitions are expanded: regcomp copies a{1000} a thousand times).
 * - Characters: when the program runs in a multibyte locale (MB_CUR_MAX > 1,
 *   taken as UTF-8), regcomp sees characters itself. In the C locale it sees
 *   bytes, so a non-ASCII literal becomes a group of its UTF-8 bytes and . and
 *   negated classes match one whole UTF-8 sequence; there, ranges of non-ASCII
 *   characters and non-ASCII members of negated classes are refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/schema_int.h"
#include "util/util.h"

#define MAX_GROUPS 64
#define MAX_COUNT 10000 /* a bound of a {n,m} quantifier */
#define MAX_EXTRAS 64   /* non-ASCII members and ranges of one class */

/* One UTF-8 sequence (what . and negated classes match in the C locale). */
#define ANY_MULTIBYTE "[\xc0-\xff][\x80-\xbf]*"

typedef struct tr {
    const unsigned char *p;
    size_t i, n;
    mcp__buf out;
    int utf8_locale;
    int oom;
    /* The size estimate: atoms in each open group, the last atom's (what a
     * quantifier repeats; 0 when there is nothing to repeat) and the total. */
    size_t size[MAX_GROUPS + 1];
    size_t last, total;
    int depth;
    char *why;
    size_t why_len;
} tr;

/* A class: ASCII members as a bitmap, others as code point ranges, or all. */
typedef struct cls {
    unsigned char ascii[16];
    int negated;
    int all_multibyte;
    size_t nextra;
    struct {
        uint32_t lo, hi;
    } extra[MAX_EXTRAS];
} cls;

static int refuse(tr *t, const char *what)
{
    snprintf(t->why, t->why_len, "the pattern cannot be used: %s (at offset %zu)", what, t->i);
    return -1;
}

static void emit(tr *t, const void *p, size_t n)
{
    if (mcp__buf_append(&t->out, p, n) != MCP_OK)
        t->oom = 1;
}

static void emits(tr *t, const char *s)
{
    emit(t, s, strlen(s));
}

static int add_atom(tr *t, size_t size)
{
    t->size[t->depth] += size;
    t->total += size;
    t->last = size;
    if (t->total > MCP__SCHEMA_MAX_PATTERN)
        return refuse(t, "too large once its repetitions are expanded");
    return 0;
}

static size_t utf8_encode(uint32_t cp, char *out)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Decodes the UTF-8 sequence at t->i (jansson's strings are valid UTF-8; a
 * stray byte stands for itself). */
static uint32_t utf8_next(tr *t)
{
    const unsigned char *p = t->p + t->i;
    size_t left = t->n - t->i;
    uint32_t cp = p[0];
    size_t len = cp < 0x80 ? 1 : cp >= 0xF0 ? 4 : cp >= 0xE0 ? 3 : cp >= 0xC0 ? 2 : 1;
    if (len > left)
        len = 1;
    if (len > 1) {
        cp &= 0x3F >> (len - 1);
        for (size_t k = 1; k < len; k++)
            cp = (cp << 6) | (p[k] & 0x3F);
    }
    t->i += len;
    return cp;
}

static int emit_literal(tr *t, uint32_t cp)
{
    if (cp < 0x80) {
        char c = (char)cp;
        if (strchr(".[]()*+?{}|^$\\", c) != NULL)
            emit(t, "\\", 1);
        emit(t, &c, 1);
    } else {
        char u[4];
        size_t n = utf8_encode(cp, u);
        if (!t->utf8_locale)
            emit(t, "(", 1);
        emit(t, u, n);
        if (!t->utf8_locale)
            emit(t, ")", 1);
    }
    return add_atom(t, 1);
}

static int hex_value(tr *t, size_t digits, uint32_t *out)
{
    uint32_t v = 0;
    for (size_t k = 0; k < digits; k++, t->i++) {
        if (t->i >= t->n)
            return -1;
        unsigned char c = t->p[t->i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return -1;
        v = v * 16 + (uint32_t)d;
    }
    *out = v;
    return 0;
}

/* \u escapes: \uHHHH (a surrogate pair as two), or \u{H...}. t->i is after the u. */
static int unicode_escape(tr *t, uint32_t *cp)
{
    if (t->i < t->n && t->p[t->i] == '{') {
        t->i++;
        uint32_t v = 0;
        size_t digits = 0;
        while (t->i < t->n && t->p[t->i] != '}') {
            uint32_t d;
            if (hex_value(t, 1, &d) != 0 || ++digits > 6)
                return refuse(t, "a bad \\u{...} escape");
            v = v * 16 + d;
        }
        if (t->i >= t->n || digits == 0 || v > 0x10FFFF)
            return refuse(t, "a bad \\u{...} escape");
        t->i++;
        *cp = v;
    } else if (hex_value(t, 4, cp) != 0) {
        return refuse(t, "a bad \\u escape");
    }
    if (*cp >= 0xD800 && *cp < 0xDC00 && t->i + 6 <= t->n && t->p[t->i] == '\\' &&
        t->p[t->i + 1] == 'u') {
        size_t at = t->i;
        uint32_t low;
        t->i += 2;
        if (hex_value(t, 4, &low) == 0 && low >= 0xDC00 && low < 0xE000) {
            *cp = 0x10000 + ((*cp - 0xD800) << 10) + (low - 0xDC00);
            return 0;
        }
        t->i = at;
    }
    if (*cp >= 0xD800 && *cp < 0xE000)
        return refuse(t, "a lone surrogate");
    return 0;
}

static void cls_set(cls *c, uint32_t lo, uint32_t hi, int *full)
{
    for (uint32_t k = lo; k <= hi && k < 0x80; k++)
        c->ascii[k / 8] |= (unsigned char)(1u << (k % 8));
    if (hi >= 0x80) {
        if (c->nextra == MAX_EXTRAS) {
            *full = 1;
            return;
        }
        c->extra[c->nextra].lo = lo < 0x80 ? 0x80 : lo;
        c->extra[c->nextra].hi = hi;
        c->nextra++;
    }
}

static int cls_has(const cls *c, unsigned k)
{
    return (c->ascii[k / 8] >> (k % 8)) & 1;
}

/* Adds \d \w \s (upper case: their complement) to c. */
static void cls_shorthand(cls *c, char which)
{
    cls one;
    memset(&one, 0, sizeof(one));
    int full = 0;
    switch (which | 0x20) {
    case 'd':
        cls_set(&one, '0', '9', &full);
        break;
    case 'w':
        cls_set(&one, '0', '9', &full);
        cls_set(&one, 'A', 'Z', &full);
        cls_set(&one, 'a', 'z', &full);
        cls_set(&one, '_', '_', &full);
        break;
    default: /* s */
        cls_set(&one, '\t', '\r', &full);
        cls_set(&one, ' ', ' ', &full);
        break;
    }
    int complement = which >= 'A' && which <= 'Z';
    for (unsigned k = 1; k < 0x80; k++)
        if (cls_has(&one, k) != complement)
            c->ascii[k / 8] |= (unsigned char)(1u << (k % 8));
    if (complement)
        c->all_multibyte = 1;
}

/* Writes the members of a POSIX bracket expression for c's ASCII members, with
 * extra (raw text) before a final '-', so that ']' comes first, '-' last and
 * '^' never first. Returns 1 when the class is exactly "^" (then nothing is
 * written: the caller emits \^). */
static int bracket_body(tr *t, const cls *c, const char *extra, int after_caret)
{
    int wrote = after_caret;
    if (cls_has(c, ']')) {
        emit(t, "]", 1);
        wrote = 1;
    }
    for (unsigned k = 1; k < 0x80; k++) {
        if (!cls_has(c, k) || strchr("]^-[", (int)k) != NULL)
            continue;
        unsigned end = k;
        while (end + 1 < 0x80 && cls_has(c, end + 1) && strchr("]^-[", (int)(end + 1)) == NULL)
            end++;
        char run[3] = {(char)k, '-', (char)end};
        if (end == k)
            emit(t, run, 1);
        else if (end == k + 1)
            emit(t, (char[]){(char)k, (char)end}, 2);
        else
            emit(t, run, 3);
        wrote = 1;
        k = end;
    }
    if (cls_has(c, '[')) {
        emit(t, "[", 1);
        wrote = 1;
    }
    int dash = cls_has(c, '-');
    if (cls_has(c, '^')) {
        if (!wrote && dash) {
            emit(t, "-^", 2);
            dash = 0;
        } else if (!wrote && (extra == NULL || extra[0] == '\0')) {
            return 1;
        } else if (!wrote) {
            emits(t, extra);
            emit(t, "^", 1);
            extra = NULL;
        } else {
            emit(t, "^", 1);
        }
    }
    if (extra != NULL)
        emits(t, extra);
    if (dash)
        emit(t, "-", 1);
    return 0;
}

static int emit_class(tr *t, cls *c)
{
    char extra[MAX_EXTRAS * 9 + 16];
    size_t e = 0;
    extra[0] = '\0';
    if (t->utf8_locale) {
        /* regcomp knows characters: hand it the class as it is. */
        if (c->all_multibyte)
            e += (size_t)snprintf(extra + e, sizeof(extra) - e, "%s", "\xc2\x80-\xf4\x8f\xbf\xbf");
        for (size_t k = 0; k < c->nextra; k++) {
            e += utf8_encode(c->extra[k].lo, extra + e);
            if (c->extra[k].hi != c->extra[k].lo) {
                extra[e++] = '-';
                e += utf8_encode(c->extra[k].hi, extra + e);
            }
        }
        extra[e] = '\0';
        emit(t, c->negated ? "[^" : "[", c->negated ? 2 : 1);
        if (bracket_body(t, c, extra, c->negated) == 1) {
            t->out.len--; /* the '[' */
            emit(t, "\\^", 2);
        } else {
            emit(t, "]", 1);
        }
        return add_atom(t, 1);
    }
    if (c->negated) {
        /* Complement it: every ASCII character it left out, and (as long as it
         * named no other) every multibyte one. */
        if (c->nextra != 0)
            return refuse(t, "non-ASCII characters in a negated class (C locale)");
        for (unsigned k = 0; k < 16; k++)
            c->ascii[k] = (unsigned char)~c->ascii[k];
        c->ascii[0] &= (unsigned char)~1u; /* NUL */
        c->all_multibyte = !c->all_multibyte;
        c->negated = 0;
    }
    size_t alternatives = (c->all_multibyte ? 1 : 0) + c->nextra;
    int any_ascii = 0;
    for (unsigned k = 0; k < 16; k++)
        any_ascii |= c->ascii[k] != 0;
    if (!any_ascii && alternatives == 0)
        return refuse(t, "an empty class [] matches nothing");
    if (alternatives != 0)
        emit(t, "(", 1);
    if (any_ascii) {
        emit(t, "[", 1);
        if (bracket_body(t, c, NULL, 0) == 1) {
            t->out.len--;
            emit(t, "\\^", 2);
        } else {
            emit(t, "]", 1);
        }
    }
    const char *sep = any_ascii ? "|" : "";
    if (c->all_multibyte) {
        emits(t, sep);
        emits(t, ANY_MULTIBYTE);
        sep = "|";
    }
    for (size_t k = 0; k < c->nextra; k++) {
        if (c->extra[k].lo != c->extra[k].hi)
            return refuse(t, "a range of non-ASCII characters (C locale)");
        char u[4];
        emits(t, sep);
        emit(t, u, utf8_encode(c->extra[k].lo, u));
        sep = "|";
    }
    if (alternatives != 0)
        emit(t, ")", 1);
    return add_atom(t, 1);
}

/*
 * Reads the escape at t->i (just after the backslash) as one character into
 * *cp, or as a shorthand class into c (then *cp is UINT32_MAX). in_class: \b
 * is a backspace there. Returns 0, 1 for \b \B outside a class (emitted), -1.
 */
static int read_escape(tr *t, int in_class, uint32_t *cp, cls *c)
{
    if (t->i >= t->n)
        return refuse(t, "a backslash at the end");
    unsigned char e = t->p[t->i];
    *cp = UINT32_MAX;
    switch (e) {
    case 'd':
    case 'D':
    case 'w':
    case 'W':
    case 's':
    case 'S':
        t->i++;
        cls_shorthand(c, (char)e);
        return 0;
    case 'b':
    case 'B':
        t->i++;
        if (in_class && e == 'b') {
            *cp = '\b';
            return 0;
        }
        if (in_class)
            return refuse(t, "\\B in a class");
        emits(t, e == 'b' ? "\\b" : "\\B");
        t->last = 0;
        return 1;
    case 't':
        *cp = '\t';
        break;
    case 'n':
        *cp = '\n';
        break;
    case 'r':
        *cp = '\r';
        break;
    case 'f':
        *cp = '\f';
        break;
    case 'v':
        *cp = '\v';
        break;
    case 'x':
        t->i++;
        if (hex_value(t, 2, cp) != 0)
            return refuse(t, "a bad \\x escape");
        return *cp == 0 ? refuse(t, "a NUL character") : 0;
    case 'u':
        t->i++;
        if (unicode_escape(t, cp) != 0)
            return -1;
        return *cp == 0 ? refuse(t, "a NUL character") : 0;
    case 'c':
        if (t->i + 1 < t->n && ((t->p[t->i + 1] | 0x20) >= 'a' && (t->p[t->i + 1] | 0x20) <= 'z')) {
            *cp = t->p[t->i + 1] % 32;
            t->i += 2;
            return 0;
        }
        return refuse(t, "a bad \\c escape");
    case 'k':
        return refuse(t, "backreferences are not supported");
    case 'p':
    case 'P':
        return refuse(t, "Unicode property escapes are not supported");
    default:
        if (e >= '1' && e <= '9')
            return refuse(t, "backreferences are not supported");
        if (e == '0')
            return refuse(t, "a NUL character");
        /* Any other escaped character stands for itself. */
        *cp = utf8_next(t);
        return 0;
    }
    t->i++;
    return 0;
}

/* A class [...] at t->i (on the '['). */
static int parse_class(tr *t)
{
    cls c;
    memset(&c, 0, sizeof(c));
    int full = 0;
    t->i++;
    if (t->i < t->n && t->p[t->i] == '^') {
        c.negated = 1;
        t->i++;
    }
    for (;;) {
        if (t->i >= t->n)
            return refuse(t, "an unclosed class");
        if (t->p[t->i] == ']') {
            t->i++;
            break;
        }
        uint32_t lo, hi;
        if (t->p[t->i] == '\\') {
            t->i++;
            if (read_escape(t, 1, &lo, &c) != 0)
                return -1;
        } else {
            lo = utf8_next(t);
        }
        if (lo == UINT32_MAX)
            continue; /* a shorthand, added already; a '-' after it is a literal */
        hi = lo;
        if (t->i + 1 < t->n && t->p[t->i] == '-' && t->p[t->i + 1] != ']') {
            t->i++;
            if (t->p[t->i] == '\\') {
                t->i++;
                if (read_escape(t, 1, &hi, &c) != 0)
                    return -1;
            } else {
                hi = utf8_next(t);
            }
            if (hi == UINT32_MAX) {
                /* [a-\d]: as in ECMA-262 without the u flag, 'a', '-' and \d. */
                cls_set(&c, '-', '-', &full);
                hi = lo;
            } else if (lo > hi) {
                return refuse(t, "a class range out of order");
            }
        }
        cls_set(&c, lo, hi, &full);
        if (full)
            return refuse(t, "too many non-ASCII members in a class");
    }
    return emit_class(t, &c);
}

/* A quantifier {n}, {n,} or {n,m} at t->i (on the '{'): 1 when it is one (read,
 * *lo and *hi set, hi SIZE_MAX for none), 0 when the '{' is a literal. */
static int read_braces(tr *t, size_t *lo, size_t *hi)
{
    size_t k = t->i + 1, v = 0, digits = 0;
    while (k < t->n && t->p[k] >= '0' && t->p[k] <= '9' && v <= MAX_COUNT)
        v = v * 10 + (size_t)(t->p[k++] - '0'), digits++;
    if (digits == 0 || k >= t->n)
        return 0;
    *lo = v;
    *hi = v;
    if (t->p[k] == ',') {
        k++;
        v = 0;
        digits = 0;
        while (k < t->n && t->p[k] >= '0' && t->p[k] <= '9' && v <= MAX_COUNT)
            v = v * 10 + (size_t)(t->p[k++] - '0'), digits++;
        *hi = digits ? v : SIZE_MAX;
    }
    if (k >= t->n || t->p[k] != '}')
        return 0;
    t->i = k + 1;
    return 1;
}

static int quantifier(tr *t, size_t lo, size_t hi, const char *text, size_t len)
{
    if (t->last == 0)
        return refuse(t, "a quantifier with nothing to repeat");
    if (lo > MAX_COUNT || (hi != SIZE_MAX && hi > MAX_COUNT))
        return refuse(t, "a repetition count above 10000");
    if (hi < lo)
        return refuse(t, "a quantifier {n,m} with m below n");
    emit(t, text, len);
    /* regcomp makes one copy of the repeated atom per counted repetition. */
    size_t copies = hi == SIZE_MAX ? lo + 1 : hi;
    size_t more = copies > 1 ? t->last * (copies - 1) : 0;
    if (t->last != 0 && more / t->last != copies - 1)
        more = SIZE_MAX / 2;
    t->size[t->depth] += more;
    t->total += more;
    t->last = 0;
    if (t->i < t->n && t->p[t->i] == '?')
        t->i++; /* lazy: matches the same strings */
    if (t->total > MCP__SCHEMA_MAX_PATTERN)
        return refuse(t, "too large once its repetitions are expanded");
    return 0;
}

static int open_group(tr *t)
{
    t->i++;
    if (t->i < t->n && t->p[t->i] == '?') {
        const unsigned char *q = t->p + t->i + 1;
        size_t left = t->n - t->i - 1;
        if (left >= 1 && q[0] == ':') {
            t->i += 2;
        } else if (left >= 1 && (q[0] == '=' || q[0] == '!')) {
            return refuse(t, "lookahead is not supported");
        } else if (left >= 2 && q[0] == '<' && (q[1] == '=' || q[1] == '!')) {
            return refuse(t, "lookbehind is not supported");
        } else if (left >= 1 && q[0] == '<') {
            const unsigned char *end = memchr(q, '>', left);
            if (end == NULL || end == q + 1)
                return refuse(t, "a bad group name");
            t->i += (size_t)(end - q) + 2;
        } else {
            return refuse(t, "an unknown (? group");
        }
    }
    if (t->depth == MAX_GROUPS)
        return refuse(t, "groups nested too deeply");
    emit(t, "(", 1);
    t->size[++t->depth] = 0;
    t->last = 0;
    return 0;
}

static int translate(tr *t)
{
    while (t->i < t->n) {
        unsigned char c = t->p[t->i];
        cls shorthand;
        uint32_t cp;
        size_t lo, hi;
        int rc = 0;
        switch (c) {
        case '\\':
            t->i++;
            memset(&shorthand, 0, sizeof(shorthand));
            rc = read_escape(t, 0, &cp, &shorthand);
            if (rc == 0)
                rc = cp == UINT32_MAX ? emit_class(t, &shorthand) : emit_literal(t, cp);
            else if (rc == 1)
                rc = 0;
            break;
        case '.':
            t->i++;
            memset(&shorthand, 0, sizeof(shorthand));
            shorthand.negated = 1;
            shorthand.ascii['\n' / 8] |= 1u << ('\n' % 8);
            shorthand.ascii['\r' / 8] |= 1u << ('\r' % 8);
            rc = emit_class(t, &shorthand);
            break;
        case '[':
            rc = parse_class(t);
            break;
        case '(':
            rc = open_group(t);
            break;
        case ')': {
            if (t->depth == 0)
                return refuse(t, "an unmatched )");
            t->i++;
            emit(t, ")", 1);
            size_t inner = t->size[t->depth--];
            t->size[t->depth] += inner;
            t->last = inner == 0 ? 1 : inner;
            break;
        }
        case '|':
        case '^':
        case '$':
            t->i++;
            emit(t, &c, 1);
            t->last = 0;
            break;
        case '*':
        case '?':
            t->i++;
            rc = quantifier(t, 0, c == '*' ? SIZE_MAX : 1, (const char *)&c, 1);
            break;
        case '+':
            t->i++;
            rc = quantifier(t, 1, SIZE_MAX, "+", 1);
            break;
        case '{': {
            size_t at = t->i;
            if (read_braces(t, &lo, &hi)) {
                rc = quantifier(t, lo, hi, (const char *)t->p + at, t->i - at);
            } else {
                t->i++;
                rc = emit_literal(t, '{');
            }
            break;
        }
        default:
            rc = emit_literal(t, utf8_next(t));
            break;
        }
        if (rc != 0)
            return -1;
    }
    if (t->depth != 0)
        return refuse(t, "an unclosed (");
    return 0;
}

int mcp__schema_regcomp(regex_t *re, const char *pattern, size_t len, char *why, size_t why_len)
{
    tr t;
    memset(&t, 0, sizeof(t));
    t.p = (const unsigned char *)pattern;
    t.n = len;
    t.utf8_locale = MB_CUR_MAX > 1;
    t.why = why;
    t.why_len = why_len;
    if (memchr(pattern, '\0', len) != NULL) {
        snprintf(why, why_len, "the pattern cannot be used: it holds a NUL character");
        return -1;
    }
    int rc = translate(&t);
    if (rc == 0 && (t.oom || mcp__buf_append(&t.out, "", 1) != MCP_OK)) {
        snprintf(why, why_len, "out of memory");
        rc = -1;
    }
    if (rc == 0) {
        int err = regcomp(re, t.out.data, REG_EXTENDED | REG_NOSUB);
        if (err != 0) {
            char text[128];
            regerror(err, re, text, sizeof(text));
            snprintf(why, why_len, "the pattern does not compile: %s", text);
            rc = -1;
        }
    }
    mcp__buf_free(&t.out);
    return rc;
}

int mcp__schema_regmatch(const regex_t *re, const char *s, size_t len)
{
    regmatch_t m[1];
    m[0].rm_so = 0;
    m[0].rm_eo = (regoff_t)len;
    return regexec(re, s, 1, m, REG_STARTEND) == 0;
}
