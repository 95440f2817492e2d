/* What reload sees between two definitions of a task: no change, a change
 * applied in place, or one that needs a new process; and the fields named
 * in the plan. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "config/load/config_load.h"
#include "config/model/config.h"
#include "config/model/config_diff.h"
#include "config_cases.h"

/* Task "app" of group "web", written as a flow map, and a second task
 * "db" that "app" may wait for. */
#define TASK(flow)                                                                                 \
	"groups:\n  web:\n    tasks:\n      db: {command: [sleep, '1']}\n      app: " flow "\n"

static void diff_of(const char *before, const char *after, struct task_diff *diff)
{
	struct config *a = parse_ok(before), *b = parse_ok(after);
	task_config_diff(&a->groups[0].tasks[1], &b->groups[0].tasks[1], diff);
	config_free(a);
	config_free(b);
}

static void expect(const char *before, const char *after, enum task_change change,
		   const char *fields)
{
	struct task_diff diff;
	diff_of(before, after, &diff);
	char joined[256] = "";
	for (size_t i = 0; i < diff.field_count; i++) {
		if (i)
			strcat(joined, ",");
		strcat(joined, diff.fields[i]);
	}
	if (diff.change != change || strcmp(joined, fields) != 0)
		print_error("%s\n  ->\n%s\n  gave change %d fields \"%s\", expected %d \"%s\"\n",
			    before, after, diff.change, joined, change, fields);
	assert_int_equal(diff.change, change);
	assert_string_equal(joined, fields);
}

static void test_the_same_definition_is_no_change(void **state)
{
	(void)state;
	const char *task = TASK("{command: [sleep, '9'], env: {A: '1'}, isolation: "
				"{namespaces: [pid, mount]}, after: {db: started}}");
	expect(task, task, TASK_CHANGE_NONE, "");
}

static void test_where_it_is_written_is_no_change(void **state)
{
	(void)state;
	expect(TASK("{command: [sleep, '9']}"),
	       "\n\n# moved down\ngroups:\n  web:\n    tasks:\n      db: {command: [sleep, '1']}\n"
	       "      app:\n        command: [sleep, '9']\n",
	       TASK_CHANGE_NONE, "");
}

static void test_what_the_process_is_given_needs_a_new_one(void **state)
{
	(void)state;
	const char *base = TASK("{command: [sleep, '9']}");
	expect(base, TASK("{command: [sleep, '10']}"), TASK_CHANGE_REPLACE, "command");
	expect(base, TASK("{command: [sleep, '9'], env: {A: '1'}}"), TASK_CHANGE_REPLACE, "env");
	expect(base, TASK("{command: [sleep, '9'], cwd: /tmp}"), TASK_CHANGE_REPLACE, "cwd");
	expect(base, TASK("{command: [sleep, '9'], user: nobody}"), TASK_CHANGE_REPLACE, "user");
	/* A sidecar's default restart mode is delay, a main task's fail. */
	expect(base, TASK("{command: [sleep, '9'], lifecycle: {hook: prestart, sidecar: true}}"),
	       TASK_CHANGE_REPLACE, "lifecycle,restart");
	expect(base, TASK("{command: [sleep, '9'], isolation: {namespaces: [uts]}}"),
	       TASK_CHANGE_REPLACE, "isolation");
	expect(base, TASK("{command: [sleep, '9'], after: {db: started}}"), TASK_CHANGE_REPLACE,
	       "after");
	expect(
	    base,
	    TASK("{command: [sleep, '9'], hooks: [{name: h, stage: prestart, exec: [/bin/true]}]}"),
	    TASK_CHANGE_REPLACE, "hooks");
	expect(base, TASK("{command: [sleep, '9'], readiness: {notify: systemd}}"),
	       TASK_CHANGE_REPLACE, "readiness");
}

static void test_what_corral_alone_uses_changes_in_place(void **state)
{
	(void)state;
	const char *base = TASK("{command: [sleep, '9']}");
	expect(base, TASK("{command: [sleep, '9'], restart: {policy: never}}"),
	       TASK_CHANGE_IN_PLACE, "restart");
	expect(base, TASK("{command: [sleep, '9'], kill: {signal: SIGINT, timeout: 1s}}"),
	       TASK_CHANGE_IN_PLACE, "kill");
	expect(base, TASK("{command: [sleep, '9'], resources: {memory: 64M, pids: 10}}"),
	       TASK_CHANGE_IN_PLACE, "resources");
	expect(base, TASK("{command: [sleep, '9'], health: {exec: [true], interval: 2s}}"),
	       TASK_CHANGE_IN_PLACE, "health");
	expect(base, TASK("{command: [sleep, '9'], log: {history: 64K}}"), TASK_CHANGE_IN_PLACE,
	       "log");
	/* Except the pipes the process is given. */
	expect(base, TASK("{command: [sleep, '9'], log: {streams: separate}}"), TASK_CHANGE_REPLACE,
	       "log");
	expect(TASK("{command: [sleep, '9'], readiness: {exec: [true], interval: 1s}}"),
	       TASK("{command: [sleep, '9'], readiness: {exec: [true], interval: 2s}}"),
	       TASK_CHANGE_IN_PLACE, "readiness");
	/* How a reload replaces the instances: read by the next reload. */
	expect(TASK("{command: [sleep, '9'], instances: 2}"),
	       TASK("{command: [sleep, '9'], instances: 2, update: {strategy: rolling}}"),
	       TASK_CHANGE_IN_PLACE, "update");
}

/* The cgroup keeps a limit nobody writes back: only a new one drops it. */
static void test_a_limit_removed_needs_a_new_process(void **state)
{
	(void)state;
	expect(TASK("{command: [sleep, '9'], resources: {memory: 64M}}"),
	       TASK("{command: [sleep, '9'], resources: {pids: 10}}"), TASK_CHANGE_REPLACE,
	       "resources");
	expect(TASK("{command: [sleep, '9'], resources: {memory: 64M}}"),
	       TASK("{command: [sleep, '9'], resources: {memory: 128M}}"), TASK_CHANGE_IN_PLACE,
	       "resources");
}

/* A task added before the target shifts its index, not the dependency. */
static void test_a_dependency_is_compared_by_name(void **state)
{
	(void)state;
	struct config *a = parse_ok(TASK("{command: [sleep, '9'], after: {db: started}}"));
	struct config *b = parse_ok("groups:\n  web:\n    tasks:\n      new: {command: [x]}\n"
				    "      db: {command: [sleep, '1']}\n"
				    "      app: {command: [sleep, '9'], after: {db: started}}\n");
	struct task_diff diff;
	task_config_diff(&a->groups[0].tasks[1], &b->groups[0].tasks[2], &diff);
	assert_int_equal(diff.change, TASK_CHANGE_NONE);
	config_free(a);
	config_free(b);
}

static void test_in_place_fields_swap_both_ways(void **state)
{
	(void)state;
	struct config *a = parse_ok(TASK("{command: [sleep, '9'], kill: {timeout: 1s}, "
					 "health: {exec: [true]}}"));
	struct config *b = parse_ok(TASK("{command: [sleep, '9'], kill: {timeout: 3s}, "
					 "health: {exec: [false]}}"));
	struct task_config *old = &a->groups[0].tasks[1], *new = &b->groups[0].tasks[1];
	task_config_swap_in_place_fields(old, new);
	assert_int_equal(old->kill_timeout_ms, 3000);
	assert_string_equal(health_of(old)->probe.argv[0], "false");
	assert_int_equal(new->kill_timeout_ms, 1000);
	struct task_diff diff;
	task_config_diff(old, new, &diff);
	assert_int_equal(diff.change, TASK_CHANGE_IN_PLACE);
	config_free(a); /* each frees what it holds now: ASan sees no double free */
	config_free(b);
}

static void test_fixed_keys_are_named(void **state)
{
	(void)state;
	struct config *a =
	    parse_ok("socket: /tmp/a.sock\ngroups: {g: {tasks: {t: {command: x}}}}\n");
	struct config *b =
	    parse_ok("socket: /tmp/b.sock\ngroups: {g: {tasks: {t: {command: x}}}}\n");
	struct config *c = parse_ok("groups: {g: {tasks: {t: {command: x}}}}\n");
	assert_string_equal(config_diff_fixed_global(a, b), "socket");
	assert_string_equal(config_diff_fixed_global(a, c), "socket");
	assert_null(config_diff_fixed_global(a, a));
	assert_null(config_diff_fixed_group_key(&a->groups[0], &c->groups[0]));
	struct config *logged =
	    parse_ok("termination_log: /tmp/m\ngroups: {g: {tasks: {t: {command: x}}}}\n");
	assert_string_equal(config_diff_fixed_global(c, logged), "termination_log");
	config_free(a);
	config_free(b);
	config_free(c);
	config_free(logged);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_the_same_definition_is_no_change),
	    cmocka_unit_test(test_where_it_is_written_is_no_change),
	    cmocka_unit_test(test_what_the_process_is_given_needs_a_new_one),
	    cmocka_unit_test(test_what_corral_alone_uses_changes_in_place),
	    cmocka_unit_test(test_a_limit_removed_needs_a_new_process),
	    cmocka_unit_test(test_a_dependency_is_compared_by_name),
	    cmocka_unit_test(test_in_place_fields_swap_both_ways),
	    cmocka_unit_test(test_fixed_keys_are_named),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
