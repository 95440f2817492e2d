/* When a probe's failures are worth saying (probe_record.h): the first of
 * a streak, each new reason, reminders at 2, 4, ... 64, then every 64. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "supervisor/probes/probe_record.h"

static void test_reminders_double_then_stay_at_the_cap(void **state)
{
	static const unsigned due[] = {2, 4, 8, 16, 32, 64, 128, 192, 256};
	static const unsigned quiet[] = {0, 1, 3, 5, 6, 7, 9, 33, 63, 65, 96, 127, 129};
	for (size_t i = 0; i < sizeof(due) / sizeof(due[0]); i++)
		assert_true(probe_record_reminder_due(due[i]));
	for (size_t i = 0; i < sizeof(quiet) / sizeof(quiet[0]); i++)
		assert_false(probe_record_reminder_due(quiet[i]));
}

static void test_a_streak_with_changing_reasons(void **state)
{
	struct probe_record record;
	probe_record_reset(&record);
	assert_false(record.has_result);
	assert_int_equal(probe_record_add(&record, true, "", 10), PROBE_NEWS_NONE);
	assert_string_equal(record.last_result, "passed");
	assert_true(record.passed);

	assert_int_equal(probe_record_add(&record, false, "exited with code 1", 20),
			 PROBE_NEWS_FIRST_FAILURE);
	assert_int_equal(probe_record_add(&record, false, "exited with code 1", 30),
			 PROBE_NEWS_STILL_FAILING); /* the 2nd */
	assert_int_equal(probe_record_add(&record, false, "exited with code 1", 40),
			 PROBE_NEWS_NONE);
	assert_int_equal(probe_record_add(&record, false, "timed out after 1s", 50),
			 PROBE_NEWS_NEW_REASON);
	assert_string_equal(record.previous_reason, "exited with code 1");
	assert_string_equal(record.said_reason, "timed out after 1s");
	assert_int_equal(record.failures_in_a_row, 4);
	assert_false(record.passed);
	assert_int_equal(record.at_ms, 50);
	/* The 5th to the 7th are the same: quiet; the 8th reminds. */
	for (int i = 5; i <= 7; i++)
		assert_int_equal(probe_record_add(&record, false, "timed out after 1s", 60),
				 PROBE_NEWS_NONE);
	assert_int_equal(probe_record_add(&record, false, "timed out after 1s", 70),
			 PROBE_NEWS_STILL_FAILING);

	assert_int_equal(probe_record_add(&record, true, "", 80), PROBE_NEWS_RECOVERED);
	assert_int_equal(record.failures_in_a_row, 0);
	/* A new streak starts over, whatever its reason. */
	assert_int_equal(probe_record_add(&record, false, "timed out after 1s", 90),
			 PROBE_NEWS_FIRST_FAILURE);
}

/* Issue 28, item 20: failures before the first readiness are held back
 * for the start period, and said once if the start fails or the period
 * ends. */
static void test_start_period_failures_are_held_then_said_once(void **state)
{
	struct probe_record record;
	char said[256];
	probe_record_reset(&record);
	probe_record_start_period(&record, 1000, 5000); /* start_period 5s */
	assert_false(probe_record_take_held(&record, said, sizeof(said)));
	probe_record_add(&record, false, "connect 127.0.0.1:8080: Connection refused", 1100);
	assert_true(probe_record_hold_failure(&record, 1100));
	probe_record_add(&record, false, "HTTP 503", 5999);
	assert_true(probe_record_hold_failure(&record, 5999));
	assert_true(probe_record_take_held(&record, said, sizeof(said)));
	assert_string_equal(said, "2 failures in a row while it started, last: HTTP 503");
	assert_false(probe_record_take_held(&record, said, sizeof(said))); /* once */
	/* Past the period, a failure is the caller's to say. */
	probe_record_add(&record, false, "HTTP 503", 6000);
	assert_false(probe_record_hold_failure(&record, 6000));

	/* A pass ends the streak: nothing held to say. */
	probe_record_reset(&record);
	probe_record_start_period(&record, 0, 30000);
	probe_record_add(&record, false, "HTTP 503", 10);
	assert_true(probe_record_hold_failure(&record, 29999));
	assert_false(probe_record_hold_failure(&record, 30000));
	probe_record_add(&record, true, "", 20);
	assert_false(probe_record_take_held(&record, said, sizeof(said)));

	/* start_period: 0, none: every failure is said. */
	probe_record_reset(&record);
	probe_record_start_period(&record, 100, 0);
	probe_record_add(&record, false, "HTTP 503", 110);
	assert_false(probe_record_hold_failure(&record, 110));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_reminders_double_then_stay_at_the_cap),
	    cmocka_unit_test(test_a_streak_with_changing_reasons),
	    cmocka_unit_test(test_start_period_failures_are_held_then_said_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
