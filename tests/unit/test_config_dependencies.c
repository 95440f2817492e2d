/* `after:` and `order: sequential`: the resolved model, and every mistake
 * with its place and exact message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "config/load/config_load.h"
#include "config/model/config.h"
#include "config_cases.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const struct task_config *task_named(const struct config *config, const char *full_name)
{
	for (size_t g = 0; g < config->group_count; g++)
		for (size_t t = 0; t < config->groups[g].task_count; t++)
			if (strcmp(config->groups[g].tasks[t].full_name, full_name) == 0)
				return &config->groups[g].tasks[t];
	fail_msg("no task %s", full_name);
	return NULL;
}

static const struct task_config *target_of(const struct config *config,
					   const struct task_dependency *dependency)
{
	return &config->groups[dependency->group_index].tasks[dependency->task_index];
}

static void test_list_form_takes_default_conditions(void **state)
{
	(void)state;
	struct config *config =
	    parse_ok("groups:\n"
		     "  g:\n"
		     "    tasks:\n"
		     "      migrate: {command: x, lifecycle: {hook: prestart}}\n"
		     "      redis: {command: x, lifecycle: {hook: prestart, sidecar: true}, after: "
		     "[migrate]}\n"
		     "      app: {command: x, after: [redis, h/web]}\n"
		     "  h:\n"
		     "    tasks:\n"
		     "      web: {command: x}\n");
	const struct task_config *redis = task_named(config, "g/redis");
	assert_int_equal(redis->after_count, 1);
	assert_int_equal(redis->after[0].condition, DEPENDS_COMPLETED); /* a one-shot */
	assert_true(redis->after[0].condition_default);
	assert_string_equal(target_of(config, &redis->after[0])->full_name, "g/migrate");
	const struct task_config *app = task_named(config, "g/app");
	assert_int_equal(app->after_count, 2);
	assert_int_equal(app->after[0].condition, DEPENDS_READY); /* a sidecar */
	assert_string_equal(target_of(config, &app->after[1])->full_name, "h/web");
	assert_int_equal(app->after[1].condition, DEPENDS_READY); /* a main task */
	assert_false(app->after[1].restart);
	config_free(config);
}

static void test_map_form_with_conditions_and_restart(void **state)
{
	(void)state;
	struct config *config = parse_ok("groups:\n"
					 "  g:\n"
					 "    tasks:\n"
					 "      seed: {command: x, lifecycle: {hook: prestart}}\n"
					 "      db: {command: x, health: {exec: [check]}}\n"
					 "      app: {command: x, after: {seed: {condition: "
					 "exited, restart: true}, db: healthy}}\n"
					 "      web: {command: x, after: [{app: started}, db]}\n");
	const struct task_config *app = task_named(config, "g/app");
	assert_int_equal(app->after[0].condition, DEPENDS_EXITED);
	assert_true(app->after[0].restart);
	assert_false(app->after[0].condition_default);
	assert_int_equal(app->after[1].condition, DEPENDS_HEALTHY);
	const struct task_config *web = task_named(config, "g/web");
	assert_int_equal(web->after_count, 2);
	assert_int_equal(web->after[0].condition, DEPENDS_STARTED);
	assert_int_equal(web->after[1].condition, DEPENDS_READY);
	config_free(config);
}

/* compose's `required: false`, and a timeout on the wait. */
static void test_timeout_and_required(void **state)
{
	(void)state;
	struct config *config =
	    parse_ok("groups:\n"
		     "  g:\n"
		     "    tasks:\n"
		     "      db: {command: x, health: {exec: [check]}}\n"
		     "      app: {command: x, after: {db: {condition: healthy, "
		     "timeout: 2m}, cache: {required: false}, h/metrics: "
		     "{required: false, timeout: 5s}, log: {required: false}}}\n"
		     "      log: {command: x}\n");
	const struct task_config *app = task_named(config, "g/app");
	/* cache and h/metrics are not in the config: left out, not refused. */
	assert_int_equal(app->after_count, 2);
	assert_string_equal(app->after[0].name, "db");
	assert_int_equal(app->after[0].timeout_ms, 120000);
	assert_false(app->after[0].optional);
	assert_string_equal(app->after[1].name, "log");
	assert_int_equal(app->after[1].timeout_ms, 0);
	assert_true(app->after[1].optional);
	config_free(config);
}

static void test_sequential_links_prestart_tasks_in_file_order(void **state)
{
	(void)state;
	struct config *config =
	    parse_ok("groups:\n"
		     "  pod:\n"
		     "    order: sequential\n"
		     "    tasks:\n"
		     "      init1: {command: x, lifecycle: {hook: prestart}}\n"
		     "      side1: {command: x, lifecycle: {hook: prestart, sidecar: true}}\n"
		     "      main: {command: x}\n"
		     "      init2: {command: x, lifecycle: {hook: prestart}, after: [side1]}\n");
	assert_true(config->groups[0].sequential);
	const struct task_config *side1 = task_named(config, "pod/side1");
	assert_int_equal(side1->after_count, 1);
	assert_true(side1->after[0].implicit);
	assert_int_equal(side1->after[0].condition, DEPENDS_COMPLETED);
	/* Written already: not added twice. */
	const struct task_config *init2 = task_named(config, "pod/init2");
	assert_int_equal(init2->after_count, 1);
	assert_false(init2->after[0].implicit);
	assert_int_equal(init2->after[0].condition, DEPENDS_READY);
	assert_int_equal(task_named(config, "pod/main")->after_count, 0);
	assert_int_equal(task_named(config, "pod/init1")->after_count, 0);
	config_free(config);
}

#define G(tasks) "groups: {g: {tasks: {" tasks "}}}\n"

static const struct error_case cases[] = {
    {"unknown task", G("a: {command: x, after: [b]}"), 1, 46,
     "g/a: after.b: group g has no task \"b\""},
    {"unknown task, with a suggestion", G("a: {command: x, after: [rediss]}, redis: {command: x}"),
     1, 46, "g/a: after.rediss: group g has no task \"rediss\"; did you mean \"redis\"?"},
    {"itself", G("a: {command: x, after: [a]}"), 1, 46,
     "g/a: after.a: a task cannot wait for itself"},
    {"named twice", G("a: {command: x, after: [b, b]}, b: {command: x}"), 1, 49,
     "g/a: after: \"b\" is named twice"},
    {"unknown group",
     "groups: {g: {tasks: {a: {command: x, after: [hh/c]}}}, h: {tasks: {c: {command: x}}}}\n", 1,
     46, "g/a: after.hh/c: unknown group \"hh\""},
    {"a group named as a task",
     "groups: {g: {tasks: {a: {command: x, after: [h]}}}, h: {tasks: {c: {command: x}}}}\n", 1, 46,
     "g/a: after.h: \"h\" is a group: name one of its tasks (h/c)"},
    {"prestart after main",
     G("a: {command: x, lifecycle: {hook: prestart}, after: [m]}, m: {command: x}"), 1, 75,
     "g/a: after.m: a prestart task cannot wait for a main task of its group: main tasks start "
     "only after the prestart stage, so it would wait forever"},
    {"main after poststart",
     G("a: {command: x, after: [p]}, p: {command: x, lifecycle: {hook: poststart}}"), 1, 46,
     "g/a: after.p: a main task cannot wait for a poststart task of its group: poststart tasks "
     "start only after the main stage, so it would wait forever"},
    {"main after poststop",
     G("a: {command: x, after: {p: exited}}, p: {command: x, lifecycle: {hook: poststop}}"), 1, 46,
     "g/a: after.p: a main task cannot wait for a poststop task of its group: poststop tasks start "
     "once every other task of the group is dead, so it would wait forever"},
    {"poststop after main, ready",
     G("p: {command: x, lifecycle: {hook: poststop}, after: [m]}, m: {command: x}"), 1, 75,
     "g/p: after.m: ready (the default) cannot hold: poststop tasks run once every other task of "
     "the group is dead; write {m: exited} or {m: completed}"},
    {"completed on a sidecar",
     G("a: {command: x, after: {s: completed}}, s: {command: x, lifecycle: {hook: prestart, "
       "sidecar: true}}"),
     1, 49,
     "g/a: after.s: completed cannot hold: g/s is a sidecar, which runs until its group stops; "
     "write ready or started"},
    {"healthy without health", G("a: {command: x, after: {m: healthy}}, m: {command: x}"), 1, 49,
     "g/a: after.m: healthy cannot hold: g/m has no health probe; add `health:` to it, or write "
     "ready"},
    {"unknown condition", G("a: {command: x, after: {m: complete}}, m: {command: x}"), 1, 49,
     "g/a: after.m: unknown condition \"complete\"; did you mean \"completed\"?"},
    {"restart not a boolean",
     G("a: {command: x, after: {m: {restart: yes please}}}, m: {command: x}"), 1, 59,
     "g/a: after.m.restart: must be true or false, not \"yes please\""},
    {"timeout of 0", G("a: {command: x, after: {m: {timeout: 0s}}}, m: {command: x}"), 1, 59,
     "g/a: after.m.timeout: must be longer than 0 (leave it out to wait for as long as it "
     "takes)"},
    {"timeout not a duration", G("a: {command: x, after: {m: {timeout: soon}}}, m: {command: x}"),
     1, 59,
     "g/a: after.m.timeout: invalid duration \"soon\": expected a number before each unit "
     "(e.g. 500ms, 10s, 1m30s)"},
    {"required not a boolean", G("a: {command: x, after: {m: {required: maybe}}}, m: {command: x}"),
     1, 60, "g/a: after.m.required: must be true or false, not \"maybe\""},
    {"required: false still refuses a wait that cannot hold",
     G("a: {command: x, after: {p: {required: false}}}, p: {command: x, lifecycle: {hook: "
       "poststart}}"),
     1, 46,
     "g/a: after.p: a main task cannot wait for a poststart task of its group: poststart tasks "
     "start only after the main stage, so it would wait forever"},
    {"after of a wrong type", G("a: {command: x, after: 3}"), 1, 45,
     "g/a: after: must be a list of task names, or a map of task names to conditions, not a "
     "string"},
    {"a cycle", G("a: {command: x, after: [b]}, b: {command: x, after: [a]}"), 1, 75,
     "g/b: after.a: dependency cycle: g/a -> g/b -> g/a"},
    {"a cycle across groups",
     "groups: {g: {tasks: {a: {command: x, after: [h/b]}}}, h: {tasks: {b: {command: x, after: "
     "[c]}, c: {command: x, after: [g/a]}}}}\n",
     1, 120, "h/c: after.g/a: dependency cycle: g/a -> h/b -> h/c -> g/a"},
    {"a cycle made by order: sequential",
     "groups: {g: {order: sequential, tasks: {a: {command: x, lifecycle: {hook: prestart}, after: "
     "[b]}, b: {command: x, lifecycle: {hook: prestart}}}}}\n",
     1, 99, "g/b: order: sequential: dependency cycle: g/a -> g/b -> g/a"},
    {"unknown order", "groups: {g: {order: serial, tasks: {a: {command: x}}}}\n", 1, 21,
     "group g: order: unknown order \"serial\" (use parallel or sequential)"},
};

/* Found by fuzzing: a dependency named a group whose tasks were all wrong,
 * and the message's example task was read from its empty task list (a
 * segfault in `corral check`). */
static void test_a_group_without_valid_tasks_named_as_a_dependency(void **state)
{
	(void)state;
	const char *yaml = "groups:\n  g:\n    tasks:\n      a: {command: x, after: [h]}\n"
			   "  h:\n    tasks: {}\n";
	struct config_diagnostics diagnostics = {0};
	struct config *config = config_parse_buffer("test.yaml", yaml, strlen(yaml), &diagnostics);
	assert_null(config);
	assert_int_equal(diagnostics.count, 2);
	assert_string_equal(diagnostics.items[0].message,
			    "g/a: after.h: \"h\" is a group: name one of its tasks");
	assert_int_equal(diagnostics.items[0].location.line, 4);
	assert_string_equal(diagnostics.items[1].message,
			    "group h: tasks: must define at least one task");
	config_diagnostics_free(&diagnostics);
}

static void test_errors(void **state)
{
	(void)state;
	assert_error_cases(cases, ARRAY_SIZE(cases));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_list_form_takes_default_conditions),
	    cmocka_unit_test(test_map_form_with_conditions_and_restart),
	    cmocka_unit_test(test_timeout_and_required),
	    cmocka_unit_test(test_sequential_links_prestart_tasks_in_file_order),
	    cmocka_unit_test(test_a_group_without_valid_tasks_named_as_a_dependency),
	    cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
