/* Who may use the control socket: a task's `control:` list of the
 * requests it may make (none by default), and the top level's connection
 * limits. Each mistake is one error at its place. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "config/model/config.h"
#include "config/model/config_diff.h"
#include "config_cases.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
/* The task's value starts at line 4, column 12. */
#define TASK(flow)   "groups:\n  web:\n    tasks:\n      app: " flow "\n"
#define VALID_GROUPS "groups: {g: {tasks: {t: {command: x}}}}\n"

static const struct task_config *only_task(const struct config *config)
{
	return &config->groups[0].tasks[0];
}

static void test_a_task_has_no_right_unless_it_lists_one(void **state)
{
	(void)state;
	struct config *config = parse_ok(TASK("{command: x}"));
	assert_int_equal(only_task(config)->control_rights, 0);
	config_free(config);
}

static void test_the_listed_rights_and_only_those(void **state)
{
	(void)state;
	struct config *config = parse_ok(TASK("{command: x, control: [status, logs, restart]}"));
	assert_int_equal(only_task(config)->control_rights,
			 CONTROL_RIGHT_STATUS | CONTROL_RIGHT_LOGS | CONTROL_RIGHT_RESTART);
	config_free(config);
	config = parse_ok(TASK("{command: x, control: []}"));
	assert_int_equal(only_task(config)->control_rights, 0);
	config_free(config);
}

static void test_every_request_kind_has_a_right_of_its_name(void **state)
{
	(void)state;
	struct config *config = parse_ok(TASK("{command: x, control: [status, logs, events, "
					      "inspect, start, stop, restart, signal, reload, "
					      "exec, shutdown, scale, upgrade]}"));
	assert_int_equal(only_task(config)->control_rights, (1u << CONTROL_RIGHT_COUNT) - 1);
	assert_string_equal(control_right_name(9), "exec");
	assert_null(control_right_name(CONTROL_RIGHT_COUNT));
	config_free(config);
}

static void test_instances_each_get_the_rights(void **state)
{
	(void)state;
	struct config *config = parse_ok(TASK("{command: x, instances: 2, control: [status]}"));
	assert_int_equal(config->groups[0].task_count, 2);
	for (size_t i = 0; i < 2; i++)
		assert_int_equal(config->groups[0].tasks[i].control_rights, CONTROL_RIGHT_STATUS);
	config_free(config);
}

static void test_the_connection_limits_default_and_can_be_set(void **state)
{
	(void)state;
	struct config *config = parse_ok(VALID_GROUPS);
	assert_int_equal(config->control_idle_timeout_ms, CONFIG_DEFAULT_CONTROL_IDLE_TIMEOUT_MS);
	assert_int_equal(config->control_connections_per_user,
			 CONFIG_DEFAULT_CONTROL_CONNECTIONS_PER_USER);
	config_free(config);
	config = parse_ok(VALID_GROUPS "control: {idle_timeout: 2m, connections_per_user: 4}\n");
	assert_int_equal(config->control_idle_timeout_ms, 120000);
	assert_int_equal(config->control_connections_per_user, 4);
	config_free(config);
}

static const struct error_case cases[] = {
    {"control not a list", TASK("{command: x, control: status}"), 4, 34,
     "web/app: control: must be a list of the control requests the task may make, such as "
     "[status, logs], not a string"},
    {"unknown right, with a suggestion", TASK("{command: x, control: [stauts]}"), 4, 35,
     "web/app: control[0]: unknown control request \"stauts\"; did you mean \"status\"?"},
    {"unknown right, nothing close", TASK("{command: x, control: [status, everything]}"), 4, 43,
     "web/app: control[1]: unknown control request \"everything\" (use status, logs, events, "
     "inspect, start, stop, restart, signal, reload, exec, shutdown, scale or upgrade)"},
    {"a right listed twice", TASK("{command: x, control: [logs, logs]}"), 4, 41,
     "web/app: control[1]: logs is listed twice"},
    {"a right that is not a string", TASK("{command: x, control: [[exec]]}"), 4, 35,
     "web/app: control[0]: must be a string, not a list"},
    {"idle timeout below a second", VALID_GROUPS "control: {idle_timeout: 500ms}\n", 2, 25,
     "control.idle_timeout: must be at least 1s, not \"500ms\""},
    {"connections per user zero", VALID_GROUPS "control: {connections_per_user: 0}\n", 2, 33,
     "control.connections_per_user: must be a whole number from 1 to 512, not \"0\""},
    {"connections per user too many", VALID_GROUPS "control: {connections_per_user: 513}\n", 2, 33,
     "control.connections_per_user: must be a whole number from 1 to 512, not \"513\""},
};

static void test_mistakes_are_one_error_at_their_place(void **state)
{
	(void)state;
	assert_error_cases(cases, ARRAY_SIZE(cases));
}

/* A reload: the rights apply to the running task, unless its mount
 * namespace hid the socket (or showed it) when it was made. */
static void test_a_reload_changes_rights_in_place_unless_the_socket_must_appear(void **state)
{
	(void)state;
	struct config *old = parse_ok(TASK("{command: x, control: [status]}"));
	struct config *more = parse_ok(TASK("{command: x, control: [status, logs]}"));
	struct config *none = parse_ok(TASK("{command: x}"));
	struct config *hidden = parse_ok(TASK("{command: x, isolation: {namespaces: [mount]}}"));
	struct config *shown =
	    parse_ok(TASK("{command: x, isolation: {namespaces: [mount]}, control: [status]}"));
	struct task_diff diff;
	task_config_diff(only_task(old), only_task(more), &diff);
	assert_int_equal(diff.change, TASK_CHANGE_IN_PLACE);
	assert_string_equal(diff.fields[0], "control");
	task_config_diff(only_task(old), only_task(none), &diff);
	assert_int_equal(diff.change, TASK_CHANGE_IN_PLACE);
	task_config_diff(only_task(hidden), only_task(shown), &diff);
	assert_int_equal(diff.change, TASK_CHANGE_REPLACE);
	config_free(old);
	config_free(more);
	config_free(none);
	config_free(hidden);
	config_free(shown);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_a_task_has_no_right_unless_it_lists_one),
	    cmocka_unit_test(test_the_listed_rights_and_only_those),
	    cmocka_unit_test(test_every_request_kind_has_a_right_of_its_name),
	    cmocka_unit_test(test_instances_each_get_the_rights),
	    cmocka_unit_test(test_the_connection_limits_default_and_can_be_set),
	    cmocka_unit_test(test_mistakes_are_one_error_at_their_place),
	    cmocka_unit_test(test_a_reload_changes_rights_in_place_unless_the_socket_must_appear),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
