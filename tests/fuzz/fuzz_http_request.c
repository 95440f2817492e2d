/* libFuzzer target: whatever a client sends to corral's HTTP endpoint,
 * finding the end of its head (all at once, and byte by byte as a slow
 * client sends it: the same end), reading the head, and reading its query
 * give a request or a refusal with an HTTP status, never a crash or a read
 * past what was received. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/http/http_request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_query(const struct http_request *request)
{
	const char *cursor = request->query_length ? request->query : NULL;
	const char *end = request->query + request->query_length;
	struct http_parameter parameter;
	while (http_query_next(&cursor, end, &parameter)) {
		if (parameter.name < request->query ||
		    parameter.value + parameter.value_length > end)
			abort();
		char value[64];
		int length = http_percent_decode(parameter.value, parameter.value_length, value,
						 sizeof(value));
		if (length >= (int)sizeof(value) ||
		    (length >= 0 && strlen(value) != (size_t)length))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > HTTP_REQUEST_HEAD_MAX)
		return 0;
	/* A copy of exactly `size` bytes: ASan sees any read past them. */
	char *buffer = malloc(size ? size : 1);
	memcpy(buffer, data, size);
	size_t scanned = 0;
	size_t end = http_head_end(buffer, size, &scanned);
	size_t byte_by_byte = 0;
	scanned = 0;
	for (size_t length = 1; length <= size && !byte_by_byte; length++)
		byte_by_byte = http_head_end(buffer, length, &scanned);
	if (end > size || byte_by_byte != end)
		abort();
	if (!end) {
		int status = http_head_too_large_status(buffer, size);
		if (status != 414 && status != 431)
			abort();
		end = size; /* parse what there is anyway: it must not crash */
	}
	struct http_request request;
	char error[128];
	if (http_request_parse(buffer, end, &request, error, sizeof(error)) < 0) {
		if (request.refusal != 400 && request.refusal != 413 && request.refusal != 505)
			abort();
	} else {
		if (request.path < buffer || request.path + request.path_length > buffer + end ||
		    request.path_length == 0 || request.path[0] != '/' || request.version_minor > 1)
			abort();
		check_query(&request);
	}
	free(buffer);
	return 0;
}
