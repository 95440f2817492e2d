/* When a status reply serves a task's cached usage, and when it reads the
 * cgroup (task_usage.h), on a fake clock. The task's "cgroup" is a
 * temporary directory with a cpu.stat the test rewrites: a figure that
 * changed shows that a reading was made. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "supervisor/group.h"
#include "supervisor/task.h"
#include "supervisor/task_usage.h"

struct fixture {
	char directory[64];
	struct task task;
	struct task *tasks[1];
	struct group group;
	struct group *groups[1];
};

static void set_cpu_usec(struct fixture *fixture, unsigned usec)
{
	char path[96];
	snprintf(path, sizeof(path), "%s/cpu.stat", fixture->directory);
	FILE *file = fopen(path, "w");
	assert_non_null(file);
	fprintf(file, "usage_usec %u\nuser_usec %u\nsystem_usec 0\n", usec, usec);
	fclose(file);
}

static int set_up(void **state)
{
	struct fixture *fixture = calloc(1, sizeof(*fixture));
	snprintf(fixture->directory, sizeof(fixture->directory), "/tmp/test-task-usage-XXXXXX");
	if (!mkdtemp(fixture->directory))
		return -1;
	/* The leaf is reached as its parent's fd and its name (cgroup_task.h). */
	task_cgroup_init(&fixture->task.cgroup);
	fixture->task.cgroup.made = true;
	fixture->task.cgroup.parent_fd = open("/tmp", O_RDONLY | O_DIRECTORY);
	fixture->task.cgroup.name = fixture->directory + strlen("/tmp/");
	fixture->tasks[0] = &fixture->task;
	fixture->group.tasks = fixture->tasks;
	fixture->group.task_count = 1;
	fixture->groups[0] = &fixture->group;
	set_cpu_usec(fixture, 100);
	*state = fixture;
	return 0;
}

static int tear_down(void **state)
{
	struct fixture *fixture = *state;
	char path[96];
	snprintf(path, sizeof(path), "%s/cpu.stat", fixture->directory);
	unlink(path);
	close(fixture->task.cgroup.parent_fd);
	rmdir(fixture->directory);
	free(fixture);
	return 0;
}

static uint64_t cached_cpu(struct fixture *fixture, uint64_t now, uint64_t *age, bool *stale)
{
	const struct task_cgroup_stats *stats = task_usage_cached(&fixture->task, now, age, stale);
	assert_true(stats->has_cpu);
	return stats->cpu_usec;
}

static void test_a_reply_about_one_task_reads_now(void **state)
{
	struct fixture *fixture = *state;
	assert_int_equal(task_usage_read(&fixture->task, 1000)->cpu_usec, 100);
	set_cpu_usec(fixture, 200);
	assert_int_equal(task_usage_read(&fixture->task, 1001)->cpu_usec, 200);
}

static void test_a_list_serves_the_last_reading_with_its_age(void **state)
{
	struct fixture *fixture = *state;
	uint64_t age;
	bool stale;
	/* No reading yet: read during the reply. */
	assert_int_equal(cached_cpu(fixture, 1000, &age, &stale), 100);
	assert_int_equal(age, 0);
	assert_false(stale);
	set_cpu_usec(fixture, 200);
	/* Within the refresh age: the reading, its age, nothing due. */
	assert_int_equal(cached_cpu(fixture, 1000 + TASK_USAGE_REFRESH_MS, &age, &stale), 100);
	assert_int_equal(age, TASK_USAGE_REFRESH_MS);
	assert_false(stale);
	/* Past it: still the reading, now due for a refresh after the reply. */
	assert_int_equal(cached_cpu(fixture, 1001 + TASK_USAGE_REFRESH_MS, &age, &stale), 100);
	assert_int_equal(age, TASK_USAGE_REFRESH_MS + 1);
	assert_true(stale);
	/* Past the longest age: read during the reply. */
	assert_int_equal(cached_cpu(fixture, 1001 + TASK_USAGE_MAX_AGE_MS, &age, &stale), 200);
	assert_int_equal(age, 0);
	assert_false(stale);
}

static void test_the_refresh_reads_only_stale_readings(void **state)
{
	struct fixture *fixture = *state;
	uint64_t age;
	bool stale;
	task_usage_read(&fixture->task, 1000);
	set_cpu_usec(fixture, 200);
	task_usage_refresh_stale(fixture->groups, 1, 1000 + TASK_USAGE_REFRESH_MS);
	assert_int_equal(cached_cpu(fixture, 1000 + TASK_USAGE_REFRESH_MS, &age, &stale), 100);
	task_usage_refresh_stale(fixture->groups, 1, 1001 + TASK_USAGE_REFRESH_MS);
	assert_int_equal(cached_cpu(fixture, 1002 + TASK_USAGE_REFRESH_MS, &age, &stale), 200);
	assert_int_equal(age, 1);
	assert_false(stale);
}

static void test_a_forgotten_reading_is_read_again(void **state)
{
	struct fixture *fixture = *state;
	uint64_t age;
	bool stale;
	task_usage_read(&fixture->task, 1000);
	set_cpu_usec(fixture, 300);
	task_usage_forget(&fixture->task.usage); /* a run began or ended */
	assert_int_equal(cached_cpu(fixture, 1001, &age, &stale), 300);
	assert_int_equal(age, 0);
	/* The refresh leaves a task with no reading to the next reply. */
	task_usage_forget(&fixture->task.usage);
	task_usage_refresh_stale(fixture->groups, 1, 1000000);
	assert_false(fixture->task.usage.valid);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_a_reply_about_one_task_reads_now, set_up,
						tear_down),
		cmocka_unit_test_setup_teardown(test_a_list_serves_the_last_reading_with_its_age,
						set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_the_refresh_reads_only_stale_readings, set_up,
						tear_down),
		cmocka_unit_test_setup_teardown(test_a_forgotten_reading_is_read_again, set_up,
						tear_down),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
