/* What a request's target names in the running groups, and the error a
 * client gets when it names nothing: the control socket's requests and
 * corral's GET /readyz?group=G&task=T say the same. */
#include "supervisor/control/control_scope.h"

#include <stdio.h>
#include <string.h>

/* "a, b, c" of at most 20 names, for "did you mean" style errors. */
static void list_names(char *buffer, size_t size, const char *const *names, size_t count)
{
	size_t used = 0;
	buffer[0] = '\0';
	for (size_t i = 0; i < count && used < size; i++) {
		if (i == 20) {
			snprintf(buffer + used, size - used, ", ... (%zu in all)", count);
			return;
		}
		used +=
		    (size_t)snprintf(buffer + used, size - used, "%s%s", i ? ", " : "", names[i]);
	}
}

/* A bare task name given where a group was looked for: the first task of
 * that name ("web/app" for "app"), or NULL. */
static const char *first_task_named(struct group *const *groups, size_t group_count,
				    const char *name)
{
	for (size_t g = 0; g < group_count; g++)
		for (size_t t = 0; t < groups[g]->task_count; t++)
			if (strcmp(groups[g]->tasks[t]->config->name, name) == 0)
				return groups[g]->tasks[t]->config->full_name;
	return NULL;
}

struct group *control_scope_group(struct group *const *groups, size_t group_count,
				  const char *target, char *error, size_t error_size)
{
	const char *slash = strchr(target, '/');
	size_t length = slash ? (size_t)(slash - target) : strlen(target);
	struct group *group = group_find(groups, group_count, target, length);
	if (group)
		return group;
	const char *names[group_count ? group_count : 1];
	names[0] = NULL;
	for (size_t i = 0; i < group_count; i++)
		names[i] = groups[i]->config->name;
	char list[512];
	list_names(list, sizeof(list), names, group_count);
	const char *task_named = slash ? NULL : first_task_named(groups, group_count, target);
	if (task_named)
		snprintf(error, error_size,
			 "no group \"%s\"; did you mean %s? (tasks are GROUP/TASK); groups: %s",
			 target, task_named, list);
	else
		snprintf(error, error_size, "no group \"%.*s\"; groups: %s", (int)length, target,
			 list);
	return NULL;
}

struct task *control_scope_task(struct group *const *groups, size_t group_count, const char *target,
				char *error, size_t error_size)
{
	struct group *group = control_scope_group(groups, group_count, target, error, error_size);
	if (!group)
		return NULL;
	for (size_t i = 0; i < group->task_count; i++)
		if (strcmp(group->tasks[i]->config->full_name, target) == 0)
			return group->tasks[i];
	const char *slash = strchr(target, '/');
	if (slash && zero_sets_find(&group->zero_sets, slash + 1)) {
		snprintf(error, error_size,
			 "%s has no instance: corral scale took it to 0 (`corral scale %s=N` "
			 "brings N back)",
			 target, target);
		return NULL;
	}
	/* An instance of a set at 0 (web/api@0) has the set's answer. */
	const char *at = slash ? strchr(slash, '@') : NULL;
	if (at) {
		char set[256];
		snprintf(set, sizeof(set), "%.*s", (int)(at - slash - 1), slash + 1);
		if (zero_sets_find(&group->zero_sets, set)) {
			snprintf(error, error_size,
				 "no task \"%s\": %s/%s has no instance: corral scale took it to 0 "
				 "(`corral scale %s/%s=N` brings N back)",
				 target, group->config->name, set, group->config->name, set);
			return NULL;
		}
	}
	/* The sets at 0 are tasks of the group too, listed after the others
	 * (a group whose only task is at 0 would list nothing). */
	size_t zero_count = group->zero_sets.count, count = group->task_count + zero_count;
	const char *names[count ? count : 1];
	char zero_names[zero_count ? zero_count : 1][160];
	names[0] = NULL;
	for (size_t i = 0; i < group->task_count; i++)
		names[i] = group->tasks[i]->config->full_name;
	for (size_t i = 0; i < zero_count; i++) {
		snprintf(zero_names[i], sizeof(zero_names[i]), "%s/%s (0 instances)",
			 group->config->name, group->zero_sets.items[i].task);
		names[group->task_count + i] = zero_names[i];
	}
	char list[1024];
	list_names(list, sizeof(list), names, count);
	snprintf(error, error_size, "no task \"%s\"; tasks of group %s: %s", target,
		 group->config->name, list);
	return NULL;
}

struct group *control_scope_instances(struct group *const *groups, size_t group_count,
				      const char *target, const char **name, size_t *count)
{
	const char *slash = strchr(target, '/');
	*count = 0;
	if (!slash || strchr(slash, '@'))
		return NULL;
	struct group *group = group_find(groups, group_count, target, (size_t)(slash - target));
	if (!group)
		return NULL;
	for (size_t i = 0; i < group->task_count; i++) {
		const struct task_config *config = group->tasks[i]->config;
		if (strcmp(config->full_name, target) == 0)
			return NULL;
		*count += config->instance_of && strcmp(config->instance_of, slash + 1) == 0;
	}
	*name = slash + 1;
	return *count ? group : NULL;
}

int control_scope_resolve(struct group *const *groups, size_t group_count, const char *target,
			  struct control_scope *scope, char *error, size_t error_size)
{
	size_t count;
	*scope = (struct control_scope){0};
	if (!target[0])
		return 0;
	if (!strchr(target, '/'))
		return (scope->group =
			    control_scope_group(groups, group_count, target, error, error_size))
			   ? 0
			   : -1;
	if ((scope->group = control_scope_instances(groups, group_count, target,
						    &scope->instances_of, &count)))
		return 0;
	/* A task corral scale took to 0: still defined, with no instance in
	 * its scope (status shows the set; it is ready, having none to ask). */
	const char *slash = strchr(target, '/');
	struct group *group = group_find(groups, group_count, target, (size_t)(slash - target));
	if (group && zero_sets_find(&group->zero_sets, slash + 1)) {
		scope->group = group;
		scope->instances_of = slash + 1;
		return 0;
	}
	return (scope->task = control_scope_task(groups, group_count, target, error, error_size))
		   ? 0
		   : -1;
}
