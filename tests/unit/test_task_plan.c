/* A task's environment is kept as its own assignments over corral's, and
 * the envp array a start needs is made when asked for (kept per
 * task it was about 450 bytes an idle task; bench_supervisor --memory-only). What a start gets must
 * be what it got when the array was kept; ASan checks the arrays are freed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "isolation/task_plan.h"

static char *base_env[] = {"A=1", "PATH=/opt/bin:/bin", "CORRAL_TASK=outer", "HOME=/root", NULL};
static char *task_env[] = {"A=2", "B=3", NULL};
static char *task_argv[] = {"/bin/true", NULL};

static struct task_config sample_task(void)
{
	return (struct task_config){
	    .name = "app",
	    .argv = task_argv,
	    .env = task_env,
	    .env_count = 2,
	};
}

static void assert_env(char *const *envp, const char *const *expected)
{
	size_t i = 0;
	for (; expected[i]; i++) {
		assert_non_null(envp[i]);
		assert_string_equal(envp[i], expected[i]);
	}
	assert_null(envp[i]);
}

/* Base first, each own assignment replacing its name in place or
 * appended, corral's variables last: the order starts always had. */
/* The plan of `task` in group "web" over base_env; the test frees it. */
static void build(struct task_plan *plan, const struct task_config *task, char **corral_env)
{
	char error[160];
	assert_int_equal(
	    task_plan_build(plan, task, "web", base_env, corral_env, error, sizeof(error)), 0);
}

static const char *const merged[] = {
    "A=2", "PATH=/opt/bin:/bin", "CORRAL_TASK=app",      "HOME=/root",
    "B=3", "CORRAL_GROUP=web",   "NOTIFY_SOCKET=/run/n", NULL};

static void test_environment_is_made_per_call_and_not_kept(void **state)
{
	(void)state;
	struct task_config task = sample_task();
	char *corral_env[] = {"NOTIFY_SOCKET=/run/n", NULL};
	struct task_plan plan;
	build(&plan, &task, corral_env);
	assert_null(plan.envp); /* nothing kept for an idle task */

	char **first = task_plan_environment(&plan);
	char **second = task_plan_environment(&plan);
	assert_ptr_not_equal(first, second);
	assert_env(first, merged);
	assert_env(second, merged);
	free(first);
	free(second);
	assert_null(plan.envp);
	task_plan_free(&plan);
}

static void test_getenv_without_an_array(void **state)
{
	(void)state;
	struct task_config task = sample_task();
	struct task_plan plan;
	build(&plan, &task, NULL);
	assert_string_equal(task_plan_getenv(&plan, "A"), "2");
	assert_string_equal(task_plan_getenv(&plan, "PATH"), "/opt/bin:/bin");
	assert_string_equal(task_plan_getenv(&plan, "CORRAL_TASK"), "app");
	assert_null(task_plan_getenv(&plan, "PAT"));
	assert_null(task_plan_getenv(&plan, "NOPE"));
	assert_string_equal(plan.executable, "/bin/true");
	assert_null(plan.envp);
	task_plan_free(&plan);
}

/* Hooks and probes hold the pointer: one array, kept until the plan goes. */
static void test_pinned_environment_is_kept(void **state)
{
	(void)state;
	struct task_config task = sample_task();
	char *corral_env[] = {"NOTIFY_SOCKET=/run/n", NULL};
	struct task_plan plan;
	build(&plan, &task, corral_env);
	char *const *pinned = task_plan_pin_environment(&plan);
	assert_ptr_equal(pinned, task_plan_pin_environment(&plan));
	assert_env(pinned, merged);
	char **start = task_plan_environment(&plan);
	assert_ptr_not_equal(start, pinned);
	assert_env(start, merged);
	free(start);
	task_plan_free(&plan);
}

/* The prestart hooks' variables override `env:` for the next starts,
 * and go when the hooks give none. */
static void test_additions_over_the_environment(void **state)
{
	(void)state;
	struct task_config task = sample_task();
	struct task_plan plan;
	build(&plan, &task, NULL);
	char *additions[] = {"B=9", "C=4", NULL};
	task_plan_set_additions(&plan, additions);
	char **start = task_plan_environment(&plan);
	const char *const with_additions[] = {"A=2",
					      "PATH=/opt/bin:/bin",
					      "CORRAL_TASK=app",
					      "HOME=/root",
					      "B=9",
					      "CORRAL_GROUP=web",
					      "C=4",
					      NULL};
	assert_env(start, with_additions);
	free(start);

	task_plan_set_additions(&plan, NULL);
	start = task_plan_environment(&plan);
	const char *const without[] = {
	    "A=2", "PATH=/opt/bin:/bin", "CORRAL_TASK=app", "HOME=/root", "B=3", "CORRAL_GROUP=web",
	    NULL};
	assert_env(start, without);
	free(start);
	task_plan_free(&plan);
}

/* An instance gets its number, after corral's other variables. */
static void test_instance_number(void **state)
{
	(void)state;
	struct task_config task = sample_task();
	task.name = "app@2";
	task.instance_of = "app";
	task.instance = 2;
	char *corral_env[] = {"NOTIFY_SOCKET=/run/n", NULL};
	struct task_plan plan;
	build(&plan, &task, corral_env);
	char **start = task_plan_environment(&plan);
	const char *const expected[] = {
	    "A=2", "PATH=/opt/bin:/bin", "CORRAL_TASK=app@2", "HOME=/root",
	    "B=3", "CORRAL_GROUP=web",   "CORRAL_INSTANCE=2", "NOTIFY_SOCKET=/run/n",
	    NULL};
	assert_env(start, expected);
	assert_string_equal(task_plan_getenv(&plan, "CORRAL_INSTANCE"), "2");
	free(start);
	task_plan_free(&plan);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_environment_is_made_per_call_and_not_kept),
	    cmocka_unit_test(test_getenv_without_an_array),
	    cmocka_unit_test(test_pinned_environment_is_kept),
	    cmocka_unit_test(test_additions_over_the_environment),
	    cmocka_unit_test(test_instance_number),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
