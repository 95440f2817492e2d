/* A task's `watch:` list: paths (absolute, or from the config file's
 * directory, cleaned; a glob in the last part only), the action and the
 * debounce; the path helpers the run time shares; and a change of it is
 * an in-place change for reload. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/paths.h"
#include "config/model/config.h"
#include "config/model/config_diff.h"
#include "config/text/watch_path.h"
#include "config_cases.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
/* The task's value starts at line 4, column 12. */
#define TASK(flow) "groups:\n  web:\n    tasks:\n      app: " flow "\n"

static const struct task_config *only_task(const struct config *config)
{
	return &config->groups[0].tasks[0];
}

static void test_an_entry_with_its_defaults(void **state)
{
	(void)state;
	struct config *config =
	    parse_ok(TASK("{command: x, watch: [{paths: /etc/app.conf}, /etc/b.conf]}"));
	const struct task_config *task = only_task(config);
	assert_int_equal(task->watch_count, 2);
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(task->watches[i].path_count, 1);
		assert_int_equal(task->watches[i].action, WATCH_ACTION_RESTART);
		assert_int_equal(task->watches[i].debounce_ms, CONFIG_DEFAULT_WATCH_DEBOUNCE_MS);
	}
	assert_string_equal(task->watches[0].paths[0], "/etc/app.conf");
	assert_string_equal(task->watches[1].paths[0], "/etc/b.conf");
	assert_null(task->watches[0].paths[1]);
	config_free(config);
}

static void test_actions_and_debounce(void **state)
{
	(void)state;
	struct config *config =
	    parse_ok(TASK("{command: x, watch: [{paths: [/a, /b/*.yaml], action: {signal: HUP}, "
			  "debounce: 250ms}, {paths: /c, action: reload, debounce: 0s}]}"));
	const struct task_config *task = only_task(config);
	assert_int_equal(task->watches[0].action, WATCH_ACTION_SIGNAL);
	assert_int_equal(task->watches[0].signal, 1);
	assert_int_equal(task->watches[0].debounce_ms, 250);
	assert_int_equal(task->watches[0].path_count, 2);
	assert_int_equal(task->watches[1].action, WATCH_ACTION_RELOAD);
	assert_int_equal(task->watches[1].debounce_ms, 0);
	assert_string_equal(watch_action_name(WATCH_ACTION_SIGNAL), "signal");
	config_free(config);
}

static void test_paths_are_cleaned_and_each_kept_once(void **state)
{
	(void)state;
	struct config *config = parse_ok(
	    TASK("{command: x, watch: [{paths: [/etc//app/./conf/, /etc/app/x/../conf, /b]}]}"));
	const struct watch_config *watch = &only_task(config)->watches[0];
	assert_int_equal(watch->path_count, 2);
	assert_string_equal(watch->paths[0], "/etc/app/conf");
	assert_string_equal(watch->paths[1], "/b");
	config_free(config);
}

static void test_a_relative_path_starts_from_the_config_files_directory(void **state)
{
	(void)state;
	struct config_diagnostics diagnostics;
	const char *yaml = TASK("{command: x, watch: [{paths: [conf.d/a.yaml, ../b]}]}");
	struct config *config =
	    config_parse_buffer("/srv/corral/corral.yaml", yaml, strlen(yaml), &diagnostics);
	assert_non_null(config);
	const struct watch_config *watch = &only_task(config)->watches[0];
	assert_string_equal(watch->paths[0], "/srv/corral/conf.d/a.yaml");
	assert_string_equal(watch->paths[1], "/srv/b");
	config_free(config);
}

static void test_each_mistake_is_one_error_at_its_place(void **state)
{
	(void)state;
	static const struct error_case cases[] = {
	    {"not a list", TASK("{command: x, watch: /a}"), 4, 32,
	     "web/app: watch: must be a list of {paths, action, debounce}, not a string"},
	    {"no paths", TASK("{command: x, watch: [{action: restart}]}"), 4, 33,
	     "web/app: watch[0]: missing \"paths\" (files, directories or globs)"},
	    {"empty path", TASK("{command: x, watch: [{paths: ''}]}"), 4, 41,
	     "web/app: watch[0].paths: must not be empty (a file, a directory or a glob)"},
	    {"a glob in a directory", TASK("{command: x, watch: [{paths: '/a/b?/c'}]}"), 4, 41,
	     "web/app: watch[0].paths: \"/a/b?/c\": a glob may only be in the last part of the "
	     "path (\"b?\" is a directory on the way): list the directories one by one"},
	    {"unclosed bracket", TASK("{command: x, watch: [{paths: '/a/[x'}]}"), 4, 41,
	     "web/app: watch[0].paths: \"/a/[x\": bad glob: a \"[\" is not closed by \"]\""},
	    {"root", TASK("{command: x, watch: [{paths: /a/..}]}"), 4, 41,
	     "web/app: watch[0].paths: \"/a/..\" is the root directory: name the files or "
	     "directories to watch"},
	    {"unknown action", TASK("{command: x, watch: [{paths: /a, action: stop}]}"), 4, 53,
	     "web/app: watch[0].action: unknown action \"stop\" (use restart or reload)"},
	    {"a signal alone", TASK("{command: x, watch: [{paths: /a, action: SIGUSR1}]}"), 4, 53,
	     "web/app: watch[0].action: write a signal as a map: {signal: SIGUSR1}"},
	    {"no signal", TASK("{command: x, watch: [{paths: /a, action: {}}]}"), 4, 53,
	     "web/app: watch[0].action: a map must name a signal: {signal: SIGHUP}"},
	    {"bad debounce", TASK("{command: x, watch: [{paths: /a, debounce: 1}]}"), 4, 55,
	     "web/app: watch[0].debounce: invalid duration \"1\": a number needs a unit (ms, s, m "
	     "or h); only 0 goes without"},
	};
	assert_error_cases(cases, ARRAY_SIZE(cases));
}

static void test_a_changed_watch_is_an_in_place_change(void **state)
{
	(void)state;
	struct config *a = parse_ok(TASK("{command: x, watch: [/a]}"));
	struct config *b = parse_ok(TASK("{command: x, watch: [{paths: /a, debounce: 2s}]}"));
	struct config *c = parse_ok(TASK("{command: x}"));
	struct task_diff diff;
	task_config_diff(only_task(a), only_task(b), &diff);
	assert_int_equal(diff.change, TASK_CHANGE_IN_PLACE);
	assert_int_equal(diff.field_count, 1);
	assert_string_equal(diff.fields[0], "watch");
	task_config_diff(only_task(a), only_task(c), &diff);
	assert_int_equal(diff.change, TASK_CHANGE_IN_PLACE);
	task_config_diff(only_task(a), only_task(a), &diff);
	assert_int_equal(diff.change, TASK_CHANGE_NONE);
	/* The running definition takes the new list. */
	task_config_swap_in_place_fields(&a->groups[0].tasks[0], &b->groups[0].tasks[0]);
	assert_int_equal(only_task(a)->watches[0].debounce_ms, 2000);
	config_free(a);
	config_free(b);
	config_free(c);
}

static void test_path_clean(void **state)
{
	(void)state;
	static const char *const cases[][2] = {
	    {"/", "/"},
	    {"//a//b/", "/a/b"},
	    {"/a/./b/.", "/a/b"},
	    {"/a/b/../c", "/a/c"},
	    {"/..", "/"},
	    {"/a/../..", "/"},
	    {"a/../..", ".."},
	    {"../a/./b", "../a/b"},
	    {"", "."},
	    {"./", "."},
	    {"a/b/../../c", "c"},
	    {"/a/..b/c", "/a/..b/c"},
	    {"/..data/x", "/..data/x"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *clean = path_clean(cases[i][0]);
		if (strcmp(clean, cases[i][1]) != 0)
			fail_msg("path_clean(\"%s\") = \"%s\", not \"%s\"", cases[i][0], clean,
				 cases[i][1]);
		free(clean);
	}
}

static void test_names_and_globs(void **state)
{
	(void)state;
	assert_int_equal(watch_path_name_offset("/etc/app.conf"), 5);
	assert_int_equal(watch_path_name_offset("/etc"), 1);
	assert_true(watch_name_is_pattern("*.yaml", 6));
	assert_false(watch_name_is_pattern("app.yaml", 8));
	assert_true(watch_name_matches("*.yaml", true, "a.yaml"));
	assert_false(watch_name_matches("*.yaml", true, ".a.yaml"));
	assert_false(watch_name_matches("*", true, "..data"));
	assert_true(watch_name_matches("app.yaml", false, "app.yaml"));
	assert_false(watch_name_matches("app.yaml", false, "app.yaml~"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_an_entry_with_its_defaults),
	    cmocka_unit_test(test_actions_and_debounce),
	    cmocka_unit_test(test_paths_are_cleaned_and_each_kept_once),
	    cmocka_unit_test(test_a_relative_path_starts_from_the_config_files_directory),
	    cmocka_unit_test(test_each_mistake_is_one_error_at_its_place),
	    cmocka_unit_test(test_a_changed_watch_is_an_in_place_change),
	    cmocka_unit_test(test_path_clean),
	    cmocka_unit_test(test_names_and_globs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
