/* Canned status replies for the corral top tests (test_top_*.c): a web
 * group of two tasks and a db group of one, the CPU times of `app` given
 * so that two replies a second apart make a known CPU %. */
#pragma once

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/json_view.h"
#include "cli/top/top_model.h"

/* One task object; `cpu_usec` and `age_ms` for its usage. */
#define TOP_TASK_JSON(group, name, state, restarts, cpu_usec, memory, age_ms)                      \
	"{\"name\": \"" name "\", \"task\": \"" group "/" name "\", \"stage\": \"main\", "         \
	"\"state\": \"" state "\", \"pid\": 42, \"uptime_ms\": 61000, \"restarts\": " #restarts    \
	", \"readiness_kind\": \"exec\", \"ready\": true, \"probes\": {\"health\": "               \
	"{\"consecutive_failures\": 2, \"failures_to_restart\": 3, \"passed\": false}}, "          \
	"\"last_exit\": null, \"next_restart_in_ms\": null, \"usage\": {\"cpu_usec\": " #cpu_usec  \
	", \"memory_bytes\": " #memory ", \"memory_limit_bytes\": null, \"age_ms\": " #age_ms "}}"

/* Builds a model from `text` (copied: json_view parses in place). */
static inline void top_model_from(struct top_model *model, const char *text, int64_t now_ms,
				  const struct top_model *previous)
{
	char *copy = strdup(text);
	struct json_view view;
	char error[128];
	if (json_view_parse(&view, copy, strlen(copy), error, sizeof(error)) < 0) {
		fprintf(stderr, "canned reply is not JSON: %s\n", error);
		abort();
	}
	if (top_model_build(model, view.values, now_ms, previous) < 0) {
		fprintf(stderr, "canned reply has no groups\n");
		abort();
	}
	json_view_free(&view);
	free(copy);
}

/* web/app at `app_cpu` µs, web/worker 8 restarts and 300M, db/store dead. */
#define TOP_REPLY(app_cpu)                                                                         \
	"{\"ok\": true, \"corral\": {\"pid\": 1, \"version\": \"0.1.0\", \"uptime_ms\": "          \
	"3720000}, "                                                                               \
	"\"groups\": [{\"name\": \"web\", \"state\": \"running\", \"stopping\": false, "           \
	"\"finished\": false, \"tasks\": [" TOP_TASK_JSON(                                         \
	    "web", "app", "running", 1, app_cpu, 10485760,                                         \
	    0) ", " TOP_TASK_JSON("web", "worker", "running", 8, 500000, 314572800,                \
				  0) "]}, "                                                        \
				     "{\"name\": \"db\", \"state\": \"main\", \"stopping\": "      \
				     "true, \"finished\": false, "                                 \
				     "\"tasks\": [{\"name\": \"store\", \"task\": \"db/store\", "  \
				     "\"state\": \"dead\", "                                       \
				     "\"pid\": null, \"uptime_ms\": null, \"restarts\": 0, "       \
				     "\"next_restart_in_ms\": 2500, "                              \
				     "\"last_exit\": {\"description\": \"exited with code 3\"}, "  \
				     "\"usage\": null}]}]}"
