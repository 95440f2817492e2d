/* readiness.log patterns (config/text/line_pattern.h): the ERE syntax configs
 * use today still matches as glibc's regexec did, lines are read to
 * their length only, and what the cost walk refuses (back-references,
 * repetitions that multiply out too far) is refused at its offset. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config/text/line_pattern.h"

static bool matches(const char *pattern_text, const char *line)
{
	char error[512];
	size_t offset;
	struct line_pattern *pattern =
	    line_pattern_compile(pattern_text, &offset, error, sizeof(error));
	if (!pattern)
		fail_msg("%s refused: %s", pattern_text, error);
	bool result = line_pattern_matches(pattern, line, strlen(line));
	line_pattern_free(pattern);
	return result;
}

static void test_syntax_of_existing_configs(void **state)
{
	(void)state;
	assert_true(matches("ready to accept connections",
			    "LOG:  database system is ready to accept connections"));
	assert_true(matches("^Started .* in [0-9.]+ seconds", "Started App in 3.2 seconds (JVM)"));
	assert_false(matches("^Started", "  Started"));
	assert_true(
	    matches("listening on (port|socket) [[:digit:]]{2,5}$", "listening on port 8080"));
	assert_false(
	    matches("listening on (port|socket) [[:digit:]]{2,5}$", "listening on port 8"));
	assert_true(matches("[0-9]{1,3}(\\.[0-9]{1,3}){3}", "bound to 10.0.0.12:80"));
	assert_true(matches("\\<up\\>", "service up now"));
	assert_false(matches("\\<up\\>", "setup done"));
	assert_true(matches("\\bup\\b", "is up"));
	assert_true(matches("\\w+=\\S+", "key=value"));
	assert_true(matches("a|b", "xbx"));
	assert_true(matches("^$|x", "x"));
	assert_true(matches("état prêt", "serveur: état prêt ✓"));
	assert_true(matches("[^a-z]$", "abc1"));
	assert_true(matches("a\\.b", "a.b"));
	assert_false(matches("a\\.b", "axb"));
}

static void test_line_read_to_its_length_only(void **state)
{
	(void)state;
	char error[512];
	size_t offset;
	struct line_pattern *pattern =
	    line_pattern_compile("ready$", &offset, error, sizeof(error));
	assert_non_null(pattern);
	const char *batch = "not ready\nready now\n";
	assert_true(line_pattern_matches(pattern, batch, 9));       /* "not ready" */
	assert_false(line_pattern_matches(pattern, batch + 10, 9)); /* "ready now" */
	line_pattern_free(pattern);
}

/* The patterns that held glibc's matcher, on a 4000-byte line: each gives
 * its answer (the test ends; ctest's timeout is what would catch a hang). */
static void test_heavy_patterns_answer_on_long_lines(void **state)
{
	(void)state;
	char *line = malloc(4001);
	memset(line, 'a', 4000);
	line[4000] = 0;
	assert_false(matches("(.*a){16}b", line));
	assert_false(matches("^(.*)(.*)x$", line));
	assert_false(matches("(a|aa)*c", line));
	line[3999] = 'b';
	assert_true(matches("(.*a){16}b", line));
	free(line);
}

static void refused_at(const char *text, size_t expected_offset, const char *expected_part)
{
	char error[512];
	size_t offset = 99;
	struct line_pattern *pattern = line_pattern_compile(text, &offset, error, sizeof(error));
	if (pattern)
		fail_msg("%s was taken", text);
	assert_int_equal(offset, expected_offset);
	if (!strstr(error, expected_part))
		fail_msg("%s: \"%s\" lacks \"%s\"", text, error, expected_part);
}

static void test_refusals_at_their_offset(void **state)
{
	(void)state;
	refused_at("^(.*)(.*)\\2\\1x$", 9, "\\2 is a back-reference");
	refused_at("(a)\\1", 3, "\\1 is a back-reference");
	refused_at("(.*){17}b", 4, "has 17 repetition operators");
	refused_at("((.?){8}){8}", 9, "has 64 repetition operators");
	refused_at("x(y{20}){20}", 8, "has 400 characters and classes");
	refused_at("(((a{255}){255}){255})", 10, "has 65025 characters");
	refused_at("(.*a){9}(.*b){9}", 0, "has 18 repetition operators");
	refused_at("a(b", 0, "not an extended regular expression");
	refused_at("ab{1,300}", 2, "a count of 300: counts go to 255 at most");
}

static void test_limits_themselves_taken(void **state)
{
	(void)state;
	char error[512];
	size_t offset;
	const char *taken[] = {"(.*){16}b", "x{16}y{240}", "[\\1]{3}", "a\\\\1", ".{0,15}x", NULL};
	for (const char *const *text = taken; *text; text++) {
		struct line_pattern *pattern =
		    line_pattern_compile(*text, &offset, error, sizeof(error));
		if (!pattern)
			fail_msg("%s refused: %s", *text, error);
		line_pattern_free(pattern);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_syntax_of_existing_configs),
	    cmocka_unit_test(test_line_read_to_its_length_only),
	    cmocka_unit_test(test_heavy_patterns_answer_on_long_lines),
	    cmocka_unit_test(test_refusals_at_their_offset),
	    cmocka_unit_test(test_limits_themselves_taken),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
