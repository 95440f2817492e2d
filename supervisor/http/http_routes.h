/* What corral's HTTP endpoint serves: GET (and HEAD) /livez, /readyz and
 * /metrics, read-only, from the running groups (docs/http.md). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "supervisor/http/http_request.h"
#include "supervisor/http/http_response.h"
#include "supervisor/metrics/metrics_format.h"
#include "supervisor/tasks/group.h"

/* What the answers are made from: the supervisor's, kept up to date by
 * it (a reload changes the groups). */
struct http_sources {
	struct group *const *groups;
	size_t group_count;
	/* GET /metrics' text in `format`, which the caller frees
	 * (supervisor_metrics_text). */
	char *(*metrics)(void *context, enum metrics_format format, size_t *length);
	void *context;
};

/* The response to a parsed request. */
void http_route(const struct http_request *request, const struct http_sources *sources,
		uint64_t now_ms, struct http_response *response);

/* GET /readyz[?group=G[&task=T] | ?task=G/T]: `corral status --ready`'s
 * judgement of the same tasks (status_ready.h): 200 when every task asked
 * is ready, 503 naming those that are not and why; 404 for a group or task
 * that is not there, 400 for a query it does not take. (http_readyz.c) */
void http_readyz(const struct http_request *request, const struct http_sources *sources,
		 uint64_t now_ms, struct http_response *response);
