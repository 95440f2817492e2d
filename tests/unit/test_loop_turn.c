/* A loop turn's budget (base/loop.c): events whose callbacks take long
 * are dispatched a few a turn, the rest stay ready for the next turns (no
 * event is lost: every watch is level-triggered), and every one of them
 * comes within a few turns, none left behind the same others for good. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/loop.h"

#define WATCHES 20

static uint64_t now_us(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)now.tv_sec * 1000000 + (uint64_t)now.tv_nsec / 1000;
}

struct slow_watch {
	struct loop_watch watch;
	int write_fd;
	unsigned dispatched;
};

/* Takes 2 ms, and leaves its pipe readable: it is ready at every wait. */
static void on_ready(struct loop_watch *watch, uint32_t events)
{
	(void)events;
	struct slow_watch *slow = watch->data;
	slow->dispatched++;
	uint64_t until = now_us() + 2000;
	while (now_us() < until)
		;
}

static void test_a_turn_stops_at_its_budget_and_every_event_comes(void **state)
{
	(void)state;
	struct loop *loop;
	assert_int_equal(loop_create(&loop), 0);
	static struct slow_watch watches[WATCHES];
	for (int i = 0; i < WATCHES; i++) {
		int fds[2];
		assert_int_equal(pipe(fds), 0);
		assert_int_equal(write(fds[1], "x", 1), 1);
		watches[i] = (struct slow_watch){
		    .watch = {.fd = fds[0], .callback = on_ready, .data = &watches[i]},
		    .write_fd = fds[1]};
		assert_int_equal(loop_watch_add(loop, &watches[i].watch, EPOLLIN), 0);
	}
	/* 20 callbacks of 2 ms are 40 ms: one turn takes a few of them. */
	assert_int_equal(loop_run_once(loop), 0);
	unsigned first_turn = 0;
	for (int i = 0; i < WATCHES; i++)
		first_turn += watches[i].dispatched;
	assert_true(first_turn >= 1);
	assert_true(first_turn < WATCHES);
	/* All ready all the time: within as many turns as there are events,
	 * each one came, however the turns were cut. */
	for (int turn = 1; turn < WATCHES; turn++)
		assert_int_equal(loop_run_once(loop), 0);
	for (int i = 0; i < WATCHES; i++)
		assert_true(watches[i].dispatched >= 1);
	for (int i = 0; i < WATCHES; i++) {
		loop_watch_remove(loop, &watches[i].watch);
		close(watches[i].watch.fd);
		close(watches[i].write_fd);
	}
	loop_free(loop);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_a_turn_stops_at_its_budget_and_every_event_comes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
