#include "supervisor/tasks/task_dependencies.h"

#include <stdio.h>
#include <stdlib.h>

#include "base/loop.h"
#include "base/units.h"
#include "base/xmalloc.h"
#include "supervisor/lifecycle/dependency_rules.h"
#include "supervisor/tasks/group.h"
#include "supervisor/tasks/task.h"
#include "supervisor/tasks/task_outside_wait.h"

static struct task *task_at(struct group **groups, size_t group_index, size_t task_index)
{
	return groups[group_index]->tasks[task_index];
}

/* Every task in one numbering, group after group, for the stop order. */
static void compute_stop_order(struct group **groups, size_t group_count, size_t edge_count)
{
	size_t count = 0;
	for (size_t g = 0; g < group_count; g++)
		count += groups[g]->task_count;
	struct task **tasks = xcalloc(count, sizeof(*tasks));
	unsigned *tiers = xcalloc(count, sizeof(*tiers));
	struct dependency_edge *edges = xcalloc(edge_count + 1, sizeof(*edges));
	size_t *scratch = xcalloc(3 * count + 1 + edge_count, sizeof(*scratch));
	size_t *positions = xcalloc(count, sizeof(*positions));

	size_t number = 0;
	for (size_t g = 0; g < group_count; g++)
		for (size_t t = 0; t < groups[g]->task_count; t++) {
			struct task *task = groups[g]->tasks[t];
			task->stop_position = number; /* its number, until the order is known */
			tiers[number] = dependency_stop_tier(task->config->stage);
			tasks[number++] = task;
		}
	size_t edge = 0;
	for (size_t i = 0; i < count; i++)
		for (size_t d = 0; d < tasks[i]->after_count; d++)
			edges[edge++] = (struct dependency_edge){
			    .from = i, .to = tasks[i]->after[d].target->stop_position};
	dependency_stop_order(count, tiers, edges, edge_count, scratch, positions);
	for (size_t i = 0; i < count; i++)
		tasks[i]->stop_position = positions[i];

	free(positions);
	free(scratch);
	free(edges);
	free(tiers);
	free(tasks);
}

void task_dependencies_link(struct group **groups, size_t group_count, const struct config *config)
{
	size_t edge_count = 0;
	for (size_t g = 0; g < config->group_count; g++)
		for (size_t t = 0; t < config->groups[g].task_count; t++) {
			struct task *task = groups[g]->tasks[t];
			const struct task_config *task_config = &config->groups[g].tasks[t];
			if (!task_config->after_count)
				continue;
			task->after = xcalloc(task_config->after_count, sizeof(*task->after));
			task->after_count = task_config->after_count;
			for (size_t d = 0; d < task_config->after_count; d++) {
				const struct task_dependency *edge = &task_config->after[d];
				struct task *target =
				    task_at(groups, edge->group_index, edge->task_index);
				task->after[d] =
				    (struct task_link){.config = edge, .target = target};
				target->dependents =
				    xreallocarray(target->dependents, target->dependent_count + 1,
						  sizeof(*target->dependents));
				target->dependents[target->dependent_count++] = task;
				edge_count++;
			}
		}
	/* Without edges, positions stay 0 and stop tiers alone decide, as
	 * before dependencies existed. */
	if (edge_count)
		compute_stop_order(groups, group_count, edge_count);
}

static void unlink_task(struct task *task)
{
	free(task->after);
	free(task->dependents);
	task->after = NULL;
	task->after_count = 0;
	task->dependents = NULL;
	task->dependent_count = 0;
}

void task_dependencies_unlink(struct group **groups, size_t group_count)
{
	for (size_t g = 0; g < group_count; g++)
		for (size_t t = 0; t < groups[g]->task_count; t++)
			unlink_task(groups[g]->tasks[t]);
}

/* A task's links before a relink. */
struct old_links {
	struct task *task;
	struct task_link *after;
	size_t count;
};

void task_dependencies_relink(struct group **groups, size_t group_count,
			      const struct config *config)
{
	size_t task_count = 0;
	for (size_t g = 0; g < group_count; g++)
		task_count += groups[g]->task_count;
	struct old_links *old = xcalloc(task_count + 1, sizeof(*old));
	size_t n = 0;
	for (size_t g = 0; g < group_count; g++)
		for (size_t t = 0; t < groups[g]->task_count; t++) {
			struct task *task = groups[g]->tasks[t];
			old[n++] = (struct old_links){task, task->after, task->after_count};
			task->after = NULL;
			unlink_task(task);
			/* Its checks point into the definition it had: made
			 * again from the one it has now at the next settle. */
			outside_wait_end(task);
		}
	task_dependencies_link(groups, group_count, config);
	/* An edge that survives keeps which run of its target the task
	 * started with: a `restart: true` dependent must not take the reload
	 * for a restart of what it waits for. */
	for (size_t i = 0; i < n; i++) {
		struct task *task = old[i].task;
		for (size_t d = 0; d < task->after_count; d++)
			for (size_t o = 0; o < old[i].count; o++)
				if (old[i].after[o].target == task->after[d].target)
					task->after[d].seen_generation =
					    old[i].after[o].seen_generation;
		free(old[i].after);
	}
	free(old);
}

static bool group_may_run_again(const struct group *group)
{
	return group->stop_mode != GROUP_STOPPING && !group->finished && !group->starts_forbidden;
}

/* What a dependency's condition needs to know of its target. */
static struct dependency_target target_view(const struct task *target)
{
	const struct runner *runner = &target->runner;
	return (struct dependency_target){
	    .state = runner->state,
	    .stopping = runner->stop_intent != RUNNER_STOP_NONE,
	    .ready = runner_is_ready_now(runner),
	    .healthy = runner->state == TASK_RUNNING && runner->healthy,
	    .succeeded = runner_last_run_succeeded(runner),
	    .failed = runner->state == TASK_DEAD && runner->failed,
	    .may_run_again = group_may_run_again(target->group),
	};
}

/* The entry's `timeout` ran out since the task began to wait. The loop's
 * clock, as the timer that brought us here. */
static bool link_timed_out(const struct task *task, const struct task_link *link)
{
	uint64_t timeout_ms = link->config->timeout_ms;
	return timeout_ms && task->dependency_waiting &&
	       loop_now_ms() - task->dependency_wait_began_ms >= timeout_ms;
}

/* The condition with what the entry adds: its timeout, `required: false`. */
static enum dependency_verdict wait_verdict_of(const struct task *task,
					       const struct task_link *link)
{
	const struct dependency_wait wait = {
	    .condition = link->config->condition,
	    .optional = link->config->optional,
	    .timed_out = link_timed_out(task, link),
	};
	const struct dependency_target view = target_view(link->target);
	return dependency_wait_verdict(&wait, &view);
}

static bool link_allows_start(const struct task *task, const struct task_link *link)
{
	return dependency_verdict_allows_start(wait_verdict_of(task, link));
}

static void on_dependency_timeout(struct loop_timer *timer)
{
	struct task *task = timer->data;
	/* The settle that follows asks task_dependencies_broken(). */
	group_mark_dirty(task->group);
}

void task_dependencies_init(struct task *task)
{
	task->dependency_waiting = false;
	loop_timer_init(&task->dependency_timer, on_dependency_timeout, task);
}

void task_dependencies_waiting(struct task *task, uint64_t now_ms)
{
	if (!task->dependency_waiting) {
		task->dependency_waiting = true;
		task->dependency_wait_began_ms = now_ms;
	}
	outside_wait_begin(task);
	uint64_t next = outside_wait_next_deadline(task, task->dependency_wait_began_ms);
	for (size_t d = 0; d < task->after_count; d++) {
		const struct task_link *link = &task->after[d];
		uint64_t deadline = dependency_wait_deadline(task->dependency_wait_began_ms,
							     link->config->timeout_ms, now_ms);
		if (deadline && (!next || deadline < next) && !link_allows_start(task, link))
			next = deadline;
	}
	struct loop_timer *timer = &task->dependency_timer;
	if (!next)
		loop_timer_cancel(task->services->loop, timer);
	else if (!loop_timer_armed(timer) || timer->deadline_ms != next)
		loop_timer_arm(task->services->loop, timer, next);
}

void task_dependencies_wait_over(struct task *task)
{
	outside_wait_end(task);
	task->dependency_waiting = false;
	loop_timer_cancel(task->services->loop, &task->dependency_timer);
}

/* An older run of `task` still has a `restart: true` dependent alive.
 * Never while a rolling restart replaces it: they stay up. */
static bool stale_dependent_alive(const struct task *task)
{
	if (task->rolling)
		return false;
	for (size_t i = 0; i < task->dependent_count; i++) {
		const struct task *dependent = task->dependents[i];
		enum task_state state = dependent->runner.state;
		if (state != TASK_STARTING && state != TASK_RUNNING)
			continue;
		for (size_t d = 0; d < dependent->after_count; d++) {
			const struct task_link *link = &dependent->after[d];
			if (link->target == task && link->config->restart &&
			    link->seen_generation != task->runner.generation)
				return true;
		}
	}
	return false;
}

bool task_dependencies_allow_start(const struct task *task)
{
	if (!outside_wait_passed(task))
		return false;
	for (size_t d = 0; d < task->after_count; d++) {
		const struct task_link *link = &task->after[d];
		/* Its restart waits for this task to be down: not up again. */
		if (link->config->restart && link->target->restart_held)
			return false;
		if (!link_allows_start(task, link))
			return false;
	}
	return !task->dependent_count || !stale_dependent_alive(task);
}

void task_dependencies_started(struct task *task)
{
	task_dependencies_wait_over(task);
	for (size_t d = 0; d < task->after_count; d++)
		task->after[d].seen_generation = task->after[d].target->runner.generation;
}

/* Dependency chains are short; the bound only keeps a walk finite. */
#define CHAIN_DEPTH_MAX 16

/* From `task`, the dependency it waits for in vain, then the one that
 * waits for in turn, down to a task that failed (or waits for nothing
 * broken): the root of the trouble. Its names go into `chain` ("g/web ->
 * g/api -> g/db") when they are more than task and root. */
static const struct task *broken_chain_root(const struct task *task, char *chain, size_t chain_size)
{
	const struct task *at = task;
	size_t used = (size_t)snprintf(chain, chain_size, "%s", task->config->full_name);
	int depth = 0;
	while (depth < CHAIN_DEPTH_MAX && !(at != task && at->runner.state == TASK_DEAD &&
					    at->runner.failed && !at->failed_by_dependency)) {
		const struct task *next = NULL;
		for (size_t d = 0; d < at->after_count && !next; d++)
			if (!link_allows_start(at, &at->after[d]))
				next = at->after[d].target;
		if (!next)
			break;
		at = next;
		depth++;
		if (used < chain_size)
			used += (size_t)snprintf(chain + used, chain_size - used, " -> %s",
						 at->config->full_name);
	}
	if (depth < 2)
		chain[0] = '\0';
	return at;
}

bool task_dependencies_describe_chain(const struct task *task, char *buffer, size_t size)
{
	char chain[256];
	const struct task *root = broken_chain_root(task, chain, sizeof(chain));
	if (!chain[0] || !root->runner.failed)
		return false;
	snprintf(buffer, size, "the chain: %s", chain);
	return true;
}

/* "g/db not healthy within 2m (after.db.timeout); the chain: g/web ->
 * g/api -> g/db": the condition, the timeout as written, and, when the
 * target itself waits, the tasks down to the one that holds it all up. */
static void describe_timeout(const struct task *task, const struct task_link *link,
			     const char *chain, char *error, size_t error_size)
{
	char timeout[32];
	format_duration_ms(link->config->timeout_ms, timeout, sizeof(timeout));
	int used = snprintf(error, error_size, "%s %s within %s (%s: after.%s.timeout)",
			    link->target->config->full_name,
			    dependency_condition_failed(link->config->condition), timeout,
			    task->config->full_name, link->config->name);
	if (chain[0] && used > 0 && (size_t)used < error_size)
		snprintf(error + used, error_size - (size_t)used, "; the chain: %s", chain);
}

bool task_dependencies_broken(const struct task *task, char *error, size_t error_size)
{
	if (task->dependency_waiting && outside_wait_timed_out(task, task->dependency_wait_began_ms,
							       loop_now_ms(), error, error_size))
		return true;
	for (size_t d = 0; d < task->after_count; d++) {
		const struct task_link *link = &task->after[d];
		enum dependency_verdict verdict = wait_verdict_of(task, link);
		if (verdict != DEPENDENCY_BROKEN && verdict != DEPENDENCY_TIMED_OUT)
			continue;
		const struct runner *target = &link->target->runner;
		char chain[256];
		const struct task *root = broken_chain_root(task, chain, sizeof(chain));
		if (verdict == DEPENDENCY_TIMED_OUT)
			describe_timeout(task, link, chain, error, error_size);
		else if (target->failed && chain[0] && root->runner.failed)
			/* Named once, at the root, with the way there, rather than
			 * nested: "g/api failed for good (g/db failed for good
			 * (...))". */
			snprintf(error, error_size, "%s failed for good (%s); the chain: %s",
				 root->config->full_name,
				 runner_failure(&root->runner)[0] ? runner_failure(&root->runner)
								  : "no reason recorded",
				 chain);
		else if (target->failed)
			snprintf(error, error_size, "%s failed for good (%s)",
				 link->target->config->full_name,
				 runner_failure(target)[0] ? runner_failure(target)
							   : "no reason recorded");
		else
			snprintf(error, error_size,
				 "%s is dead and cannot run again (its group is stopping)",
				 link->target->config->full_name);
		return true;
	}
	return false;
}

bool task_dependencies_describe_wait(const struct task *task, char *buffer, size_t size)
{
	for (size_t d = 0; d < task->after_count; d++) {
		const struct task_link *link = &task->after[d];
		if (link->config->restart && link->target->restart_held) {
			snprintf(buffer, size, "waits for %s to restart",
				 link->target->config->full_name);
			return true;
		}
		if (link_allows_start(task, link))
			continue;
		int used =
		    snprintf(buffer, size, "waits for %s %s", link->target->config->full_name,
			     dependency_condition_wait(link->config->condition));
		if (link->config->timeout_ms && used > 0 && (size_t)used < size) {
			char timeout[32];
			format_duration_ms(link->config->timeout_ms, timeout, sizeof(timeout));
			snprintf(buffer + used, size - (size_t)used, " (at most %s)", timeout);
		}
		return true;
	}
	if (task->dependent_count && stale_dependent_alive(task)) {
		snprintf(buffer, size, "waits for the tasks that restart with it to stop");
		return true;
	}
	return outside_wait_describe(task, buffer, size);
}

const struct task *task_dependencies_restarted(const struct task *task)
{
	for (size_t d = 0; d < task->after_count; d++) {
		const struct task_link *link = &task->after[d];
		if (link->config->restart && !link->target->rolling &&
		    (link->seen_generation != link->target->runner.generation ||
		     link->target->restart_held))
			return link->target;
	}
	return NULL;
}

void task_dependencies_keep_dependents(struct task *task)
{
	for (size_t i = 0; i < task->dependent_count; i++) {
		struct task *dependent = task->dependents[i];
		for (size_t d = 0; d < dependent->after_count; d++)
			if (dependent->after[d].target == task)
				dependent->after[d].seen_generation = task->runner.generation;
	}
}

bool task_dependencies_restart_dependents_alive(const struct task *task)
{
	for (size_t i = 0; i < task->dependent_count; i++) {
		const struct task *dependent = task->dependents[i];
		enum task_state state = dependent->runner.state;
		if (state != TASK_STARTING && state != TASK_RUNNING)
			continue;
		for (size_t d = 0; d < dependent->after_count; d++)
			if (dependent->after[d].target == task &&
			    dependent->after[d].config->restart)
				return true;
	}
	return false;
}

static bool has_process_or_start(const struct task *task)
{
	return task->runner.state == TASK_STARTING || task->runner.state == TASK_RUNNING;
}

/* Alive and on its way down: its group stops (or restarts) it, or a stop
 * of its own is under way. */
static bool is_being_stopped(const struct task *task)
{
	return has_process_or_start(task) && (task->group->stop_mode != GROUP_RUNNING ||
					      task->runner.stop_intent != RUNNER_STOP_NONE);
}

/* A dependent of `task` that is being stopped, reached through dependents
 * that are already down (whose own dependents still need `task` to wait:
 * Kubernetes stops sidecars in the reverse of their start order even with
 * init containers, long done, between them). `mark` keeps a walk linear. */
static bool dependent_being_stopped(struct task *task, unsigned mark)
{
	for (size_t i = 0; i < task->dependent_count; i++) {
		struct task *dependent = task->dependents[i];
		if (dependent->walk_mark == mark)
			continue;
		dependent->walk_mark = mark;
		if (is_being_stopped(dependent))
			return true;
		if (!has_process_or_start(dependent) && dependent_being_stopped(dependent, mark))
			return true;
	}
	return false;
}

bool task_is_live_for_stop(const struct task *task)
{
	enum task_state state = task->runner.state;
	if (state == TASK_STARTING || state == TASK_RUNNING)
		return true;
	return task->group->stop_mode == GROUP_STOPPING && state == TASK_PENDING;
}

void task_dependencies_stop_fronts(const struct group *group, struct stop_fronts *fronts)
{
	for (unsigned tier = 0; tier < STOP_TIER_COUNT; tier++)
		fronts->first_live[tier] = SIZE_MAX;
	for (size_t i = 0; i < group->task_count; i++) {
		const struct task *task = group->tasks[i];
		unsigned tier = dependency_stop_tier(task->config->stage);
		if (tier < STOP_TIER_COUNT && task->stop_position < fronts->first_live[tier] &&
		    task_is_live_for_stop(task))
			fronts->first_live[tier] = task->stop_position;
	}
}

void task_dependencies_stop_fronts_left(const struct group *group, const struct task *task,
					struct stop_fronts *fronts)
{
	unsigned tier = dependency_stop_tier(task->config->stage);
	if (tier < STOP_TIER_COUNT && fronts->first_live[tier] == task->stop_position)
		task_dependencies_stop_fronts(group, fronts);
}

/* `order: sequential`: a task stops once every task written after it in
 * the same stage is down, as supervisord stops by priority in reverse. Its
 * prestart tasks have edges for that already; main and poststart tasks
 * have none (they start together). */
static bool later_in_sequence_alive(const struct task *task)
{
	const struct group *group = task->group;
	if (!group->config->sequential)
		return false;
	int step = lifecycle_stage_step(task->config->stage);
	for (size_t i = 0; i < group->task_count; i++) {
		const struct task *other = group->tasks[i];
		if (other->config > task->config &&
		    lifecycle_stage_step(other->config->stage) == step &&
		    task_is_live_for_stop(other))
			return true;
	}
	return false;
}

bool task_dependencies_stop_blocked(const struct task *task, const struct stop_fronts *fronts)
{
	unsigned tier = dependency_stop_tier(task->config->stage);
	/* A lower tier goes first, unless the stop order puts this task
	 * before it: then it waits for this one. */
	for (unsigned lower = 0; lower < tier && lower < STOP_TIER_COUNT; lower++)
		if (fronts->first_live[lower] <= task->stop_position)
			return true;
	if (later_in_sequence_alive(task))
		return true;
	if (!task->dependent_count)
		return false;
	return dependent_being_stopped((struct task *)task, ++task->services->dependency_walk);
}

void task_dependencies_changed(struct task *task)
{
	if (task->dependency_waiting && !runner_ready_to_start(&task->runner))
		task_dependencies_wait_over(task);
	if (!task->after && !task->dependent_count)
		return;
	struct services *services = task->services;
	for (size_t g = 0; g < services->group_count; g++)
		group_mark_dirty(services->groups[g]);
}
