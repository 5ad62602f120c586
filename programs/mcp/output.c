/* SPDX-License-Identifier: MIT */
/*
 * The readable text renderer: what `mcp` prints when --json is not given.
 * Everything here reads results from an untrusted server, so every field is
 * looked up defensively: a missing or mistyped field is skipped, never fatal.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

/* Returns the string member `key` of obj, or NULL when absent or not a string. */
static const char *str_member(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

/* Appends s to the NUL-terminated text in buf, truncating to fit. */
static void buf_append(char *buf, size_t size, const char *s)
{
    size_t used = strlen(buf);
    if (used + 1 >= size)
        return;
    size_t n = strlen(s);
    if (n > size - used - 1)
        n = size - used - 1;
    memcpy(buf + used, s, n);
    buf[used + n] = '\0';
}

int cli_print_json(FILE *f, const json_t *v)
{
    char *text = json_dumps(v, JSON_INDENT(2) | JSON_ENCODE_ANY);
    if (text == NULL)
        return -1;
    fputs(text, f);
    fputc('\n', f);
    free(text);
    return 0;
}

/* Prints JSON compactly on one line (for values inside readable text). */
static void print_compact(FILE *f, const json_t *v)
{
    char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    if (text != NULL) {
        fputs(text, f);
        free(text);
    }
}

/* Prints text, then a newline unless it already ends with one. */
static void print_text(FILE *f, const char *text)
{
    size_t n = strlen(text);
    fputs(text, f);
    if (n == 0 || text[n - 1] != '\n')
        fputc('\n', f);
}

/* Prints each line of text behind `indent`. */
static void print_indented(FILE *f, const char *indent, const char *text)
{
    while (*text != '\0') {
        const char *nl = strchr(text, '\n');
        size_t n = nl != NULL ? (size_t)(nl - text) : strlen(text);
        fprintf(f, "%s%.*s\n", indent, (int)n, text);
        text += n;
        if (*text == '\n')
            text++;
    }
}

size_t cli_base64_decoded_len(const char *b64)
{
    size_t chars = 0;
    for (const char *p = b64; *p != '\0'; p++) {
        unsigned char ch = (unsigned char)*p;
        /* Both alphabets (RFC 4648 §4 and §5); padding and whitespace carry no data. */
        if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
            ch == '+' || ch == '/' || ch == '-' || ch == '_')
            chars++;
    }
    return chars / 4 * 3 + (chars % 4 == 0 ? 0 : chars % 4 - 1);
}

/* "[kind mime, N bytes]" for binary data given as base64. */
static void print_binary_summary(FILE *f, const char *kind, const char *uri, const char *mime,
                                 const char *b64)
{
    fprintf(f, "[%s", kind);
    if (uri != NULL)
        fprintf(f, " %s", uri);
    fprintf(f, " %s, %zu bytes]\n", mime != NULL ? mime : "application/octet-stream",
            b64 != NULL ? cli_base64_decoded_len(b64) : (size_t)0);
}

/* One content block of a tool result or prompt message. */
static void print_content_block(FILE *f, const json_t *block)
{
    const char *type = str_member(block, "type");
    if (type == NULL) {
        print_compact(f, block);
        fputc('\n', f);
        return;
    }
    if (strcmp(type, "text") == 0) {
        const char *text = str_member(block, "text");
        print_text(f, text != NULL ? text : "");
    } else if (strcmp(type, "image") == 0 || strcmp(type, "audio") == 0) {
        print_binary_summary(f, type, NULL, str_member(block, "mimeType"),
                             str_member(block, "data"));
    } else if (strcmp(type, "resource") == 0) {
        const json_t *res = json_object_get(block, "resource");
        const char *uri = str_member(res, "uri");
        const char *mime = str_member(res, "mimeType");
        const char *text = str_member(res, "text");
        const char *blob = str_member(res, "blob");
        if (text != NULL) {
            fprintf(f, "[resource %s", uri != NULL ? uri : "?");
            if (mime != NULL)
                fprintf(f, " %s", mime);
            fputs("]\n", f);
            print_text(f, text);
        } else {
            print_binary_summary(f, "resource", uri != NULL ? uri : "?", mime, blob);
        }
    } else if (strcmp(type, "resource_link") == 0) {
        const char *uri = str_member(block, "uri");
        const char *name = str_member(block, "name");
        const char *mime = str_member(block, "mimeType");
        const char *desc = str_member(block, "description");
        fprintf(f, "[resource link %s", uri != NULL ? uri : "?");
        if (name != NULL)
            fprintf(f, " \"%s\"", name);
        if (mime != NULL)
            fprintf(f, " %s", mime);
        fputs("]\n", f);
        if (desc != NULL)
            print_indented(f, "  ", desc);
    } else {
        /* A block type newer than this program: show it rather than drop it. */
        print_compact(f, block);
        fputc('\n', f);
    }
}

/*
 * A readable type for a property schema: "string", "integer|null",
 * "array of string", with an enum's values in braces.
 */
static void describe_type(const json_t *schema, char *buf, size_t size)
{
    buf[0] = '\0';
    const json_t *type = json_object_get(schema, "type");
    const json_t *branches = json_object_get(schema, "anyOf");
    if (branches == NULL)
        branches = json_object_get(schema, "oneOf");
    if (json_is_string(type)) {
        buf_append(buf, size, json_string_value(type));
        const char *item_type = str_member(json_object_get(schema, "items"), "type");
        if (strcmp(json_string_value(type), "array") == 0 && item_type != NULL) {
            buf_append(buf, size, " of ");
            buf_append(buf, size, item_type);
        }
    } else if (json_is_array(type) || json_is_array(branches)) {
        const json_t *list = json_is_array(type) ? type : branches;
        size_t i;
        const json_t *t;
        json_array_foreach(list, i, t)
        {
            const char *name = json_is_string(t) ? json_string_value(t) : str_member(t, "type");
            if (buf[0] != '\0')
                buf_append(buf, size, "|");
            buf_append(buf, size, name != NULL ? name : "any");
        }
    } else {
        buf_append(buf, size, "any");
    }
    const json_t *values = json_object_get(schema, "enum");
    if (json_is_array(values) && json_array_size(values) > 0) {
        buf_append(buf, size, " {");
        size_t i;
        const json_t *v;
        json_array_foreach(values, i, v)
        {
            if (i > 0)
                buf_append(buf, size, ",");
            if (json_is_string(v)) {
                buf_append(buf, size, json_string_value(v));
            } else {
                char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
                buf_append(buf, size, text != NULL ? text : "?");
                free(text);
            }
        }
        buf_append(buf, size, "}");
    }
}

bool cli_is_required(const json_t *required, const char *name)
{
    size_t i;
    const json_t *r;
    json_array_foreach(required, i, r)
    {
        if (json_is_string(r) && strcmp(json_string_value(r), name) == 0)
            return true;
    }
    return false;
}

/* The description, then one line per property: "name: type (required) - description". */
static void print_schema_arguments(FILE *f, const json_t *schema)
{
    const json_t *props = json_object_get(schema, "properties");
    const json_t *required = json_object_get(schema, "required");
    if (!json_is_object(props) || json_object_size(props) == 0) {
        fputs("  (no arguments)\n", f);
        return;
    }
    fputs("  arguments:\n", f);
    const char *key;
    const json_t *prop;
    json_object_foreach((json_t *)props, key, prop)
    {
        char type[256];
        describe_type(prop, type, sizeof type);
        fprintf(f, "    %s: %s", key, type);
        if (cli_is_required(required, key))
            fputs(" (required)", f);
        const json_t *def = json_object_get(prop, "default");
        if (def != NULL) {
            fputs(" [default ", f);
            print_compact(f, def);
            fputc(']', f);
        }
        const char *desc = str_member(prop, "description");
        if (desc != NULL && strchr(desc, '\n') == NULL) {
            fprintf(f, " - %s\n", desc);
        } else {
            fputc('\n', f);
            if (desc != NULL)
                print_indented(f, "        ", desc);
        }
    }
}

/* "name" or "name (title)" as the first line of a tool or prompt block. */
static void print_heading(FILE *f, const json_t *item)
{
    const char *name = str_member(item, "name");
    const char *title = str_member(item, "title");
    if (title == NULL)
        title = str_member(json_object_get(item, "annotations"), "title");
    fputs(name != NULL ? name : "?", f);
    if (title != NULL && (name == NULL || strcmp(title, name) != 0))
        fprintf(f, " (%s)", title);
    fputc('\n', f);
    const char *desc = str_member(item, "description");
    if (desc != NULL)
        print_indented(f, "  ", desc);
}

/* "icons: 2 (48x48 light, any dark)" for an item that has icons. */
static void print_icons(FILE *f, const char *indent, const json_t *icons)
{
    if (!json_is_array(icons) || json_array_size(icons) == 0)
        return;
    fprintf(f, "%sicons: %zu (", indent, json_array_size(icons));
    size_t i;
    const json_t *icon;
    json_array_foreach(icons, i, icon)
    {
        const json_t *sizes = json_object_get(icon, "sizes");
        const char *theme = str_member(icon, "theme");
        const char *mime = str_member(icon, "mimeType");
        fprintf(f, "%s%s", i > 0 ? ", " : "",
                json_array_size(sizes) > 0 && json_is_string(json_array_get(sizes, 0))
                    ? json_string_value(json_array_get(sizes, 0))
                : mime != NULL ? mime
                               : "icon");
        if (theme != NULL)
            fprintf(f, " %s", theme);
    }
    fputs(")\n", f);
}

/* A tool's behaviour hints (annotations): "read-only, idempotent". */
static void print_hints(FILE *f, const json_t *annotations)
{
    static const struct {
        const char *key, *yes, *no;
    } hints[] = {{"readOnlyHint", "read-only", NULL},
                 {"destructiveHint", "destructive", "not destructive"},
                 {"idempotentHint", "idempotent", NULL},
                 {"openWorldHint", "open world", "closed world"}};
    int n = 0;
    for (size_t i = 0; i < sizeof(hints) / sizeof(hints[0]); i++) {
        const json_t *v = json_object_get(annotations, hints[i].key);
        const char *word = json_is_true(v) ? hints[i].yes : json_is_false(v) ? hints[i].no : NULL;
        if (word != NULL)
            fprintf(f, "%s%s", n++ == 0 ? "  hints: " : ", ", word);
    }
    if (n > 0)
        fputc('\n', f);
}

void cli_print_tools(FILE *f, const json_t *tools)
{
    size_t i;
    const json_t *tool;
    json_array_foreach(tools, i, tool)
    {
        if (i > 0)
            fputc('\n', f);
        print_heading(f, tool);
        print_hints(f, json_object_get(tool, "annotations"));
        print_icons(f, "  ", json_object_get(tool, "icons"));
        print_schema_arguments(f, json_object_get(tool, "inputSchema"));
    }
    if (json_array_size(tools) == 0)
        fputs("(no tools)\n", f);
}

void cli_print_info(FILE *f, const json_t *info)
{
    const json_t *server = json_object_get(info, "serverInfo");
    const char *name = str_member(server, "name"), *version = str_member(server, "version");
    const char *title = str_member(server, "title");
    fprintf(f, "%s %s", name != NULL ? name : "?", version != NULL ? version : "?");
    if (title != NULL)
        fprintf(f, " (%s)", title);
    fputc('\n', f);
    const char *desc = str_member(server, "description");
    if (desc != NULL)
        print_indented(f, "  ", desc);
    const char *site = str_member(server, "websiteUrl");
    if (site != NULL)
        fprintf(f, "  website: %s\n", site);
    print_icons(f, "  ", json_object_get(server, "icons"));
    const char *protocol = str_member(info, "protocolVersion");
    fprintf(f, "protocol: %s\n", protocol != NULL ? protocol : "?");
    /* The library's capabilities with their flags, then extensions and experimental. */
    const json_t *caps = json_object_get(info, "capabilities");
    fputs("capabilities:", f);
    const char *key;
    const json_t *v;
    int any = 0;
    json_object_foreach((json_t *)caps, key, v)
    {
        if (strcmp(key, "extensions") == 0 || strcmp(key, "experimental") == 0)
            continue;
        fprintf(f, "%s %s", any++ ? "," : "", key);
        const char *flag;
        const json_t *fv;
        int nflags = 0;
        json_object_foreach((json_t *)v, flag, fv)
        {
            if (json_is_true(fv))
                fprintf(f, "%s%s", nflags++ ? " " : " (", flag);
        }
        if (nflags > 0)
            fputc(')', f);
    }
    fputs(any ? "\n" : " none\n", f);
    static const char *const maps[] = {"extensions", "experimental"};
    for (size_t m = 0; m < 2; m++) {
        json_object_foreach(json_object_get(caps, maps[m]), key, v)
        {
            fprintf(f, "%s: %s ", m == 0 ? "extension" : "experimental", key);
            print_compact(f, v);
            fputc('\n', f);
        }
    }
    const char *instructions = str_member(info, "instructions");
    if (instructions != NULL) {
        fputs("instructions:\n", f);
        print_indented(f, "  ", instructions);
    }
}

/*
 * True when content is just the structuredContent serialised as text, which
 * servers send for older clients; printing both would show it twice.
 */
static bool content_duplicates_structured(const json_t *content, const json_t *structured)
{
    if (json_array_size(content) != 1)
        return false;
    const json_t *block = json_array_get(content, 0);
    const char *type = str_member(block, "type");
    const char *text = str_member(block, "text");
    if (type == NULL || strcmp(type, "text") != 0 || text == NULL)
        return false;
    json_t *parsed = json_loads(text, JSON_DECODE_ANY, NULL);
    bool same = parsed != NULL && json_equal(parsed, structured);
    json_decref(parsed);
    return same;
}

int cli_print_tool_result(FILE *out, FILE *err, const json_t *result)
{
    bool is_error = json_is_true(json_object_get(result, "isError"));
    FILE *f = is_error ? err : out;
    const json_t *content = json_object_get(result, "content");
    const json_t *structured = json_object_get(result, "structuredContent");
    bool show_content = !(structured != NULL && content_duplicates_structured(content, structured));
    bool printed = false;

    if (is_error)
        fputs("error: ", f);
    if (show_content) {
        size_t i;
        const json_t *block;
        json_array_foreach(content, i, block)
        {
            print_content_block(f, block);
            printed = true;
        }
    }
    if (structured != NULL) {
        cli_print_json(f, structured);
        printed = true;
    }
    if (is_error && !printed)
        fputs("the tool failed without saying why\n", f);
    return is_error ? CLI_EXIT_ERROR : CLI_EXIT_OK;
}

/* Display width of a column, capped so one long URI does not push everything right. */
static int column_width(const json_t *items, const char *key, int cap)
{
    int width = 0;
    size_t i;
    const json_t *item;
    json_array_foreach(items, i, item)
    {
        const char *s = str_member(item, key);
        size_t n = s != NULL ? strlen(s) : 0;
        if (n > (size_t)width)
            width = n > (size_t)cap ? cap : (int)n;
    }
    return width;
}

void cli_print_resources(FILE *f, const json_t *resources, bool templates)
{
    const char *uri_key = templates ? "uriTemplate" : "uri";
    int uri_w = column_width(resources, uri_key, 60);
    int name_w = column_width(resources, "name", 32);
    size_t i;
    const json_t *r;
    json_array_foreach(resources, i, r)
    {
        const char *uri = str_member(r, uri_key);
        const char *name = str_member(r, "name");
        const char *mime = str_member(r, "mimeType");
        /* The last column is left unpadded so lines carry no trailing blanks. */
        if (mime != NULL)
            fprintf(f, "%-*s  %-*s  %s\n", uri_w, uri != NULL ? uri : "?", name_w,
                    name != NULL ? name : "", mime);
        else
            fprintf(f, "%-*s  %s\n", uri_w, uri != NULL ? uri : "?", name != NULL ? name : "");
    }
    if (json_array_size(resources) == 0)
        fputs(templates ? "(no resource templates)\n" : "(no resources)\n", f);
}

void cli_print_resource_contents(FILE *f, const json_t *result)
{
    const json_t *contents = json_object_get(result, "contents");
    bool several = json_array_size(contents) > 1;
    size_t i;
    const json_t *c;
    json_array_foreach(contents, i, c)
    {
        const char *uri = str_member(c, "uri");
        const char *mime = str_member(c, "mimeType");
        const char *text = str_member(c, "text");
        if (several) {
            fprintf(f, "%s--- %s", i > 0 ? "\n" : "", uri != NULL ? uri : "?");
            if (mime != NULL)
                fprintf(f, " (%s)", mime);
            fputc('\n', f);
        }
        if (text != NULL)
            print_text(f, text);
        else
            print_binary_summary(f, "blob", uri, mime, str_member(c, "blob"));
    }
}

void cli_print_prompts(FILE *f, const json_t *prompts)
{
    size_t i;
    const json_t *p;
    json_array_foreach(prompts, i, p)
    {
        if (i > 0)
            fputc('\n', f);
        print_heading(f, p);
        const json_t *args = json_object_get(p, "arguments");
        if (json_array_size(args) == 0) {
            fputs("  (no arguments)\n", f);
            continue;
        }
        fputs("  arguments:\n", f);
        size_t j;
        const json_t *a;
        json_array_foreach(args, j, a)
        {
            const char *name = str_member(a, "name");
            const char *desc = str_member(a, "description");
            fprintf(f, "    %s", name != NULL ? name : "?");
            if (json_is_true(json_object_get(a, "required")))
                fputs(" (required)", f);
            if (desc != NULL && strchr(desc, '\n') == NULL) {
                fprintf(f, " - %s\n", desc);
            } else {
                fputc('\n', f);
                if (desc != NULL)
                    print_indented(f, "        ", desc);
            }
        }
    }
    if (json_array_size(prompts) == 0)
        fputs("(no prompts)\n", f);
}

void cli_print_prompt(FILE *f, const json_t *result)
{
    const char *desc = str_member(result, "description");
    if (desc != NULL)
        print_text(f, desc);
    size_t i;
    const json_t *m;
    json_array_foreach(json_object_get(result, "messages"), i, m)
    {
        const char *role = str_member(m, "role");
        if (desc != NULL || i > 0)
            fputc('\n', f);
        fprintf(f, "[%s]\n", role != NULL ? role : "?");
        /* content is one block in current revisions; accept an array too. */
        const json_t *content = json_object_get(m, "content");
        if (json_is_array(content)) {
            size_t j;
            const json_t *block;
            json_array_foreach(content, j, block)
            {
                print_content_block(f, block);
            }
        } else if (content != NULL) {
            print_content_block(f, content);
        }
    }
}

void cli_print_completion(FILE *f, const json_t *result)
{
    size_t i;
    const json_t *v;
    json_array_foreach(json_object_get(json_object_get(result, "completion"), "values"), i, v)
    {
        if (json_is_string(v)) {
            fprintf(f, "%s\n", json_string_value(v));
        } else {
            print_compact(f, v);
            fputc('\n', f);
        }
    }
}

void cli_print_task(FILE *out, const json_t *task)
{
    const char *message = json_string_value(json_object_get(task, "statusMessage"));
    if (message != NULL) {
        fputs("  ", out);
        cli_put_text(out, message, "  ");
        fputc('\n', out);
    }
    const char *created = json_string_value(json_object_get(task, "createdAt"));
    const char *updated = json_string_value(json_object_get(task, "lastUpdatedAt"));
    if (created != NULL && updated != NULL) {
        fputs("  created ", out);
        cli_put_text(out, created, "  ");
        fputs(", last updated ", out);
        cli_put_text(out, updated, "  ");
        fputc('\n', out);
    }
    const json_t *error = json_object_get(task, "error");
    if (json_is_object(error)) {
        fprintf(out,
                "  error %lld: ", (long long)json_integer_value(json_object_get(error, "code")));
        cli_put_text(out, json_string_value(json_object_get(error, "message")) ?: "", "  ");
        fputc('\n', out);
    }
    const json_t *inputs = json_object_get(task, "inputRequests");
    const char *key;
    json_t *q;
    json_object_foreach((json_t *)inputs, key, q)
    {
        fputs("  asks ", out);
        cli_put_text(out, key, "  ");
        fputs(": ", out);
        cli_put_text(out, json_string_value(json_object_get(q, "method")) ?: "?", "  ");
        const char *text =
            json_string_value(json_object_get(json_object_get(q, "params"), "message"));
        if (text != NULL) {
            fputs(" \"", out);
            cli_put_text(out, text, "  ");
            fputc('"', out);
        }
        fputc('\n', out);
    }
    const json_t *result = json_object_get(task, "result");
    if (json_is_object(result)) {
        fflush(out);
        cli_print_tool_result(out, stderr, result);
    }
}
