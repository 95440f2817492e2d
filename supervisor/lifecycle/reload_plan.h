/* The reload plan: what a new config changes in what runs (docs/cli.md,
 * "corral reload"). Each group added, removed, kept or updated (its own
 * keys); each task of a kept group added, removed, replaced (it needs a
 * new process), updated in place or unchanged (config_diff.h); or the
 * whole reload refused, with the reason.
 *
 * Pure: what runs comes in as plain data (struct reload_running), the new
 * config as loaded; no process, cgroup or user is looked at. What only
 * the machine can say (does the user exist, can the isolation be built,
 * can the cgroup be made) is checked by supervisor/reload.c, which
 * applies the plan. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/model/config.h"
#include "config/model/config_diff.h"

enum reload_action {
	RELOAD_KEEP,
	RELOAD_UPDATE,
	RELOAD_REPLACE,
	RELOAD_ADD,
	RELOAD_REMOVE,
};

/* "unchanged", "updated", "replaced", "added", "removed": as the plan is
 * printed. */
const char *reload_action_name(enum reload_action action);

/* One task as it runs. Its definition is the one it runs with, not its
 * entry in the current config: an in-place update moved the new fields
 * into the task's own definition. */
struct reload_running_task {
	const struct task_config *definition;
	bool removed; /* by an earlier reload, and still stopping */
};

struct reload_running_group {
	const struct group_config *definition;
	bool removed; /* by an earlier reload, and still stopping */
	struct reload_running_task *tasks;
	size_t task_count;
};

/* What runs, in the supervisor's order: the plan names groups and tasks
 * by their index here. */
struct reload_running {
	const struct config *config; /* the current one: its global keys */
	struct reload_running_group *groups;
	size_t group_count;
};

/* What runs right after `config` was loaded and made: every group and
 * task of it, none removed. For the tests, and as a start for a caller
 * that then says what was removed. */
void reload_running_of_config(struct reload_running *running, const struct config *config);
void reload_running_free(struct reload_running *running);

#define RELOAD_NOT_RUNNING SIZE_MAX

struct reload_group_step {
	enum reload_action action; /* KEEP, UPDATE (on_failure changed), ADD, REMOVE */
	size_t running;            /* in running->groups; RELOAD_NOT_RUNNING when added */
	const struct group_config *definition; /* in the new config; NULL when removed */
};

/* The tasks of kept groups only: an added group's tasks come with it. */
struct reload_task_step {
	enum reload_action action; /* KEEP, UPDATE, REPLACE, ADD, REMOVE */
	size_t running_group;      /* in running->groups */
	size_t running_task;       /* in that group's tasks; RELOAD_NOT_RUNNING when added */
	const struct task_config *definition;        /* in the new config; NULL when removed */
	const struct group_config *group_definition; /* its group's, in the new config */
	struct task_diff diff;                       /* UPDATE and REPLACE: what changed */
};

struct reload_plan {
	/* The new config's groups in its order, then the removed ones. */
	struct reload_group_step *groups;
	size_t group_count;
	/* Per kept group, in the new config's order: its tasks in the new
	 * definition's order, then the removed ones. */
	struct reload_task_step *tasks;
	size_t task_count;
	/* Why the reload is refused: a key that takes effect only at start,
	 * or a group or task still stopping after an earlier removal. */
	char refusal[512];
};

/* 0 with the plan, or -1 with plan->refusal. Either way the plan is to
 * be freed with reload_plan_free. */
int reload_plan_make(const struct reload_running *running, const struct config *new_config,
		     struct reload_plan *plan);
void reload_plan_free(struct reload_plan *plan);
