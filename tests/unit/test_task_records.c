/* Tasks' life-long counts in shared memory (supervisor/tasks/task_records.h):
 * what one corral counted is what another finds by the task's name after
 * mapping the same memfds, as `corral upgrade` does across its exec. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "supervisor/tasks/task_records.h"

struct found {
	struct task_record *records[128];
	size_t count;
};

static void remember(void *context, struct task_record *record)
{
	struct found *found = context;
	found->records[found->count++] = record;
}

static struct task_record *named(struct found *found, const char *name)
{
	for (size_t i = 0; i < found->count; i++)
		if (strcmp(found->records[i]->name, name) == 0)
			return found->records[i];
	return NULL;
}

/* The fds a hand-over would list, each a dup (the exec keeps the same
 * numbers; here the first set is freed, as the old process' would be). */
static size_t handed_fds(const struct task_records *records, int *fds)
{
	size_t count = 0;
	for (size_t i = 0; i < records->chunk_count; i++)
		if (task_records_chunk_fd(records, i) >= 0)
			fds[count++] = dup(task_records_chunk_fd(records, i));
	return count;
}

static void test_counts_written_in_place_are_found_by_name_elsewhere(void **state)
{
	(void)state;
	struct task_records old;
	task_records_init(&old);
	struct task_record *crash = task_records_take(&old, "web/crash");
	struct task_record *probed = task_records_take(&old, "web/probed");
	struct task_record *gone = task_records_take(&old, "web/gone");
	crash->exits.start_failures = 2;
	exit_tally_add(&crash->exits, false, 3);
	exit_tally_add(&crash->exits, true, 9);
	probed->counts.readiness_probe_failures = 7;
	task_records_give_back(&old, gone);

	int fds[8];
	size_t count = handed_fds(&old, fds);
	assert_int_equal(count, 1);
	task_records_free(&old);

	struct task_records new;
	task_records_init(&new);
	char error[256] = "";
	assert_int_equal(task_records_adopt(&new, fds, count, error, sizeof(error)), 0);
	struct found found = {0};
	task_records_visit(&new, remember, &found);
	assert_int_equal(found.count, 2); /* the one given back is not in use */
	assert_non_null(named(&found, "web/crash"));
	assert_null(named(&found, "web/gone"));
	assert_int_equal(named(&found, "web/probed")->counts.readiness_probe_failures, 7);
	const struct exit_tally *exits = &named(&found, "web/crash")->exits;
	assert_int_equal(exits->start_failures, 2);
	assert_int_equal(exits->slot_count, 2);
	assert_int_equal(exits->slots[0].value, 3);
	assert_true(exits->slots[1].signaled);
	/* A record given back here is free for the next task. */
	task_records_give_back(&new, named(&found, "web/crash"));
	struct task_record *next = task_records_take(&new, "web/next");
	assert_ptr_equal(next, found.records[0] == named(&found, "web/probed") ? found.records[1]
									       : found.records[0]);
	assert_int_equal(next->exits.slot_count, 0);
	task_records_free(&new);
}

static void test_chunks_grow_and_each_goes_over(void **state)
{
	(void)state;
	struct task_records old;
	task_records_init(&old);
	char name[32];
	for (int i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "g/t@%d", i);
		task_records_take(&old, name)->counts.oom_kills = (uint64_t)i;
	}
	int fds[16];
	size_t count = handed_fds(&old, fds);
	assert_true(count >= 2);
	task_records_free(&old);
	struct task_records new;
	task_records_init(&new);
	char error[256] = "";
	assert_int_equal(task_records_adopt(&new, fds, count, error, sizeof(error)), 0);
	struct found found = {0};
	task_records_visit(&new, remember, &found);
	assert_int_equal(found.count, 100);
	assert_int_equal(named(&found, "g/t@99")->counts.oom_kills, 99);
	task_records_free(&new);
}

static void test_a_memfd_that_is_not_records_is_refused_and_nothing_kept(void **state)
{
	(void)state;
	struct task_records old;
	task_records_init(&old);
	task_records_take(&old, "web/app");
	int fds[2];
	handed_fds(&old, fds);
	task_records_free(&old);
	fds[1] = memfd_create("not-records", MFD_CLOEXEC);
	assert_int_equal(ftruncate(fds[1], 4096), 0);

	struct task_records new;
	task_records_init(&new);
	char error[256] = "";
	assert_true(task_records_adopt(&new, fds, 2, error, sizeof(error)) < 0);
	assert_non_null(strstr(error, "not records of this corral"));
	assert_int_equal(new.chunk_count, 0); /* not even the good one */
	task_records_free(&new);
	close(fds[0]);
	close(fds[1]);
}

static void test_a_name_too_long_counts_on_the_heap(void **state)
{
	(void)state;
	struct task_records records;
	task_records_init(&records);
	char name[TASK_RECORD_NAME_SIZE + 8];
	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	struct task_record *record = task_records_take(&records, name);
	record->counts.oom_kills = 1;
	assert_int_equal(records.chunk_count, 0);
	task_records_give_back(&records, record);                           /* freed, not marked */
	struct task_record *orphan = task_records_take(NULL, "no/records"); /* heap too */
	assert_string_equal(orphan->name, "no/records");
	task_records_give_back(NULL, orphan);
	task_records_free(&records);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_counts_written_in_place_are_found_by_name_elsewhere),
	    cmocka_unit_test(test_chunks_grow_and_each_goes_over),
	    cmocka_unit_test(test_a_memfd_that_is_not_records_is_refused_and_nothing_kept),
	    cmocka_unit_test(test_a_name_too_long_counts_on_the_heap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
