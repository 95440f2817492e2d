#include "supervisor/tasks/zero_sets.h"

#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"
#include "config/load/config_copy.h"

const struct zero_set *zero_sets_find(const struct zero_sets *sets, const char *task)
{
	for (size_t i = 0; i < sets->count; i++)
		if (strcmp(sets->items[i].task, task) == 0)
			return &sets->items[i];
	return NULL;
}

void zero_sets_add(struct zero_sets *sets, const char *task, const struct task_config *model,
		   unsigned configured)
{
	zero_sets_remove(sets, task);
	sets->items = xreallocarray(sets->items, sets->count + 1, sizeof(*sets->items));
	struct zero_set *set = &sets->items[sets->count++];
	set->task = xstrdup(task);
	task_config_copy(&set->model, model);
	set->configured = configured;
}

static void free_set(struct zero_set *set)
{
	free(set->task);
	task_config_copy_free(&set->model);
}

void zero_sets_remove(struct zero_sets *sets, const char *task)
{
	for (size_t i = 0; i < sets->count; i++)
		if (strcmp(sets->items[i].task, task) == 0) {
			free_set(&sets->items[i]);
			sets->items[i] = sets->items[--sets->count];
			return;
		}
}

void zero_sets_clear(struct zero_sets *sets)
{
	for (size_t i = 0; i < sets->count; i++)
		free_set(&sets->items[i]);
	free(sets->items);
	*sets = (struct zero_sets){0};
}
