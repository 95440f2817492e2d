#include "supervisor/control/status_ready.h"

#include <stdbool.h>
#include <string.h>

/* Tasks that stay up: the ones a probe asks about. */
static bool stays_up(const char *stage)
{
	return strcmp(stage, "main") == 0 || strstr(stage, "-sidecar") != NULL;
}

static const char *string_field(const json_t *object, const char *name)
{
	const json_t *value = json_object_get(object, name);
	return json_is_string(value) ? json_string_value(value) : "?";
}

int status_ready_check(FILE *out, const json_t *reply)
{
	const json_t *groups = json_object_get(reply, "groups");
	if (!json_is_array(groups))
		return -1;
	unsigned not_ready = 0;
	size_t g, t;
	const json_t *group, *task;
	json_array_foreach(groups, g, group)
	{
		const json_t *tasks = json_object_get(group, "tasks");
		if (!json_is_array(tasks))
			continue;
		json_array_foreach(tasks, t, task)
		{
			if (!stays_up(string_field(task, "stage")))
				continue;
			const char *state = string_field(task, "state");
			bool ready = json_is_true(json_object_get(task, "ready"));
			if (strcmp(state, "running") == 0 && ready)
				continue;
			bool lost = json_is_true(json_object_get(task, "ready_lost"));
			not_ready++;
			fprintf(out, "%s: not ready (%s%s)\n", string_field(task, "task"), state,
				strcmp(state, "running") != 0 ? ""
				: lost ? ", was ready; its readiness check fails now"
				       : ", has not said it is ready");
		}
	}
	if (!not_ready)
		fprintf(out, "ready\n");
	return not_ready ? 1 : 0;
}
