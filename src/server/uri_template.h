/* SPDX-License-Identifier: MIT */
/*
 * Matching a URI against an MCP resource template (RFC 6570 level 1, "{name}"),
 * in time linear in the URI's length.
 */
#ifndef MCP_SERVER_URI_TEMPLATE_H
#define MCP_SERVER_URI_TEMPLATE_H

#include <stddef.h>

#include <jansson.h>

/*
 * Matches uri against tpl, literal text and "{name}" variables. A variable
 * stands for one or more characters other than '/'. Going left to right, each
 * variable takes the shortest value that lets the rest of the URI match; so the
 * literal after a variable is the first occurrence of that text that leaves the
 * variable non-empty without crossing a '/', the literal that ends the template
 * ends the URI, and of two adjacent variables the first takes one character.
 * A template with an unclosed '{' or an empty name matches nothing.
 *
 * On a match, sets each variable's value in vars (borrowed; a name given twice
 * keeps its last value) and returns 1. Otherwise returns 0, or MCP_ENOMEM; vars
 * may then hold some of the values. When steps is not NULL, *steps is increased
 * by the number of steps taken, which never exceeds 4 times the lengths of the
 * URI and of the template together: tests hold the matcher to that.
 */
int mcp__uri_template_match(const char *tpl, const char *uri, json_t *vars, size_t *steps);

#endif
