/* After each settle, what reloads left behind (supervisor/reload.h): the
 * tasks and groups a reload removed, freed once they are dead, and the
 * configs no group or task points into any more. */
#include <stdlib.h>

#include "config/load/config_load.h"
#include "supervisor/reload.h"

static bool task_is_gone(const struct task *task)
{
	return task->removed && task->runner.state == TASK_DEAD && !task_has_process(task) &&
	       !task_hooks_busy(task->hooks);
}

static bool free_removed_tasks(struct supervisor *supervisor, struct group *group)
{
	size_t kept = 0;
	bool freed = false;
	for (size_t i = 0; i < group->task_count; i++) {
		struct task *task = group->tasks[i];
		if (!task_is_gone(task)) {
			group->tasks[kept++] = task;
			continue;
		}
		if (supervisor->control)
			control_server_forget(supervisor->control, CONTROL_FOLLOW_LOGS, task);
		exec_sessions_forget_task(&supervisor->exec_sessions, task);
		task_free(task);
		free(task);
		freed = true;
	}
	group->task_count = kept;
	return freed;
}

static bool group_is_gone(const struct group *group)
{
	if (!group->removed || !group->finished || group_has_processes(group))
		return false;
	for (size_t i = 0; i < group->task_count; i++)
		if (task_hooks_busy(group->tasks[i]->hooks))
			return false;
	return true;
}

static bool in_config(const struct config *config, const void *pointer)
{
	for (size_t g = 0; g < config->group_count; g++) {
		const struct group_config *group = &config->groups[g];
		if (pointer == group)
			return true;
		if ((const void *)group->tasks <= pointer &&
		    pointer < (const void *)(group->tasks + group->task_count))
			return true;
	}
	return false;
}

static bool generation_in_use(const struct supervisor *supervisor, const struct config *config)
{
	if (config == supervisor->config)
		return true;
	for (size_t g = 0; g < supervisor->group_count; g++) {
		const struct group *group = supervisor->groups[g];
		if (in_config(config, group->config))
			return true;
		for (size_t t = 0; t < group->task_count; t++) {
			const struct task *task = group->tasks[t];
			if (in_config(config, task->config) ||
			    (task->next_config && in_config(config, task->next_config)))
				return true;
		}
	}
	return false;
}

static void free_unused_generations(struct supervisor *supervisor)
{
	size_t kept = 0;
	for (size_t i = 0; i < supervisor->generation_count; i++) {
		struct config_generation *generation = &supervisor->generations[i];
		if (generation->owned && !generation_in_use(supervisor, generation->config))
			config_free(generation->config);
		else
			supervisor->generations[kept++] = *generation;
	}
	supervisor->generation_count = kept;
}

void reload_collect(struct supervisor *supervisor)
{
	if (!supervisor->generation_count)
		return; /* no reload yet: nothing can be waiting */
	bool changed = false;
	size_t kept = 0;
	for (size_t i = 0; i < supervisor->group_count; i++) {
		struct group *group = supervisor->groups[i];
		changed |= free_removed_tasks(supervisor, group);
		if (!group_is_gone(group)) {
			supervisor->groups[kept++] = group;
			continue;
		}
		for (size_t t = 0; t < group->task_count; t++) {
			exec_sessions_forget_task(&supervisor->exec_sessions, group->tasks[t]);
			if (supervisor->control)
				control_server_forget(supervisor->control, CONTROL_FOLLOW_LOGS,
						      group->tasks[t]);
		}
		if (supervisor->control)
			control_server_forget(supervisor->control, CONTROL_FOLLOW_LOGS_GROUP,
					      group);
		group_free(group);
		free(group);
		changed = true;
	}
	supervisor->group_count = kept;
	if (changed) {
		task_dependencies_relink(supervisor->groups, supervisor->group_count,
					 supervisor->config);
		supervisor_groups_changed(supervisor);
	}
	free_unused_generations(supervisor);
}

void reload_free_generations(struct supervisor *supervisor)
{
	for (size_t i = 0; i < supervisor->generation_count; i++)
		if (supervisor->generations[i].owned)
			config_free(supervisor->generations[i].config);
	free(supervisor->generations);
	supervisor->generations = NULL;
	supervisor->generation_count = 0;
}
