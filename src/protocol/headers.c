/*
 * Request metadata header values (see headers.h).
 */
#include <stdlib.h>
#include <string.h>

#include "protocol/headers.h"
#include "util/util.h"

/* Whether value holds only what a header value may (visible ASCII, space and tab). */
static int header_text(const char *value, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)value[i];
        if ((c < 0x20 || c > 0x7e) && c != '\t')
            return 0;
    }
    return 1;
}

static int sentinel(const char *value, size_t n)
{
    return n >= 11 && strncmp(value, "=?base64?", 9) == 0 && strcmp(value + n - 2, "?=") == 0;
}

int mcp__header_value_is(const char *value, const char *s, size_t n)
{
    size_t vn = strlen(value);
    if (!sentinel(value, vn))
        return vn == n && header_text(value, vn) && memcmp(value, s, n) == 0;
    size_t len;
    char *decoded = mcp__header_value_decode(value, &len);
    int same = decoded != NULL && len == n && memcmp(decoded, s, n) == 0;
    free(decoded);
    return same;
}

char *mcp__header_value_decode(const char *value, size_t *len)
{
    size_t n = strlen(value);
    if (!header_text(value, n))
        return NULL;
    if (sentinel(value, n)) {
        /* Padded, as RFC 4648 spells it: a value that is not is refused. */
        if ((n - 11) % 4 != 0)
            return NULL;
        unsigned char *raw = mcp__base64_decode(value + 9, n - 11, len);
        return (char *)raw; /* NUL-terminated by the decoder */
    }
    char *copy = malloc(n + 1);
    if (copy == NULL)
        return NULL;
    memcpy(copy, value, n + 1);
    *len = n;
    return copy;
}
