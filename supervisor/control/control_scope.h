/* What a control request's target names: every task (""), a group's
 * ("web"), one task ("web/app", "web/app@1"), or every instance of a task
 * written with `instances:` ("web/app" for app@0, app@1...). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "supervisor/tasks/group.h"
#include "supervisor/tasks/task.h"

struct control_scope {
	const struct group *group;
	const struct task *task;
	const char *instances_of;
};

static inline bool control_scope_includes(const struct control_scope *scope,
					  const struct task *task)
{
	if (scope->task)
		return task == scope->task;
	if (scope->group && task->group != scope->group)
		return false;
	return !scope->instances_of ||
	       (task->config->instance_of &&
		strcmp(task->config->instance_of, scope->instances_of) == 0);
}

/* Whether any task of `group` may be in `scope`. */
static inline bool control_scope_includes_group(const struct control_scope *scope,
						const struct group *group)
{
	const struct group *only = scope->task ? scope->task->group : scope->group;
	return !only || only == group;
}

/* The group `target` names ("web", or the group of "web/app"), or NULL
 * with the error a client is told: the groups there are, and the task
 * it may have meant ("no group \"app\"; did you mean web/app? ..."). */
struct group *control_scope_group(struct group *const *groups, size_t group_count,
				  const char *target, char *error, size_t error_size);

/* The task "group/task" names, or NULL with the error (no such group, or
 * the tasks of the group). */
struct task *control_scope_task(struct group *const *groups, size_t group_count, const char *target,
				char *error, size_t error_size);

/* The group of "group/task" when no task has that name but instances of
 * it exist (the name into *name, how many into *count), else NULL. */
struct group *control_scope_instances(struct group *const *groups, size_t group_count,
				      const char *target, const char **name, size_t *count);

/* The scope of a target: every task (""), a group's, one task's, or every
 * instance of one. -1 with the error when it names nothing. */
int control_scope_resolve(struct group *const *groups, size_t group_count, const char *target,
			  struct control_scope *scope, char *error, size_t error_size);
