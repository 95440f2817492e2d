#include "supervisor/control/status_ready.h"

#include <stdbool.h>
#include <string.h>

/* Tasks that stay up: the ones a probe asks about. */
static bool stays_up(const char *stage)
{
	return strcmp(stage, "main") == 0 || strstr(stage, "-sidecar") != NULL;
}

/* Dead without having failed, and not waiting to be started again: a
 * one-shot that completed, a scheduled task between its runs, a task never
 * started (autostart: false). Neither ready nor not ready: a readiness
 * probe on corral must not fail for ever because a config has a cron task
 * or a migration that ran. A task stopped on request (`corral stop`) is
 * not at rest: what should be up is down, and a healthcheck says so. */
static bool is_at_rest(const json_t *task)
{
	const json_t *state = json_object_get(task, "state");
	/* `waiting`: a scheduled task between its runs (a corral before
	 * issue 28 said `dead`). */
	if (!json_is_string(state) || (strcmp(json_string_value(state), "dead") != 0 &&
				       strcmp(json_string_value(state), "waiting") != 0))
		return false;
	if (json_is_true(json_object_get(task, "failed")))
		return false;
	const json_t *last_exit = json_object_get(task, "last_exit");
	if (json_is_object(last_exit) && (json_is_true(json_object_get(last_exit, "failed")) ||
					  (strcmp(json_string_value(state), "dead") == 0 &&
					   json_is_true(json_object_get(last_exit, "requested")))))
		return false;
	/* A crash waiting out its restart delay is on its way back up. */
	return !json_is_integer(json_object_get(task, "next_restart_in_ms"));
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
			if (!stays_up(string_field(task, "stage")) || is_at_rest(task))
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
