/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the header fields a server reads (src/http/fields.c): Accept,
 * Content-Type, and the host names of Host and Origin.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "http/http.h"

static void test_accept_needs_the_type_or_a_wildcard_without_q0(void **state)
{
    (void)state;
    assert_true(mcp__accepts("application/json, text/event-stream", "text/event-stream"));
    assert_true(mcp__accepts("text/event-stream, application/json", "application/json"));
    assert_true(mcp__accepts("TEXT/Event-Stream", "text/event-stream"));
    assert_true(mcp__accepts("*/*", "application/json"));
    assert_true(mcp__accepts("text/*;q=0.5", "text/event-stream"));
    assert_true(mcp__accepts("application/json ; charset=utf-8", "application/json"));
    assert_false(mcp__accepts("application/json", "text/event-stream"));
    assert_false(mcp__accepts("application/json;q=0, text/event-stream", "application/json"));
    assert_false(mcp__accepts("text/event-streamx", "text/event-stream"));
    assert_false(mcp__accepts("application/*", "text/event-stream"));
    assert_false(mcp__accepts("", "text/event-stream"));
    assert_false(mcp__accepts(NULL, "text/event-stream"));
}

static void test_content_type_media_type_ignores_parameters(void **state)
{
    (void)state;
    assert_true(mcp__media_type_is("application/json", "application/json"));
    assert_true(mcp__media_type_is("APPLICATION/JSON; charset=utf-8", "application/json"));
    assert_true(mcp__media_type_is(" application/json ;", "application/json"));
    assert_false(mcp__media_type_is("text/plain; a=application/json", "application/json"));
    assert_false(mcp__media_type_is("application/json, text/plain", "application/json"));
    assert_false(mcp__media_type_is("application/jsonx", "application/json"));
    assert_false(mcp__media_type_is(NULL, "application/json"));
}

static void test_host_and_origin_names_drop_the_port(void **state)
{
    (void)state;
    char h[256];
    assert_int_equal(mcp__host_name("LocalHost:8080", h, sizeof h), 0);
    assert_string_equal(h, "localhost");
    assert_int_equal(mcp__host_name("[::1]:3000", h, sizeof h), 0);
    assert_string_equal(h, "[::1]");
    assert_int_equal(mcp__host_name("127.0.0.1", h, sizeof h), 0);
    assert_string_equal(h, "127.0.0.1");
    assert_int_equal(mcp__host_name("evil.example.com:80", h, sizeof h), 0);
    assert_false(mcp__is_loopback_name(h));
    assert_int_equal(mcp__host_name("localhost:80x", h, sizeof h), -1);
    assert_int_equal(mcp__host_name("localhost@evil.com", h, sizeof h), -1);
    assert_int_equal(mcp__host_name("", h, sizeof h), -1);
    assert_int_equal(mcp__host_name("[::1", h, sizeof h), -1);
    assert_int_equal(mcp__origin_host("http://localhost:3000", h, sizeof h), 0);
    assert_true(mcp__is_loopback_name(h));
    assert_int_equal(mcp__origin_host("https://[::1]", h, sizeof h), 0);
    assert_true(mcp__is_loopback_name(h));
    assert_int_equal(mcp__origin_host("http://evil.example.com", h, sizeof h), 0);
    assert_false(mcp__is_loopback_name(h));
    assert_int_equal(mcp__origin_host("null", h, sizeof h), -1);
    assert_int_equal(mcp__origin_host("localhost", h, sizeof h), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accept_needs_the_type_or_a_wildcard_without_q0),
        cmocka_unit_test(test_content_type_media_type_ignores_parameters),
        cmocka_unit_test(test_host_and_origin_names_drop_the_port),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
