/* The loader on a task's user namespace (`isolation.user`, `user` in
 * namespaces) and supplementary groups (`groups`): the forms the maps take,
 * the group -> task merge, and every mistake, each reported once at its
 * place with its message. */
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

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define TASK(flow) "groups:\n  web:\n    tasks:\n      app: " flow "\n"
#define USER_NS    "namespaces: [pid, user]"
#define MAPS       "user: {uid_map: \"0 100000 65536\", gid_map: \"0 100000 65536\"}"

static void assert_range(const struct id_map_range *range, uint32_t inside, uint32_t outside,
			 uint32_t count)
{
	assert_int_equal(range->inside, inside);
	assert_int_equal(range->outside, outside);
	assert_int_equal(range->count, count);
}

static void test_one_line_maps(void **state)
{
	struct config *config = parse_ok(TASK("{command: a, isolation: {" USER_NS ", " MAPS "}}"));
	const struct isolation_config *isolation = &config->groups[0].tasks[0].isolation;

	assert_true(isolation->namespaces & ISOLATION_NS_USER);
	assert_true(isolation->namespaces & ISOLATION_NS_PID);
	assert_int_equal(isolation->uid_map_count, 1);
	assert_range(&isolation->uid_map[0], 0, 100000, 65536);
	assert_int_equal(isolation->gid_map_count, 1);
	assert_range(&isolation->gid_map[0], 0, 100000, 65536);
	config_free(config);
}

/* A block string with its trailing newline and a blank line, and a list
 * whose items may hold several lines too. */
static void test_several_lines(void **state)
{
	struct config *config =
	    parse_ok("groups:\n"
		     "  web:\n"
		     "    tasks:\n"
		     "      app:\n"
		     "        command: a\n"
		     "        isolation:\n"
		     "          namespaces: [user]\n"
		     "          user:\n"
		     "            uid_map: |\n"
		     "              0 100000 1000\n"
		     "\n"
		     "              1000\t200000   1\n"
		     "            gid_map: [\"0 100000 1000\", \"1000 200000 1\\n5000 300000 "
		     "10\"]\n");
	const struct isolation_config *isolation = &config->groups[0].tasks[0].isolation;

	assert_int_equal(isolation->uid_map_count, 2);
	assert_range(&isolation->uid_map[0], 0, 100000, 1000);
	assert_range(&isolation->uid_map[1], 1000, 200000, 1);
	assert_int_equal(isolation->gid_map_count, 3);
	assert_range(&isolation->gid_map[2], 5000, 300000, 10);
	config_free(config);
}

/* The largest ranges the kernel takes, and 340 lines. */
static void test_limits(void **state)
{
	char *yaml = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&yaml, &size);

	fputs("groups: {web: {tasks: {app: {command: a, isolation: {namespaces: [user], user: "
	      "{gid_map: \"0 0 4294967295\", uid_map: [",
	      out);
	for (unsigned i = 0; i < 340; i++)
		fprintf(out, "%s\"%u %u 1\"", i ? ", " : "", i, 4294967294u - i);
	fputs("]}}}}}}\n", out);
	fclose(out);
	struct config *config = parse_ok(yaml);
	const struct isolation_config *isolation = &config->groups[0].tasks[0].isolation;

	assert_int_equal(isolation->uid_map_count, 340);
	assert_range(&isolation->uid_map[339], 339, 4294967294u - 339, 1);
	assert_range(&isolation->gid_map[0], 0, 0, 4294967295u);
	config_free(config);
	free(yaml);
}

/* The group gives the namespace, each task its own maps; or the group
 * gives both and a task replaces the maps as a whole. */
static void test_group_merge(void **state)
{
	struct config *config = parse_ok(
	    "groups:\n"
	    "  web:\n"
	    "    isolation: {namespaces: [user], user: {uid_map: \"0 100000 10\", gid_map: "
	    "\"0 100000 10\"}}\n"
	    "    tasks:\n"
	    "      a: {command: a}\n"
	    "      b: {command: b, isolation: {user: {uid_map: \"0 200000 5\", gid_map: "
	    "\"0 300000 5\"}}}\n"
	    "  db:\n"
	    "    isolation: {namespaces: [user]}\n"
	    "    tasks:\n"
	    "      c: {command: c, isolation: {user: {uid_map: \"0 400000 1\", gid_map: "
	    "\"0 400000 1\"}}}\n");
	const struct task_config *tasks = config->groups[0].tasks;

	assert_range(&tasks[0].isolation.uid_map[0], 0, 100000, 10);
	assert_range(&tasks[1].isolation.uid_map[0], 0, 200000, 5);
	assert_range(&tasks[1].isolation.gid_map[0], 0, 300000, 5);
	assert_true(config->groups[1].tasks[0].isolation.namespaces & ISOLATION_NS_USER);
	assert_range(&config->groups[1].tasks[0].isolation.uid_map[0], 0, 400000, 1);
	config_free(config);
}

static void test_groups_field(void **state)
{
	struct config *config =
	    parse_ok(TASK("{command: a, user: \"1000:1000\", groups: [video, 44, \"0\"]}"));
	const struct task_config *task = &config->groups[0].tasks[0];

	assert_int_equal(task->group_count, 3);
	assert_string_equal(task->groups[0], "video");
	assert_string_equal(task->groups[1], "44");
	assert_string_equal(task->groups[2], "0");
	assert_null(task->groups[3]);
	config_free(config);

	config = parse_ok(TASK("{command: a}"));
	assert_null(config->groups[0].tasks[0].groups);
	config_free(config);
}

struct error_at_case {
	const char *what;
	const char *yaml;
	unsigned line;
	const char *at; /* the text the error points at, found on `line` */
	const char *message;
};

static const struct error_at_case cases[] = {
    {"user namespace without maps", TASK("{command: a, isolation: {" USER_NS "}}"), 4, "user]",
     "web/app: isolation.namespaces: \"user\" needs isolation.user, the uid and gid maps, "
     "such as user: {uid_map: \"0 100000 65536\", gid_map: \"0 100000 65536\"}"},
    {"maps without the user namespace",
     TASK("{command: a, isolation: {namespaces: [pid], " MAPS "}}"), 4, "{uid_map",
     "web/app: isolation.user: the maps need the user namespace; add user to "
     "isolation.namespaces"},
    {"maps without any namespaces", TASK("{command: a, isolation: {" MAPS "}}"), 4, "{uid_map",
     "web/app: isolation.user: the maps need the user namespace; add user to "
     "isolation.namespaces"},
    {"group maps for a task without the namespace",
     "groups:\n  web:\n    isolation: {" MAPS "}\n"
     "    tasks: {a: {command: a, isolation: {namespaces: [pid]}}}\n",
     3, "{uid_map",
     "web/a: isolation.user: the maps (set in group web) need the user namespace; add user to "
     "isolation.namespaces"},
    {"group namespace, a task without maps",
     "groups:\n  web:\n    isolation: {namespaces: [user]}\n"
     "    tasks: {a: {command: a, isolation: {" MAPS "}}, b: {command: b}}\n",
     3, "user]",
     "web/b: isolation.namespaces: \"user\" (set in group web) needs isolation.user, the uid "
     "and gid maps, such as user: {uid_map: \"0 100000 65536\", gid_map: \"0 100000 65536\"}"},
    {"gid_map missing", TASK("{command: a, isolation: {" USER_NS ", user: {uid_map: \"0 1 1\"}}}"),
     4, "{uid_map",
     "web/app: isolation.user: missing \"gid_map\" (a user namespace needs both maps; write "
     "the ranges of uid_map again when groups map like users)"},
    {"misspelt map key",
     TASK("{command: a, isolation: {" USER_NS ", user: {uid_map: \"0 1 1\", gidmap: \"0 1 "
	  "1\"}}}"),
     4, "gidmap", "web/app: isolation.user: unknown key \"gidmap\"; did you mean \"gid_map\"?"},
    {"user as a string", TASK("{command: a, isolation: {" USER_NS ", user: root}}"), 4, "root",
     "web/app: isolation.user: must be a map of uid_map and gid_map such as {uid_map: \"0 "
     "100000 65536\", gid_map: \"0 100000 65536\"}, not a string"},
    {"two numbers",
     TASK("{command: a, isolation: {" USER_NS ", user: {uid_map: \"0 100000\", "
	  "gid_map: \"0 1 1\"}}}"),
     4, "\"0 100000\"",
     "web/app: isolation.user.uid_map: \"0 100000\" must be INSIDE OUTSIDE COUNT, three whole "
     "numbers such as \"0 100000 65536\""},
    {"a word",
     TASK("{command: a, isolation: {" USER_NS ", user: {uid_map: \"0 1 1\", "
	  "gid_map: \"root 0 1\"}}}"),
     4, "\"root",
     "web/app: isolation.user.gid_map: \"root 0 1\" must be INSIDE OUTSIDE COUNT, three "
     "whole numbers such as \"0 100000 65536\""},
    {"a fourth field",
     TASK("{command: a, isolation: {" USER_NS ", user: {uid_map: \"0 1 1 1\", "
	  "gid_map: \"0 1 1\"}}}"),
     4, "\"0 1 1 1",
     "web/app: isolation.user.uid_map: \"0 1 1 1\" must be INSIDE OUTSIDE COUNT, three whole "
     "numbers such as \"0 100000 65536\""},
    {"negative",
     TASK("{command: a, isolation: {" USER_NS ", user: {uid_map: \"0 -1 1\", "
	  "gid_map: \"0 1 1\"}}}"),
     4, "\"0 -1",
     "web/app: isolation.user.uid_map: \"0 -1 1\" must be INSIDE OUTSIDE COUNT, three whole "
     "numbers such as \"0 100000 65536\""},
    {"the second line of a block is wrong",
     "groups:\n  web:\n    tasks:\n      app:\n        command: a\n"
     "        isolation:\n          namespaces: [user]\n          user:\n"
     "            gid_map: \"0 1 1\"\n            uid_map: |\n              0 100000 10\n"
     "              10 x 1\n",
     10, "|",
     "web/app: isolation.user.uid_map: line 2: \"10 x 1\" must be INSIDE OUTSIDE COUNT, three "
     "whole numbers such as \"0 100000 65536\""},
    {"a list item is wrong",
     TASK("{command: a, isolation: {" USER_NS ", user: {uid_map: [\"0 1 1\", \"1 2\"], "
	  "gid_map: \"0 1 1\"}}}"),
     4, "\"1 2\"",
     "web/app: isolation.user.uid_map[1]: \"1 2\" must be INSIDE OUTSIDE COUNT, three whole "
     "numbers such as \"0 100000 65536\""},
    {"count 0",
     TASK("{command: a, isolation: {" USER_NS ", user: {uid_map: \"0 100000 0\", "
	  "gid_map: \"0 1 1\"}}}"),
     4, "\"0 100000 0",
     "web/app: isolation.user.uid_map: \"0 100000 0\": the count must be at least 1"},
    {"a number past 32 bits",
     TASK("{command: a, isolation: {" USER_NS ", user: {uid_map: \"0 4294967296 1\", gid_map: "
	  "\"0 1 1\"}}}"),
     4, "\"0 4294967296",
     "web/app: isolation.user.uid_map: \"0 4294967296 1\": ids outside 4294967296 to "
     "4294967296 go past 4294967294, the largest id"},
    {"a number past 64 bits",
     TASK("{command: a, isolation: {" USER_NS ", user: {uid_map: \"0 1 99999999999999999999\", "
	  "gid_map: \"0 1 1\"}}}"),
     4, "\"0 1 9",
     "web/app: isolation.user.uid_map: \"0 1 99999999999999999999\" must be INSIDE OUTSIDE "
     "COUNT, three whole numbers such as \"0 100000 65536\""},
    {"a range past the largest id",
     TASK("{command: a, isolation: {" USER_NS ", user: {uid_map: \"0 1 1\", gid_map: "
	  "\"4294967000 0 1000\"}}}"),
     4, "\"4294967000",
     "web/app: isolation.user.gid_map: \"4294967000 0 1000\": ids inside 4294967000 to "
     "4294967999 go past 4294967294, the largest id"},
    {"overlapping inside",
     TASK("{command: a, isolation: {" USER_NS ", user: {uid_map: \"0 100000 10\\n5 200000 "
	  "10\", gid_map: \"0 1 1\"}}}"),
     4, "\"0 100000 10\\n",
     "web/app: isolation.user.uid_map: line 2: \"5 200000 10\" overlaps \"0 100000 10\" "
     "inside"},
    {"overlapping outside",
     TASK("{command: a, isolation: {" USER_NS ", user: {uid_map: \"0 1 1\", gid_map: [\"0 "
	  "100000 10\", \"10 100009 1\"]}}}"),
     4, "\"10 100009",
     "web/app: isolation.user.gid_map[1]: \"10 100009 1\" overlaps \"0 100000 10\" outside"},
    {"empty map",
     TASK("{command: a, isolation: {" USER_NS ", user: {uid_map: \"\", gid_map: "
	  "\"0 1 1\"}}}"),
     4, "\"\"", "web/app: isolation.user.uid_map: must not be empty"},
    {"empty list",
     TASK("{command: a, isolation: {" USER_NS ", user: {uid_map: [], gid_map: "
	  "\"0 1 1\"}}}"),
     4, "[]", "web/app: isolation.user.uid_map: must not be empty"},
    {"map as a map",
     TASK("{command: a, isolation: {" USER_NS ", user: {uid_map: {a: 1}, "
	  "gid_map: \"0 1 1\"}}}"),
     4, "{a: 1}",
     "web/app: isolation.user.uid_map: must be lines of INSIDE OUTSIDE COUNT, three whole "
     "numbers such as \"0 100000 65536\", as one string or a list, not a map"},

    /* groups */
    {"groups as a string", TASK("{command: a, groups: video}"), 4, "video",
     "web/app: groups: must be a list of group names or gids such as [video, 44], not a "
     "string"},
    {"empty group", TASK("{command: a, groups: [video, \"\"]}"), 4, "\"\"",
     "web/app: groups[1]: must not be empty (write a name or a gid)"},
    {"gid too large", TASK("{command: a, groups: [4294967295]}"), 4, "4294967295",
     "web/app: groups[0]: \"4294967295\" is not a gid (a whole number below 4294967295) nor a "
     "group name"},
    {"duplicate group", TASK("{command: a, groups: [44, video, 44]}"), 4, "44]",
     "web/app: groups[2]: duplicate group \"44\""},
    {"group as a list", TASK("{command: a, groups: [[44]]}"), 4, "[44]]",
     "web/app: groups[0]: must be a string, not a list"},
};

/* 1-based column of `at` on line `line` of `yaml`. */
static unsigned column_of(const char *yaml, unsigned line, const char *at)
{
	const char *start = yaml;
	for (unsigned i = 1; i < line; i++)
		start = strchr(start, '\n') + 1;
	const char *end = strchrnul(start, '\n');
	const char *found = strstr(start, at);
	if (!found || found >= end)
		fail_msg("\"%s\" is not on line %u", at, line);
	return (unsigned)(found - start) + 1;
}

static void test_one_error_each(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct error_at_case *c = &cases[i];

		assert_one_error(c->what, c->yaml, c->line, column_of(c->yaml, c->line, c->at),
				 c->message);
	}
}

/* 341 lines: one message, at the map. */
static void test_too_many_lines(void **state)
{
	char *yaml = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&yaml, &size);
	struct config_diagnostics diagnostics;

	fputs("groups: {web: {tasks: {app: {command: a, isolation: {namespaces: [user], user: "
	      "{gid_map: \"0 0 1\", uid_map: \"",
	      out);
	for (unsigned i = 0; i < 341; i++)
		fprintf(out, "%u %u 1\\n", i, 100000 + i);
	fputs("\"}}}}}}\n", out);
	fclose(out);
	assert_null(config_parse_buffer("test.yaml", yaml, strlen(yaml), &diagnostics));
	assert_int_equal(diagnostics.count, 1);
	assert_string_equal(diagnostics.items[0].message,
			    "web/app: isolation.user.uid_map: has 341 lines; the kernel takes at "
			    "most 340");
	assert_int_equal(diagnostics.items[0].location.column, column_of(yaml, 1, "\"0 100000"));
	config_diagnostics_free(&diagnostics);
	free(yaml);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_one_line_maps),  cmocka_unit_test(test_several_lines),
	    cmocka_unit_test(test_limits),         cmocka_unit_test(test_group_merge),
	    cmocka_unit_test(test_groups_field),   cmocka_unit_test(test_one_error_each),
	    cmocka_unit_test(test_too_many_lines),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
