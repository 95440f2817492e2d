/* The status table. Every cell is computed first, then printed with
 * widths that fit them all; the reply comes from another program, so any
 * field may be missing or of the wrong type and still print something. */
#include "cli/status_table.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/units.h"
#include "base/xmalloc.h"

enum column {
	COLUMN_TASK,
	COLUMN_STAGE,
	COLUMN_STATE,
	COLUMN_READY,
	COLUMN_HEALTH,
	COLUMN_PID,
	COLUMN_UPTIME,
	COLUMN_CPU,
	COLUMN_MEMORY,
	COLUMN_PIDS,
	COLUMN_RESTARTS,
	COLUMN_LAST_EXIT,
	COLUMN_NEXT_RESTART,
	COLUMN_COUNT,
};

static const char *const column_titles[COLUMN_COUNT] = {
    "TASK", "STAGE", "STATE", "READY",    "HEALTH",    "PID",          "UPTIME",
    "CPU",  "MEM",   "PIDS",  "RESTARTS", "LAST EXIT", "NEXT RESTART",
};

/* Rows are indented under their group's header line. */
#define ROW_INDENT "  "
#define UNKNOWN    "?"
#define NONE       "-"

struct row {
	char *cells[COLUMN_COUNT];
};

void status_duration_format(uint64_t ms, char *buffer, size_t size)
{
	static const struct {
		const char *suffix;
		uint64_t ms;
	} units[] = {{"d", 86400000}, {"h", 3600000}, {"m", 60000}, {"s", 1000}};
	const size_t unit_count = sizeof(units) / sizeof(units[0]);

	if (ms < 1000) {
		snprintf(buffer, size, "%" PRIu64 "ms", ms);
		return;
	}
	for (size_t u = 0; u < unit_count; u++) {
		uint64_t count = ms / units[u].ms;

		if (!count)
			continue;
		uint64_t next = u + 1 < unit_count ? (ms % units[u].ms) / units[u + 1].ms : 0;

		if (next)
			snprintf(buffer, size, "%" PRIu64 "%s%" PRIu64 "%s", count, units[u].suffix,
				 next, units[u + 1].suffix);
		else
			snprintf(buffer, size, "%" PRIu64 "%s", count, units[u].suffix);
		return;
	}
}

static char *string_cell(const struct jv *value)
{
	return xstrdup(jv_is_string(value) ? jv_string(value) : UNKNOWN);
}

/* A count or a pid: null when there is none. */
static char *integer_cell(const struct jv *value)
{
	if (jv_is_null(value))
		return xstrdup(NONE);
	if (!jv_is_integer(value))
		return xstrdup(UNKNOWN);
	return xasprintf("%" PRId64, jv_integer(value));
}

static char *duration_cell(const struct jv *value, const char *prefix)
{
	char duration[32];

	if (jv_is_null(value))
		return xstrdup(NONE);
	if (!jv_is_integer(value) || jv_integer(value) < 0)
		return xstrdup(UNKNOWN);
	status_duration_format((uint64_t)jv_integer(value), duration, sizeof(duration));
	return xasprintf("%s%s", prefix, duration);
}

/* A figure of "usage"; "-" without a cgroup or without that figure. */
static const struct jv *usage_field(const struct jv *task, const char *name)
{
	const struct jv *usage = jv_get(task, "usage");
	return jv_is_object(usage) ? jv_get(usage, name) : NULL;
}

static char *cpu_cell(const struct jv *task)
{
	const struct jv *usec = usage_field(task, "cpu_usec");
	if (!usec || jv_is_null(usec))
		return xstrdup(NONE);
	if (!jv_is_integer(usec) || jv_integer(usec) < 0)
		return xstrdup(UNKNOWN);
	uint64_t ms = (uint64_t)jv_integer(usec) / 1000;
	if (ms < 60000) /* seconds, where tenths still matter */
		return xasprintf("%" PRIu64 ".%02" PRIu64 "s", ms / 1000, ms % 1000 / 10);
	char duration[32];
	status_duration_format(ms, duration, sizeof(duration));
	return xstrdup(duration);
}

/* A size figure of "usage" as "12.0M"; false when it is not one. */
static bool format_usage_size(const struct jv *task, const char *name, char *buffer, size_t size)
{
	const struct jv *value = usage_field(task, name);
	if (!jv_is_integer(value) || jv_integer(value) < 0)
		return false;
	format_size_bytes((uint64_t)jv_integer(value), buffer, size);
	return true;
}

/* "12.0M/64.0M": now, and the limit when the task has one, as `docker
 * stats` reads; the peak would read like a limit there, so it is in
 * --json and under the table of one task (status_table_write_memory). */
static char *memory_cell(const struct jv *task)
{
	const struct jv *current = usage_field(task, "memory_bytes");
	if (!current || jv_is_null(current))
		return xstrdup(NONE);
	char now[32], limit[32];
	if (!format_usage_size(task, "memory_bytes", now, sizeof(now)))
		return xstrdup(UNKNOWN);
	if (!format_usage_size(task, "memory_limit_bytes", limit, sizeof(limit)))
		return xstrdup(now);
	return xasprintf("%s/%s", now, limit);
}

static char *pids_cell(const struct jv *task)
{
	const struct jv *pids = usage_field(task, "pids");
	return pids ? integer_cell(pids) : xstrdup(NONE);
}

/* "code 1 (failed)", "SIGKILL", "code 0": "(failed)" marks an exit that
 * counted against the restart policy, so that an exit corral asked for
 * (a stop, a restart) does not look like a crash. */
/* " (failed, no_restart_exit)": whether it counted, and the list that
 * decided when one of the exit-code lists did. */
static char *exit_verdict(const struct jv *last_exit)
{
	bool failed = jv_is_true(jv_get(last_exit, "failed"));
	const struct jv *rule = jv_get(last_exit, "decided_by");
	const char *list = NULL;
	if (jv_is_string(rule) && strcmp(jv_string(rule), "restart.success_exit") == 0)
		list = "success_exit";
	if (jv_is_string(rule) && strcmp(jv_string(rule), "restart.no_restart_exit") == 0)
		list = "no_restart_exit";
	if (failed && list)
		return xasprintf(" (failed, %s)", list);
	if (failed || list)
		return xasprintf(" (%s)", failed ? "failed" : list);
	return xstrdup("");
}

static char *last_exit_cell(const struct jv *last_exit)
{
	const struct jv *code, *signal, *description;
	char *cell;

	if (!last_exit || jv_is_null(last_exit))
		return xstrdup(NONE);
	if (!jv_is_object(last_exit))
		return xstrdup(UNKNOWN);
	code = jv_get(last_exit, "code");
	signal = jv_get(last_exit, "signal");
	description = jv_get(last_exit, "description");
	char *verdict = exit_verdict(last_exit);
	if (jv_is_true(jv_get(last_exit, "oom_killed")))
		cell = xasprintf("OOM killed%s", verdict);
	else if (jv_is_integer(code))
		cell = xasprintf("code %" PRId64 "%s", jv_integer(code), verdict);
	else if (jv_is_string(signal))
		cell = xasprintf("%s%s", jv_string(signal), verdict);
	/* Neither: a start that failed, which its description says best. */
	else if (jv_is_string(description))
		cell = xstrdup(jv_string(description));
	else
		cell = xstrdup(UNKNOWN);
	free(verdict);
	return cell;
}

static bool is_running(const struct jv *task)
{
	const struct jv *state = jv_get(task, "state");
	return jv_is_string(state) && strcmp(jv_string(state), "running") == 0;
}

/* "yes" or "no" for a running task that declares readiness; "-" for one
 * that does not (started means ready) or has no process. */
static char *ready_cell(const struct jv *task)
{
	const struct jv *kind = jv_get(task, "readiness_kind");
	if (!is_running(task) || !kind || jv_is_null(kind))
		return xstrdup(NONE);
	const struct jv *ready = jv_get(task, "ready");
	if (!jv_is_boolean(ready))
		return xstrdup(UNKNOWN);
	return xstrdup(jv_is_true(ready) ? "yes" : "no");
}

/* A running task's health probe: "healthy" when its last run passed,
 * "unhealthy (2/3)" while failing (2 failures in a row, 3 restart it),
 * "starting" before its first run ends (it runs once the task is ready);
 * "-" without a probe or a process. */
static char *health_cell(const struct jv *task)
{
	const struct jv *probes = jv_get(task, "probes");
	const struct jv *health = jv_is_object(probes) ? jv_get(probes, "health") : NULL;
	if (!is_running(task) || !health || jv_is_null(health))
		return xstrdup(NONE);
	const struct jv *failures = jv_get(health, "consecutive_failures");
	const struct jv *limit = jv_get(health, "failures_to_restart");
	if (!jv_is_integer(failures))
		return xstrdup(UNKNOWN);
	if (jv_integer(failures) > 0 && jv_is_integer(limit))
		return xasprintf("unhealthy (%" PRId64 "/%" PRId64 ")", jv_integer(failures),
				 jv_integer(limit));
	if (jv_integer(failures) > 0)
		return xstrdup("unhealthy");
	return xstrdup(jv_is_true(jv_get(health, "passed")) ? "healthy" : "starting");
}

static void fill_row(struct row *row, const struct jv *task)
{
	const struct jv *name = jv_get(task, "name");

	/* "name" is the task within its group; fall back on "group/task". */
	if (!jv_is_string(name))
		name = jv_get(task, "task");
	row->cells[COLUMN_TASK] = string_cell(name);
	row->cells[COLUMN_STAGE] = string_cell(jv_get(task, "stage"));
	row->cells[COLUMN_STATE] = string_cell(jv_get(task, "state"));
	row->cells[COLUMN_READY] = ready_cell(task);
	row->cells[COLUMN_HEALTH] = health_cell(task);
	row->cells[COLUMN_PID] = integer_cell(jv_get(task, "pid"));
	row->cells[COLUMN_UPTIME] = duration_cell(jv_get(task, "uptime_ms"), "");
	row->cells[COLUMN_CPU] = cpu_cell(task);
	row->cells[COLUMN_MEMORY] = memory_cell(task);
	row->cells[COLUMN_PIDS] = pids_cell(task);
	row->cells[COLUMN_RESTARTS] = integer_cell(jv_get(task, "restarts"));
	row->cells[COLUMN_LAST_EXIT] = last_exit_cell(jv_get(task, "last_exit"));
	row->cells[COLUMN_NEXT_RESTART] = duration_cell(jv_get(task, "next_restart_in_ms"), "in ");
}

static void write_row(FILE *out, const char *const cells[COLUMN_COUNT],
		      const size_t widths[COLUMN_COUNT])
{
	static const char blanks[] = "                                ";
	fputs(ROW_INDENT, out);
	for (int c = 0; c < COLUMN_COUNT; c++) {
		size_t length = strlen(cells[c]);
		fwrite(cells[c], 1, length, out);
		/* No padding after the last column: no trailing blanks. Not
		 * printf's %-*s: 13,000 of them were a tenth of a 1000-task
		 * table's time. */
		if (c == COLUMN_COUNT - 1)
			break;
		for (size_t pad = widths[c] - length + 2; pad > 0;) {
			size_t some = pad < sizeof(blanks) - 1 ? pad : sizeof(blanks) - 1;
			fwrite(blanks, 1, some, out);
			pad -= some;
		}
	}
	fputc('\n', out);
}

static void write_group_header(FILE *out, const struct jv *group)
{
	const struct jv *name = jv_get(group, "name");
	const struct jv *state = jv_get(group, "state");

	fprintf(out, "%s  state: %s", jv_is_string(name) ? jv_string(name) : UNKNOWN,
		jv_is_string(state) ? jv_string(state) : UNKNOWN);
	if (jv_is_true(jv_get(group, "stopping")))
		fputs(", stopping", out);
	if (jv_is_true(jv_get(group, "finished")))
		fputs(", finished", out);
	/* The default, stop, goes without saying. */
	const struct jv *on_failure = jv_get(group, "on_failure");
	const struct jv *restarts = jv_get(group, "failure_restarts");
	if (jv_is_string(on_failure) && strcmp(jv_string(on_failure), "stop") != 0)
		fprintf(out, ", on_failure: %s", jv_string(on_failure));
	if (jv_is_integer(restarts) && jv_integer(restarts) > 0)
		fprintf(out, " (%" PRId64 " restart%s)", jv_integer(restarts),
			jv_integer(restarts) == 1 ? "" : "s");
	fputc('\n', out);
}

static const struct jv *group_tasks(const struct jv *group)
{
	const struct jv *tasks = jv_get(group, "tasks");

	return jv_is_array(tasks) ? tasks : NULL;
}

/* A scheduled task's line: "backup: next run at 03:30:00 (in 2m); 3 runs
 * so far", the time in this terminal's zone. false: not scheduled. */
static bool write_next_run(FILE *out, const char *name, const struct jv *task)
{
	const struct jv *next_run = jv_get(task, "next_run");
	const struct jv *in_ms = jv_get(task, "next_run_in_ms");
	if (!jv_is_number(next_run) || !jv_is_integer(in_ms) || jv_integer(in_ms) < 0)
		return false;
	time_t due = (time_t)jv_number(next_run);
	struct tm local;
	char at[16] = UNKNOWN, in[32];
	if (localtime_r(&due, &local))
		strftime(at, sizeof(at), "%H:%M:%S", &local);
	status_duration_format((uint64_t)jv_integer(in_ms), in, sizeof(in));
	const struct jv *runs = jv_get(task, "runs");
	int64_t run_count = jv_is_integer(runs) ? jv_integer(runs) : 0;
	fprintf(out, ROW_INDENT "%s: next run at %s (in %s); %" PRId64 " run%s so far\n", name, at,
		in, run_count, run_count == 1 ? "" : "s");
	return true;
}

/* Under the rows, what each pending task waits for ("app: waits for
 * stack/redis to be ready") and a scheduled task's next run: too long for
 * a column. */
static void write_waits(FILE *out, const struct jv *tasks)
{
	size_t t;
	const struct jv *task;
	jv_array_foreach(tasks, t, task)
	{
		const struct jv *waiting = jv_get(task, "waiting_for");
		const struct jv *name = jv_get(task, "name");
		if (!jv_is_string(name) || write_next_run(out, jv_string(name), task))
			continue;
		if (jv_is_string(waiting))
			fprintf(out, ROW_INDENT "%s: %s\n", jv_string(name), jv_string(waiting));
	}
}

/* Under the rows, each task written with `instances:` that is scaled
 * away from its config ("web: 5 instances (corral scale); the config
 * says 3"), and its rolling restart while it goes on or when it stopped
 * short ("web: rolling restart: 1 of 4 replaced, 1 at a time"); a roll
 * that was done is said by --json only. */
static void write_instance_sets(FILE *out, const struct jv *group)
{
	size_t i;
	const struct jv *set;
	jv_array_foreach(jv_get(group, "instance_sets"), i, set)
	{
		const char *task = jv_string(jv_get(set, "task"));
		const char *slash = task ? strchr(task, '/') : NULL;
		const char *name = slash ? slash + 1 : UNKNOWN;
		int64_t configured = jv_integer(jv_get(set, "configured"));
		int64_t now = jv_integer(jv_get(set, "instances"));
		if (jv_is_true(jv_get(set, "scaled")))
			fprintf(out,
				ROW_INDENT "%s: %" PRId64
					   " instance%s (corral scale); the config says "
					   "%" PRId64 "\n",
				name, now, now == 1 ? "" : "s", configured);
		const struct jv *roll = jv_get(set, "roll");
		const char *state = jv_string(jv_get(roll, "state"));
		if (state && strcmp(state, "rolling") == 0)
			fprintf(out,
				ROW_INDENT "%s: rolling restart: %" PRId64 " of %" PRId64
					   " replaced, %" PRId64 " at a time\n",
				name, jv_integer(jv_get(roll, "replaced")),
				jv_integer(jv_get(roll, "total")),
				jv_integer(jv_get(roll, "max_unavailable")));
		else if (state && strcmp(state, "stopped") == 0)
			fprintf(out, ROW_INDENT "%s: %s\n", name,
				jv_string(jv_get(roll, "message")) ?: "stopped");
	}
}

/* A list reply serves each task's last usage reading (task_usage.h): one
 * older than this is worth saying, as a line under the tables rather than
 * a column, since after a quiet spell every row has it. */
#define OLD_USAGE_MS 5000

/* "CPU, MEM, PIDS read up to 12s ago, not yet for 3 tasks (-): corral
 * reads them now; run `corral status` again for newer figures", when some
 * figures are old or missing; nothing when all are recent. */
static void write_usage_note(FILE *out, const struct jv *groups)
{
	uint64_t oldest_ms = 0;
	size_t unread = 0, g, t;
	const struct jv *group, *task;
	jv_array_foreach(groups, g, group)
	{
		if (!group_tasks(group))
			continue;
		jv_array_foreach(group_tasks(group), t, task)
		{
			const struct jv *usage = jv_get(task, "usage");
			const struct jv *age = jv_is_object(usage) ? jv_get(usage, "age_ms") : NULL;
			if (jv_is_integer(age) && jv_integer(age) > (int64_t)oldest_ms)
				oldest_ms = (uint64_t)jv_integer(age);
			unread += jv_is_object(usage) && jv_is_null(age);
		}
	}
	bool old = oldest_ms > OLD_USAGE_MS;
	if (!old && !unread)
		return;
	char said[96] = "", age[32];
	if (old) {
		status_duration_format(oldest_ms, age, sizeof(age));
		snprintf(said, sizeof(said), "read up to %s ago", age);
	}
	if (unread)
		snprintf(said + strlen(said), sizeof(said) - strlen(said), "%s %zu task%s (-)",
			 old ? ", not yet for" : "not read yet for", unread,
			 unread == 1 ? "" : "s");
	fprintf(out,
		"\nCPU, MEM, PIDS %s: corral reads them now; run `corral status` again for newer "
		"figures\n",
		said);
}

void status_table_write_memory(FILE *out, const struct jv *reply)
{
	const struct jv *groups = jv_get(reply, "groups"), *group, *task;
	size_t g, t;
	bool first = true;
	jv_array_foreach(groups, g, group)
	{
		if (!group_tasks(group))
			continue;
		jv_array_foreach(group_tasks(group), t, task)
		{
			char now[32], peak[32], limit[32];
			if (!format_usage_size(task, "memory_bytes", now, sizeof(now)))
				continue;
			if (first)
				fputc('\n', out); /* apart from the table */
			first = false;
			const char *name = jv_string(jv_get(task, "task"));
			fprintf(out, "%s memory: %s now", name ? name : UNKNOWN, now);
			if (format_usage_size(task, "memory_peak_bytes", peak, sizeof(peak)))
				fprintf(out, ", %s peak", peak);
			if (format_usage_size(task, "memory_limit_bytes", limit, sizeof(limit)))
				fprintf(out, ", %s limit", limit);
			else
				fprintf(out, ", no limit");
			fputc('\n', out);
		}
	}
}

/* corral itself, above the tables: "corral 0.1.0, pid 4242, up 1h2m
 * (since 2026-12-07 10:00:00), 0 restores, 1 upgrade", the time in this
 * terminal's zone; nothing from a corral that does not say. */
static void write_self(FILE *out, const struct jv *reply)
{
	const struct jv *self = jv_get(reply, "corral");
	if (!jv_is_object(self))
		return;
	const struct jv *version = jv_get(self, "version");
	const struct jv *pid = jv_get(self, "pid");
	const struct jv *started_at = jv_get(self, "started_at");
	const struct jv *uptime_ms = jv_get(self, "uptime_ms");
	fprintf(out, "corral %s, pid ", jv_is_string(version) ? jv_string(version) : UNKNOWN);
	if (jv_is_integer(pid))
		fprintf(out, "%" PRId64, jv_integer(pid));
	else
		fputs(UNKNOWN, out);
	if (jv_is_integer(uptime_ms) && jv_integer(uptime_ms) >= 0) {
		char up[32];
		status_duration_format((uint64_t)jv_integer(uptime_ms), up, sizeof(up));
		fprintf(out, ", up %s", up);
	}
	if (jv_is_number(started_at)) {
		time_t since = (time_t)jv_number(started_at);
		struct tm local;
		char at[32];
		if (localtime_r(&since, &local) &&
		    strftime(at, sizeof(at), "%Y-%m-%d %H:%M:%S", &local))
			fprintf(out, " (since %s)", at);
	}
	static const char *const counts[][2] = {{"restores", "restore"}, {"upgrades", "upgrade"}};
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		const struct jv *count = jv_get(self, counts[i][0]);
		if (jv_is_integer(count))
			fprintf(out, ", %" PRId64 " %s", jv_integer(count),
				jv_integer(count) == 1 ? counts[i][1] : counts[i][0]);
	}
	fputs("\n\n", out);
}

int status_table_write(FILE *out, const struct jv *reply)
{
	const struct jv *groups = jv_get(reply, "groups");
	const struct jv *group, *task;
	size_t widths[COLUMN_COUNT], row_count = 0, r = 0, g, t;
	struct row *rows;

	if (!jv_is_array(groups))
		return -1;
	jv_array_foreach(groups, g, group)
	{
		if (group_tasks(group))
			row_count += jv_array_size(group_tasks(group));
	}
	rows = xcalloc(row_count, sizeof(*rows));
	for (int c = 0; c < COLUMN_COUNT; c++)
		widths[c] = strlen(column_titles[c]);
	jv_array_foreach(groups, g, group)
	{
		if (!group_tasks(group))
			continue;
		jv_array_foreach(group_tasks(group), t, task)
		{
			fill_row(&rows[r], task);
			for (int c = 0; c < COLUMN_COUNT; c++)
				if (strlen(rows[r].cells[c]) > widths[c])
					widths[c] = strlen(rows[r].cells[c]);
			r++;
		}
	}

	write_self(out, reply);
	r = 0;
	jv_array_foreach(groups, g, group)
	{
		size_t task_count = group_tasks(group) ? jv_array_size(group_tasks(group)) : 0;

		if (g > 0)
			fputc('\n', out);
		write_group_header(out, group);
		if (task_count == 0) {
			fputs(ROW_INDENT "(no tasks)\n", out);
			/* A task corral scale took to 0 is still there. */
			write_instance_sets(out, group);
			continue;
		}
		write_row(out, column_titles, widths);
		for (t = 0; t < task_count; t++, r++)
			write_row(out, (const char *const *)rows[r].cells, widths);
		write_waits(out, group_tasks(group));
		write_instance_sets(out, group);
		const struct jv *decision = jv_get(group, "failure_decision");
		if (jv_is_string(decision))
			fprintf(out, ROW_INDENT "last failure: %s\n", jv_string(decision));
	}

	write_usage_note(out, groups);

	for (r = 0; r < row_count; r++)
		for (int c = 0; c < COLUMN_COUNT; c++)
			free(rows[r].cells[c]);
	free(rows);
	return 0;
}
