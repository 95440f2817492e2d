/* The loader on `termination_log`: a path, "" for none, and its mistakes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "config/load/config_load.h"
#include "config_cases.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define GROUPS        "groups: {g: {tasks: {t: {command: x}}}}\n"

static void test_path_none_and_not_written(void **state)
{
	struct config *config = parse_ok("termination_log: /run/corral/termination\n" GROUPS);
	assert_string_equal(config->termination_log, "/run/corral/termination");
	config_free(config);

	config = parse_ok("termination_log: \"\"\n" GROUPS);
	assert_string_equal(config->termination_log, "");
	config_free(config);

	config = parse_ok(GROUPS);
	assert_null(config->termination_log);
	config_free(config);
}

static const struct error_case cases[] = {
    {"relative", "termination_log: msg\n" GROUPS, 1, 18,
     "termination_log: must be an absolute path to a file, or \"\" for none, not \"msg\""},
    {"the root", "termination_log: /\n" GROUPS, 1, 18,
     "termination_log: must be an absolute path to a file, or \"\" for none, not \"/\""},
    {"a list", "termination_log: [/a]\n" GROUPS, 1, 18,
     "termination_log: must be a string, not a list"},
};

static void test_errors(void **state)
{
	assert_error_cases(cases, ARRAY_SIZE(cases));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_path_none_and_not_written),
	    cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
