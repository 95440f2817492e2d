#include "supervisor/control/status_ready.h"

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
static bool is_at_rest(const struct status_ready_facts *facts)
{
	/* `waiting`: a scheduled task between its runs (a corral before
	 * issue 28 said `dead`). */
	bool dead = strcmp(facts->state, "dead") == 0;
	if (!dead && strcmp(facts->state, "waiting") != 0)
		return false;
	if (facts->failed || facts->last_exit_failed || (dead && facts->last_exit_requested))
		return false;
	/* A crash waiting out its restart delay is on its way back up. */
	return !facts->restart_due;
}

bool status_ready_holds_back(const struct status_ready_facts *facts, char *why, size_t why_size)
{
	if (!stays_up(facts->stage) || is_at_rest(facts))
		return false;
	bool running = strcmp(facts->state, "running") == 0;
	if (running && facts->ready)
		return false;
	snprintf(why, why_size, "%s%s", facts->state,
		 !running            ? ""
		 : facts->ready_lost ? ", was ready; its readiness check fails now"
				     : ", has not said it is ready");
	return true;
}

/* ---- the CLI's side: the facts as a status reply carries them ---- */

static const char *string_field(const json_t *object, const char *name)
{
	const json_t *value = json_object_get(object, name);
	return json_is_string(value) ? json_string_value(value) : "?";
}

static void facts_of_reply_task(const json_t *task, struct status_ready_facts *facts)
{
	const json_t *last_exit = json_object_get(task, "last_exit");
	*facts = (struct status_ready_facts){
	    .task = string_field(task, "task"),
	    .stage = string_field(task, "stage"),
	    .state = string_field(task, "state"),
	    .ready = json_is_true(json_object_get(task, "ready")),
	    .ready_lost = json_is_true(json_object_get(task, "ready_lost")),
	    .failed = json_is_true(json_object_get(task, "failed")),
	    .last_exit_failed = json_is_true(json_object_get(last_exit, "failed")),
	    .last_exit_requested = json_is_true(json_object_get(last_exit, "requested")),
	    .restart_due = json_is_integer(json_object_get(task, "next_restart_in_ms")),
	};
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
			struct status_ready_facts facts;
			char why[256];
			facts_of_reply_task(task, &facts);
			if (!status_ready_holds_back(&facts, why, sizeof(why)))
				continue;
			not_ready++;
			fprintf(out, "%s: not ready (%s)\n", facts.task, why);
		}
	}
	if (!not_ready)
		fprintf(out, "ready\n");
	return not_ready ? 1 : 0;
}
