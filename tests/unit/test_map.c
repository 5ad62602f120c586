/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the string-keyed hash map (src/util/map.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "util/util.h"

static void test_map_put_get_replace_remove(void **state)
{
    (void)state;
    mcp__map m = {0};
    int a = 1, b = 2;
    assert_null(mcp__map_get(&m, "x"));
    assert_int_equal(mcp__map_put(&m, "x", &a), MCP_OK);
    assert_ptr_equal(mcp__map_get(&m, "x"), &a);
    assert_int_equal(mcp__map_put(&m, "x", &b), MCP_OK);
    assert_ptr_equal(mcp__map_get(&m, "x"), &b);
    assert_int_equal(m.len, 1);
    assert_ptr_equal(mcp__map_remove(&m, "x"), &b);
    assert_null(mcp__map_get(&m, "x"));
    assert_null(mcp__map_remove(&m, "x"));
    assert_int_equal(m.len, 0);
    mcp__map_free(&m);
}

static void test_map_ten_thousand_keys_with_churn_stays_exact(void **state)
{
    (void)state;
    mcp__map m = {0};
    char key[32];
    static int values[10000];
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 10000; i++) {
            snprintf(key, sizeof key, "session-%d", i);
            assert_int_equal(mcp__map_put(&m, key, &values[i]), MCP_OK);
        }
        assert_int_equal(m.len, 10000);
        for (int i = 0; i < 10000; i++) {
            snprintf(key, sizeof key, "session-%d", i);
            assert_ptr_equal(mcp__map_get(&m, key), &values[i]);
        }
        for (int i = 0; i < 10000; i += 2) {
            snprintf(key, sizeof key, "session-%d", i);
            assert_ptr_equal(mcp__map_remove(&m, key), &values[i]);
        }
        assert_int_equal(m.len, 5000);
        size_t pos = 0, seen = 0;
        const char *k;
        void *v;
        while (mcp__map_next(&m, &pos, &k, &v)) {
            assert_ptr_equal(mcp__map_get(&m, k), v);
            assert_ptr_equal(mcp__map_remove(&m, k), v); /* removal while iterating */
            seen++;
        }
        assert_int_equal(seen, 5000);
        assert_int_equal(m.len, 0);
    }
    /* Tombstones are reclaimed: the table does not grow past what 10,000 keys need. */
    assert_true(m.cap <= 32768);
    mcp__map_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_map_put_get_replace_remove),
        cmocka_unit_test(test_map_ten_thousand_keys_with_churn_stays_exact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
