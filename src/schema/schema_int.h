/* SPDX-License-Identifier: MIT */
/*
 * What the JSON Schema modules share: the keyword table, the dialects, the
 * bounds, $ref resolution (ref.c), the ECMA-262 pattern translation
 * (regex.c) and JSON value comparison (value.c). check.c
 * checks instances (mcp__schema_check), valid.c checks schemas
 * (mcp__schema_valid); both are declared in schema.h.
 */
#ifndef MCP_SCHEMA_SCHEMA_INT_H
#define MCP_SCHEMA_SCHEMA_INT_H

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
 * compared by enum, const or uniqueItems, 64 operations of a pattern match,
 * a node visited while resolving a $ref); a string counts as one more value
 * per 64 bytes. A schema's work grows with the instance it checks; only a
 * schema that does far more than that per value (exponential anyOf nesting,
 * huge enums) runs out.
 *
 * mcp__schema_valid: at most MCP__SCHEMA_MAX_VALUES JSON values in a schema,
 * MCP__SCHEMA_MAX_SUBSCHEMAS of them subschemas, and each pattern at most
 * MCP__SCHEMA_MAX_PATTERN instructions once its counted repetitions are
 * expanded.
 */
#define MCP__SCHEMA_MAX_DEPTH 128
#define MCP__SCHEMA_MAX_STEPS 100000
#define MCP__SCHEMA_STEPS_PER_VALUE 16
#define MCP__SCHEMA_MAX_VALUES 100000
#define MCP__SCHEMA_MAX_SUBSCHEMAS 10000
#define MCP__SCHEMA_MAX_PATTERN 10000
/* Patterns kept compiled for the life of the process (regex.c). */
#define MCP__SCHEMA_PATTERN_CACHE 64

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
    unsigned char len;     /* strlen(name) */
    unsigned char id;      /* enum mcp__kw */
    unsigned char kind;    /* enum mcp__kw_kind */
    unsigned char dialect; /* MCP__DIALECT_* where it is a keyword */
} mcp__kw_info;

/* The keyword called name (len bytes) in dialect, or NULL for a name that is
 * not one (unknown keywords are annotations: ignored). */
const mcp__kw_info *mcp__schema_keyword(const char *name, size_t len, int dialect);

/* Whether the schema object s starts a schema resource: it has an "$id",
 * and in draft-07 that $id is no mere fragment "#name" (an anchor) and has
 * no "$ref" beside it (which makes its siblings ignored). */
int mcp__schema_is_resource(const json_t *s, int dialect);

/* ---- $ref resolution (ref.c) ---- */

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
 * resolved against the $id of the resources around it (RFC 3986 section 5.2).
 * Adds the nodes it visits to *steps. Returns
 * 0, or -1 with a sentence in why (a remote reference, an unknown pointer or
 * anchor).
 */
int mcp__schema_resolve(const json_t *root, int dialect, const json_t *resource, const char *ref,
                        mcp__ref_target *out, size_t *steps, char *why, size_t why_len);
/* The subschema of resource (not of the resources inside it) whose
 * $dynamicAnchor is name, or NULL. Adds the nodes it visits to *steps. */
const json_t *mcp__schema_dynamic_anchor(const json_t *resource, int dialect, const char *name,
                                         size_t *steps);

/* ---- Patterns (regex.c) ---- */

/* A compiled pattern: read-only once built, so threads may share it. */
typedef struct mcp__regex mcp__regex;

/*
 * Compiles an ECMA-262 pattern (what JSON Schema specifies; the subset
 * regex.c lists). Returns 0 with *out (free it with
 * mcp__schema_regex_free), or -1 with a sentence in why (a syntax error, a
 * feature we refuse, a pattern too large).
 */
int mcp__schema_regex_compile(const char *pattern, size_t len, mcp__regex **out, char *why,
                              size_t why_len);
void mcp__schema_regex_free(mcp__regex *re);
/*
 * Whether re matches somewhere in s (len bytes of UTF-8): 1 or 0; -2 when that
 * would take more than *budget operations (a live state advanced by one
 * character, or followed through a jump); -1 out of memory. Subtracts what it
 * did from *budget. Time is linear in len, memory in the size of re.
 */
int mcp__schema_regex_match(const mcp__regex *re, const char *s, size_t len, size_t *budget);
/* mcp__schema_regex_match for a pattern given as text, compiled once per process
 * (the first MCP__SCHEMA_PATTERN_CACHE patterns). -1 with a sentence in why
 * when it cannot be compiled (or memory runs out). Thread-safe. */
int mcp__schema_pattern_match(const char *pattern, size_t len, const char *s, size_t slen,
                              size_t *budget, char *why, size_t why_len);

/* ---- Values (value.c) ---- */

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
/* Counts the values of v (v itself included), not below depth levels; a string
 * counts one more per 64 bytes (what the work allowance of a check goes by). */
size_t mcp__schema_count_values(const json_t *v, int depth);
/* The operations of a pattern match that make one step of the work budget. */
#define MCP__SCHEMA_OPS_PER_STEP 64
/* Writes "an integer", "a string"... for v's type. */
const char *mcp__schema_type_name(const json_t *v);
/* Copies the path s (n bytes, NUL-terminated at n) into out, as its beginning,
 * "..." and its end when it is longer than MCP__SCHEMA_PATH_SHOWN bytes, so
 * that a sentence keeps room for what went wrong. */
#define MCP__SCHEMA_PATH_SHOWN 120
void mcp__schema_shorten(const char *s, size_t n, char *out, size_t out_len);

#endif
