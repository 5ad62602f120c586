/* SPDX-License-Identifier: MIT */
/*
 * Matching a URI against an MCP resource template (RFC 6570: level 1, "{name}",
 * here; levels 2 to 4 in uri_expr.c), in time linear in the URI's length.
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
 * On a match, sets each variable's value, percent-decoded, in vars (borrowed; a
 * name given twice keeps its last value) and returns 1. Otherwise returns 0, or MCP_ENOMEM; vars
 * may then hold some of the values. When steps is not NULL, *steps is increased
 * by the number of steps taken, which never exceeds 4 times the lengths of the
 * URI and of the template together: tests hold the matcher to that.
 */
int mcp__uri_template_match(const char *tpl, const char *uri, json_t *vars, size_t *steps);

/* Fills fail[0, len) with the Knuth-Morris-Pratt table of lit (len > 0): fail[i] is the
 * length of the longest proper border of lit[0..i]. Returns the steps taken. */
size_t mcp__kmp_table(const char *lit, size_t len, size_t *fail);

/* ---- Levels 2 to 4 (uri_expr.c) ---- */

/* 1 when tpl is an RFC 6570 template (levels 1 to 4; names may hold any printable
 * character but "{},:*"), else 0. */
int mcp__uri_template_valid(const char *tpl);
/*
 * Matches uri against a template of levels 2 to 4 (uri_expr.c says how): 1 with the
 * variables in vars (strings, percent-decoded; an exploded variable a list or an
 * object), 0, or MCP_ENOMEM. steps as above: linear in the lengths of the URI and the
 * template, times the number of expressions at most.
 */
/* Whether tpl has what level 1 has not (operators, lists of variables, prefixes,
 * explode): such a template is matched by the rules of uri_expr.c. */
int mcp__uri_template_has_ops(const char *tpl);
/* A template of levels 2 to 4 parsed once (it points into tpl, which must outlive it),
 * or NULL when it is not RFC 6570 (or memory runs out); matched as
 * mcp__uri_template_match_ext does, without parsing it again. */
typedef struct mcp__uri_tpl mcp__uri_tpl;
mcp__uri_tpl *mcp__uri_template_compile(const char *tpl);
void mcp__uri_template_free(mcp__uri_tpl *t);
int mcp__uri_template_match_compiled(const mcp__uri_tpl *t, const char *uri, json_t *vars,
                                     size_t *steps);
/* s (n bytes) percent-decoded ("%zz" kept as it is), as a JSON string; NULL when it
 * is not UTF-8 once decoded (or memory runs out). */
json_t *mcp__uri_decoded(const char *s, size_t n);
int mcp__uri_template_match_ext(const char *tpl, const char *uri, json_t *vars, size_t *steps);

#endif
