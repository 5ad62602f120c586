/* SPDX-License-Identifier: MIT */
/*
 * `mcp` answering the server's questions (programs/mcp/ask.c), against mcp-everything
 * over stdio and over HTTP in both eras: sampling (the user's line is the model's
 * reply; an empty one declines with -1), form elicitation (typed fields, choices by
 * number or value, defaults, a bad value asked again, the end of input cancels), URL
 * elicitation (accepted, declined, and a URL that is no http(s) URL declined without a
 * question), the server's text with its control characters replaced, roots from
 * --root, nothing declared with --no-interactive or when stdin is no terminal, and,
 * in a real terminal (script(1) gives mcp a pseudo-terminal), questions by default.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "cli_run.h"
#include "harness.h"
#include "http_client.h"

static char everything[4096];

/* mcp [flags...] -- mcp-everything --stdio tools call TOOL [args...], with input. */
static void ask_stdio(cr_run *r, const char *const flags[], const char *const call[],
                      const char *input)
{
    const char *args[32];
    size_t n = 0;
    for (size_t i = 0; flags != NULL && flags[i] != NULL; i++)
        args[n++] = flags[i];
    args[n++] = "--";
    args[n++] = everything;
    args[n++] = "--stdio";
    args[n++] = "tools";
    args[n++] = "call";
    for (size_t i = 0; call[i] != NULL; i++)
        args[n++] = call[i];
    args[n] = NULL;
    assert_true(n < 32);
    cr_run_mcp_input(r, args, input);
}

/* out is "Elicitation completed: action=accept, content=<JSON>\n", the JSON equal to want
 * (in any member order). */
static void expect_content(const char *out, const char *want)
{
    static const char prefix[] = "Elicitation completed: action=accept, content=";
    if (strncmp(out, prefix, sizeof prefix - 1) != 0)
        fail_msg("stdout: %s", out);
    json_t *got = json_loads(out + sizeof prefix - 1, JSON_DISABLE_EOF_CHECK, NULL);
    json_t *expected = json_loads(want, 0, NULL);
    if (got == NULL || expected == NULL || !json_equal(got, expected))
        fail_msg("content %s, not %s", out + sizeof prefix - 1, want);
    json_decref(got);
    json_decref(expected);
}

static const char *const interactive[] = {"--interactive", NULL};

static void test_sampling_takes_the_users_line_as_the_models_reply(void **state)
{
    (void)state;
    cr_run r;
    const char *call[] = {"test_sampling", "prompt=What is 2+2?", NULL};
    ask_stdio(&r, interactive, call, "four, I think\n");
    cr_expect_status(&r, 0);
    assert_string_equal(r.out, "LLM response: four, I think\n");
    cr_expect_contains("stderr", r.err, "the server asks for a reply from the model");
    cr_expect_contains("stderr", r.err, "  [user] What is 2+2?\n");
    cr_expect_contains("stderr", r.err, "(at most 100 tokens)");
    cr_run_free(&r);

    /* An empty line declines: the error the specification gives for it. */
    ask_stdio(&r, interactive, call, "\n");
    cr_expect_status(&r, 1);
    cr_expect_contains("stderr", r.err, "User rejected sampling request");
    cr_expect_contains("stderr", r.err, "mcp: declined\n");
    cr_run_free(&r);
}

static void test_form_elicitation_asks_field_by_field(void **state)
{
    (void)state;
    cr_run r;
    const char *call[] = {"test_elicitation", "message=Who are you?", NULL};
    ask_stdio(&r, interactive, call, "y\nada\n\nada@example.com\n");
    cr_expect_status(&r, 0);
    /* The empty line for a required field is asked again. */
    assert_string_equal(r.out,
                        "User response: action=accept, content={\"username\":\"ada\",\"email\":"
                        "\"ada@example.com\"}\n");
    cr_expect_contains("stderr", r.err, "  Who are you?\n");
    cr_expect_contains("stderr", r.err, "username (string, required): User's response");
    cr_expect_contains("stderr", r.err, "(required: again)");
    cr_run_free(&r);

    /* Defaults for empty lines, a bad integer asked again, a boolean, a choice by value. */
    const char *defaults[] = {"test_elicitation_sep1034_defaults", NULL};
    ask_stdio(&r, interactive, defaults, "\n\nforty\n41\n\npending\nn\n");
    cr_expect_status(&r, 0);
    expect_content(r.out, "{\"name\":\"John Doe\",\"age\":41,\"score\":95.5,\"status\":\"pending\","
                          "\"verified\":false}");
    cr_expect_contains("stderr", r.err, "(a whole number: again)");
    cr_expect_contains("stderr", r.err, "    default (an empty answer): \"John Doe\"\n    value: ");
    cr_run_free(&r);

    /* Choices by number and by value, titled or not, single and several. */
    const char *enums[] = {"test_elicitation_sep1330_enums", NULL};
    ask_stdio(&r, interactive, enums, "\n2\nvalue3\n9\nopt1\n1, option3\n2\n");
    cr_expect_status(&r, 0);
    expect_content(r.out, "{\"untitledSingle\":\"option2\",\"titledSingle\":\"value3\","
                          "\"legacyEnum\":\"opt1\",\"untitledMulti\":[\"option1\",\"option3\"],"
                          "\"titledMulti\":[\"value2\"]}");
    cr_expect_contains("stderr", r.err, "      2) value2  Second Option\n");
    cr_expect_contains("stderr", r.err, "      3) opt3  Option Three\n");
    cr_expect_contains("stderr", r.err, "(not one of the choices: again)");
    cr_run_free(&r);

    /* Declined, cancelled, and the end of input in the middle of the form: cancelled. */
    ask_stdio(&r, interactive, call, "n\n");
    cr_expect_status(&r, 0);
    cr_expect_contains("stdout", r.out, "action=decline");
    cr_run_free(&r);
    ask_stdio(&r, interactive, call, "c\n");
    cr_expect_status(&r, 0);
    cr_expect_contains("stdout", r.out, "action=cancel");
    cr_run_free(&r);
    ask_stdio(&r, interactive, call, "y\nada\n");
    cr_expect_status(&r, 0);
    cr_expect_contains("stdout", r.out, "action=cancel");
    cr_expect_contains("stderr", r.err, "mcp: cancelled\n");
    cr_run_free(&r);
}

static void test_url_elicitation_shows_the_url_and_asks(void **state)
{
    (void)state;
    cr_run r;
    const char *call[] = {"url_elicitation", "url=https://pay.example/checkout?x=1",
                          "message=Finish the payment", NULL};
    ask_stdio(&r, interactive, call, "y\n");
    cr_expect_status(&r, 0);
    assert_string_equal(r.out, "action=accept\n");
    cr_expect_contains("stderr", r.err, "the server asks you to open a URL");
    cr_expect_contains("stderr", r.err,
                       "  Finish the payment\n  URL: "
                       "https://pay.example/checkout?x=1\nOpen it? [y/N] ");
    cr_run_free(&r);

    ask_stdio(&r, interactive, call, "\n");
    cr_expect_status(&r, 0);
    assert_string_equal(r.out, "action=decline\n");
    cr_run_free(&r);

    /* Not an http(s) URL, or one a terminal would not show as it is: declined unasked. */
    const char *bad[] = {"url_elicitation", "url=javascript:alert(1)", NULL};
    ask_stdio(&r, interactive, bad, "y\n");
    cr_expect_status(&r, 0);
    assert_string_equal(r.out, "action=decline\n");
    assert_null(strstr(r.err, "Open it?"));
    cr_run_free(&r);
    const char *esc[] = {"url_elicitation", "url=https://a.example/\x1b[2J", NULL};
    ask_stdio(&r, interactive, esc, "y\n");
    assert_string_equal(r.out, "action=decline\n");
    cr_run_free(&r);
}

static void test_the_servers_text_cannot_drive_the_terminal(void **state)
{
    (void)state;
    cr_run r;
    /* C1 controls (CSI, OSC) and lines that would pass for mcp's own. */
    const char *c1[] = {"test_elicitation",
                        "message=\xc2\x9b"
                        "2J\xc2\x9d"
                        "0;t\nmcp: declined",
                        NULL};
    ask_stdio(&r, interactive, c1, "n\n");
    cr_expect_status(&r, 0);
    assert_null(strstr(r.err, "\xc2\x9b"));
    assert_null(strstr(r.err, "\xc2\x9d"));
    cr_expect_contains("stderr", r.err, "  ?2J?0;t\n    mcp: declined\n");
    cr_run_free(&r);
    const char *call[] = {"test_elicitation", "message=\x1b]0;owned\x07\x1b[2Jhello", NULL};
    ask_stdio(&r, interactive, call, "n\n");
    cr_expect_status(&r, 0);
    assert_null(strchr(r.err, '\x1b'));
    assert_null(strchr(r.err, '\x07'));
    cr_expect_contains("stderr", r.err, "  ?]0;owned??[2Jhello\n");
    cr_run_free(&r);
}

static void test_roots_and_nothing_declared_without_a_terminal(void **state)
{
    (void)state;
    cr_run r;
    const char *roots[] = {"--root", "/tmp", "--root", "/", NULL};
    const char *list[] = {"list_roots", NULL};
    ask_stdio(&r, roots, list, NULL);
    cr_expect_status(&r, 0);
    cr_expect_contains("stdout", r.out, "\"uri\": \"file:///tmp\"");
    cr_expect_contains("stdout", r.out, "\"uri\": \"file:///\"");
    cr_run_free(&r);

    /* An interactive mcp offers the current directory. */
    char cwd[4096], want[4200];
    assert_non_null(getcwd(cwd, sizeof cwd));
    snprintf(want, sizeof want, "\"uri\": \"file://%s\"", cwd);
    ask_stdio(&r, interactive, list, NULL);
    cr_expect_status(&r, 0);
    cr_expect_contains("stdout", r.out, want);
    cr_run_free(&r);

    const char *missing[] = {"--root", "/no/such/directory", NULL};
    ask_stdio(&r, missing, list, NULL);
    cr_expect_status(&r, 2);
    cr_expect_contains("stderr", r.err, "--root /no/such/directory");
    cr_run_free(&r);

    /* stdin is no terminal (a pipe here), or --no-interactive: nothing is declared, so
     * the server cannot ask. */
    const char *sampling[] = {"test_sampling", "prompt=hi", NULL};
    ask_stdio(&r, NULL, sampling, "an answer\n");
    cr_expect_status(&r, 1);
    cr_expect_contains("stderr", r.err, "did not declare");
    cr_run_free(&r);
    const char *never[] = {"--no-interactive", NULL};
    ask_stdio(&r, never, sampling, "an answer\n");
    cr_expect_status(&r, 1);
    cr_run_free(&r);
}

static void over_http(const char *protocol)
{
    hc_server srv = {0};
    assert_int_equal(hc_server_start(&srv, NULL, 10000), 0);
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/mcp", srv.port);
    cr_run r;
    /* Revision 2026-07-28 asks through input_required results, 2025-11-25 through
     * requests on the POST's stream: the user sees the same questions. */
    const char *elicit[] = {
        "--interactive",          "--protocol", protocol, url, "tools", "call", "test_elicitation",
        "message=Details please", NULL};
    cr_run_mcp_input(&r, elicit, "y\nbob\nbob@example.com\n");
    cr_expect_status(&r, 0);
    assert_string_equal(r.out, "User response: action=accept, content={\"username\":\"bob\","
                               "\"email\":\"bob@example.com\"}\n");
    cr_run_free(&r);
    const char *sample[] = {"--interactive",
                            "--protocol",
                            protocol,
                            url,
                            "tools",
                            "call",
                            "test_input_required_result_sampling",
                            NULL};
    cr_run_mcp_input(&r, sample, "the reply\n");
    cr_expect_status(&r, 0);
    assert_string_equal(r.out, "The model said: the reply\n");
    cr_run_free(&r);
    int status;
    assert_int_equal(hc_server_stop(&srv, 10000, &status), 0);
    hc_server_free(&srv);
}

static void test_questions_over_http_2025_11_25(void **state)
{
    (void)state;
    over_http("2025-11-25");
}

static void test_questions_over_http_2026_07_28(void **state)
{
    (void)state;
    over_http("2026-07-28");
}

static void test_a_terminal_gets_questions_by_default(void **state)
{
    (void)state;
    if (access("/usr/bin/script", X_OK) != 0)
        fail_msg("script(1) (Debian bsdutils) is needed to give mcp a terminal");
    char mcp[4096], cmd[9000];
    assert_int_equal(harness_bin_path("mcp", mcp, sizeof mcp), 0);
    /* No --interactive: the terminal decides. The answer typed is echoed by the
     * terminal, so it shows once in the output. */
    snprintf(cmd, sizeof cmd, "%s -- %s --stdio tools call test_sampling prompt=tty", mcp,
             everything);
    const char *argv[] = {"/usr/bin/script", "-qec", cmd, "/dev/null", NULL};
    cr_run r;
    cr_run_program_input(&r, argv, "from the terminal\n", CR_MCP_DEADLINE_MS);
    cr_expect_status(&r, 0);
    cr_expect_contains("terminal", r.out, "Reply as the model (one line; empty: decline): ");
    cr_expect_contains("terminal", r.out, "LLM response: from the terminal");
    cr_run_free(&r);

    snprintf(cmd, sizeof cmd,
             "%s --no-interactive -- %s --stdio tools call test_sampling prompt=tty", mcp,
             everything);
    cr_run_program_input(&r, argv, "from the terminal\n", CR_MCP_DEADLINE_MS);
    cr_expect_status(&r, 1);
    assert_null(strstr(r.out, "Reply as the model"));
    cr_run_free(&r);
}

int main(void)
{
    setenv("MCP_NO_BROWSER", "1", 1); /* an accepted URL is never opened */
    if (harness_bin_path("mcp-everything", everything, sizeof everything) != 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sampling_takes_the_users_line_as_the_models_reply),
        cmocka_unit_test(test_form_elicitation_asks_field_by_field),
        cmocka_unit_test(test_url_elicitation_shows_the_url_and_asks),
        cmocka_unit_test(test_the_servers_text_cannot_drive_the_terminal),
        cmocka_unit_test(test_roots_and_nothing_declared_without_a_terminal),
        cmocka_unit_test(test_questions_over_http_2025_11_25),
        cmocka_unit_test(test_questions_over_http_2026_07_28),
        cmocka_unit_test(test_a_terminal_gets_questions_by_default),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
