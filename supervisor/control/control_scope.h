/* What a control request's target names: every task (""), a group's
 * ("web"), one task ("web/app", "web/app@1"), or every instance of a task
 * written with `instances:` ("web/app" for app@0, app@1...). */
#pragma once

#include <stdbool.h>
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
