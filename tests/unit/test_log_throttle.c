/* One line per source per interval: the first event said in full, the rest
 * of its interval in one summary when the interval ends, sources apart,
 * and a bounded table whose overflow shares one entry. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/log_throttle.h"

struct said {
	char lines[8][160];
	size_t count;
};

static void say(void *context, const char *source, uint64_t count, const char *reason)
{
	struct said *said = context;
	if (said->count < 8)
		snprintf(said->lines[said->count], sizeof(said->lines[0]), "%s %llu %s", source,
			 (unsigned long long)count, reason);
	said->count++;
}

static void test_a_flood_is_one_line_then_one_summary(void **state)
{
	(void)state;
	struct said said = {0};
	static struct log_throttle throttle;
	log_throttle_init(&throttle, 10000, say, &said);
	assert_true(log_throttle_note(&throttle, "task web/app", "no grant", 1000));
	for (int i = 0; i < 2999; i++)
		assert_false(log_throttle_note(&throttle, "task web/app", "no grant", 1000 + i));
	assert_int_equal(said.count, 0);
	/* Due when the interval that began at 1000 ends. */
	assert_int_equal(log_throttle_flush(&throttle, 5000), 11000);
	assert_int_equal(said.count, 0);
	assert_int_equal(log_throttle_flush(&throttle, 11000), 0);
	assert_int_equal(said.count, 1);
	assert_string_equal(said.lines[0], "task web/app 2999 no grant");
	/* Quiet for an interval: the next one is said in full again. */
	assert_true(log_throttle_note(&throttle, "task web/app", "no grant", 30000));
}

static void test_a_flood_that_goes_on_gives_one_summary_an_interval(void **state)
{
	(void)state;
	struct said said = {0};
	static struct log_throttle throttle;
	log_throttle_init(&throttle, 10000, say, &said);
	size_t said_in_full = 0;
	uint64_t due = 0;
	for (uint64_t now = 0; now < 60000; now += 10) {
		if (due && now >= due)
			due = log_throttle_flush(&throttle, now);
		said_in_full += log_throttle_note(&throttle, "uid 1000", "full", now);
		if (!due)
			due = log_throttle_flush(&throttle, now);
	}
	assert_int_equal(said_in_full, 1);
	/* One summary at each of the five interval ends within the minute. */
	assert_int_equal(said.count, 5);
	assert_string_equal(said.lines[0], "uid 1000 999 full");
}

static void test_sources_are_apart_and_the_last_reason_is_said(void **state)
{
	(void)state;
	struct said said = {0};
	static struct log_throttle throttle;
	log_throttle_init(&throttle, 10000, say, &said);
	assert_true(log_throttle_note(&throttle, "task a/x", "one", 0));
	assert_true(log_throttle_note(&throttle, "task b/y", "one", 0));
	assert_false(log_throttle_note(&throttle, "task a/x", "one", 1));
	assert_false(log_throttle_note(&throttle, "task a/x", "two", 2));
	log_throttle_flush(&throttle, 10000);
	assert_int_equal(said.count, 1);
	assert_string_equal(said.lines[0], "task a/x 2 two");
	/* A summary that was due is said by the next event if no timer ran. */
	assert_false(log_throttle_note(&throttle, "task a/x", "three", 10001));
	assert_false(log_throttle_note(&throttle, "task a/x", "three", 20002));
	assert_int_equal(said.count, 2);
	assert_string_equal(said.lines[1], "task a/x 1 three");
}

static void test_the_table_is_bounded_and_overflow_is_shared(void **state)
{
	(void)state;
	struct said said = {0};
	static struct log_throttle throttle;
	log_throttle_init(&throttle, 10000, say, &said);
	char source[32];
	for (int i = 0; i < LOG_THROTTLE_SOURCES - 1; i++) {
		snprintf(source, sizeof(source), "uid %d", i);
		assert_true(log_throttle_note(&throttle, source, "r", 0));
	}
	/* Every entry holds an open interval: the next sources share one. */
	assert_true(log_throttle_note(&throttle, "uid 5000", "r", 1));
	assert_false(log_throttle_note(&throttle, "uid 5001", "r", 2));
	assert_false(log_throttle_note(&throttle, "uid 5002", "r", 3));
	log_throttle_flush(&throttle, 10001);
	assert_int_equal(said.count, 1);
	assert_string_equal(said.lines[0], LOG_THROTTLE_OTHERS " 2 r");
	/* Once their intervals are over, entries are taken again. */
	assert_true(log_throttle_note(&throttle, "uid 6000", "r", 20000));
}

static void test_the_interval_is_said_in_seconds(void **state)
{
	(void)state;
	static struct log_throttle throttle;
	char text[32];
	log_throttle_init(&throttle, 10000, say, NULL);
	log_throttle_describe_interval(&throttle, text, sizeof(text));
	assert_string_equal(text, "10 s");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_a_flood_is_one_line_then_one_summary),
	    cmocka_unit_test(test_a_flood_that_goes_on_gives_one_summary_an_interval),
	    cmocka_unit_test(test_sources_are_apart_and_the_last_reason_is_said),
	    cmocka_unit_test(test_the_table_is_bounded_and_overflow_is_shared),
	    cmocka_unit_test(test_the_interval_is_said_in_seconds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
