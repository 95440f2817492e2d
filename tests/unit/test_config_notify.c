/* The top level's `notify.ready`: all by default, started, or a list of
 * groups. Its mistakes are in test_config_errors.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "config/model/config.h"
#include "config_cases.h"

#define GROUPS "groups: {api: {tasks: {t: {command: x}}}, extras: {tasks: {t: {command: x}}}}\n"

static void test_ready_is_all_by_default(void **state)
{
	(void)state;
	struct config *config = parse_ok(GROUPS);
	assert_int_equal(config->notify_ready, NOTIFY_READY_ALL);
	assert_int_equal(config->notify_ready_group_count, 0);
	config_free(config);
	config = parse_ok(GROUPS "notify: {ready: all}\n");
	assert_int_equal(config->notify_ready, NOTIFY_READY_ALL);
	config_free(config);
	config = parse_ok(GROUPS "notify: {}\n");
	assert_int_equal(config->notify_ready, NOTIFY_READY_ALL);
	config_free(config);
}

static void test_started_and_a_list_of_groups(void **state)
{
	(void)state;
	struct config *config = parse_ok(GROUPS "notify: {ready: started}\n");
	assert_int_equal(config->notify_ready, NOTIFY_READY_STARTED);
	config_free(config);
	/* Before `groups:` in the file: the names are checked once all are read. */
	config = parse_ok("notify: {ready: [api]}\n" GROUPS);
	assert_int_equal(config->notify_ready, NOTIFY_READY_GROUPS);
	assert_int_equal(config->notify_ready_group_count, 1);
	assert_string_equal(config->notify_ready_groups[0], "api");
	config_free(config);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ready_is_all_by_default),
	    cmocka_unit_test(test_started_and_a_list_of_groups),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
