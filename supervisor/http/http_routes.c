#include "supervisor/http/http_routes.h"

#include <string.h>

#include "base/xmalloc.h"

static void livez(struct http_response *response)
{
	/* Answered at all: the loop turns. */
	static const char body[] = "ok\n";
	*response = (struct http_response){.status = 200,
					   .content_type = HTTP_CONTENT_TYPE_TEXT,
					   .body = xstrdup(body),
					   .body_length = sizeof(body) - 1};
}

/* OpenMetrics for a scraper that asks for it (Prometheus does), else
 * Prometheus' text format 0.0.4, which curl, promtool and other agents
 * read (metrics_format.h). */
static void metrics(const struct http_request *request, const struct http_sources *sources,
		    struct http_response *response)
{
	enum metrics_format format =
	    metrics_format_for_accept(request->accept, request->accept_length);
	*response =
	    (struct http_response){.status = 200, .content_type = metrics_content_type(format)};
	response->body = sources->metrics(sources->context, format, &response->body_length);
}

static bool path_is(const struct http_request *request, const char *path)
{
	return request->path_length == strlen(path) &&
	       memcmp(request->path, path, request->path_length) == 0;
}

void http_route(const struct http_request *request, const struct http_sources *sources,
		uint64_t now_ms, struct http_response *response)
{
	enum { LIVEZ, READYZ, METRICS } route;
	if (path_is(request, "/livez"))
		route = LIVEZ;
	else if (path_is(request, "/readyz"))
		route = READYZ;
	else if (path_is(request, "/metrics"))
		route = METRICS;
	else {
		http_response_error(response, 404,
				    "no such endpoint: corral serves /livez, /readyz and /metrics");
		return;
	}
	if (request->method == HTTP_METHOD_OTHER) {
		http_response_error(response, 405, "only GET and HEAD are served here");
		response->allow = true;
		return;
	}
	switch (route) {
	case LIVEZ:
		livez(response);
		break;
	case READYZ:
		http_readyz(request, sources, now_ms, response);
		break;
	case METRICS:
		metrics(request, sources, response);
		break;
	}
}
