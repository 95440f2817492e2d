#include "supervisor/metrics/metrics_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/text_buffer.h"
#include "base/units.h"
#include "base/xmalloc.h"
#include "supervisor/tasks/task_schedule.h"
#include "supervisor/tasks/task_usage.h"

/* Names follow Prometheus' naming guide: corral_ and what it is about
 * (task, group), base units in the name (_seconds, _bytes), counters
 * ending in _total. Labels: group and task, and task_instance for an
 * instance ("worker@2" is task="worker",task_instance="2"), so that a sum
 * by task needs no label_replace; and only label sets bounded by corral's
 * own lists (states, commands, probes, exit kinds: exit_tally.h). Not
 * `instance`: Prometheus sets that label to the scraped target, and would
 * rename ours exported_instance (or, with honor_labels, lose the target's). */

/* What a family's pass needs of one task, worked out once a scrape: its
 * labels as written, and its usage reading. */
struct task_row {
	size_t labels_at, labels_length; /* in writer.labels */
	const struct task_cgroup_stats *usage;
};

struct writer {
	struct text_buffer out;
	bool openmetrics;
	uint64_t now_ms, wall_now_ms;
	size_t first_reads_left; /* task_usage_for_list */
	bool stale_usage;
	/* `{group="G",task="T"` (and `,task_instance="N"`) of every task, in
	 * the order each_task takes them; rows[row] is the task at hand. */
	struct text_buffer labels;
	struct task_row *rows;
	size_t row;
};

#define put_literal(writer, literal) text_buffer_put_literal(&(writer)->out, literal)

static void put_text(struct writer *writer, const char *text)
{
	text_buffer_put(&writer->out, text, strlen(text));
}

/* A label value between its quotes: backslash, double quote and line
 * feed escaped, as both formats want. Values are corral's names (of its
 * own alphabet, base/names.h), a version and words from its own lists:
 * all ASCII, so the UTF-8 OpenMetrics requires holds. */
static void put_escaped(struct text_buffer *out, const char *value, size_t length)
{
	text_buffer_reserve(out, 2 * length);
	for (size_t i = 0; i < length; i++) {
		char c = value[i];
		if (c == '\\' || c == '"' || c == '\n') {
			out->text[out->length++] = '\\';
			c = c == '\n' ? 'n' : c;
		}
		out->text[out->length++] = c;
	}
}

static void put_label_value(struct writer *writer, const char *value)
{
	put_escaped(&writer->out, value, strlen(value));
}

enum family_type { GAUGE, COUNTER, INFO };

/* A family's metadata. `name` is its OpenMetrics name, which a counter's
 * and an info's samples extend with _total and _info; in the text format
 * the family takes its samples' name, and an info is a gauge. `unit` (or
 * NULL) ends `name`, as OpenMetrics requires. `help` has no backslash,
 * quote or line feed, which the two formats escape differently. */
static void family(struct writer *writer, const char *name, enum family_type type, const char *unit,
		   const char *help)
{
	static const char *const suffixes[] = {
	    [GAUGE] = "", [COUNTER] = "_total", [INFO] = "_info"};
	static const char *const types[] = {
	    [GAUGE] = "gauge", [COUNTER] = "counter", [INFO] = "info"};
	const char *suffix = writer->openmetrics ? "" : suffixes[type];
	const char *type_name = !writer->openmetrics && type == INFO ? "gauge" : types[type];
	put_literal(writer, "# HELP ");
	put_text(writer, name);
	put_text(writer, suffix);
	text_buffer_put_char(&writer->out, ' ');
	put_text(writer, help);
	put_literal(writer, "\n# TYPE ");
	put_text(writer, name);
	put_text(writer, suffix);
	text_buffer_put_char(&writer->out, ' ');
	put_text(writer, type_name);
	text_buffer_put_char(&writer->out, '\n');
	if (unit && writer->openmetrics) {
		put_literal(writer, "# UNIT ");
		put_text(writer, name);
		text_buffer_put_char(&writer->out, ' ');
		put_text(writer, unit);
		text_buffer_put_char(&writer->out, '\n');
	}
}

/* `name{label="value"` (the sample's name, its first label). */
static void open_sample(struct writer *writer, const char *name, const char *label,
			const char *value)
{
	put_text(writer, name);
	text_buffer_put_char(&writer->out, '{');
	put_text(writer, label);
	put_literal(writer, "=\"");
	put_label_value(writer, value);
	text_buffer_put_char(&writer->out, '"');
}

/* `,label="value"` */
static void add_label(struct writer *writer, const char *label, const char *value)
{
	text_buffer_put_char(&writer->out, ',');
	put_text(writer, label);
	put_literal(writer, "=\"");
	put_label_value(writer, value);
	text_buffer_put_char(&writer->out, '"');
}

static void close_sample(struct writer *writer, uint64_t value)
{
	put_literal(writer, "} ");
	text_buffer_put_uint(&writer->out, value);
	text_buffer_put_char(&writer->out, '\n');
}

/* `value` / 10^`decimals`: milliseconds and microseconds as seconds. */
static void close_sample_fixed(struct writer *writer, uint64_t value, unsigned decimals)
{
	put_literal(writer, "} ");
	text_buffer_put_fixed(&writer->out, value, decimals);
	text_buffer_put_char(&writer->out, '\n');
}

/* `name value`, without labels. */
static void plain_sample(struct writer *writer, const char *name, uint64_t value)
{
	put_text(writer, name);
	text_buffer_put_char(&writer->out, ' ');
	text_buffer_put_uint(&writer->out, value);
	text_buffer_put_char(&writer->out, '\n');
}

/* `name{group="G",task="T"`: the task's labels as worked out for this
 * scrape. `name` is a literal. */
#define open_task_sample(writer, name, task) open_task_sample_of(writer, name, sizeof(name) - 1)

static void open_task_sample_of(struct writer *writer, const char *name, size_t length)
{
	const struct task_row *row = &writer->rows[writer->row];
	text_buffer_reserve(&writer->out, length + row->labels_length);
	memcpy(writer->out.text + writer->out.length, name, length);
	memcpy(writer->out.text + writer->out.length + length, writer->labels.text + row->labels_at,
	       row->labels_length);
	writer->out.length += length + row->labels_length;
}

#define task_sample(writer, name, task, value)                                                     \
	do {                                                                                       \
		open_task_sample(writer, name, task);                                              \
		close_sample(writer, value);                                                       \
	} while (0)

/* `{group="G",task="T"` and, for an instance, `,task_instance="N"`. */
static void put_task_labels(struct text_buffer *out, const struct task *task)
{
	const struct task_config *config = task->config;
	text_buffer_put_literal(out, "{group=\"");
	const char *group = task->group->config->name;
	put_escaped(out, group, strlen(group));
	text_buffer_put_literal(out, "\",task=\"");
	const char *name = config->instance_of ? config->instance_of : config->name;
	put_escaped(out, name, strlen(name));
	text_buffer_put_char(out, '"');
	if (config->instance_of) {
		text_buffer_put_literal(out, ",task_instance=\"");
		text_buffer_put_uint(out, config->instance);
		text_buffer_put_char(out, '"');
	}
}

/* A family's samples are written together: a family per pass over the
 * tasks. */
typedef void write_task_samples(struct writer *writer, struct task *task);

static void each_task(struct writer *writer, const struct metrics_source *source,
		      write_task_samples *write)
{
	writer->row = 0;
	for (size_t g = 0; g < source->group_count; g++)
		for (size_t t = 0; t < source->groups[g]->task_count; t++, writer->row++)
			write(writer, source->groups[g]->tasks[t]);
}

/* ---- corral ---- */

static void write_corral(struct writer *writer, const struct metrics_source *source)
{
	const struct corral_counters *counters = source->counters;
	static const struct corral_counters none;
	if (!counters)
		counters = &none;

	family(writer, "corral_up", GAUGE, NULL, "1 while corral's loop turns.");
	plain_sample(writer, "corral_up", 1);
	family(writer, "corral_build", INFO, NULL, "The corral that runs.");
	open_sample(writer, "corral_build_info", "version", CORRAL_VERSION);
	close_sample(writer, 1);
	family(writer, "corral_start_time_seconds", GAUGE, "seconds",
	       "When corral started, in seconds since the Unix epoch.");
	put_literal(writer, "corral_start_time_seconds ");
	text_buffer_put_fixed(&writer->out, source->started_wall_ms, 3); /* ms as seconds */
	text_buffer_put_char(&writer->out, '\n');

	family(writer, "corral_loop_longest_turn_seconds", GAUGE, "seconds",
	       "The longest turn of corral's event loop since this process started: "
	       "while it turns, nothing else is served.");
	put_literal(writer, "corral_loop_longest_turn_seconds ");
	text_buffer_put_fixed(&writer->out, source->longest_loop_turn_us, 6); /* us as s */
	text_buffer_put_char(&writer->out, '\n');

	family(writer, "corral_reloads", COUNTER, NULL,
	       "Config reloads (SIGHUP, corral reload) by result: succeeded (applied, "
	       "in whole or in part) or failed (refused).");
	open_sample(writer, "corral_reloads_total", "result", "succeeded");
	close_sample(writer, counters->reloads_succeeded);
	open_sample(writer, "corral_reloads_total", "result", "failed");
	close_sample(writer, counters->reloads_failed);

	family(writer, "corral_control_requests", COUNTER, NULL,
	       "Requests run on the control socket, by command.");
	for (unsigned i = 0; i < CONTROL_COMMAND_COUNT; i++) {
		open_sample(writer, "corral_control_requests_total", "command",
			    control_command_name((enum control_command)i));
		close_sample(writer, counters->control_requests[i]);
	}

	family(writer, "corral_output_dropped_lines", COUNTER, NULL,
	       "Task output lines dropped because corral's stdout was gone.");
	plain_sample(writer, "corral_output_dropped_lines_total", source->output_dropped_lines);
	family(writer, "corral_output_buffered_bytes", GAUGE, "bytes",
	       "Task output waiting in corral for its stdout to take it.");
	plain_sample(writer, "corral_output_buffered_bytes", source->output_buffered_bytes);
	size_t held = 0;
	for (size_t g = 0; g < source->group_count; g++)
		for (size_t t = 0; t < source->groups[g]->task_count; t++) {
			const struct task *task = source->groups[g]->tasks[t];
			held += task->output.paused ||
				(task->error_output && task->error_output->paused);
		}
	family(writer, "corral_output_held_tasks", GAUGE, NULL,
	       "Tasks whose output waits for corral's stdout to take it: they block in "
	       "write until it does.");
	plain_sample(writer, "corral_output_held_tasks", held);
	family(writer, "corral_starts_put_off", COUNTER, NULL,
	       "Task starts put off because corral was short of a resource (fds, "
	       "processes, memory): tried again, not counted as restarts.");
	plain_sample(writer, "corral_starts_put_off_total", source->starts_put_off);
}

/* ---- groups ---- */

static void write_groups(struct writer *writer, const struct metrics_source *source)
{
	static const enum coordinator_state states[] = {
	    COORDINATOR_INIT,      COORDINATOR_PRESTART,   COORDINATOR_MAIN,
	    COORDINATOR_POSTSTART, COORDINATOR_WAIT_ALLOC, COORDINATOR_POSTSTOP,
	};
	family(writer, "corral_group_state", GAUGE, NULL,
	       "1 for the lifecycle state the group is in (corral status' group state), 0 "
	       "for the others.");
	for (size_t g = 0; g < source->group_count; g++) {
		const struct group *group = source->groups[g];
		for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
			open_sample(writer, "corral_group_state", "group", group->config->name);
			add_label(writer, "state", coordinator_state_name(states[i]));
			close_sample(writer, group->coordinator.state == states[i]);
		}
	}
	family(writer, "corral_group_restarts", COUNTER, NULL,
	       "Restarts of the whole group that on_failure: restart made.");
	for (size_t g = 0; g < source->group_count; g++) {
		open_sample(writer, "corral_group_restarts_total", "group",
			    source->groups[g]->config->name);
		close_sample(writer, source->groups[g]->failure_restart_count);
	}
}

/* ---- tasks ---- */

/* corral status' task states. */
static const char *const task_states[] = {"pending",  "starting", "running",
					  "stopping", "waiting",  "dead"};

static void write_task_state(struct writer *writer, struct task *task)
{
	const char *shown = task_schedule_shown_state(task);
	for (size_t i = 0; i < sizeof(task_states) / sizeof(task_states[0]); i++) {
		open_task_sample(writer, "corral_task_state", task);
		add_label(writer, "state", task_states[i]);
		close_sample(writer, strcmp(shown, task_states[i]) == 0);
	}
}

static void write_task_ready(struct writer *writer, struct task *task)
{
	task_sample(writer, "corral_task_ready", task, runner_shown_ready(&task->runner));
}

static void write_task_healthy(struct writer *writer, struct task *task)
{
	if (health_of(task->config)->probe.kind != PROBE_NONE)
		task_sample(writer, "corral_task_healthy", task, task->runner.healthy);
}

static void write_task_failed(struct writer *writer, struct task *task)
{
	task_sample(writer, "corral_task_failed", task, task->runner.failed);
}

static void write_task_restarts(struct writer *writer, struct task *task)
{
	task_sample(writer, "corral_task_restarts_total", task, task->runner.restart_count);
}

static void write_task_exits(struct writer *writer, struct task *task)
{
	const struct exit_tally *tally = task->runner.exits;
	if (!tally)
		return;
	char code[16];
	for (unsigned i = 0; i < tally->slot_count; i++) {
		const struct exit_tally_slot *slot = &tally->slots[i];
		open_task_sample(writer, "corral_task_exits_total", task);
		if (slot->signaled) {
			add_label(writer, "signal", signal_name(slot->value));
		} else {
			snprintf(code, sizeof(code), "%d", slot->value);
			add_label(writer, "code", code);
		}
		close_sample(writer, slot->count);
	}
	if (tally->other_codes) {
		open_task_sample(writer, "corral_task_exits_total", task);
		add_label(writer, "code", "other");
		close_sample(writer, tally->other_codes);
	}
	if (tally->other_signals) {
		open_task_sample(writer, "corral_task_exits_total", task);
		add_label(writer, "signal", "other");
		close_sample(writer, tally->other_signals);
	}
}

static void write_task_start_failures(struct writer *writer, struct task *task)
{
	const struct exit_tally *tally = task->runner.exits;
	task_sample(writer, "corral_task_start_failures_total", task,
		    tally ? tally->start_failures : 0);
}

static void write_task_oom_kills(struct writer *writer, struct task *task)
{
	task_sample(writer, "corral_task_oom_kills_total", task,
		    task_counts_seen(task) ? task_counts_seen(task)->oom_kills : 0);
}

static void write_task_probe_failures(struct writer *writer, struct task *task)
{
	const struct task_counts *counts = task_counts_seen(task);
	if (readiness_of(task->config)->kind == READINESS_PROBE) {
		open_task_sample(writer, "corral_task_probe_failures_total", task);
		add_label(writer, "probe", "readiness");
		close_sample(writer, counts ? counts->readiness_probe_failures : 0);
	}
	if (health_of(task->config)->probe.kind != PROBE_NONE) {
		open_task_sample(writer, "corral_task_probe_failures_total", task);
		add_label(writer, "probe", "health");
		close_sample(writer, counts ? counts->health_probe_failures : 0);
	}
}

/* While a run is under way: when it began, on the wall clock. */
static void write_task_start_time(struct writer *writer, struct task *task)
{
	const struct runner *runner = &task->runner;
	if (runner->state != TASK_STARTING && runner->state != TASK_RUNNING)
		return;
	uint64_t ago =
	    writer->now_ms > runner->started_at_ms ? writer->now_ms - runner->started_at_ms : 0;
	open_task_sample(writer, "corral_task_start_time_seconds", task);
	close_sample_fixed(writer, writer->wall_now_ms > ago ? writer->wall_now_ms - ago : 0, 3);
}

/* Its last usage reading, as a status of many tasks serves it; NULL
 * without a cgroup, or without a reading once the first reads are
 * spent. Asked once a scrape, for the four families that show it. */
static const struct task_cgroup_stats *read_usage(struct writer *writer, struct task *task)
{
	if (!task_cgroup_exists(&task->cgroup))
		return NULL;
	uint64_t age_ms;
	bool stale = false;
	const struct task_cgroup_stats *stats =
	    task_usage_for_list(task, writer->now_ms, &writer->first_reads_left, &age_ms, &stale);
	writer->stale_usage |= stale;
	return stats;
}

static const struct task_cgroup_stats *usage_of(struct writer *writer, struct task *task)
{
	(void)task;
	return writer->rows[writer->row].usage;
}

static void write_task_cpu(struct writer *writer, struct task *task)
{
	const struct task_cgroup_stats *stats = usage_of(writer, task);
	if (stats && stats->has_cpu) {
		open_task_sample(writer, "corral_task_cpu_seconds_total", task);
		close_sample_fixed(writer, stats->cpu_usec, 6);
	}
}

static void write_task_memory(struct writer *writer, struct task *task)
{
	const struct task_cgroup_stats *stats = usage_of(writer, task);
	if (stats && stats->has_memory)
		task_sample(writer, "corral_task_memory_bytes", task, stats->memory_current);
}

static void write_task_memory_peak(struct writer *writer, struct task *task)
{
	const struct task_cgroup_stats *stats = usage_of(writer, task);
	if (stats && stats->has_memory_peak)
		task_sample(writer, "corral_task_memory_peak_bytes", task, stats->memory_peak);
}

static void write_task_memory_limit(struct writer *writer, struct task *task)
{
	if (task->config->resources.memory)
		task_sample(writer, "corral_task_memory_limit_bytes", task,
			    task->config->resources.memory);
}

static void write_task_pids(struct writer *writer, struct task *task)
{
	const struct task_cgroup_stats *stats = usage_of(writer, task);
	if (stats && stats->has_pids)
		task_sample(writer, "corral_task_pids", task, stats->pids_current);
}

static void write_task_dropped_lines(struct writer *writer, struct task *task)
{
	task_sample(writer, "corral_task_output_dropped_lines_total", task,
		    task_dropped_lines(task));
}

static void write_task_lost_log_lines(struct writer *writer, struct task *task)
{
	if (task->config->log_dir)
		task_sample(writer, "corral_task_log_lost_lines_total", task,
			    task_lost_log_lines(task));
}

struct task_family {
	const char *name;
	enum family_type type;
	const char *unit;
	const char *help;
	write_task_samples *write;
};

static const struct task_family task_families[] = {
    {"corral_task_state", GAUGE, NULL,
     "1 for the state the task is in (corral status' STATE), 0 for the others.", write_task_state},
    {"corral_task_ready", GAUGE, NULL,
     "1 while the task is ready (its readiness said so, and it is not being stopped).",
     write_task_ready},
    {"corral_task_healthy", GAUGE, NULL,
     "1 once its health probe passed in the current run (tasks with health: only).",
     write_task_healthy},
    {"corral_task_failed", GAUGE, NULL, "1 once the task failed for good.", write_task_failed},
    {"corral_task_restarts", COUNTER, NULL,
     "Runs of the task after its first: its restart policy's, requested ones, its "
     "group's restarts (corral status' RESTARTS).",
     write_task_restarts},
    {"corral_task_exits", COUNTER, NULL,
     "Exits of the task's main process, by exit code or signal: the first 8 kinds seen "
     "have their own series, later ones count as other.",
     write_task_exits},
    {"corral_task_start_failures", COUNTER, NULL,
     "Starts that failed before the program ran: not found, not executable, a setup "
     "step or prestart hook failed.",
     write_task_start_failures},
    {"corral_task_oom_kills", COUNTER, NULL,
     "Processes of the task the kernel's OOM killer killed.", write_task_oom_kills},
    {"corral_task_probe_failures", COUNTER, NULL,
     "Failed runs of the task's readiness and health probes.", write_task_probe_failures},
    {"corral_task_start_time_seconds", GAUGE, "seconds",
     "When the task's current run began, in seconds since the Unix epoch (while it "
     "runs).",
     write_task_start_time},
    {"corral_task_cpu_seconds", COUNTER, "seconds",
     "CPU time of the task's cgroup (cpu.stat usage_usec), as last read.", write_task_cpu},
    {"corral_task_memory_bytes", GAUGE, "bytes",
     "Memory of the task's cgroup (memory.current), as last read.", write_task_memory},
    {"corral_task_memory_peak_bytes", GAUGE, "bytes",
     "Highest memory of the task's cgroup (memory.peak), as last read.", write_task_memory_peak},
    {"corral_task_memory_limit_bytes", GAUGE, "bytes",
     "The task's memory limit (resources.memory; tasks with one only).", write_task_memory_limit},
    {"corral_task_pids", GAUGE, NULL,
     "Processes and threads in the task's cgroup (pids.current), as last read.", write_task_pids},
    {"corral_task_output_dropped_lines", COUNTER, NULL,
     "Output lines of the task dropped from corral's stdout (log.mode: non-blocking).",
     write_task_dropped_lines},
    {"corral_task_log_lost_lines", COUNTER, NULL,
     "Output lines its log file could not take (tasks with log.dir only).",
     write_task_lost_log_lines},
};

/* ---- the whole ---- */

/* Measured: about 1 KB a task in OpenMetrics (docs/metrics.md). */
#define BYTES_PER_TASK 1280

char *metrics_text(const struct metrics_source *source, uint64_t now_ms, size_t *length)
{
	size_t tasks = 0;
	for (size_t g = 0; g < source->group_count; g++)
		tasks += source->groups[g]->task_count;
	struct writer writer = {
	    .openmetrics = source->format == METRICS_OPENMETRICS,
	    .now_ms = now_ms,
	    .wall_now_ms = source->wall_now_ms ? source->wall_now_ms : wall_clock_ms(),
	    .first_reads_left = TASK_USAGE_FIRST_READS_MAX,
	};
	text_buffer_init(&writer.out, 4096 + tasks * BYTES_PER_TASK);
	text_buffer_init(&writer.labels, 64 + tasks * 48);
	writer.rows = xcalloc(tasks + 1, sizeof(*writer.rows));
	for (size_t g = 0, row = 0; g < source->group_count; g++)
		for (size_t t = 0; t < source->groups[g]->task_count; t++, row++) {
			struct task *task = source->groups[g]->tasks[t];
			writer.rows[row].labels_at = writer.labels.length;
			put_task_labels(&writer.labels, task);
			writer.rows[row].labels_length =
			    writer.labels.length - writer.rows[row].labels_at;
			writer.rows[row].usage = read_usage(&writer, task);
		}
	write_corral(&writer, source);
	write_groups(&writer, source);
	for (size_t i = 0; i < sizeof(task_families) / sizeof(task_families[0]); i++) {
		const struct task_family *task_family = &task_families[i];
		family(&writer, task_family->name, task_family->type, task_family->unit,
		       task_family->help);
		each_task(&writer, source, task_family->write);
	}
	if (writer.openmetrics)
		put_literal(&writer, "# EOF\n");
	free(writer.rows);
	free(writer.labels.text);
	if (writer.stale_usage && source->usage_stale)
		source->usage_stale(source->context);
	return text_buffer_take(&writer.out, length, NULL);
}
