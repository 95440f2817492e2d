/* Unit tests of the restart tracker: each case is a policy and a timeline of
 * exits on an explicit clock, with the decision expected after each one. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "supervisor/lifecycle/restart_tracker.h"

#define ARRAY_SIZE(array) (sizeof(array) / sizeof((array)[0]))

#define SECOND 1000ull
#define MINUTE (60 * SECOND)

#define FAILURE true
#define SUCCESS false

#define REASON_NEVER   "policy never"
#define REASON_SUCCESS "exited successfully"
#define REASON_WITHIN  "within policy"
#define REASON_SPENT   "attempts spent"
#define REASON_WAITING "attempts spent, waiting for interval end"

struct timeline_event {
	bool reset; /* restart_tracker_reset() instead of an exit */
	uint64_t at_ms;
	bool failed;
	/* the decision expected */
	enum restart_verdict verdict;
	uint64_t delay_ms;
	unsigned attempt;
	const char *reason;
};

/* One row per event of a timeline. */
#define RESTART(at, failed, delay, attempt)                                                        \
	{                                                                                          \
		false, (at), (failed), RESTART_VERDICT_RESTART, (delay), (attempt), REASON_WITHIN  \
	}
#define WAIT_WINDOW(at, failed, delay, attempt)                                                    \
	{                                                                                          \
		false, (at), (failed), RESTART_VERDICT_RESTART, (delay), (attempt), REASON_WAITING \
	}
#define GIVE_UP(at, failed, attempt)                                                               \
	{                                                                                          \
		false, (at), (failed), RESTART_VERDICT_GIVE_UP, 0, (attempt), REASON_SPENT         \
	}
#define NO_RESTART(at, failed, reason)                                                             \
	{                                                                                          \
		false, (at), (failed), RESTART_VERDICT_NO_RESTART, 0, 0, (reason)                  \
	}
#define RESET                                                                                      \
	{                                                                                          \
		.reset = true                                                                      \
	}

#define POLICY(kind, attempts_, interval, delay, max_delay, mode_)                                 \
	{                                                                                          \
		.policy = (kind), .attempts = (attempts_), .interval_ms = (interval),              \
		.delay_ms = (delay), .max_delay_ms = (max_delay), .mode = (mode_)                  \
	}
/* The documented defaults: 3 attempts a minute, 1 s doubling up to 30 s. */
#define DEFAULTS(kind, mode) POLICY(kind, 3, MINUTE, SECOND, 30 * SECOND, mode)

#define TIMELINE(...)                                                                              \
	.events = {__VA_ARGS__}, .event_count = ARRAY_SIZE(((struct timeline_event[]){__VA_ARGS__}))

#define MAX_EVENTS 12

struct tracker_case {
	const char *name;
	struct restart_policy policy;
	struct timeline_event events[MAX_EVENTS];
	size_t event_count;
};

static const struct tracker_case tracker_cases[] = {
    /* policy x outcome */
    {"never, failure", DEFAULTS(RESTART_NEVER, RESTART_MODE_FAIL),
     TIMELINE(NO_RESTART(0, FAILURE, REASON_NEVER), NO_RESTART(1, FAILURE, REASON_NEVER))},
    {"never, success", DEFAULTS(RESTART_NEVER, RESTART_MODE_DELAY),
     TIMELINE(NO_RESTART(0, SUCCESS, REASON_NEVER))},
    {"on-failure, success", DEFAULTS(RESTART_ON_FAILURE, RESTART_MODE_FAIL),
     TIMELINE(NO_RESTART(0, SUCCESS, REASON_SUCCESS))},
    {"on-failure, failure", DEFAULTS(RESTART_ON_FAILURE, RESTART_MODE_FAIL),
     TIMELINE(RESTART(0, FAILURE, SECOND, 1))},
    {"always, success", DEFAULTS(RESTART_ALWAYS, RESTART_MODE_FAIL),
     TIMELINE(RESTART(0, SUCCESS, SECOND, 1))},
    {"always, failure", DEFAULTS(RESTART_ALWAYS, RESTART_MODE_FAIL),
     TIMELINE(RESTART(0, FAILURE, SECOND, 1))},
    {"on-failure: successes are neither charged nor reset the count",
     POLICY(RESTART_ON_FAILURE, 1, MINUTE, SECOND, 30 * SECOND, RESTART_MODE_FAIL),
     TIMELINE(RESTART(0, FAILURE, SECOND, 1), NO_RESTART(5 * SECOND, SUCCESS, REASON_SUCCESS),
	      GIVE_UP(10 * SECOND, FAILURE, 2))},

    /* counting within the interval */
    {"always: attempts counted, give up at attempts + 1",
     DEFAULTS(RESTART_ALWAYS, RESTART_MODE_FAIL),
     TIMELINE(RESTART(0, FAILURE, 1 * SECOND, 1), RESTART(5 * SECOND, SUCCESS, 2 * SECOND, 2),
	      RESTART(10 * SECOND, FAILURE, 4 * SECOND, 3), GIVE_UP(20 * SECOND, FAILURE, 4))},
    {"on-failure: give up again if asked again", DEFAULTS(RESTART_ON_FAILURE, RESTART_MODE_FAIL),
     TIMELINE(RESTART(0, FAILURE, 1 * SECOND, 1), RESTART(1 * SECOND, FAILURE, 2 * SECOND, 2),
	      RESTART(2 * SECOND, FAILURE, 4 * SECOND, 3), GIVE_UP(3 * SECOND, FAILURE, 4),
	      GIVE_UP(4 * SECOND, FAILURE, 5))},
    {"count resets once the interval is over", DEFAULTS(RESTART_ALWAYS, RESTART_MODE_FAIL),
     TIMELINE(RESTART(0, FAILURE, 1 * SECOND, 1), RESTART(1 * SECOND, FAILURE, 2 * SECOND, 2),
	      RESTART(2 * SECOND, FAILURE, 4 * SECOND, 3),
	      /* the window opened at 0 ends at 60 s, exactly */
	      RESTART(MINUTE, FAILURE, 1 * SECOND, 1), RESTART(MINUTE + 1, FAILURE, 2 * SECOND, 2),
	      RESTART(2 * MINUTE - 1, FAILURE, 4 * SECOND, 3),
	      GIVE_UP(2 * MINUTE - 1, FAILURE, 4))},
    {"the window opens at the first restart, not at the first exit",
     POLICY(RESTART_ON_FAILURE, 1, MINUTE, SECOND, SECOND, RESTART_MODE_FAIL),
     TIMELINE(NO_RESTART(0, SUCCESS, REASON_SUCCESS), RESTART(50 * SECOND, FAILURE, SECOND, 1),
	      GIVE_UP(100 * SECOND, FAILURE, 2))},
    {"interval 0: every restart opens its own window",
     POLICY(RESTART_ALWAYS, 1, 0, SECOND, 30 * SECOND, RESTART_MODE_FAIL),
     TIMELINE(RESTART(0, FAILURE, SECOND, 1), RESTART(0, FAILURE, SECOND, 1),
	      RESTART(1, FAILURE, SECOND, 1))},

    /* backoff */
    {"backoff doubles up to max_delay",
     POLICY(RESTART_ALWAYS, 10, MINUTE, SECOND, 5 * SECOND, RESTART_MODE_FAIL),
     TIMELINE(RESTART(0, FAILURE, 1 * SECOND, 1), RESTART(1, FAILURE, 2 * SECOND, 2),
	      RESTART(2, FAILURE, 4 * SECOND, 3), RESTART(3, FAILURE, 5 * SECOND, 4),
	      RESTART(4, FAILURE, 5 * SECOND, 5))},
    {"backoff starts over in a new window",
     POLICY(RESTART_ALWAYS, 10, MINUTE, SECOND, 30 * SECOND, RESTART_MODE_FAIL),
     TIMELINE(RESTART(0, FAILURE, 1 * SECOND, 1), RESTART(1, FAILURE, 2 * SECOND, 2),
	      RESTART(MINUTE + 1, FAILURE, 1 * SECOND, 1))},
    {"delay 0 stays 0", POLICY(RESTART_ALWAYS, 3, MINUTE, 0, 0, RESTART_MODE_FAIL),
     TIMELINE(RESTART(0, FAILURE, 0, 1), RESTART(1, FAILURE, 0, 2), RESTART(2, FAILURE, 0, 3))},
    {"unlimited attempts with delay 0: at once, each time (supervisord's autorestart=true)",
     POLICY(RESTART_ALWAYS, RESTART_ATTEMPTS_UNLIMITED, MINUTE, 0, 0, RESTART_MODE_FAIL),
     TIMELINE(RESTART(0, FAILURE, 0, 1), RESTART(1, FAILURE, 0, 2), RESTART(2, FAILURE, 0, 3),
	      RESTART(3, FAILURE, 0, 4), RESTART(4, FAILURE, 0, 5), RESTART(5, SUCCESS, 0, 6))},
    {"unlimited attempts: backoff capped, never given up (a Kubernetes sidecar)",
     POLICY(RESTART_ALWAYS, RESTART_ATTEMPTS_UNLIMITED, 10 * MINUTE, SECOND, 4 * SECOND,
	    RESTART_MODE_FAIL),
     TIMELINE(RESTART(0, FAILURE, 1 * SECOND, 1), RESTART(1, FAILURE, 2 * SECOND, 2),
	      RESTART(2, FAILURE, 4 * SECOND, 3), RESTART(3, FAILURE, 4 * SECOND, 4),
	      RESTART(4, FAILURE, 4 * SECOND, 5),
	      RESTART(10 * MINUTE + 1, FAILURE, 1 * SECOND, 1))},
    {"max_delay below delay reads as delay",
     POLICY(RESTART_ALWAYS, 3, MINUTE, 5 * SECOND, SECOND, RESTART_MODE_FAIL),
     TIMELINE(RESTART(0, FAILURE, 5 * SECOND, 1), RESTART(1, FAILURE, 5 * SECOND, 2))},

    /* mode delay */
    {"mode delay waits out the window, then counts afresh",
     POLICY(RESTART_ALWAYS, 2, MINUTE, SECOND, 30 * SECOND, RESTART_MODE_DELAY),
     TIMELINE(RESTART(0, FAILURE, 1 * SECOND, 1), RESTART(10 * SECOND, FAILURE, 2 * SECOND, 2),
	      WAIT_WINDOW(20 * SECOND, FAILURE, 40 * SECOND, 3),
	      /* restarted at 60 s, exits again half a second later */
	      RESTART(60500, FAILURE, 1 * SECOND, 1), RESTART(61000, FAILURE, 2 * SECOND, 2),
	      WAIT_WINDOW(62000, FAILURE, 60500 + MINUTE - 62000, 3))},
    {"mode delay waits at least the base delay",
     POLICY(RESTART_ON_FAILURE, 1, 10 * SECOND, 5 * SECOND, 5 * SECOND, RESTART_MODE_DELAY),
     TIMELINE(RESTART(0, FAILURE, 5 * SECOND, 1), WAIT_WINDOW(9 * SECOND, FAILURE, 5 * SECOND, 2),
	      RESTART(14 * SECOND, FAILURE, 5 * SECOND, 1))},
    {"mode delay: an exit right after the window opens a new one",
     POLICY(RESTART_ALWAYS, 1, 10 * SECOND, SECOND, SECOND, RESTART_MODE_DELAY),
     TIMELINE(RESTART(0, FAILURE, SECOND, 1), RESTART(10 * SECOND, FAILURE, SECOND, 1),
	      WAIT_WINDOW(11 * SECOND, FAILURE, 9 * SECOND, 2))},

    {"mode delay: the fresh window opens at the next exit, not at the old window's end",
     POLICY(RESTART_ALWAYS, 1, MINUTE, SECOND, SECOND, RESTART_MODE_DELAY),
     TIMELINE(RESTART(0, FAILURE, SECOND, 1), WAIT_WINDOW(20 * SECOND, FAILURE, 40 * SECOND, 2),
	      /* restarted early by someone else, exits at 30 s: window 30-90 s */
	      RESTART(30 * SECOND, FAILURE, SECOND, 1),
	      WAIT_WINDOW(70 * SECOND, FAILURE, 20 * SECOND, 2))},

    /* attempts 0 */
    {"attempts 0, mode fail: the first restart gives up",
     POLICY(RESTART_ALWAYS, 0, MINUTE, SECOND, 30 * SECOND, RESTART_MODE_FAIL),
     TIMELINE(GIVE_UP(0, SUCCESS, 1))},
    {"attempts 0, mode delay: every restart waits a whole interval",
     POLICY(RESTART_ON_FAILURE, 0, MINUTE, SECOND, 30 * SECOND, RESTART_MODE_DELAY),
     TIMELINE(WAIT_WINDOW(0, FAILURE, MINUTE, 1), WAIT_WINDOW(MINUTE + 5, FAILURE, MINUTE, 1),
	      NO_RESTART(3 * MINUTE, SUCCESS, REASON_SUCCESS))},
    {"attempts 0, interval 0, mode delay: the base delay",
     POLICY(RESTART_ALWAYS, 0, 0, SECOND, SECOND, RESTART_MODE_DELAY),
     TIMELINE(WAIT_WINDOW(0, FAILURE, SECOND, 1), WAIT_WINDOW(1, FAILURE, SECOND, 1))},

    /* reset */
    {"reset forgets the count and the backoff", DEFAULTS(RESTART_ALWAYS, RESTART_MODE_FAIL),
     TIMELINE(RESTART(0, FAILURE, 1 * SECOND, 1), RESTART(1, FAILURE, 2 * SECOND, 2),
	      RESTART(2, FAILURE, 4 * SECOND, 3), RESET, RESTART(3, FAILURE, 1 * SECOND, 1),
	      RESTART(4, FAILURE, 2 * SECOND, 2))},
    {"reset after giving up", POLICY(RESTART_ALWAYS, 1, MINUTE, SECOND, SECOND, RESTART_MODE_FAIL),
     TIMELINE(RESTART(0, FAILURE, SECOND, 1), GIVE_UP(1, FAILURE, 2), RESET,
	      RESTART(2, FAILURE, SECOND, 1))},

    /* the clock is monotonic; a caller's clock that goes back stays in the window */
    {"an exit before the window start counts in the window",
     POLICY(RESTART_ALWAYS, 2, MINUTE, SECOND, 30 * SECOND, RESTART_MODE_FAIL),
     TIMELINE(RESTART(10 * SECOND, FAILURE, SECOND, 1), RESTART(5 * SECOND, FAILURE, 2 * SECOND, 2),
	      GIVE_UP(5 * SECOND, FAILURE, 3))},

    /* huge values */
    {"huge delays: doubling saturates at max_delay",
     POLICY(RESTART_ALWAYS, UINT_MAX, UINT64_MAX, UINT64_MAX / 2 + 1, UINT64_MAX,
	    RESTART_MODE_FAIL),
     TIMELINE(RESTART(0, FAILURE, UINT64_MAX / 2 + 1, 1), RESTART(1, FAILURE, UINT64_MAX, 2),
	      RESTART(UINT64_MAX - 1, FAILURE, UINT64_MAX, 3))},
    {"huge interval: the window never ends",
     POLICY(RESTART_ALWAYS, 1, UINT64_MAX, 1, 1, RESTART_MODE_DELAY),
     TIMELINE(RESTART(5, FAILURE, 1, 1), WAIT_WINDOW(UINT64_MAX, FAILURE, 5, 2))},
    {"window near the end of the clock",
     POLICY(RESTART_ALWAYS, 1, 10 * SECOND, 1, 1, RESTART_MODE_DELAY),
     TIMELINE(RESTART(UINT64_MAX - 10, FAILURE, 1, 1),
	      WAIT_WINDOW(UINT64_MAX, FAILURE, 10 * SECOND - 10, 2))},
};

static void test_timeline(void **state)
{
	const struct tracker_case *test = *state;
	struct restart_tracker tracker;

	restart_tracker_init(&tracker);
	for (size_t i = 0; i < test->event_count; i++) {
		const struct timeline_event *event = &test->events[i];

		if (event->reset) {
			restart_tracker_reset(&tracker);
			continue;
		}

		struct restart_decision decision =
		    restart_tracker_decide(&tracker, &test->policy, event->failed, event->at_ms);

		print_message("event %zu: exit at %llu ms\n", i, (unsigned long long)event->at_ms);
		assert_int_equal(decision.verdict, event->verdict);
		assert_int_equal(decision.delay_ms, event->delay_ms);
		assert_int_equal(decision.attempt, event->attempt);
		assert_int_equal(decision.attempts, test->policy.attempts);
		assert_non_null(decision.reason);
		assert_string_equal(decision.reason, event->reason);
	}
}

static void test_init_has_no_window(void **state __attribute__((unused)))
{
	struct restart_tracker tracker = {.window_start_ms = 7, .restarts = 3, .window_open = true};

	restart_tracker_init(&tracker);
	assert_false(tracker.window_open);
	assert_int_equal(tracker.restarts, 0);

	tracker =
	    (struct restart_tracker){.window_start_ms = 7, .restarts = 3, .window_open = true};
	restart_tracker_reset(&tracker);
	assert_false(tracker.window_open);
	assert_int_equal(tracker.restarts, 0);
}

/* Thousands of restarts in one window: the delay never shrinks (no shift
 * overflow) and ends at the cap; the count never wraps. */
static void test_backoff_never_overflows(void **state __attribute__((unused)))
{
	const struct restart_policy policy =
	    POLICY(RESTART_ALWAYS, UINT_MAX, UINT64_MAX, 1, UINT64_MAX, RESTART_MODE_FAIL);
	struct restart_tracker tracker;
	uint64_t previous_delay = 0;

	restart_tracker_init(&tracker);
	for (unsigned attempt = 1; attempt <= 5000; attempt++) {
		struct restart_decision decision =
		    restart_tracker_decide(&tracker, &policy, true, attempt);

		assert_int_equal(decision.verdict, RESTART_VERDICT_RESTART);
		assert_int_equal(decision.attempt, attempt);
		assert_true(decision.delay_ms >= previous_delay);
		if (attempt <= 64)
			assert_int_equal(decision.delay_ms, 1ull << (attempt - 1));
		else
			assert_int_equal(decision.delay_ms, UINT64_MAX);
		previous_delay = decision.delay_ms;
	}
}

/* With attempts at UINT_MAX the count saturates instead of wrapping back to
 * an allowed restart. */
static void test_restart_count_saturates(void **state __attribute__((unused)))
{
	const struct restart_policy policy =
	    POLICY(RESTART_ALWAYS, UINT_MAX - 1, MINUTE, SECOND, SECOND, RESTART_MODE_FAIL);
	struct restart_tracker tracker = {
	    .window_start_ms = 0,
	    .restarts = UINT_MAX - 1,
	    .window_open = true,
	};
	struct restart_decision decision;

	decision = restart_tracker_decide(&tracker, &policy, true, 1);
	assert_int_equal(decision.verdict, RESTART_VERDICT_GIVE_UP);
	assert_int_equal(decision.attempt, UINT_MAX);

	decision = restart_tracker_decide(&tracker, &policy, true, 2);
	assert_int_equal(decision.verdict, RESTART_VERDICT_GIVE_UP);
	assert_int_equal(decision.attempt, UINT_MAX);
}

static const struct CMUnitTest fixed_tests[] = {
    cmocka_unit_test(test_init_has_no_window),
    cmocka_unit_test(test_backoff_never_overflows),
    cmocka_unit_test(test_restart_count_saturates),
};

int main(void)
{
	/* One cmocka test per timeline, named after it. */
	static struct CMUnitTest tests[ARRAY_SIZE(fixed_tests) + ARRAY_SIZE(tracker_cases)];
	size_t count = 0;

	for (size_t i = 0; i < ARRAY_SIZE(fixed_tests); i++)
		tests[count++] = fixed_tests[i];
	for (size_t i = 0; i < ARRAY_SIZE(tracker_cases); i++) {
		tests[count++] = (struct CMUnitTest){
		    .name = tracker_cases[i].name,
		    .test_func = test_timeline,
		    .initial_state = (void *)&tracker_cases[i],
		};
	}
	return cmocka_run_group_tests_name("restart_tracker", tests, NULL, NULL);
}
