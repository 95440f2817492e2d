/* The loop's idle work (loop_idle): run only when nothing is ready, one
 * per look, never before an event already pending; cancelled work never
 * runs; work requested `within` a time runs at the end of a busy turn
 * once that time has passed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/loop.h"

struct trace {
	char order[16];
	size_t count;
};

static void note(struct trace *trace, char what)
{
	trace->order[trace->count++] = what;
}

static void on_readable(struct loop_watch *watch, uint32_t events)
{
	(void)events;
	char byte;
	assert_int_equal(read(watch->fd, &byte, 1), 1);
	note(watch->data, 'f');
}

static void idle_a(struct loop_idle *idle)
{
	note(idle->data, 'a');
}

static void idle_b(struct loop_idle *idle)
{
	note(idle->data, 'b');
}

static void test_idle_work_waits_for_pending_events(void **state)
{
	(void)state;
	struct loop *loop;
	struct trace trace = {0};
	int pipe_fds[2];
	assert_int_equal(loop_create(&loop), 0);
	assert_int_equal(pipe(pipe_fds), 0);
	struct loop_watch watch = {.fd = pipe_fds[0], .callback = on_readable, .data = &trace};
	assert_int_equal(loop_watch_add(loop, &watch, EPOLLIN), 0);
	struct loop_idle a, b;
	loop_idle_init(&a, idle_a, &trace);
	loop_idle_init(&b, idle_b, &trace);

	/* A byte is pending: the fd first, the idle work after, one per look,
	 * the latest requested first; a second request of pending work is
	 * one. */
	assert_int_equal(write(pipe_fds[1], "x", 1), 1);
	loop_idle_request(loop, &a);
	loop_idle_request(loop, &b);
	loop_idle_request(loop, &a);
	for (int i = 0; i < 3; i++)
		assert_int_equal(loop_run_once(loop), 0);
	assert_string_equal(trace.order, "fba");
	assert_false(a.pending || b.pending);

	/* Cancelled: never runs. */
	loop_idle_request(loop, &a);
	loop_idle_request(loop, &b);
	loop_idle_cancel(loop, &b);
	assert_int_equal(loop_run_once(loop), 0);
	assert_string_equal(trace.order, "fbaa");
	/* Nothing pending now: the next look would block, so make one event. */
	assert_int_equal(write(pipe_fds[1], "y", 1), 1);
	assert_int_equal(loop_run_once(loop), 0);
	assert_string_equal(trace.order, "fbaaf");

	loop_watch_remove(loop, &watch);
	close(pipe_fds[0]);
	close(pipe_fds[1]);
	loop_free(loop);
}

static void test_work_due_runs_in_a_loop_that_stays_busy(void **state)
{
	(void)state;
	struct loop *loop;
	struct trace trace = {0};
	int pipe_fds[2];
	assert_int_equal(loop_create(&loop), 0);
	assert_int_equal(pipe(pipe_fds), 0);
	struct loop_watch watch = {.fd = pipe_fds[0], .callback = on_readable, .data = &trace};
	assert_int_equal(loop_watch_add(loop, &watch, EPOLLIN), 0);
	struct loop_idle a, b;
	loop_idle_init(&a, idle_a, &trace);
	loop_idle_init(&b, idle_b, &trace);

	/* Every turn has an event: plain idle work (b) never runs, work due
	 * within 20 ms (a) waits until then, and runs after that turn's
	 * events. */
	loop_idle_request(loop, &b);
	loop_idle_request_within(loop, &a, 20);
	assert_int_equal(write(pipe_fds[1], "x", 1), 1);
	assert_int_equal(loop_run_once(loop), 0);
	assert_string_equal(trace.order, "f");
	nanosleep(&(struct timespec){0, 30 * 1000000}, NULL);
	assert_int_equal(write(pipe_fds[1], "y", 1), 1);
	assert_int_equal(loop_run_once(loop), 0);
	assert_string_equal(trace.order, "ffa");
	assert_false(a.pending);
	assert_true(b.pending);
	/* A later request while due keeps the first due time; cancelled, no
	 * due time is left. */
	loop_idle_request_within(loop, &a, 1000);
	loop_idle_request_within(loop, &a, 0);
	assert_int_equal(write(pipe_fds[1], "z", 1), 1);
	assert_int_equal(loop_run_once(loop), 0);
	assert_string_equal(trace.order, "ffaf");
	loop_idle_cancel(loop, &a);
	assert_int_equal(a.due_ms, 0);
	/* Quiet now: b runs as idle work does. */
	assert_int_equal(loop_run_once(loop), 0);
	assert_string_equal(trace.order, "ffafb");

	loop_watch_remove(loop, &watch);
	close(pipe_fds[0]);
	close(pipe_fds[1]);
	loop_free(loop);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_idle_work_waits_for_pending_events),
	    cmocka_unit_test(test_work_due_runs_in_a_loop_that_stays_busy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
