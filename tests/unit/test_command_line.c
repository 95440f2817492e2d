/* Where the command is on corral's command line (cli/command_line.h):
 * options before it are its own; `--`, or a first word that names no
 * command, is one-command mode. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "cli/command_line.h"

static const char *const names[] = {"run", "status", "start", "exec", "logs"};

static int find(char **argv)
{
	int argc = 0;
	while (argv[argc])
		argc++;
	return command_line_find_command(argc, argv, names, sizeof(names) / sizeof(names[0]));
}

#define ARGV(...) ((char *[]){"corral", __VA_ARGS__, NULL})

static void test_options_with_arguments_are_skipped(void **state)
{
	(void)state;
	assert_int_equal(find(ARGV("-c", "corral.yaml", "status")), 3);
	assert_int_equal(find(ARGV("--config", "corral.yaml", "status")), 3);
	assert_int_equal(find(ARGV("--config=corral.yaml", "status")), 2);
	assert_int_equal(find(ARGV("-ccorral.yaml", "status")), 2);
	assert_int_equal(find(ARGV("--socket", "/s", "--json", "status", "g")), 4);
	/* An abbreviation getopt_long takes. */
	assert_int_equal(find(ARGV("--sock", "/s", "status")), 3);
	/* exec's -i -t -u USER: the last letter of a cluster takes the word. */
	assert_int_equal(find(ARGV("-itu", "root", "exec", "g/t", "--", "id")), 3);
	assert_int_equal(find(ARGV("-n", "5", "logs", "g/t")), 3);
}

static void test_flags_before_a_command(void **state)
{
	(void)state;
	assert_int_equal(find(ARGV("-v", "status")), 2);
	assert_int_equal(find(ARGV("--bogus", "status")), 2);
	assert_int_equal(find(ARGV("--json", "status")), 2);
}

static void test_one_command_mode(void **state)
{
	(void)state;
	/* `--` first: whatever follows is the program. */
	assert_int_equal(find(ARGV("--", "status")), 0);
	assert_int_equal(find(ARGV("-g", "--", "status")), 0);
	assert_int_equal(find(ARGV("-c", "--", "status")), 0);
	/* The first word names no command: one-command mode's program. */
	assert_int_equal(find(ARGV("-c", "sleep", "1")), 0);
	assert_int_equal(find(ARGV("-g", "sleep", "1")), 0);
	assert_int_equal(find(ARGV("-r", "TERM:INT", "/app", "run")), 0);
	/* Nothing after the options. */
	assert_int_equal(find(ARGV("-v")), 0);
	assert_int_equal(find(ARGV("-c")), 0);
}

static void test_moved_options_come_after_the_name(void **state)
{
	(void)state;
	char **argv = ARGV("-c", "f.yaml", "status", "--json", "g");
	int argc;
	char **moved = command_line_options_after(5 + 1, argv, 3, &argc);
	assert_int_equal(argc, 5);
	const char *expected[] = {"status", "-c", "f.yaml", "--json", "g"};
	for (int i = 0; i < argc; i++)
		assert_string_equal(moved[i], expected[i]);
	assert_null(moved[argc]);
	free(moved);
}

static void test_the_program_one_command_mode_would_run(void **state)
{
	(void)state;
	/* -c and -g take no argument there: npm is the program. */
	assert_int_equal(command_line_one_command_program(4, ARGV("-c", "npm", "start"), 3), 2);
	assert_int_equal(command_line_one_command_program(5, ARGV("-e", "3", "app", "run"), 4), 3);
	assert_int_equal(command_line_one_command_program(3, ARGV("-v", "status"), 2), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_options_with_arguments_are_skipped),
	    cmocka_unit_test(test_flags_before_a_command),
	    cmocka_unit_test(test_one_command_mode),
	    cmocka_unit_test(test_moved_options_come_after_the_name),
	    cmocka_unit_test(test_the_program_one_command_mode_would_run),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
