/* The parse-and-check loops every config unit test shares. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "config_cases.h"
#include "isolation/seccomp_syscall_names.h"

/* As cli/main.c does for every command: configs' syscall names are checked
 * against libseccomp's tables. */
__attribute__((constructor)) static void use_libseccomp_syscall_names(void)
{
	config_use_syscall_names(seccomp_syscall_names());
}

struct config *parse_ok(const char *yaml)
{
	struct config_diagnostics diagnostics = {0};
	struct config *config = config_parse_buffer("test.yaml", yaml, strlen(yaml), &diagnostics);

	/* Show what went wrong before failing. */
	config_diagnostics_print(&diagnostics, "test.yaml", stderr);
	assert_int_equal(diagnostics.count, 0);
	assert_null(diagnostics.items);
	assert_non_null(config);
	return config;
}

void assert_one_error(const char *what, const char *yaml, unsigned line, unsigned column,
		      const char *message)
{
	struct config_diagnostics diagnostics = {0};
	struct config *config;

	print_message("%s\n", what);
	config = config_parse_buffer("test.yaml", yaml, strlen(yaml), &diagnostics);
	config_diagnostics_print(&diagnostics, "test.yaml", stderr);
	assert_null(config);
	assert_int_equal(diagnostics.count, 1);
	assert_string_equal(diagnostics.items[0].message, message);
	assert_int_equal(diagnostics.items[0].location.line, line);
	assert_int_equal(diagnostics.items[0].location.column, column);
	config_diagnostics_free(&diagnostics);
}

void assert_error_cases(const struct error_case *cases, size_t count)
{
	for (size_t i = 0; i < count; i++)
		assert_one_error(cases[i].what, cases[i].yaml, cases[i].line, cases[i].column,
				 cases[i].message);
}

const struct isolation_config *isolation_of(const struct config *config, const char *full_name)
{
	for (size_t g = 0; g < config->group_count; g++) {
		for (size_t t = 0; t < config->groups[g].task_count; t++) {
			if (strcmp(config->groups[g].tasks[t].full_name, full_name) == 0)
				return &config->groups[g].tasks[t].isolation;
		}
	}
	fail_msg("no task %s", full_name);
	return NULL;
}
