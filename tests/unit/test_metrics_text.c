/* GET /metrics' text (metrics_text.h) over canned groups: the families
 * and values a task's state gives, the two formats side by side, label
 * values escaped, the exits' label set bounded, usage served from the
 * cache with a refresh asked for, and the Accept header's choice
 * (metrics_format.h). Prints the time a text of 1000 tasks takes; no
 * threshold. */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "supervisor/metrics/metrics_text.h"
#include "supervisor/tasks/group.h"
#include "supervisor/tasks/task.h"

#define WALL_NOW_MS 1700000000000ULL /* 2023-11-14T22:13:20Z */
#define NOW_MS      50000ULL         /* the loop's clock */

/* Groups of tasks as the supervisor holds them, with only what the text
 * reads filled in. */
struct canned {
	size_t group_count, group_max, tasks_per_group;
	struct group_config *group_configs;
	struct group *groups;
	struct group **group_pointers;
	struct corral_counters counters;
	unsigned stale_calls; /* usage_stale */
};

static struct canned *canned_new(size_t group_max, size_t tasks_per_group)
{
	struct canned *canned = calloc(1, sizeof(*canned));
	canned->group_max = group_max;
	canned->tasks_per_group = tasks_per_group;
	canned->group_configs = calloc(group_max, sizeof(*canned->group_configs));
	canned->groups = calloc(group_max, sizeof(*canned->groups));
	canned->group_pointers = calloc(group_max, sizeof(*canned->group_pointers));
	return canned;
}

static struct group *add_group(struct canned *canned, const char *name)
{
	assert_true(canned->group_count < canned->group_max);
	size_t index = canned->group_count++;
	struct group *group = &canned->groups[index];
	canned->group_configs[index].name = strdup(name);
	group->config = &canned->group_configs[index];
	group->tasks = calloc(canned->tasks_per_group, sizeof(*group->tasks));
	canned->group_pointers[index] = group;
	return group;
}

static struct task *add_task(struct group *group, const char *name)
{
	struct task_config *config = calloc(1, sizeof(*config));
	config->name = strdup(name);
	config->full_name = config->name;
	/* "worker@1": an instance of "worker", as config_instances makes it. */
	const char *at = strchr(name, '@');
	if (at) {
		config->instance_of = strndup(name, (size_t)(at - name));
		config->instance = (unsigned)atoi(at + 1);
	}
	struct task *task = calloc(1, sizeof(*task));
	task->config = config;
	task->group = group;
	task->runner.config = config;
	task->runner.state = TASK_PENDING;
	task_cgroup_init(&task->cgroup);
	group->tasks[group->task_count++] = task;
	return task;
}

static void canned_free(struct canned *canned)
{
	for (size_t g = 0; g < canned->group_count; g++) {
		struct group *group = &canned->groups[g];
		for (size_t t = 0; t < group->task_count; t++) {
			struct task *task = group->tasks[t];
			free(task->config->name);
			free(task->config->instance_of);
			free((void *)task->config);
			free(task->runner.exits);
			free(task->record); /* no services: from the heap */
			free(task);
		}
		free(group->tasks);
		free(canned->group_configs[g].name);
	}
	free(canned->group_configs);
	free(canned->groups);
	free(canned->group_pointers);
	free(canned);
}

static void note_stale(void *context)
{
	struct canned *canned = context;
	canned->stale_calls++;
}

static struct metrics_source source_of(struct canned *canned, enum metrics_format format)
{
	return (struct metrics_source){
	    .groups = canned->group_pointers,
	    .group_count = canned->group_count,
	    .counters = &canned->counters,
	    .format = format,
	    .wall_now_ms = WALL_NOW_MS,
	    .started_wall_ms = WALL_NOW_MS - 3600500,
	    .output_dropped_lines = 12,
	    .output_buffered_bytes = 4096,
	    .starts_put_off = 5,
	    .longest_loop_turn_us = 12345,
	    .usage_stale = note_stale,
	    .context = canned,
	};
}

/* The text with a NUL after it, for the string functions. */
static char *text_of(struct canned *canned, enum metrics_format format)
{
	struct metrics_source source = source_of(canned, format);
	size_t length;
	char *text = metrics_text(&source, NOW_MS, &length);
	text = realloc(text, length + 1);
	text[length] = '\0';
	assert_int_equal(strlen(text), length); /* no NUL of its own */
	return text;
}

static bool has_line(const char *text, const char *line)
{
	size_t length = strlen(line);
	for (const char *at = text; (at = strstr(at, line)); at++)
		if ((at == text || at[-1] == '\n') && at[length] == '\n')
			return true;
	return false;
}

static void assert_line(const char *text, const char *line)
{
	if (!has_line(text, line))
		fail_msg("no line \"%s\" in:\n%s", line, text);
}

static size_t count_lines_starting(const char *text, const char *start)
{
	size_t count = 0, length = strlen(start);
	for (const char *line = text; *line;) {
		count += strncmp(line, start, length) == 0;
		const char *newline = strchr(line, '\n');
		if (!newline)
			break;
		line = newline + 1;
	}
	return count;
}

static struct readiness_config probe_readiness = {.kind = READINESS_PROBE,
						  .probe = {.kind = PROBE_EXEC}};
static struct health_config exec_health = {.probe = {.kind = PROBE_EXEC}, .failures = 3};

/* Group web: a crash-looping task, a ready and healthy service with both
 * probes, an instance; group jobs: a one-shot that completed, an
 * OOM-killed task with a memory limit. */
static struct canned *sample_groups(void)
{
	struct canned *canned = canned_new(2, 4);
	struct group *web = add_group(canned, "web");
	struct group *jobs = add_group(canned, "jobs");
	web->coordinator.state = COORDINATOR_MAIN;
	jobs->coordinator.state = COORDINATOR_POSTSTOP;
	jobs->failure_restart_count = 2;

	struct task *crash = add_task(web, "crash");
	crash->runner.step = RUNNER_STEP_AWAIT_DELAY;
	crash->runner.restart_count = 7;
	crash->runner.exits = calloc(1, sizeof(*crash->runner.exits));
	for (int i = 0; i < 7; i++)
		exit_tally_add(crash->runner.exits, false, 3);
	exit_tally_add(crash->runner.exits, true, SIGTERM);
	crash->runner.exits->start_failures = 1;

	struct task *service = add_task(web, "service");
	struct task_config *config = (struct task_config *)service->config;
	config->readiness = &probe_readiness;
	config->health = &exec_health;
	service->runner.state = TASK_RUNNING;
	service->runner.readiness = RUNNER_READY;
	service->runner.healthy = true;
	service->runner.started_at_ms = NOW_MS - 2250;
	task_counts_of(service)->readiness_probe_failures = 4;
	task_counts_of(service)->health_probe_failures = 1;
	service->output.dropped_lines = 9;
	task_counts_of(service)->earlier_dropped_lines = 1; /* before a reload */

	struct task *worker = add_task(web, "worker@1");
	worker->runner.state = TASK_RUNNING;
	worker->runner.readiness = RUNNER_READY;
	worker->runner.stop_intent = RUNNER_STOP_FOR_GOOD; /* being stopped */
	worker->runner.started_at_ms = NOW_MS - 10;
	worker->output.paused = true; /* its output waits for stdout */

	struct task *once = add_task(jobs, "once");
	once->runner.state = TASK_DEAD;
	once->runner.exits = calloc(1, sizeof(*once->runner.exits));
	exit_tally_add(once->runner.exits, false, 0);

	struct task *hog = add_task(jobs, "hog");
	((struct task_config *)hog->config)->resources.memory = 32 * 1024 * 1024;
	((struct task_config *)hog->config)->log_dir = (char *)"/var/log/corral";
	hog->runner.state = TASK_DEAD;
	hog->runner.failed = true;
	hog->runner.exits = calloc(1, sizeof(*hog->runner.exits));
	exit_tally_add(hog->runner.exits, true, SIGKILL);
	task_counts_of(hog)->oom_kills = 1;
	task_counts_of(hog)->earlier_lost_log_lines = 6;

	canned->counters.reloads_succeeded = 3;
	canned->counters.reloads_failed = 1;
	canned->counters.control_requests[CONTROL_STATUS] = 40;
	canned->counters.control_requests[CONTROL_RELOAD] = 4;
	return canned;
}

static void test_the_families_of_a_running_corral(void **state)
{
	(void)state;
	struct canned *canned = sample_groups();
	char *text = text_of(canned, METRICS_OPENMETRICS);

	assert_line(text, "corral_up 1");
	assert_line(text, "corral_build_info{version=\"" CORRAL_VERSION "\"} 1");
	assert_line(text, "corral_start_time_seconds 1699996399.5");
	assert_line(text, "corral_reloads_total{result=\"succeeded\"} 3");
	assert_line(text, "corral_reloads_total{result=\"failed\"} 1");
	assert_line(text, "corral_control_requests_total{command=\"status\"} 40");
	assert_line(text, "corral_control_requests_total{command=\"reload\"} 4");
	assert_line(text, "corral_control_requests_total{command=\"exec\"} 0");
	assert_line(text, "corral_output_dropped_lines_total 12");
	assert_line(text, "corral_output_buffered_bytes 4096");
	assert_line(text, "corral_output_held_tasks 1");
	assert_line(text, "corral_starts_put_off_total 5");
	assert_line(text, "corral_loop_longest_turn_seconds 0.012345");

	assert_line(text, "corral_group_state{group=\"web\",state=\"main\"} 1");
	assert_line(text, "corral_group_state{group=\"web\",state=\"init\"} 0");
	assert_line(text, "corral_group_state{group=\"jobs\",state=\"poststop\"} 1");
	assert_line(text, "corral_group_restarts_total{group=\"jobs\"} 2");
	assert_line(text, "corral_group_restarts_total{group=\"web\"} 0");

	/* Every state of every task, one of them 1. */
	assert_int_equal(count_lines_starting(text, "corral_task_state{"), 5 * 6);
	assert_int_equal(
	    count_lines_starting(text, "corral_task_state{group=\"web\",task=\"crash\""), 6);
	assert_line(text, "corral_task_state{group=\"web\",task=\"crash\",state=\"pending\"} 1");
	assert_line(text, "corral_task_state{group=\"web\",task=\"crash\",state=\"dead\"} 0");
	assert_line(text, "corral_task_state{group=\"web\",task=\"service\",state=\"running\"} 1");
	assert_line(text, "corral_task_state{group=\"web\",task=\"worker\",task_instance=\"1\","
			  "state=\"stopping\"} 1");
	assert_line(text, "corral_task_state{group=\"web\",task=\"worker\",task_instance=\"1\","
			  "state=\"running\"} 0");
	assert_line(text, "corral_task_state{group=\"jobs\",task=\"once\",state=\"dead\"} 1");

	assert_line(text, "corral_task_ready{group=\"web\",task=\"service\"} 1");
	/* Stopping: not ready. */
	assert_line(text, "corral_task_ready{group=\"web\",task=\"worker\",task_instance=\"1\"} 0");
	assert_line(text, "corral_task_ready{group=\"web\",task=\"crash\"} 0");
	/* Healthy: only the task with a health probe. */
	assert_line(text, "corral_task_healthy{group=\"web\",task=\"service\"} 1");
	assert_int_equal(count_lines_starting(text, "corral_task_healthy{"), 1);
	assert_line(text, "corral_task_failed{group=\"jobs\",task=\"hog\"} 1");
	assert_line(text, "corral_task_failed{group=\"web\",task=\"crash\"} 0");

	assert_line(text, "corral_task_restarts_total{group=\"web\",task=\"crash\"} 7");
	assert_line(text, "corral_task_exits_total{group=\"web\",task=\"crash\",code=\"3\"} 7");
	assert_line(text,
		    "corral_task_exits_total{group=\"web\",task=\"crash\",signal=\"SIGTERM\"} 1");
	assert_line(text, "corral_task_exits_total{group=\"jobs\",task=\"once\",code=\"0\"} 1");
	assert_line(text,
		    "corral_task_exits_total{group=\"jobs\",task=\"hog\",signal=\"SIGKILL\"} 1");
	assert_int_equal(count_lines_starting(text, "corral_task_exits_total{"), 4);
	assert_line(text, "corral_task_start_failures_total{group=\"web\",task=\"crash\"} 1");
	assert_line(text, "corral_task_start_failures_total{group=\"web\",task=\"service\"} 0");
	assert_line(text, "corral_task_oom_kills_total{group=\"jobs\",task=\"hog\"} 1");
	assert_line(text, "corral_task_oom_kills_total{group=\"web\",task=\"crash\"} 0");
	assert_line(text, "corral_task_probe_failures_total{group=\"web\",task=\"service\","
			  "probe=\"readiness\"} 4");
	assert_line(text, "corral_task_probe_failures_total{group=\"web\",task=\"service\","
			  "probe=\"health\"} 1");
	assert_int_equal(count_lines_starting(text, "corral_task_probe_failures_total{"), 2);

	/* Only while a run is under way; from the loop's clock to the wall's. */
	assert_line(text,
		    "corral_task_start_time_seconds{group=\"web\",task=\"service\"} 1699999997.75");
	assert_line(text, "corral_task_start_time_seconds{group=\"web\",task=\"worker\",task_"
			  "instance=\"1\"} 1699999999.99");
	assert_int_equal(count_lines_starting(text, "corral_task_start_time_seconds{"), 2);

	assert_line(text, "corral_task_memory_limit_bytes{group=\"jobs\",task=\"hog\"} 33554432");
	assert_int_equal(count_lines_starting(text, "corral_task_memory_limit_bytes{"), 1);
	/* No cgroup: no usage. */
	assert_int_equal(count_lines_starting(text, "corral_task_cpu_seconds_total{"), 0);
	assert_int_equal(canned->stale_calls, 0);

	assert_line(text,
		    "corral_task_output_dropped_lines_total{group=\"web\",task=\"service\"} 10");
	assert_line(text, "corral_task_log_lost_lines_total{group=\"jobs\",task=\"hog\"} 6");
	assert_int_equal(count_lines_starting(text, "corral_task_log_lost_lines_total{"), 1);

	/* OpenMetrics' metadata, and its end. */
	assert_line(text, "# TYPE corral_task_restarts counter");
	assert_line(text, "# TYPE corral_build info");
	assert_line(text, "# TYPE corral_task_cpu_seconds counter");
	assert_line(text, "# UNIT corral_task_cpu_seconds seconds");
	assert_line(text, "# UNIT corral_task_memory_bytes bytes");
	size_t length = strlen(text);
	assert_true(length > 6 && strcmp(text + length - 6, "# EOF\n") == 0);
	assert_int_equal(count_lines_starting(text, "# EOF"), 1);
	free(text);
	canned_free(canned);
}

/* The lines of `text` that are not comments, in order. */
static char *samples_of(const char *text)
{
	char *samples = calloc(1, strlen(text) + 1);
	for (const char *line = text; *line;) {
		const char *newline = strchr(line, '\n');
		size_t length = newline ? (size_t)(newline - line) + 1 : strlen(line);
		if (line[0] != '#')
			strncat(samples, line, length);
		line += length;
	}
	return samples;
}

static void test_the_text_format_differs_only_in_metadata(void **state)
{
	(void)state;
	struct canned *canned = sample_groups();
	char *openmetrics = text_of(canned, METRICS_OPENMETRICS);
	char *text = text_of(canned, METRICS_PROMETHEUS_TEXT);
	char *openmetrics_samples = samples_of(openmetrics), *text_samples = samples_of(text);
	assert_string_equal(openmetrics_samples, text_samples);
	/* Families take their samples' names; an info is a gauge; no units,
	 * no end marker. */
	assert_line(text, "# TYPE corral_task_restarts_total counter");
	assert_line(text, "# HELP corral_task_restarts_total Runs of the task after its first: its "
			  "restart policy's, requested ones, its group's restarts (corral status' "
			  "RESTARTS).");
	assert_line(text, "# TYPE corral_build_info gauge");
	assert_line(text, "# TYPE corral_task_cpu_seconds_total counter");
	assert_line(text, "# TYPE corral_task_state gauge");
	assert_int_equal(count_lines_starting(text, "# UNIT"), 0);
	assert_int_equal(count_lines_starting(text, "# EOF"), 0);
	/* Every family once, in both. */
	assert_int_equal(count_lines_starting(text, "# TYPE "),
			 count_lines_starting(openmetrics, "# TYPE "));
	assert_int_equal(count_lines_starting(text, "# HELP "),
			 count_lines_starting(text, "# TYPE "));
	/* HELP texts need no escaping, which the formats do differently. */
	for (const char *line = openmetrics; (line = strstr(line, "# HELP ")); line++) {
		const char *end = strchr(line, '\n');
		for (const char *c = line; c < end; c++)
			assert_true(*c != '\\' && *c != '"');
	}
	free(openmetrics_samples);
	free(text_samples);
	free(openmetrics);
	free(text);
	canned_free(canned);
}

static void test_label_values_are_escaped(void **state)
{
	(void)state;
	/* corral's names cannot hold these (base/names.h); the text does not
	 * count on it. */
	struct canned *canned = canned_new(1, 1);
	struct group *group = add_group(canned, "we\"b");
	add_task(group, "a\\b\nc");
	char *text = text_of(canned, METRICS_OPENMETRICS);
	assert_line(text, "corral_task_restarts_total{group=\"we\\\"b\",task=\"a\\\\b\\nc\"} 0");
	assert_line(text, "corral_group_restarts_total{group=\"we\\\"b\"} 0");
	free(text);
	canned_free(canned);
}

/* A program that exits with every code and dies of every signal leaves
 * EXIT_TALLY_SLOTS series of its own and "other"s, not hundreds. */
static void test_the_exits_label_set_stays_bounded(void **state)
{
	(void)state;
	struct canned *canned = canned_new(1, 1);
	struct task *task = add_task(add_group(canned, "g"), "t");
	task->runner.exits = calloc(1, sizeof(*task->runner.exits));
	for (int round = 0; round < 3; round++) {
		for (int code = 0; code < 256; code++)
			exit_tally_add(task->runner.exits, false, code);
		for (int signal = 1; signal < 32; signal++)
			exit_tally_add(task->runner.exits, true, signal);
	}
	char *text = text_of(canned, METRICS_OPENMETRICS);
	assert_int_equal(count_lines_starting(text, "corral_task_exits_total{"),
			 EXIT_TALLY_SLOTS + 2);
	assert_line(text, "corral_task_exits_total{group=\"g\",task=\"t\",code=\"0\"} 3");
	assert_line(text, "corral_task_exits_total{group=\"g\",task=\"t\",code=\"7\"} 3");
	assert_line(text,
		    "corral_task_exits_total{group=\"g\",task=\"t\",code=\"other\"} " /* 248 */
		    "744");
	assert_line(text, "corral_task_exits_total{group=\"g\",task=\"t\",signal=\"other\"} 93");
	free(text);
	canned_free(canned);
}

/* ---- usage: the cached readings, as a status of many tasks serves them ---- */

struct usage_fixture {
	char directory[64];
	struct canned *canned;
	struct task *task;
};

static void write_cpu_stat(struct usage_fixture *fixture, unsigned usec)
{
	char path[96];
	snprintf(path, sizeof(path), "%s/cpu.stat", fixture->directory);
	FILE *file = fopen(path, "w");
	assert_non_null(file);
	fprintf(file, "usage_usec %u\nuser_usec %u\nsystem_usec 0\n", usec, usec);
	fclose(file);
}

static int usage_set_up(void **state)
{
	struct usage_fixture *fixture = calloc(1, sizeof(*fixture));
	snprintf(fixture->directory, sizeof(fixture->directory), "/tmp/test-metrics-XXXXXX");
	if (!mkdtemp(fixture->directory))
		return -1;
	fixture->canned = canned_new(1, 1);
	fixture->task = add_task(add_group(fixture->canned, "g"), "t");
	/* The leaf is reached as its parent's fd and its name (cgroup_task.h). */
	fixture->task->cgroup.made = true;
	fixture->task->cgroup.parent_fd = open("/tmp", O_RDONLY | O_DIRECTORY);
	fixture->task->cgroup.name = fixture->directory + strlen("/tmp/");
	write_cpu_stat(fixture, 1500000);
	*state = fixture;
	return 0;
}

static int usage_tear_down(void **state)
{
	struct usage_fixture *fixture = *state;
	char path[96];
	snprintf(path, sizeof(path), "%s/cpu.stat", fixture->directory);
	unlink(path);
	close(fixture->task->cgroup.parent_fd);
	rmdir(fixture->directory);
	canned_free(fixture->canned);
	free(fixture);
	return 0;
}

static void test_usage_comes_from_the_cache_and_a_refresh_is_asked(void **state)
{
	struct usage_fixture *fixture = *state;
	struct canned *canned = fixture->canned;
	/* No reading yet: one of the first reads is spent on it. */
	char *text = text_of(canned, METRICS_OPENMETRICS);
	assert_line(text, "corral_task_cpu_seconds_total{group=\"g\",task=\"t\"} 1.5");
	assert_int_equal(canned->stale_calls, 0);
	assert_true(fixture->task->usage.valid);
	assert_int_equal(fixture->task->usage.read_at_ms, NOW_MS);
	free(text);

	/* The next scrape serves that reading, however the file changed. */
	write_cpu_stat(fixture, 2000000);
	text = text_of(canned, METRICS_OPENMETRICS);
	assert_line(text, "corral_task_cpu_seconds_total{group=\"g\",task=\"t\"} 1.5");
	assert_int_equal(canned->stale_calls, 0);
	free(text);

	/* An old one is still served, and its refresh asked for once. */
	fixture->task->usage.read_at_ms = NOW_MS - TASK_USAGE_REFRESH_MS - 1;
	text = text_of(canned, METRICS_OPENMETRICS);
	assert_line(text, "corral_task_cpu_seconds_total{group=\"g\",task=\"t\"} 1.5");
	assert_int_equal(canned->stale_calls, 1);
	free(text);

	/* Figures a cgroup cannot give are left out; others shown. */
	fixture->task->usage = (struct task_usage){.stats = {.has_memory = true,
							     .memory_current = 4096,
							     .has_pids = true,
							     .pids_current = 3},
						   .read_at_ms = NOW_MS,
						   .valid = true};
	text = text_of(canned, METRICS_PROMETHEUS_TEXT);
	assert_int_equal(count_lines_starting(text, "corral_task_cpu_seconds_total{"), 0);
	assert_int_equal(count_lines_starting(text, "corral_task_memory_peak_bytes{"), 0);
	assert_line(text, "corral_task_memory_bytes{group=\"g\",task=\"t\"} 4096");
	assert_line(text, "corral_task_pids{group=\"g\",task=\"t\"} 3");
	free(text);
}

/* ---- 1000 tasks ---- */

static double seconds_between(const struct timespec *from, const struct timespec *to)
{
	return (double)(to->tv_sec - from->tv_sec) + (double)(to->tv_nsec - from->tv_nsec) / 1e9;
}

/* 10 groups of 100 tasks, each with a cached usage reading, as corral
 * holds them after a while: every task has its lines, and the time of
 * one text is printed (best of 20, no threshold). */
static void test_a_thousand_tasks(void **state)
{
	(void)state;
	enum { GROUPS = 10, TASKS = 100 };
	struct canned *canned = canned_new(GROUPS, TASKS);
	for (int g = 0; g < GROUPS; g++) {
		char name[32];
		snprintf(name, sizeof(name), "group-%d", g);
		struct group *group = add_group(canned, name);
		group->coordinator.state = COORDINATOR_MAIN;
		for (int t = 0; t < TASKS; t++) {
			snprintf(name, sizeof(name), "worker@%d", t);
			struct task *task = add_task(group, name);
			task->runner.state = TASK_RUNNING;
			task->runner.readiness = RUNNER_READY;
			task->runner.started_at_ms = NOW_MS - 1000 - (uint64_t)t;
			task->runner.restart_count = (unsigned)t % 3;
			task->cgroup.made = true;
			task->usage = (struct task_usage){.stats = {.has_cpu = true,
								    .cpu_usec = 123456789,
								    .has_memory = true,
								    .memory_current = 12345678,
								    .has_memory_peak = true,
								    .memory_peak = 23456789,
								    .has_pids = true,
								    .pids_current = 4},
							  .read_at_ms = NOW_MS,
							  .valid = true};
		}
	}
	double best[2] = {1e9, 1e9};
	size_t sizes[2] = {0, 0};
	for (int round = 0; round < 20; round++)
		for (int format = 0; format < 2; format++) {
			struct metrics_source source =
			    source_of(canned, (enum metrics_format)format);
			struct timespec start, end;
			size_t length;
			clock_gettime(CLOCK_MONOTONIC, &start);
			char *text = metrics_text(&source, NOW_MS, &length);
			clock_gettime(CLOCK_MONOTONIC, &end);
			double took = seconds_between(&start, &end);
			best[format] = took < best[format] ? took : best[format];
			sizes[format] = length;
			free(text);
		}
	char *text = text_of(canned, METRICS_OPENMETRICS);
	assert_int_equal(count_lines_starting(text, "corral_task_state{"), GROUPS * TASKS * 6);
	assert_int_equal(count_lines_starting(text, "corral_task_cpu_seconds_total{"),
			 GROUPS * TASKS);
	assert_line(
	    text,
	    "corral_task_cpu_seconds_total{group=\"group-9\",task=\"worker\",task_instance=\"99\"} "
	    "123.456789");
	assert_int_equal(canned->stale_calls, 0);
	free(text);
	print_message("metrics_text, 1000 tasks: OpenMetrics %.2f ms (%zu bytes), text 0.0.4 "
		      "%.2f ms (%zu bytes); best of 20\n",
		      best[0] * 1e3, sizes[0], best[1] * 1e3, sizes[1]);
	canned_free(canned);
}

/* ---- content negotiation ---- */

static enum metrics_format accepted(const char *header)
{
	return metrics_format_for_accept(header, strlen(header));
}

static void test_the_format_a_scraper_asks_for(void **state)
{
	(void)state;
	/* Prometheus 2.x's scrape. */
	assert_int_equal(
	    accepted("application/openmetrics-text;version=1.0.0,application/"
		     "openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,"
		     "*/*;q=0.1"),
	    METRICS_OPENMETRICS);
	/* Prometheus 3's, with protobuf first and escaping parameters. */
	assert_int_equal(
	    accepted("application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;"
		     "encoding=delimited;q=0.6,application/openmetrics-text;version=1.0.0;"
		     "escaping=allow-utf-8;q=0.5,text/plain;version=1.0.0;escaping=allow-utf-8;"
		     "q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2"),
	    METRICS_OPENMETRICS);
	/* curl, a browser, promtool's users, and no header at all. */
	assert_int_equal(accepted("*/*"), METRICS_PROMETHEUS_TEXT);
	assert_int_equal(
	    accepted("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"),
	    METRICS_PROMETHEUS_TEXT);
	assert_int_equal(metrics_format_for_accept(NULL, 0), METRICS_PROMETHEUS_TEXT);
	assert_int_equal(metrics_format_for_accept("", 0), METRICS_PROMETHEUS_TEXT);
	/* Only the header's bytes are read: what follows it in the buffer is not. */
	assert_int_equal(
	    metrics_format_for_accept("text/plain;q=0.1, application/openmetrics-text", 16),
	    METRICS_PROMETHEUS_TEXT);
	assert_int_equal(accepted("text/plain; version=0.0.4"), METRICS_PROMETHEUS_TEXT);
	/* The higher q wins, whatever the order; at equal q the first. */
	assert_int_equal(accepted("application/openmetrics-text; version=1.0.0; q=0.5, "
				  "text/plain; q=0.9"),
			 METRICS_PROMETHEUS_TEXT);
	assert_int_equal(accepted("text/plain;q=0.2, Application/OpenMetrics-Text;q=0.3"),
			 METRICS_OPENMETRICS);
	assert_int_equal(accepted("application/openmetrics-text, text/plain"), METRICS_OPENMETRICS);
	/* A version it does not write, or q=0, is not asked for. */
	assert_int_equal(accepted("application/openmetrics-text;version=2.0.0"),
			 METRICS_PROMETHEUS_TEXT);
	assert_int_equal(accepted("application/openmetrics-text;q=0, text/plain"),
			 METRICS_PROMETHEUS_TEXT);
	assert_string_equal(metrics_content_type(METRICS_OPENMETRICS),
			    "application/openmetrics-text; version=1.0.0; charset=utf-8");
	assert_string_equal(metrics_content_type(METRICS_PROMETHEUS_TEXT),
			    "text/plain; version=0.0.4; charset=utf-8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_the_families_of_a_running_corral),
	    cmocka_unit_test(test_the_text_format_differs_only_in_metadata),
	    cmocka_unit_test(test_label_values_are_escaped),
	    cmocka_unit_test(test_the_exits_label_set_stays_bounded),
	    cmocka_unit_test_setup_teardown(test_usage_comes_from_the_cache_and_a_refresh_is_asked,
					    usage_set_up, usage_tear_down),
	    cmocka_unit_test(test_a_thousand_tasks),
	    cmocka_unit_test(test_the_format_a_scraper_asks_for),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
