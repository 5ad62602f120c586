/* SPDX-License-Identifier: MIT */
/*
 * The --header flag's checks (see header_flag.h).
 */
#include "header_flag.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Headers the transport writes itself: a second one would contradict it. */
static const char *const transport_headers[] = {
    "Accept",         "Content-Type",         "Content-Length", "Transfer-Encoding",
    "Mcp-Session-Id", "Mcp-Protocol-Version", "Last-Event-ID",  "Expect",
    "Host",           "Connection",
};

int header_flag_check(const char *prog, const char *header, char *err, size_t errlen)
{
    const char *colon = strchr(header, ':');
    if (colon == NULL) {
        snprintf(err, errlen, "invalid --header '%s': expected 'Name: value'", header);
        return -1;
    }
    size_t namelen = (size_t)(colon - header);
    if (namelen == 0) {
        snprintf(err, errlen, "invalid --header '%s': the name before ':' is empty", header);
        return -1;
    }
    /* RFC 9110 5.1: a field name is a token. */
    for (const char *p = header; p < colon; p++) {
        unsigned char ch = (unsigned char)*p;
        if (ch <= 0x20 || ch >= 0x7f || strchr("\"(),/:;<=>?@[\\]{}", ch) != NULL) {
            /* The name only: the value may be a secret. */
            snprintf(err, errlen,
                     "invalid --header name '%.*s': it may hold letters, digits and "
                     "!#$%%&'*+-.^_`|~ only",
                     (int)namelen, header);
            return -1;
        }
    }
    /* A line break would start a header of the user's own making (or a body). */
    if (strpbrk(colon, "\r\n") != NULL) {
        snprintf(err, errlen, "invalid --header: the value of '%.*s' holds a line break",
                 (int)namelen, header);
        return -1;
    }
    const char *value = colon + 1 + strspn(colon + 1, " \t");
    if (*value == '\0') {
        /* libcurl reads "Name:" as "remove the header", not as an empty value. */
        snprintf(err, errlen, "invalid --header '%s': the value is empty", header);
        return -1;
    }
    for (size_t i = 0; i < sizeof transport_headers / sizeof transport_headers[0]; i++) {
        if (strlen(transport_headers[i]) == namelen &&
            strncasecmp(header, transport_headers[i], namelen) == 0) {
            snprintf(err, errlen, "invalid --header '%.*s': %s sets it itself", (int)namelen,
                     header, prog);
            return -1;
        }
    }
    return 0;
}
