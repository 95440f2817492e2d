/* corral top's model from canned status replies: cells, counts, the CPU %
 * of two readings, and replies missing what they should have. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "top_replies.h"

static void test_cells(void **unused)
{
	struct top_model model;
	top_model_from(&model, TOP_REPLY(1000000), 5000, NULL);
	assert_int_equal(model.group_count, 2);
	assert_int_equal(model.task_count, 3);
	assert_int_equal(model.running, 2);
	assert_int_equal(model.dead, 1);
	assert_string_equal(model.corral, "corral 0.1.0 pid 1 up 1h2m");
	const struct top_task *app = &model.tasks[0];
	assert_string_equal(app->target, "web/app");
	assert_string_equal(app->name, "app");
	assert_string_equal(app->state, "running");
	assert_string_equal(app->ready, "yes");
	assert_string_equal(app->health, "fail 2/3");
	assert_int_equal(app->restarts, 1);
	assert_int_equal(app->memory_bytes, 10485760);
	/* One reading: no CPU % yet. */
	assert_true(app->cpu_percent < 0);
	const struct top_task *store = &model.tasks[2];
	assert_int_equal(store->group, 1);
	assert_string_equal(store->ready, "-"); /* no process */
	assert_string_equal(store->health, "-");
	assert_int_equal(store->pid, TOP_NONE);
	assert_int_equal(store->memory_bytes, TOP_NONE);
	assert_int_equal(store->next_ms, 2500);
	assert_false(store->next_is_run);
	assert_string_equal(store->last_exit, "exited with code 3");
	assert_true(model.groups[1].stopping);
	assert_string_equal(model.groups[1].state, "main");
	top_model_free(&model);
}

/* 0.25 s of CPU over 1 s between readings is 25 %. */
static void test_cpu_percent_from_two_readings(void **unused)
{
	struct top_model first, second, third;
	top_model_from(&first, TOP_REPLY(1000000), 5000, NULL);
	top_model_from(&second, TOP_REPLY(1250000), 6000, &first);
	assert_float_equal(second.tasks[0].cpu_percent, 25.0, 0.001);
	assert_float_equal(second.tasks[1].cpu_percent, 0.0, 0.001); /* idle */
	/* The same reading served again (a reply 10 ms later, age 0 both
	 * times: whole ms): the figure stays, not 0 %. */
	top_model_from(&third, TOP_REPLY(1250000), 6010, &second);
	assert_float_equal(third.tasks[0].cpu_percent, 25.0, 0.001);
	top_model_free(&first);
	top_model_free(&second);
	top_model_free(&third);
}

/* A CPU time that went down belongs to a new run: no figure. */
static void test_cpu_percent_after_a_new_run(void **unused)
{
	struct top_model first, second;
	top_model_from(&first, TOP_REPLY(9000000), 5000, NULL);
	top_model_from(&second, TOP_REPLY(1000), 6000, &first);
	assert_true(second.tasks[0].cpu_percent < 0);
	top_model_free(&first);
	top_model_free(&second);
}

static void test_reply_missing_fields(void **unused)
{
	struct top_model model;
	top_model_from(&model, "{\"groups\": [{\"tasks\": [{\"state\": 3}]}]}", 0, NULL);
	assert_int_equal(model.task_count, 1);
	assert_string_equal(model.groups[0].name, "?");
	assert_string_equal(model.tasks[0].state, "?");
	assert_string_equal(model.tasks[0].target, "?/?");
	assert_int_equal(model.tasks[0].restarts, TOP_NONE);
	assert_string_equal(model.corral, "");
	top_model_free(&model);

	char text[] = "{\"ok\": true}";
	struct json_view view;
	char error[64];
	assert_int_equal(json_view_parse(&view, text, strlen(text), error, sizeof(error)), 0);
	assert_int_equal(top_model_build(&model, view.values, 0, NULL), -1);
	json_view_free(&view);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cells),
	    cmocka_unit_test(test_cpu_percent_from_two_readings),
	    cmocka_unit_test(test_cpu_percent_after_a_new_run),
	    cmocka_unit_test(test_reply_missing_fields),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
