/* docs/cli.md's event table and the code's event names are one list: every
 * task and group event the code can emit has a row, and every row names an
 * event the code has, of the kind it says. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "supervisor/lifecycle/task_event.h"

#define MAX_ROWS 64

struct row {
	char name[48];
	char kind[8]; /* "task", "group" or "corral" */
};

/* The rows "| `name` | kind | ..." of the table under "`event` is one of". */
static size_t read_doc_rows(struct row *rows)
{
	/* ctest runs the unit tests in tests/unit. */
	FILE *docs = fopen("../../docs/cli.md", "r");
	assert_non_null(docs);
	char line[1024];
	size_t count = 0;
	while (fgets(line, sizeof(line), docs)) {
		const char *cursor = line + strspn(line, " ");
		char name[48], kind[8];
		if (sscanf(cursor, "| `%47[a-z_]` | %7[a-z] |", name, kind) != 2)
			continue;
		if (strcmp(kind, "task") != 0 && strcmp(kind, "group") != 0 &&
		    strcmp(kind, "corral") != 0)
			continue;
		assert_true(count < MAX_ROWS);
		snprintf(rows[count].name, sizeof(rows[count].name), "%s", name);
		snprintf(rows[count].kind, sizeof(rows[count].kind), "%s", kind);
		count++;
	}
	fclose(docs);
	return count;
}

static bool documented(const struct row *rows, size_t count, const char *name, const char *kind)
{
	for (size_t i = 0; i < count; i++)
		if (strcmp(rows[i].name, name) == 0 && strcmp(rows[i].kind, kind) == 0)
			return true;
	return false;
}

static bool in_code(const char *name, const char *kind)
{
	if (strcmp(kind, "task") == 0) {
		for (int type = 0; type < TASK_EVENT_TYPE_COUNT; type++)
			if (strcmp(task_event_type_name((enum task_event_type)type), name) == 0)
				return true;
		return false;
	}
	if (strcmp(kind, "corral") == 0) {
		for (int type = 0; type < CORRAL_EVENT_TYPE_COUNT; type++)
			if (strcmp(corral_event_type_name((enum corral_event_type)type), name) == 0)
				return true;
		return false;
	}
	for (int type = 0; type < GROUP_EVENT_TYPE_COUNT; type++)
		if (strcmp(group_event_type_name((enum group_event_type)type), name) == 0)
			return true;
	return false;
}

static void test_every_event_of_the_code_is_documented(void **state)
{
	(void)state;
	struct row rows[MAX_ROWS];
	size_t count = read_doc_rows(rows);
	for (int type = 0; type < TASK_EVENT_TYPE_COUNT; type++) {
		const char *name = task_event_type_name((enum task_event_type)type);
		if (!documented(rows, count, name, "task"))
			fail_msg("task event \"%s\" is not in docs/cli.md's event table", name);
	}
	for (int type = 0; type < GROUP_EVENT_TYPE_COUNT; type++) {
		const char *name = group_event_type_name((enum group_event_type)type);
		if (!documented(rows, count, name, "group"))
			fail_msg("group event \"%s\" is not in docs/cli.md's event table", name);
	}
	for (int type = 0; type < CORRAL_EVENT_TYPE_COUNT; type++) {
		const char *name = corral_event_type_name((enum corral_event_type)type);
		if (!documented(rows, count, name, "corral"))
			fail_msg("corral event \"%s\" is not in docs/cli.md's event table", name);
	}
}

static void test_every_documented_event_exists(void **state)
{
	(void)state;
	struct row rows[MAX_ROWS];
	size_t count = read_doc_rows(rows);
	assert_int_equal(count,
			 TASK_EVENT_TYPE_COUNT + GROUP_EVENT_TYPE_COUNT + CORRAL_EVENT_TYPE_COUNT);
	for (size_t i = 0; i < count; i++)
		if (!in_code(rows[i].name, rows[i].kind))
			fail_msg("docs/cli.md lists %s event \"%s\", which the code does not have",
				 rows[i].kind, rows[i].name);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_event_of_the_code_is_documented),
	    cmocka_unit_test(test_every_documented_event_exists),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
