/* Cron expressions: parsing (and each mistake, with its field) and the next
 * run after a given time, on broken-down time (no clock, no time zone). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "config/text/cron.h"

/* "2026-11-24 10:07" -> struct tm */
static struct tm at(const char *text)
{
	struct tm time = {.tm_isdst = -1};
	assert_int_equal(sscanf(text, "%d-%d-%d %d:%d", &time.tm_year, &time.tm_mon, &time.tm_mday,
				&time.tm_hour, &time.tm_min),
			 5);
	time.tm_year -= 1900;
	time.tm_mon -= 1;
	return time;
}

static const char *next_of(const char *expression, const char *after)
{
	static char text[64];
	struct cron cron;
	char error[128];
	assert_int_equal(cron_parse(expression, &cron, error, sizeof(error)), 0);
	struct tm start = at(after), next;
	if (!cron_next(&cron, &start, &next))
		return "never";
	snprintf(text, sizeof(text), "%04d-%02d-%02d %02d:%02d", next.tm_year + 1900,
		 next.tm_mon + 1, next.tm_mday, next.tm_hour, next.tm_min);
	return text;
}

static void test_next_runs(void **state)
{
	(void)state;
	assert_string_equal(next_of("* * * * *", "2026-11-24 10:07"), "2026-11-24 10:08");
	assert_string_equal(next_of("*/15 * * * *", "2026-11-24 10:07"), "2026-11-24 10:15");
	assert_string_equal(next_of("0 3 * * *", "2026-11-24 10:07"), "2026-11-25 03:00");
	assert_string_equal(next_of("@hourly", "2026-11-24 23:59"), "2026-11-25 00:00");
	assert_string_equal(next_of("@yearly", "2026-11-24 10:07"), "2027-01-01 00:00");
	assert_string_equal(next_of("30 8 * * mon-fri", "2026-11-27 09:00"), "2026-11-30 08:30");
	/* 29 February: the next leap year. */
	assert_string_equal(next_of("0 0 29 feb *", "2026-03-01 00:00"), "2028-02-29 00:00");
	/* Both day fields: either matches (Vixie cron), the 1st or a Sunday. */
	assert_string_equal(next_of("0 0 1 * sun", "2026-11-24 10:07"), "2026-11-29 00:00");
	/* 7 is Sunday too; lists and steps within a range. */
	assert_string_equal(next_of("5,35 1-10/3 * * 7", "2026-11-29 04:36"), "2026-11-29 07:05");
	assert_string_equal(next_of("0 0 30 feb *", "2026-01-01 00:00"), "never");
	/* Said at once when no day can ever match, and only then: a 31st in
	 * months of 30 days never comes, but with a weekday either may. */
	assert_string_equal(next_of("0 0 31 apr,jun,sep,nov *", "2026-01-01 00:00"), "never");
	assert_string_equal(next_of("0 0 31 apr mon", "2026-01-01 00:00"), "2026-04-06 00:00");
	assert_string_equal(next_of("0 0 29 feb *", "2097-01-01 00:00"), "2104-02-29 00:00");
}

static void test_mistakes_name_their_field(void **state)
{
	(void)state;
	const struct {
		const char *expression, *error;
	} cases[] = {
	    {"* * * *", "4 fields where cron takes five: minute hour day-of-month month "
			"day-of-week (or @daily, @hourly...)"},
	    {"* * * * * *", "more than five fields (minute hour day-of-month month day-of-week)"},
	    /* A leading tab is blank space, not an empty first field. */
	    {"\t* 3 * 2", "4 fields where cron takes five: minute hour day-of-month month "
			  "day-of-week (or @daily, @hourly...)"},
	    {"60 * * * *", "field 1 (minute): 60 is out of 0-59"},
	    {"* 24 * * *", "field 2 (hour): 24 is out of 0-23"},
	    {"* * 0 * *", "field 3 (day of month): 0 is out of 1-31"},
	    {"* * * foo *", "field 4 (month): foo is not a number, a name, a range or *"},
	    {"* * * * 5-1", "field 5 (day of week): 5-1: a range goes from low to high"},
	    {"*/0 * * * *", "field 1 (minute): */0: the step must be a number above 0"},
	    {"@often", "unknown @often; the names are @yearly, @annually, @monthly, @weekly, "
		       "@daily, @midnight and @hourly"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cron cron;
		char error[256];
		assert_int_equal(cron_parse(cases[i].expression, &cron, error, sizeof(error)), -1);
		assert_string_equal(error, cases[i].error);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_next_runs),
	    cmocka_unit_test(test_mistakes_name_their_field),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
