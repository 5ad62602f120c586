/* SPDX-License-Identifier: MIT */
/*
 * The --header flag of the programs that are HTTP clients (mcp, and mcp-gateway
 * --connect): one set of checks and one wording for both.
 */
#ifndef MCP_PROGRAMS_HEADER_FLAG_H
#define MCP_PROGRAMS_HEADER_FLAG_H

#include <stddef.h>

/*
 * Checks a --header value: "Name: value", a token name, a value that is not
 * empty and holds no line break, and not a header the transport writes itself
 * (Accept, Content-Type, Mcp-Session-Id, ...; prog, the program's name, says who
 * does). Returns 0, or -1 after writing a sentence saying what is wrong into err.
 */
int header_flag_check(const char *prog, const char *header, char *err, size_t errlen);

#endif
