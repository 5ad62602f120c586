/* SPDX-License-Identifier: MIT */
/*
 * key=value arguments of `tools call` and `prompts get`.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

int cli_kv_parse(const char *word, cli_kv *kv, char *err, size_t errlen)
{
    memset(kv, 0, sizeof *kv);
    /* JSON strings must be UTF-8; say so now rather than fail later as if out of memory. */
    json_t *probe = json_string(word);
    if (probe == NULL) {
        snprintf(err, errlen, "argument '%s' is not valid UTF-8", word);
        return -1;
    }
    json_decref(probe);
    const char *eq = strchr(word, '=');
    if (eq == NULL) {
        snprintf(err, errlen, "expected key=value or key:=JSON, got '%s'", word);
        return -1;
    }
    size_t keylen = (size_t)(eq - word);
    bool force_json = false;
    if (keylen > 0 && word[keylen - 1] == ':') {
        force_json = true;
        keylen--;
    }
    if (keylen == 0) {
        snprintf(err, errlen, "empty key in '%s'", word);
        return -1;
    }
    kv->key = malloc(keylen + 1);
    if (kv->key == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    memcpy(kv->key, word, keylen);
    kv->key[keylen] = '\0';
    kv->value = eq + 1;
    if (force_json) {
        json_error_t jerr;
        kv->json = json_loads(kv->value, JSON_DECODE_ANY, &jerr);
        if (kv->json == NULL) {
            snprintf(err, errlen, "argument '%s': invalid JSON after ':=': %s", kv->key, jerr.text);
            cli_kv_clear(kv);
            return -1;
        }
    }
    return 0;
}

void cli_kv_clear(cli_kv *kv)
{
    free(kv->key);
    json_decref(kv->json);
    memset(kv, 0, sizeof *kv);
}

/*
 * True when the JSON Schema `schema` lists type `name`, directly ("type" as a
 * string or an array of strings) or in one of its anyOf/oneOf branches. The
 * depth bound keeps a hostile, deeply nested schema from exhausting the stack.
 */
static bool schema_has_type(const json_t *schema, const char *name, int depth)
{
    if (!json_is_object(schema) || depth > 8)
        return false;
    const json_t *type = json_object_get(schema, "type");
    if (json_is_string(type) && strcmp(json_string_value(type), name) == 0)
        return true;
    if (json_is_array(type)) {
        size_t i;
        const json_t *t;
        json_array_foreach(type, i, t)
        {
            if (json_is_string(t) && strcmp(json_string_value(t), name) == 0)
                return true;
        }
    }
    static const char *const combinators[] = {"anyOf", "oneOf"};
    for (size_t k = 0; k < sizeof combinators / sizeof combinators[0]; k++) {
        const json_t *branches = json_object_get(schema, combinators[k]);
        size_t i;
        const json_t *branch;
        json_array_foreach(branches, i, branch)
        {
            if (schema_has_type(branch, name, depth + 1))
                return true;
        }
    }
    return false;
}

/* True when the schema lists a (non-string) type that the parsed value has. */
static bool schema_accepts_value(const json_t *schema, const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return schema_has_type(schema, "object", 0);
    case JSON_ARRAY:
        return schema_has_type(schema, "array", 0);
    case JSON_INTEGER:
        return schema_has_type(schema, "integer", 0) || schema_has_type(schema, "number", 0);
    case JSON_REAL:
        return schema_has_type(schema, "number", 0);
    case JSON_TRUE:
    case JSON_FALSE:
        return schema_has_type(schema, "boolean", 0);
    case JSON_NULL:
        return schema_has_type(schema, "null", 0);
    case JSON_STRING:
        return false;
    }
    return false;
}

/* The value of one plain key=value word, as a new reference (NULL on ENOMEM). */
static json_t *plain_value(const char *text, const json_t *prop_schema)
{
    json_t *parsed = json_loads(text, JSON_DECODE_ANY, NULL);
    /*
     * A property declared as a string takes the raw text, so that text=123 or
     * id=007 reach the tool as typed; if the property also allows another
     * type that the parsed value has (say ["string","integer"]), the parsed
     * value is the better guess.
     */
    if (parsed != NULL && schema_has_type(prop_schema, "string", 0) &&
        !schema_accepts_value(prop_schema, parsed)) {
        json_decref(parsed);
        parsed = NULL;
    }
    return parsed != NULL ? parsed : json_string(text);
}

json_t *cli_tool_arguments(const cli_kv *kvs, size_t n, const json_t *input_schema)
{
    json_t *args = json_object();
    if (args == NULL)
        return NULL;
    const json_t *props = json_object_get(input_schema, "properties");
    for (size_t i = 0; i < n; i++) {
        json_t *v;
        if (kvs[i].json != NULL)
            v = json_incref(kvs[i].json);
        else
            v = plain_value(kvs[i].value, json_object_get(props, kvs[i].key));
        if (v == NULL || json_object_set_new(args, kvs[i].key, v) != 0) {
            json_decref(args);
            return NULL;
        }
    }
    return args;
}

json_t *cli_prompt_arguments(const cli_kv *kvs, size_t n)
{
    json_t *args = json_object();
    if (args == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        json_t *v;
        if (kvs[i].json == NULL) {
            v = json_string(kvs[i].value);
        } else if (json_is_string(kvs[i].json)) {
            v = json_incref(kvs[i].json);
        } else {
            /* Prompt arguments are strings on the wire; send the JSON text. */
            char *text = json_dumps(kvs[i].json, JSON_COMPACT | JSON_ENCODE_ANY);
            v = text != NULL ? json_string(text) : NULL;
            free(text);
        }
        if (v == NULL || json_object_set_new(args, kvs[i].key, v) != 0) {
            json_decref(args);
            return NULL;
        }
    }
    return args;
}
