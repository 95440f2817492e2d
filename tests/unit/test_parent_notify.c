/* What corral tells its own parent over sd_notify: the texts, the summary
 * line and when READY=1 may go, and how NOTIFY_SOCKET and WATCHDOG_* are
 * read. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "supervisor/parent/parent_messages.h"
#include "supervisor/parent/parent_summary.h"

/* ---- the datagrams ---- */

static void assert_message(const struct parent_message *message, const char *expected)
{
	char text[256];
	size_t length = parent_message_format(message, text, sizeof(text));
	assert_string_equal(text, expected);
	assert_int_equal(length, strlen(expected));
}

static void test_each_message_as_systemd_reads_it(void **state)
{
	(void)state;
	assert_message(&(struct parent_message){.ready = true, .status = "2 tasks: 2 ready"},
		       "READY=1\nSTATUS=2 tasks: 2 ready");
	assert_message(&(struct parent_message){.reloading_monotonic_usec = 123456789,
						.status = "reloading the config"},
		       "RELOADING=1\nMONOTONIC_USEC=123456789\nSTATUS=reloading the config");
	assert_message(&(struct parent_message){.stopping = true,
						.extend_timeout_usec = 40000000,
						.status = "shutting down"},
		       "STOPPING=1\nEXTEND_TIMEOUT_USEC=40000000\nSTATUS=shutting down");
	assert_message(&(struct parent_message){.watchdog = true}, "WATCHDOG=1");
	assert_message(&(struct parent_message){.status = "x"}, "STATUS=x");
}

/* A line break in a status would start an assignment of its own. */
static void test_a_status_stays_one_line(void **state)
{
	(void)state;
	assert_message(&(struct parent_message){.ready = true, .status = "a\nWATCHDOG=1\rb"},
		       "READY=1\nSTATUS=a WATCHDOG=1 b");
}

/* A long status is cut; the assignments before it are whole. */
static void test_a_long_status_is_cut_not_the_assignments(void **state)
{
	(void)state;
	char status[400], text[64];
	memset(status, 'x', sizeof(status) - 1);
	status[sizeof(status) - 1] = '\0';
	size_t length = parent_message_format(
	    &(struct parent_message){.ready = true, .status = status}, text, sizeof(text));
	assert_int_equal(length, sizeof(text) - 1);
	assert_int_equal(strlen(text), sizeof(text) - 1);
	assert_memory_equal(text, "READY=1\nSTATUS=xxx", 18);
}

/* ---- NOTIFY_SOCKET and WATCHDOG_* ---- */

static void test_a_path_and_an_abstract_socket(void **state)
{
	(void)state;
	struct sockaddr_un address;
	socklen_t length;
	char error[128];
	assert_int_equal(parent_notify_address_parse("/run/systemd/notify", &address, &length,
						     error, sizeof(error)),
			 0);
	assert_string_equal(address.sun_path, "/run/systemd/notify");
	assert_int_equal(length, offsetof(struct sockaddr_un, sun_path) + 20);

	assert_int_equal(
	    parent_notify_address_parse("@podman/x", &address, &length, error, sizeof(error)), 0);
	assert_int_equal(address.sun_path[0], '\0');
	assert_memory_equal(address.sun_path + 1, "podman/x", 8);
	/* No NUL after the name: it would be part of it. */
	assert_int_equal(length, offsetof(struct sockaddr_un, sun_path) + 9);
}

static void test_addresses_refused(void **state)
{
	(void)state;
	struct sockaddr_un address;
	socklen_t length;
	char error[128], long_path[200];
	assert_int_equal(
	    parent_notify_address_parse("run/notify", &address, &length, error, sizeof(error)), -1);
	assert_string_equal(error,
			    "\"run/notify\" is neither an absolute path nor an abstract socket "
			    "(@NAME)");
	assert_int_equal(parent_notify_address_parse("@", &address, &length, error, sizeof(error)),
			 -1);
	assert_string_equal(error, "\"@\" names no abstract socket");
	memset(long_path, 'a', sizeof(long_path) - 1);
	long_path[0] = '/';
	long_path[sizeof(long_path) - 1] = '\0';
	assert_int_equal(
	    parent_notify_address_parse(long_path, &address, &length, error, sizeof(error)), -1);
	assert_string_equal(error, "longer than the 107 bytes a socket address can have");
}

static void test_the_watchdog_pings_at_half_its_timeout_when_it_is_corrals(void **state)
{
	(void)state;
	uint64_t interval;
	char error[128];
	assert_int_equal(
	    parent_watchdog_interval("30000000", NULL, 42, &interval, error, sizeof(error)), 0);
	assert_int_equal(interval, 15000);
	assert_int_equal(
	    parent_watchdog_interval("30000000", "42", 42, &interval, error, sizeof(error)), 0);
	assert_int_equal(interval, 15000);
	/* Another process's watchdog, none, or one too short for ms. */
	assert_int_equal(
	    parent_watchdog_interval("30000000", "7", 42, &interval, error, sizeof(error)), 0);
	assert_int_equal(interval, 0);
	assert_int_equal(parent_watchdog_interval(NULL, "42", 42, &interval, error, sizeof(error)),
			 0);
	assert_int_equal(interval, 0);
	assert_int_equal(
	    parent_watchdog_interval("1000", NULL, 42, &interval, error, sizeof(error)), 0);
	assert_int_equal(interval, 1);
}

static void test_watchdog_values_refused(void **state)
{
	(void)state;
	uint64_t interval = 99;
	char error[128];
	assert_int_equal(parent_watchdog_interval("30s", NULL, 42, &interval, error, sizeof(error)),
			 -1);
	assert_string_equal(error, "WATCHDOG_USEC=30s is not a number of microseconds");
	assert_int_equal(interval, 0);
	assert_int_equal(parent_watchdog_interval("0", NULL, 42, &interval, error, sizeof(error)),
			 -1);
	assert_int_equal(
	    parent_watchdog_interval("1000", "-1", 42, &interval, error, sizeof(error)), -1);
	assert_string_equal(error, "WATCHDOG_PID=-1 is not a process id");
}

/* ---- the summary, and READY=1 ---- */

static const struct ready_rule_facts ready_task = {
    .stays_up = true, .state = READY_RULE_RUNNING, .ready = true};
static const struct ready_rule_facts running_not_ready = {.stays_up = true,
							  .state = READY_RULE_RUNNING};
static const struct ready_rule_facts pending = {.stays_up = true, .state = READY_RULE_PENDING};

static void format(const struct parent_summary *summary, const char *prefix, char *line,
		   size_t size)
{
	parent_summary_format(summary, prefix, line, size);
}

static void test_the_line_counts_and_names_what_is_not_ready(void **state)
{
	(void)state;
	struct parent_summary summary = {0};
	char line[256];
	for (int i = 0; i < 11; i++)
		parent_summary_add(&summary, &ready_task, "web/x", true);
	parent_summary_add(&summary, &running_not_ready, "web/app", true);
	format(&summary, NULL, line, sizeof(line));
	assert_string_equal(line, "12 tasks: 11 ready, 1 starting (web/app)");
	assert_false(parent_summary_ready(&summary));
}

static void test_each_kind_in_its_words(void **state)
{
	(void)state;
	struct parent_summary summary = {0};
	char line[512];
	parent_summary_add(&summary, &ready_task, "g/ready", true);
	parent_summary_add(&summary, &pending, "g/pending", true);
	parent_summary_add(&summary,
			   &(struct ready_rule_facts){
			       .stays_up = true, .state = READY_RULE_RUNNING, .ready_lost = true},
			   "g/lost", true);
	parent_summary_add(&summary,
			   &(struct ready_rule_facts){.stays_up = true,
						      .state = READY_RULE_PENDING,
						      .restart_pending = true,
						      .last_exit_failed = true},
			   "g/crashed", true);
	parent_summary_add(
	    &summary, &(struct ready_rule_facts){.stays_up = true, .state = READY_RULE_STOPPING},
	    "g/stopping", true);
	parent_summary_add(
	    &summary,
	    &(struct ready_rule_facts){.stays_up = true, .state = READY_RULE_DEAD, .failed = true},
	    "g/failed", true);
	parent_summary_add(&summary,
			   &(struct ready_rule_facts){.stays_up = true,
						      .state = READY_RULE_DEAD,
						      .last_exit_requested = true},
			   "g/stopped", true);
	parent_summary_add(&summary,
			   &(struct ready_rule_facts){.stays_up = true, .state = READY_RULE_DEAD},
			   "g/done", true);
	/* Not asked: a migration that runs. */
	parent_summary_add(
	    &summary, &(struct ready_rule_facts){.stays_up = false, .state = READY_RULE_RUNNING},
	    "g/migrate", true);
	format(&summary, "shutting down; ", line, sizeof(line));
	assert_string_equal(line, "shutting down; 8 tasks: 1 ready, 1 starting (g/pending), "
				  "1 not ready (g/lost), 1 restarting (g/crashed), 1 stopping "
				  "(g/stopping), 1 failed (g/failed), 1 stopped (g/stopped), 1 at "
				  "rest");
}

static void test_a_few_names_then_how_many_more(void **state)
{
	(void)state;
	struct parent_summary summary = {0};
	char line[256];
	const char *names[] = {"g/a", "g/b", "g/c", "g/d", "g/e"};
	for (int i = 0; i < 5; i++)
		parent_summary_add(&summary, &pending, names[i], true);
	format(&summary, NULL, line, sizeof(line));
	assert_string_equal(line, "5 tasks: 5 starting (g/a, g/b, g/c and 2 more)");
	format(&summary, NULL, line, 16);
	assert_string_equal(line, "5 tasks: 5 star");
}

/* READY=1: every awaited task ready or at rest; the others only show. */
static void test_ready_waits_for_the_awaited_tasks_only(void **state)
{
	(void)state;
	struct parent_summary summary = {0};
	char line[128];
	parent_summary_add(&summary, &ready_task, "api/app", true);
	parent_summary_add(&summary,
			   &(struct ready_rule_facts){.stays_up = true, .state = READY_RULE_DEAD},
			   "api/once", true);
	parent_summary_add(&summary, &pending, "extras/exporter", false);
	assert_true(parent_summary_ready(&summary));
	parent_summary_add(&summary, &running_not_ready, "api/web", true);
	assert_false(parent_summary_ready(&summary));

	struct parent_summary none = {0};
	parent_summary_add(
	    &none, &(struct ready_rule_facts){.stays_up = false, .state = READY_RULE_PENDING},
	    "g/migrate", true);
	format(&none, NULL, line, sizeof(line));
	assert_string_equal(line, "0 tasks");
	assert_true(parent_summary_ready(&none));
}

/* The rule `corral status --ready` shares: stopped on request is down,
 * a scheduled task stopped between runs is at rest. */
static void test_the_shared_rule_on_stopped_tasks(void **state)
{
	(void)state;
	struct ready_rule_facts stopped = {
	    .stays_up = true, .state = READY_RULE_DEAD, .last_exit_requested = true};
	assert_int_equal(ready_rule_verdict(&stopped), READY_VERDICT_NOT_READY);
	stopped.state = READY_RULE_WAITING;
	assert_int_equal(ready_rule_verdict(&stopped), READY_VERDICT_AT_REST);
	assert_int_equal(ready_rule_state_parse("waiting"), READY_RULE_WAITING);
	assert_int_equal(ready_rule_state_parse("zombie"), READY_RULE_UNKNOWN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_each_message_as_systemd_reads_it),
	    cmocka_unit_test(test_a_status_stays_one_line),
	    cmocka_unit_test(test_a_long_status_is_cut_not_the_assignments),
	    cmocka_unit_test(test_a_path_and_an_abstract_socket),
	    cmocka_unit_test(test_addresses_refused),
	    cmocka_unit_test(test_the_watchdog_pings_at_half_its_timeout_when_it_is_corrals),
	    cmocka_unit_test(test_watchdog_values_refused),
	    cmocka_unit_test(test_the_line_counts_and_names_what_is_not_ready),
	    cmocka_unit_test(test_each_kind_in_its_words),
	    cmocka_unit_test(test_a_few_names_then_how_many_more),
	    cmocka_unit_test(test_ready_waits_for_the_awaited_tasks_only),
	    cmocka_unit_test(test_the_shared_rule_on_stopped_tasks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
