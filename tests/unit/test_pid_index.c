/* The table of running tasks by main pid (supervisor/tasks/pid_index.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "supervisor/tasks/pid_index.h"

static int owners[20000];

static void test_an_empty_index_knows_no_pid(void **state)
{
	(void)state;
	struct pid_index index = {0};
	assert_null(pid_index_get(&index, 1));
	pid_index_remove(&index, 1); /* nothing to remove: harmless */
	assert_null(pid_index_get(&index, 0));
	pid_index_free(&index);
}

static void test_put_get_replace_remove(void **state)
{
	(void)state;
	struct pid_index index = {0};
	pid_index_put(&index, 4242, &owners[0]);
	assert_ptr_equal(pid_index_get(&index, 4242), &owners[0]);
	pid_index_put(&index, 4242, &owners[1]); /* the pid came back for another */
	assert_ptr_equal(pid_index_get(&index, 4242), &owners[1]);
	pid_index_remove(&index, 4242);
	assert_null(pid_index_get(&index, 4242));
	pid_index_free(&index);
}

/* Many pids through growth, removals leaving tombstones, and pids that
 * collide (the same low bits): every lookup still right. */
static void test_many_pids_with_removals_and_reuse(void **state)
{
	(void)state;
	struct pid_index index = {0};
	for (int i = 0; i < 20000; i++)
		pid_index_put(&index, 1000 + i * 64, &owners[i]);
	for (int i = 0; i < 20000; i += 2)
		pid_index_remove(&index, 1000 + i * 64);
	for (int i = 0; i < 20000; i++)
		assert_ptr_equal(pid_index_get(&index, 1000 + i * 64), i % 2 ? &owners[i] : NULL);
	/* Churn: runs end and start again, the table does not fill up. */
	for (int round = 0; round < 50; round++)
		for (int i = 0; i < 20000; i += 2) {
			pid_index_put(&index, 5000000 + round * 20000 + i, &owners[i]);
			pid_index_remove(&index, 5000000 + round * 20000 + i);
		}
	assert_true(index.capacity <= 65536);
	for (int i = 1; i < 20000; i += 2)
		assert_ptr_equal(pid_index_get(&index, 1000 + i * 64), &owners[i]);
	pid_index_free(&index);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_an_empty_index_knows_no_pid),
	    cmocka_unit_test(test_put_get_replace_remove),
	    cmocka_unit_test(test_many_pids_with_removals_and_reuse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
