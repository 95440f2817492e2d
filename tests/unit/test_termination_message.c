/* corral's termination message, composed from the facts of its exit. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/json_text.h"
#include "supervisor/pid1/termination_message.h"

static char message[TERMINATION_MESSAGE_MAX + 1];

static const char *compose(const struct termination_facts *facts)
{
	size_t length = termination_message_compose(facts, message);
	assert_true(length <= TERMINATION_MESSAGE_MAX);
	assert_true(utf8_is_valid(message, length));
	message[length] = '\0';
	return message;
}

/* The task failed for good after its restarts, in a group that stops. */
static struct termination_facts failed_task(void)
{
	return (struct termination_facts){
	    .cause = TERMINATION_TASK_FAILED,
	    .exit_code = 3,
	    .task = "web/app",
	    .has_exit = true,
	    .exit = {.kind = TASK_EXIT_CODE, .code = 3},
	    .failure = "exited with code 3, 3 restarts within 1m spent",
	    .rule = "restart.attempts",
	    .decision = "not restarting: attempts spent (3 restarts allowed within 1m); failed for "
			"good",
	    .group = "web",
	    .on_failure = "stop",
	};
}

static void test_a_task_that_failed_for_good_names_its_exit_rule_and_group(void **state)
{
	struct termination_facts facts = failed_task();
	facts.lines = "connecting to db:5432\nfatal: connection refused\n";
	facts.lines_length = strlen(facts.lines);
	assert_string_equal(
	    compose(&facts),
	    "web/app failed for good: exited with code 3, 3 restarts within 1m spent; corral "
	    "exited with code 3\n"
	    "last exit: exited with code 3\n"
	    "rule: restart.attempts: not restarting: attempts spent (3 restarts allowed within "
	    "1m); failed for good\n"
	    "group web: on_failure stop: the group stopped\n"
	    "last 2 lines of web/app:\n"
	    "connecting to db:5432\n"
	    "fatal: connection refused\n");
}

static void test_oom_kill_signal_and_failed_start_are_told(void **state)
{
	struct termination_facts facts = failed_task();
	facts.exit =
	    (struct task_exit){.kind = TASK_EXIT_SIGNAL, .signal = SIGKILL, .oom_kills = 1};
	facts.failure = "OOM killed";
	facts.exit_code = 137;
	assert_non_null(strstr(compose(&facts), "last exit: OOM killed (SIGKILL from the kernel's "
						"OOM killer)\n"));

	facts.exit = (struct task_exit){.kind = TASK_EXIT_SIGNAL, .signal = SIGSEGV};
	facts.failure = "killed by SIGSEGV";
	assert_non_null(strstr(compose(&facts), "last exit: killed by SIGSEGV\n"));

	facts.exit = (struct task_exit){.kind = TASK_EXIT_START_FAILED, .code = 127};
	facts.failure = "exec /nope: No such file or directory";
	compose(&facts);
	assert_non_null(strstr(message, "failed for good: exec /nope: No such file or directory;"));
	assert_non_null(strstr(message, "last exit: failed to start (code 127)\n"));
}

static void test_a_group_decision_replaces_the_plain_stop(void **state)
{
	struct termination_facts facts = failed_task();
	facts.on_failure = "restart";
	facts.group_decision = "web/app failed for good (exited with code 3); on_failure: restart: "
			       "3 restarts within 10m spent";
	compose(&facts);
	assert_non_null(strstr(message,
			       "\ngroup web: web/app failed for good (exited with code 3); "
			       "on_failure: restart: 3 restarts within 10m spent\n"));
	assert_null(strstr(message, "the group stopped"));
}

static void test_a_task_that_never_started_names_what_it_waited_for(void **state)
{
	struct termination_facts facts = {
	    .cause = TERMINATION_TASK_FAILED,
	    .exit_code = 1,
	    .task = "web/api",
	    .failure = "web/db failed for good (exited with code 2)",
	    .rule = "after",
	    .decision = "it never started: web/db failed for good (exited with code 2)",
	    .group = "web",
	    .on_failure = "stop",
	};
	compose(&facts);
	assert_null(strstr(message, "last exit"));
	assert_non_null(strstr(message, "\nrule: after: it never started: web/db failed"));
}

static void test_clean_exits_say_why_in_one_line(void **state)
{
	struct termination_facts facts = {.cause = TERMINATION_COMPLETED};
	assert_string_equal(compose(&facts), "all tasks completed; corral exited with code 0\n");

	facts = (struct termination_facts){.cause = TERMINATION_SHUTDOWN, .shutdown = "SIGTERM"};
	assert_string_equal(compose(&facts),
			    "stopped by SIGTERM: every task stopped; corral exited with code 0\n");

	facts.killed = "shutdown_timeout (1s) passed";
	facts.killed_tasks = "g/stubborn";
	assert_string_equal(compose(&facts),
			    "stopped by SIGTERM: what was left was killed; corral exited with code "
			    "0\n"
			    "shutdown_timeout (1s) passed: killed (SIGKILL): g/stubborn\n");

	facts = (struct termination_facts){.cause = TERMINATION_COMPLETED, .ignored = "g/flaky"};
	assert_string_equal(compose(&facts),
			    "all tasks completed; corral exited with code 0\n"
			    "failed, and left dead by on_failure ignore: g/flaky\n");
}

static void test_one_command_mode_tells_the_commands_end(void **state)
{
	struct termination_facts facts = {
	    .cause = TERMINATION_TASK_FAILED,
	    .one_command = true,
	    .exit_code = 143,
	    .task = "sleep",
	    .has_exit = true,
	    .exit = {.kind = TASK_EXIT_SIGNAL, .signal = SIGTERM},
	    .rule = "restart.policy",
	    .group = "main",
	};
	assert_string_equal(compose(&facts),
			    "command sleep killed by SIGTERM; corral exited with code 143\n");
	facts.cause = TERMINATION_COMPLETED;
	facts.exit = (struct task_exit){.kind = TASK_EXIT_CODE, .code = 0};
	facts.exit_code = 0;
	assert_string_equal(compose(&facts),
			    "command sleep exited with code 0; corral exited with code 0\n");
}

static void test_a_shutdown_after_the_failure_is_added(void **state)
{
	struct termination_facts facts = failed_task();
	facts.shutdown = "SIGTERM";
	compose(&facts);
	assert_non_null(strstr(message, "\nthen stopped by SIGTERM\n"));
}

/* Long lines: the head stays whole, the newest lines that fit are kept,
 * the oldest go. */
static void test_long_output_keeps_the_head_and_the_newest_lines(void **state)
{
	char *lines = malloc(50 * 1001 + 1);
	size_t length = 0;
	for (int i = 0; i < 50; i++) {
		length += (size_t)sprintf(lines + length, "%02d", i);
		memset(lines + length, 'x', 997);
		length += 997;
		lines[length++] = '\n';
	}
	struct termination_facts facts = failed_task();
	facts.lines = lines;
	facts.lines_length = length;
	size_t size = termination_message_compose(&facts, message);
	message[size] = '\0';
	assert_true(size <= TERMINATION_MESSAGE_MAX);
	assert_true(size > TERMINATION_MESSAGE_MAX - 1001);
	assert_true(strncmp(message, "web/app failed for good:", 24) == 0);
	assert_non_null(strstr(message, "\nlast 3 lines of web/app:\n47x"));
	assert_null(strstr(message, "\n46x"));
	assert_true(message[size - 1] == '\n' && message[size - 1001] == '\n');
	assert_true(strncmp(message + size - 1000, "49x", 3) == 0);

	/* One line longer than the room left: the newest, cut at its end. */
	memset(lines, 'y', 9000);
	lines[9000] = '\n';
	facts.lines_length = 9001;
	size = termination_message_compose(&facts, message);
	message[size] = '\0';
	assert_true(size <= TERMINATION_MESSAGE_MAX && size > TERMINATION_MESSAGE_MAX - 8);
	assert_non_null(strstr(message, "\nlast 1 line of web/app:\nyyy"));
	assert_true(strcmp(message + size - 5, "y...\n") == 0);
	free(lines);
}

/* A cut never splits a character; bytes that are not UTF-8, and control
 * characters (a colour escape), become U+FFFD. */
static void test_text_stays_valid_utf8(void **state)
{
	char *lines = malloc(6000);
	memset(lines, 0, 6000);
	for (size_t i = 0; i + 2 < 5998; i += 2)
		memcpy(lines + i, "\xC3\xA9", 2); /* é */
	lines[5998] = '\n';
	struct termination_facts facts = failed_task();
	facts.lines = lines;
	facts.lines_length = 5999;
	compose(&facts); /* asserts the UTF-8 */
	assert_non_null(strstr(message, "\xC3\xA9\xC3\xA9..."));

	facts.lines = "bad \xFF byte, \x1b[31mred\x1b[0m\r\n";
	facts.lines_length = strlen(facts.lines);
	facts.task = "web/\xC3";
	compose(&facts);
	assert_non_null(strstr(message, "bad \xEF\xBF\xBD byte, \xEF\xBF\xBD[31mred"
					"\xEF\xBF\xBD[0m\xEF\xBF\xBD\n"));
	assert_non_null(strstr(message, "web/\xEF\xBF\xBD failed for good"));
	free(lines);
}

static void test_what_a_task_wrote_itself_is_kept_after_the_head(void **state)
{
	struct termination_facts facts = failed_task();
	facts.task_message = "panic: out of cheese\nat main.go:12\n";
	facts.task_message_length = strlen(facts.task_message);
	facts.lines = "last words\n";
	facts.lines_length = strlen(facts.lines);
	compose(&facts);
	assert_non_null(strstr(message, "the group stopped\na task wrote:\npanic: out of cheese\n"
					"at main.go:12\nlast 1 line of web/app:\nlast words\n"));

	/* At most 2048 bytes of it: the lines keep room. */
	char *long_message = malloc(5000);
	memset(long_message, 'm', 5000);
	facts.task_message = long_message;
	facts.task_message_length = 5000;
	size_t size = termination_message_compose(&facts, message);
	message[size] = '\0';
	assert_non_null(strstr(message, "m...\nlast 1 line of web/app:\nlast words\n"));
	free(long_message);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_a_task_that_failed_for_good_names_its_exit_rule_and_group),
	    cmocka_unit_test(test_oom_kill_signal_and_failed_start_are_told),
	    cmocka_unit_test(test_a_group_decision_replaces_the_plain_stop),
	    cmocka_unit_test(test_a_task_that_never_started_names_what_it_waited_for),
	    cmocka_unit_test(test_clean_exits_say_why_in_one_line),
	    cmocka_unit_test(test_one_command_mode_tells_the_commands_end),
	    cmocka_unit_test(test_a_shutdown_after_the_failure_is_added),
	    cmocka_unit_test(test_long_output_keeps_the_head_and_the_newest_lines),
	    cmocka_unit_test(test_text_stays_valid_utf8),
	    cmocka_unit_test(test_what_a_task_wrote_itself_is_kept_after_the_head),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
