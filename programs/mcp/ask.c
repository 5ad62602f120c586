/* SPDX-License-Identifier: MIT */
/*
 * The server's questions, answered by the user: sampling/createMessage (the user
 * writes the model's reply), elicitation/create in form mode (field by field, with
 * the schema's types, choices and defaults) and in URL mode (the URL shown, and
 * opened in a browser when the user agrees), and roots/list (the --root
 * directories, else the current one).
 *
 * Questions and what the server sent go to stderr, its text with control
 * characters replaced (a server must not be able to drive the terminal);
 * answers are lines read from stdin. One question at a time: a second one waits
 * for the first to be answered. The end of stdin declines (sampling) or cancels
 * (elicitation) the question asked and every later one.
 */
#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* The longest answer line kept; a longer one is refused and asked again. */
#define ANSWER_MAX 65536

static pthread_mutex_t ask_lock = PTHREAD_MUTEX_INITIALIZER;
static bool input_ended;
static bool echo, echo_checked;

/* Server text on stderr: see cli_put_text. */
static void put_text(const char *text)
{
    cli_put_text(stderr, text, "    ");
}

/* put_text of "prefix", then text (when a string) and a newline. */
static void show(const char *prefix, const char *text)
{
    if (text == NULL)
        return;
    fputs(prefix, stderr);
    put_text(text);
    fputc('\n', stderr);
}

/*
 * Asks: prints prompt, reads one line into a malloc'd string without its newline.
 * NULL at the end of input (from then on every question gets NULL). A line longer
 * than ANSWER_MAX or with a NUL byte is refused and asked again.
 */
static char *ask_line(const char *prompt)
{
    for (;;) {
        if (input_ended)
            return NULL;
        fputs(prompt, stderr);
        fflush(stderr);
        char *line = NULL;
        size_t cap = 0;
        ssize_t n = getline(&line, &cap, stdin);
        if (n < 0) {
            free(line);
            input_ended = true;
            fputc('\n', stderr);
            return NULL;
        }
        if (n > 0 && line[n - 1] == '\n')
            line[--n] = '\0';
        if (n > 0 && line[n - 1] == '\r')
            line[--n] = '\0';
        if ((size_t)n <= ANSWER_MAX && strlen(line) == (size_t)n) {
            if (!echo_checked) { /* a terminal shows what was typed; a pipe does not */
                echo = isatty(STDIN_FILENO) != 1;
                echo_checked = true;
            }
            if (echo) {
                put_text(line);
                fputc('\n', stderr);
            }
            return line;
        }
        free(line);
        fputs("  (too long, or not text: again)\n", stderr);
    }
}

/* A JSON string of line, or NULL (and a word to the user) when it is not UTF-8. */
static json_t *utf8_string(const char *line)
{
    json_t *s = json_string(line);
    if (s == NULL)
        fputs("  (not valid UTF-8: again)\n", stderr);
    return s;
}

/* ---- sampling ---- */

/* One content block of a sampling message: text as it is, anything else named. */
static void show_content(const char *role, const json_t *block)
{
    const char *type = json_string_value(json_object_get(block, "type"));
    const char *text = json_string_value(json_object_get(block, "text"));
    fputs("  [", stderr);
    put_text(role);
    fputs("] ", stderr);
    if (type != NULL && strcmp(type, "text") == 0 && text != NULL) {
        put_text(text);
        fputc('\n', stderr);
        return;
    }
    const char *mime = json_string_value(json_object_get(block, "mimeType"));
    const char *data = json_string_value(json_object_get(block, "data"));
    fputc('(', stderr);
    put_text(type != NULL ? type : "content");
    if (mime != NULL) {
        fputs(" ", stderr);
        put_text(mime);
    }
    if (data != NULL)
        fprintf(stderr, ", %zu bytes", cli_base64_decoded_len(data));
    fputs(")\n", stderr);
}

static json_t *on_sampling(mcp_client *c, const json_t *params, mcp_rpc_error *err, void *user)
{
    (void)c, (void)user;
    pthread_mutex_lock(&ask_lock);
    cli_status_done();
    fputs("\nmcp: the server asks for a reply from the model (sampling/createMessage):\n", stderr);
    show("  system: ", json_string_value(json_object_get(params, "systemPrompt")));
    size_t i;
    json_t *m;
    json_array_foreach(json_object_get(params, "messages"), i, m)
    {
        const char *role = json_string_value(json_object_get(m, "role"));
        const json_t *content = json_object_get(m, "content");
        if (role == NULL)
            role = "?";
        if (json_is_array(content)) {
            size_t j;
            json_t *block;
            json_array_foreach(content, j, block) show_content(role, block);
        } else {
            show_content(role, content);
        }
    }
    json_t *max = json_object_get(params, "maxTokens");
    if (json_is_integer(max))
        fprintf(stderr, "  (at most %" JSON_INTEGER_FORMAT " tokens)\n", json_integer_value(max));
    json_t *result = NULL;
    for (;;) {
        char *line = ask_line("Reply as the model (one line; empty: decline): ");
        if (line == NULL || line[0] == '\0') {
            free(line);
            break;
        }
        json_t *text = utf8_string(line);
        free(line);
        if (text == NULL)
            continue;
        result = json_pack("{s:s, s:{s:s, s:o}, s:s, s:s}", "role", "assistant", "content", "type",
                           "text", "text", text, "model", "mcp-cli-user", "stopReason", "endTurn");
        break;
    }
    if (result == NULL) {
        /* The code and message the specification gives for a user's refusal. */
        err->code = -1;
        snprintf(err->message, sizeof err->message, "User rejected sampling request");
        fputs("mcp: declined\n", stderr);
    }
    pthread_mutex_unlock(&ask_lock);
    return result;
}

/* ---- elicitation ---- */

/* The choices of a property: its enum (or oneOf/anyOf consts, with titles), or, for
 * an array, its items'. NULL when it has none. values/titles are borrowed arrays. */
typedef struct choices {
    const json_t *values; /* an enum array, or NULL when from consts */
    const json_t *consts; /* oneOf/anyOf: [{const, title}], or NULL */
    const json_t *names;  /* legacy enumNames, or NULL */
} choices;

static bool get_choices(const json_t *schema, choices *ch)
{
    memset(ch, 0, sizeof *ch);
    ch->values = json_object_get(schema, "enum");
    ch->names = json_object_get(schema, "enumNames");
    ch->consts = json_object_get(schema, "oneOf");
    if (ch->consts == NULL)
        ch->consts = json_object_get(schema, "anyOf");
    if (!json_is_array(ch->values))
        ch->values = NULL;
    if (!json_is_array(ch->consts))
        ch->consts = NULL;
    if (!json_is_array(ch->names))
        ch->names = NULL;
    return ch->values != NULL || ch->consts != NULL;
}

static size_t choice_count(const choices *ch)
{
    return json_array_size(ch->values != NULL ? ch->values : ch->consts);
}

/* The value of choice i (a string), and its title or NULL. */
static const char *choice_value(const choices *ch, size_t i, const char **title)
{
    if (ch->values != NULL) {
        *title = json_string_value(json_array_get(ch->names, i));
        return json_string_value(json_array_get(ch->values, i));
    }
    const json_t *item = json_array_get(ch->consts, i);
    *title = json_string_value(json_object_get(item, "title"));
    return json_string_value(json_object_get(item, "const"));
}

static void show_choices(const choices *ch)
{
    for (size_t i = 0; i < choice_count(ch); i++) {
        const char *title;
        const char *value = choice_value(ch, i, &title);
        fprintf(stderr, "      %zu) ", i + 1);
        put_text(value != NULL ? value : "?");
        if (title != NULL) {
            fputs("  ", stderr);
            put_text(title);
        }
        fputc('\n', stderr);
    }
}

/* One choice from a word: its number, or its value exactly. NULL when it is neither. */
static const char *pick(const choices *ch, const char *word)
{
    char *end;
    errno = 0;
    unsigned long k = strtoul(word, &end, 10);
    const char *title;
    if (word[0] >= '0' && word[0] <= '9' && *end == '\0' && errno == 0 && k >= 1 &&
        k <= choice_count(ch))
        return choice_value(ch, k - 1, &title);
    for (size_t i = 0; i < choice_count(ch); i++) {
        const char *value = choice_value(ch, i, &title);
        if (value != NULL && strcmp(value, word) == 0)
            return value;
    }
    return NULL;
}

/* Trims spaces at both ends, in place. */
static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
    return s;
}

/* The value of one answer line for a property of type type, or NULL (and a word to
 * the user) when the line does not give one. */
static json_t *parse_answer(const char *type, const json_t *schema, char *line)
{
    choices ch;
    if (strcmp(type, "array") == 0) {
        if (!get_choices(json_object_get(schema, "items"), &ch)) {
            fputs("  (mcp cannot fill in this list: leave it empty)\n", stderr);
            return NULL;
        }
        json_t *list = json_array();
        char *save = NULL;
        for (char *w = strtok_r(line, ",", &save); w != NULL && list != NULL;
             w = strtok_r(NULL, ",", &save)) {
            const char *v = pick(&ch, trim(w));
            if (v == NULL) {
                fputs("  (not one of the choices: again)\n", stderr);
                json_decref(list);
                return NULL;
            }
            json_array_append_new(list, json_string(v));
        }
        return list;
    }
    if (strcmp(type, "boolean") == 0) {
        if (strcasecmp(line, "y") == 0 || strcasecmp(line, "yes") == 0 ||
            strcasecmp(line, "true") == 0)
            return json_true();
        if (strcasecmp(line, "n") == 0 || strcasecmp(line, "no") == 0 ||
            strcasecmp(line, "false") == 0)
            return json_false();
        fputs("  (y or n: again)\n", stderr);
        return NULL;
    }
    if (strcmp(type, "integer") == 0) {
        char *end;
        errno = 0;
        long long v = strtoll(line, &end, 10);
        if (line[0] != '\0' && *end == '\0' && errno == 0)
            return json_integer(v);
        fputs("  (a whole number: again)\n", stderr);
        return NULL;
    }
    if (strcmp(type, "number") == 0) {
        char *end;
        errno = 0;
        double v = strtod(line, &end);
        if (line[0] != '\0' && *end == '\0' && errno == 0 && isfinite(v))
            return v == floor(v) && fabs(v) < 9e15 ? json_integer((json_int_t)v) : json_real(v);
        fputs("  (a number: again)\n", stderr);
        return NULL;
    }
    if (get_choices(schema, &ch)) {
        const char *v = pick(&ch, line);
        if (v != NULL)
            return json_string(v);
        fputs("  (not one of the choices: again)\n", stderr);
        return NULL;
    }
    return utf8_string(line);
}

/* Asks for one property. 0 with *value set (NULL: left out), or -1 at the end of input. */
static int ask_property(const char *name, const json_t *schema, bool required, json_t **value)
{
    *value = NULL;
    const char *type = json_string_value(json_object_get(schema, "type"));
    if (type == NULL)
        type = "string";
    const char *title = json_string_value(json_object_get(schema, "title"));
    const char *description = json_string_value(json_object_get(schema, "description"));
    const json_t *def = json_object_get(schema, "default");
    fputs("  ", stderr);
    put_text(title != NULL ? title : name);
    fputs(" (", stderr);
    put_text(type);
    fputs(required ? ", required)" : ")", stderr);
    if (description != NULL) {
        fputs(": ", stderr);
        put_text(description);
    }
    fputc('\n', stderr);
    choices ch;
    if (get_choices(strcmp(type, "array") == 0 ? json_object_get(schema, "items") : schema, &ch))
        show_choices(&ch);
    /* The default is shown: an empty answer sends it. */
    char *def_text = def != NULL ? json_dumps(def, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
    if (def_text != NULL) {
        fputs("    default (an empty answer): ", stderr);
        put_text(def_text);
        fputc('\n', stderr);
    }
    free(def_text);
    char prompt[256];
    snprintf(prompt, sizeof prompt, "    %s%s: ",
             strcmp(type, "array") == 0     ? "numbers or values, comma-separated"
             : strcmp(type, "boolean") == 0 ? "y or n"
                                            : "value",
             def != NULL || required ? "" : " [empty: none]");
    for (;;) {
        char *raw = ask_line(prompt);
        if (raw == NULL)
            return -1;
        char *line = trim(raw);
        if (line[0] == '\0') {
            free(raw);
            if (def != NULL || !required)
                return 0; /* the library fills in the default */
            fputs("  (required: again)\n", stderr);
            continue;
        }
        *value = parse_answer(type, schema, line);
        free(raw);
        if (*value != NULL)
            return 0;
    }
}

static json_t *answer(const char *action, json_t *content)
{
    json_t *r = json_pack("{s:s}", "action", action);
    if (r != NULL && content != NULL)
        json_object_set(r, "content", content);
    json_decref(content);
    return r;
}

static json_t *elicit_url(const json_t *params)
{
    const char *url = json_string_value(json_object_get(params, "url"));
    show("  ", json_string_value(json_object_get(params, "message")));
    bool fine = url != NULL &&
                (strncasecmp(url, "https://", 8) == 0 || strncasecmp(url, "http://", 7) == 0);
    for (const char *p = url; fine && *p != '\0'; p++)
        fine = (unsigned char)*p > 0x20 && (unsigned char)*p < 0x7f;
    if (!fine) {
        fputs("mcp: the URL is not an http(s) URL that can be shown: declined\n", stderr);
        return answer("decline", NULL);
    }
    fprintf(stderr, "  URL: %s\n", url);
    char *line = ask_line("Open it? [y/N] ");
    bool yes =
        line != NULL && (strcasecmp(trim(line), "y") == 0 || strcasecmp(trim(line), "yes") == 0);
    free(line);
    if (!yes)
        return answer(input_ended ? "cancel" : "decline", NULL);
    cli_open_browser(url);
    return answer("accept", NULL);
}

static json_t *elicit_form(const json_t *params)
{
    show("  ", json_string_value(json_object_get(params, "message")));
    char *line = ask_line("Answer? [Y]es, [n]o (decline), [c]ancel: ");
    if (line == NULL)
        return answer("cancel", NULL);
    char *word = trim(line);
    const char *action =
        word[0] == '\0' || strcasecmp(word, "y") == 0 || strcasecmp(word, "yes") == 0 ? "accept"
        : strcasecmp(word, "n") == 0 || strcasecmp(word, "no") == 0                   ? "decline"
                                                                                      : "cancel";
    free(line);
    if (strcmp(action, "accept") != 0)
        return answer(action, NULL);
    const json_t *schema = json_object_get(params, "requestedSchema");
    const json_t *required = json_object_get(schema, "required");
    json_t *content = json_object();
    const char *name;
    json_t *prop;
    json_object_foreach((json_t *)json_object_get(schema, "properties"), name, prop)
    {
        json_t *value;
        if (ask_property(name, prop, cli_is_required(required, name), &value) != 0) {
            json_decref(content);
            return answer("cancel", NULL);
        }
        if (value != NULL)
            json_object_set_new(content, name, value);
    }
    return answer("accept", content);
}

static json_t *on_elicitation(mcp_client *c, const json_t *params, mcp_rpc_error *err, void *user)
{
    (void)c, (void)err, (void)user;
    pthread_mutex_lock(&ask_lock);
    cli_status_done();
    const char *mode = json_string_value(json_object_get(params, "mode"));
    bool url = mode != NULL && strcmp(mode, "url") == 0;
    fprintf(stderr, "\nmcp: the server asks you%s (elicitation/create):\n",
            url ? " to open a URL" : "");
    json_t *result = url ? elicit_url(params) : elicit_form(params);
    const char *action = json_string_value(json_object_get(result, "action"));
    if (action != NULL && strcmp(action, "accept") != 0)
        fprintf(stderr, "mcp: %s\n", strcmp(action, "decline") == 0 ? "declined" : "cancelled");
    pthread_mutex_unlock(&ask_lock);
    return result;
}

/* ---- setting up ---- */

/* file:// URI of a directory (absolute, as realpath gives it, its bytes outside the
 * unreserved set and '/' percent-encoded), or NULL. */
static json_t *root_of(const char *dir)
{
    char *path = realpath(dir, NULL);
    if (path == NULL)
        return NULL;
    size_t n = strlen(path);
    char *uri = malloc(7 + 3 * n + 1);
    json_t *root = NULL;
    if (uri != NULL) {
        char *p = uri + sprintf(uri, "file://");
        for (const unsigned char *s = (const unsigned char *)path; *s != '\0'; s++) {
            if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
                strchr("/-._~", *s) != NULL)
                *p++ = (char)*s;
            else
                p += sprintf(p, "%%%02X", *s);
        }
        *p = '\0';
        const char *base = strrchr(path, '/');
        root = json_pack("{s:s, s:s}", "uri", uri, "name",
                         base != NULL && base[1] != '\0' ? base + 1 : path);
    }
    free(uri);
    free(path);
    return root;
}

int cli_ask_setup(mcp_client *c, bool interactive, const char *const *roots, size_t nroots)
{
    if (nroots > 0 || interactive) {
        json_t *list = json_array();
        for (size_t i = 0; list != NULL && i < (nroots > 0 ? nroots : 1); i++) {
            const char *dir = nroots > 0 ? roots[i] : ".";
            json_t *root = root_of(dir);
            if (root == NULL) {
                cli_errorf("mcp: --root %s: %s\n", dir, strerror(errno));
                json_decref(list);
                return CLI_EXIT_USAGE;
            }
            json_array_append_new(list, root);
        }
        int rc = list != NULL ? mcp_client_set_roots(c, list) : MCP_ENOMEM;
        json_decref(list);
        if (rc != MCP_OK)
            return cli_report_failure("roots", rc, NULL);
    }
    if (!interactive)
        return CLI_EXIT_OK;
    mcp_client_caps caps = {
        .size = sizeof caps, .elicitation_form = MCP_CAP_ON, .elicitation_url = MCP_CAP_ON};
    int rc = mcp_client_on_sampling(c, on_sampling, NULL);
    if (rc == MCP_OK)
        rc = mcp_client_on_elicitation(c, on_elicitation, NULL);
    if (rc == MCP_OK)
        rc = mcp_client_set_caps(c, &caps);
    return rc == MCP_OK ? CLI_EXIT_OK : cli_report_failure("questions", rc, NULL);
}
