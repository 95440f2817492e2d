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

#include "supervisor/tasks/group.h"
#include "supervisor/tasks/task.h"
#include "supervisor/tasks/task_usage.h"

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
	assert_non_null(stats);
	assert_true(stats->has_cpu);
	return stats->cpu_usec;
}

/* One pass over the fixture's only task, as the idle refresh makes it. */
static bool refresh(struct fixture *fixture, uint64_t now)
{
	struct task_usage_cursor cursor = {0};
	return task_usage_refresh_some(fixture->groups, 1, &cursor, now, TASK_USAGE_REFRESH_BATCH);
}

static void test_a_reply_about_one_task_reads_now(void **state)
{
	struct fixture *fixture = *state;
	assert_int_equal(task_usage_read(&fixture->task, 1000)->cpu_usec, 100);
	set_cpu_usec(fixture, 200);
	assert_int_equal(task_usage_read(&fixture->task, 1001)->cpu_usec, 200);
}

static uint64_t recent_cpu(struct fixture *fixture, uint64_t now, uint64_t *age)
{
	const struct task_cgroup_stats *stats = task_usage_recent(&fixture->task, now, age);
	assert_non_null(stats);
	return stats->cpu_usec;
}

static void test_a_reply_about_one_task_serves_a_recent_reading(void **state)
{
	struct fixture *fixture = *state;
	uint64_t age = 99;
	/* No reading yet: one is made now. */
	assert_int_equal(recent_cpu(fixture, 1000, &age), 100);
	assert_int_equal(age, 0);
	set_cpu_usec(fixture, 200);
	/* Within the freshness window: the kept reading, with its age. */
	assert_int_equal(recent_cpu(fixture, 1001, &age), 100);
	assert_int_equal(age, 1);
	assert_int_equal(recent_cpu(fixture, 1000 + TASK_USAGE_FRESH_MS, &age), 100);
	assert_int_equal(age, TASK_USAGE_FRESH_MS);
	/* Past it: read again, and that reading is the one kept. */
	assert_int_equal(recent_cpu(fixture, 1001 + TASK_USAGE_FRESH_MS, &age), 200);
	assert_int_equal(age, 0);
	set_cpu_usec(fixture, 300);
	assert_int_equal(recent_cpu(fixture, 1002 + TASK_USAGE_FRESH_MS, &age), 200);
	assert_int_equal(age, 1);
	/* A forgotten reading (a run began or ended) is never served. */
	task_usage_forget(&fixture->task.usage);
	assert_int_equal(recent_cpu(fixture, 1003 + TASK_USAGE_FRESH_MS, &age), 300);
	assert_int_equal(age, 0);
}

static void test_a_list_serves_the_last_reading_with_its_age(void **state)
{
	struct fixture *fixture = *state;
	uint64_t age;
	bool stale;
	/* No reading yet: none served, and one due after the reply. */
	assert_null(task_usage_cached(&fixture->task, 1000, &age, &stale));
	assert_true(stale);
	task_usage_read(&fixture->task, 1000);
	set_cpu_usec(fixture, 200);
	/* Within the refresh age: the reading, its age, nothing due. */
	assert_int_equal(cached_cpu(fixture, 1000 + TASK_USAGE_REFRESH_MS, &age, &stale), 100);
	assert_int_equal(age, TASK_USAGE_REFRESH_MS);
	assert_false(stale);
	/* Past it: still the reading, now due for a refresh after the reply. */
	assert_int_equal(cached_cpu(fixture, 1001 + TASK_USAGE_REFRESH_MS, &age, &stale), 100);
	assert_int_equal(age, TASK_USAGE_REFRESH_MS + 1);
	assert_true(stale);
	/* However old it is, a list reply reads nothing: it says how old. */
	assert_int_equal(cached_cpu(fixture, 1000 + 3600000, &age, &stale), 100);
	assert_int_equal(age, 3600000);
	assert_true(stale);
}

static void test_the_refresh_reads_only_stale_readings(void **state)
{
	struct fixture *fixture = *state;
	uint64_t age;
	bool stale;
	task_usage_read(&fixture->task, 1000);
	set_cpu_usec(fixture, 200);
	assert_true(refresh(fixture, 1000 + TASK_USAGE_REFRESH_MS));
	assert_int_equal(cached_cpu(fixture, 1000 + TASK_USAGE_REFRESH_MS, &age, &stale), 100);
	assert_true(refresh(fixture, 1001 + TASK_USAGE_REFRESH_MS));
	assert_int_equal(cached_cpu(fixture, 1002 + TASK_USAGE_REFRESH_MS, &age, &stale), 200);
	assert_int_equal(age, 1);
	assert_false(stale);
}

static void test_a_forgotten_reading_is_read_by_the_refresh(void **state)
{
	struct fixture *fixture = *state;
	uint64_t age;
	bool stale;
	task_usage_read(&fixture->task, 1000);
	set_cpu_usec(fixture, 300);
	task_usage_forget(&fixture->task.usage); /* a run began or ended */
	assert_null(task_usage_cached(&fixture->task, 1001, &age, &stale));
	assert_true(stale);
	assert_true(refresh(fixture, 1002));
	assert_int_equal(cached_cpu(fixture, 1003, &age, &stale), 300);
	assert_int_equal(age, 1);
	/* A task without a cgroup has nothing to read. */
	task_usage_forget(&fixture->task.usage);
	fixture->task.cgroup.made = false;
	assert_true(refresh(fixture, 1000000));
	assert_false(fixture->task.usage.valid);
	fixture->task.cgroup.made = true;
}

/* 150 tasks over two groups (the same cgroup each), refreshed a batch at
 * a time: each going on where the last stopped, the last ending the pass;
 * a second pass right after reads nothing. */
static void test_the_refresh_goes_in_batches(void **state)
{
	struct fixture *fixture = *state;
	enum { FIRST = 100, SECOND = 50 };
	static struct task tasks[FIRST + SECOND];
	struct task *pointers[FIRST + SECOND];
	for (size_t i = 0; i < FIRST + SECOND; i++) {
		tasks[i] = fixture->task;
		tasks[i].usage.valid = false;
		pointers[i] = &tasks[i];
	}
	struct group first = {.tasks = pointers, .task_count = FIRST};
	struct group second = {.tasks = pointers + FIRST, .task_count = SECOND};
	struct group *groups[] = {&first, &second};
	struct task_usage_cursor cursor = {0};
	size_t passes = 0, batches = 0;
	while (!passes) {
		passes +=
		    task_usage_refresh_some(groups, 2, &cursor, 5000, TASK_USAGE_REFRESH_BATCH);
		batches++;
		size_t read = 0;
		for (size_t i = 0; i < FIRST + SECOND; i++)
			read += tasks[i].usage.valid;
		assert_int_equal(read, batches * TASK_USAGE_REFRESH_BATCH < FIRST + SECOND
					   ? batches * TASK_USAGE_REFRESH_BATCH
					   : FIRST + SECOND);
	}
	assert_int_equal(batches, (FIRST + SECOND + TASK_USAGE_REFRESH_BATCH - 1) /
				      TASK_USAGE_REFRESH_BATCH);
	assert_int_equal(cursor.group, 0);
	assert_int_equal(cursor.task, 0);
	/* Every reading is fresh now: a pass allowed no read at all ends. */
	assert_true(task_usage_refresh_some(groups, 2, &cursor, 5000, 0));
	tasks[FIRST].usage.valid = false; /* one run began */
	assert_false(task_usage_refresh_some(groups, 2, &cursor, 5000, 0));
	assert_int_equal(cursor.group, 1);
	assert_int_equal(cursor.task, 0);
	assert_true(task_usage_refresh_some(groups, 2, &cursor, 5000, 1));
	assert_true(tasks[FIRST].usage.valid);
	/* A reload left fewer groups than the cursor's: the pass ends. */
	cursor = (struct task_usage_cursor){.group = 2, .task = 7};
	assert_true(task_usage_refresh_some(groups, 1, &cursor, 5000, TASK_USAGE_REFRESH_BATCH));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_a_reply_about_one_task_reads_now, set_up,
					    tear_down),
	    cmocka_unit_test_setup_teardown(test_a_reply_about_one_task_serves_a_recent_reading,
					    set_up, tear_down),
	    cmocka_unit_test_setup_teardown(test_a_list_serves_the_last_reading_with_its_age,
					    set_up, tear_down),
	    cmocka_unit_test_setup_teardown(test_the_refresh_reads_only_stale_readings, set_up,
					    tear_down),
	    cmocka_unit_test_setup_teardown(test_a_forgotten_reading_is_read_by_the_refresh, set_up,
					    tear_down),
	    cmocka_unit_test_setup_teardown(test_the_refresh_goes_in_batches, set_up, tear_down),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
