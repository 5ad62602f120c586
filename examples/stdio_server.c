/* SPDX-License-Identifier: MIT */
/*
 * A notes server over stdio, offering what MCP servers usually offer.
 *
 * It has two tools: "add", which sums two numbers its input schema declares
 * (the library checks the arguments against that schema before the handler
 * runs) and answers with structured content that conforms to its output
 * schema; and "count", which counts slowly up to a number, sending a progress
 * notification and a log message at every step, and stops early when the
 * client cancels it. It has a fixed resource, notes://index, that lists the
 * notes, and a resource template, notes://{name} (RFC 6570), whose handler
 * gets the name from the URI and answers with that note, or with the
 * JSON-RPC error "resource not found" for a note it does not have.
 * The prompt "summarize" takes a required argument, name, and builds a
 * message asking to summarize that note. Completion offers the note names
 * for that argument and for the template's variable.
 *
 * The server speaks newline-delimited JSON-RPC on stdin and stdout until
 * stdin ends or SIGINT or SIGTERM arrives; the mcp program can drive it:
 *
 *   mcp -- examples_stdio_server tools call add a=2 b=3
 *   mcp -- examples_stdio_server tools call count to=3
 *   mcp -- examples_stdio_server resources read notes://todo
 *   mcp -- examples_stdio_server prompts get summarize name=todo
 *   mcp -- examples_stdio_server complete prompt summarize name gr
 *
 * Usage: examples_stdio_server
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <mcp/mcp.h>

#define NAME "stdio_server"

/* The server's notes. They never change, so handlers on any worker may read them. */
static const struct note {
    const char *name;
    const char *text;
} notes[] = {
    {"groceries", "Milk, eggs, bread and a bag of coffee beans."},
    {"ideas", "A bicycle bell that plays the first bar of a song."},
    {"todo", "Write the examples, then run each one as a test."},
};
#define NOTE_COUNT (sizeof(notes) / sizeof(notes[0]))

static const struct note *find_note(const char *name)
{
    if (name == NULL)
        return NULL;
    for (size_t i = 0; i < NOTE_COUNT; i++)
        if (strcmp(notes[i].name, name) == 0)
            return &notes[i];
    return NULL;
}

/* add: the input schema guarantees that a and b are numbers. */
static json_t *tool_add(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)ctx, (void)user;
    double sum = json_number_value(json_object_get(args, "a")) +
                 json_number_value(json_object_get(args, "b"));
    if (!isfinite(sum)) /* 1e308 + 1e308: JSON has no infinity */
        return mcp_tool_error("the sum is too large");
    /* A whole sum goes out as a JSON integer: 5, not 5.0. */
    int whole = sum > -1e15 && sum < 1e15 && sum == (double)(json_int_t)sum;
    json_t *value = whole ? json_integer((json_int_t)sum) : json_real(sum);
    /* structuredContent for clients that read it, and the same as text for the others. */
    return mcp_structured_result(json_pack("{s:o}", "sum", value));
}

/*
 * count: a long piece of work. Progress goes to the client only when it asked for it
 * (a progressToken); log messages go when the client's logging level lets them.
 * mcp_ctx_sleep stands for the work and wakes at once when the client cancels.
 */
static json_t *tool_count(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)user;
    json_int_t to = json_integer_value(json_object_get(args, "to"));
    if (to == 0)
        to = 3; /* the schema's default, which the client may leave out */
    for (json_int_t i = 1; i <= to; i++) {
        if (mcp_ctx_sleep(ctx, 20) != MCP_OK)
            return mcp_tool_error("cancelled at %lld of %lld", (long long)i, (long long)to);
        char message[64];
        snprintf(message, sizeof(message), "counted %lld of %lld", (long long)i, (long long)to);
        int rc = mcp_ctx_progress(ctx, (double)i, (double)to, message);
        if (rc == MCP_OK)
            rc = mcp_ctx_logf(ctx, MCP_LOG_INFO, "%s", message);
        if (rc != MCP_OK) /* MCP_ECANCELED: nobody waits for the rest */
            return mcp_tool_error("cannot report progress: %s", mcp_strerror(rc));
    }
    char text[64];
    snprintf(text, sizeof(text), "counted to %lld", (long long)to);
    return mcp_text_result(text);
}

/* notes://index, the fixed resource: one note name a line. */
static json_t *read_index(mcp_ctx *ctx, const char *uri, const json_t *vars, void *user)
{
    (void)ctx, (void)vars, (void)user;
    char text[256] = "";
    size_t len = 0;
    for (size_t i = 0; i < NOTE_COUNT && len < sizeof(text); i++)
        len += (size_t)snprintf(text + len, sizeof(text) - len, "%s\n", notes[i].name);
    return mcp_resource_text(uri, "text/plain", text);
}

/* notes://{name}, the template: vars holds the name the URI gave. */
static json_t *read_note(mcp_ctx *ctx, const char *uri, const json_t *vars, void *user)
{
    (void)user;
    const struct note *note = find_note(json_string_value(json_object_get(vars, "name")));
    if (note == NULL) {
        /* Resource not found, as the library answers a URI nothing serves: -32002 until
         * revision 2025-11-25, Invalid Params in 2026-07-28. */
        int modern = strcmp(mcp_ctx_protocol_version(ctx), MCP_PROTOCOL_2026_07_28) == 0;
        mcp_ctx_set_error_data(ctx, modern ? MCP_RPC_INVALID_PARAMS : MCP_RPC_RESOURCE_NOT_FOUND,
                               json_pack("{s:s}", "uri", uri), "no note at %s", uri);
        return NULL;
    }
    return mcp_resource_text(uri, "text/plain", note->text);
}

/* summarize: prompts/get checked that name is there and is a string. */
static json_t *get_summarize(mcp_ctx *ctx, const json_t *args, void *user)
{
    (void)user;
    const char *name = json_string_value(json_object_get(args, "name"));
    const struct note *note = find_note(name);
    if (note == NULL) {
        mcp_ctx_set_error(ctx, MCP_RPC_INVALID_PARAMS, "no note called '%s'", name);
        return NULL;
    }
    char text[512];
    snprintf(text, sizeof(text), "Summarize my note '%s' in one sentence:\n\n%s", note->name,
             note->text);
    return mcp_prompt_result("Summarize a note",
                             json_pack("[o]", mcp_message("user", mcp_text_content(text))));
}

/* Completion of the note names, for the prompt's argument and the template's variable. */
static json_t *complete(mcp_ctx *ctx, const json_t *ref, const char *arg_name,
                        const char *arg_value, const json_t *context_args, void *user)
{
    (void)ctx, (void)ref, (void)context_args, (void)user;
    json_t *values = json_array();
    if (values == NULL || arg_value == NULL || strcmp(arg_name, "name") != 0)
        return values; /* both refs name their argument "name"; others get nothing */
    for (size_t i = 0; i < NOTE_COUNT; i++)
        if (strncmp(notes[i].name, arg_value, strlen(arg_value)) == 0 &&
            json_array_append_new(values, json_string(notes[i].name)) != 0) {
            json_decref(values);
            return NULL;
        }
    return values;
}

static int add_everything(mcp_server *srv)
{
    mcp_tool_def add = {
        .size = sizeof(add),
        .name = "add",
        .title = "Add two numbers",
        .description = "Returns a + b",
        .input_schema = "{\"type\":\"object\",\"properties\":{"
                        "\"a\":{\"type\":\"number\"},\"b\":{\"type\":\"number\"}},"
                        "\"required\":[\"a\",\"b\"],\"additionalProperties\":false}",
        .output_schema = "{\"type\":\"object\",\"properties\":{\"sum\":{\"type\":\"number\"}},"
                         "\"required\":[\"sum\"]}",
        .annotations = "{\"readOnlyHint\":true}",
        .fn = tool_add,
    };
    mcp_tool_def count = {
        .size = sizeof(count),
        .name = "count",
        .description = "Counts slowly to `to`, reporting progress and logging each step",
        .input_schema = "{\"type\":\"object\",\"properties\":{\"to\":{\"type\":\"integer\","
                        "\"minimum\":1,\"maximum\":100,\"default\":3}}}",
        .fn = tool_count,
    };
    mcp_resource_def index = {
        .struct_size = sizeof(index),
        .uri = "notes://index",
        .name = "index",
        .description = "The names of the notes, one a line",
        .mime_type = "text/plain",
        .fn = read_index,
    };
    mcp_resource_template_def note = {
        .size = sizeof(note),
        .uri_template = "notes://{name}",
        .name = "note",
        .description = "One note, by name",
        .mime_type = "text/plain",
        .fn = read_note,
    };
    static const mcp_prompt_arg summarize_args[] = {
        {.name = "name", .description = "The note to summarize", .required = 1},
        {.name = NULL},
    };
    mcp_prompt_def summarize = {
        .size = sizeof(summarize),
        .name = "summarize",
        .description = "Asks for a one-sentence summary of a note",
        .args = summarize_args,
        .fn = get_summarize,
    };
    int rc = mcp_server_add_tool_def(srv, &add);
    if (rc == MCP_OK)
        rc = mcp_server_add_tool_def(srv, &count);
    if (rc == MCP_OK)
        rc = mcp_server_add_resource(srv, &index);
    if (rc == MCP_OK)
        rc = mcp_server_add_resource_template(srv, &note);
    if (rc == MCP_OK)
        rc = mcp_server_add_prompt(srv, &summarize);
    if (rc == MCP_OK)
        rc = mcp_server_set_completion(srv, complete, NULL);
    return rc;
}

int main(void)
{
    mcp_server *srv = mcp_server_new("notes", "1.0.0");
    if (srv == NULL) {
        fprintf(stderr, NAME ": %s\n", mcp_strerror(MCP_ENOMEM));
        return 1;
    }
    int rc = add_everything(srv);
    if (rc != MCP_OK)
        fprintf(stderr, NAME ": cannot register: %s\n", mcp_strerror(rc));
    else if ((rc = mcp_serve_stdio(srv)) != MCP_OK) /* until stdin ends, or a signal */
        fprintf(stderr, NAME ": serving stdio failed: %s\n", mcp_strerror(rc));
    mcp_server_free(srv);
    return rc == MCP_OK ? 0 : 1;
}
