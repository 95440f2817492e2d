/* The reload plan (reload_plan.h): two lists walked side by side, what
 * runs and what the new config says, by name. */
#include "supervisor/lifecycle/reload_plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"

static const char *const action_names[] = {
    [RELOAD_KEEP] = "unchanged", [RELOAD_UPDATE] = "updated", [RELOAD_REPLACE] = "replaced",
    [RELOAD_ADD] = "added",      [RELOAD_REMOVE] = "removed",
};

const char *reload_action_name(enum reload_action action)
{
	return action_names[action];
}

void reload_running_of_config(struct reload_running *running, const struct config *config)
{
	*running = (struct reload_running){.config = config, .group_count = config->group_count};
	running->groups = xcalloc(config->group_count + 1, sizeof(*running->groups));
	for (size_t g = 0; g < config->group_count; g++) {
		const struct group_config *group = &config->groups[g];
		struct reload_running_group *view = &running->groups[g];
		*view = (struct reload_running_group){.definition = group,
						      .task_count = group->task_count};
		view->tasks = xcalloc(group->task_count + 1, sizeof(*view->tasks));
		for (size_t t = 0; t < group->task_count; t++)
			view->tasks[t].definition = &group->tasks[t];
	}
}

void reload_running_free(struct reload_running *running)
{
	for (size_t g = 0; g < running->group_count; g++)
		free(running->groups[g].tasks);
	free(running->groups);
	*running = (struct reload_running){0};
}

static size_t find_running_group(const struct reload_running *running, const char *name)
{
	for (size_t i = 0; i < running->group_count; i++)
		if (strcmp(running->groups[i].definition->name, name) == 0)
			return i;
	return RELOAD_NOT_RUNNING;
}

static size_t find_running_task(const struct reload_running_group *group, const char *name)
{
	for (size_t i = 0; i < group->task_count; i++)
		if (strcmp(group->tasks[i].definition->name, name) == 0)
			return i;
	return RELOAD_NOT_RUNNING;
}

static bool group_has_task(const struct group_config *definition, const char *name)
{
	for (size_t t = 0; t < definition->task_count; t++)
		if (strcmp(definition->tasks[t].name, name) == 0)
			return true;
	return false;
}

static bool config_has_group(const struct config *config, const char *name)
{
	for (size_t g = 0; g < config->group_count; g++)
		if (strcmp(config->groups[g].name, name) == 0)
			return true;
	return false;
}

static struct reload_task_step *add_task_step(struct reload_plan *plan, enum reload_action action,
					      size_t running_group, size_t running_task,
					      const struct task_config *definition,
					      const struct group_config *group_definition)
{
	struct reload_task_step *step = &plan->tasks[plan->task_count++];
	*step = (struct reload_task_step){.action = action,
					  .running_group = running_group,
					  .running_task = running_task,
					  .definition = definition,
					  .group_definition = group_definition};
	return step;
}

static enum reload_action action_of(const struct task_diff *diff)
{
	switch (diff->change) {
	case TASK_CHANGE_NONE:
		return RELOAD_KEEP;
	case TASK_CHANGE_IN_PLACE:
		return RELOAD_UPDATE;
	case TASK_CHANGE_REPLACE:
		break;
	}
	return RELOAD_REPLACE;
}

static int plan_group_tasks(struct reload_plan *plan, const struct reload_running *running,
			    size_t running_group, const struct group_config *definition)
{
	const struct reload_running_group *group = &running->groups[running_group];
	for (size_t t = 0; t < definition->task_count; t++) {
		const struct task_config *task_definition = &definition->tasks[t];
		size_t found = find_running_task(group, task_definition->name);
		if (found == RELOAD_NOT_RUNNING) {
			add_task_step(plan, RELOAD_ADD, running_group, found, task_definition,
				      definition);
			continue;
		}
		const struct reload_running_task *task = &group->tasks[found];
		if (task->removed) {
			snprintf(plan->refusal, sizeof(plan->refusal),
				 "%s was removed by an earlier reload and is still stopping: "
				 "reload again once it is dead",
				 task_definition->full_name);
			return -1;
		}
		struct task_diff diff;
		task_config_diff(task->definition, task_definition, &diff);
		add_task_step(plan, action_of(&diff), running_group, found, task_definition,
			      definition)
		    ->diff = diff;
	}
	for (size_t i = 0; i < group->task_count; i++) {
		const struct reload_running_task *task = &group->tasks[i];
		if (!task->removed && !group_has_task(definition, task->definition->name))
			add_task_step(plan, RELOAD_REMOVE, running_group, i, NULL, definition);
	}
	return 0;
}

/* A kept group: refused when it is still stopping after a removal or a
 * key changed that only its making reads; else its tasks. */
static int plan_kept_group(struct reload_plan *plan, const struct reload_running *running,
			   struct reload_group_step *step)
{
	const struct reload_running_group *group = &running->groups[step->running];
	const struct group_config *definition = step->definition;
	if (group->removed) {
		snprintf(plan->refusal, sizeof(plan->refusal),
			 "group %s was removed by an earlier reload and is still stopping: "
			 "reload again once it has finished",
			 definition->name);
		return -1;
	}
	const char *fixed = config_diff_fixed_group_key(group->definition, definition);
	if (fixed) {
		snprintf(plan->refusal, sizeof(plan->refusal),
			 "group %s: %s changed: it takes effect only when the group is "
			 "made; remove the group in one reload and add it back in the "
			 "next, or restart corral",
			 definition->name, fixed);
		return -1;
	}
	bool own_keys_changed = memcmp(&group->definition->on_failure, &definition->on_failure,
				       sizeof(definition->on_failure)) != 0;
	step->action = own_keys_changed ? RELOAD_UPDATE : RELOAD_KEEP;
	return plan_group_tasks(plan, running, step->running, definition);
}

int reload_plan_make(const struct reload_running *running, const struct config *new_config,
		     struct reload_plan *plan)
{
	size_t task_total = 0;
	for (size_t g = 0; g < new_config->group_count; g++)
		task_total += new_config->groups[g].task_count;
	for (size_t g = 0; g < running->group_count; g++)
		task_total += running->groups[g].task_count;
	*plan = (struct reload_plan){0};
	plan->groups =
	    xcalloc(new_config->group_count + running->group_count + 1, sizeof(*plan->groups));
	plan->tasks = xcalloc(task_total + 1, sizeof(*plan->tasks));

	const char *fixed = config_diff_fixed_global(running->config, new_config);
	if (fixed) {
		snprintf(plan->refusal, sizeof(plan->refusal),
			 "%s changed: it takes effect only when corral starts; nothing was "
			 "applied",
			 fixed);
		return -1;
	}
	for (size_t g = 0; g < new_config->group_count; g++) {
		const struct group_config *definition = &new_config->groups[g];
		struct reload_group_step *step = &plan->groups[plan->group_count++];
		*step = (struct reload_group_step){
		    RELOAD_ADD, find_running_group(running, definition->name), definition};
		if (step->running != RELOAD_NOT_RUNNING && plan_kept_group(plan, running, step) < 0)
			return -1;
	}
	for (size_t i = 0; i < running->group_count; i++) {
		const struct reload_running_group *group = &running->groups[i];
		if (!group->removed && !config_has_group(new_config, group->definition->name))
			plan->groups[plan->group_count++] =
			    (struct reload_group_step){RELOAD_REMOVE, i, NULL};
	}
	return 0;
}

void reload_plan_free(struct reload_plan *plan)
{
	free(plan->groups);
	free(plan->tasks);
	*plan = (struct reload_plan){0};
}
