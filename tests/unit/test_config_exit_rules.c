/* Exit-code rules: restart.success_exit and restart.no_restart_exit
 * (merged from the group), a group's on_failure, and every mistake with
 * its place and exact message. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "config/load/config_load.h"
#include "config/model/config.h"
#include "config_cases.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* A task "app" in group "web": its value starts at line 4, column 12. */
#define TASK(flow) "groups:\n  web:\n    tasks:\n      app: " flow "\n"
/* A group "web" whose on_failure value starts at line 3, column 17. */
#define ON_FAILURE(flow)                                                                           \
	"groups:\n  web:\n    on_failure: " flow "\n    tasks: {app: {command: a}}\n"

static void test_lists_take_codes_and_signal_names(void **state)
{
	(void)state;
	struct config *config =
	    parse_ok(TASK("{command: a, restart: {success_exit: [143, SIGTERM, 255], "
			  "no_restart_exit: [0, TERM]}}"));
	const struct restart_policy *restart = &config->groups[0].tasks[0].restart;

	assert_true(exit_status_set_has_code(&restart->success_exit, 143));
	assert_true(exit_status_set_has_code(&restart->success_exit, 255));
	assert_false(exit_status_set_has_code(&restart->success_exit, 1));
	assert_true(exit_status_set_has_signal(&restart->success_exit, SIGTERM));
	assert_false(exit_status_set_has_signal(&restart->success_exit, SIGKILL));
	assert_true(exit_status_set_has_code(&restart->no_restart_exit, 0));
	assert_true(exit_status_set_has_signal(&restart->no_restart_exit, SIGTERM));
	config_free(config);
}

static void test_a_task_list_replaces_the_group_list(void **state)
{
	(void)state;
	struct config *config =
	    parse_ok("groups:\n"
		     "  web:\n"
		     "    restart: {success_exit: [143], no_restart_exit: [78]}\n"
		     "    tasks:\n"
		     "      a: {command: x}\n"
		     "      b: {command: x, restart: {success_exit: [3]}}\n");
	const struct restart_policy *a = &config->groups[0].tasks[0].restart;
	const struct restart_policy *b = &config->groups[0].tasks[1].restart;

	assert_true(exit_status_set_has_code(&a->success_exit, 143));
	assert_true(exit_status_set_has_code(&a->no_restart_exit, 78));
	assert_false(exit_status_set_has_code(&b->success_exit, 143));
	assert_true(exit_status_set_has_code(&b->success_exit, 3));
	/* Field by field: b keeps the group's other list. */
	assert_true(exit_status_set_has_code(&b->no_restart_exit, 78));
	config_free(config);
}

static void test_on_failure_forms_and_defaults(void **state)
{
	(void)state;
	struct config *config =
	    parse_ok("groups:\n"
		     "  a: {tasks: {t: {command: x}}}\n"
		     "  b: {on_failure: ignore, tasks: {t: {command: x}}}\n"
		     "  c: {on_failure: restart, tasks: {t: {command: x}}}\n"
		     "  d: {on_failure: {action: restart, attempts: 5, interval: "
		     "1m}, tasks: {t: {command: x}}}\n"
		     "  e: {on_failure: exit, tasks: {t: {command: x}}}\n"
		     "  f: {on_failure: {action: exit}, tasks: {t: {command: x}}}\n");
	const struct group_failure_policy *a = &config->groups[0].on_failure;
	const struct group_failure_policy *c = &config->groups[2].on_failure;
	const struct group_failure_policy *d = &config->groups[3].on_failure;

	assert_int_equal(a->action, GROUP_ON_FAILURE_STOP);
	assert_int_equal(config->groups[1].on_failure.action, GROUP_ON_FAILURE_IGNORE);
	assert_int_equal(c->action, GROUP_ON_FAILURE_RESTART);
	assert_int_equal(c->attempts, CONFIG_DEFAULT_GROUP_RESTART_ATTEMPTS);
	assert_int_equal(c->interval_ms, CONFIG_DEFAULT_GROUP_RESTART_INTERVAL_MS);
	assert_int_equal(d->attempts, 5);
	assert_int_equal(d->interval_ms, 60000);
	assert_int_equal(config->groups[4].on_failure.action, GROUP_ON_FAILURE_EXIT);
	assert_int_equal(config->groups[5].on_failure.action, GROUP_ON_FAILURE_EXIT);
	config_free(config);
}

static const struct error_case cases[] = {
    {"exit code out of range", TASK("{command: a, restart: {success_exit: [143, 256]}}"), 4, 55,
     "web/app: restart.success_exit[1]: exit code \"256\" is out of range: exit codes are 0 "
     "to 255"},
    {"misspelt signal", TASK("{command: a, restart: {success_exit: [SIGTREM]}}"), 4, 50,
     "web/app: restart.success_exit[0]: unknown signal \"SIGTREM\"; did you mean \"SIGTERM\"?"},
    {"a single code, not a list", TASK("{command: a, restart: {success_exit: 143}}"), 4, 49,
     "web/app: restart.success_exit: must be a list of exit codes and signal names, not a "
     "string"},
    {"a negative code", TASK("{command: a, restart: {no_restart_exit: [-1]}}"), 4, 53,
     "web/app: restart.no_restart_exit[0]: must be an exit code (0 to 255) or a signal name, "
     "not \"-1\""},
    {"misspelt action", ON_FAILURE("restrat"), 3, 17,
     "group web: on_failure: unknown action \"restrat\"; did you mean \"restart\"?"},
    {"bounds without restart", ON_FAILURE("{action: stop, attempts: 2}"), 3, 17,
     "group web: on_failure: attempts and interval apply only to action \"restart\", not "
     "\"stop\""},
    {"no action", ON_FAILURE("{attempts: 2}"), 3, 17,
     "group web: on_failure: missing \"action\" (stop, restart, ignore or exit)"},
    {"zero attempts", ON_FAILURE("{action: restart, attempts: 0}"), 3, 45,
     "group web: on_failure.attempts: must be a whole number from 1 to 1000000, not \"0\""},
    {"a list", ON_FAILURE("[stop]"), 3, 17,
     "group web: on_failure: must be \"stop\", \"restart\", \"ignore\", \"exit\" or a map with "
     "\"action\", not a list"},
};

static void test_errors(void **state)
{
	(void)state;
	assert_error_cases(cases, ARRAY_SIZE(cases));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lists_take_codes_and_signal_names),
	    cmocka_unit_test(test_a_task_list_replaces_the_group_list),
	    cmocka_unit_test(test_on_failure_forms_and_defaults),
	    cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
