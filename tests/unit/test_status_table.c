/* The status table printed from canned status replies: layout, every kind
 * of cell, and replies missing what they should have. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "base/units.h"
#include "cli/status_table.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* The table for a reply given as JSON text; the caller frees it. */
static char *table_for(const char *reply_text, int *result)
{
	char error[128];
	char *reply_copy = strdup(reply_text);
	struct json_view reply;
	char *text = NULL;
	size_t size = 0;
	FILE *out;

	if (json_view_parse(&reply, reply_copy, strlen(reply_copy), error, sizeof(error)) < 0)
		fail_msg("canned reply is not JSON: %s", error);
	out = open_memstream(&text, &size);
	assert_non_null(out);
	*result = status_table_write(out, reply.values);
	fclose(out);
	json_view_free(&reply);
	free(reply_copy);
	return text;
}

static void assert_table(const char *reply_text, const char *expected)
{
	int result;
	char *table = table_for(reply_text, &result);

	assert_int_equal(result, 0);
	if (strcmp(table, expected) != 0)
		fail_msg("table:\n%s\nexpected:\n%s", table, expected);
	free(table);
}

static void test_groups_and_tasks(void **state)
{
	const char *reply =
	    "{\"ok\": true, \"groups\": ["
	    " {\"name\": \"web\", \"state\": \"main\", \"stopping\": false, \"finished\": false,"
	    "  \"tasks\": ["
	    "  {\"name\": \"app\", \"task\": \"web/app\", \"stage\": \"main\", \"state\": "
	    "\"running\", \"pid\": 4242, \"uptime_ms\": 3723004, \"restarts\": 1,"
	    "   \"last_exit\": {\"code\": 1, \"signal\": null, \"failed\": true,"
	    "   \"description\": \"exited with code 1\"}, \"next_restart_in_ms\": null,"
	    "   \"usage\": {\"cgroup\": \"/sys/fs/cgroup/web/app\", \"cpu_usec\": 1500000,"
	    "   \"memory_bytes\": 12582912, \"memory_peak_bytes\": 41943040,"
	    "   \"memory_limit_bytes\": 67108864, \"pids\": 3}},"
	    "  {\"name\": \"proxy\", \"task\": \"web/proxy\", \"stage\": \"prestart-sidecar\","
	    "   \"state\": \"pending\", \"pid\": null, \"uptime_ms\": null, \"restarts\": 12,"
	    "   \"last_exit\": {\"code\": null, \"signal\": \"SIGKILL\", \"failed\": true,"
	    "   \"oom_killed\": true, \"description\": \"OOM killed\"},"
	    "   \"next_restart_in_ms\": 2000, \"usage\": {\"cgroup\": \"/c\", \"cpu_usec\": 0,"
	    "   \"memory_bytes\": 512, \"memory_peak_bytes\": null, \"pids\": null}},"
	    "  {\"name\": \"setup\", \"task\": \"web/setup\", \"stage\": \"prestart-ephemeral\","
	    "   \"state\": \"dead\", \"pid\": null, \"uptime_ms\": null, \"restarts\": 0,"
	    "   \"last_exit\": {\"code\": 0, \"signal\": null, \"failed\": false,"
	    "   \"description\": \"exited with code 0\"}, \"next_restart_in_ms\": null}"
	    " ]},"
	    " {\"name\": \"db\", \"state\": \"poststop\", \"stopping\": true, \"finished\": true,"
	    "  \"tasks\": ["
	    "  {\"name\": \"postgres\", \"task\": \"db/postgres\", \"stage\": \"main\","
	    "   \"state\": \"dead\", \"pid\": null, \"uptime_ms\": null, \"restarts\": 0,"
	    "   \"last_exit\": {\"code\": null, \"signal\": \"SIGTERM\", \"failed\": false,"
	    "   \"description\": \"killed by SIGTERM\"}, \"next_restart_in_ms\": null},"
	    "  {\"name\": \"migrate\", \"task\": \"db/migrate\", \"stage\": \"prestart-ephemeral\","
	    "   \"state\": \"dead\", \"pid\": null, \"uptime_ms\": null, \"restarts\": 0,"
	    "   \"last_exit\": {\"code\": null, \"signal\": null, \"failed\": true,"
	    "   \"description\": \"failed to start\"}, \"next_restart_in_ms\": null},"
	    "  {\"name\": \"never\", \"task\": \"db/never\", \"stage\": \"poststop\","
	    "   \"state\": \"starting\", \"pid\": 17, \"uptime_ms\": 250, \"restarts\": 0,"
	    "   \"last_exit\": null, \"next_restart_in_ms\": null}"
	    " ]}"
	    "]}";
	const char *expected = "web  state: main\n"
			       "  TASK      STAGE               STATE     READY  HEALTH  PID   "
			       "UPTIME  CPU    MEM          "
			       "PIDS  RESTARTS  LAST EXIT            NEXT RESTART\n"
			       "  app       main                running   -      -       4242  "
			       "1h2m    1.50s  12.0M/64.0M  3   "
			       "  1         code 1 (failed)      -\n"
			       "  proxy     prestart-sidecar    pending   -      -       -     -   "
			       "    0.00s  512B         -   "
			       "  12        OOM killed (failed)  in 2s\n"
			       "  setup     prestart-ephemeral  dead      -      -       -     -   "
			       "    -      -            -   "
			       "  0         code 0               -\n"
			       "\n"
			       "db  state: poststop, stopping, finished\n"
			       "  TASK      STAGE               STATE     READY  HEALTH  PID   "
			       "UPTIME  CPU    MEM          "
			       "PIDS  RESTARTS  LAST EXIT            NEXT RESTART\n"
			       "  postgres  main                dead      -      -       -     -   "
			       "    -      -            -   "
			       "  0         SIGTERM              -\n"
			       "  migrate   prestart-ephemeral  dead      -      -       -     -   "
			       "    -      -            -   "
			       "  0         failed to start      -\n"
			       "  never     poststop            starting  -      -       17    "
			       "250ms   -      -            -   "
			       "  0         -                    -\n";

	assert_table(reply, expected);
}

/* A status of one task: the reply holds its group with that task only. */
static void test_one_task(void **state)
{
	assert_table("{\"ok\":true,\"groups\":[{\"name\":\"web\",\"state\":\"main\",\"stopping\":"
		     "false,\"finished\":false,\"tasks\":[{\"name\":\"app\",\"task\":\"web/app\","
		     "\"stage\":\"main\",\"state\":\"running\",\"pid\":1,\"uptime_ms\":5000,"
		     "\"restarts\":0,\"last_exit\":null,\"next_restart_in_ms\":null}]}]}",
		     "web  state: main\n"
		     "  TASK  STAGE  STATE    READY  HEALTH  PID  UPTIME  CPU  MEM  PIDS  RESTARTS "
		     " LAST EXIT  "
		     "NEXT RESTART\n"
		     "  app   main   running  -      -       1    5s      -    -    -     0        "
		     " -          -\n");
}

/* A reply of many tasks with this usage for its two tasks: their rows
 * are the same in every case, only the note under them differs. */
static void assert_usage_note(const char *first, const char *second, const char *note)
{
	char reply[1024], expected[1024];
	snprintf(reply, sizeof(reply),
		 "{\"ok\":true,\"groups\":[{\"name\":\"g\",\"state\":\"main\",\"tasks\":["
		 "{\"name\":\"a\",\"stage\":\"main\",\"state\":\"running\",\"pid\":1,"
		 "\"uptime_ms\":5000,\"restarts\":0,\"last_exit\":null,\"next_restart_in_ms\":null,"
		 "\"usage\":%s},"
		 "{\"name\":\"b\",\"stage\":\"main\",\"state\":\"running\",\"pid\":2,"
		 "\"uptime_ms\":5000,\"restarts\":0,\"last_exit\":null,\"next_restart_in_ms\":null,"
		 "\"usage\":%s}]}]}",
		 first, second);
	int result;
	char *table = table_for(reply, &result);
	assert_int_equal(result, 0);
	const char *rows_end = strstr(table, "  b   ");
	assert_non_null(rows_end);
	rows_end = strchr(rows_end, '\n') + 1;
	snprintf(expected, sizeof(expected), "%s", note);
	if (strcmp(rows_end, expected) != 0)
		fail_msg("under the rows:\n%s\nexpected:\n%s", rows_end, expected);
	free(table);
}

/* A list reply serves each task's last reading: a note under the tables
 * says when one is over 5 s old or missing (age_ms null), and nothing
 * otherwise. */
static void test_old_and_missing_usage(void **state)
{
	const char *recent = "{\"cgroup\":\"/c\",\"cpu_usec\":10,\"age_ms\":5000}";
	const char *old = "{\"cgroup\":\"/c\",\"cpu_usec\":10,\"age_ms\":42000}";
	const char *unread = "{\"cgroup\":\"/c\",\"cpu_usec\":null,\"age_ms\":null}";
	const char *tail = ": corral reads them now; run `corral status` again for newer "
			   "figures\n";
	char note[256];
	assert_usage_note(recent, recent, "");
	assert_usage_note("null", recent, ""); /* no cgroup: nothing to read */
	assert_usage_note(recent, "{\"cgroup\":\"/c\",\"cpu_usec\":10}", ""); /* an older corral */
	snprintf(note, sizeof(note), "\nCPU, MEM, PIDS read up to 42s ago%s", tail);
	assert_usage_note(recent, old, note);
	snprintf(note, sizeof(note), "\nCPU, MEM, PIDS not read yet for 1 task (-)%s", tail);
	assert_usage_note(unread, recent, note);
	snprintf(note, sizeof(note), "\nCPU, MEM, PIDS not read yet for 2 tasks (-)%s", tail);
	assert_usage_note(unread, unread, note);
	snprintf(note, sizeof(note),
		 "\nCPU, MEM, PIDS read up to 42s ago, not yet for 1 task (-)%s", tail);
	assert_usage_note(old, unread, note);
	(void)state;
}

/* The list that decided an exit, and a group's on_failure rule with its
 * last decision under the rows. */
static void test_exit_rules(void **state)
{
	assert_table(
	    "{\"ok\":true,\"groups\":[{\"name\":\"web\",\"state\":\"main\",\"stopping\":false,"
	    "\"finished\":false,\"on_failure\":\"restart\",\"failure_restarts\":1,"
	    "\"failure_decision\":\"web/db failed for good (exited with code 78); on_failure: "
	    "restart (restart 1 of 3 within 10m)\",\"tasks\":["
	    "{\"name\":\"jvm\",\"state\":\"dead\",\"stage\":\"main\",\"pid\":null,"
	    "\"uptime_ms\":null,\"restarts\":0,\"last_exit\":{\"code\":143,\"signal\":null,"
	    "\"failed\":false,\"decided_by\":\"restart.success_exit\"},\"next_restart_in_ms\":null}"
	    ","
	    "{\"name\":\"db\",\"state\":\"dead\",\"stage\":\"main\",\"pid\":null,"
	    "\"uptime_ms\":null,\"restarts\":0,\"last_exit\":{\"code\":78,\"signal\":null,"
	    "\"failed\":true,\"decided_by\":\"restart.no_restart_exit\"},\"next_restart_in_ms\":"
	    "null}"
	    "]}]}",
	    "web  state: main, on_failure: restart (1 restart)\n"
	    "  TASK  STAGE  STATE  READY  HEALTH  PID  UPTIME  CPU  MEM  PIDS  RESTARTS  "
	    "LAST EXIT                          NEXT RESTART\n"
	    "  jvm   main   dead   -      -       -    -       -    -    -     0         "
	    "code 143 (success_exit)            -\n"
	    "  db    main   dead   -      -       -    -       -    -    -     0         "
	    "code 78 (failed, no_restart_exit)  -\n"
	    "  last failure: web/db failed for good (exited with code 78); on_failure: restart "
	    "(restart 1 of 3 within 10m)\n");
}

/* From another program, anything may be missing: print "?", not crash. */
static void test_missing_and_wrong_fields(void **state)
{
	assert_table("{\"ok\":true,\"groups\":[{\"tasks\":[{\"task\":\"web/app\",\"pid\":\"x\","
		     "\"uptime_ms\":-5,\"last_exit\":7},42]},{\"name\":\"empty\",\"state\":"
		     "\"init\",\"tasks\":[]},{\"name\":\"odd\",\"state\":\"init\"}]}",
		     "?  state: ?\n"
		     "  TASK     STAGE  STATE  READY  HEALTH  PID  UPTIME  CPU  MEM  PIDS  "
		     "RESTARTS  LAST EXIT  "
		     "NEXT RESTART\n"
		     "  web/app  ?      ?      -      -       ?    ?       -    -    -     ?       "
		     "  ?          ?\n"
		     "  ?        ?      ?      -      -       ?    ?       -    -    -     ?       "
		     "  -          ?\n"
		     "\n"
		     "empty  state: init\n"
		     "  (no tasks)\n"
		     "\n"
		     "odd  state: init\n"
		     "  (no tasks)\n");
}

/* READY and HEALTH: "-" unless the task runs and declares readiness or a
 * health probe. */
static void test_ready_and_health(void **state)
{
	assert_table(
	    "{\"ok\":true,\"groups\":[{\"name\":\"g\",\"state\":\"main\",\"tasks\":["
	    "{\"name\":\"a\",\"state\":\"running\",\"readiness_kind\":\"exec\","
	    "\"ready\":false,\"probes\":{\"readiness\":{},\"health\":{\"consecutive_failures\":2,"
	    "\"failures_to_restart\":3,\"passed\":false}}},"
	    "{\"name\":\"b\",\"state\":\"running\",\"readiness_kind\":\"systemd\","
	    "\"ready\":true,\"probes\":{\"readiness\":null,\"health\":{\"consecutive_failures\":0,"
	    "\"failures_to_restart\":3,\"passed\":true}}},"
	    "{\"name\":\"c\",\"state\":\"running\",\"readiness_kind\":null,"
	    "\"ready\":true,\"probes\":{\"readiness\":null,\"health\":{\"consecutive_failures\":0,"
	    "\"failures_to_restart\":3,\"passed\":false}}},"
	    "{\"name\":\"d\",\"state\":\"dead\",\"readiness_kind\":\"fd\",\"ready\":false,"
	    "\"probes\":{\"readiness\":null,\"health\":{\"consecutive_failures\":1,"
	    "\"failures_to_restart\":3,\"passed\":false}}}]}]}",
	    "g  state: main\n"
	    "  TASK  STAGE  STATE    READY  HEALTH           PID  UPTIME  CPU  MEM  PIDS  RESTARTS "
	    " "
	    "LAST EXIT  NEXT RESTART\n"
	    "  a     ?      running  no     unhealthy (2/3)  ?    ?       -    -    -     ?        "
	    " "
	    "-          ?\n"
	    "  b     ?      running  yes    healthy          ?    ?       -    -    -     ?        "
	    " "
	    "-          ?\n"
	    "  c     ?      running  -      starting         ?    ?       -    -    -     ?        "
	    " "
	    "-          ?\n"
	    "  d     ?      dead     -      -                ?    ?       -    -    -     ?        "
	    " "
	    "-          ?\n");
}

/* Issue 28, item 9: a scheduled task's next run and its runs, under the
 * rows, in the terminal's time zone. */
static void test_a_scheduled_task_says_its_next_run(void **state)
{
	setenv("TZ", "UTC", 1);
	tzset();
	int result;
	char *table = table_for(
	    "{\"ok\": true, \"groups\": [{\"name\": \"jobs\", \"state\": \"running\","
	    " \"tasks\": [{\"name\": \"backup\", \"stage\": \"main\", \"state\": \"waiting\","
	    " \"restarts\": 0, \"runs\": 34, \"next_run\": 12600.0, \"next_run_in_ms\": 120000,"
	    " \"waiting_for\": \"its schedule: next run in 2m\"}]}]}",
	    &result);
	assert_int_equal(result, 0);
	if (!strstr(table, "\n  backup: next run at 03:30:00 (in 2m); 34 runs so far\n") ||
	    strstr(table, "its schedule: next run in"))
		fail_msg("table:\n%s", table);
	free(table);
}

/* A task's instances scaled away from the config, and its rolling restart
 * while it goes on or when it stopped; a roll that was done is not said. */
static void test_instance_sets_under_the_rows(void **state)
{
	(void)state;
	int result;
	char *table = table_for(
	    "{\"ok\": true, \"groups\": [{\"name\": \"web\", \"state\": \"running\","
	    " \"tasks\": [{\"name\": \"api@0\", \"stage\": \"main\", \"state\": \"running\"}],"
	    " \"instance_sets\": ["
	    "{\"task\": \"web/api\", \"configured\": 3, \"instances\": 5, \"scaled\": true,"
	    " \"roll\": {\"state\": \"rolling\", \"max_unavailable\": 2, \"replaced\": 1,"
	    " \"total\": 5, \"message\": null}},"
	    "{\"task\": \"web/worker\", \"configured\": 2, \"instances\": 2, \"scaled\": false,"
	    " \"roll\": {\"state\": \"stopped\", \"message\": \"rolling restart stopped at "
	    "web/worker@1: not ready within 5s\"}},"
	    "{\"task\": \"web/cron\", \"configured\": 2, \"instances\": 2, \"scaled\": false,"
	    " \"roll\": {\"state\": \"done\", \"message\": \"rolling restart done\"}}]}]}",
	    &result);
	assert_int_equal(result, 0);
	if (!strstr(table,
		    "\n  api: 5 instances (corral scale); the config says 3\n"
		    "  api: rolling restart: 1 of 5 replaced, 2 at a time\n"
		    "  worker: rolling restart stopped at web/worker@1: not ready within 5s\n") ||
	    strstr(table, "cron"))
		fail_msg("table:\n%s", table);
	free(table);
}

static void test_no_groups(void **state)
{
	int result;
	char *table = table_for("{\"ok\":true}", &result);

	assert_int_equal(result, -1);
	assert_string_equal(table, "");
	free(table);
	table = table_for("{\"ok\":true,\"groups\":[]}", &result);
	assert_int_equal(result, 0);
	assert_string_equal(table, "");
	free(table);
}

static void test_durations(void **state)
{
	static const struct {
		uint64_t ms;
		const char *text;
	} cases[] = {
	    {0, "0ms"},
	    {250, "250ms"},
	    {999, "999ms"},
	    {1000, "1s"},
	    {5999, "5s"},
	    {184000, "3m4s"},
	    {180000, "3m"},
	    {3723004, "1h2m"},
	    {3605000, "1h"},
	    {90000000, "1d1h"},
	    {86400000 * 400ULL + 1, "400d"},
	    {UINT64_MAX, "213503982334d14h"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char text[32];

		status_duration_format(cases[i].ms, text, sizeof(text));
		assert_string_equal(text, cases[i].text);
	}
}

static void test_sizes(void **state)
{
	static const struct {
		uint64_t bytes;
		const char *text;
	} cases[] = {
	    {0, "0B"},
	    {1023, "1023B"},
	    {1024, "1.0K"},
	    {1536, "1.5K"},
	    {12582912, "12.0M"},
	    {1073741824, "1.0G"},
	    {UINT64_MAX, "16777216.0T"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[32];
		format_size_bytes(cases[i].bytes, text, sizeof(text));
		assert_string_equal(text, cases[i].text);
	}
}

/* Under a status of one task: now, peak and limit, or "no limit". */
static void test_memory_of_one_task(void **state)
{
	char reply_text[] = "{\"groups\":[{\"tasks\":["
			    "{\"task\":\"web/app\",\"usage\":{\"memory_bytes\":12582912,"
			    "\"memory_peak_bytes\":41943040,\"memory_limit_bytes\":67108864}},"
			    "{\"task\":\"web/free\",\"usage\":{\"memory_bytes\":1024,"
			    "\"memory_peak_bytes\":2048,\"memory_limit_bytes\":null}},"
			    "{\"task\":\"web/dead\",\"usage\":null}]}]}";
	struct json_view reply;
	char error[128];
	assert_int_equal(
	    json_view_parse(&reply, reply_text, strlen(reply_text), error, sizeof(error)), 0);
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);
	status_table_write_memory(out, reply.values);
	fclose(out);
	assert_string_equal(text, "\nweb/app memory: 12.0M now, 40.0M peak, 64.0M limit\n"
				  "web/free memory: 1.0K now, 2.0K peak, no limit\n");
	free(text);
	json_view_free(&reply);
	(void)state;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_groups_and_tasks),
	    cmocka_unit_test(test_one_task),
	    cmocka_unit_test(test_memory_of_one_task),
	    cmocka_unit_test(test_old_and_missing_usage),
	    cmocka_unit_test(test_exit_rules),
	    cmocka_unit_test(test_missing_and_wrong_fields),
	    cmocka_unit_test(test_ready_and_health),
	    cmocka_unit_test(test_a_scheduled_task_says_its_next_run),
	    cmocka_unit_test(test_instance_sets_under_the_rows),
	    cmocka_unit_test(test_no_groups),
	    cmocka_unit_test(test_durations),
	    cmocka_unit_test(test_sizes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
