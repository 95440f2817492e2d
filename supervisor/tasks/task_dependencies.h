/* A task's dependencies (config `after:`) at run time: the config's edges
 * resolved to tasks of any group, what a start waits for, what a stop
 * waits for, and the dependents of a `restart: true` edge that must stop
 * and start again with their dependency. The decisions themselves are
 * pure, in dependency_rules.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/model/config.h"
#include "supervisor/lifecycle/dependency_rules.h"

struct group;
struct task;

/* One edge of a task at run time. */
struct task_link {
	const struct task_dependency *config;
	struct task *target;
	/* The target's runner generation when this task last started: with
	 * `restart: true`, a newer one means the run it waited for is over. */
	uint64_t seen_generation;
};

/* After every group exists: resolves each task's edges to tasks, finds
 * every task's dependents, and computes the stop order of the whole
 * config. Nothing is allocated for a config without `after:`. */
void task_dependencies_link(struct group **groups, size_t group_count, const struct config *config);
void task_dependencies_unlink(struct group **groups, size_t group_count);

/* After a reload: every link made again from `config`, whose groups and
 * tasks are the first of `groups` and of each group's tasks, in its order
 * (the others, removed by the reload, get none). A link that was there
 * before keeps what it saw of its target. */
void task_dependencies_relink(struct group **groups, size_t group_count,
			      const struct config *config);

/* Its dependency timer, idle until the task waits (task_init). */
void task_dependencies_init(struct task *task);

/* Its start is due and its gate or its dependencies hold it back: the
 * wait began now unless it had already; the timer is armed for
 * the next `timeout` of its entries to run out, when its group settles
 * again and task_dependencies_broken() tells the timed-out wait. */
void task_dependencies_waiting(struct task *task, uint64_t now_ms);

/* It started, failed, or left its wait some other way: the next wait
 * counts from its own beginning. */
void task_dependencies_wait_over(struct task *task);

/* Every dependency holds, and no dependent of an older run of this task
 * (restart: true) is still alive: it may start when its gate is open. */
bool task_dependencies_allow_start(const struct task *task);

/* It starts now: remember which run of each dependency it started with. */
void task_dependencies_started(struct task *task);

/* A pending task that waits for what can never hold, or for longer than
 * an entry's `timeout` (of `after:` or `wait_for:`): true, with the reason
 * in `error` ("stack/redis failed for good (not ready within 15s)",
 * "stack/db not healthy within 2m (after.db.timeout)", "tcp db:5432 not
 * reached within 30s (...)"); false when nothing is broken. */
bool task_dependencies_broken(const struct task *task, char *error, size_t error_size);

/* A pending task whose wait goes through other tasks to one that failed
 * for good: "the chain: g/web -> g/api -> g/db" into `buffer`; false for
 * a direct dependency (its own message names it) or none. */
bool task_dependencies_describe_chain(const struct task *task, char *buffer, size_t size);

/* What a pending task waits for, for status: "waits for stack/migrate to
 * complete"; false when nothing (or only its gate). */
bool task_dependencies_describe_wait(const struct task *task, char *buffer, size_t size);

/* A running task with a `restart: true` dependency whose run it started
 * with is over, or which waits to be restarted: the dependency's name; it
 * must stop. NULL otherwise. */
const struct task *task_dependencies_restarted(const struct task *task);

/* A rolling restart replaced `task` and its new run is ready: its
 * dependents take that run for the one they started with, so that a
 * `restart: true` one is not stopped for it. */
void task_dependencies_keep_dependents(struct task *task);

/* Whether any `restart: true` dependent of `task` is still alive: a
 * requested restart of `task` waits for them to stop first. */
bool task_dependencies_restart_dependents_alive(const struct task *task);

/* Per stop tier, the lowest stop position among the group's tasks that
 * are alive for its stop (SIZE_MAX when none): what a stop pass asks of
 * every task, gathered once, so that a pass over N tasks costs N, not N
 * squared (10,000 tasks took seconds to stop). */
struct stop_fronts {
	size_t first_live[STOP_TIER_COUNT];
};

/* Alive for its group's stop: starting or running, or not started yet
 * when the group stops for good (a stop retires it). */
bool task_is_live_for_stop(const struct task *task);

void task_dependencies_stop_fronts(const struct group *group, struct stop_fronts *fronts);

/* The task just left the fronts (retired before it started): they are
 * brought up to date. */
void task_dependencies_stop_fronts_left(const struct group *group, const struct task *task,
					struct stop_fronts *fronts);

/* A stop of `task` must wait: a task that waits for it (in any group,
 * also through tasks already dead) is alive and being stopped, or a task
 * of its group that stops before it in the stop order is alive (`fronts`,
 * of its group, up to date). */
bool task_dependencies_stop_blocked(const struct task *task, const struct stop_fronts *fronts);

/* Its state changed: the groups of the tasks linked to it settle again. */
void task_dependencies_changed(struct task *task);
