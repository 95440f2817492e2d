#include "supervisor/tasks/group.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/xmalloc.h"
#include "supervisor/lifecycle/dependency_rules.h"
#include "supervisor/tasks/group_failure.h"
#include "supervisor/tasks/group_oom_watch.h"
#include "supervisor/tasks/instance_roll.h"
#include "supervisor/tasks/task_dependencies.h"
#include "supervisor/tasks/task_reload.h"

const char *group_event_type_name(enum group_event_type type)
{
	static const char *const names[GROUP_EVENT_TYPE_COUNT] = {
	    [GROUP_EVENT_LIFECYCLE] = "lifecycle",
	    [GROUP_EVENT_STOPPING] = "stopping",
	    [GROUP_EVENT_RESTARTING] = "restarting",
	    [GROUP_EVENT_FINISHED] = "finished",
	    [GROUP_EVENT_FAILURE_IGNORED] = "failure_ignored",
	};
	return (unsigned)type < GROUP_EVENT_TYPE_COUNT ? names[type] : "unknown";
}

/* A running task that has not said it is ready yet holds its stage's
 * successors as a starting one does. */
static enum coordinator_task_state coordinator_view(const struct runner *runner)
{
	switch (runner->state) {
	case TASK_RUNNING:
		return runner_is_ready(runner) ? COORD_TASK_RUNNING : COORD_TASK_PENDING;
	case TASK_DEAD:
		return COORD_TASK_DEAD;
	case TASK_PENDING:
	case TASK_STARTING:
		break;
	}
	return COORD_TASK_PENDING;
}

int group_init(struct group *group, const struct group_config *config, struct services *services,
	       char *error, size_t error_size)
{
	memset(group, 0, sizeof(*group));
	group->config = config;
	group->services = services;
	coordinator_init(&group->coordinator);
	group->cgroup_fd = -1;
	group->network.netns_fd = -1;
	if (services->cgroups->enabled) {
		group->cgroup_fd = cgroup_tree_make_group(services->cgroups, config->name);
		if (group->cgroup_fd < 0) {
			snprintf(error, error_size, "group %s: cgroup %s/%s: %s", config->name,
				 services->cgroups->root_path, config->name,
				 strerror(-group->cgroup_fd));
			return group->cgroup_fd;
		}
	}
	group_oom_watch_open(group);
	int failure = group_network_open(group, error, error_size);
	if (failure < 0)
		return failure;
	group->tasks = xcalloc(config->task_count, sizeof(*group->tasks));
	/* One more: a set scaled to 0 is seen as one running task. */
	group->coordinator_views =
	    xcalloc(config->task_count + 1, sizeof(*group->coordinator_views));
	for (size_t i = 0; i < config->task_count; i++) {
		char why[256];
		group->tasks[i] = xmalloc(sizeof(*group->tasks[i]));
		failure = task_init(group->tasks[i], &config->tasks[i], group, config->name,
				    services, why, sizeof(why));
		if (failure < 0) {
			snprintf(error, error_size, "%s: %s", config->tasks[i].full_name, why);
			group->task_count = i + 1;
			return failure;
		}
		group->task_count = i + 1;
	}
	for (size_t i = 0; i < group->task_count && !services->taking_over; i++)
		runner_received(&group->tasks[i]->runner);
	group->dirty = true;
	return 0;
}

void group_free(struct group *group)
{
	instance_rolls_free(group);
	zero_sets_clear(&group->zero_sets);
	for (size_t i = 0; i < group->task_count; i++) {
		task_free(group->tasks[i]);
		free(group->tasks[i]);
	}
	free(group->tasks);
	free(group->coordinator_views);
	group->tasks = NULL;
	group->coordinator_views = NULL;
	group->task_count = 0;
	group_network_close(group);
	group_oom_watch_close(group);
	if (group->cgroup_fd >= 0) {
		close(group->cgroup_fd);
		group->cgroup_fd = -1;
		cgroup_tree_remove_group(group->services->cgroups, group->config->name);
	}
}

void group_mark_dirty(struct group *group)
{
	group->dirty = true;
}

/* Whether a main task or sidecar of the group was scaled to 0: it is
 * still a service, with no instance for now, and keeps the group up as a
 * Deployment at 0 replicas goes on existing. A one-shot at 0 holds
 * nothing. */
static bool holds_group_up(const struct group *group)
{
	for (size_t i = 0; i < group->zero_sets.count; i++) {
		enum lifecycle_stage stage = group->zero_sets.items[i].model.stage;
		if (stage == STAGE_MAIN || lifecycle_stage_is_sidecar(stage))
			return true;
	}
	return false;
}

/* What the coordinator is told of each task. Between its runs a scheduled
 * task is a service waiting for its time: pending while the group starts
 * (every task is, then), running after, so that the main stage is not over
 * because it is idle. Other dormant tasks (autostart: false) are left out,
 * as if not in the config. */
static size_t coordinator_views(struct group *group)
{
	struct coordinator_task *views = group->coordinator_views;
	size_t count = 0;
	for (size_t i = 0; i < group->task_count; i++) {
		const struct runner *runner = &group->tasks[i]->runner;
		bool scheduled = group->tasks[i]->config->schedule.set;
		if (task_is_dormant(group->tasks[i]) && !scheduled)
			continue;
		enum coordinator_task_state state = coordinator_view(runner);
		if (scheduled && runner->state == TASK_DEAD && group->stop_mode == GROUP_RUNNING)
			state = group->coordinator.state == COORDINATOR_INIT ? COORD_TASK_PENDING
									     : COORD_TASK_RUNNING;
		views[count++] = (struct coordinator_task){
		    .stage = group->tasks[i]->config->stage,
		    .state = state,
		    .failed = runner->failed && !scheduled,
		};
	}
	/* A service scaled to 0 has no instance for now: its stage is not
	 * over (the room is group_init's and the reload's +1). */
	if (holds_group_up(group) && group->stop_mode == GROUP_RUNNING)
		views[count++] = (struct coordinator_task){
		    .stage = STAGE_MAIN,
		    .state = group->coordinator.state == COORDINATOR_INIT ? COORD_TASK_PENDING
									  : COORD_TASK_RUNNING,
		};
	return count;
}

static void update_coordinator(struct group *group)
{
	for (;;) {
		enum coordinator_state before = group->coordinator.state;
		if (!coordinator_step(&group->coordinator, group->coordinator_views,
				      coordinator_views(group)))
			return;
		char message[96];
		snprintf(message, sizeof(message), "lifecycle %s -> %s",
			 coordinator_state_name(before),
			 coordinator_state_name(group->coordinator.state));
		event_log_group(group->services->events, group->config->name,
				group_event_type_name(GROUP_EVENT_LIFECYCLE), message);
	}
}

void group_resume_lifecycle(struct group *group)
{
	coordinator_resume(&group->coordinator, group->coordinator_views, coordinator_views(group));
	char message[96];
	snprintf(message, sizeof(message), "lifecycle resumed at %s, as its tasks show",
		 coordinator_state_name(group->coordinator.state));
	event_log_group(group->services->events, group->config->name,
			group_event_type_name(GROUP_EVENT_LIFECYCLE), message);
	group->dirty = true;
}

void group_begin_stop(struct group *group, enum group_stop_mode mode, const char *reason)
{
	if (group->stop_mode == GROUP_STOPPING)
		return; /* already stopping for good: nothing is stronger */
	group->stop_mode = mode;
	snprintf(group->stop_reason, sizeof(group->stop_reason), "%s", reason);
	char message[sizeof(group->stop_reason) + 16];
	snprintf(message, sizeof(message), "%s: %s",
		 mode == GROUP_STOPPING ? "stopping" : "restarting", reason);
	event_log_group(group->services->events, group->config->name,
			group_event_type_name(mode == GROUP_STOPPING ? GROUP_EVENT_STOPPING
								     : GROUP_EVENT_RESTARTING),
			message);
	group->dirty = true;
}

/* A restart of the whole group: the coordinator goes back to init, and
 * nothing starts until every running task is down (tier by tier); then
 * every task is rearmed. A stop for good still under way becomes part of
 * it. */
void group_begin_restart_all(struct group *group, const char *reason)
{
	coordinator_restart(&group->coordinator);
	group->finished = false;
	group->rearm_after_stop = true;
	group->restart_in_order = false; /* the coordinator orders it all */
	group->stop_mode = GROUP_RUNNING;
	for (size_t i = 0; i < group->task_count; i++)
		runner_redirect_stop(&group->tasks[i]->runner, RUNNER_STOP_GROUP_RESTART);
	group_begin_stop(group, GROUP_RESTARTING, reason);
}

/* Nomad's rules for when a group stops on its own, with on_failure. */
static void check_stop_conditions(struct group *group, uint64_t now_ms)
{
	if (group->stop_mode != GROUP_RUNNING || group_react_to_failure(group, now_ms))
		return;
	/* A service scaled to 0 keeps its group up, as a scheduled task does. */
	bool live_enforced = holds_group_up(group), live_sidecar = false;
	for (size_t i = 0; i < group->task_count; i++) {
		struct task *task = group->tasks[i];
		enum lifecycle_stage stage = task->config->stage;
		if (stage == STAGE_POSTSTOP)
			continue;
		/* A scheduled task keeps its group up for its next run. */
		if (task->config->schedule.set) {
			live_enforced = true;
			continue;
		}
		/* Under --keep-running a task stopped on request is parked, not
		 * over: it may be started again. */
		if (task->runner.state == TASK_DEAD &&
		    !(group->services->keep_running && task->runner.last_exit_requested &&
		      !task->runner.failed))
			continue;
		if (lifecycle_stage_is_sidecar(stage))
			live_sidecar = true;
		else
			live_enforced = true;
	}
	if (live_sidecar && !live_enforced)
		group_begin_stop(group, GROUP_STOPPING, "main tasks are dead");
}

/* Stops every live task that nothing has to stop before: the lower stop
 * tiers first (main and one-shot tasks, then poststart sidecars, then
 * prestart sidecars), and a task's dependents before it. Returns true when
 * every task is down. */
static bool advance_stop(struct group *group, uint64_t now_ms)
{
	enum runner_stop_intent intent =
	    group->stop_mode == GROUP_STOPPING ? RUNNER_STOP_FOR_GOOD : RUNNER_STOP_GROUP_RESTART;
	bool any_alive = false;
	struct stop_fronts fronts;
	task_dependencies_stop_fronts(group, &fronts);
	for (size_t i = 0; i < group->task_count; i++) {
		struct task *task = group->tasks[i];
		if (dependency_stop_tier(task->config->stage) == STOP_TIER_NONE ||
		    !task_is_live_for_stop(task))
			continue;
		any_alive = true;
		if (task_dependencies_stop_blocked(task, &fronts)) {
			if (intent == RUNNER_STOP_FOR_GOOD)
				runner_prekill_ahead(&task->runner);
			continue;
		}
		char chain[320], reason[sizeof(group->stop_reason) + sizeof(chain) + 2];
		const char *why = group->stop_reason;
		/* Never started, for want of what it waits for through others:
		 * the way to the task that failed is named. */
		if (task->runner.state == TASK_PENDING &&
		    task_dependencies_describe_chain(task, chain, sizeof(chain))) {
			snprintf(reason, sizeof(reason), "%s; %s", group->stop_reason, chain);
			why = reason;
		}
		runner_stop(&task->runner, intent, why, now_ms);
		/* A task that had not started is retired at once: it no
		 * longer holds back the tiers after it, in this pass too. */
		if (!task_is_live_for_stop(task))
			task_dependencies_stop_fronts_left(group, task, &fronts);
	}
	return !any_alive;
}

/* Every running task is down: start again. For a restart of the whole
 * group, every task runs again from init, whatever ended it meanwhile. */
static void finish_restart(struct group *group)
{
	group->stop_mode = GROUP_RUNNING;
	if (group->rearm_after_stop) {
		group->rearm_after_stop = false;
		for (size_t i = 0; i < group->task_count; i++) {
			group->tasks[i]->failure_reported = false;
			runner_rearm(&group->tasks[i]->runner);
		}
		coordinator_restart(&group->coordinator);
	}
	event_log_group(group->services->events, group->config->name,
			group_event_type_name(GROUP_EVENT_RESTARTING),
			"every task stopped: starting again");
}

/* After `restart --running` the stage gates are open already: a task
 * waits, as at its first start, until every live task that opens an
 * earlier gate runs and is ready. */
static bool earlier_stages_ready(const struct group *group, enum lifecycle_stage stage)
{
	for (size_t i = 0; i < group->task_count; i++) {
		const struct task *other = group->tasks[i];
		if (lifecycle_stage_step(other->config->stage) < lifecycle_stage_step(stage) &&
		    other->runner.state != TASK_DEAD && !runner_is_ready(&other->runner))
			return false;
	}
	return true;
}

/* The restart of the running tasks is over once every live task (poststop
 * aside) runs and is ready again. */
static void check_restart_in_order(struct group *group)
{
	if (!group->restart_in_order || group->stop_mode == GROUP_RESTARTING)
		return;
	if (group->stop_mode == GROUP_RUNNING && !earlier_stages_ready(group, STAGE_POSTSTOP))
		return;
	group->restart_in_order = false;
}

/* What holds a task back besides its dependencies. */
static bool held_by_its_group(const struct group *group, const struct task *task)
{
	return group->starts_forbidden ||
	       (group->restart_in_order && !earlier_stages_ready(group, task->config->stage));
}

static bool may_start(const struct group *group, const struct task *task)
{
	if (held_by_its_group(group, task))
		return false;
	switch (group->stop_mode) {
	case GROUP_RUNNING:
		break;
	case GROUP_STOPPING:
		if (task->config->stage == STAGE_POSTSTOP)
			break;
		return false;
	case GROUP_RESTARTING:
		return false;
	}
	return task_dependencies_allow_start(task);
}

/* In lifecycle order, so that after a restart of running tasks the
 * sidecars are spawned before the main tasks that use them. A task whose
 * start is held back, by its gate or its dependencies, waits: an `after:`
 * timeout counts from then, also while the gate is closed (a main task
 * that waits for a prestart sidecar waits through the gate). */
static void start_ready_tasks(struct group *group, uint64_t now_ms)
{
	for (int stage = 0; stage < STAGE_COUNT; stage++) {
		bool gate_open =
		    coordinator_gate_open(&group->coordinator, (enum lifecycle_stage)stage);
		for (size_t i = 0; i < group->task_count; i++) {
			struct task *task = group->tasks[i];
			if (task->config->stage != (enum lifecycle_stage)stage ||
			    !runner_ready_to_start(&task->runner))
				continue;
			if (gate_open && may_start(group, task)) {
				task_dependencies_started(task);
				runner_start(&task->runner, now_ms);
			} else if ((task->after || task->config->wait_for_count) &&
				   group->stop_mode == GROUP_RUNNING &&
				   !held_by_its_group(group, task)) {
				task_dependencies_waiting(task, now_ms);
			}
		}
	}
}

static void check_finished(struct group *group)
{
	if (group->finished || group->coordinator.state != COORDINATOR_POSTSTOP)
		return;
	for (size_t i = 0; i < group->task_count; i++)
		if (group->tasks[i]->runner.state != TASK_DEAD)
			return;
	group->finished = true;
	event_log_group(group->services->events, group->config->name,
			group_event_type_name(GROUP_EVENT_FINISHED),
			"finished: every task is dead");
}

/* What the dependency graph asks of the group's tasks: a task whose
 * dependency can never hold fails without starting; one whose `restart:
 * true` dependency restarts stops, to start again after it; a requested
 * restart that waited for those dependents to stop goes ahead. */
static void apply_dependencies(struct group *group, uint64_t now_ms)
{
	for (size_t i = 0; i < group->task_count; i++) {
		struct task *task = group->tasks[i];
		struct runner *runner = &task->runner;
		if (!task->after && !task->dependent_count && !task->config->wait_for_count)
			continue;
		char reason[sizeof(((struct runner_texts *)0)->failure)];
		const struct task *target;
		if (runner->state == TASK_PENDING &&
		    task_dependencies_broken(task, reason, sizeof(reason))) {
			task_dependencies_wait_over(task);
			task->failed_by_dependency = true;
			runner_fail_unstarted(runner, reason);
		} else if ((runner->state == TASK_STARTING || runner->state == TASK_RUNNING) &&
			   runner->stop_intent == RUNNER_STOP_NONE &&
			   group->stop_mode == GROUP_RUNNING &&
			   (target = task_dependencies_restarted(task))) {
			snprintf(reason, sizeof(reason), "%s restarts, and it has restart: true",
				 target->config->full_name);
			runner_stop(runner, RUNNER_STOP_DEPENDENCY, reason, now_ms);
		}
		if (task->restart_held && !task_dependencies_restart_dependents_alive(task)) {
			task->restart_held = false;
			runner_restart(runner, now_ms);
		}
	}
}

/* A reload's new definitions, taken by the tasks now between two runs. */
static void take_next_configs(struct group *group)
{
	for (size_t i = 0; i < group->task_count; i++)
		if (task_can_take_next_config(group->tasks[i]))
			task_take_next_config(group->tasks[i]);
}

void group_settle(struct group *group, uint64_t now_ms)
{
	/* Bounded only by the number of state changes, each of which is
	 * finite; a runner that fails to spawn goes pending -> dead or
	 * pending-with-delay, never back to ready within one settle. */
	while (group->dirty) {
		group->dirty = false;
		take_next_configs(group);
		group_note_failures(group);
		check_stop_conditions(group, now_ms);
		if (group->stop_mode != GROUP_RUNNING && advance_stop(group, now_ms) &&
		    group->stop_mode == GROUP_RESTARTING)
			finish_restart(group);
		apply_dependencies(group, now_ms);
		update_coordinator(group);
		start_ready_tasks(group, now_ms);
		instance_rolls_advance(group, now_ms);
		check_restart_in_order(group);
		check_finished(group);
	}
}

void group_stop_begin(struct group *group, const char *reason)
{
	group_begin_stop(group, GROUP_STOPPING, reason);
}

void group_stop(struct group *group, const char *reason, uint64_t now_ms)
{
	group_begin_stop(group, GROUP_STOPPING, reason);
	group_settle(group, now_ms);
}

void group_kill(struct group *group, const char *reason)
{
	group->starts_forbidden = true;
	for (size_t i = 0; i < group->task_count; i++) {
		runner_kill_now(&group->tasks[i]->runner, reason);
		/* No time left for hooks either, stop hooks included. */
		task_hooks_abandon(group->tasks[i]->hooks);
	}
	group->dirty = true;
}

void group_restart_all(struct group *group, uint64_t now_ms)
{
	group_begin_restart_all(group, "restart of the whole group requested");
	group_settle(group, now_ms);
}

/* A restart of a task whose `restart: true` dependents run: they stop
 * first (apply_dependencies), then the task restarts. */
static enum runner_request_result hold_restart_for_dependents(struct task *task)
{
	const struct runner *runner = &task->runner;
	if (runner->state != TASK_RUNNING && runner->state != TASK_STARTING)
		return RUNNER_REQUEST_NOT_RUNNING;
	if (runner->stop_intent == RUNNER_STOP_FOR_GOOD)
		return RUNNER_REQUEST_STOPPING;
	if (!task->restart_held) {
		task->restart_held = true;
		task_note_event(task, TASK_EVENT_RESTART_REQUESTED,
				"restart requested: the tasks that restart with it stop first");
		task_dependencies_changed(task);
	}
	return RUNNER_REQUEST_DONE;
}

enum runner_request_result group_restart_task(struct group *group, struct task *task,
					      uint64_t now_ms)
{
	enum runner_request_result result = task_dependencies_restart_dependents_alive(task)
						? hold_restart_for_dependents(task)
						: runner_restart(&task->runner, now_ms);
	group_settle(group, now_ms);
	return result;
}

bool group_can_run_again(const struct group *group, const struct task *task)
{
	return group->stop_mode != GROUP_STOPPING && !group->starts_forbidden &&
	       coordinator_gate_reachable(&group->coordinator, task->config->stage);
}

enum runner_request_result group_force_restart_task(struct group *group, struct task *task,
						    uint64_t now_ms)
{
	if (task->runner.state == TASK_RUNNING || task->runner.state == TASK_STARTING)
		return group_restart_task(group, task, now_ms);
	enum runner_request_result result =
	    runner_force_restart(&task->runner, group_can_run_again(group, task), now_ms);
	group_settle(group, now_ms);
	return result;
}

enum runner_request_result group_run_scheduled_task(struct group *group, struct task *task,
						    const char *why, uint64_t now_ms)
{
	bool alive = task->runner.state == TASK_RUNNING || task->runner.state == TASK_STARTING;
	if (alive && task_dependencies_restart_dependents_alive(task))
		return group_restart_task(group, task, now_ms);
	enum runner_request_result result =
	    runner_run_scheduled(&task->runner, why, group_can_run_again(group, task), now_ms);
	group_settle(group, now_ms);
	return result;
}

void group_restart_running(struct group *group, uint64_t now_ms)
{
	group->restart_in_order = true;
	group_begin_stop(group, GROUP_RESTARTING, "restart of the running tasks requested");
	group_settle(group, now_ms);
}

void group_stop_task(struct group *group, struct task *task, uint64_t now_ms)
{
	runner_stop(&task->runner, RUNNER_STOP_FOR_GOOD, "stop requested", now_ms);
	group_settle(group, now_ms);
}

void group_instance_counts(const struct group *group, const char *set, unsigned *configured,
			   unsigned *now)
{
	*configured = *now = 0;
	const struct zero_set *zero = zero_sets_find(&group->zero_sets, set);
	if (zero)
		*configured = zero->configured;
	for (size_t t = 0; t < group->config->task_count; t++) {
		const struct task_config *task = &group->config->tasks[t];
		if (task->instance_of && strcmp(task->instance_of, set) == 0) {
			*configured = task->instances;
			break;
		}
	}
	for (size_t t = 0; t < group->task_count; t++) {
		const struct task *task = group->tasks[t];
		*now += !task->removed && task->config->instance_of &&
			strcmp(task->config->instance_of, set) == 0;
	}
}

struct group *group_find(struct group *const *groups, size_t count, const char *name, size_t length)
{
	for (size_t i = 0; name && i < count; i++) {
		const char *candidate = groups[i]->config->name;
		if (strlen(candidate) == length && memcmp(candidate, name, length) == 0)
			return groups[i];
	}
	return NULL;
}

bool group_has_processes(const struct group *group)
{
	for (size_t i = 0; i < group->task_count; i++)
		if (task_has_process(group->tasks[i]))
			return true;
	return false;
}
