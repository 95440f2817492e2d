/* The reload plan: what runs (a config as loaded, with what earlier
 * reloads removed and is still stopping) and a new config in, each
 * group's and task's step out, or the refusal. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "config/load/config_load.h"
#include "config/model/config.h"
#include "config_cases.h"
#include "supervisor/lifecycle/reload_plan.h"

struct plan_case {
	const char *what;
	const char *before;
	const char *after;
	/* A group ("web") or task ("web/app") of `before` that an earlier
	 * reload removed and that is still stopping; NULL for none. */
	const char *still_stopping;
	/* The plan as describe() writes it, or "refused: REASON". */
	const char *plan;
};

static void mark_still_stopping(struct reload_running *running, const char *name)
{
	for (size_t g = 0; g < running->group_count; g++) {
		struct reload_running_group *group = &running->groups[g];
		if (strcmp(group->definition->name, name) == 0)
			group->removed = true;
		for (size_t t = 0; t < group->task_count; t++)
			if (strcmp(group->tasks[t].definition->full_name, name) == 0)
				group->tasks[t].removed = true;
	}
}

static void append(char *buffer, size_t size, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
static void append(char *buffer, size_t size, const char *format, ...)
{
	size_t used = strlen(buffer);
	va_list args;
	va_start(args, format);
	vsnprintf(buffer + used, size - used, format, args);
	va_end(args);
}

/* "group web updated; web/app replaced (command); web/db unchanged": the
 * groups' steps, then the tasks', each named as the plan names it. */
static void describe(const struct reload_plan *plan, const struct reload_running *running,
		     char *buffer, size_t size)
{
	buffer[0] = '\0';
	for (size_t i = 0; i < plan->group_count; i++) {
		const struct reload_group_step *step = &plan->groups[i];
		const char *name = step->definition
				       ? step->definition->name
				       : running->groups[step->running].definition->name;
		append(buffer, size, "%sgroup %s %s", buffer[0] ? "; " : "", name,
		       reload_action_name(step->action));
	}
	for (size_t i = 0; i < plan->task_count; i++) {
		const struct reload_task_step *step = &plan->tasks[i];
		const char *name = step->definition ? step->definition->full_name
						    : running->groups[step->running_group]
							  .tasks[step->running_task]
							  .definition->full_name;
		append(buffer, size, "; %s %s", name, reload_action_name(step->action));
		for (size_t f = 0; f < step->diff.field_count; f++)
			append(buffer, size, "%s%s%s", f ? ", " : " (", step->diff.fields[f],
			       f + 1 == step->diff.field_count ? ")" : "");
	}
}

static void run_case(const struct plan_case *test)
{
	struct config *before = parse_ok(test->before), *after = parse_ok(test->after);
	struct reload_running running;
	reload_running_of_config(&running, before);
	if (test->still_stopping)
		mark_still_stopping(&running, test->still_stopping);
	struct reload_plan plan;
	char got[1024];
	if (reload_plan_make(&running, after, &plan) < 0)
		snprintf(got, sizeof(got), "refused: %s", plan.refusal);
	else
		describe(&plan, &running, got, sizeof(got));
	if (strcmp(got, test->plan) != 0)
		print_error("%s:\n  got      %s\n  expected %s\n", test->what, got, test->plan);
	assert_string_equal(got, test->plan);
	reload_plan_free(&plan);
	reload_running_free(&running);
	config_free(before);
	config_free(after);
}

#define WEB(tasks) "groups:\n  web:\n    tasks:\n" tasks
#define DB         "      db: {command: [sleep, '1']}\n"
#define APP        "      app: {command: [sleep, '9']}\n"

static void test_a_config_against_itself_changes_nothing(void **state)
{
	(void)state;
	run_case(&(struct plan_case){"the same config", WEB(DB APP), WEB(DB APP), NULL,
				     "group web unchanged; web/db unchanged; web/app unchanged"});
}

static void test_each_task_gets_its_step(void **state)
{
	(void)state;
	const struct plan_case cases[] = {
	    {"a command changed", WEB(DB APP), WEB(DB "      app: {command: [sleep, '10']}\n"),
	     NULL, "group web unchanged; web/db unchanged; web/app replaced (command)"},
	    {"the restart policy changed", WEB(DB APP),
	     WEB(DB "      app: {command: [sleep, '9'], restart: {policy: never}}\n"), NULL,
	     "group web unchanged; web/db unchanged; web/app updated (restart)"},
	    {"two fields changed, one needs a new process", WEB(DB APP),
	     WEB(DB "      app: {command: [sleep, '9'], cwd: /tmp, log: {history: 64K}}\n"), NULL,
	     "group web unchanged; web/db unchanged; web/app replaced (cwd, log)"},
	    {"a task added, in the new order", WEB(APP), WEB(DB APP), NULL,
	     "group web unchanged; web/db added; web/app unchanged"},
	    {"a task removed, after the kept ones", WEB(DB APP), WEB(APP), NULL,
	     "group web unchanged; web/app unchanged; web/db removed"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i]);
}

static void test_groups_are_added_removed_and_updated(void **state)
{
	(void)state;
	const char *both = WEB(APP) "  jobs:\n    tasks:\n" DB;
	const struct plan_case cases[] = {
	    /* An added group's tasks come with it: no task steps of their own. */
	    {"a group added", WEB(APP), both, NULL,
	     "group web unchanged; group jobs added; web/app unchanged"},
	    {"a group removed", both, WEB(APP), NULL,
	     "group web unchanged; group jobs removed; web/app unchanged"},
	    {"on_failure changed", WEB(APP),
	     "groups:\n  web:\n    on_failure: ignore\n    tasks:\n" APP, NULL,
	     "group web updated; web/app unchanged"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i]);
}

static void test_what_is_still_stopping_is_not_planned_again(void **state)
{
	(void)state;
	const char *both = WEB(APP) "  jobs:\n    tasks:\n" DB;
	const struct plan_case cases[] = {
	    {"a task still stopping, not in the new config", WEB(DB APP), WEB(APP), "web/db",
	     "group web unchanged; web/app unchanged"},
	    {"a group still stopping, not in the new config", both, WEB(APP), "jobs",
	     "group web unchanged; web/app unchanged"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i]);
}

static void test_refusals_say_why(void **state)
{
	(void)state;
	const struct plan_case cases[] = {
	    {"a global key read at start", "socket: /tmp/a.sock\n" WEB(APP),
	     "socket: /tmp/b.sock\n" WEB(APP), NULL,
	     "refused: socket changed: it takes effect only when corral starts; nothing was "
	     "applied"},
	    {"a group key read when the group is made", WEB(APP),
	     "groups:\n  web:\n    network: {bridge: corral9, subnet: 10.99.0.0/24}\n"
	     "    tasks:\n" APP,
	     NULL,
	     "refused: group web: network changed: it takes effect only when the group is made; "
	     "remove the group in one reload and add it back in the next, or restart corral"},
	    {"a task back while its removal is still stopping", WEB(DB APP), WEB(DB APP), "web/db",
	     "refused: web/db was removed by an earlier reload and is still stopping: reload "
	     "again once it is dead"},
	    {"a group back while its removal is still stopping", WEB(APP), WEB(APP), "web",
	     "refused: group web was removed by an earlier reload and is still stopping: reload "
	     "again once it has finished"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_a_config_against_itself_changes_nothing),
	    cmocka_unit_test(test_each_task_gets_its_step),
	    cmocka_unit_test(test_groups_are_added_removed_and_updated),
	    cmocka_unit_test(test_what_is_still_stopping_is_not_planned_again),
	    cmocka_unit_test(test_refusals_say_why),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
