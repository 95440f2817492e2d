/* Variables in config values: compose's forms, and every mistake with the
 * offset of its `$`. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config/text/interpolate.h"

/* HOME=/home/me, EMPTY= , nothing else. */
static const char *lookup(void *context, const char *name)
{
	(void)context;
	if (strcmp(name, "HOME") == 0)
		return "/home/me";
	if (strcmp(name, "EMPTY") == 0)
		return "";
	return NULL;
}

static void expect(const char *text, const char *wanted)
{
	char *out;
	size_t length;
	struct interpolate_error error;
	if (interpolate(text, strlen(text), lookup, NULL, &out, &length, &error) < 0)
		fail_msg("%s: %s", text, error.message);
	assert_string_equal(out, wanted);
	assert_int_equal(length, strlen(wanted));
	free(out);
}

static void expect_error(const char *text, size_t offset, const char *message)
{
	char *out;
	size_t length;
	struct interpolate_error error;
	assert_int_equal(interpolate(text, strlen(text), lookup, NULL, &out, &length, &error), -1);
	assert_string_equal(error.message, message);
	assert_int_equal(error.offset, offset);
}

static void test_forms(void **state)
{
	(void)state;
	expect("no variable", "no variable");
	expect("$HOME/x", "/home/me/x");
	expect("${HOME}/x", "/home/me/x");
	expect("a$${HOME}b", "a${HOME}b");
	expect("$$", "$");
	expect("${UNSET:-fallback}", "fallback");
	expect("${EMPTY:-fallback}", "fallback");
	expect("${EMPTY-fallback}", "");
	expect("${UNSET-fallback}", "fallback");
	expect("${HOME:-fallback}", "/home/me");
	expect("${HOME:+set}", "set");
	expect("${EMPTY:+set}", "");
	expect("${EMPTY+set}", "set");
	expect("${UNSET+set}", "");
	expect("${UNSET:-${HOME}/default}", "/home/me/default");
	expect("${HOME:?must be set}", "/home/me");
	expect("${EMPTY?may be empty}", "");
}

static void test_errors(void **state)
{
	(void)state;
	expect_error("x $UNSET y", 2,
		     "variable UNSET is not set (write ${UNSET:-default} for a default, or $$ for "
		     "a literal $)");
	expect_error("ab${UNSET}", 2,
		     "variable UNSET is not set (write ${UNSET:-default} for a default, or $$ for "
		     "a literal $)");
	expect_error("${UNSET:?give the token}", 0, "variable UNSET is not set: give the token");
	expect_error("${EMPTY:?give it}", 0, "variable EMPTY is empty: give it");
	expect_error("${UNSET?}", 0, "variable UNSET is not set");
	expect_error("price $5", 6, "a $ that starts no variable: write $$ for a literal $");
	expect_error("end $", 4, "a $ that starts no variable: write $$ for a literal $");
	expect_error("${HOME", 0, "unclosed ${: a } is missing");
	expect_error("${}", 0, "invalid variable ${}: a name is [A-Za-z_][A-Za-z0-9_]*");
	expect_error("${1A}", 0, "invalid variable ${1A}: a name is [A-Za-z_][A-Za-z0-9_]*");
	expect_error("${HOME/x}", 0,
		     "invalid variable ${HOME...}: after the name comes }, :-, -, :?, ?, :+ or +");
	expect_error("${UNSET:-${NOPE}}", 9,
		     "variable NOPE is not set (write ${NOPE:-default} for a default, or $$ for a "
		     "literal $)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_forms),
	    cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
