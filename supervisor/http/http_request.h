/* An HTTP/1.0 or 1.1 request head, as corral's endpoint reads it
 * (RFC 9112): the request line and the header fields up to the empty line,
 * nothing more, since no request may have a body. Pure, so that it is
 * unit-tested and fuzzed (tests/fuzz/fuzz_http_request.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* A head may not be longer: 431 (Request Header Fields Too Large), or 414
 * (URI Too Long) when its request line alone is. */
#define HTTP_REQUEST_HEAD_MAX 8192

enum http_method {
	HTTP_METHOD_GET,
	HTTP_METHOD_HEAD,
	HTTP_METHOD_OTHER, /* a valid method this endpoint does not serve: 405 */
};

struct http_request {
	enum http_method method;
	/* Into the buffer parsed: the path of the target (an absolute-form
	 * target's too), and the query after its '?' (length 0: none). */
	const char *path;
	size_t path_length;
	const char *query;
	size_t query_length;
	unsigned version_minor; /* HTTP/1.0 or HTTP/1.1 */
	/* HTTP/1.1 unless `Connection: close`; HTTP/1.0 with
	 * `Connection: keep-alive` only. */
	bool keep_alive;
	/* The Accept field's value, blanks around it left out (length 0:
	 * none; of several, the first): which format /metrics answers in. */
	const char *accept;
	size_t accept_length;
	/* On a refusal: the status to answer (400, 413, 505), and why. */
	int refusal;
};

/* Where the head in buffer[0..length) ends: the length of the head with
 * its empty line (CRLF or LF endings), or 0 when it has not ended yet.
 * Empty lines before the request line are part of the head (RFC 9112,
 * 2.2). *scanned keeps where to go on from with more bytes: 0 at first. */
size_t http_head_end(const char *buffer, size_t length, size_t *scanned);

/* For a head that has not ended within HTTP_REQUEST_HEAD_MAX bytes: 414
 * when its request line has not ended either, else 431. */
int http_head_too_large_status(const char *buffer, size_t length);

/* Reads a whole head (what http_head_end measured). 0 with `request`
 * filled; -1 with request->refusal and the reason in `error`: 400 for
 * what is not HTTP/1.x, 505 for another version, 413 for a request with a
 * body (Content-Length other than 0, or Transfer-Encoding). */
int http_request_parse(const char *head, size_t length, struct http_request *request, char *error,
		       size_t error_size);

/* The query's parameters one by one: name and value as written (not
 * decoded), advancing *cursor; false after the last. Every '&' ends one,
 * so a stray '&' (`?&`, `?a=1&&b=2`, `?a=1&`) gives a parameter with an
 * empty name. Start with *cursor at the query, or NULL when the request
 * has none (a query of length 0: `/readyz` or `/readyz?`). */
struct http_parameter {
	const char *name, *value;
	size_t name_length, value_length;
};
bool http_query_next(const char **cursor, const char *end, struct http_parameter *parameter);

/* %XX and '+' decoded into `out` (NUL-terminated): its length, or -1 for
 * a bad escape, a NUL, or more than out_size - 1 bytes. */
int http_percent_decode(const char *text, size_t length, char *out, size_t out_size);
