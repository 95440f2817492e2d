/* GET /readyz: `corral status --ready` over HTTP, for Kubernetes' httpGet
 * probes. The tasks are judged by the one rule (ready_rule.h) on the facts
 * the status reply is written from (task_ready.h), said in status_ready.h's
 * words, and a target is found as the control socket finds it
 * (control_scope.h): the same answer, the same names, the same errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json_writer.h"
#include "base/xmalloc.h"
#include "supervisor/control/control_protocol.h"
#include "supervisor/control/control_scope.h"
#include "supervisor/control/status_ready.h"
#include "supervisor/http/http_routes.h"
#include "supervisor/tasks/task_dependencies.h"
#include "supervisor/tasks/task_ready.h"
#include "supervisor/tasks/task_schedule.h"

/* One parameter's decoded value into `value`; false with the error
 * answered. */
static bool decode_parameter(const struct http_parameter *parameter, const char *name, char *value,
			     size_t size, struct http_response *response)
{
	int length = http_percent_decode(parameter->value, parameter->value_length, value, size);
	if (length > 0)
		return true;
	/* An empty value would ask about every task; say that, not a length. */
	char message[160];
	if (length == 0)
		snprintf(message, sizeof(message), "%s= is empty: name a %s", name, name);
	else
		snprintf(message, sizeof(message),
			 "%s= must be a name of at most %zu bytes (%%XX escapes decoded; no NUL)",
			 name, size - 1);
	http_response_error(response, 400, message);
	return false;
}

/* The control target the query names: "" (every task), "G", "G/T".
 * false with the error answered. */
static bool query_target(const struct http_request *request, char *target, size_t size,
			 struct http_response *response)
{
	char group[CONTROL_TARGET_MAX + 1] = "", task[CONTROL_TARGET_MAX + 1] = "";
	const char *cursor = request->query_length ? request->query : NULL;
	const char *end = request->query + request->query_length;
	struct http_parameter parameter;
	while (http_query_next(&cursor, end, &parameter)) {
		bool is_group = parameter.name_length == 5 && !memcmp(parameter.name, "group", 5);
		bool is_task = parameter.name_length == 4 && !memcmp(parameter.name, "task", 4);
		if (parameter.name_length == 0) {
			/* `?&`, `?group=web&`, `?=web`: a typo, not "every task". */
			http_response_error(response, 400,
					    "a parameter without a name (a stray & or =): /readyz "
					    "takes group=GROUP and task=TASK (or task=GROUP/TASK)");
			return false;
		}
		if (!is_group && !is_task) {
			char message[192];
			snprintf(message, sizeof(message),
				 "unknown parameter \"%.*s\": /readyz takes group=GROUP and "
				 "task=TASK (or task=GROUP/TASK)",
				 (int)(parameter.name_length > 64 ? 64 : parameter.name_length),
				 parameter.name);
			http_response_error(response, 400, message);
			return false;
		}
		char *value = is_group ? group : task;
		if (value[0]) {
			http_response_error(response, 400,
					    is_group ? "group= is given twice"
						     : "task= is given twice");
			return false;
		}
		if (!decode_parameter(&parameter, is_group ? "group" : "task", value, sizeof(group),
				      response))
			return false;
	}
	bool task_has_group = strchr(task, '/') != NULL;
	if (task[0] && !group[0] && !task_has_group) {
		http_response_error(response, 400,
				    "task= names a task as GROUP/TASK, or goes with group=GROUP");
		return false;
	}
	if (group[0] && task_has_group) {
		http_response_error(
		    response, 400,
		    "task=GROUP/TASK names its group: give group= or that, not both");
		return false;
	}
	if (strchr(group, '/')) {
		http_response_error(response, 400, "group= names a group, not GROUP/TASK");
		return false;
	}
	int length = group[0] && task[0] ? snprintf(target, size, "%s/%s", group, task)
					 : snprintf(target, size, "%s", group[0] ? group : task);
	if (length < 0 || (size_t)length >= size) {
		http_response_error(response, 400, "group= and task= name more than a task can");
		return false;
	}
	return true;
}

void http_readyz(const struct http_request *request, const struct http_sources *sources,
		 uint64_t now_ms, struct http_response *response)
{
	char target[CONTROL_TARGET_MAX + 1], error[1024];
	struct control_scope scope;
	if (!query_target(request, target, sizeof(target), response))
		return;
	if (control_scope_resolve(sources->groups, sources->group_count, target, &scope, error,
				  sizeof(error)) < 0) {
		http_response_error(response, 404, error);
		return;
	}
	/* {"ready": BOOL, "not_ready": [{"task", "state", "reason"}...]}: the
	 * list written first, as it tells what `ready` is. */
	struct json_writer list;
	jw_init(&list, 256);
	jw_array_open(&list);
	bool ready = true;
	for (size_t g = 0; g < sources->group_count; g++) {
		struct group *group = sources->groups[g];
		if (!control_scope_includes_group(&scope, group))
			continue;
		for (size_t t = 0; t < group->task_count; t++) {
			const struct task *task = group->tasks[t];
			if (!control_scope_includes(&scope, task))
				continue;
			struct ready_rule_facts facts = task_ready_facts(task, now_ms);
			if (ready_rule_verdict(&facts) != READY_VERDICT_NOT_READY)
				continue;
			const char *state = task_schedule_shown_state(task);
			char reason[256], waiting[192];
			bool waits =
			    task->runner.state == TASK_PENDING &&
			    task_dependencies_describe_wait(task, waiting, sizeof(waiting));
			status_ready_reason(state, &facts, waits ? waiting : NULL, reason,
					    sizeof(reason));
			ready = false;
			jw_object_open(&list);
			jw_field_cstring(&list, "task", task->config->full_name);
			jw_field_cstring(&list, "state", state);
			jw_field_cstring(&list, "reason", reason);
			jw_object_close(&list);
		}
	}
	jw_array_close(&list);
	size_t list_length;
	char *list_text = jw_take_line(&list, &list_length, NULL);
	list_text[--list_length] = '\0'; /* its newline: the body ends with it */
	*response = (struct http_response){.status = ready ? 200 : 503,
					   .content_type = HTTP_CONTENT_TYPE_JSON};
	response->body =
	    xasprintf("{\"ready\":%s,\"not_ready\":%s}\n", ready ? "true" : "false", list_text);
	response->body_length = strlen(response->body);
	free(list_text);
}
