/* Shared by the config unit tests (test_config*.c): parse a YAML text and
 * expect success, or expect exactly one diagnostic with its message, line
 * and column. Include after <cmocka.h>. */
#ifndef CORRAL_TESTS_CONFIG_CASES_H
#define CORRAL_TESTS_CONFIG_CASES_H

#include <stddef.h>

#include "config/load/config_load.h"

/* One bad input and the one diagnostic it must give. */
struct error_case {
	const char *what;
	const char *yaml;
	unsigned line, column;
	const char *message;
};

/* Parses `yaml`, prints any diagnostics and fails unless there are none. */
struct config *parse_ok(const char *yaml);

/* Parses `yaml` and fails unless it gives no config and exactly one
 * diagnostic, `message` at `line`:`column`. `what` names the case in the
 * output. */
void assert_one_error(const char *what, const char *yaml, unsigned line, unsigned column,
		      const char *message);

/* assert_one_error on each of `count` cases. */
void assert_error_cases(const struct error_case *cases, size_t count);

/* The isolation of the task named `full_name` ("group/task"); fails if
 * there is none. */
const struct isolation_config *isolation_of(const struct config *config, const char *full_name);

#endif
