#include "supervisor/probes/http_status.h"

#include <stdbool.h>
#include <string.h>

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

int http_status_parse(const char *buffer, size_t length, int *status)
{
	static const char prefix[] = "HTTP/1.";
	size_t prefix_length = sizeof(prefix) - 1;
	/* What has come so far must be the start of a status line. */
	size_t compared = length < prefix_length ? length : prefix_length;
	if (memcmp(buffer, prefix, compared) != 0)
		return -1;
	const char *end = memchr(buffer, '\n', length);
	if (!end)
		return length > 256 ? -1 : 0; /* a status line is short */
	size_t line = (size_t)(end - buffer);
	/* HTTP/1.x SP DIGIT DIGIT DIGIT (SP reason)? CR? */
	if (line < prefix_length + 5 || !is_digit(buffer[prefix_length]) ||
	    buffer[prefix_length + 1] != ' ')
		return -1;
	const char *code = buffer + prefix_length + 2;
	if (!is_digit(code[0]) || !is_digit(code[1]) || !is_digit(code[2]) || code[0] == '0')
		return -1;
	if (code + 3 < end && code[3] != ' ' && code[3] != '\r')
		return -1;
	*status = (code[0] - '0') * 100 + (code[1] - '0') * 10 + (code[2] - '0');
	return 1;
}
