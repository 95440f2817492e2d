/* What the pieces of the loader share: config_load.c walks the file and its
 * groups, config_task.c reads one task, config_restart.c reads restart
 * fields and merges them. */
#pragma once

#include <stdbool.h>

#include "config/config.h"
#include "config/yaml_walk.h"

/* The restart fields written in one place (a group or a task): which ones
 * are set, so that merging goes field by field. */
struct restart_fields {
	bool has_policy, has_attempts, has_interval, has_delay, has_max_delay, has_mode;
	struct restart_policy values;      /* meaningful where set */
	const yaml_node_t *max_delay_node; /* for a max_delay shorter than delay */
};

/* Reads a `restart` map; reports and skips fields that are wrong. */
void restart_fields_parse(struct load_context *context, const yaml_node_t *node,
			  const struct where *where, struct restart_fields *out);

/* Checks a group's own fields against each other (max_delay >= delay), so
 * that a mistake there is reported once, not once per task. */
void restart_fields_check_group(struct load_context *context, const struct restart_fields *group,
				const struct where *where);

/* The stage default, overridden by the group's fields, then by the task's. */
struct restart_policy restart_policy_merge(struct load_context *context, enum lifecycle_stage stage,
					   const struct restart_fields *group,
					   const char *group_owner,
					   const struct restart_fields *task,
					   const struct where *task_where);

/* Reads one task of `group` into `task`, whose name, full_name and location
 * the caller set. `owner` is how messages name it ("web/app"). */
void task_parse(struct load_context *context, const yaml_node_t *node, const char *owner,
		const char *group_owner, const struct restart_fields *group_restart,
		struct task_config *task);
