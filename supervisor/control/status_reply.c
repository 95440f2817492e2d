#include "supervisor/control/status_reply.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/json_writer.h"
#include "base/units.h"
#include "supervisor/control/exec_session.h"
#include "supervisor/tasks/task_ready.h"
#include "supervisor/tasks/task_schedule.h"
#include "supervisor/tasks/task_usage.h"

/* Fields in the order the jansson tree had them, which clients' tests
 * compare by name, not by place. */

static void write_last_exit(struct json_writer *out, const struct runner *runner,
			    const struct ready_rule_facts *facts)
{
	if (!runner->has_exited) {
		jw_null(out);
		return;
	}
	const struct task_exit *exit = &runner->last_exit;
	char description[64];
	task_exit_describe(exit, description, sizeof(description));
	bool signaled = exit->kind == TASK_EXIT_SIGNAL;
	jw_object_open(out);
	jw_field_optional_int(out, "code", !signaled, exit->code);
	jw_field_cstring(out, "signal", signaled ? signal_name(exit->signal) : NULL);
	jw_field_bool(out, "failed", facts->last_exit_failed);
	/* corral stopped it (a stop, a restart, its group's stop). */
	jw_field_bool(out, "requested", facts->last_exit_requested);
	jw_field_bool(out, "oom_killed", task_exit_oom_killed(exit));
	jw_field_int(out, "oom_kills", exit->oom_kills);
	jw_field_cstring(out, "description", description);
	/* What followed it, and the config rule that decided. */
	jw_field_cstring(out, "decision", runner_decision(runner));
	jw_field_cstring(out, "decided_by", runner->exit_rule);
	jw_object_close(out);
}

/* Null without a cgroup, and null for a figure its cgroup cannot give (no
 * memory controller, ...). `age_ms`: how long ago it was read; every
 * figure and `age_ms` are null in a reply about many tasks when there is
 * no reading since the task's run began or ended and the reply's bound on
 * first readings is spent (task_usage.h). `memory_limit_bytes` is the
 * config's `resources.memory`, null without one. */
static void write_usage(struct json_writer *out, struct status_reply *reply, struct task *task,
			uint64_t now_ms)
{
	if (!task_cgroup_exists(&task->cgroup)) {
		jw_null(out);
		return;
	}
	uint64_t age_ms = 0;
	bool stale = false;
	const struct task_cgroup_stats *stats =
	    reply->recent_usage
		? task_usage_recent(task, now_ms, &age_ms)
		: task_usage_for_list(task, now_ms, &reply->first_reads_left, &age_ms, &stale);
	reply->stale_usage |= stale;
	static const struct task_cgroup_stats none; /* every has_ false: nulls */
	bool read = stats != NULL;
	if (!read)
		stats = &none;
	jw_object_open(out);
	jw_field_cstring(out, "cgroup", task->cgroup.path);
	jw_field_optional_int(out, "cpu_usec", stats->has_cpu, (int64_t)stats->cpu_usec);
	jw_field_optional_int(out, "memory_bytes", stats->has_memory,
			      (int64_t)stats->memory_current);
	jw_field_optional_int(out, "memory_peak_bytes", stats->has_memory_peak,
			      (int64_t)stats->memory_peak);
	uint64_t memory_limit = task->config->resources.memory;
	jw_field_optional_int(out, "memory_limit_bytes", memory_limit != 0, (int64_t)memory_limit);
	jw_field_optional_int(out, "pids", stats->has_pids, (int64_t)stats->pids_current);
	jw_field_optional_int(out, "age_ms", read, (int64_t)age_ms);
	jw_object_close(out);
}

/* How the task says it is ready: "systemd", "fd", "exec", or null
 * (started means ready). */
static const char *readiness_kind(const struct task_config *config)
{
	switch (readiness_of(config)->kind) {
	case READINESS_NOTIFY_SYSTEMD:
		return "systemd";
	case READINESS_NOTIFY_FD:
		return "fd";
	case READINESS_PROBE:
		return probe_kind_name(readiness_of(config)->probe.kind);
	case READINESS_LOG:
		return "log";
	case READINESS_NONE:
		break;
	}
	return NULL;
}

/* A probe's record of this run (or of the last run, until the next
 * begins); `last_result` and `at_ms_ago` are null until a run ended. The
 * object is left open for the caller's own fields. */
static void open_probe(struct json_writer *out, const struct probe_record *record, uint64_t now_ms)
{
	jw_object_open(out);
	jw_key(out, "last_result");
	if (record->has_result)
		jw_string(out, record->last_result, strlen(record->last_result));
	else
		jw_null(out);
	jw_field_optional_int(out, "at_ms_ago", record->has_result && now_ms >= record->at_ms,
			      (int64_t)(now_ms - record->at_ms));
	jw_field_int(out, "consecutive_failures", record->failures_in_a_row);
	jw_field_bool(out, "passed", record->has_result && record->passed);
}

static void write_probes(struct json_writer *out, const struct task *task, uint64_t now_ms)
{
	const struct task_config *config = task->config;
	jw_object_open(out);
	jw_key(out, "readiness");
	if (readiness_of(config)->kind == READINESS_PROBE && task->readiness.probes) {
		open_probe(out, &task->readiness.probes->readiness_record, now_ms);
		jw_object_close(out);
	} else {
		jw_null(out);
	}
	jw_key(out, "health");
	if (health_of(config)->probe.kind != PROBE_NONE && task->readiness.probes) {
		open_probe(out, &task->readiness.probes->health_record, now_ms);
		jw_field_int(out, "failures_to_restart", health_of(config)->failures);
		jw_object_close(out);
	} else {
		jw_null(out);
	}
	jw_object_close(out);
}

/* What a pending or dormant task waits for, in words, into `waiting`;
 * false when it waits for nothing. */
static bool describe_wait(const struct task *task, bool scheduled, uint64_t in_ms, char *waiting,
			  size_t size)
{
	const struct runner *runner = &task->runner;
	bool waits =
	    runner->state == TASK_PENDING && task_dependencies_describe_wait(task, waiting, size);
	if (scheduled && runner->state == TASK_DEAD) {
		char in[32];
		format_duration_ms(in_ms, in, sizeof(in));
		waits = snprintf(waiting, size, "its schedule: next run in %s", in) > 0;
	} else if (task_is_dormant(task)) {
		waits = snprintf(waiting, size, "corral start (autostart: false)") > 0;
	}
	return waits;
}

static void write_task(struct json_writer *out, struct status_reply *reply, struct task *task,
		       uint64_t now_ms)
{
	const struct runner *runner = &task->runner;
	bool alive = runner->state == TASK_STARTING || runner->state == TASK_RUNNING;
	/* What status --ready judges, written from the values /readyz judges
	 * (task_ready.h). */
	struct ready_rule_facts facts = task_ready_facts(task, now_ms);
	jw_object_open(out);
	jw_field_cstring(out, "name", task->config->name);
	jw_field_cstring(out, "task", task->config->full_name);
	jw_field_cstring(out, "stage", lifecycle_stage_name(task->config->stage));
	jw_field_cstring(out, "state", task_schedule_shown_state(task));
	/* A task behind a reaper has no pid to show until its command said
	 * its own (the "started" event waits for it too): one pid everywhere,
	 * never the reaper's for a moment. */
	jw_field_optional_int(out, "pid", task->pid > 0 && !task->started_unannounced,
			      task_command_pid(task));
	jw_field_optional_int(out, "reaper_pid",
			      task->pid > 0 && task->isolation && task->isolation->reaper_argv,
			      task->pid);
	jw_field_optional_int(out, "uptime_ms", alive, (int64_t)(now_ms - runner->started_at_ms));
	jw_field_int(out, "restarts", runner->restart_count);
	/* A scheduled task's runs, apart from its restarts (0 without one). */
	jw_field_int(out, "runs", runner->run_count);
	jw_field_bool(out, "failed", facts.failed);
	jw_field_bool(out, "ready", facts.ready);
	/* readiness.continuous: it was ready in this run, and is not now. */
	jw_field_bool(out, "ready_lost", facts.ready_lost);
	/* A rolling restart replaces it while its set keeps enough ready:
	 * status --ready does not count it (ready_rule.h). */
	jw_field_bool(out, "roll_covered", facts.roll_covered);
	jw_field_cstring(out, "readiness_kind", readiness_kind(task->config));
	jw_key(out, "probes");
	write_probes(out, task, now_ms);
	jw_key(out, "status_text");
	if (task->readiness.status_text && task->readiness.status_text[0])
		jw_string(out, task->readiness.status_text, strlen(task->readiness.status_text));
	else
		jw_null(out);
	jw_key(out, "last_exit");
	write_last_exit(out, runner, &facts);
	/* log.mode non-blocking: lines stdout could not take. */
	jw_field_int(out, "output_dropped_lines", (int64_t)task_dropped_lines(task));
	jw_key(out, "usage");
	write_usage(out, reply, task, now_ms);
	jw_field_optional_int(out, "next_restart_in_ms", facts.restart_pending,
			      (int64_t)(runner->next_start_ms - now_ms));
	uint64_t due_ms, in_ms;
	bool scheduled = task_schedule_next(task, &due_ms, &in_ms);
	char waiting[192];
	bool waits = describe_wait(task, scheduled, in_ms, waiting, sizeof(waiting));
	jw_field_cstring(out, "waiting_for", waits ? waiting : NULL);
	/* config `schedule:`: when the next run comes (seconds since the epoch). */
	jw_key(out, "next_run");
	if (scheduled)
		jw_real(out, (double)due_ms / 1000.0);
	else
		jw_null(out);
	jw_field_optional_int(out, "next_run_in_ms", scheduled, (int64_t)in_ms);
	if (task->services->exec_sessions) {
		jw_key(out, "exec_sessions");
		exec_sessions_of_task_write(task->services->exec_sessions, task, out);
	}
	jw_object_close(out);
}

/* Each task written with `instances:` in the scope, as a whole: its
 * instances as configured and now (`corral scale`), and its rolling
 * restart under way or last (null for none). Its instances are next to
 * each other in the group's order, the removed ones at the end. */
static void write_instance_sets(struct json_writer *out, const struct group *group,
				const struct control_scope *scope)
{
	jw_key(out, "instance_sets");
	jw_array_open(out);
	const char *last = NULL;
	for (size_t i = 0; i < group->task_count; i++) {
		const struct task *task = group->tasks[i];
		const char *set = task->config->instance_of;
		if (!set || task->removed || (last && strcmp(set, last) == 0) ||
		    !control_scope_includes(scope, task))
			continue;
		last = set;
		unsigned configured, now;
		group_instance_counts(group, set, &configured, &now);
		char name[160];
		snprintf(name, sizeof(name), "%s/%s", group->config->name, set);
		jw_object_open(out);
		jw_field_cstring(out, "task", name);
		jw_field_int(out, "configured", configured);
		jw_field_int(out, "instances", now);
		jw_field_bool(out, "scaled", configured != now);
		jw_key(out, "roll");
		const struct instance_roll *roll = instance_roll_of(group, set);
		if (roll)
			instance_roll_write(out, roll);
		else
			jw_null(out);
		jw_object_close(out);
	}
	/* Those corral scale took to 0: defined, no instance. */
	for (size_t i = 0; i < group->zero_sets.count; i++) {
		const struct zero_set *zero = &group->zero_sets.items[i];
		if (!control_scope_includes_group(scope, group) || scope->task ||
		    (scope->instances_of && strcmp(scope->instances_of, zero->task) != 0))
			continue;
		char name[160];
		snprintf(name, sizeof(name), "%s/%s", group->config->name, zero->task);
		jw_object_open(out);
		jw_field_cstring(out, "task", name);
		jw_field_int(out, "configured", zero->configured);
		jw_field_int(out, "instances", 0);
		jw_field_bool(out, "scaled", true);
		jw_key(out, "roll");
		jw_null(out);
		jw_object_close(out);
	}
	jw_array_close(out);
}

static void write_group(struct json_writer *out, struct status_reply *reply,
			const struct group *group, const struct control_scope *scope,
			uint64_t now_ms)
{
	jw_object_open(out);
	jw_field_cstring(out, "name", group->config->name);
	jw_field_cstring(out, "state", coordinator_state_name(group->coordinator.state));
	jw_field_bool(out, "stopping", group->stop_mode == GROUP_STOPPING);
	jw_field_bool(out, "finished", group->finished);
	jw_field_cstring(out, "on_failure",
			 group_failure_action_name(group->config->on_failure.action));
	jw_field_int(out, "failure_restarts", group->failure_restart_count);
	jw_field_cstring(out, "failure_decision",
			 group->failure_decision[0] ? group->failure_decision : NULL);
	jw_key(out, "tasks");
	jw_array_open(out);
	for (size_t i = 0; i < group->task_count; i++)
		if (control_scope_includes(scope, group->tasks[i]))
			write_task(out, reply, group->tasks[i], now_ms);
	jw_array_close(out);
	write_instance_sets(out, group, scope);
	jw_object_close(out);
}

/* {"pid", "version", "started_at", "uptime_ms", "upgrades", "restores"}:
 * the process whose death would matter, and how long it has run. */
static void write_self(struct json_writer *out, const struct status_self *self)
{
	uint64_t wall_now_ms = wall_clock_ms();
	jw_key(out, "corral");
	jw_object_open(out);
	jw_field_int(out, "pid", getpid());
	jw_field_cstring(out, "version", CORRAL_VERSION);
	jw_key(out, "started_at");
	jw_real(out, (double)self->started_wall_ms / 1000.0);
	jw_field_int(out, "uptime_ms",
		     wall_now_ms > self->started_wall_ms
			 ? (int64_t)(wall_now_ms - self->started_wall_ms)
			 : 0);
	jw_field_int(out, "upgrades", (int64_t)self->upgrades);
	jw_field_int(out, "restores", (int64_t)self->restores);
	jw_object_close(out);
}

char *status_reply_line(struct status_reply *reply, const struct status_self *self,
			struct group *const *groups, size_t group_count,
			const struct control_scope *scope, uint64_t now_ms, size_t *length,
			size_t *capacity)
{
	struct json_writer out;
	/* A task's object is about 550 bytes: room for one, or for the last
	 * reply, without reallocating. */
	jw_init(&out, reply->size_hint > 960 ? reply->size_hint + 64 : 1024);
	reply->first_reads_left = TASK_USAGE_FIRST_READS_MAX;
	jw_object_open(&out);
	jw_field_bool(&out, "ok", true);
	write_self(&out, self);
	jw_key(&out, "groups");
	jw_array_open(&out);
	for (size_t i = 0; i < group_count; i++)
		if (control_scope_includes_group(scope, groups[i]))
			write_group(&out, reply, groups[i], scope, now_ms);
	jw_array_close(&out);
	jw_object_close(&out);
	char *line = jw_take_line(&out, length, capacity);
	reply->size_hint = *length;
	return line;
}
