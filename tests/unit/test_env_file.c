/* env files: compose's format, and each mistake with its line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "config/text/env_file.h"

static char got[1024];

static void add(void *context, const char *name, size_t name_length, const char *value,
		size_t value_length)
{
	(void)context;
	size_t used = strlen(got);
	snprintf(got + used, sizeof(got) - used, "[%.*s=%.*s]", (int)name_length, name,
		 (int)value_length, value);
}

static void test_the_format(void **state)
{
	(void)state;
	const char *text = "# a comment\n"
			   "\n"
			   "PLAIN=value\n"
			   "  SPACED = padded value   \n"
			   "export EXPORTED=1\n"
			   "INLINE=before # after\n"
			   "HASH=a#b\n"
			   "SINGLE='literal \\n $HOME'\n"
			   "DOUBLE=\"tab\\tnew\\nquote\\\" end\" # comment\n"
			   "EMPTY=\n"
			   "LAST=no newline";
	unsigned line = 0;
	char error[128];
	got[0] = '\0';
	assert_int_equal(env_file_parse(text, strlen(text), add, NULL, &line, error, sizeof(error)),
			 0);
	assert_string_equal(got, "[PLAIN=value][SPACED=padded value][EXPORTED=1][INLINE=before]"
				 "[HASH=a#b][SINGLE=literal \\n $HOME]"
				 "[DOUBLE=tab\tnew\nquote\" end][EMPTY=][LAST=no newline]");
}

static void expect_error(const char *text, unsigned wanted_line, const char *message)
{
	unsigned line = 0;
	char error[128];
	got[0] = '\0';
	assert_int_equal(env_file_parse(text, strlen(text), add, NULL, &line, error, sizeof(error)),
			 -1);
	assert_int_equal(line, wanted_line);
	assert_string_equal(error, message);
}

static void test_mistakes(void **state)
{
	(void)state;
	expect_error("A=1\nNO_EQUALS\n", 2, "expected NAME=VALUE: no = after NO_EQUALS");
	expect_error("1BAD=x\n", 1, "expected NAME=VALUE, a name of letters, digits and _");
	expect_error("A=\"open\n", 1, "unclosed \" quote");
	expect_error("A='x' y\n", 1, "text after the closing quote");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_the_format),
	    cmocka_unit_test(test_mistakes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
