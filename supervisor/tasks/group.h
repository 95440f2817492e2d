/* One group of tasks at run time: its coordinator, its tasks, and the rules
 * that tie them together (Nomad's alloc runner):
 * - a task starts when it is ready and its stage gate is open;
 * - a task that fails for good stops the group, or restarts it, or is
 *   left dead, as its `on_failure` says;
 * - when no main or ephemeral task is alive any more, the sidecars stop;
 * - stopping goes in reverse lifecycle order, one tier at a time: main and
 *   ephemeral tasks, then poststart sidecars, then prestart sidecars;
 * - poststop tasks run once everything else is dead; the group is finished
 *   when they are. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/model/config.h"
#include "supervisor/lifecycle/coordinator.h"
#include "supervisor/tasks/group_network.h"
#include "supervisor/tasks/instance_roll.h"
#include "supervisor/tasks/services.h"
#include "supervisor/tasks/task.h"
#include "supervisor/tasks/zero_sets.h"

enum group_stop_mode {
	GROUP_RUNNING,
	GROUP_STOPPING,   /* for good: no new starts but poststop tasks */
	GROUP_RESTARTING, /* restart of the whole group, stopping phase */
};

struct group {
	const struct group_config *config;
	struct services *services;
	struct coordinator coordinator;
	struct task **tasks;
	size_t task_count;
	struct coordinator_task *coordinator_views; /* scratch, one per task */

	bool dirty; /* something changed since the last settle */
	enum group_stop_mode stop_mode;
	char stop_reason[256];
	bool starts_forbidden; /* everything is being killed: nothing starts */
	bool rearm_after_stop; /* restart of the whole group: all run again */
	/* restart --running: the gates are open, so starts wait for the
	 * earlier stages to be ready again (group.c, earlier_stages_ready) */
	bool restart_in_order;
	bool finished;
	bool removed; /* a reload removed it: it stops, and is freed once finished */
	/* on_failure: restart: the restarts it made, and its bound. */
	struct restart_tracker failure_restarts;
	unsigned failure_restart_count;
	/* What on_failure last decided, for status: "" before any failure. */
	char failure_decision[320];
	int cgroup_fd;                         /* root/<group> of the cgroup tree; -1 without */
	struct loop_watch memory_events_watch; /* group_oom_watch.h; fd -1: none */
	struct group_network network;          /* its bridge, its shared namespace */
	/* Rolling restarts of its tasks' instances, one a task: under way
	 * or the last (instance_roll.h); NULL without any. */
	struct instance_roll *rolls;
	/* Its tasks that `corral scale` took to 0 instances (zero_sets.h):
	 * defined, none running; they keep the group up. */
	struct zero_sets zero_sets;
};

/* 0, or -errno with `error`; errors (a user that does not exist, ...) name
 * the task. */
int group_init(struct group *group, const struct group_config *config, struct services *services,
	       char *error, size_t error_size);
void group_free(struct group *group);

void group_mark_dirty(struct group *group);

/* Applies every rule above until nothing changes. Called after each batch
 * of events, so runners never call back into the group recursively. */
void group_settle(struct group *group, uint64_t now_ms);

/* Graceful stop of the whole group, then its poststop tasks. */
void group_stop(struct group *group, const char *reason, uint64_t now_ms);
/* The same, left for the caller's group_settle: a shutdown marks every
 * group stopping first, so that a task sees its dependents in other
 * groups on their way down before it settles. */
void group_stop_begin(struct group *group, const char *reason);

/* SIGKILL everything, start nothing more (poststop tasks included). */
void group_kill(struct group *group, const char *reason);

/* Restart all: the coordinator goes back to init, running tasks are stopped
 * in reverse order, then every task runs again in lifecycle order. */
void group_restart_all(struct group *group, uint64_t now_ms);

/* Restart of one running task (not charged to its policy). */
enum runner_request_result group_restart_task(struct group *group, struct task *task,
					      uint64_t now_ms);

/* ForceRestart of one task: runs again while the group is active, waiting
 * on its stage gate; refused (RUNNER_REQUEST_GATE_CLOSED) when that gate
 * cannot open again in the coordinator's current state, or the group is
 * stopping. */
enum runner_request_result group_force_restart_task(struct group *group, struct task *task,
						    uint64_t now_ms);

/* Its schedule's time came (runner_run_scheduled): the next run. A running
 * task whose `restart: true` dependents must stop first is restarted as
 * group_restart_task does, since that waits for them. */
enum runner_request_result group_run_scheduled_task(struct group *group, struct task *task,
						    const char *why, uint64_t now_ms);

/* Whether a dead task may run again now: its group is active and the
 * task's stage gate can still open in the coordinator's state. */
bool group_can_run_again(const struct group *group, const struct task *task);

/* Restart of every running task: stopped in reverse lifecycle order, then
 * started in lifecycle order; tasks that are not running are left alone. */
void group_restart_running(struct group *group, uint64_t now_ms);

/* Stop on request: the task is stopped with its kill signal and stays dead,
 * whatever its restart policy; for the coordinator it is dead. */
void group_stop_task(struct group *group, struct task *task, uint64_t now_ms);

bool group_has_processes(const struct group *group);

/* The group of `groups` named by the `length` bytes at `name`, or NULL. */
struct group *group_find(struct group *const *groups, size_t count, const char *name,
			 size_t length);

/* A restore found no record of the group's own state: its lifecycle goes
 * where its tasks show it was (coordinator_resume), and says so. */
void group_resume_lifecycle(struct group *group);

/* Of the task written with `instances:` named `set`: how many instances
 * its config says (the group's current definition, or what it said when
 * `corral scale` took the set to 0; 0 when it has none any more), and how
 * many it has now (not removed): they differ after `corral scale`, until
 * the next reload. */
void group_instance_counts(const struct group *group, const char *set, unsigned *configured,
			   unsigned *now);
