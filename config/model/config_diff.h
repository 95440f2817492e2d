/* What changed between two definitions of the same task, for reload
 * (docs/config.md, "Reload"): whether the change needs a new process, can
 * be applied to the running one, or is no change at all; and which fields
 * changed, for the plan that `corral reload --dry-run` prints.
 *
 * Pure: two task_configs in, a verdict out. Where a definition was
 * written (source locations) is not part of it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "config/model/config.h"

enum task_change {
	TASK_CHANGE_NONE,
	/* Only fields a running process does not depend on: restart, kill,
	 * resources (added or changed limits), readiness probe and timeout,
	 * health, log settings, autostart, update, control rights (but for a
	 * task with a mount namespace gaining its first or losing its last),
	 * watch. */
	TASK_CHANGE_IN_PLACE,
	/* Anything else: command, env, user, cwd, stage, isolation, hooks,
	 * dependencies, CDI, readiness kind, a limit removed... */
	TASK_CHANGE_REPLACE,
};

#define TASK_CHANGE_FIELDS_MAX 24

struct task_diff {
	enum task_change change;
	/* The config keys that differ ("command", "resources"), in a fixed
	 * order; static strings. */
	const char *fields[TASK_CHANGE_FIELDS_MAX];
	size_t field_count;
};

void task_config_diff(const struct task_config *old, const struct task_config *new,
		      struct task_diff *diff);

/* Moves the fields a TASK_CHANGE_IN_PLACE change may touch from `from`
 * into `into`, and the old values of `into` back into `from` (which then
 * frees them). The running task keeps its definition object, so every
 * pointer into it stays valid. */
void task_config_swap_in_place_fields(struct task_config *into, struct task_config *from);

/* Resources only, for a limit the kernel refused: put back. */
void task_config_swap_resources(struct task_config *into, struct task_config *from);

/* What a reload may not change while corral runs: the name of the first
 * global key that differs ("socket", "control.group", "task_dirs_root"),
 * or NULL. */
const char *config_diff_fixed_global(const struct config *old, const struct config *new);

/* A group's keys that only take effect when it is made: "network", or
 * NULL. */
const char *config_diff_fixed_group_key(const struct group_config *old,
					const struct group_config *new);
