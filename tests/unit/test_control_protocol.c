/* The control protocol's requests: every command's good requests, parsed
 * from JSON and round-tripped through encode -> parse, and every class of
 * bad request with the message it gets. */
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "supervisor/control/control_protocol.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct good_request {
	const char *line;
	struct control_request expected;
};

static const struct good_request good_requests[] = {
    {"{\"version\":1,\"command\":\"status\"}", {.command = CONTROL_STATUS}},
    {"{\"version\":1,\"command\":\"status\",\"target\":\"web\"}",
     {.command = CONTROL_STATUS, .target = "web"}},
    {"{\"version\":1,\"command\":\"status\",\"target\":\"web/app\"}",
     {.command = CONTROL_STATUS, .target = "web/app"}},
    /* Whitespace and field order are free. */
    {"  { \"command\" : \"status\" , \"version\" : 1 }  ", {.command = CONTROL_STATUS}},
    {"{\"version\":1,\"command\":\"restart\",\"target\":\"web/app\"}",
     {.command = CONTROL_RESTART, .target = "web/app", .restart_mode = CONTROL_RESTART_TASK}},
    {"{\"version\":1,\"command\":\"restart\",\"target\":\"web/app\",\"mode\":\"task\"}",
     {.command = CONTROL_RESTART, .target = "web/app", .restart_mode = CONTROL_RESTART_TASK}},
    {"{\"version\": 1, \"command\": \"restart\", \"target\": \"web/app\", \"mode\": \"force\"}",
     {.command = CONTROL_RESTART, .target = "web/app", .restart_mode = CONTROL_RESTART_FORCE}},
    {"{\"version\":1,\"command\":\"restart\",\"target\":\"web\",\"mode\":\"all\"}",
     {.command = CONTROL_RESTART, .target = "web", .restart_mode = CONTROL_RESTART_ALL}},
    {"{\"version\":1,\"command\":\"restart\",\"target\":\"web\",\"mode\":\"running\"}",
     {.command = CONTROL_RESTART, .target = "web", .restart_mode = CONTROL_RESTART_RUNNING}},
    {"{\"version\":1,\"command\":\"restart\",\"target\":\"web/app\",\"mode\":\"rolling\"}",
     {.command = CONTROL_RESTART, .target = "web/app", .restart_mode = CONTROL_RESTART_ROLLING}},
    {"{\"version\":1,\"command\":\"restart\",\"target\":\"web/app\",\"mode\":\"rolling\","
     "\"max_unavailable\":2}",
     {.command = CONTROL_RESTART,
      .target = "web/app",
      .restart_mode = CONTROL_RESTART_ROLLING,
      .max_unavailable = 2}},
    {"{\"version\":1,\"command\":\"scale\",\"counts\":{\"web/app\":3,\"web/worker\":1}}",
     {.command = CONTROL_SCALE,
      .counts = (struct control_scale_count[]){{"web/app", 3}, {"web/worker", 1}},
      .count_count = 2}},
    {"{\"version\":1,\"command\":\"stop\",\"target\":\"web/app\"}",
     {.command = CONTROL_STOP, .target = "web/app"}},
    {"{\"version\":1,\"command\":\"start\",\"target\":\"my-group_1.x/task-2\"}",
     {.command = CONTROL_START, .target = "my-group_1.x/task-2"}},
    {"{\"version\":1,\"command\":\"signal\",\"target\":\"web/app\",\"signal\":\"SIGHUP\"}",
     {.command = CONTROL_SIGNAL, .target = "web/app", .signal_number = SIGHUP}},
    {"{\"version\":1,\"command\":\"signal\",\"target\":\"web/app\",\"signal\":\"USR1\"}",
     {.command = CONTROL_SIGNAL, .target = "web/app", .signal_number = SIGUSR1}},
    {"{\"version\":1,\"command\":\"signal\",\"target\":\"web/app\",\"signal\":\"SIGKILL\"}",
     {.command = CONTROL_SIGNAL, .target = "web/app", .signal_number = SIGKILL}},
    {"{\"version\":1,\"command\":\"logs\",\"target\":\"web/app\"}",
     {.command = CONTROL_LOGS, .target = "web/app"}},
    /* A group's tasks, or every task. */
    {"{\"version\":1,\"command\":\"logs\",\"target\":\"web\"}",
     {.command = CONTROL_LOGS, .target = "web"}},
    {"{\"version\":1,\"command\":\"logs\",\"tail\":5}", {.command = CONTROL_LOGS, .tail = 5}},
    {"{\"version\":1,\"command\":\"logs\",\"target\":\"web/app\",\"follow\":true,\"tail\":10}",
     {.command = CONTROL_LOGS, .target = "web/app", .follow = true, .tail = 10}},
    {"{\"version\":1,\"command\":\"logs\",\"target\":\"web/app\",\"follow\":false,\"tail\":0}",
     {.command = CONTROL_LOGS, .target = "web/app"}},
    {"{\"version\":1,\"command\":\"events\"}", {.command = CONTROL_EVENTS}},
    {"{\"version\":1,\"command\":\"events\",\"follow\":true}",
     {.command = CONTROL_EVENTS, .follow = true}},
    {"{\"version\":1,\"command\":\"events\",\"tail\":4294967295}",
     {.command = CONTROL_EVENTS, .tail = UINT_MAX}},
    {"{\"version\":1,\"command\":\"shutdown\"}", {.command = CONTROL_SHUTDOWN}},
    /* Names: 64 characters each, the longest there can be. */
    {"{\"version\":1,\"command\":\"stop\",\"target\":"
     "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/"
     "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\"}",
     {.command = CONTROL_STOP,
      .target = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/"
		"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"}},
};

struct bad_request {
	const char *line;
	const char *message; /* a substring of the error */
};

static const struct bad_request bad_requests[] = {
    /* Not JSON, or not an object. */
    {"", "empty request: expected a JSON object"},
    {"   ", "empty request: expected a JSON object"},
    {"{\"version\":1,\"command\":\"status\"", "invalid JSON at column "},
    {"{\"version\":1,,}", "invalid JSON at column 14: string or '}' expected near ','"},
    {"{\"version\":1} x", "invalid JSON at column "},
    {"{\"version\":1,\"version\":1,\"command\":\"status\"}", "duplicate object key"},
    {"{\"version\":1,\"command\":\"st\\u0000atus\"}", "invalid JSON"},
    {"[1]", "request must be a JSON object, not an array"},
    {"\"status\"", "request must be a JSON object, not a string"},
    {"42", "request must be a JSON object, not a number"},
    {"null", "request must be a JSON object, not null"},
    /* Version. */
    {"{\"command\":\"status\"}", "missing \"version\""},
    {"{\"version\":\"1\",\"command\":\"status\"}", "\"version\" must be an integer"},
    {"{\"version\":1.0,\"command\":\"status\"}", "\"version\" must be an integer"},
    {"{\"version\":2,\"command\":\"status\"}",
     "unsupported protocol version 2 (this corral speaks 1)"},
    {"{\"version\":0,\"command\":\"status\"}", "unsupported protocol version 0"},
    /* A later version's unknown fields are not what it is told about. */
    {"{\"version\":2,\"command\":\"status\",\"colour\":true}", "unsupported protocol version 2"},
    /* Command. */
    {"{\"version\":1}", "missing \"command\""},
    {"{\"version\":1,\"command\":7}", "\"command\" must be a string, not a number"},
    {"{\"version\":1,\"command\":\"restat\"}",
     "unknown command \"restat\"; known: status, restart, stop, start, signal, logs, events, "
     "shutdown"},
    {"{\"version\":1,\"command\":\"STATUS\"}", "unknown command \"STATUS\""},
    {"{\"version\":1,\"command\":\"a\\\"b\\nc\"}", "unknown command \"a\\\"b\\nc\""},
    /* Fields. */
    {"{\"version\":1,\"command\":\"logs\",\"target\":\"web/app\",\"folow\":true}",
     "unknown field \"folow\"; did you mean \"follow\"?"},
    {"{\"version\":1,\"command\":\"status\",\"colour\":true}", "unknown field \"colour\""},
    {"{\"version\":1,\"command\":\"stop\",\"target\":\"web/app\",\"mode\":\"force\"}",
     "\"mode\" is only for restart"},
    {"{\"version\":1,\"command\":\"restart\",\"target\":\"web/app\",\"signal\":\"HUP\"}",
     "\"signal\" is only for signal"},
    {"{\"version\":1,\"command\":\"status\",\"follow\":true}",
     "\"follow\" is only for logs and events"},
    {"{\"version\":1,\"command\":\"stop\",\"target\":\"web/app\",\"tail\":3}",
     "\"tail\" is only for logs and events"},
    {"{\"version\":1,\"command\":\"shutdown\",\"target\":\"web\"}", "shutdown takes no target"},
    {"{\"version\":1,\"command\":\"events\",\"target\":\"web/app\"}", "events takes no target"},
    /* Types and values. */
    {"{\"version\":1,\"command\":\"logs\",\"target\":\"web/app\",\"follow\":1}",
     "\"follow\" must be a boolean"},
    {"{\"version\":1,\"command\":\"logs\",\"target\":\"web/app\",\"follow\":\"yes\"}",
     "\"follow\" must be a boolean"},
    {"{\"version\":1,\"command\":\"logs\",\"target\":\"web/app\",\"tail\":-1}",
     "\"tail\" must be an integer >= 0"},
    {"{\"version\":1,\"command\":\"logs\",\"target\":\"web/app\",\"tail\":1.5}",
     "\"tail\" must be an integer >= 0"},
    {"{\"version\":1,\"command\":\"logs\",\"target\":\"web/app\",\"tail\":\"10\"}",
     "\"tail\" must be an integer >= 0"},
    {"{\"version\":1,\"command\":\"events\",\"tail\":4294967296}",
     "\"tail\" must be an integer >= 0 and <= 4294967295"},
    {"{\"version\":1,\"command\":\"stop\",\"target\":7}", "\"target\" must be a string"},
    {"{\"version\":1,\"command\":\"stop\",\"target\":null}", "\"target\" must be a string"},
    {"{\"version\":1,\"command\":\"restart\",\"target\":\"web/app\",\"mode\":\"forse\"}",
     "unknown restart mode \"forse\"; known: task, force, all, running"},
    {"{\"version\":1,\"command\":\"restart\",\"target\":\"web/app\",\"mode\":true}",
     "\"mode\" must be a string"},
    {"{\"version\":1,\"command\":\"signal\",\"target\":\"web/app\",\"signal\":\"SIGFOO\"}",
     "unknown signal \"SIGFOO\""},
    {"{\"version\":1,\"command\":\"signal\",\"target\":\"web/app\",\"signal\":\"\"}",
     "unknown signal \"\""},
    {"{\"version\":1,\"command\":\"signal\",\"target\":\"web/app\",\"signal\":9}",
     "\"signal\" must be a string"},
    {"{\"version\":1,\"command\":\"signal\",\"target\":\"web/app\"}", "missing \"signal\""},
    /* Target shapes. */
    {"{\"version\":1,\"command\":\"restart\",\"target\":\"web/app\",\"mode\":\"all\"}",
     "restart --all needs a group, not a task: \"web/app\""},
    {"{\"version\":1,\"command\":\"restart\",\"target\":\"web/app\",\"mode\":\"running\"}",
     "restart --running needs a group, not a task: \"web/app\""},
    {"{\"version\":1,\"command\":\"restart\",\"mode\":\"all\"}", "restart --all needs a group"},
    {"{\"version\":1,\"command\":\"restart\",\"target\":\"web\"}",
     "restart needs a task (group/task), not \"web\""},
    {"{\"version\":1,\"command\":\"restart\",\"target\":\"web\",\"mode\":\"force\"}",
     "restart --force needs a task (group/task), not \"web\""},
    {"{\"version\":1,\"command\":\"stop\",\"target\":\"web\"}",
     "stop needs a task (group/task), not \"web\""},
    {"{\"version\":1,\"command\":\"stop\"}", "stop needs a task (group/task)"},
    {"{\"version\":1,\"command\":\"start\",\"target\":\"web\"}", "start needs a task"},
    {"{\"version\":1,\"command\":\"signal\",\"target\":\"web\",\"signal\":\"HUP\"}",
     "signal needs a task"},
    {"{\"version\":1,\"command\":\"status\",\"target\":\"\"}",
     "invalid target \"\": the name is empty"},
    {"{\"version\":1,\"command\":\"stop\",\"target\":\"web/\"}",
     "invalid target \"web/\": the task name is empty"},
    {"{\"version\":1,\"command\":\"stop\",\"target\":\"/app\"}",
     "invalid target \"/app\": the group name is empty"},
    {"{\"version\":1,\"command\":\"stop\",\"target\":\"a/b/c\"}",
     "invalid target \"a/b/c\": write \"group\" or \"group/task\", with one '/'"},
    {"{\"version\":1,\"command\":\"stop\",\"target\":\"Web/app\"}",
     "invalid target \"Web/app\": the group name may only use lowercase letters, digits, "
     "'-', '_' and '.', starting with a letter or digit"},
    {"{\"version\":1,\"command\":\"stop\",\"target\":\"web/a pp\"}",
     "invalid target \"web/a pp\": the task name may only use"},
    {"{\"version\":1,\"command\":\"stop\",\"target\":\"web/.app\"}",
     "invalid target \"web/.app\": the task name may only use"},
    {"{\"version\":1,\"command\":\"stop\",\"target\":\"web/../etc\"}",
     "invalid target \"web/../etc\": write \"group\" or \"group/task\""},
    {"{\"version\":1,\"command\":\"status\",\"target\":\"caf\\u00e9\"}",
     "invalid target \"caf\xc3\xa9\": the name may only use"},
    {"{\"version\":1,\"command\":\"stop\",\"target\":"
     "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/b\"}",
     "the group name is longer than 64 characters"},
    /* restart --rolling and scale. */
    {"{\"version\":1,\"command\":\"restart\",\"target\":\"web/app\",\"max_unavailable\":2}",
     "\"max_unavailable\" is only for restart --rolling"},
    {"{\"version\":1,\"command\":\"restart\",\"target\":\"web/app\",\"mode\":\"rolling\","
     "\"max_unavailable\":0}",
     "\"max_unavailable\" must be an integer from 1 to 1000"},
    {"{\"version\":1,\"command\":\"stop\",\"target\":\"web/app\",\"max_unavailable\":1}",
     "\"max_unavailable\" is only for restart"},
    {"{\"version\":1,\"command\":\"restart\",\"target\":\"web/app@1\",\"mode\":\"rolling\"}",
     "not one instance: \"web/app@1\""},
    {"{\"version\":1,\"command\":\"restart\",\"target\":\"web\",\"mode\":\"rolling\"}",
     "restart --rolling needs a task (group/task), not \"web\""},
    {"{\"version\":1,\"command\":\"scale\"}", "missing \"counts\""},
    {"{\"version\":1,\"command\":\"scale\",\"counts\":[1]}", "\"counts\" must be an object"},
    {"{\"version\":1,\"command\":\"scale\",\"counts\":{}}", "scale needs GROUP/TASK=N"},
    {"{\"version\":1,\"command\":\"scale\",\"counts\":{\"web/app\":1001}}",
     "web/app=1001: at most 1000 instances"},
    {"{\"version\":1,\"command\":\"scale\",\"counts\":{\"web/app\":-1}}",
     "\"counts\": \"web/app\" must be a whole number of instances"},
    {"{\"version\":1,\"command\":\"scale\",\"counts\":{\"web\":2}}",
     "scale needs a task written with instances: (group/task), not \"web\""},
    {"{\"version\":1,\"command\":\"scale\",\"target\":\"web/app\",\"counts\":{\"web/app\":2}}",
     "scale takes no target"},
};

static void assert_requests_equal(const struct control_request *actual,
				  const struct control_request *expected)
{
	assert_int_equal(actual->command, expected->command);
	assert_string_equal(actual->target, expected->target);
	if (expected->command == CONTROL_RESTART)
		assert_int_equal(actual->restart_mode, expected->restart_mode);
	assert_int_equal(actual->signal_number, expected->signal_number);
	assert_int_equal(actual->max_unavailable, expected->max_unavailable);
	assert_int_equal(actual->count_count, expected->count_count);
	for (size_t i = 0; i < expected->count_count; i++) {
		assert_string_equal(actual->counts[i].target, expected->counts[i].target);
		assert_int_equal(actual->counts[i].count, expected->counts[i].count);
	}
	assert_int_equal(actual->follow, expected->follow);
	assert_int_equal(actual->tail, expected->tail);
}

static void test_good_requests_parse(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(good_requests); i++) {
		const struct good_request *good = &good_requests[i];
		struct control_request request;
		char error[256] = "";

		if (control_request_parse(good->line, strlen(good->line), &request, error,
					  sizeof(error)) != 0)
			fail_msg("%s: refused: %s", good->line, error);
		assert_requests_equal(&request, &good->expected);
		control_request_free(&request);
	}
}

/* What the CLI sends, the server reads back as the same request. */
static void test_good_requests_round_trip(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(good_requests); i++) {
		const struct control_request *expected = &good_requests[i].expected;
		struct control_request request;
		char error[256] = "";
		char *line = control_request_encode(expected);
		size_t length;

		assert_non_null(line);
		length = strlen(line);
		assert_true(length > 0 && line[length - 1] == '\n');
		/* One line: no newline but the last. */
		assert_ptr_equal(strchr(line, '\n'), line + length - 1);
		if (control_request_parse(line, length - 1, &request, error, sizeof(error)) != 0)
			fail_msg("%s: refused: %s", line, error);
		assert_requests_equal(&request, expected);
		control_request_free(&request);
		free(line);
	}
}

static void test_bad_requests(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(bad_requests); i++) {
		const struct bad_request *bad = &bad_requests[i];
		struct control_request request;
		char error[256] = "";

		if (control_request_parse(bad->line, strlen(bad->line), &request, error,
					  sizeof(error)) == 0)
			fail_msg("%s: accepted", bad->line);
		if (!strstr(error, bad->message))
			fail_msg("%s:\n  said:     %s\n  expected: %s", bad->line, error,
				 bad->message);
	}
}

/* The length is what counts, not a NUL: the server passes a line out of
 * its buffer, followed by whatever came next. */
static void test_parse_uses_length(void **state)
{
	const char request_text[] = "{\"version\":1,\"command\":\"status\"}";
	const char buffer[] = "{\"version\":1,\"command\":\"status\"}{\"garbage\"";
	struct control_request request;
	char error[256];

	assert_int_equal(
	    control_request_parse(buffer, strlen(request_text), &request, error, sizeof(error)), 0);
	assert_int_equal(request.command, CONTROL_STATUS);
	assert_int_equal(control_request_parse(buffer, 0, &request, error, sizeof(error)), -1);
}

/* An error buffer too small, or none, cuts the message but breaks nothing. */
static void test_small_error_buffer(void **state)
{
	const char *line = "{\"version\":1,\"command\":\"restat\"}";
	struct control_request request;
	char error[8];

	assert_int_equal(control_request_parse(line, strlen(line), &request, error, sizeof(error)),
			 -1);
	assert_string_equal(error, "unknown");
	assert_int_equal(control_request_parse(line, strlen(line), &request, NULL, 0), -1);
}

static void test_encode_is_canonical(void **state)
{
	static const struct {
		struct control_request request;
		const char *line;
	} cases[] = {
	    {{.command = CONTROL_STATUS}, "{\"version\":1,\"command\":\"status\"}\n"},
	    {{.command = CONTROL_RESTART,
	      .target = "web/app",
	      .restart_mode = CONTROL_RESTART_FORCE},
	     "{\"version\":1,\"command\":\"restart\",\"target\":\"web/app\",\"mode\":\"force\"}\n"},
	    {{.command = CONTROL_SIGNAL, .target = "web/app", .signal_number = SIGHUP},
	     "{\"version\":1,\"command\":\"signal\",\"target\":\"web/"
	     "app\",\"signal\":\"SIGHUP\"}\n"},
	    {{.command = CONTROL_EVENTS, .follow = true, .tail = 5},
	     "{\"version\":1,\"command\":\"events\",\"follow\":true,\"tail\":5}\n"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *line = control_request_encode(&cases[i].request);

		assert_non_null(line);
		assert_string_equal(line, cases[i].line);
		free(line);
	}
}

/* The CLI checks before connecting, with the server's own rules. */
static void test_validate(void **state)
{
	static const struct {
		struct control_request request;
		const char *message; /* NULL: valid */
	} cases[] = {
	    {{.command = CONTROL_RESTART, .target = "web", .restart_mode = CONTROL_RESTART_ALL},
	     NULL},
	    {{.command = CONTROL_RESTART, .target = "web/app", .restart_mode = CONTROL_RESTART_ALL},
	     "restart --all needs a group, not a task: \"web/app\""},
	    {{.command = CONTROL_STOP, .target = "web"},
	     "stop needs a task (group/task), not \"web\""},
	    {{.command = CONTROL_SHUTDOWN, .target = "web"}, "shutdown takes no target"},
	    {{.command = CONTROL_EVENTS, .target = "web"}, "events takes no target"},
	    {{.command = CONTROL_SIGNAL, .target = "web/app"}, "signal needs a signal"},
	    {{.command = CONTROL_SIGNAL, .target = "web/app", .signal_number = 9999},
	     "signal needs a signal"},
	    {{.command = (enum control_command)42}, "unknown command number 42"},
	    {{.command = CONTROL_RESTART,
	      .target = "web/app",
	      .restart_mode = (enum control_restart_mode)9},
	     "unknown restart mode number 9"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char error[256] = "";
		int result = control_request_validate(&cases[i].request, error, sizeof(error));

		if (!cases[i].message) {
			assert_int_equal(result, 0);
			continue;
		}
		assert_int_equal(result, -1);
		if (!strstr(error, cases[i].message))
			fail_msg("case %zu said %s, expected %s", i, error, cases[i].message);
		/* What cannot be valid cannot be sent. */
		assert_null(control_request_encode(&cases[i].request));
	}
}

/* A target filling the whole array, without a NUL, is refused, not read
 * past. */
static void test_validate_unterminated_target(void **state)
{
	struct control_request request = {.command = CONTROL_STATUS};
	char error[256];

	memset(request.target, 'a', sizeof(request.target));
	assert_int_equal(control_request_validate(&request, error, sizeof(error)), -1);
	assert_non_null(strstr(error, "longer than 130 characters"));
}

static void test_reply_error(void **state)
{
	char *line = control_reply_error("web/app is dead: \"quoted\"\n");

	assert_string_equal(line,
			    "{\"ok\":false,\"error\":\"web/app is dead: \\\"quoted\\\"\\n\"}\n");
	free(line);
	/* Not UTF-8: still a JSON line. */
	line = control_reply_error("bad \xff byte");
	assert_string_equal(line, "{\"ok\":false,\"error\":\"bad ? byte\"}\n");
	free(line);
}

static void test_command_names(void **state)
{
	static const char *const names[] = {"status", "restart", "stop",   "start",
					    "signal", "logs",    "events", "shutdown"};

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		assert_string_equal(control_command_name((enum control_command)i), names[i]);
	assert_string_equal(control_command_name((enum control_command)99), "unknown");
	assert_string_equal(control_restart_mode_name(CONTROL_RESTART_RUNNING), "running");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_good_requests_parse),
	    cmocka_unit_test(test_good_requests_round_trip),
	    cmocka_unit_test(test_bad_requests),
	    cmocka_unit_test(test_parse_uses_length),
	    cmocka_unit_test(test_small_error_buffer),
	    cmocka_unit_test(test_encode_is_canonical),
	    cmocka_unit_test(test_validate),
	    cmocka_unit_test(test_validate_unterminated_target),
	    cmocka_unit_test(test_reply_error),
	    cmocka_unit_test(test_command_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
