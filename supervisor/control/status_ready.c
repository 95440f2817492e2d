#include "supervisor/control/status_ready.h"

#include <stdbool.h>
#include <string.h>

#include "supervisor/lifecycle/ready_rule.h"

static const char *string_field(const json_t *object, const char *name)
{
	const json_t *value = json_object_get(object, name);
	return json_is_string(value) ? json_string_value(value) : "?";
}

/* A task's fields in a status reply, as the rule reads them. */
static struct ready_rule_facts facts_of(const json_t *task)
{
	const char *stage = string_field(task, "stage");
	const json_t *last_exit = json_object_get(task, "last_exit");
	bool exited = json_is_object(last_exit);
	return (struct ready_rule_facts){
	    .stays_up = strcmp(stage, "main") == 0 || strstr(stage, "-sidecar") != NULL,
	    .state = ready_rule_state_parse(string_field(task, "state")),
	    .ready = json_is_true(json_object_get(task, "ready")),
	    .ready_lost = json_is_true(json_object_get(task, "ready_lost")),
	    .failed = json_is_true(json_object_get(task, "failed")),
	    .last_exit_failed = exited && json_is_true(json_object_get(last_exit, "failed")),
	    .last_exit_requested = exited && json_is_true(json_object_get(last_exit, "requested")),
	    .restart_pending = json_is_integer(json_object_get(task, "next_restart_in_ms")),
	    .roll_covered = json_is_true(json_object_get(task, "roll_covered")),
	};
}

void status_ready_reason(const char *state, const struct ready_rule_facts *facts,
			 const char *waiting, char *error, size_t error_size)
{
	if (facts->state == READY_RULE_RUNNING)
		snprintf(error, error_size, "%s%s", state,
			 facts->ready_lost ? ", was ready; its readiness check fails now"
					   : ", has not said it is ready");
	else if (waiting && *waiting)
		snprintf(error, error_size, "%s, %s", state, waiting);
	else if (facts->restart_pending)
		snprintf(error, error_size, "%s, restarts after its delay", state);
	else
		snprintf(error, error_size, "%s", state);
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
			struct ready_rule_facts facts = facts_of(task);
			if (ready_rule_verdict(&facts) != READY_VERDICT_NOT_READY)
				continue;
			char error[256];
			const json_t *waiting = json_object_get(task, "waiting_for");
			status_ready_reason(string_field(task, "state"), &facts,
					    json_is_string(waiting) ? json_string_value(waiting)
								    : NULL,
					    error, sizeof(error));
			not_ready++;
			fprintf(out, "%s: not ready (%s)\n", string_field(task, "task"), error);
		}
	}
	if (!not_ready)
		fprintf(out, "ready\n");
	return not_ready ? 1 : 0;
}
