/* `status --ready` on canned status replies: which tasks are asked, and
 * what makes one not ready. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "supervisor/control/status_ready.h"

static int check(const char *reply_text, char **output)
{
	json_error_t error;
	json_t *reply = json_loads(reply_text, 0, &error);
	assert_non_null(reply);
	size_t size = 0;
	FILE *out = open_memstream(output, &size);
	int result = status_ready_check(out, reply);
	fclose(out);
	json_decref(reply);
	return result;
}

#define TASK(name, stage, state, ready)                                                            \
	"{\"task\":\"" name "\",\"stage\":\"" stage "\",\"state\":\"" state "\",\"ready\":" ready  \
	"}"

static void test_all_up_and_ready(void **state)
{
	char *output;
	int result = check(
	    "{\"ok\":true,\"groups\":[{\"name\":\"web\",\"tasks\":[" TASK(
		"web/setup", "prestart-ephemeral", "dead",
		"false") "," TASK("web/proxy", "prestart-sidecar", "running",
				  "true") "," TASK("web/app", "main", "running",
						   "true") "," TASK("web/report", "poststop",
								    "pending", "false") "]}]}",
	    &output);
	assert_int_equal(result, 0);
	assert_string_equal(output, "ready\n");
	free(output);
}

static void test_each_task_that_is_not_ready_is_named(void **state)
{
	char *output;
	int result =
	    check("{\"ok\":true,\"groups\":[{\"name\":\"web\",\"tasks\":[" TASK(
		      "web/proxy", "poststart-sidecar", "running",
		      "false") "," TASK("web/app", "main", "pending",
					"false") "]},"
						 "{\"name\":\"db\",\"tasks\":[" TASK(
						     "db/pg", "main", "running", "true") "]}]}",
		  &output);
	assert_int_equal(result, 1);
	assert_string_equal(output, "web/proxy: not ready (running, has not said it is ready)\n"
				    "web/app: not ready (pending)\n");
	free(output);
}

/* A task as the status reply shows it once dead: `failed`, its last exit
 * and a pending restart decide whether it is at rest. */
#define DEAD_TASK(name, fields)                                                                    \
	"{\"task\":\"" name "\",\"stage\":\"main\",\"state\":\"dead\",\"ready\":false," fields "}"

/* Stopped on request (`corral stop`): what should be up is down. */
static void test_a_task_stopped_on_request_is_not_ready(void **state)
{
	char *output;
	assert_int_equal(
	    check("{\"ok\":true,\"groups\":[{\"tasks\":[" DEAD_TASK(
		      "g/app", "\"failed\":false,\"last_exit\":{\"signal\":\"SIGTERM\","
			       "\"failed\":false,\"requested\":true}") "]}]}",
		  &output),
	    1);
	assert_string_equal(output, "g/app: not ready (dead)\n");
	free(output);
}

static void test_a_failed_or_crashed_main_task_is_not_ready(void **state)
{
	char *output;
	assert_int_equal(
	    check(
		"{\"ok\":true,\"groups\":[{\"tasks\":[" DEAD_TASK(
		    "g/app", "\"failed\":true") "," DEAD_TASK("g/crash",
							      "\"failed\":false,\"last_exit\":{"
							      "\"code\":1,\"failed\":true},"
							      "\"next_restart_in_ms\":900") "]}]}",
		&output),
	    1);
	assert_string_equal(output, "g/app: not ready (dead)\n"
				    "g/crash: not ready (dead, restarts after its delay)\n");
	free(output);
}

/* Completed, between scheduled runs, never started, stopped on request:
 * neither ready nor not ready. */
static void test_a_task_at_rest_is_not_asked(void **state)
{
	char *output;
	assert_int_equal(
	    check(
		"{\"ok\":true,\"groups\":[{\"tasks\":[" TASK(
		    "g/web", "main", "running",
		    "true") "," DEAD_TASK("g/migrate",
					  "\"failed\":false,\"last_exit\":{"
					  "\"code\":0,\"failed\":false}") "," DEAD_TASK("g/manual",
											"\"failed\""
											":false,"
											"\"last_"
											"exit\":"
											"null") "]}"
												"]"
												"}",
		&output),
	    0);
	assert_string_equal(output, "ready\n");
	free(output);
}

/* A scheduled task between its runs is shown `waiting` (issue 28, item 9):
 * at rest, as `dead` was. */
static void test_a_scheduled_task_waiting_for_its_next_run_is_not_asked(void **state)
{
	char *output;
	assert_int_equal(check("{\"ok\":true,\"groups\":[{\"tasks\":[" TASK(
				   "g/tick", "main", "waiting", "false") "]}]}",
			       &output),
			 0);
	assert_string_equal(output, "ready\n");
	free(output);
}

static void test_a_reply_without_groups(void **state)
{
	char *output;
	assert_int_equal(check("{\"ok\":true}", &output), -1);
	free(output);
}

/* readiness.continuous: a task that was ready and lost it says so. */
static void test_a_task_that_lost_readiness_says_so(void **state)
{
	char *output;
	int result = check("{\"ok\":true,\"groups\":[{\"name\":\"web\",\"tasks\":["
			   "{\"task\":\"web/app\",\"stage\":\"main\",\"state\":\"running\","
			   "\"ready\":false,\"ready_lost\":true}]}]}",
			   &output);
	assert_int_equal(result, 1);
	assert_string_equal(
	    output, "web/app: not ready (running, was ready; its readiness check fails now)\n");
	free(output);
}

/* An instance a rolling restart replaces while its set keeps min_ready
 * ready: corral wrote roll_covered, and it is not asked. */
static void test_an_instance_covered_by_its_roll_is_not_asked(void **state)
{
	(void)state;
	char *output;
	int result = check("{\"ok\":true,\"groups\":[{\"name\":\"g\",\"tasks\":["
			   "{\"task\":\"g/web@0\",\"stage\":\"main\",\"state\":\"stopping\","
			   "\"ready\":false,\"roll_covered\":true},"
			   "{\"task\":\"g/web@1\",\"stage\":\"main\",\"state\":\"starting\","
			   "\"ready\":false,\"roll_covered\":false}]}]}",
			   &output);
	assert_int_equal(result, 1);
	assert_string_equal(output, "g/web@1: not ready (starting)\n");
	free(output);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_all_up_and_ready),
	    cmocka_unit_test(test_each_task_that_is_not_ready_is_named),
	    cmocka_unit_test(test_a_task_that_lost_readiness_says_so),
	    cmocka_unit_test(test_a_failed_or_crashed_main_task_is_not_ready),
	    cmocka_unit_test(test_a_task_at_rest_is_not_asked),
	    cmocka_unit_test(test_a_task_stopped_on_request_is_not_ready),
	    cmocka_unit_test(test_a_scheduled_task_waiting_for_its_next_run_is_not_asked),
	    cmocka_unit_test(test_a_reply_without_groups),
	    cmocka_unit_test(test_an_instance_covered_by_its_roll_is_not_asked),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
