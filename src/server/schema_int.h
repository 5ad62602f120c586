/*
 * What the JSON Schema modules share: the keyword table, the dialects, the
 * bounds, $ref resolution (schema_ref.c), the ECMA-262 pattern translation
 * (schema_regex.c) and JSON value comparison (schema_value.c). schema.c
 * checks instances (mcp__schema_check), schema_valid.c checks schemas
 * (mcp__schema_valid); both are declared in server_int.h.
 */
#ifndef MCP_SERVER_SCHEMA_INT_H
#define MCP_SERVER_SCHEMA_INT_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/*
 * Bounds. The spec (basic/index, "Composition-Keyword Resource Use") asks for
 * reasonable bounds on schema depth, the number of subschemas or the time of
 * one validation, without numbers; these are ours.
 *
 * MCP__SCHEMA_MAX_DEPTH: subschemas applied inside one another in one check
 * (each step into the instance and each $ref, allOf... counts), and the
 * nesting of subschemas in a schema. A $ref cycle that consumes no instance
 * ({"$ref":"#"}) reaches it at once.
 *
 * The work of one check: MCP__SCHEMA_MAX_STEPS plus MCP__SCHEMA_STEPS_PER_VALUE
 * for each value of the instance, in steps (a subschema applied, a value
 * compared by enum, const or uniqueItems, a pattern matched, a node visited
 * while resolving a $ref). A schema's work grows with the instance it checks;
 * only a schema that does far more than that per value (exponential anyOf
 * nesting, huge enums) runs out.
 *
 * mcp__schema_valid: at most MCP__SCHEMA_MAX_VALUES JSON values in a schema,
 * MCP__SCHEMA_MAX_SUBSCHEMAS of them subschemas, and each pattern at most
 * MCP__SCHEMA_MAX_PATTERN atoms once its counted repetitions are expanded.
 */
#define MCP__SCHEMA_MAX_DEPTH 128
#define MCP__SCHEMA_MAX_STEPS 100000
#define MCP__SCHEMA_STEPS_PER_VALUE 16
#define MCP__SCHEMA_MAX_VALUES 100000
#define MCP__SCHEMA_MAX_SUBSCHEMAS 10000
#define MCP__SCHEMA_MAX_PATTERN 10000

/* Dialects (basic/index, "Schema Dialect"): 2020-12 by default, draft-07 when
 * $schema names it. Each keyword of the table knows in which it exists. */
enum {
    MCP__DIALECT_2020 = 1,
    MCP__DIALECT_07 = 2,
    MCP__DIALECT_BOTH = 3,
};

/* Returns the dialect the root's $schema names (2020-12 when absent), or 0 for
 * one we do not support (then *name is the $schema value, or NULL when it is
 * not a string). */
int mcp__schema_dialect(const json_t *root, const char **name);

enum mcp__kw {
    KW_ANCHOR,
    KW_DEFS,
    KW_DYNAMIC_ANCHOR,
    KW_DYNAMIC_REF,
    KW_ID,
    KW_REF,
    KW_SCHEMA,
    KW_ADDITIONAL_ITEMS,
    KW_ADDITIONAL_PROPERTIES,
    KW_ALL_OF,
    KW_ANY_OF,
    KW_CONST,
    KW_CONTAINS,
    KW_DEFINITIONS,
    KW_DEPENDENCIES,
    KW_DEPENDENT_REQUIRED,
    KW_DEPENDENT_SCHEMAS,
    KW_ELSE,
    KW_ENUM,
    KW_EXCLUSIVE_MAXIMUM,
    KW_EXCLUSIVE_MINIMUM,
    KW_IF,
    KW_ITEMS,
    KW_MAX_CONTAINS,
    KW_MAX_ITEMS,
    KW_MAX_LENGTH,
    KW_MAX_PROPERTIES,
    KW_MAXIMUM,
    KW_MIN_CONTAINS,
    KW_MIN_ITEMS,
    KW_MIN_LENGTH,
    KW_MIN_PROPERTIES,
    KW_MINIMUM,
    KW_MULTIPLE_OF,
    KW_NOT,
    KW_ONE_OF,
    KW_PATTERN,
    KW_PATTERN_PROPERTIES,
    KW_PREFIX_ITEMS,
    KW_PROPERTIES,
    KW_PROPERTY_NAMES,
    KW_REQUIRED,
    KW_THEN,
    KW_TYPE,
    KW_UNEVALUATED_ITEMS,
    KW_UNEVALUATED_PROPERTIES,
    KW_UNIQUE_ITEMS,
    KW_COUNT
};

/* What a keyword's value must be (mcp__schema_valid), and where subschemas are. */
enum mcp__kw_kind {
    KIND_SCHEMA,       /* a schema */
    KIND_SCHEMA_MAP,   /* an object of schemas */
    KIND_PATTERN_MAP,  /* an object of schemas whose names are patterns */
    KIND_SCHEMA_ARRAY, /* a non-empty array of schemas */
    KIND_ITEMS,        /* a schema; in draft-07 also an array of schemas */
    KIND_DEPENDENCIES, /* draft-07: an object of schemas or arrays of strings */
    KIND_NUMBER,
    KIND_POSITIVE, /* a number above 0 */
    KIND_COUNT,    /* a non-negative integer */
    KIND_BOOLEAN,
    KIND_STRING,
    KIND_STRINGS,     /* an array of unique strings */
    KIND_STRINGS_MAP, /* an object of arrays of unique strings */
    KIND_TYPE,        /* a type name, or an array of unique type names */
    KIND_ARRAY,       /* any array (enum) */
    KIND_ANY,         /* any value (const) */
    KIND_PATTERN,     /* a string that is a pattern we can compile */
    KIND_REF,         /* a URI reference that resolves */
    KIND_ANCHOR,      /* a plain name */
    KIND_ID,          /* a URI reference */
};

typedef struct mcp__kw_info {
    const char *name;
    unsigned char id;      /* enum mcp__kw */
    unsigned char kind;    /* enum mcp__kw_kind */
    unsigned char dialect; /* MCP__DIALECT_* where it is a keyword */
} mcp__kw_info;

/* The keyword called name in dialect, or NULL for a name that is not one
 * (unknown keywords are annotations: ignored). */
const mcp__kw_info *mcp__schema_keyword(const char *name, int dialect);

/* Whether a schema object's "$id" starts a schema resource (in draft-07, an $id
 * that is only a fragment "#name" is an anchor). */
int mcp__schema_is_resource(const json_t *id, int dialect);

/* ---- $ref resolution (schema_ref.c) ---- */

typedef struct mcp__ref_target {
    const json_t *schema;   /* what the reference points at */
    const json_t *resource; /* the schema resource that holds it (innermost $id) */
} mcp__ref_target;

/*
 * Resolves ref, a $ref (or $dynamicRef) found in resource, within the document
 * root, never outside it: nothing is fetched. Fragments are JSON pointers
 * (percent-decoded, then ~1 and ~0 unescaped) or anchor names ($anchor,
 * $dynamicAnchor, draft-07 "$id":"#name"); the part before the fragment must
 * name the document itself or an embedded schema resource by its $id,
 * resolved against the $id of the resources around it (RFC 3986 section 5.2,
 * without removing dot segments). Adds the nodes it visits to *steps. Returns
 * 0, or -1 with a sentence in why (a remote reference, an unknown pointer or
 * anchor).
 */
int mcp__schema_resolve(const json_t *root, int dialect, const json_t *resource, const char *ref,
                        mcp__ref_target *out, size_t *steps, char *why, size_t why_len);

/* ---- Patterns (schema_regex.c) ---- */

/*
 * Compiles an ECMA-262 pattern (what JSON Schema specifies) as a POSIX
 * extended regular expression: an approximation, documented there. Returns 0,
 * or -1 with a sentence in why (a syntax error, a feature POSIX lacks, a
 * pattern too large); re needs regfree only after 0.
 */
int mcp__schema_regcomp(regex_t *re, const char *pattern, size_t len, char *why, size_t why_len);
/* 1 when the pattern matches somewhere in s (len bytes), 0 when not. */
int mcp__schema_regmatch(const regex_t *re, const char *s, size_t len);

/* ---- Values (schema_value.c) ---- */

/* JSON equality as JSON Schema has it: numbers compare by value (1 equals 1.0),
 * objects whatever their member order. Adds the nodes compared to *steps. */
int mcp__schema_equal(const json_t *a, const json_t *b, size_t *steps);
/* A hash consistent with mcp__schema_equal. */
uint64_t mcp__schema_hash(const json_t *v);
/* Whether v is a number with no fractional part (2 and 2.0, not 2.5). */
int mcp__schema_is_integral(const json_t *v);
/* Compares two numbers: <0, 0 or >0 (exact between integers). */
int mcp__schema_numcmp(const json_t *a, const json_t *b);
/* Whether v is a multiple of m (m > 0). */
int mcp__schema_multiple_of(const json_t *v, const json_t *m);
/* The number of Unicode code points of a string. */
size_t mcp__schema_length(const json_t *s);
/* Counts the values of v (v itself included), not below depth levels. */
size_t mcp__schema_count_values(const json_t *v, int depth);
/* Writes "an integer", "a string"... for v's type. */
const char *mcp__schema_type_name(const json_t *v);
/* Copies the path s (n bytes, NUL-terminated at n) into out, as its beginning,
 * "..." and its end when it is longer than MCP__SCHEMA_PATH_SHOWN bytes, so
 * that a sentence keeps room for what went wrong. */
#define MCP__SCHEMA_PATH_SHOWN 120
void mcp__schema_shorten(const char *s, size_t n, char *out, size_t out_len);

#endif
