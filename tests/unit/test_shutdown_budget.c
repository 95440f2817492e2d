/* How long a graceful shutdown can take, from the config alone: the stop
 * order corral follows (tiers, `after:`, `order: sequential`), prekill hooks
 * run ahead, kill timeouts, hooks after, poststop tasks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config/load/config_load.h"
#include "config_cases.h"
#include "supervisor/lifecycle/shutdown_budget.h"

struct budget_case {
	struct config *config;
	struct shutdown_budget budget;
};

static struct budget_case *compute(const char *yaml)
{
	struct budget_case *result = calloc(1, sizeof(*result));
	result->config = parse_ok(yaml);
	shutdown_budget_compute(result->config, &result->budget);
	return result;
}

static void release(struct budget_case *result)
{
	shutdown_budget_free(&result->budget);
	config_free(result->config);
	free(result);
}

/* The chain's names, first stopped first: "g/a g/b". */
static const char *chain_names(const struct shutdown_budget *budget)
{
	static char names[512];
	size_t used = 0;
	names[0] = '\0';
	for (size_t i = 0; i < budget->chain_length; i++)
		used += (size_t)snprintf(names + used, sizeof(names) - used, "%s%s", i ? " " : "",
					 budget->chain[i].task->full_name);
	return names;
}

static void test_the_stage_tiers_stop_one_after_another(void **state)
{
	struct budget_case *c =
	    compute("groups:\n"
		    "  g:\n"
		    "    tasks:\n"
		    "      init: {command: x, lifecycle: {hook: prestart}}\n"
		    "      proxy: {command: x, lifecycle: {hook: prestart, sidecar: "
		    "true}, kill: {timeout: 3s}}\n"
		    "      app: {command: x, kill: {timeout: 5s}}\n"
		    "      shipper: {command: x, lifecycle: {hook: poststart, "
		    "sidecar: true}, kill: {timeout: 7s}}\n");
	/* The one-shot is done before main starts: it stops nothing. */
	assert_int_equal(c->budget.total_ms, 15000);
	assert_string_equal(chain_names(&c->budget), "g/app g/shipper g/proxy");
	assert_false(c->budget.cycle_length);
	release(c);
}

static void test_dependents_stop_first_across_groups(void **state)
{
	struct budget_case *c =
	    compute("groups:\n"
		    "  data:\n"
		    "    tasks:\n"
		    "      db: {command: x, kill: {timeout: 15s}}\n"
		    "  web:\n"
		    "    tasks:\n"
		    "      app: {command: x, after: [data/db], kill: {timeout: 20s}}\n"
		    "      proxy: {command: x, after: [app], kill: {timeout: 30s}}\n"
		    "      other: {command: x, kill: {timeout: 40s}}\n");
	/* proxy 30s, then app 20s, then db 15s: 65s > other's 40s alone. */
	assert_int_equal(c->budget.total_ms, 65000);
	assert_string_equal(chain_names(&c->budget), "web/proxy web/app data/db");
	assert_int_equal(c->budget.chain[0].kill_timeout_ms, 30000);
	release(c);
}

static void test_prekill_hooks_run_ahead_while_dependents_stop(void **state)
{
	/* db's 25s hook began with the shutdown: it holds db's signal
	 * beyond app's 5s stop, and the chain begins with db itself. */
	struct budget_case *c =
	    compute("groups:\n"
		    "  g:\n"
		    "    tasks:\n"
		    "      app: {command: x, after: [db], kill: {timeout: 5s}}\n"
		    "      db:\n"
		    "        command: x\n"
		    "        kill: {timeout: 10s}\n"
		    "        hooks:\n"
		    "          - {name: a, stage: prekill, exec: [x], timeout: 20s}\n"
		    "          - {name: b, stage: prekill, exec: [x], timeout: 5s}\n"
		    "          - {name: c, stage: prestart, exec: [x], timeout: 50s}\n");
	assert_int_equal(c->budget.total_ms, 35000);
	assert_string_equal(chain_names(&c->budget), "g/db");
	assert_int_equal(c->budget.chain[0].prekill_ms, 25000);
	release(c);

	/* A shorter hook is hidden by the wait: app 5s + db's 10s. */
	c = compute("groups:\n"
		    "  g:\n"
		    "    tasks:\n"
		    "      app: {command: x, after: [db], kill: {timeout: 5s}}\n"
		    "      db:\n"
		    "        command: x\n"
		    "        kill: {timeout: 10s}\n"
		    "        hooks: [{name: a, stage: prekill, exec: [x], timeout: 2s}]\n");
	assert_int_equal(c->budget.total_ms, 15000);
	assert_string_equal(chain_names(&c->budget), "g/app g/db");
	assert_int_equal(c->budget.chain[1].prekill_ms, 0);
	release(c);
}

static void test_sequential_groups_stop_in_reverse_file_order(void **state)
{
	struct budget_case *c = compute("groups:\n"
					"  pod:\n"
					"    order: sequential\n"
					"    tasks:\n"
					"      a: {command: x, kill: {timeout: 1s}}\n"
					"      b: {command: x, kill: {timeout: 2s}}\n"
					"      c: {command: x, kill: {timeout: 4s}}\n");
	assert_int_equal(c->budget.total_ms, 7000);
	assert_string_equal(chain_names(&c->budget), "pod/c pod/b pod/a");
	release(c);
}

/* Kubernetes' init containers and sidecars: the sidecars stop in the
 * reverse of their start order, through the one-shots between them. */
static void test_done_one_shots_pass_the_wait_on(void **state)
{
	struct budget_case *c =
	    compute("groups:\n"
		    "  pod:\n"
		    "    order: sequential\n"
		    "    tasks:\n"
		    "      init1: {command: x, lifecycle: {hook: prestart}}\n"
		    "      side1: {command: x, lifecycle: {hook: prestart, sidecar: "
		    "true}, kill: {timeout: 2s}}\n"
		    "      init2: {command: x, lifecycle: {hook: prestart}}\n"
		    "      side2: {command: x, lifecycle: {hook: prestart, sidecar: "
		    "true}, kill: {timeout: 3s}}\n"
		    "      main: {command: x, kill: {timeout: 1s}}\n");
	assert_int_equal(c->budget.total_ms, 6000);
	assert_string_equal(chain_names(&c->budget), "pod/main pod/side2 pod/side1");
	release(c);
}

static void test_hooks_after_death_and_poststop_tasks_count(void **state)
{
	struct budget_case *c =
	    compute("groups:\n"
		    "  g:\n"
		    "    tasks:\n"
		    "      app:\n"
		    "        command: x\n"
		    "        kill: {timeout: 10s}\n"
		    "        hooks: [{name: s, stage: stop, exec: [x], timeout: 1s}]\n"
		    "      archive:\n"
		    "        command: x\n"
		    "        lifecycle: {hook: poststop}\n"
		    "        hooks:\n"
		    "          - {name: p, stage: prestart, exec: [x], timeout: 3s}\n"
		    "          - {name: e, stage: exited, exec: [x], timeout: 2s}\n");
	assert_int_equal(c->budget.total_ms, 15000);
	assert_string_equal(chain_names(&c->budget), "g/app g/archive");
	assert_true(c->budget.chain[1].poststop);
	assert_int_equal(c->budget.chain[0].hooks_after_ms, 0);
	assert_int_equal(c->budget.chain[1].prestart_ms, 3000);
	assert_int_equal(c->budget.chain[1].hooks_after_ms, 2000);
	release(c);
}

/* A poststart sidecar that waits for a main task stops before it: the
 * dependency wins over the tiers. */
static void test_a_dependency_against_the_tiers_wins(void **state)
{
	struct budget_case *c =
	    compute("groups:\n"
		    "  g:\n"
		    "    tasks:\n"
		    "      app: {command: x, kill: {timeout: 5s}}\n"
		    "      probe: {command: x, lifecycle: {hook: poststart, sidecar: "
		    "true}, after: [app], kill: {timeout: 7s}}\n");
	assert_int_equal(c->budget.total_ms, 12000);
	assert_string_equal(chain_names(&c->budget), "g/probe g/app");
	release(c);
}

/* order: sequential stops b first (written later), after: stops a first
 * (it waits for b): each waits for the other. */
static void test_tasks_that_wait_for_each_other_are_found(void **state)
{
	struct budget_case *c = compute("groups:\n"
					"  g:\n"
					"    order: sequential\n"
					"    tasks:\n"
					"      a: {command: x, after: [b]}\n"
					"      b: {command: x}\n");
	assert_int_equal(c->budget.cycle_length, 3);
	assert_string_equal(c->budget.cycle[0]->full_name, c->budget.cycle[2]->full_name);
	assert_string_not_equal(c->budget.cycle[0]->full_name, c->budget.cycle[1]->full_name);
	char warning[512];
	assert_int_equal(shutdown_budget_check(c->config, 30000, NULL, warning, sizeof(warning)),
			 -1);
	assert_non_null(strstr(warning, "wait for each other to stop"));
	assert_non_null(strstr(warning, "until shutdown_timeout 30s kills them all"));
	release(c);
}

static void test_the_warning_names_the_chain_and_the_timeout_source(void **state)
{
	struct config *config =
	    parse_ok("groups:\n"
		     "  web:\n"
		     "    tasks:\n"
		     "      proxy:\n"
		     "        command: x\n"
		     "        after: [app]\n"
		     "        kill: {timeout: 30s}\n"
		     "        hooks: [{name: drain, stage: prekill, exec: [x], timeout: 10s}]\n"
		     "      app: {command: x, after: [db], kill: {timeout: 20s}}\n"
		     "      db: {command: x, kill: {timeout: 15s}}\n");
	char warning[512];
	assert_int_equal(shutdown_budget_check(config, 75000, NULL, warning, sizeof(warning)), 0);
	assert_int_equal(
	    shutdown_budget_check(config, 30000, "--shutdown-timeout", warning, sizeof(warning)),
	    -1);
	assert_string_equal(warning,
			    "shutdown: web/db <- web/app <- web/proxy can take 1m15s "
			    "(web/proxy: prekill hooks 10s + kill.timeout 30s; web/app: "
			    "kill.timeout 20s; web/db: kill.timeout 15s) > shutdown_timeout "
			    "30s (from --shutdown-timeout)");
	config_free(config);

	/* One task: no names inside the parentheses. */
	config = parse_ok("shutdown_timeout: 5s\ngroups: {g: {tasks: {t: {command: x}}}}\n");
	assert_int_equal(shutdown_budget_check(config, config->shutdown_timeout_ms, NULL, warning,
					       sizeof(warning)),
			 -1);
	assert_string_equal(warning,
			    "shutdown: g/t can take 10s (kill.timeout 10s) > shutdown_timeout 5s");
	config_free(config);
}

/* 10,000 tasks of one group, each waiting for the one before: the walk
 * holds its own stack, and the tiers take one edge a task. */
static void test_a_long_chain_and_a_large_group(void **state)
{
	size_t count = 10000;
	char *yaml = malloc(count * 96 + 64);
	size_t used = (size_t)sprintf(yaml, "groups:\n  g:\n    tasks:\n");
	for (size_t i = 0; i < count; i++) {
		if (i)
			used += (size_t)sprintf(yaml + used,
						"      t%zu: {command: x, kill: {timeout: 1ms}, "
						"after: [t%zu]}\n",
						i, i - 1);
		else
			used += (size_t)sprintf(yaml + used,
						"      t0: {command: x, kill: {timeout: 1ms}}\n");
	}
	struct budget_case *c = compute(yaml);
	assert_int_equal(c->budget.total_ms, count);
	assert_int_equal(c->budget.chain_length, count);
	release(c);
	free(yaml);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_the_stage_tiers_stop_one_after_another),
	    cmocka_unit_test(test_dependents_stop_first_across_groups),
	    cmocka_unit_test(test_prekill_hooks_run_ahead_while_dependents_stop),
	    cmocka_unit_test(test_sequential_groups_stop_in_reverse_file_order),
	    cmocka_unit_test(test_done_one_shots_pass_the_wait_on),
	    cmocka_unit_test(test_hooks_after_death_and_poststop_tasks_count),
	    cmocka_unit_test(test_a_dependency_against_the_tiers_wins),
	    cmocka_unit_test(test_tasks_that_wait_for_each_other_are_found),
	    cmocka_unit_test(test_the_warning_names_the_chain_and_the_timeout_source),
	    cmocka_unit_test(test_a_long_chain_and_a_large_group),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
