/*
 * Request metadata header values (see headers.h).
 */
#include <stdlib.h>
#include <string.h>

#include "protocol/headers.h"
#include "util/util.h"

char *mcp__header_value_decode(const char *value, size_t *len)
{
    size_t n = strlen(value);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)value[i];
        if ((c < 0x20 || c > 0x7e) && c != '\t')
            return NULL;
    }
    if (n >= 11 && strncmp(value, "=?base64?", 9) == 0 && strcmp(value + n - 2, "?=") == 0) {
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
