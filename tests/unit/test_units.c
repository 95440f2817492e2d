/* Durations, sizes and signal names: every accepted form and every class of
 * refusal, with the exact explanation given. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/units.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define UNTOUCHED     0xdeadbeefULL

struct good_number {
	const char *text;
	uint64_t expected;
};

struct bad_number {
	const char *text;
	const char *why;
};

static const struct good_number good_durations[] = {
    {"0", 0},
    {"00", 0},
    {"0s", 0},
    {"0ms", 0},
    {"500ms", 500},
    {"10s", 10000},
    {"90s", 90000},
    {"1m30s", 90000},
    {"2h", 7200000},
    {"1h30m", 5400000},
    {"1s500ms", 1500},
    {"1h2m3s4ms", 3723004},
    {"18446744073709551615ms", UINT64_MAX},
};

static const char why_empty[] = "empty (write e.g. 500ms, 10s, 1m30s or 0)";
static const char why_no_unit[] = "a number needs a unit (ms, s, m or h); only 0 goes without";
static const char why_unknown_unit[] = "unknown unit (use ms, s, m or h)";
static const char why_order[] = "units must go from largest to smallest, each at most once "
				"(e.g. 1h30m, 1m30s, 1s500ms)";
static const char why_negative[] = "must not be negative";
static const char why_fraction[] = "use whole numbers (write e.g. 1s500ms, not 1.5s)";
static const char why_spaces[] = "must not contain spaces (write e.g. 1m30s)";
static const char why_no_number[] = "expected a number before each unit (e.g. 500ms, 10s, 1m30s)";

static const struct bad_number bad_durations[] = {
    {"", why_empty},
    {"30", why_no_unit},
    {"1m30", why_no_unit},
    {"5x", why_unknown_unit},
    {"5S", why_unknown_unit},
    {"5sec", why_unknown_unit},
    {"5\xc2\xb5s", why_unknown_unit},
    {"1s1m", why_order},
    {"1s1s", why_order},
    {"500ms1s", why_order},
    {"-5s", why_negative},
    {"1.5s", why_fraction},
    {"1,5s", why_fraction},
    {"1m 30s", why_spaces},
    {" 1s", why_spaces},
    {"s", why_no_number},
    {"1ms5", why_no_unit},
    {"18446744073709551616ms", "too large"},
    {"5124095576031h", "too large"},
    {"5124095576030h1000000000m", "too large"},
};

static void test_duration_good(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(good_durations); i++) {
		uint64_t value = UNTOUCHED;
		const char *why = NULL;

		print_message("duration %s\n", good_durations[i].text);
		assert_int_equal(parse_duration_ms(good_durations[i].text, &value, &why), 0);
		assert_int_equal(value, good_durations[i].expected);
		assert_null(why);
	}
}

static void test_duration_bad(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(bad_durations); i++) {
		uint64_t value = UNTOUCHED;
		const char *why = NULL;

		print_message("duration \"%s\"\n", bad_durations[i].text);
		assert_int_equal(parse_duration_ms(bad_durations[i].text, &value, &why), -EINVAL);
		assert_non_null(why);
		assert_string_equal(why, bad_durations[i].why);
		assert_int_equal(value, UNTOUCHED);
	}
}

static void test_duration_null_why(void **state)
{
	uint64_t value = UNTOUCHED;

	/* Callers that only want a yes or no may pass no `why`. */
	assert_int_equal(parse_duration_ms("5x", &value, NULL), -EINVAL);
	assert_int_equal(parse_duration_ms(NULL, &value, NULL), -EINVAL);
	assert_int_equal(value, UNTOUCHED);
}

static const struct good_number good_sizes[] = {
    {"0", 0},
    {"512", 512},
    {"512K", 524288},
    {"512k", 524288},
    {"256M", 268435456},
    {"1G", 1073741824},
    {"1g", 1073741824},
    {"2T", 2199023255552ULL},
    {"16777215T", 16777215ULL << 40},
    {"18446744073709551615", UINT64_MAX},
};

static const struct bad_number bad_sizes[] = {
    {"", "empty (write e.g. 512K, 256M, 1G or a number of bytes)"},
    {"K", "expected a number (e.g. 512K, 256M, 1G)"},
    {"-1", "must not be negative"},
    {"1.5G", "use whole numbers (write e.g. 1536M, not 1.5G)"},
    {"1X", "unknown unit (use K, M, G or T, or a plain number of bytes)"},
    {"1KB", "unknown unit (use K, M, G or T, or a plain number of bytes)"},
    {"1 K", "unknown unit (use K, M, G or T, or a plain number of bytes)"},
    {"16777216T", "too large"},
    {"18446744073709551616", "too large"},
};

static void test_size_good(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(good_sizes); i++) {
		uint64_t value = UNTOUCHED;
		const char *why = NULL;

		print_message("size %s\n", good_sizes[i].text);
		assert_int_equal(parse_size_bytes(good_sizes[i].text, &value, &why), 0);
		assert_int_equal(value, good_sizes[i].expected);
		assert_null(why);
	}
}

static void test_size_bad(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(bad_sizes); i++) {
		uint64_t value = UNTOUCHED;
		const char *why = NULL;

		print_message("size \"%s\"\n", bad_sizes[i].text);
		assert_int_equal(parse_size_bytes(bad_sizes[i].text, &value, &why), -EINVAL);
		assert_non_null(why);
		assert_string_equal(why, bad_sizes[i].why);
		assert_int_equal(value, UNTOUCHED);
	}
}

struct signal_case {
	const char *text;
	int expected;
};

static void test_signal_parse(void **state)
{
	const struct signal_case cases[] = {
	    {"SIGTERM", 15},
	    {"TERM", 15},
	    {"sigterm", 15},
	    {"SigTerm", 15},
	    {"HUP", 1},
	    {"SIGKILL", 9},
	    {"SIGSTKFLT", 16},
	    {"SIGCHLD", 17},
	    {"SIGSYS", 31},
	    {"SIGRTMIN", SIGRTMIN},
	    {"RTMIN", SIGRTMIN},
	    {"RTMIN+3", SIGRTMIN + 3},
	    {"sigrtmin+1", SIGRTMIN + 1},
	    {"SIGRTMAX", SIGRTMAX},
	    {"RTMAX-2", SIGRTMAX - 2},
	    {"", -EINVAL},
	    {"SIG", -EINVAL},
	    {"SIGFOO", -EINVAL},
	    {"15", -EINVAL},
	    {" SIGTERM", -EINVAL},
	    {"SIGTERMX", -EINVAL},
	    {"RTMIN+", -EINVAL},
	    {"RTMIN-1", -EINVAL},
	    {"RTMAX+1", -EINVAL},
	    {"RTMIN+99", -EINVAL},
	    {"RTMIN+1x", -EINVAL},
	};

	assert_int_equal(parse_signal_name(NULL), -EINVAL);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("signal \"%s\"\n", cases[i].text);
		assert_int_equal(parse_signal_name(cases[i].text), cases[i].expected);
	}
}

static void test_signal_name(void **state)
{
	const struct signal_case cases[] = {
	    {"SIGHUP", 1},
	    {"SIGKILL", 9},
	    {"SIGTERM", 15},
	    {"SIGSTKFLT", 16},
	    {"SIGSYS", 31},
	    {"SIGRTMIN", SIGRTMIN},
	    {"SIGRTMIN+1", SIGRTMIN + 1},
	    {"SIGRTMIN+15", SIGRTMIN + 15},
	    {"SIGRTMAX-1", SIGRTMAX - 1},
	    {"SIGRTMAX", SIGRTMAX},
	    {"SIG?", 0},
	    {"SIG?", -1},
	    {"SIG?", SIGRTMAX + 1},
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		assert_string_equal(signal_name(cases[i].expected), cases[i].text);
}

static void test_signal_round_trip(void **state)
{
	int named = 0;

	for (int number = 1; number <= SIGRTMAX; number++) {
		const char *name = signal_name(number);

		if (strcmp(name, "SIG?") == 0)
			continue; /* 32 and 33: glibc keeps them for itself */
		named++;
		print_message("signal %d %s\n", number, name);
		assert_int_equal(parse_signal_name(name), number);
	}
	assert_int_equal(named, 31 + (SIGRTMAX - SIGRTMIN + 1));
}

static void test_format_duration(void **state)
{
	const struct good_number cases[] = {
	    {"0", 0},        {"1ms", 1},          {"500ms", 500},
	    {"1s", 1000},    {"1s1ms", 1001},     {"1m30s", 90000},
	    {"2h", 7200000}, {"100h", 360000000}, {"1h2m3s4ms", 3723004},
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char buffer[32];
		uint64_t back = UNTOUCHED;

		format_duration_ms(cases[i].expected, buffer, sizeof(buffer));
		assert_string_equal(buffer, cases[i].text);
		assert_int_equal(parse_duration_ms(buffer, &back, NULL), 0);
		assert_int_equal(back, cases[i].expected);
	}
}

static void test_format_duration_small_buffer(void **state)
{
	char buffer[4] = "xyz";
	char nothing[1] = {'x'};

	/* Whole parts only: "1m3" would read as a different duration. */
	format_duration_ms(90000, buffer, sizeof(buffer));
	assert_string_equal(buffer, "1m");
	format_duration_ms(90000, nothing, sizeof(nothing));
	assert_string_equal(nothing, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_duration_good),
	    cmocka_unit_test(test_duration_bad),
	    cmocka_unit_test(test_duration_null_why),
	    cmocka_unit_test(test_size_good),
	    cmocka_unit_test(test_size_bad),
	    cmocka_unit_test(test_signal_parse),
	    cmocka_unit_test(test_signal_name),
	    cmocka_unit_test(test_signal_round_trip),
	    cmocka_unit_test(test_format_duration),
	    cmocka_unit_test(test_format_duration_small_buffer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
