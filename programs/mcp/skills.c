/* SPDX-License-Identifier: MIT */
/*
 * `mcp skills list` and `mcp skills get NAME|URI [FILE]`: a server's skills (SEP-2640),
 * each file read and verified against its entry (size, SHA-256 digest, frontmatter)
 * by mcp_client_read_skill before a byte of it is printed.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Prints text's first line, control characters as '?'. */
static void first_line(FILE *f, const char *text)
{
    cli_put_text(f, text, NULL);
}

static int failed(const char *what, int rc, mcp_rpc_error *err)
{
    if (rc == MCP_ENOTSUP) {
        cli_errorf("mcp: the server does not offer skills (server: %s)\n", cli_server_name());
        return CLI_EXIT_ERROR;
    }
    if (rc == MCP_EPROTO || rc == MCP_ENOENT || rc == MCP_ELIMIT || rc == MCP_EINVAL) {
        cli_status_done();
        fprintf(stderr, "mcp: %s: ", what);
        cli_put_text(stderr, err->message, NULL); /* it may quote what the server sent */
        fputc('\n', stderr);
        mcp_rpc_error_clear(err);
        return CLI_EXIT_ERROR;
    }
    return cli_report_failure(what, rc, err);
}

static int skills_list(mcp_client *c, bool json)
{
    json_t *skills = NULL;
    mcp_rpc_error err = {0};
    int rc = mcp_client_list_skills(c, &skills, &err);
    if (rc != MCP_OK)
        return failed("skills/list", rc, &err);
    if (json) {
        cli_print_json(stdout, skills);
    } else {
        size_t i;
        json_t *e;
        json_array_foreach(skills, i, e)
        {
            const json_t *fm = json_object_get(e, "frontmatter");
            const json_t *res = json_object_get(e, "resources");
            first_line(stdout, json_string_value(json_object_get(fm, "name")));
            fputs("  ", stdout);
            first_line(stdout, json_string_value(json_object_get(fm, "description")));
            fputs("\n    ", stdout);
            first_line(stdout, json_string_value(json_object_get(e, "uri")));
            if (json_is_array(res))
                printf(" (%zu file%s)\n", json_array_size(res),
                       json_array_size(res) == 1 ? "" : "s");
            else
                fputs(" (dynamic)\n", stdout);
        }
        if (json_array_size(skills) == 0)
            puts("(no skills)");
    }
    json_decref(skills);
    return CLI_EXIT_OK;
}

/* The entry of target: a skill:// URI (skills/get), else a name (from the list). */
static int find_skill(mcp_client *c, const char *target, json_t **skill)
{
    mcp_rpc_error err = {0};
    int rc;
    if (strncmp(target, "skill://", 8) == 0) {
        rc = mcp_client_get_skill(c, target, skill, &err);
        return rc == MCP_OK ? CLI_EXIT_OK : failed("skills/get", rc, &err);
    }
    json_t *skills = NULL;
    rc = mcp_client_list_skills(c, &skills, &err);
    if (rc != MCP_OK)
        return failed("skills/list", rc, &err);
    size_t i;
    json_t *e;
    json_array_foreach(skills, i, e)
    {
        const char *name =
            json_string_value(json_object_get(json_object_get(e, "frontmatter"), "name"));
        if (name != NULL && strcmp(name, target) == 0) {
            *skill = json_incref(e);
            break;
        }
    }
    json_decref(skills);
    if (*skill != NULL)
        return CLI_EXIT_OK;
    cli_errorf("mcp: the server has no skill named %s (server: %s)\n", target, cli_server_name());
    return CLI_EXIT_ERROR;
}

static int skills_get(mcp_client *c, const char *target, const char *file, bool json)
{
    json_t *skill = NULL;
    int code = find_skill(c, target, &skill);
    if (code != CLI_EXIT_OK)
        return code;
    if (json && file == NULL) {
        cli_print_json(stdout, skill);
        json_decref(skill);
        return CLI_EXIT_OK;
    }
    char *data = NULL;
    size_t len = 0;
    mcp_rpc_error err = {0};
    int rc = mcp_client_read_skill(c, skill, file, &data, &len, &err);
    json_decref(skill);
    if (rc != MCP_OK)
        return failed("resources/read", rc, &err);
    /* The verified bytes as they are; a terminal gets a summary of a binary file. */
    json_t *text = json_stringn(data, len);
    if (text == NULL && isatty(STDOUT_FILENO) == 1)
        printf("(binary, %zu bytes: redirect the output to keep them)\n", len);
    else
        fwrite(data, 1, len, stdout);
    json_decref(text);
    free(data);
    return CLI_EXIT_OK;
}

int cli_skills(mcp_client *c, const char *target, const char *file, bool json)
{
    return target == NULL ? skills_list(c, json) : skills_get(c, target, file, json);
}
