/* A response of corral's HTTP endpoint: its status, its body, and the
 * head that goes before them. Pure but for the body's allocation. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

/* The head is short: a status line and six fields. */
#define HTTP_RESPONSE_HEAD_MAX 512

struct http_response {
	int status;
	const char *content_type;
	char *body; /* malloc'd, or NULL for none */
	size_t body_length;
	bool allow; /* 405: say `Allow: GET, HEAD` */
};

#define HTTP_CONTENT_TYPE_JSON "application/json"
#define HTTP_CONTENT_TYPE_TEXT "text/plain; charset=utf-8"

/* "OK", "Not Found"... for the statuses the endpoint answers. */
const char *http_reason(int status);

/* A JSON body {"error": MESSAGE} with `status`. */
void http_response_error(struct http_response *response, int status, const char *message);

/* The status line and header fields into `head` (at least
 * HTTP_RESPONSE_HEAD_MAX bytes), ending in the empty line; its length.
 * `keep_alive`: the connection stays open after it. */
size_t http_response_head(const struct http_response *response, bool keep_alive, time_t now,
			  char *head, size_t size);

void http_response_free(struct http_response *response);
