/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the event store wrapper (src/store/store.c): which operations of a
 * store's table it reads for each size the table gives, and attach and detach.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <mcp/store.h>
#include <uv.h>

/* A store that counts the calls of each operation; attach opens a timer on the loop
 * (as a networked store would open its connection) and detach closes it. */
typedef struct counting_store {
    int appends, replays, drops, expires, destroys, attaches, detaches;
    uv_loop_t *attached;
    uv_timer_t timer;
    int timer_closed;
} counting_store;

static int c_append(void *self, const char *session, uint64_t stream, uint64_t seq,
                    const char *data, size_t len)
{
    (void)session;
    (void)stream;
    (void)seq;
    (void)data;
    (void)len;
    ((counting_store *)self)->appends++;
    return MCP_OK;
}

static int c_replay(void *self, const char *session, uint64_t stream, uint64_t after_seq,
                    mcp_event_fn emit, mcp_replay_done_fn done, void *arg)
{
    (void)session;
    (void)stream;
    (void)after_seq;
    (void)emit;
    ((counting_store *)self)->replays++;
    done(arg, MCP_OK);
    return MCP_OK;
}

static void c_drop_session(void *self, const char *session)
{
    (void)session;
    ((counting_store *)self)->drops++;
}

static void c_expire(void *self)
{
    ((counting_store *)self)->expires++;
}

static void c_destroy(void *self)
{
    ((counting_store *)self)->destroys++;
}

static int c_attach(void *self, struct uv_loop_s *loop)
{
    counting_store *c = self;
    c->attaches++;
    /* One loop at a time is all a store need support. */
    if (c->attached != NULL)
        return MCP_ESTATE;
    if (uv_timer_init(loop, &c->timer) != 0)
        return MCP_EIO;
    c->attached = loop;
    c->timer_closed = 0;
    return MCP_OK;
}

static void on_timer_closed(uv_handle_t *h)
{
    counting_store *c = h->data;
    c->timer_closed = 1;
}

static void c_detach(void *self, struct uv_loop_s *loop)
{
    counting_store *c = self;
    c->detaches++;
    assert_ptr_equal(loop, c->attached);
    c->timer.data = c;
    uv_close((uv_handle_t *)&c->timer, on_timer_closed);
    c->attached = NULL;
}

/* The five operations of libmcp 0.1, as a store written for it sets them. */
#define FIVE_OPS                                                                                   \
    .append = c_append, .replay = c_replay, .drop_session = c_drop_session, .expire = c_expire,    \
    .destroy = c_destroy

static void on_done(void *arg, int status)
{
    assert_int_equal(status, MCP_OK);
    (*(int *)arg)++;
}

/* Calls each operation but destroy once through the wrapper. */
static void use_every_operation(mcp_event_store *s)
{
    int done = 0;
    assert_int_equal(mcp_event_store_append(s, "A", 1, 1, "a", 1), MCP_OK);
    assert_int_equal(mcp_event_store_replay(s, "A", 1, 0, NULL, on_done, &done), MCP_OK);
    assert_int_equal(done, 1);
    mcp_event_store_drop_session(s, "A");
    mcp_event_store_expire(s);
}

/* On a loop of its own: attaches the store, detaches it, runs the loop until what the
 * store closed has closed, and closes the loop, which must then hold nothing of it. */
static void attach_then_detach(mcp_event_store *s)
{
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    assert_int_equal(mcp_event_store_attach(s, &loop), MCP_OK);
    mcp_event_store_detach(s, &loop);
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(uv_loop_close(&loop), 0);
}

static void
test_ops_of_size_0_with_the_five_original_operations_work_and_attach_is_a_no_op(void **state)
{
    (void)state;
    counting_store c = {0};
    const mcp_event_store_ops ops = {FIVE_OPS};
    mcp_event_store *s = mcp_event_store_new(&ops, &c);
    assert_non_null(s);
    use_every_operation(s);
    assert_int_equal(c.appends + c.replays + c.drops + c.expires, 4);
    attach_then_detach(s);
    assert_int_equal(c.appends + c.replays + c.drops + c.expires + c.destroys, 4);
    mcp_event_store_free(s);
    assert_int_equal(c.destroys, 1);
}

static void test_ops_of_size_0_never_read_attach_or_detach(void **state)
{
    (void)state;
    /* Size 0 stands for the table before attach existed, whatever lies past it. */
    counting_store c = {0};
    const mcp_event_store_ops ops = {FIVE_OPS, .attach = c_attach, .detach = c_detach};
    mcp_event_store *s = mcp_event_store_new(&ops, &c);
    assert_non_null(s);
    attach_then_detach(s);
    assert_int_equal(c.attaches, 0);
    assert_int_equal(c.detaches, 0);
    mcp_event_store_free(s);
}

static void
test_ops_of_full_size_are_attached_to_one_loop_at_a_time_and_detach_frees_the_loop(void **state)
{
    (void)state;
    counting_store c = {0};
    const mcp_event_store_ops ops = {
        .size = sizeof(mcp_event_store_ops), FIVE_OPS, .attach = c_attach, .detach = c_detach};
    mcp_event_store *s = mcp_event_store_new(&ops, &c);
    assert_non_null(s);
    uv_loop_t one, two;
    assert_int_equal(uv_loop_init(&one), 0);
    assert_int_equal(uv_loop_init(&two), 0);

    assert_int_equal(mcp_event_store_attach(s, &one), MCP_OK);
    assert_int_equal(c.attaches, 1);
    assert_ptr_equal(c.attached, &one);
    /* The store's refusal of a second loop reaches the caller. */
    assert_int_equal(mcp_event_store_attach(s, &two), MCP_ESTATE);
    use_every_operation(s);
    mcp_event_store_detach(s, &one);
    assert_int_equal(c.detaches, 1);
    /* Once the loop has run the close callbacks, nothing of the store is left on it. */
    assert_int_equal(uv_run(&one, UV_RUN_DEFAULT), 0);
    assert_true(c.timer_closed);
    assert_int_equal(uv_loop_close(&one), 0);
    assert_int_equal(uv_loop_close(&two), 0);

    /* Stopped and started again: attached to another loop. */
    attach_then_detach(s);
    assert_int_equal(c.attaches, 3);
    assert_int_equal(c.detaches, 2);

    mcp_event_store_free(s);
    assert_int_equal(c.destroys, 1);
}

static void test_ops_of_a_future_size_are_accepted_and_their_unknown_tail_ignored(void **state)
{
    (void)state;
    /* A store built against a later header: its table is longer, and the operations
     * this release does not know of are anything but NULL. */
    const size_t future = sizeof(mcp_event_store_ops) + 4 * sizeof(void *);
    unsigned char *buf = malloc(future);
    assert_non_null(buf);
    memset(buf, 0xa5, future);
    counting_store c = {0};
    const mcp_event_store_ops known = {
        .size = future, FIVE_OPS, .attach = c_attach, .detach = c_detach};
    memcpy(buf, &known, sizeof(known));
    mcp_event_store *s = mcp_event_store_new((const mcp_event_store_ops *)buf, &c);
    /* The wrapper keeps its own copy: the caller's table may go. */
    memset(buf, 0, future);
    free(buf);
    assert_non_null(s);
    use_every_operation(s);
    attach_then_detach(s);
    assert_int_equal(c.attaches, 1);
    assert_int_equal(c.detaches, 1);
    mcp_event_store_free(s);
    assert_int_equal(c.destroys, 1);
}

static void test_ops_of_a_size_below_the_size_field_or_without_append_are_refused(void **state)
{
    (void)state;
    counting_store c = {0};
    for (size_t size = 1; size < sizeof(size_t); size++) {
        const mcp_event_store_ops ops = {.size = size, FIVE_OPS};
        assert_null(mcp_event_store_new(&ops, &c));
    }
    /* A size that ends before replay leaves it out, and a store cannot do without. */
    const mcp_event_store_ops short_ops = {.size = offsetof(mcp_event_store_ops, replay), FIVE_OPS};
    assert_null(mcp_event_store_new(&short_ops, &c));
    const mcp_event_store_ops no_append = {.replay = c_replay};
    assert_null(mcp_event_store_new(&no_append, &c));
    assert_null(mcp_event_store_new(NULL, &c));
    /* A refused store is not the wrapper's: it was never destroyed. */
    assert_int_equal(c.destroys, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(
            test_ops_of_size_0_with_the_five_original_operations_work_and_attach_is_a_no_op),
        cmocka_unit_test(test_ops_of_size_0_never_read_attach_or_detach),
        cmocka_unit_test(
            test_ops_of_full_size_are_attached_to_one_loop_at_a_time_and_detach_frees_the_loop),
        cmocka_unit_test(test_ops_of_a_future_size_are_accepted_and_their_unknown_tail_ignored),
        cmocka_unit_test(test_ops_of_a_size_below_the_size_field_or_without_append_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
