/* A group's `on_failure` rule: what a task's failure for good does to its
 * group (stop it, restart it within a bound, leave the task dead, or stop
 * it and have corral exit), and
 * when such a failure gives corral's exit code. */
#include "supervisor/tasks/group_failure.h"

#include <stdarg.h>
#include <stdio.h>

#include "base/units.h"

/* The failure for good the group acts on: a task that failed by itself
 * before one that only waited for a failed task. Poststop tasks never
 * count: the group is over by then. */
static struct task *failed_task(struct group *group)
{
	struct task *by_dependency = NULL;
	for (size_t i = 0; i < group->task_count; i++) {
		struct task *task = group->tasks[i];
		/* A scheduled run that failed is said, and the next one comes:
		 * each run is a job of its own. */
		if (task->config->stage == STAGE_POSTSTOP || task->runner.state != TASK_DEAD ||
		    !task->runner.failed || task->config->schedule.set)
			continue;
		if (!task->failed_by_dependency)
			return task;
		if (!by_dependency)
			by_dependency = task;
	}
	return by_dependency;
}

/* on_failure gives up on a failure it did not let stop the group at once:
 * now it gives corral's exit code, as under `stop`. */
static void report_failure(struct group *group, struct task *task)
{
	/* A scheduled run's failure is its own: said in its events, it makes
	 * neither the group nor corral fail. */
	if (task->failure_reported || task->config->schedule.set)
		return;
	task->failure_reported = true;
	group->services->task_failed_for_good(group->services, task);
}

static void decide_on_failure(struct group *group, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

static void decide_on_failure(struct group *group, const char *format, ...)
{
	va_list args;
	va_start(args, format);
	vsnprintf(group->failure_decision, sizeof(group->failure_decision), format, args);
	va_end(args);
}

/* on_failure: restart, within its bound; past it, or when a restart
 * cannot help (what failed waits for another group), the group stops. */
static void restart_after_failure(struct group *group, struct task *task, const char *reason,
				  uint64_t now_ms)
{
	const struct group_failure_policy *rule = &group->config->on_failure;
	char interval[32];
	format_duration_ms(rule->interval_ms, interval, sizeof(interval));
	if (task->failed_by_dependency) {
		decide_on_failure(group,
				  "%s; on_failure: restart cannot help: what it waits for "
				  "is in another group",
				  reason);
		report_failure(group, task);
		group_begin_stop(group, GROUP_STOPPING, group->failure_decision);
		return;
	}
	const struct restart_policy bound = {
	    .policy = RESTART_ALWAYS,
	    .attempts = rule->attempts,
	    .interval_ms = rule->interval_ms,
	    .mode = RESTART_MODE_FAIL,
	};
	struct restart_decision decision =
	    restart_tracker_decide(&group->failure_restarts, &bound, true, now_ms);
	if (decision.verdict != RESTART_VERDICT_RESTART) {
		decide_on_failure(group, "%s; on_failure: restart: %u restart%s within %s spent",
				  reason, rule->attempts, rule->attempts == 1 ? "" : "s", interval);
		report_failure(group, task);
		group_begin_stop(group, GROUP_STOPPING, group->failure_decision);
		return;
	}
	group->failure_restart_count++;
	decide_on_failure(group, "%s; on_failure: restart (restart %u of %u within %s)", reason,
			  decision.attempt, decision.attempts, interval);
	group_begin_restart_all(group, group->failure_decision);
}

/* on_failure: ignore: said once per failure; the failed task stays dead
 * and the rest of the group goes on. */
static void ignore_failures(struct group *group)
{
	for (size_t i = 0; i < group->task_count; i++) {
		struct task *task = group->tasks[i];
		bool failed = task->runner.state == TASK_DEAD && task->runner.failed &&
			      task->config->stage != STAGE_POSTSTOP;
		if (!failed || task->failure_ignored) {
			task->failure_ignored = failed;
			continue;
		}
		task->failure_ignored = true;
		decide_on_failure(group,
				  "%s failed for good (%s); on_failure: ignore: the other "
				  "tasks go on",
				  task->config->full_name, runner_failure(&task->runner));
		event_log_group(group->services->events, group->config->name,
				group_event_type_name(GROUP_EVENT_FAILURE_IGNORED),
				group->failure_decision);
	}
}

/* A task failed for good: the group's on_failure rule decides. True when
 * the group stops or restarts. */
bool group_react_to_failure(struct group *group, uint64_t now_ms)
{
	struct task *task = failed_task(group);
	if (!task)
		return false;
	char reason[sizeof(group->stop_reason)];
	if (runner_failure(&task->runner)[0])
		snprintf(reason, sizeof(reason), "%s failed for good (%s)", task->config->full_name,
			 runner_failure(&task->runner));
	else
		snprintf(reason, sizeof(reason), "%s failed for good", task->config->full_name);
	switch (group->config->on_failure.action) {
	case GROUP_ON_FAILURE_STOP:
		group_begin_stop(group, GROUP_STOPPING, reason);
		return true;
	case GROUP_ON_FAILURE_RESTART:
		restart_after_failure(group, task, reason, now_ms);
		return true;
	case GROUP_ON_FAILURE_IGNORE:
		ignore_failures(group);
		return false;
	case GROUP_ON_FAILURE_EXIT:
		/* The group stops as under `stop`; corral hears of the failure
		 * (group_note_failures) and stops every other group too. */
		decide_on_failure(group,
				  "%s; on_failure: exit: corral stops every group and exits with "
				  "its code",
				  reason);
		group_begin_stop(group, GROUP_STOPPING, reason);
		return true;
	}
	return false;
}

/* Whether a failure for good gives corral's exit code at once: under
 * on_failure stop (and for poststop tasks, which no restart follows);
 * never under ignore; under restart only once the group gives up. */
static bool failure_counts_at_once(const struct group *group, const struct task *task)
{
	switch (group->config->on_failure.action) {
	case GROUP_ON_FAILURE_STOP:
	case GROUP_ON_FAILURE_EXIT:
		return true;
	case GROUP_ON_FAILURE_RESTART:
		return task->config->stage == STAGE_POSTSTOP;
	case GROUP_ON_FAILURE_IGNORE:
		break;
	}
	return false;
}

void group_note_failures(struct group *group)
{
	for (size_t i = 0; i < group->task_count; i++) {
		struct task *task = group->tasks[i];
		if (task->runner.state == TASK_DEAD && task->runner.failed &&
		    failure_counts_at_once(group, task))
			report_failure(group, task);
	}
}
