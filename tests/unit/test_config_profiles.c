/* Profiles: the names compose allows, CORRAL_PROFILES's list, and a config
 * loaded with some active (groups and tasks in none of them left out). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/xmalloc.h"
#include "config/load/config_load.h"
#include "config/load/profiles.h"
#include "config/model/config.h"

static void test_names(void **state)
{
	(void)state;
	assert_null(profile_name_problem("debug", 5));
	assert_null(profile_name_problem("a.b_c-1", 7));
	assert_null(profile_name_problem("9", 1));
	assert_string_equal(profile_name_problem("", 0), "must not be empty");
	assert_string_equal(profile_name_problem("_x", 2), "must start with a letter or a digit");
	assert_string_equal(profile_name_problem("a b", 3),
			    "may only use letters, digits, '_', '.' and '-'");
}

static void test_a_comma_separated_list(void **state)
{
	(void)state;
	char **names = NULL, error[160];
	size_t count = 0;
	assert_int_equal(
	    profiles_split(" debug, tools,,debug ,", &names, &count, error, sizeof(error)), 0);
	assert_int_equal(count, 2);
	assert_string_equal(names[0], "debug");
	assert_string_equal(names[1], "tools");
	assert_null(names[2]);
	assert_int_equal(profiles_split("ok,b@d", &names, &count, error, sizeof(error)), -1);
	assert_string_equal(error,
			    "profile \"b@d\": may only use letters, digits, '_', '.' and '-'");
	string_vector_free(names);
	char described[64];
	profiles_describe(NULL, described, sizeof(described));
	assert_string_equal(described, "none");
}

static struct config *load(const char *yaml, const char *const *profiles)
{
	char path[] = "/tmp/test_config_profiles_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, yaml, strlen(yaml)), (ssize_t)strlen(yaml));
	close(fd);
	const char *paths[] = {path};
	struct config_diagnostics diagnostics;
	struct config *config = config_load_paths_with_profiles(paths, 1, profiles, &diagnostics);
	config_diagnostics_print(&diagnostics, path, stderr);
	config_diagnostics_free(&diagnostics);
	unlink(path);
	return config;
}

static const char yaml[] = "groups:\n"
			   "  a:\n"
			   "    tasks:\n"
			   "      always: {command: x}\n"
			   "      debugger: {command: x, profiles: [debug]}\n"
			   "      seq: {command: x, instances: 2, profiles: [debug]}\n"
			   "  b:\n"
			   "    profiles: [tools]\n"
			   "    tasks:\n"
			   "      shell: {command: x}\n"
			   "  c:\n"
			   "    tasks:\n"
			   "      only: {command: x, profiles: [tools]}\n";

static void test_what_is_left_out(void **state)
{
	(void)state;
	struct config *config = load(yaml, NULL);
	assert_non_null(config);
	assert_int_equal(config->group_count, 1);
	assert_int_equal(config->groups[0].task_count, 1);
	assert_string_equal(config->groups[0].tasks[0].name, "always");
	assert_null(config->profiles);
	config_free(config);

	const char *const debug[] = {"debug", NULL};
	config = load(yaml, debug);
	assert_non_null(config);
	assert_int_equal(config->group_count, 1);
	assert_int_equal(config->groups[0].task_count, 4);
	assert_string_equal(config->groups[0].tasks[3].name, "seq@1");
	assert_string_equal(config->profiles[0], "debug");
	assert_null(config->profiles[1]);
	config_free(config);

	const char *const tools[] = {"tools", NULL};
	config = load(yaml, tools);
	assert_non_null(config);
	assert_int_equal(config->group_count, 3);
	assert_string_equal(config->groups[1].name, "b");
	assert_string_equal(config->groups[2].tasks[0].name, "only");
	config_free(config);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_names),
	    cmocka_unit_test(test_a_comma_separated_list),
	    cmocka_unit_test(test_what_is_left_out),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
