/* SPDX-License-Identifier: MIT */
/*
 * Skills served by the library (mcp_server_add_skills), driven by our client over
 * Streamable HTTP in both eras: the API's answers (counts, a second call, a folder that
 * is missing), and what a hostile folder or client cannot do: a file changed after the
 * catalog was read, or a folder swapped for a symbolic link to elsewhere, is answered
 * -32603 and nothing of it is sent; URIs that climb out (.., %2e%2e), a cursor the server
 * never gave, a missing uri: -32602. The SDK's own host-side checks of the same catalog
 * are interop_skills'.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <mcp/mcp.h>

#include "cli_run.h"
#include "harness.h"
#include "inproc_host.h"

#define WAIT_MS 10000

static char root[256];

static void put(const char *rel, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    for (char *p = path + strlen(root) + 1; *p != '\0'; p++) {
        if (*p == '/') {
            *p = '\0';
            mkdir(path, 0700);
            *p = '/';
        }
    }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/libmcp-skills-XXXXXX");
    assert_non_null(mkdtemp(root));
    put("alpha/SKILL.md", "---\nname: alpha\ndescription: The first skill\n---\nUse it.\n");
    put("alpha/refs/guide.md", "a guide\n");
    put("beta/SKILL.md", "---\nname: beta\ndescription: The second\n---\n");
    put("outside/secret.txt", "not a skill's\n");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

/* The request's result, or NULL with *code set to the JSON-RPC error's code. */
static json_t *ask(mcp_client *c, const char *method, json_t *params, int *code)
{
    json_t *result = NULL;
    mcp_rpc_error err = {0};
    int rc = mcp_client_request(c, method, params, NULL, &result, &err);
    *code = rc == MCP_ERPC ? err.code : 0;
    if (rc != MCP_OK && rc != MCP_ERPC)
        fail_msg("%s: %s", method, mcp_strerror(rc));
    mcp_rpc_error_clear(&err);
    return result;
}

static json_t *noop(mcp_ctx *ctx, const json_t *params, void *user)
{
    (void)ctx, (void)params, (void)user;
    return json_object();
}

static void test_the_api(void **state)
{
    (void)state;
    mcp_server *srv = mcp_server_new("skills", "1.0.0");
    size_t n = 99;
    assert_int_equal(mcp_server_add_skills(NULL, root, &n), MCP_EINVAL);
    assert_int_equal(mcp_server_add_skills(srv, NULL, &n), MCP_EINVAL);
    assert_int_equal(mcp_server_add_skills(srv, "/no/such/folder", &n), MCP_EIO);
    assert_int_equal(n, 0);
    assert_int_equal(mcp_server_add_skills(srv, root, &n), MCP_OK);
    assert_int_equal(n, 2);
    assert_int_equal(mcp_server_add_skills(srv, root, NULL), MCP_EEXIST);
    mcp_server_free(srv);

    /* The program has a method of the extension's: nothing of it stays, and once the
     * method is gone the skills can be added. */
    srv = mcp_server_new("skills", "1.0.0");
    mcp_method_def m = {.size = sizeof m, .method = "skills/get", .fn = noop};
    assert_int_equal(mcp_server_add_method(srv, &m), MCP_OK);
    assert_int_equal(mcp_server_add_skills(srv, root, &n), MCP_EEXIST);
    assert_int_equal(n, 0);
    assert_int_equal(mcp_server_remove_method(srv, "skills/list"), MCP_ENOENT);
    assert_int_equal(mcp_server_remove_resource_template(srv, "skill://{+path}"), MCP_ENOENT);
    assert_int_equal(mcp_server_remove_extension(srv, "io.modelcontextprotocol/skills"),
                     MCP_ENOENT);
    assert_int_equal(mcp_server_remove_method(srv, "skills/get"), MCP_OK);
    assert_int_equal(mcp_server_add_skills(srv, root, &n), MCP_OK);
    assert_int_equal(n, 2);
    mcp_server_free(srv);

    /* A name with a NUL escaped in it is no name; a FIFO is no file. */
    put("nul/SKILL.md", "---\nname: \"nul\\0x\"\ndescription: x\n---\n");
    char fifo[512];
    snprintf(fifo, sizeof fifo, "%s/alpha/pipe", root);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    srv = mcp_server_new("skills", "1.0.0");
    assert_int_equal(mcp_server_add_skills(srv, root, &n), MCP_OK);
    assert_int_equal(n, 1); /* beta: alpha holds a FIFO, nul a NUL */
    mcp_server_free(srv);
    assert_int_equal(unlink(fifo), 0);
    char nul[512];
    snprintf(nul, sizeof nul, "rm -r '%s/nul'", root);
    assert_int_equal(system(nul), 0);
}

static void hostile(const char *protocol)
{
    mcp_server *srv = mcp_server_new("skills", "1.0.0");
    assert_int_equal(mcp_server_add_skills(srv, root, NULL), MCP_OK);
    ih_host h;
    ih_start(&h, srv);
    mcp_client *c = mcp_client_new("skills-test", "1.0.0");
    assert_int_equal(mcp_client_set_protocol(c, protocol), MCP_OK);
    assert_int_equal(mcp_client_connect_http(c, h.url, NULL, WAIT_MS), MCP_OK);
    const json_t *ext = mcp_client_server_extension(c, "io.modelcontextprotocol/skills");
    assert_true(json_is_true(json_object_get(ext, "directoryRead")));

    int code;
    json_t *r =
        ask(c, "resources/read", json_pack("{s:s}", "uri", "skill://alpha/refs/guide.md"), &code);
    assert_non_null(r);
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(json_object_get(r, "contents"), 0), "text")),
                        "a guide\n");
    json_decref(r);

    /* Changed after the catalog was read (same size, other bytes): not sent. */
    put("alpha/refs/guide.md", "A GUIDE\n");
    assert_null(
        ask(c, "resources/read", json_pack("{s:s}", "uri", "skill://alpha/refs/guide.md"), &code));
    assert_int_equal(code, -32603);
    put("alpha/refs/guide.md", "a guide\n");

    /* The folder swapped for a link to elsewhere: the file is not followed there. */
    char refs[512], moved[512], target[512];
    snprintf(refs, sizeof refs, "%s/alpha/refs", root);
    snprintf(moved, sizeof moved, "%s/alpha/refs-moved", root);
    snprintf(target, sizeof target, "%s/outside", root);
    assert_int_equal(rename(refs, moved), 0);
    put("outside/guide.md", "a guide\n"); /* even the same bytes */
    assert_int_equal(symlink(target, refs), 0);
    assert_null(
        ask(c, "resources/read", json_pack("{s:s}", "uri", "skill://alpha/refs/guide.md"), &code));
    assert_int_equal(code, -32603);
    assert_int_equal(unlink(refs), 0);
    assert_int_equal(rename(moved, refs), 0);

    /* A FIFO put in a file's place: refused at once, no worker blocked on it. */
    char guide[512], kept[512];
    snprintf(guide, sizeof guide, "%s/alpha/refs/guide.md", root);
    snprintf(kept, sizeof kept, "%s/alpha/refs/guide.kept", root);
    assert_int_equal(rename(guide, kept), 0);
    assert_int_equal(mkfifo(guide, 0600), 0);
    assert_null(
        ask(c, "resources/read", json_pack("{s:s}", "uri", "skill://alpha/refs/guide.md"), &code));
    assert_int_equal(code, -32603);
    assert_int_equal(unlink(guide), 0);
    assert_int_equal(rename(kept, guide), 0);

    /* URIs that climb, or are not the catalog's: not found. */
    const char *const climbing[] = {"skill://alpha/../outside/secret.txt",
                                    "skill://alpha/refs/%2e%2e/%2e%2e/outside/secret.txt",
                                    "skill://outside/secret.txt", "skill://alpha/refs/guide.md/"};
    for (size_t i = 0; i < sizeof climbing / sizeof climbing[0]; i++) {
        assert_null(ask(c, "resources/read", json_pack("{s:s}", "uri", climbing[i]), &code));
        /* Resource not found, as the revision spells it. */
        if (code != (strcmp(protocol, MCP_PROTOCOL_2026_07_28) == 0 ? -32602 : -32002))
            fail_msg("%s: %d", climbing[i], code);
    }
    /* A folder is no file; a file is no folder. */
    assert_null(ask(c, "resources/read", json_pack("{s:s}", "uri", "skill://alpha/refs"), &code));
    assert_int_equal(code, -32602);
    assert_null(ask(c, "resources/directory/read",
                    json_pack("{s:s}", "uri", "skill://alpha/SKILL.md"), &code));
    assert_int_equal(code, -32602);
    /* A cursor never given, a uri missing or not a string. */
    assert_null(ask(c, "skills/list", json_pack("{s:s}", "cursor", "x"), &code));
    assert_int_equal(code, -32602);
    assert_null(ask(c, "skills/get", json_object(), &code));
    assert_int_equal(code, -32602);
    assert_null(ask(c, "skills/get", json_pack("{s:i}", "uri", 1), &code));
    assert_int_equal(code, -32602);
    /* And after all that, the catalog still answers. */
    r = ask(c, "skills/get", json_pack("{s:s}", "uri", "skill://beta/SKILL.md"), &code);
    assert_non_null(r);
    assert_string_equal(
        json_string_value(json_object_get(
            json_object_get(json_object_get(r, "skill"), "frontmatter"), "description")),
        "The second");
    if (strcmp(protocol, MCP_PROTOCOL_2026_07_28) == 0)
        assert_string_equal(json_string_value(json_object_get(r, "cacheScope")), "private");
    json_decref(r);
    mcp_client_free(c);
    ih_stop(&h);
}

static void test_hostile_folder_and_client_2025_11_25(void **state)
{
    (void)state;
    hostile("2025-11-25");
}

static void test_hostile_folder_and_client_2026_07_28(void **state)
{
    (void)state;
    hostile(MCP_PROTOCOL_2026_07_28);
}

/* A server that says what it likes: an entry whose digest, size or frontmatter is not
 * its file's, an entry that does not list its own SKILL.md. */
static json_t *lying_list(mcp_ctx *ctx, const json_t *params, void *user)
{
    (void)ctx, (void)params;
    return json_pack("{s:[O]}", "skills", (json_t *)user);
}

static json_t *evil_read(mcp_ctx *ctx, const char *uri, const json_t *vars, void *user)
{
    (void)ctx, (void)vars, (void)user;
    return json_pack("{s:[{s:s, s:s}]}", "contents", "uri", uri, "text",
                     strcmp(uri, "skill://evil/SKILL.md") == 0
                         ? "---\nname: evil\ndescription: not what the entry says\n---\n"
                         : "12345");
}

static void test_the_client_checks_what_a_server_says(void **state)
{
    (void)state;
    /* "12345": 5 bytes, sha256 5994471a...; the SKILL.md's size and digest are wrong,
     * then right with a frontmatter that differs from the entry's. */
    json_t *entry = json_pack(
        "{s:s, s:{s:s, s:s}, s:[{s:s, s:s, s:i}, {s:s, s:s, s:i}, {s:s, s:s, s:i}]}", "uri",
        "skill://evil/SKILL.md", "frontmatter", "name", "evil", "description", "harmless",
        "resources", "uri", "skill://evil/SKILL.md", "digest",
        "sha256:0000000000000000000000000000000000000000000000000000000000000000", "size", 60,
        "uri", "skill://evil/good.txt", "digest",
        "sha256:5994471abb01112afcc18159f6cc74b4f511b99806da59b3caf5a9c173cacfc5", "size", 5, "uri",
        "skill://evil/bad.txt", "digest",
        "sha256:5994471abb01112afcc18159f6cc74b4f511b99806da59b3caf5a9c173cacfc6", "size", 5);
    mcp_server *srv = mcp_server_new("evil", "1.0.0");
    assert_int_equal(mcp_server_set_extension(srv, "io.modelcontextprotocol/skills", NULL), MCP_OK);
    mcp_method_def m = {.size = sizeof m, .method = "skills/list", .fn = lying_list, .user = entry};
    assert_int_equal(mcp_server_add_method(srv, &m), MCP_OK);
    mcp_resource_template_def t = {
        .size = sizeof t, .uri_template = "skill://{+path}", .name = "evil", .fn = evil_read};
    assert_int_equal(mcp_server_add_resource_template(srv, &t), MCP_OK);
    ih_host h;
    ih_start(&h, srv);
    mcp_client *c = mcp_client_new("skills-test", "1.0.0");
    assert_int_equal(mcp_client_connect_http(c, h.url, NULL, WAIT_MS), MCP_OK);

    json_t *skills = NULL;
    mcp_rpc_error err = {0};
    assert_int_equal(mcp_client_list_skills(c, &skills, &err), MCP_OK);
    const json_t *skill = json_array_get(skills, 0);
    char *data = NULL;
    size_t len = 0;
    assert_int_equal(mcp_client_read_skill(c, skill, "good.txt", &data, &len, &err), MCP_OK);
    assert_int_equal(len, 5);
    assert_string_equal(data, "12345");
    free(data);
    assert_int_equal(mcp_client_read_skill(c, skill, "bad.txt", &data, &len, &err), MCP_EPROTO);
    assert_non_null(strstr(err.message, "digest"));
    assert_null(data);
    assert_int_equal(mcp_client_read_skill(c, skill, NULL, &data, &len, &err), MCP_EPROTO);
    assert_non_null(strstr(err.message, "bytes, not the 60 listed"));
    /* Its size and digest right, its frontmatter not the entry's. */
    json_t *md = json_array_get(json_object_get(skill, "resources"), 0);
    json_object_set_new(md, "size", json_integer(56));
    json_object_set_new(
        md, "digest",
        json_string("sha256:0af98cd7019773bb93d11f8c67a8807b2c04493094d5f5daef182a922f9562d2"));
    assert_int_equal(mcp_client_read_skill(c, skill, NULL, &data, &len, &err), MCP_EPROTO);
    assert_non_null(strstr(err.message, "frontmatter is not the entry's"));
    assert_int_equal(mcp_client_read_skill(c, skill, "../../etc/passwd", &data, &len, &err),
                     MCP_ENOENT);
    json_decref(skills);

    /* Another spelling of the SKILL.md listed first (with its own size and digest): it
     * is refused, not read as an unchecked file. */
    json_t *res = json_object_get(entry, "resources");
    json_array_insert_new(
        res, 0,
        json_pack("{s:s, s:s, s:i}", "uri", "skill://evil/SKILL%2Emd", "digest",
                  "sha256:5994471abb01112afcc18159f6cc74b4f511b99806da59b3caf5a9c1"
                  "73cacfc5",
                  "size", 5));
    assert_int_equal(mcp_client_list_skills(c, &skills, &err), MCP_EPROTO);
    assert_non_null(strstr(err.message, "two resources name one file"));
    json_object_set_new(json_array_get(res, 0), "uri", json_string("skill://evil/x%00y"));
    assert_int_equal(mcp_client_list_skills(c, &skills, &err), MCP_EPROTO);
    assert_non_null(strstr(err.message, "encoded NUL"));
    json_array_remove(res, 0);

    /* An entry that does not list its own SKILL.md fails the whole list. */
    json_array_remove(json_object_get(entry, "resources"), 0);
    assert_int_equal(mcp_client_list_skills(c, &skills, &err), MCP_EPROTO);
    assert_null(skills);
    assert_non_null(strstr(err.message, "do not list its SKILL.md"));
    mcp_client_free(c);
    ih_stop(&h);
    json_decref(entry);
}

static void test_mcp_skills_list_and_get(void **state)
{
    (void)state;
    char everything[4096];
    assert_int_equal(harness_bin_path("mcp-everything", everything, sizeof everything), 0);
    const char *list[] = {"--", everything, "--stdio", "--skills", root, "skills", "list", NULL};
    cr_mcp_expect(list, 0,
                  "alpha  The first skill\n    skill://alpha/SKILL.md (2 files)\n"
                  "beta  The second\n    skill://beta/SKILL.md (1 file)\n",
                  NULL);
    const char *get[] = {"--",     everything, "--stdio", "--skills", root,
                         "skills", "get",      "alpha",   NULL};
    cr_mcp_expect(get, 0, "---\nname: alpha\ndescription: The first skill\n---\nUse it.\n", NULL);
    const char *file[] = {"--",
                          everything,
                          "--stdio",
                          "--skills",
                          root,
                          "skills",
                          "get",
                          "skill://alpha/SKILL.md",
                          "refs/guide.md",
                          NULL};
    cr_mcp_expect(file, 0, "a guide\n", NULL);
    const char *none[] = {"--",     everything, "--stdio", "--skills", root,
                          "skills", "get",      "gamma",   NULL};
    cr_mcp_expect(none, 1, "", "no skill named gamma");
    const char *plain[] = {"--", everything, "--stdio", "skills", "list", NULL};
    cr_mcp_expect(plain, 1, "", "does not offer skills");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_api),
        cmocka_unit_test(test_hostile_folder_and_client_2025_11_25),
        cmocka_unit_test(test_hostile_folder_and_client_2026_07_28),
        cmocka_unit_test(test_the_client_checks_what_a_server_says),
        cmocka_unit_test(test_mcp_skills_list_and_get),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
